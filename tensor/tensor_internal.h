// What the Tensor implementation files share: the handle a Tensor points at, the registry of live handles
// (for applying a realize's becomes_map), shape lookup on tensor-level UOps, and helpers for errors.
#ifndef UOPC_TENSOR_TENSOR_INTERNAL_H_
#define UOPC_TENSOR_TENSOR_INTERNAL_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schedule/tensor_uop.h"
#include "tensor/tensor.h"
#include "uop/uop.h"

namespace uopc {

struct TensorNode {
  UOpPtr uop;
  absl::Status status;
  // tinygrad's requires_grad: true, false or None (unset).
  std::optional<bool> requires_grad;
  // tinygrad's .grad, set by Backward.
  std::optional<Tensor> grad;
};

namespace tensor_internal {

// Every live TensorNode (weak handles), for _apply_map_to_tensors.
std::vector<std::shared_ptr<TensorNode>> LiveNodes();
void Register(const std::shared_ptr<TensorNode>& node);

// The shape of a tensor-level UOp (from a process-wide memo).
absl::StatusOr<Dims> ShapeOf(const UOpPtr& u);  // symbolic sizes as -1
absl::StatusOr<SintVec> SymShapeOf(const UOpPtr& u);
// Runs `f(shapes)` under the memo's lock.
template <typename F>
auto WithShapes(F f);
TensorShapes& LockedShapes();
void UnlockShapes();

int64_t NumElements(absl::Span<const int64_t> shape);
// The shape `a` and `b` broadcast to (tinygrad's _broadcast_shape): the larger size per axis, 0 where either
// is 0; whether each tensor broadcasts to it is BroadcastTo's check.
SintVec BroadcastShape(const SintVec& a, const SintVec& b);
// tinygrad's `requires_grad` as a condition: the tensor's flag when set, else whether its graph reaches,
// short of DETACH, a live tensor whose flag is true (tinygrad's None that ops turn into True).
bool RequiresGradInEffect(const Tensor& t);
int64_t CeilDiv(int64_t a, int64_t b);

// A tensor of `u`, or of the error.
Tensor FromStatusOr(absl::StatusOr<UOpPtr> u);
Tensor Error(absl::string_view op, const std::string& message);
// `op`'s error when `t` has a symbolic size on one of `axes` (every axis when empty), which `op` does not
// take; nullopt when it has none there. The message names the axis and the size's expression.
std::optional<Tensor> SymbolicSizeError(const Tensor& t, absl::string_view op, const Dims& axes = {});

// Values in `dtype`'s memory layout (as Python's struct.pack after tinygrad's truncate).
std::vector<uint8_t> PackValues(absl::Span<const ConstValue> values, DType dtype);

// Bytes waiting to be uploaded into BUFFER nodes at the next realize (Tensor::FromBytes and literals).
void AddHostData(const UOpPtr& buffer, std::vector<uint8_t> bytes);
// Takes the pending uploads.
std::vector<std::pair<UOpPtr, std::vector<uint8_t>>> TakeHostData();
// Writes the pending uploads into their buffers' memory (what TinyJit does before it looks at its inputs).
absl::Status UploadHostData();
// Writes the pending uploads of the buffers `sink` reaches (what every realize does first). The others stay
// pending, so that a tensor on a device this machine cannot open stops only its own realize; those no tensor
// can reach any more are dropped.
absl::Status UploadHostDataOf(const UOpPtr& sink);

// One value per axis from one value or one per axis (tinygrad's make_tuple); other counts are returned as
// given for the caller to refuse.
inline Dims PerAxis(const Dims& values, size_t n) { return values.size() == 1 ? Dims(n, values[0]) : values; }

// The rule a CUSTOM_GRADIENT node of Tensor::Conv2d names (sources: the value, x, the weight; arg: the rule's
// name, groups, stride, dilation, flat padding per axis, whether x's gradient is the rule's, and the batch
// split of the weight's gradient, 0 when it is not the rule's). Returns the gradients of x and of the weight
// for `grad`, the gradient flowing into the node: x's the transposed convolution of the output gradient, the
// weight's a grouped convolution of x with the output gradient, each null where the value's graph gives it.
inline constexpr absl::string_view kConvGradientRule = "conv_gradients";
absl::StatusOr<std::pair<UOpPtr, UOpPtr>> ConvGradients(const UOpPtr& node, const UOpPtr& grad);

// tinygrad's _cumalu and _pool.
Tensor CumAlu(const Tensor& x, int64_t axis, Ops op, bool include_initial);
Tensor Pool(const Tensor& x, const Dims& kernel, const Dims& stride, const Dims& dilation);
// The identity of a reduction: 0, 1, or the dtype's minimum.
ConstValue IdentityElement(Ops op, DType dtype);

// Movement ops through tensor_uop's builders.
Tensor Movement(const Tensor& x, Ops op, const Dims& arg);
// RESHAPE or EXPAND to a shape with symbolic sizes; SHRINK or PAD with symbolic bounds.
Tensor Movement(const Tensor& x, Ops op, const SintVec& arg);
Tensor MovementPairs(const Tensor& x, Ops op, const std::vector<SintPair>& arg);
Tensor MovementPairs(const Tensor& x, Ops op, const std::vector<std::pair<int64_t, int64_t>>& arg);

}  // namespace tensor_internal

template <typename F>
auto tensor_internal::WithShapes(F f) {
  TensorShapes& shapes = LockedShapes();
  auto result = f(shapes);
  UnlockShapes();
  return result;
}

// Propagates the first error of the operands: `UOPC_TENSOR_PROPAGATE(a, b)` returns it.
#define UOPC_TENSOR_PROPAGATE(...)                                     \
  do {                                                                 \
    for (const Tensor* uopc_t_ : {__VA_ARGS__})                        \
      if (!uopc_t_->ok()) return Tensor::FromError(uopc_t_->status()); \
  } while (0)

}  // namespace uopc

#endif  // UOPC_TENSOR_TENSOR_INTERNAL_H_
