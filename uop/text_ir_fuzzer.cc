// libFuzzer target for the textual IR parser: any bytes give a graph or an error Status, never a crash, and a
// graph that parses prints to a text that parses back to the identical nodes, whose printing is the same
// text.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "uop/arg.h"
#include "uop/check.h"
#include "uop/text_ir.h"
#include "uop/uop.h"

namespace uopc {
namespace {

// A payload so that the fuzzer reaches the payload path: FuzzBox(<digits>).
class FuzzBox : public ArgPayload {
 public:
  static constexpr absl::string_view kTypeName = "FuzzBox";
  explicit FuzzBox(uint32_t v) : v_(v) {}
  absl::string_view type_name() const override { return kTypeName; }
  size_t Hash() const override { return absl::HashOf(v_); }
  bool Equals(const ArgPayload& other) const override { return static_cast<const FuzzBox&>(other).v_ == v_; }
  std::string ToString() const override { return absl::StrCat("FuzzBox(", v_, ")"); }

 private:
  uint32_t v_;
};

absl::StatusOr<PayloadParse> ParseFuzzBox(absl::string_view text) {
  constexpr absl::string_view kPrefix = "FuzzBox(";
  if (text.substr(0, kPrefix.size()) != kPrefix) return absl::InvalidArgumentError("expected FuzzBox(");
  size_t p = kPrefix.size();
  uint64_t v = 0;
  size_t digits = p;
  while (p < text.size() && text[p] >= '0' && text[p] <= '9') {
    v = v * 10 + static_cast<uint64_t>(text[p++] - '0');
    if (v > UINT32_MAX) return absl::InvalidArgumentError("FuzzBox value out of range");
  }
  if (p == digits || p >= text.size() || text[p] != ')') {
    return absl::InvalidArgumentError("expected digits, ')'");
  }
  return PayloadParse{std::make_shared<const FuzzBox>(static_cast<uint32_t>(v)), p + 1};
}

const bool kRegistered = [] {
  RegisterPayloadParser(FuzzBox::kTypeName, ParseFuzzBox);
  return true;
}();

void CheckRoundTrip(const std::vector<UOpPtr>& roots) {
  std::string printed = PrintIr(roots);
  absl::StatusOr<std::vector<UOpPtr>> reparsed = ParseIr(printed);
  if (!reparsed.ok()) {
    std::fprintf(stderr, "printed text does not parse: %s\n%s\n",
                 std::string(reparsed.status().message()).c_str(), printed.c_str());
  }
  UOPC_CHECK(reparsed.ok(), "PrintIr output must parse");
  UOPC_CHECK(reparsed->size() == roots.size(), "the same number of roots");
  for (size_t i = 0; i < roots.size(); ++i) {
    UOPC_CHECK((*reparsed)[i].get() == roots[i].get(), "parse(print(g)) must be the identical node");
  }
  UOPC_CHECK(PrintIr(*reparsed) == printed, "printing is canonical");
}

}  // namespace
}  // namespace uopc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::vector<uopc::UOpPtr>> roots = uopc::ParseIr(text);
  if (!roots.ok()) {
    UOPC_CHECK(roots.status().code() == absl::StatusCode::kInvalidArgument,
               "parse errors are InvalidArgument");
    return 0;
  }
  uopc::CheckRoundTrip(*roots);
  return 0;
}
