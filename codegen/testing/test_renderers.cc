#include "codegen/testing/test_renderers.h"

#include "absl/status/status.h"
#include "renderer/tensor_cores.h"

namespace uopc {
namespace {

using Perm = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

TensorCore Tc(std::array<int64_t, 3> dims, int64_t threads, std::array<int64_t, 3> ept, DType in, DType out,
              std::vector<std::string> opts, Perm a, Perm b) {
  TensorCore tc;
  tc.dims = dims;
  tc.threads = threads;
  tc.elements_per_thread = ept;
  tc.dtype_in = in;
  tc.dtype_out = out;
  tc.opts = std::move(opts);
  tc.swizzle = {a, b};
  return tc;
}

}  // namespace

absl::StatusOr<std::string> DescriptionOnlyRenderer::RenderProgram(absl::Span<const UOp* const>) const {
  return absl::UnimplementedError("a target description for tests renders nothing");
}

DescriptionOnlyRenderer OpenClTarget() {
  DescriptionOnlyRenderer r;
  r.device_ = "GPU";
  return r;
}

DescriptionOnlyRenderer MetalTarget(bool with_tensor_cores) {
  DescriptionOnlyRenderer r;
  r.device_ = "METAL";
  r.shared_max_ = 32768;
  if (with_tensor_cores) {
    const std::vector<std::string> opts = {"u0", "l0", "l1", "l1", "l0", "l1"};
    const Perm a = {{6, 1, 2, 7, 4}, {8, 0, 3, 5}}, b = {{0, 5, 6, 3, 7}, {1, 2, 4, 8}};
    for (auto [in, out] : std::vector<std::pair<DType, DType>>{{dtypes::kFloat32, dtypes::kFloat32},
                                                               {dtypes::kFloat16, dtypes::kFloat32},
                                                               {dtypes::kFloat16, dtypes::kFloat16},
                                                               {dtypes::kBFloat16, dtypes::kFloat32},
                                                               {dtypes::kBFloat16, dtypes::kBFloat16}}) {
      r.tensor_cores_.push_back(Tc({8, 8, 8}, 32, {2, 2, 2}, in, out, opts, a, b));
    }
  }
  return r;
}

DescriptionOnlyRenderer CudaSm80Target() {
  DescriptionOnlyRenderer r;
  r.device_ = "CUDA";
  r.global_max_ = std::vector<int64_t>{2147483647, 65535, 65535};
  r.local_max_ = std::vector<int64_t>{1024, 1024, 64};
  r.shared_max_ = 49152;
  r.tensor_cores_ = CudaTensorCores("sm_80");
  return r;
}

DescriptionOnlyRenderer LlvmTarget() {
  DescriptionOnlyRenderer r;
  r.device_ = "LLVM";
  r.has_local_ = false;
  r.global_max_ = std::nullopt;
  return r;
}

}  // namespace uopc
