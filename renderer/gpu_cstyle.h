// The C-style GPU renderers (tinygrad's OpenCLRenderer, MetalRenderer and CUDARenderer in
// renderer/cstyle.py): the C renderer's rules with each language's spellings (address-space qualifiers,
// thread ids, barriers, vector constructors, bitcasts, half math), kernel signature and preamble (OpenCL's
// fp16 pragma, Metal's stdlib and thread arguments, CUDA's launch bounds, half vector structs and tensor-core
// `mma.sync` functions). Each output is tinygrad's byte for byte.
//
//   std::unique_ptr<Renderer> cuda = MakeCUDARenderer("sm_80");   // with tinygrad's tensor cores
#ifndef UOPC_RENDERER_GPU_CSTYLE_H_
#define UOPC_RENDERER_GPU_CSTYLE_H_

#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "renderer/cstyle.h"
#include "renderer/tensor_cores.h"

namespace uopc {

// OpenCL C (device "GPU" in tinygrad, run by the OPENCL device here).
class OpenCLRenderer : public CStyleRenderer {
 public:
  OpenCLRenderer();
  std::string RenderBitcast(DType dt, absl::string_view val) const override;

 protected:
  std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                           const std::vector<Param>& params,
                           absl::Span<const UOp* const> uops) const override;
};

// Metal Shading Language, without tensor cores (as tinygrad on a host that is not arm64).
class MetalRenderer : public CStyleRenderer {
 public:
  MetalRenderer();
  std::string RenderBitcast(DType dt, absl::string_view val) const override;
  // bfloat16 SQRT, EXP2, LOG2 and SIN go through float, then the C-style rules.
  const PatternMatcher* extra_matcher() const override;

 protected:
  const CStyleRules& rules() const override;
  std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                           const std::vector<Param>& params,
                           absl::Span<const UOp* const> uops) const override;
};

// CUDA C for an `sm_XY` arch: tensor cores from sm_75 (half) and sm_80 (half and bfloat16), as tinygrad's.
class CUDARenderer : public CStyleRenderer {
 public:
  explicit CUDARenderer(std::string arch);
  const std::string& arch() const { return arch_; }

 protected:
  const CStyleRules& rules() const override;
  std::string KernelModifier(absl::Span<const UOp* const> uops) const override;
  std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                           const std::vector<Param>& params,
                           absl::Span<const UOp* const> uops) const override;

 private:
  std::string arch_;
};

std::unique_ptr<Renderer> MakeOpenCLRenderer();
std::unique_ptr<Renderer> MakeMetalRenderer();
std::unique_ptr<Renderer> MakeCUDARenderer(absl::string_view arch = "sm_80");

}  // namespace uopc

#endif  // UOPC_RENDERER_GPU_CSTYLE_H_
