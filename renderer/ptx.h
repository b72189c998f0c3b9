// The PTX renderer (tinygrad v0.10.3's renderer/ptx.py): a linear program as NVIDIA PTX assembly for the CUDA
// device, which loads it as it is (runtime/cuda_device.h, tinygrad's PTX=1).
//
// The target is CUDA's (launch limits, shared memory, sm_80 tensor cores with half inputs), with its own
// extra rules for codegen's final rewrite (PtxExtraMatcher): indexing as 64-bit pointer arithmetic, bool
// loads and stores through uint8, bool comparisons as XOR/AND, half ops without a PTX instruction computed in
// float, and unsigned shift amounts. The renderer then writes every uop in program order as PTX
// instructions on virtual registers named by kind and type (`%alu_f32_3`), declared in groups at the top
// (`.reg .f32 %alu_f32_<4>;`). Like tinygrad's, the output keeps two placeholders, `VERSION` and `TARGET`,
// which the device fills in for the GPU it runs on (runtime's PtxForArch).
//
//   PTXRenderer ptx("sm_80");
//   absl::StatusOr<std::string> src = ptx.Render(uops);   // ".version VERSION\n.target TARGET\n..."
#ifndef UOPC_RENDERER_PTX_H_
#define UOPC_RENDERER_PTX_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"
#include "rewrite/pattern_matcher.h"

namespace uopc {

// tinygrad's ptx_matcher: the rules the PTX target adds to codegen's final rewrite.
const PatternMatcher& PtxExtraMatcher();

class PTXRenderer : public Renderer {
 public:
  // `arch` is "sm_XY": tensor cores from sm_75 (8x16x8) and sm_80 (8x16x16 too), as tinygrad.
  explicit PTXRenderer(std::string arch = "sm_80");

  const std::string& arch() const { return arch_; }
  const PatternMatcher* extra_matcher() const override { return &PtxExtraMatcher(); }

 protected:
  absl::StatusOr<std::string> RenderProgram(absl::Span<const UOp* const> uops) const override;

 private:
  std::string arch_;
};

}  // namespace uopc

#endif  // UOPC_RENDERER_PTX_H_
