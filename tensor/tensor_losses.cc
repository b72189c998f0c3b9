// Losses, scatters and interpolation, built as tinygrad's tensor.py builds them: the cross-entropies and the
// negative log-likelihood over one-hot masks, scatters as masked selects over an index compared with an
// arange (tinygrad's _pre_scatter and _masked_setitem), interpolation as gathers and lerps along each axis.
#include <cmath>
#include <optional>
#include <string>

#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::Error;
using tensor_internal::SymbolicSizeError;

namespace {

// tinygrad's _do_reduction.
Tensor DoReduction(const Tensor& x, const std::string& reduction) {
  if (reduction == "mean") return x.Mean();
  if (reduction == "sum") return x.Sum();
  if (reduction == "none") return x;
  return Error("loss", "reduction must be \"mean\", \"sum\" or \"none\", got \"" + reduction + "\"");
}

}  // namespace

Tensor Tensor::SparseCategoricalCrossentropy(const Tensor& y, int64_t ignore_index, double label_smoothing,
                                             const std::string& reduction) const {
  UOPC_TENSOR_PROPAGATE(this, &y);
  if (label_smoothing < 0.0 || label_smoothing > 1.0) {
    return Error("SparseCategoricalCrossentropy", "label_smoothing must be in [0, 1]");
  }
  if (reduction != "mean" && reduction != "sum" && reduction != "none") return DoReduction(*this, reduction);
  if (!y.dtype().is_int()) {
    return Error("SparseCategoricalCrossentropy", "the labels must be integers, got " + y.dtype().ToString());
  }
  if (ndim() == 0) return Error("SparseCategoricalCrossentropy", "the logits need a class axis");
  int64_t classes = Shape().back();
  Tensor log_probs = LogSoftmax();
  Tensor loss_mask = ignore_index != -1 ? y.Ne(ignore_index) : y.FullLike(1, dtypes::kBool);
  Tensor y_counted =
      y.To(Device()).Flatten().Reshape({-1, 1}).Eq(Arange(0, classes, 1, std::nullopt, Device()));
  Dims target_shape = y.Shape();
  target_shape.push_back(classes);
  Tensor target = (y_counted * loss_mask.Reshape({-1, 1})).Reshape(target_shape);
  Tensor smoothing = label_smoothing * (log_probs.Mean(-1) * loss_mask);
  Tensor unreduced = (1 - label_smoothing) * (log_probs * target).Sum(-1) + smoothing;
  if (reduction == "mean") return -(unreduced.Sum() / loss_mask.Sum());
  if (reduction == "sum") return -unreduced.Sum();
  return -unreduced;
}

Tensor Tensor::BinaryCrossentropyLogits(const Tensor& y, const std::string& reduction) const {
  UOPC_TENSOR_PROPAGATE(this, &y);
  return DoReduction(Maximum(0) - y * *this + (1 + Abs().Neg().Exp()).Log(), reduction);
}

Tensor Tensor::BinaryCrossentropy(const Tensor& y, const std::string& reduction) const {
  UOPC_TENSOR_PROPAGATE(this, &y);
  return DoReduction(-y * Log() - (1 - y) * (1 - *this).Log(), reduction);
}

namespace {

// Whether `reduction` is one _do_reduction takes.
bool KnownReduction(const std::string& reduction) {
  return reduction == "mean" || reduction == "sum" || reduction == "none";
}

}  // namespace

