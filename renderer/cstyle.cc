#include "renderer/cstyle.h"

#include "absl/status/status.h"

namespace uopc {

ClangRenderer::ClangRenderer() {
  device_ = "CPU";
  has_local_ = false;
  global_max_ = std::nullopt;
  // tinygrad's CStyleLanguage code_for_op without EXP2, SIN and LOG2 (the CPU gets their polynomial fallbacks).
  supported_ops_ = OpSet{Ops::SQRT, Ops::RECIP, Ops::NEG,   Ops::AND,   Ops::XOR, Ops::OR,    Ops::ADD,
                         Ops::SUB,  Ops::MUL,   Ops::MOD,   Ops::IDIV,  Ops::CMPNE, Ops::SHR, Ops::SHL,
                         Ops::CMPLT, Ops::WHERE};
}

const PatternMatcher* ClangRenderer::extra_matcher() const { return nullptr; }

absl::StatusOr<std::string> ClangRenderer::Render(absl::Span<const UOp* const> uops) const {
  return absl::UnimplementedError("ClangRenderer::Render is not written yet");
}

}  // namespace uopc
