// The C-style renderers (tinygrad's renderer/cstyle.py): a base that writes a linear program as C-like source,
// and ClangRenderer, the CPU target, whose output is tinygrad's byte for byte.
#ifndef UOPC_RENDERER_CSTYLE_H_
#define UOPC_RENDERER_CSTYLE_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"

namespace uopc {

// The C source for the CPU device: `void E_3(int* restrict data0, ...)`, compiled by clang.
class ClangRenderer : public Renderer {
 public:
  ClangRenderer();
  const PatternMatcher* extra_matcher() const override;
  absl::StatusOr<std::string> Render(absl::Span<const UOp* const> uops) const override;
};

}  // namespace uopc

#endif  // UOPC_RENDERER_CSTYLE_H_