Tensor Tensor::NllLoss(const Tensor& y, const Tensor* weight, std::optional<int64_t> ignore_index,
                       const std::string& reduction) const {
  UOPC_TENSOR_PROPAGATE(this, &y);
  if (weight) UOPC_TENSOR_PROPAGATE(weight);
  if (!KnownReduction(reduction)) return DoReduction(*this, reduction);
  if (auto symbolic = SymbolicSizeError(*this, "NllLoss")) return *symbolic;
  if (ndim() < 2)
    return Error("NllLoss", "needs the log-probabilities as (N, C, ...), got shape " + TupleString(Shape()));
  if (!y.dtype().is_int())
    return Error("NllLoss", "the labels must be integers, got " + y.dtype().ToString());
  Dims label_shape = Shape();
  const int64_t classes = label_shape[1];
  label_shape.erase(label_shape.begin() + 1);
  if (y.Shape() != label_shape) {
    return Error("NllLoss", absl::StrCat("the labels' shape ", TupleString(y.Shape()), " must be ",
                                         TupleString(label_shape), " for log-probabilities of shape ",
                                         TupleString(Shape())));
  }
  if (weight && weight->Shape() != Dims{classes}) {
    return Error("NllLoss", absl::StrCat("the weight's shape ", TupleString(weight->Shape()), " must be (",
                                         classes, ",), one per class"));
  }
  Tensor w = weight ? weight->IndexWith(y) : y.OnesLike();
  Tensor masked_weight = ignore_index ? w * y.Ne(*ignore_index) : w;
  Tensor nll = Gather(1, y.Unsqueeze(1)).Squeeze(1).Neg() * masked_weight;
  if (reduction == "mean") return nll.Sum() / masked_weight.Sum();
  return DoReduction(nll, reduction);
}

Tensor Tensor::CrossEntropy(const Tensor& y, const std::string& reduction, double label_smoothing) const {
  UOPC_TENSOR_PROPAGATE(this, &y);
  if (label_smoothing < 0.0 || label_smoothing > 1.0) {
    return Error("CrossEntropy", "label_smoothing must be in [0, 1]");
  }
  if (!KnownReduction(reduction)) return DoReduction(*this, reduction);
  if (ndim() < 2)
    return Error("CrossEntropy", "needs the logits as (N, C, ...), got shape " + TupleString(Shape()));
  Tensor target = y.ndim() < 2 ? y.OneHot(Shape()[1]) : y;
  UOPC_TENSOR_PROPAGATE(&target);
  target = (1 - label_smoothing) * target + label_smoothing / static_cast<double>(target.Shape()[1]);
  return DoReduction(LogSoftmax(1).Mul(target).Sum(1).Neg(), reduction);
}

namespace {

// tinygrad's _pre_scatter: src, cut to the index's shape and repeated along a new last axis, and the mask of
// where each of its values goes (index one-hot along that axis), both moved so that the new axis is `dim`'s
// place and the old `dim` is last, then padded to `self`'s shape.
absl::StatusOr<std::pair<Tensor, Tensor>> PreScatter(const Tensor& self, int64_t dim_in,
                                                     const Tensor& index_in, const Tensor& src_in,
                                                     absl::string_view op) {
  const Tensor index = index_in.To(self.Device());
  UOPC_RETURN_IF_ERROR(index.status());
  absl::Status err;
  const int64_t dim = self.ResolveDim(dim_in, false, &err);
  UOPC_RETURN_IF_ERROR(err);
  const Dims s = self.Shape(), is = index.Shape(), ss = src_in.Shape();
  if (is.size() != s.size() || ss.size() != s.size()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": the tensor ", TupleString(s), ", the index ",
                                                   TupleString(is), " and src ", TupleString(ss),
                                                   " must have as many dimensions"));
  }
  for (size_t d = 0; d < s.size(); ++d) {
    if ((static_cast<int64_t>(d) != dim && s[d] < is[d]) || ss[d] < is[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          op, ": the index shape ", TupleString(is), " exceeds src's ", TupleString(ss), " or the tensor's ",
          TupleString(s), " on axis ", d, " (the tensor's axis ", dim, " may be smaller)"));
    }
  }
  if (self.dtype() != src_in.dtype()) {
    return absl::InvalidArgumentError(absl::StrCat(op, ": src's dtype ", src_in.dtype().ToString(),
                                                   " must be the tensor's ", self.dtype().ToString()));
  }
  if (!index.dtype().is_int()) {
    return absl::InvalidArgumentError(
        absl::StrCat(op, ": the index must be integers, got ", index.dtype().ToString()));
  }
  std::vector<std::pair<int64_t, int64_t>> to_index;
  for (int64_t n : is) to_index.push_back({0, n});
  Tensor src = src_in.Shrink(to_index);
  Dims repeated = src.Shape();
  repeated.push_back(s[dim]);
  src = src.Unsqueeze(-1).Expand(repeated).Transpose(-1, dim);
  Tensor mask =
      index.Unsqueeze(-1).Eq(Tensor::Arange(0, s[dim], 1, std::nullopt, self.Device())).Transpose(-1, dim);
  std::vector<std::pair<int64_t, int64_t>> pads;
  for (size_t d = 0; d < s.size(); ++d)
    pads.push_back({0, static_cast<int64_t>(d) != dim ? s[d] - is[d] : 0});
  pads.push_back({0, 0});
  src = src.Pad(pads);
  mask = mask.Pad(pads);
  UOPC_RETURN_IF_ERROR(src.status());
  UOPC_RETURN_IF_ERROR(mask.status());
  return std::make_pair(src, mask);
}

