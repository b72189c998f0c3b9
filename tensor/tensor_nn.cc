// Matmul, convolution, pooling, normalizations, one-hot, triangular masks and attention, built as tinygrad's
// tensor.py builds them (a convolution is a pooling view times the weights, summed); with uopc's kernels a
// large matmul reads its right side from packed panels.
#include <cmath>

#include "runtime/host_cpu.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::Error;

namespace {

// tinygrad's _resolve_pool_pads: flat (before, after) pads, last axis first... as PyTorch lists them.
absl::StatusOr<Dims> ResolvePoolPads(const Dims& padding, size_t dims) {
  if (padding.size() == 1) return Dims(2 * dims, padding[0]);
  if (padding.size() == 2 * dims) return padding;
  if (padding.size() == dims) {
    Dims out;
    for (int64_t p : padding) out.insert(out.end(), {p, p});
    std::reverse(out.begin(), out.end());
    return out;
  }
  return absl::InvalidArgumentError(absl::StrCat("padding must be one value or a sequence of length ", dims,
                                                 " or ", 2 * dims, ", got ", TupleString(padding)));
}

// Tensor.pad with flat padding (tinygrad's _flat_to_grouped): pairs apply to the last axes, last axis first.
Tensor FlatPad(const Tensor& x, const Dims& flat, Scalar value = 0.0) {
  UOPC_TENSOR_PROPAGATE(&x);
  std::vector<std::pair<int64_t, int64_t>> pads(x.ndim(), {0, 0});
  size_t pairs = flat.size() / 2;
  if (pairs > pads.size()) return Error("Pad", "more pads than axes in shape " + TupleString(x.Shape()));
  for (size_t i = 0; i < pairs; ++i) pads[pads.size() - 1 - i] = {flat[2 * i], flat[2 * i + 1]};
  return x.Pad(pads, value);
}

Tensor Tri(int64_t r, int64_t c, int64_t diagonal, const std::string& device) {
  if (r == 0 || c == 0 || diagonal >= c) return Tensor::Zeros({r, c}, dtypes::kBool, device);
  if (r + diagonal <= 0) return Tensor::Ones({r, c}, dtypes::kBool, device);
  int64_t s = r + c - 1;
  Tensor t = Tensor::Ones({s, s}, dtypes::kBool, device)
                 .Pad({{0, 0}, {0, s}})
                 .Flatten()
                 .Shrink({{0, s * (2 * s - 1)}})
                 .Reshape({s, -1})
                 .Shrink({{0, s}, {0, s}});
  if (diagonal <= 0)
    return t.Index({Slice{std::nullopt, r, std::nullopt}, Slice{-diagonal, c - diagonal, std::nullopt}});
  return t.Index({Slice{diagonal, r + diagonal, std::nullopt}, Slice{std::nullopt, c, std::nullopt}});
}

// uopc's kernels on the host's devices (UOPC_KERNELS=fast, CPU and LLVM): the right side of a large float32
// matmul is read from panels of as many columns as a vector has lanes, (N/16, K, 16), copied there by one
// kernel: each vector of B a register tile loads is then the next 64 bytes instead of a row of B further on
// (a new page at every reduce step), and a panel stays in the L2 cache while the row blocks pass over it
// (docs/performance.md). The values are B's, so the products and their sums are the same; tinygrad's graph
// for every other matmul, and for all of them with UOPC_KERNELS=tinygrad.
Tensor PackedForVectorTiles(const Tensor& w) {
  constexpr int64_t kMinElements = int64_t{1} << 20;  // 4 MB: twice the L2 cache; smaller Bs stay cached
  const int64_t lanes = HostKernelVectorWidth();
  if (lanes == 1 || w.ndim() != 2 || w.dtype() != dtypes::kFloat32) return w;
  const std::string device = w.Device();
  if (device != "CPU" && device != "LLVM") return w;
  const Dims ws = w.Shape();
  const int64_t k = ws[0], n = ws[1];
  if (n % lanes != 0 || k * n < kMinElements) return w;
  return w.Reshape({k, n / lanes, lanes}).Permute({1, 0, 2}).Contiguous().Permute({1, 0, 2}).Reshape({k, n});
}

}  // namespace

