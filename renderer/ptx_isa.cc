#include "renderer/ptx_isa.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "uop/util.h"

namespace uopc {
namespace {

using Types = std::vector<std::string>;

Types Join(std::initializer_list<Types> parts) {
  Types out;
  for (const Types& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

const Types kInts = {"s16", "u16", "s32", "u32", "s64", "u64"};
const Types kSigned = {"s16", "s32", "s64"};
const Types kBits = {"b16", "b32", "b64"};
const Types kFloats = {"f16", "f32", "f64"};

// An instruction with its modifiers (the mnemonic without its type) and the types it takes.
struct Rule {
  std::string prefix;
  Types types;
};

// What PTX defines, for what the renderer emits. The approximate and rounding forms are the point: `.approx`
// exists for rcp, sqrt, ex2, lg2 and sin on f32 only (ex2 on f16 too), f64 has `.rn` forms of rcp, sqrt and
// div only, and f16 has no rcp, sqrt, lg2, sin or div at all.
const std::vector<Rule>& Rules() {
  static const std::vector<Rule>* const kRules = new std::vector<Rule>{
      {"add", Join({kInts, kFloats})},
      {"sub", Join({kInts, kFloats})},
      {"mul", kFloats},
      {"mul.lo", kInts},
      {"mad.lo", kInts},
      {"fma.rn", kFloats},
      {"div", kInts},
      {"div.rn", {"f32", "f64"}},
      {"rem", kInts},
      {"neg", Join({kSigned, kFloats})},
      {"max", Join({kInts, kFloats})},
      {"min", Join({kInts, kFloats})},
      {"and", Join({kBits, {"pred"}})},
      {"or", Join({kBits, {"pred"}})},
      {"xor", Join({kBits, {"pred"}})},
      {"not", Join({kBits, {"pred"}})},
      {"shl", kBits},
      {"shr", Join({kInts, kBits})},
      {"rcp.approx", {"f32"}},
      {"rcp.approx.ftz", {"f32", "f64"}},
      {"rcp.rn", {"f32", "f64"}},
      {"sqrt.approx", {"f32"}},
      {"sqrt.rn", {"f32", "f64"}},
      {"ex2.approx", {"f32", "f16"}},
      {"lg2.approx", {"f32"}},
      {"sin.approx", {"f32"}},
      {"cos.approx", {"f32"}},
      {"setp.lt", Join({kInts, kFloats})},
      {"setp.ne", Join({kInts, kFloats, kBits})},
      {"setp.eq", Join({kInts, kFloats, kBits})},
      {"setp.neu", kFloats},  // unordered: true when an operand is NaN
      {"selp", Join({kInts, kBits, {"f32", "f64"}})},
      {"mov", Join({kInts, kBits, {"f32", "f64", "pred"}})},
  };
  return *kRules;
}

bool Contains(const Types& types, const std::string& t) {
  return std::find(types.begin(), types.end(), t) != types.end();
}

bool IsFloatType(const std::string& t) { return t == "bf16" || (!t.empty() && t[0] == 'f'); }
bool IsIntType(const std::string& t) { return !t.empty() && (t[0] == 's' || t[0] == 'u'); }
// The width of a type name: "s32" -> 32, "bf16" -> 16.
int Bits(const std::string& t) {
  const size_t digits = t.find_first_of("0123456789");
  return digits == std::string::npos ? 0 : std::stoi(t.substr(digits));
}

// cvt's rounding follows from its types: to a float from an integer or a wider float it rounds (`.rn`), to
// an integer from a float it rounds to an integer (`.rzi`), and otherwise it takes no rounding modifier.
bool IsLegalCvt(const std::vector<std::string>& parts) {
  if (parts.size() != 3 && parts.size() != 4) return false;
  const std::string rounding = parts.size() == 4 ? parts[1] : "";
  const std::string& to = parts[parts.size() - 2];
  const std::string& from = parts.back();
  const Types types = {"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f16", "f32", "f64"};
  // bf16 converts to and from f32 only (the others need sm_90).
  const bool bf16 = (to == "bf16" && from == "f32") || (to == "f32" && from == "bf16");
  if (!bf16 && (!Contains(types, to) || !Contains(types, from))) return false;
  std::string wanted;
  if (IsFloatType(to) && (IsIntType(from) || Bits(from) > Bits(to))) {
    wanted = "rn";
  } else if (IsIntType(to) && IsFloatType(from)) {
    wanted = "rzi";
  }
  return rounding == wanted;
}

// Instructions the table does not judge (memory, control flow, tensor cores).
bool IsUnchecked(absl::string_view opcode) {
  for (absl::string_view op : {"ld", "st", "bar", "bra", "ret", "mma"}) {
    if (opcode == op) return true;
  }
  return false;
}

}  // namespace

bool IsLegalPtxMnemonic(absl::string_view mnemonic) {
  std::vector<std::string> parts = absl::StrSplit(mnemonic, '.');
  if (IsUnchecked(parts[0])) return true;
  if (parts[0] == "cvt") return IsLegalCvt(parts);
  if (parts.size() < 2) return false;
  const std::string type = parts.back();
  parts.pop_back();
  const std::string prefix = absl::StrJoin(parts, ".");
  for (const Rule& r : Rules()) {
    if (r.prefix == prefix) return Contains(r.types, type);
  }
  return false;
}

std::vector<std::string> LegalPtxMnemonics() {
  std::vector<std::string> out;
  for (const Rule& r : Rules()) {
    for (const std::string& t : r.types) out.push_back(absl::StrCat(r.prefix, ".", t));
  }
  const Types types = {"s8", "u8", "s16", "u16", "s32", "u32", "s64", "u64", "f16", "f32", "f64"};
  const Types with_bf16 = Join({types, {"bf16"}});
  for (const std::string& to : with_bf16) {
    for (const std::string& from : with_bf16) {
      for (const char* rounding : {"", ".rn", ".rzi"}) {
        std::string m = absl::StrCat("cvt", rounding, ".", to, ".", from);
        if (IsLegalCvt(absl::StrSplit(m, '.'))) out.push_back(m);
      }
    }
  }
  return out;
}

std::vector<std::string> IllegalPtxInstructions(absl::string_view ptx) {
  std::vector<std::string> out;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(ptx, '\n')) {
    ++line_number;
    line = absl::StripAsciiWhitespace(line);
    // Directives, braces, parameters and labels.
    if (line.empty() || line[0] == '.' || line[0] == '{' || line[0] == '}' || line[0] == ')' ||
        line.back() == ':' || line.back() == ',') {
      continue;
    }
    // A guard predicate (`@%p0 `, `@!%p0 `) comes before the mnemonic.
    if (line[0] == '@') {
      const size_t space = line.find_first_of(" \t");
      if (space == absl::string_view::npos) continue;
      line = absl::StripLeadingAsciiWhitespace(line.substr(space));
    }
    const absl::string_view mnemonic = line.substr(0, line.find_first_of(" \t;"));
    if (!IsLegalPtxMnemonic(mnemonic)) out.push_back(absl::StrCat(mnemonic, " (line ", line_number, ")"));
  }
  return out;
}

std::string FindPtxas() {
  for (const std::string& path : {EnvString("PTXAS"), std::string("/usr/local/cuda/bin/ptxas")}) {
    if (!path.empty() && access(path.c_str(), X_OK) == 0) return path;
  }
  return "";
}

std::string PtxasErrors(const std::string& ptxas, absl::string_view ptx, absl::string_view arch) {
  std::string path = absl::StrCat(EnvString("TEST_TMPDIR", "/tmp"), "/uopc_ptxas_XXXXXX");
  const int fd = mkstemp(path.data());
  if (fd < 0) return "cannot create a temporary file";
  close(fd);
  std::ofstream(path) << ptx;
  const std::string command = absl::StrCat(ptxas, " -arch=", arch, " -o /dev/null ", path, " 2>&1");
  std::string output;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return "cannot run ptxas";
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0;) output.append(buffer, n);
  const int status = pclose(pipe);
  std::remove(path.c_str());
  if (status == 0) return "";
  return output.empty() ? "ptxas failed" : output;
}

}  // namespace uopc