// tinygrad's _masked_setitem over the last axis: values where the mask (reduced over that axis, the last true
// entry winning) is set, else target.
Tensor MaskedSetLastAxis(const Tensor& target, const Tensor& values, const Tensor& mask) {
  if (mask.Shape().back() == 0) {
    return Error("Scatter", "cannot scatter into an axis of size 0, shape " + TupleString(target.Shape()));
  }
  std::vector<Tensor> masks = mask.Split(1, -1), parts = values.Split(1, -1);
  UOPC_TENSOR_PROPAGATE(&masks[0], &parts[0]);
  Tensor m = masks[0], v = parts[0];
  for (size_t i = 1; i < masks.size(); ++i) {
    v = masks[i].Where(parts[i], v);
    m = m | masks[i];
  }
  return m.Squeeze(-1).Where(v.Squeeze(-1), target);
}

}  // namespace

Tensor Tensor::Scatter(int64_t dim, const Tensor& index, const Operand& src,
                       std::optional<std::string> reduce) const {
  UOPC_TENSOR_PROPAGATE(this, &index);
  if (src.is_tensor()) UOPC_TENSOR_PROPAGATE(&src.tensor());
  for (const Tensor* t : {this, &index}) {
    if (auto symbolic = SymbolicSizeError(*t, "Scatter")) return *symbolic;
  }
  if (reduce && *reduce != "add" && *reduce != "multiply") {
    return Error("Scatter", "reduce must be \"add\", \"multiply\" or unset, got \"" + *reduce + "\"");
  }
  if (reduce && src.is_tensor()) {
    return Error("Scatter", "a tensor src takes no reduce (ScatterReduce reduces tensors)");
  }
  Tensor s = src.is_tensor() ? src.tensor() : Full(index.Shape(), src.scalar(), dtype(), Device());
  if (reduce == "add") return ScatterReduce(dim, index, s, "sum", true);
  if (reduce == "multiply") return ScatterReduce(dim, index, s, "prod", true);
  absl::StatusOr<std::pair<Tensor, Tensor>> prepared = PreScatter(*this, dim, index, s, "Scatter");
  if (!prepared.ok()) return FromError(prepared.status());
  return MaskedSetLastAxis(*this, prepared->first, prepared->second);
}

