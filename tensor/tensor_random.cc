// tinygrad's random tensors built on Rand and Randn (tensor_creation.cc): the ones shaped like a tensor, a
// random permutation, the Kaiming normal initialiser, dropout and multinomial sampling. Each builds
// tinygrad's graph, so after the same ManualSeed it draws tinygrad's numbers.
#include <cmath>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::Error;

Tensor Tensor::RandLike(std::optional<DType> dtype, bool contiguous) const {
  UOPC_TENSOR_PROPAGATE(this);
  const DType dt = dtype.value_or(this->dtype());
  const std::vector<std::string> devices = Devices();
  if (devices.size() == 1) return Rand(Shape(), dt, Device(), contiguous);
  // On several devices, as tinygrad: whole, drawn on the default device and copied to each; sharded, each
  // shard drawn on its device.
  const std::optional<int64_t> axis = ShardAxis();
  if (!axis) return Rand(Shape(), dt, "", contiguous).Shard(devices);
  Dims shard_shape = Shape();
  shard_shape[*axis] /= static_cast<int64_t>(devices.size());
  std::vector<UOpPtr> shards;
  for (const std::string& d : devices) {
    Tensor shard = Rand(shard_shape, dt, d, contiguous);
    UOPC_TENSOR_PROPAGATE(&shard);
    shards.push_back(shard.uop());
  }
  return Tensor(UOp::New(Ops::MULTI, dt, shards, Arg(*axis)));
}

Tensor Tensor::RandnLike(std::optional<DType> dtype) const {
  UOPC_TENSOR_PROPAGATE(this);
  // Randn draws the float32 pair of this shape (tinygrad's stack(self).rand_like) on the given device.
  return Randn(Shape(), dtype.value_or(this->dtype()), Device());
}

Tensor Tensor::Randperm(int64_t n, DType dtype, const std::string& device) {
  if (n < 0) return Error("Randperm", absl::StrCat("n must not be negative, got ", n));
  return Rand({n}, dtypes::kFloat32, device).Sort().second.Cast(dtype);
}

Tensor Tensor::KaimingNormal(const Dims& shape, double a, DType dtype, const std::string& device) {
  int64_t fan_in = 1;
  for (size_t i = 1; i < shape.size(); ++i) fan_in *= shape[i];
  if (fan_in <= 0) {
    return Error(
        "KaimingNormal",
        absl::StrCat("the axes after the first must have a positive product, shape ", TupleString(shape)));
  }
  double std = std::sqrt(2.0 / (1 + a * a)) / std::sqrt(static_cast<double>(fan_in));
  return Normal(shape, 0.0, std, dtype, device);
}

Tensor Tensor::Dropout(double p) const {
  UOPC_TENSOR_PROPAGATE(this);
  // tinygrad takes any p; p = 1 would divide the zeros by zero, and p outside [0, 1] is no probability.
  if (!(p >= 0 && p < 1)) return Error("Dropout", absl::StrCat("p must be in [0, 1), got ", p));
  if (!Training() || p == 0) return *this;
  Tensor keep = RandLike(dtypes::kDefaultFloat, /*contiguous=*/false).Ge(p).Contiguous();
  return keep.Where(*this, 0).Div(1.0 - p);
}

Tensor Tensor::Multinomial(int64_t num_samples, bool replacement) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (ndim() < 1 || ndim() > 2) {
    return Error("Multinomial",
                 absl::StrCat("the weights must have 1 or 2 axes, their shape is ", TupleString(Shape())));
  }
  if (num_samples <= 0) {
    return Error("Multinomial", absl::StrCat("num_samples must be positive, got ", num_samples));
  }
  if (!replacement && num_samples != 1) {
    return Error("Multinomial", "without replacement only one sample can be drawn");
  }
  if (Shape().back() == 0) return Error("Multinomial", "the weights have no classes");
  Tensor weight = ndim() == 1 ? Unsqueeze(0) : *this;
  Tensor cumulative = weight.Cumsum(1).Float();
  Tensor cdf = cumulative / cumulative.Index({Slice{}, int64_t{-1}}).Unsqueeze(1);
  Dims cdf_shape = cdf.Shape();
  UOPC_TENSOR_PROPAGATE(&cdf);
  Tensor uniform = Rand({num_samples, cdf_shape[0], 1}).To(Device());
  Tensor indices = uniform.Expand({-1, -1, cdf_shape[1]}).Ge(cdf).Sum(2).Permute({1, 0});
  return (ndim() == 1 ? indices.Squeeze(0) : indices).Cast(dtypes::kInt32);
}

}  // namespace uopc