Tensor Tensor::Dot(const Tensor& w, std::optional<DType> acc_dtype) const {
  UOPC_TENSOR_PROPAGATE(this, &w);
  int64_t dx = ndim(), dw = w.ndim();
  Dims xs = Shape(), ws = w.Shape();
  if (dx == 0 || dw == 0) {
    return Error("Dot", absl::StrCat("both tensors need to be at least 1D, got shapes ", TupleString(xs),
                                     " and ", TupleString(ws)));
  }
  int64_t axis_w = dw - std::min<int64_t>(dw, 2);
  if (xs.back() != ws[axis_w])
    return Error("Dot", absl::StrCat("cannot dot ", TupleString(xs), " and ", TupleString(ws)));
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  Dims xr(xs.begin(), xs.end() - 1);
  xr.insert(xr.end(), ones, 1);
  xr.push_back(xs.back());
  Dims wr(ws.begin(), ws.end() - std::min<int64_t>(dw, 2));
  wr.insert(wr.end(), ones, 1);
  wr.insert(wr.end(), ws.begin() + axis_w, ws.end());
  Tensor x = Reshape(xr);
  Tensor wt = PackedForVectorTiles(w).Reshape(wr).Transpose(-1, -std::min<int64_t>(dw, 2));
  return (x * wt).Sum(-1, false, acc_dtype).Cast(acc_dtype.value_or(LeastUpperDType(x.dtype(), wt.dtype())));
}

Tensor Tensor::Linear(const Tensor& weight, const Tensor* bias) const {
  Tensor x = weight.ndim() == 1 ? Mul(weight) : Dot(weight);
  return bias ? x.Add(*bias) : x;
}

Tensor Tensor::Conv2d(const Tensor& weight, const Tensor* bias, const ConvOptions& o) const {
  UOPC_TENSOR_PROPAGATE(this, &weight);
  Dims xs = Shape(), ws = weight.Shape();
  if (xs.size() < 3 || xs.size() != ws.size() || o.groups < 1 || o.groups * ws[1] != xs[1] ||
      ws[0] % o.groups != 0) {
    return Error("Conv2d", absl::StrCat("input shape ", TupleString(xs), " does not match the weight shape ",
                                        TupleString(ws), " with groups=", o.groups));
  }
  int64_t bs = xs[0], cout = ws[0], cin = ws[1];
  Dims hw(ws.begin() + 2, ws.end());
  absl::StatusOr<Dims> pads = ResolvePoolPads(o.padding, hw.size());
  if (!pads.ok()) return FromError(pads.status());
  Tensor x = tensor_internal::Pool(FlatPad(*this, *pads), hw, o.stride, o.dilation);
  UOPC_TENSOR_PROPAGATE(&x);
  int64_t rcout = cout / o.groups;
  Dims pooled = x.Shape();
  Dims oyx(pooled.begin() + 2, pooled.end() - hw.size());
  int64_t no = oyx.size(), nh = hw.size();
  Dims r1 = {bs, o.groups, cin, 1}, e1 = {bs, o.groups, cin, rcout};
  r1.insert(r1.end(), oyx.begin(), oyx.end());
  r1.insert(r1.end(), hw.begin(), hw.end());
  e1.insert(e1.end(), oyx.begin(), oyx.end());
  e1.insert(e1.end(), hw.begin(), hw.end());
  Dims perm = {0, 1, 3};
  for (int64_t i = 0; i < no; ++i) perm.push_back(4 + i);
  perm.push_back(2);
  for (int64_t i = 0; i < nh; ++i) perm.push_back(4 + no + i);
  x = x.Reshape(r1).Expand(e1).Permute(perm);
  Dims wr = {1, o.groups, rcout};
  wr.insert(wr.end(), no, 1);
  wr.push_back(cin);
  wr.insert(wr.end(), hw.begin(), hw.end());
  Dims axes;
  for (int64_t i = 0; i < 1 + no; ++i) axes.push_back(-1 - i);
  Dims out = {bs, cout};
  out.insert(out.end(), oyx.begin(), oyx.end());
  Tensor ret = (x * weight.Reshape(wr)).Sum(axes, true).Reshape(out);
  if (!bias) return ret;
  Dims br = {1, -1};
  br.insert(br.end(), nh, 1);
  return ret.Add(bias->Reshape(br));
}

