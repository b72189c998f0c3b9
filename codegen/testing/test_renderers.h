// Target descriptions of tinygrad's GPU renderers (OpenCL, Metal, CUDA sm_80, LLVM) for codegen tests: what
// Kernel and the heuristic read (locals, shared memory, limits, tensor cores). They render nothing; the
// corpus records tinygrad's opts and names for these targets, which the heuristic tests compare against.
#ifndef UOPC_CODEGEN_TESTING_TEST_RENDERERS_H_
#define UOPC_CODEGEN_TESTING_TEST_RENDERERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"

namespace uopc {

class DescriptionOnlyRenderer : public Renderer {
 protected:
  absl::StatusOr<std::string> RenderProgram(absl::Span<const UOp* const> uops) const override;

  friend DescriptionOnlyRenderer OpenClTarget();
  friend DescriptionOnlyRenderer MetalTarget(bool with_tensor_cores);
  friend DescriptionOnlyRenderer CudaSm80Target();
  friend DescriptionOnlyRenderer LlvmTarget();
};

// tinygrad's OpenCLRenderer(): locals and shared memory, no tensor cores.
DescriptionOnlyRenderer OpenClTarget();
// tinygrad's MetalRenderer(); on arm64 hosts it has tensor cores (8x8x8), elsewhere none.
DescriptionOnlyRenderer MetalTarget(bool with_tensor_cores);
// tinygrad's CUDARenderer("sm_80"): tensor cores 8x16x16 (half/bfloat16 in) and 8x16x8 (half in).
DescriptionOnlyRenderer CudaSm80Target();
// tinygrad's LLVMRenderer(): a CPU target without locals.
DescriptionOnlyRenderer LlvmTarget();

}  // namespace uopc

#endif  // UOPC_CODEGEN_TESTING_TEST_RENDERERS_H_