Tensor Tensor::ScatterReduce(int64_t dim, const Tensor& index, const Tensor& src_in,
                             const std::string& reduce, bool include_self) const {
  UOPC_TENSOR_PROPAGATE(this, &index, &src_in);
  for (const Tensor* t : {this, &index, &src_in}) {
    if (auto symbolic = SymbolicSizeError(*t, "ScatterReduce")) return *symbolic;
  }
  if (reduce != "sum" && reduce != "prod" && reduce != "mean" && reduce != "amax" && reduce != "amin") {
    return Error("ScatterReduce",
                 "reduce must be \"sum\", \"prod\", \"mean\", \"amax\" or \"amin\", got \"" + reduce + "\"");
  }
  absl::StatusOr<std::pair<Tensor, Tensor>> prepared = PreScatter(*this, dim, index, src_in, "ScatterReduce");
  if (!prepared.ok()) return FromError(prepared.status());
  const Tensor src = prepared->first, mask = prepared->second;
  // Where no value is written: `a`, else `b`.
  auto unwritten = [&](const Operand& a, const Operand& b) { return mask.Any(-1).LogicalNot().Where(a, b); };
  // The tensor's own values, or `identity` where values are written when they are left out.
  auto own = [&](Scalar identity) { return include_self ? *this : unwritten(*this, identity); };
  if (reduce == "sum") return mask.Where(src, 0).Sum(-1, false, dtype()).Add(own(0));
  if (reduce == "prod") return mask.Where(src, 1).Cast(dtype()).Prod(-1).Mul(own(1));
  if (reduce == "amax") {
    const Scalar lowest(DTypeMin(src.dtype()));
    return mask.Where(src, lowest).Max(-1).Maximum(own(lowest));
  }
  if (reduce == "amin") {
    const Scalar highest(DTypeMax(src.dtype()));
    return mask.Where(src, highest).Min(-1).Minimum(own(highest));
  }
  Tensor count = mask.Where(1, 0).Sum(-1, false, dtype());
  count = include_self ? count.Add(1) : count.Add(unwritten(1, 0));
  return mask.Where(src, 0).Sum(-1, false, dtype()).Add(own(0)).Div(count);
}

Tensor Tensor::Interpolate(const Dims& size, const std::string& mode, bool align_corners) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (auto symbolic = SymbolicSizeError(*this, "Interpolate")) return *symbolic;
  if (size.empty() || static_cast<int64_t>(size.size()) > ndim()) {
    return Error("Interpolate", absl::StrCat("size ", TupleString(size), " must name 1 to ", ndim(),
                                             " axes of shape ", TupleString(Shape())));
  }
  if (mode != "linear" && mode != "nearest" && mode != "nearest-exact") {
    return Error("Interpolate",
                 "mode must be \"linear\", \"nearest\" or \"nearest-exact\", got \"" + mode + "\"");
  }
  if (align_corners && mode != "linear") return Error("Interpolate", "align_corners needs mode \"linear\"");
  const int64_t corner = align_corners ? 1 : 0;
  for (int64_t n : size) {
    if (n - corner <= 0) {
      return Error("Interpolate",
                   absl::StrCat("every size must be at least ", 1 + corner,
                                align_corners ? " with align_corners" : "", ", got ", TupleString(size)));
    }
  }
  const Dims shape = Shape();
  Tensor x = *this;
  Dims expanded = shape;
  for (int64_t k = 1; k <= static_cast<int64_t>(size.size()); ++k) {
    const int64_t axis = ndim() - k, n = size[size.size() - k];
    const double scale = static_cast<double>(shape[axis] - corner) / static_cast<double>(n - corner);
    Tensor positions = Arange(0, n, 1, dtypes::kFloat32, Device());
    Dims along(ndim(), 1);
    along[axis] = expanded[axis] = n;
    auto spread = [&](const Tensor& t) { return t.Reshape(along).Expand(expanded); };
    if (mode == "linear") {
      Tensor index = (align_corners ? scale * positions : scale * (positions + 0.5) - 0.5)
                         .Clip(Scalar(int64_t{0}), Scalar(shape[axis] - 1));
      Tensor low = spread(index.Floor().Int()), high = spread(index.Ceil().Int());
      Tensor fraction = spread(index - index.Floor());
      x = x.Gather(-k, low).Lerp(x.Gather(-k, high), fraction);
    } else {
      Tensor index = mode == "nearest-exact" ? scale * (positions + 0.5) : scale * positions;
      x = x.Gather(-k, spread(index.Cast(dtypes::kInt32)));
    }
  }
  return x.Cast(dtype());
}

}  // namespace uopc
