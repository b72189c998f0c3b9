// The tensor cores of tinygrad's targets (tinygrad's TensorCore tables in renderer/cstyle.py), defined once
// for every renderer and test that needs them: CUDA's `mma.sync` shapes per arch. The PTX target takes the
// CUDA list without its bfloat16 core.
//
//   std::vector<TensorCore> tcs = CudaTensorCores("sm_80");   // 8x16x16 (half, bfloat16), then 8x16x8
//   CudaTensorCores("sm_90", AllowTf32());                    // and the TF32 core with ALLOW_TF32=1
#ifndef UOPC_RENDERER_TENSOR_CORES_H_
#define UOPC_RENDERER_TENSOR_CORES_H_

#include <vector>

#include "absl/strings/string_view.h"
#include "renderer/renderer.h"

namespace uopc {

// CUDA's tensor cores for an `sm_XY` arch, in tinygrad's order: from sm_80 the 8x16x16 cores (half in, float
// out; bfloat16 in, float out; half in, half out), and from sm_75 the 8x16x8 ones (half in, float or half
// out); with `tf32`, from sm_80 also the 8x16x8 core that takes float32 inputs as TF32 (10 bits of mantissa
// kept; float out). None before sm_75 or for an arch that is not `sm_XY`.
std::vector<TensorCore> CudaTensorCores(absl::string_view arch, bool tf32 = false);

// tinygrad's ALLOW_TF32 knob (default off): whether float32 reductions of products may run on the TF32 tensor
// core, as PyTorch's cuDNN convolutions do by default (torch.backends.cudnn.allow_tf32).
bool AllowTf32();

}  // namespace uopc

#endif  // UOPC_RENDERER_TENSOR_CORES_H_
