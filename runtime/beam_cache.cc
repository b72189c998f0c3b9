#include "runtime/beam_cache.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "uop/text_ir.h"
#include "uop/util.h"

namespace uopc {
namespace {

constexpr absl::string_view kCacheMagic = "uopc beam cache 1";

// FNV-1a, 64 bits: a file name that stays the same across processes (absl::Hash does not).
uint64_t StableHash(absl::string_view s) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

}  // namespace

std::string BeamCache::Key(const UOpPtr& ast, int64_t beam_width, bool allow_test_size,
                           absl::string_view device) {
  return absl::StrCat("beam ", beam_width, " test_size ", allow_test_size ? 1 : 0, "\ndevice ", device,
                      "\nast\n", PrintIr(ast.get()));
}

std::string BeamCache::EntryPath(absl::string_view key) const {
  if (!enabled()) return "";
  return absl::StrCat(directory_, "/", absl::StrFormat("%016x", StableHash(key)));
}

// An entry: the magic line, the key's length and the key, the opts in compact form on one line, "end".
std::optional<std::vector<Opt>> BeamCache::Get(absl::string_view key) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(EntryPath(key), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream contents;
  contents << in.rdbuf();
  std::string text = contents.str();
  std::string expected_head = absl::StrCat(kCacheMagic, "\n", key.size(), "\n", key, "\n");
  if (text.size() < expected_head.size() || text.compare(0, expected_head.size(), expected_head) != 0) {
    return std::nullopt;
  }
  absl::string_view rest = absl::string_view(text).substr(expected_head.size());
  std::vector<absl::string_view> lines = absl::StrSplit(rest, '\n');
  // "opts: ...", "end", and the empty string after the last newline.
  if (lines.size() != 3 || lines[1] != "end" || !lines[2].empty() || !absl::StartsWith(lines[0], "opts:")) {
    return std::nullopt;
  }
  absl::string_view opts_text = absl::StripAsciiWhitespace(lines[0].substr(5));
  if (opts_text.empty()) return std::vector<Opt>{};
  absl::StatusOr<std::vector<Opt>> opts = ParseOptList(opts_text);
  if (!opts.ok()) return std::nullopt;
  return *opts;
}

bool BeamCache::Put(absl::string_view key, absl::Span<const Opt> opts) const {
  if (!enabled()) return false;
  std::error_code error;
  std::filesystem::create_directories(directory_, error);
  if (error) return false;
  std::vector<std::string> compact;
  for (const Opt& o : opts) compact.push_back(o.ToCompactString());
  std::string text = absl::StrCat(kCacheMagic, "\n", key.size(), "\n", key,
                                  "\nopts: ", absl::StrJoin(compact, " "), "\nend\n");
  return WriteFileAtomically(EntryPath(key), text).ok();
}

}  // namespace uopc
