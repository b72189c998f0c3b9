#include "renderer/tensor_cores.h"

#include <cstdlib>
#include <string>
#include <utility>

#include "uop/util.h"

namespace uopc {
namespace {

using Swizzle = std::pair<std::vector<int64_t>, std::vector<int64_t>>;

TensorCore CudaTensorCore(std::array<int64_t, 3> dims, std::array<int64_t, 3> elements, DType in, DType out,
                          Swizzle a, Swizzle b) {
  TensorCore tc;
  tc.dims = dims;
  tc.threads = 32;
  tc.elements_per_thread = elements;
  tc.dtype_in = in;
  tc.dtype_out = out;
  tc.opts = {"u0", "l0", "l0", "l1", "l1", "l1", "u1"};
  tc.swizzle = {std::move(a), std::move(b)};
  return tc;
}

}  // namespace

std::vector<TensorCore> CudaTensorCores(absl::string_view arch, bool tf32) {
  int sm = 0;
  if (arch.size() > 3) sm = std::atoi(std::string(arch.substr(3)).c_str());
  std::vector<TensorCore> out;
  if (sm >= 80) {
    for (auto [in, o] :
         {std::pair{dtypes::kFloat16, dtypes::kFloat32}, std::pair{dtypes::kBFloat16, dtypes::kFloat32},
          std::pair{dtypes::kFloat16, dtypes::kFloat16}}) {
      out.push_back(CudaTensorCore({8, 16, 16}, {8, 4, 4}, in, o, {{6, 7, 2, 3, 4}, {0, 1, 9, 5, 10, 8}},
                                   {{6, 7, 9, 0, 1}, {2, 3, 4, 10, 5, 8}}));
    }
  }
  if (sm >= 75) {
    for (DType o : {dtypes::kFloat32, dtypes::kFloat16}) {
      out.push_back(CudaTensorCore({8, 16, 8}, {4, 2, 4}, dtypes::kFloat16, o,
                                   {{6, 7, 2, 3, 4}, {0, 1, 8, 5, 9}}, {{6, 7, 8, 0, 1}, {2, 3, 4, 9, 5}}));
    }
  }
  if (tf32 && sm >= 80) {
    out.push_back(CudaTensorCore({8, 16, 8}, {4, 2, 4}, dtypes::kFloat32, dtypes::kFloat32,
                                 {{5, 6, 2, 3, 4}, {0, 1, 8, 9, 7}}, {{5, 6, 8, 0, 1}, {2, 3, 4, 9, 7}}));
  }
  return out;
}

bool AllowTf32() { return EnvFlag("ALLOW_TF32"); }

}  // namespace uopc