Tensor Tensor::MaxPool2d(Dims kernel_size, Dims stride, Dims dilation, Dims padding) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::StatusOr<Dims> pads = ResolvePoolPads(padding, kernel_size.size());
  if (!pads.ok()) return FromError(pads.status());
  Tensor pooled = tensor_internal::Pool(FlatPad(*this, *pads, Scalar(DTypeMin(dtype()))), kernel_size,
                                        stride.empty() ? kernel_size : stride, dilation);
  Dims axes;
  for (int64_t i = -static_cast<int64_t>(kernel_size.size()); i < 0; ++i) axes.push_back(i);
  return pooled.Max(axes);
}

Tensor Tensor::AvgPool2d(Dims kernel_size, Dims stride, Dims dilation, Dims padding,
                         bool count_include_pad) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::StatusOr<Dims> pads = ResolvePoolPads(padding, kernel_size.size());
  if (!pads.ok()) return FromError(pads.status());
  Dims s = stride.empty() ? kernel_size : stride;
  auto pool = [&](const Tensor& x) {
    return tensor_internal::Pool(FlatPad(x, *pads), kernel_size, s, dilation);
  };
  Dims axes;
  for (int64_t i = -static_cast<int64_t>(kernel_size.size()); i < 0; ++i) axes.push_back(i);
  if (!count_include_pad) return pool(*this).Sum(axes) / pool(OnesLike()).Sum(axes);
  return pool(*this).Mean(axes);
}

Tensor Tensor::Layernorm(Axes axis, double eps) const {
  Tensor y = *this - Mean(axis, true);
  return y.Mul((y * y).Mean(axis, true).Add(eps).Rsqrt());
}

Tensor Tensor::Batchnorm(const Tensor* weight, const Tensor* bias, const Tensor& mean, const Tensor& invstd,
                         Axes axis) const {
  UOPC_TENSOR_PROPAGATE(this, &mean, &invstd);
  Dims axes = axis.all ? Dims{1} : axis.axes;
  Dims shape = Shape(), bshape;
  for (int64_t ax = 0; ax < ndim(); ++ax)
    bshape.push_back(std::find(axes.begin(), axes.end(), ax) != axes.end() ? shape[ax] : 1);
  Tensor x = *this - mean.Reshape(bshape);
  if (weight) x = x * weight->Reshape(bshape);
  Tensor ret = x.Mul(invstd.ndim() == static_cast<int64_t>(axes.size()) ? invstd.Reshape(bshape) : invstd);
  return bias ? ret + bias->Reshape(bshape) : ret;
}

Tensor Tensor::OneHot(int64_t num_classes) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (!dtype().is_int()) return Error("OneHot", "expects an integer dtype, got " + dtype().ToString());
  if (num_classes < 0) return Error("OneHot", "num_classes must be given");
  Tensor x = Index({Ellipsis{}, NewAxis{}});
  return x.Eq(Arange(0, num_classes, 1, std::nullopt, Device())).Where(1, 0);
}

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

Tensor Tensor::Triu(int64_t diagonal) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (ndim() < 2) return Error("Triu", "needs at least 2 dimensions, got shape " + TupleString(Shape()));
  Dims s = Shape();
  return Tri(s[s.size() - 2], s.back(), diagonal, Device()).Where(*this, 0).Cast(dtype());
}

Tensor Tensor::Tril(int64_t diagonal) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (ndim() < 2) return Error("Tril", "needs at least 2 dimensions, got shape " + TupleString(Shape()));
  Dims s = Shape();
  return Tri(s[s.size() - 2], s.back(), diagonal + 1, Device()).Where(0, *this).Cast(dtype());
}

Tensor Tensor::ScaledDotProductAttention(const Tensor& key, const Tensor& value, const Tensor* attn_mask,
                                         bool is_causal) const {
  UOPC_TENSOR_PROPAGATE(this, &key, &value);
  DType acc = LeastUpperDType(LeastUpperDType(dtype(), key.dtype()), dtypes::kFloat32);
  Tensor qk = Matmul(key.Transpose(-2, -1), acc) / std::sqrt(static_cast<double>(Shape().back()));
  Tensor mask;
  if (is_causal) {
    if (attn_mask) return Error("ScaledDotProductAttention", "cannot set attn_mask when is_causal=true");
    mask = qk.FullLike(1, dtypes::kBool).Tril();
  } else if (attn_mask) {
    mask = *attn_mask;
  }
  if (is_causal || attn_mask) {
    if (mask.dtype() == dtypes::kBool) mask = mask.Where(0, -INFINITY);
    qk = qk + mask;
  }
  return qk.Cast(dtype()).Softmax(-1).Matmul(value);
}

}  // namespace uopc
