// Tensors on several devices: Shard, Shard_, Devices, ShardAxis (tinygrad's shard, shard_ and the device
// tuple).
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "runtime/collective.h"
#include "runtime/registry.h"
#include "tensor/multi.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"

namespace uopc {

Tensor Tensor::Shard(const std::vector<std::string>& devices, std::optional<int64_t> axis) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (uop()->op() == Ops::MULTI || Devices().size() > 1) {
    return tensor_internal::Error("Shard", "the tensor is on several devices already (" + Device() + ")");
  }
  if (symbolic()) return tensor_internal::Error("Shard", "a symbolic shape cannot be sharded");
  std::vector<std::string> canonical;
  for (const std::string& d : devices) {
    if (d.empty() || d.find(',') != std::string::npos) {
      return tensor_internal::Error("Shard", absl::StrCat("bad device name '", d, "'"));
    }
    canonical.push_back(CanonicalDeviceName(d));
  }
  if (canonical.empty()) return tensor_internal::Error("Shard", "no devices");
  std::optional<int64_t> dim;
  if (axis) {
    absl::Status bad;
    dim = ResolveDim(*axis, false, &bad);
    if (!bad.ok()) return FromError(bad);
  }
  absl::StatusOr<UOpPtr> sharded = tensor_internal::WithShapes(
      [&](TensorShapes& shapes) { return tensor_internal::ShardUOp(uop(), canonical, dim, shapes); });
  if (!sharded.ok()) return tensor_internal::Error("Shard", std::string(sharded.status().message()));
  Tensor out(*sharded);
  if (std::optional<bool> flag = requires_grad()) out.RequiresGrad(*flag);
  return out;
}

Tensor Tensor::Shard_(const std::vector<std::string>& devices, std::optional<int64_t> axis) const {
  Tensor sharded = Shard(devices, axis);
  UOPC_TENSOR_PROPAGATE(&sharded);
  SetUOp(sharded.uop());
  return *this;
}

Tensor Tensor::AllReduce(Ops op, const std::string& communicator) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (op != Ops::ADD && op != Ops::MUL && op != Ops::MAX) {
    return tensor_internal::Error("AllReduce", absl::StrCat("reduces by ADD, MUL or MAX, not ", OpName(op)));
  }
  if (Devices().size() > 1) {
    return tensor_internal::Error("AllReduce", "the tensor is on several devices (" + Device() + ")");
  }
  if (symbolic()) return tensor_internal::Error("AllReduce", "a symbolic shape cannot be all-reduced");
  if (communicator.empty()) return tensor_internal::Error("AllReduce", "no communicator");
  // The source contiguous, so that the item reduces exactly the tensor's elements (an expanded constant has
  // fewer, a padded view more; a kernel's output or a whole buffer costs nothing more).
  const Tensor source = Contiguous();
  const UOpPtr device = UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(Device()));
  return Tensor(UOp::New(Ops::COPY, dtype(), {source.uop(), device}, AllReduceArg(communicator, op)));
}

std::vector<std::string> Tensor::Devices() const {
  if (!ok()) return {};
  return tensor_internal::SplitDevices(Device());
}

std::optional<int64_t> Tensor::ShardAxis() const {
  if (!ok() || Devices().size() < 2) return std::nullopt;
  return tensor_internal::WithShapes(
      [&](TensorShapes& shapes) { return tensor_internal::ShardAxisOf(uop(), shapes); });
}

}  // namespace uopc
