// Matmul, convolution, pooling, normalizations, one-hot, triangular masks and attention, built as tinygrad's
// tensor.py builds them (a convolution is a pooling view times the weights, summed); with uopc's kernels a
// large matmul reads its right side from packed panels and a large convolution's gradients are convolutions.
#include <cmath>

#include "runtime/host_cpu.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::Error;
using tensor_internal::SymbolicSizeError;

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

// Whether `t` runs uopc's kernels on one of the host's devices (UOPC_KERNELS=fast, CPU and LLVM), where the
// graph may differ from tinygrad's for the kernels' sake.
bool UopcHostKernels(const Tensor& t) {
  if (HostKernelVectorWidth() == 1) return false;
  const std::string device = t.Device();
  return device == "CPU" || device == "LLVM";
}

// With uopc's kernels on the host's devices, the right side of a large float32
// matmul is read from panels of as many columns as a vector has lanes, (N/16, K, 16), copied there by one
// kernel: each vector of B a register tile loads is then the next 64 bytes instead of a row of B further on
// (a new page at every reduce step), and a panel stays in the L2 cache while the row blocks pass over it
// (docs/performance.md). The values are B's, so the products and their sums are the same; tinygrad's graph
// for every other matmul, and for all of them with UOPC_KERNELS=tinygrad.
Tensor PackedForVectorTiles(const Tensor& w) {
  constexpr int64_t kMinElements = int64_t{1} << 20;  // 4 MB: twice the L2 cache; smaller Bs stay cached
  if (!UopcHostKernels(w) || w.ndim() != 2 || w.dtype() != dtypes::kFloat32) return w;
  const int64_t lanes = HostKernelVectorWidth();
  const Dims ws = w.Shape();
  const int64_t k = ws[0], n = ws[1];
  if (n % lanes != 0 || k * n < kMinElements) return w;
  return w.Reshape({k, n / lanes, lanes}).Permute({1, 0, 2}).Contiguous().Permute({1, 0, 2}).Reshape({k, n});
}

}  // namespace

Tensor Tensor::Dot(const Tensor& w, std::optional<DType> acc_dtype) const {
  UOPC_TENSOR_PROPAGATE(this, &w);
  int64_t dx = ndim(), dw = w.ndim();
  SintVec xs = SymShape(), ws = w.SymShape();
  if (dx == 0 || dw == 0) {
    return Error("Dot", absl::StrCat("both tensors need to be at least 1D, got shapes ", TupleString(xs),
                                     " and ", TupleString(ws)));
  }
  int64_t axis_w = dw - std::min<int64_t>(dw, 2);
  if (!Resolve(uopc::Eq(xs.back(), ws[axis_w]), false))
    return Error("Dot", absl::StrCat("cannot dot ", TupleString(xs), " and ", TupleString(ws)));
  int64_t ones = std::min<int64_t>({dx - 1, dw - 1, 1});
  SintVec xr(xs.begin(), xs.end() - 1);
  xr.insert(xr.end(), ones, Sint(1));
  xr.push_back(xs.back());
  SintVec wr(ws.begin(), ws.end() - std::min<int64_t>(dw, 2));
  wr.insert(wr.end(), ones, Sint(1));
  wr.insert(wr.end(), ws.begin() + axis_w, ws.end());
  Tensor x = Reshape(xr);
  Tensor packed = w.symbolic() ? w : PackedForVectorTiles(w);
  Tensor wt = packed.Reshape(wr).Transpose(-1, -std::min<int64_t>(dw, 2));
  return (x * wt).Sum(-1, false, acc_dtype).Cast(acc_dtype.value_or(LeastUpperDType(x.dtype(), wt.dtype())));
}

Tensor Tensor::Linear(const Tensor& weight, const Tensor* bias) const {
  Tensor x = weight.ndim() == 1 ? Mul(weight) : Dot(weight);
  return bias ? x.Add(*bias) : x;
}

namespace {

// tinygrad's conv2d without the bias: the pooling view of x (padded by `pads`, flat) times the weight,
// summed.
Tensor Convolution(const Tensor& input, const Tensor& weight, const Dims& pads, const ConvOptions& o) {
  const Dims xs = input.Shape(), ws = weight.Shape();
  const int64_t bs = xs[0], cout = ws[0], cin = ws[1];
  const Dims hw(ws.begin() + 2, ws.end());
  Tensor x = tensor_internal::Pool(FlatPad(input, pads), hw, o.stride, o.dilation);
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
  return (x * weight.Reshape(wr)).Sum(axes, true).Reshape(out);
}

// The (before, after) pads of spatial axis i from flat pads, last axis first.
std::pair<int64_t, int64_t> AxisPads(const Dims& flat, size_t spatial, size_t i) {
  return {flat[2 * (spatial - 1 - i)], flat[2 * (spatial - 1 - i) + 1]};
}

// Which of a convolution's gradients come from uopc's rules (a CUSTOM_GRADIENT node) instead of tinygrad's
// graph (docs/performance.md):
// - x's: tinygrad differentiates through the pads and pools, one kernel writing every product of the output
//   gradient and the weights, one value per (image, input channel, kernel position, output position), a
//   second summing the overlapping windows. A transposed convolution of the output gradient gives the same
//   sums without that intermediate, in a kernel blocked like a forward convolution's.
// - the weight's: tinygrad's is one sum per weight over every image and output position, few sums of many
//   products (the mnist model's second convolution: 25,600 of 204,800), which leaves a GPU's threads idle
//   and keeps the host's vector heuristic from blocking it. With the batch split into groups it is a grouped
//   convolution of x with the output gradient, a sum per weight and group, then a sum over the groups.
// Both apply with uopc's kernels on CPU, LLVM and CUDA, to convolutions with float weights, 2^20 or more
// products (the intermediate 4 MB or more, twice the L2 cache) and padding within the kernel's span; x's
// where x has the weight's dtype, the weight's where the convolution is ungrouped and the batch makes 2 or
// more groups of the images per group that the device's kernels were measured best with.
struct ConvGradientRules {
  bool input = false;
  int64_t weight_split = 0;  // groups of the batch (0: tinygrad's weight gradient)
};

ConvGradientRules ChooseConvGradientRules(const Tensor& x, const Tensor& weight, const Dims& pads,
                                          const ConvOptions& o) {
  constexpr int64_t kMinProducts = int64_t{1} << 20;
  const std::string device = x.Device();
  // Measured on beautiful_mnist's four convolutions (docs/performance.md): groups of 16 images on the host,
  // of 128 on an H200.
  const int64_t images_per_group = device == "CUDA" ? 128 : 16;
  const bool uopc_kernels = UopcHostKernels(x) || (HostKernelVectorWidth() > 1 && device == "CUDA");
  if (!uopc_kernels || !weight.dtype().is_float()) return {};
  const Dims xs = x.Shape(), ws = weight.Shape();
  const size_t spatial = ws.size() - 2;
  const Dims stride = tensor_internal::PerAxis(o.stride, spatial),
             dilation = tensor_internal::PerAxis(o.dilation, spatial);
  if (stride.size() != spatial || dilation.size() != spatial || pads.size() != 2 * spatial) return {};
  int64_t products = xs[0] * xs[1];
  for (size_t i = 0; i < spatial; ++i) {
    const auto [before, after] = AxisPads(pads, spatial, i);
    const int64_t span = dilation[i] * (ws[2 + i] - 1);
    if (stride[i] < 1 || before < 0 || after < 0 || before > span || after > span) return {};
    const int64_t out = (xs[2 + i] + before + after - span - 1) / stride[i] + 1;
    if (out < 1) return {};
    products *= ws[2 + i] * out;
  }
  if (products < kMinProducts) return {};
  // x's gradient needs x of the weight's float type; the weight's takes any x (the first layer's pixels).
  ConvGradientRules rules{.input = x.dtype() == weight.dtype()};
  if (o.groups == 1 && images_per_group > 0) {
    int64_t split = 1;
    while (xs[0] % (2 * split) == 0 && xs[0] / (2 * split) >= images_per_group) split *= 2;
    if (split > 1) rules.weight_split = split;
  }
  return rules;
}

}  // namespace

namespace tensor_internal {

namespace {

// The convolution's options as the CUSTOM_GRADIENT arg holds them (padding flat, per axis).
ConvOptions RuleOptions(const Arg::Tuple& a) {
  auto ints = [](const Arg& arg) {
    Dims out;
    for (const Arg& v : arg.as_tuple()) out.push_back(v.as_int());
    return out;
  };
  ConvOptions o;
  o.groups = a[1].as_int();
  o.stride = ints(a[2]);
  o.dilation = ints(a[3]);
  o.padding = ints(a[4]);
  return o;
}

// x's gradient: the transposed convolution of the output gradient.
absl::StatusOr<UOpPtr> ConvInputGradient(const UOpPtr& node, const UOpPtr& grad) {
  const ConvOptions o = RuleOptions(node->arg().as_tuple());
  const Tensor x(node->src()[1]), weight(node->src()[2]), dy(grad);
  const Dims xs = x.Shape(), ws = weight.Shape(), ys = dy.Shape();
  const size_t spatial = ws.size() - 2;
  // The rows and columns of x the last windows do not reach (a stride that does not divide the padded size)
  // get no gradient: the transposed convolution's output padding.
  Dims output_padding;
  for (size_t i = 0; i < spatial; ++i) {
    const auto [before, after] = AxisPads(o.padding, spatial, i);
    const int64_t span = o.dilation[i] * (ws[2 + i] - 1);
    output_padding.push_back(xs[2 + i] + before + after - span - 1 - (ys[2 + i] - 1) * o.stride[i]);
  }
  Tensor dx = dy.ConvTranspose2d(weight, nullptr, o, output_padding);
  UOPC_RETURN_IF_ERROR(dx.status());
  if (dx.Shape() != xs) {
    return absl::InternalError(absl::StrCat("the transposed convolution has shape ", TupleString(dx.Shape()),
                                            ", the input ", TupleString(xs)));
  }
  return dx.uop();
}

// The weight's gradient with the batch split into `split` groups: dw[o, i, k] = sum over images n and output
// positions p of dy[n, o, p] * x_padded[n, i, p * stride + k * dilation], as a convolution whose batch is x's
// channels, whose channels are the images (`split` groups of them) and whose kernel is dy's positions (the
// roles of stride and dilation swap); its windows past the weight's size are cut off, then the groups summed.
absl::StatusOr<UOpPtr> ConvWeightGradient(const UOpPtr& node, const UOpPtr& grad, int64_t split) {
  const ConvOptions o = RuleOptions(node->arg().as_tuple());
  const Tensor x(node->src()[1]), weight(node->src()[2]), dy(grad);
  const Dims xs = x.Shape(), ws = weight.Shape(), ys = dy.Shape();
  const size_t spatial = ws.size() - 2;
  const int64_t images = xs[0] / split, cin = xs[1], cout = ys[1];
  auto with_spatial = [&](Dims head, const Dims& shape) {
    head.insert(head.end(), shape.begin() + 2, shape.end());
    return head;
  };
  auto axes_from = [&](Dims head, int64_t first) {
    for (size_t i = 0; i < spatial; ++i) head.push_back(first + static_cast<int64_t>(i));
    return head;
  };
  // x as (cin, split * images, *spatial) and dy as (split * cout, images, *output).
  Tensor input = x.Reshape(with_spatial({split, images, cin}, xs))
                     .Permute(axes_from({2, 0, 1}, 3))
                     .Reshape(with_spatial({cin, split * images}, xs));
  Tensor kernel = dy.Reshape(with_spatial({split, images, cout}, ys))
                      .Permute(axes_from({0, 2, 1}, 3))
                      .Reshape(with_spatial({split * cout, images}, ys));
  ConvOptions swapped;
  swapped.groups = split;
  swapped.stride = tensor_internal::PerAxis(o.dilation, spatial);
  swapped.dilation = tensor_internal::PerAxis(o.stride, spatial);
  Tensor windows = Convolution(input, kernel, o.padding, swapped);
  UOPC_RETURN_IF_ERROR(windows.status());
  std::vector<std::pair<int64_t, int64_t>> keep = {{0, cin}, {0, split * cout}};
  for (size_t i = 0; i < spatial; ++i) keep.push_back({0, ws[2 + i]});
  Tensor dw = windows.Shrink(keep)
                  .Reshape(with_spatial({cin, split, cout}, ws))
                  .Sum({1})
                  .Permute(axes_from({1, 0}, 2));
  UOPC_RETURN_IF_ERROR(dw.status());
  if (dw.Shape() != ws) {
    return absl::InternalError(absl::StrCat("the split weight gradient has shape ", TupleString(dw.Shape()),
                                            ", the weight ", TupleString(ws)));
  }
  return dw.uop();
}

}  // namespace

absl::StatusOr<std::pair<UOpPtr, UOpPtr>> ConvGradients(const UOpPtr& node, const UOpPtr& grad) {
  const Arg::Tuple& a = node->arg().as_tuple();
  std::pair<UOpPtr, UOpPtr> grads;
  if (a[5].as_int() != 0) {
    UOPC_ASSIGN_OR_RETURN(grads.first, ConvInputGradient(node, grad));
  }
  if (const int64_t split = a[6].as_int(); split > 0) {
    UOPC_ASSIGN_OR_RETURN(grads.second, ConvWeightGradient(node, grad, split));
  }
  return grads;
}

}  // namespace tensor_internal

Tensor Tensor::Conv2d(const Tensor& weight, const Tensor* bias, const ConvOptions& o) const {
  UOPC_TENSOR_PROPAGATE(this, &weight);
  for (const Tensor* t : {this, &weight}) {
    if (auto symbolic = SymbolicSizeError(*t, "Conv2d")) return *symbolic;
  }
  Dims xs = Shape(), ws = weight.Shape();
  if (xs.size() < 3 || xs.size() != ws.size() || o.groups < 1 || o.groups * ws[1] != xs[1] ||
      ws[0] % o.groups != 0) {
    return Error("Conv2d", absl::StrCat("input shape ", TupleString(xs), " does not match the weight shape ",
                                        TupleString(ws), " with groups=", o.groups));
  }
  const size_t nh = ws.size() - 2;
  absl::StatusOr<Dims> pads = ResolvePoolPads(o.padding, nh);
  if (!pads.ok()) return FromError(pads.status());
  Tensor ret;
  const auto [input_rule, weight_split] = ChooseConvGradientRules(*this, weight, *pads, o);
  if (input_rule || weight_split > 0) {
    // The value from what the rule differentiates detached, so that its gradient is only the rule's.
    Tensor value =
        Convolution(input_rule ? Detach() : *this, weight_split > 0 ? weight.Detach() : weight, *pads, o);
    UOPC_TENSOR_PROPAGATE(&value);
    Arg rule = Arg::Tuple{Arg(std::string(tensor_internal::kConvGradientRule)),
                          Arg(o.groups),
                          Arg::IntTuple(tensor_internal::PerAxis(o.stride, nh)),
                          Arg::IntTuple(tensor_internal::PerAxis(o.dilation, nh)),
                          Arg::IntTuple(*pads),
                          Arg(int64_t{input_rule}),
                          Arg(weight_split)};
    ret = Tensor(UOp::New(Ops::CUSTOM_GRADIENT, value.dtype(), {value.uop(), uop(), weight.uop()}, rule));
  } else {
    ret = Convolution(*this, weight, *pads, o);
  }
  if (!bias) return ret;
  Dims br = {1, -1};
  br.insert(br.end(), nh, 1);
  return ret.Add(bias->Reshape(br));
}

Tensor Tensor::ConvTranspose2d(const Tensor& weight, const Tensor* bias, const ConvOptions& options,
                               Dims output_padding) const {
  const Tensor& x = *this;
  if (!x.ok()) return x;
  if (!weight.ok()) return weight;
  const Dims wshape = weight.Shape();
  if (wshape.size() < 3) {
    return Error("ConvTranspose2d", "the weight needs (in, out/groups, *kernel) axes, its shape has " +
                                        std::to_string(wshape.size()));
  }
  const size_t spatial = wshape.size() - 2;
  const Dims kernel(wshape.begin() + 2, wshape.end());
  if (x.ndim() != static_cast<int64_t>(wshape.size())) {
    return Error("ConvTranspose2d",
                 absl::StrCat("the input has ", x.ndim(), " axes, the weight ", wshape.size()));
  }
  const int64_t groups = options.groups;
  if (groups < 1 || wshape[0] % groups != 0) {
    return Error("ConvTranspose2d", absl::StrCat("groups ", groups, " does not divide ", wshape[0]));
  }
  // Padding as (before, after) per spatial axis (tinygrad's _resolve_pool_pads then _flat_to_grouped).
  std::vector<std::pair<int64_t, int64_t>> pads(spatial);
  const Dims& p = options.padding;
  if (p.size() == 1) {
    for (auto& pad : pads) pad = {p[0], p[0]};
  } else if (p.size() == spatial) {
    for (size_t i = 0; i < spatial; ++i) pads[i] = {p[i], p[i]};
  } else if (p.size() == 2 * spatial) {
    // Flat pairs, last axis first.
    for (size_t i = 0; i < spatial; ++i) pads[i] = {p[2 * (spatial - 1 - i)], p[2 * (spatial - 1 - i) + 1]};
  } else {
    return Error("ConvTranspose2d", absl::StrCat("padding must have 1, ", spatial, " or ", 2 * spatial,
                                                 " values, got ", p.size()));
  }
  const Dims stride = tensor_internal::PerAxis(options.stride, spatial),
             dilation = tensor_internal::PerAxis(options.dilation, spatial),
             out_pad = tensor_internal::PerAxis(output_padding, spatial);
  if (stride.size() != spatial || dilation.size() != spatial || out_pad.size() != spatial) {
    return Error("ConvTranspose2d", "stride, dilation and output_padding need one value or one per axis");
  }
  for (size_t i = 0; i < spatial; ++i) {
    if (stride[i] < 1 || dilation[i] < 1) return Error("ConvTranspose2d", "stride and dilation must be >= 1");
  }
  // The weight as a forward convolution's: (groups, in/groups, out/groups, *k) -> swap the channel axes ->
  // flip the kernel -> (out, in/groups, *k).
  Dims unflat = {groups, wshape[0] / groups};
  unflat.insert(unflat.end(), wshape.begin() + 1, wshape.end());
  Dims flip_axes;
  for (size_t a = 3; a <= wshape.size(); ++a) flip_axes.push_back(static_cast<int64_t>(a));
  Tensor w = weight.Reshape(unflat).Transpose(1, 2).Flip(flip_axes);
  Tensor xs = x;
  bool strided = false;
  for (int64_t s : stride) strided |= s > 1;
  if (strided) {
    // Spread the input: each element k becomes (k, 0, ..., 0) of stride s, then the trailing zeros go.
    const Dims shape = x.Shape();
    Dims split = {shape[0], shape[1]};
    std::vector<std::pair<int64_t, int64_t>> spread = {{0, 0}, {0, 0}};
    for (size_t i = 0; i < spatial; ++i) {
      split.push_back(shape[2 + i]);
      split.push_back(1);
      spread.push_back({0, 0});
      spread.push_back({0, stride[i] - 1});
    }
    xs = xs.Reshape(split).Pad(spread);
    Dims merged = {shape[0], shape[1]};
    std::vector<std::pair<int64_t, int64_t>> keep = {{0, shape[0]}, {0, shape[1]}};
    for (size_t i = 0; i < spatial; ++i) {
      merged.push_back(shape[2 + i] * stride[i]);
      keep.push_back({0, shape[2 + i] * stride[i] - (stride[i] - 1)});
    }
    xs = xs.Reshape(merged).Shrink(keep);
  }
  ConvOptions forward;
  forward.groups = groups;
  forward.dilation = dilation;
  forward.stride = {1};
  forward.padding.clear();
  for (size_t r = spatial; r-- > 0;) {
    int64_t span = (kernel[r] - 1) * dilation[r];
    forward.padding.push_back(span - pads[r].first);
    forward.padding.push_back(span - pads[r].second + out_pad[r]);
  }
  return xs.Conv2d(w.Flatten(0, 1), bias, forward);
}

namespace {

// The axes a pool of `kernel` slides over: the last kernel.size() of x's.
Dims PooledAxes(const Tensor& x, const Dims& kernel) {
  Dims axes;
  for (int64_t k = std::max<int64_t>(0, x.ndim() - static_cast<int64_t>(kernel.size())); k < x.ndim(); ++k) {
    axes.push_back(k);
  }
  return axes;
}

// The flat pads of a pooling (tinygrad's _resolve_pool_pads) and, with `ceil_mode`, each axis' after-pad
// grown so that the pooled size rounds up, but no window starts in the after-pad (tinygrad's
// _apply_ceil_mode).
absl::StatusOr<Dims> PoolPads(const Tensor& x, const Dims& kernel, const Dims& stride, const Dims& dilation,
                              const Dims& padding, bool ceil_mode) {
  UOPC_ASSIGN_OR_RETURN(Dims pads, ResolvePoolPads(padding, kernel.size()));
  if (!ceil_mode) return pads;
  const size_t nk = kernel.size();
  const Dims shape = x.Shape();
  const Dims s = tensor_internal::PerAxis(stride.empty() ? kernel : stride, nk),
             d = tensor_internal::PerAxis(dilation, nk);
  if (shape.size() < nk || s.size() != nk || d.size() != nk) {
    return absl::InvalidArgumentError(absl::StrCat("cannot pool ", TupleString(shape), " with kernel ",
                                                   TupleString(kernel), ", stride ", TupleString(s),
                                                   " and dilation ", TupleString(d)));
  }
  for (size_t j = 0; j < nk; ++j) {
    if (s[j] < 1 || d[j] < 1) return absl::InvalidArgumentError("stride and dilation must be >= 1");
    const int64_t size = shape[shape.size() - nk + j], span = d[j] * (kernel[j] - 1) + 1;
    // Flat pads list the last axis first.
    const int64_t before = pads[2 * (nk - 1 - j)];
    int64_t& after = pads[2 * (nk - 1 - j) + 1];
    const int64_t padded = size + before + after;
    const int64_t windows = tensor_internal::CeilDiv(padded - span, s[j]) + 1;
    after += s[j] * (windows - 1) + span - padded -
             std::max<int64_t>(s[j] * (windows - 1) - (before + size - 1), 0);
  }
  return pads;
}

Dims PooledAxes(size_t n) {
  Dims axes;
  for (int64_t i = -static_cast<int64_t>(n); i < 0; ++i) axes.push_back(i);
  return axes;
}

}  // namespace

Tensor Tensor::MaxPool2d(Dims kernel_size, Dims stride, Dims dilation, Dims padding, bool ceil_mode) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (auto symbolic = SymbolicSizeError(*this, "MaxPool2d", PooledAxes(*this, kernel_size))) return *symbolic;
  absl::StatusOr<Dims> pads = PoolPads(*this, kernel_size, stride, dilation, padding, ceil_mode);
  if (!pads.ok()) return Error("MaxPool2d", std::string(pads.status().message()));
  Tensor pooled = tensor_internal::Pool(FlatPad(*this, *pads, Scalar(DTypeMin(dtype()))), kernel_size,
                                        stride.empty() ? kernel_size : stride, dilation);
  return pooled.Max(PooledAxes(kernel_size.size()));
}

std::pair<Tensor, Tensor> Tensor::MaxPool2dWithIndices(Dims kernel_size, Dims stride, Dims dilation,
                                                       Dims padding, bool ceil_mode) const {
  auto failed = [](const Tensor& error) { return std::pair<Tensor, Tensor>{error, error}; };
  if (!ok()) return failed(*this);
  absl::StatusOr<Dims> pads = PoolPads(*this, kernel_size, stride, dilation, padding, ceil_mode);
  if (!pads.ok()) return failed(Error("MaxPool2d", std::string(pads.status().message())));
  const Dims s = stride.empty() ? kernel_size : stride;
  Tensor pooled =
      tensor_internal::Pool(FlatPad(*this, *pads, Scalar(DTypeMin(dtype()))), kernel_size, s, dilation);
  if (!pooled.ok()) return failed(pooled);
  const Dims axes = PooledAxes(kernel_size.size());
  // Positions counted down from the pooled size, so that the largest among the maxima is the first.
  const Dims shape = Shape();
  const Dims spatial(shape.end() - kernel_size.size(), shape.end());
  const int64_t positions = tensor_internal::NumElements(spatial);
  Tensor countdown = Arange(positions, 0, -1, std::nullopt, Device()).Reshape(spatial);
  Tensor is_max = pooled.Eq(pooled.Max(axes, true));
  Tensor pooled_countdown =
      is_max * tensor_internal::Pool(FlatPad(countdown, *pads, Scalar(DTypeMin(countdown.dtype()))),
                                     kernel_size, s, dilation);
  return {pooled.Max(axes), Scalar(positions) - pooled_countdown.Max(axes)};
}

Tensor Tensor::MaxUnpool2d(const Tensor& indices, Dims kernel_size, Dims stride, Dims dilation, Dims padding,
                           std::optional<Dims> output_size) const {
  UOPC_TENSOR_PROPAGATE(this, &indices);
  const Dims shape = Shape();
  if (shape.size() < 3) {
    return Error("MaxUnpool2d", "needs (batch, channels, *spatial) axes, got shape " + TupleString(shape));
  }
  if (!indices.dtype().is_int()) {
    return Error("MaxUnpool2d", "the indices must be integers, got " + indices.dtype().ToString());
  }
  const size_t nsp = shape.size() - 2;
  Dims out;
  if (output_size) {
    if (output_size->size() < nsp) {
      return Error("MaxUnpool2d", absl::StrCat("output_size ", TupleString(*output_size), " has fewer than ",
                                               nsp, " spatial sizes"));
    }
    out.assign(output_size->end() - nsp, output_size->end());
  } else {
    const Dims k = tensor_internal::PerAxis(kernel_size, nsp), d = tensor_internal::PerAxis(dilation, nsp),
               s = tensor_internal::PerAxis(stride.empty() ? kernel_size : stride, nsp);
    absl::StatusOr<Dims> pads = ResolvePoolPads(padding, nsp);
    if (!pads.ok()) return Error("MaxUnpool2d", std::string(pads.status().message()));
    if (k.size() != nsp || d.size() != nsp || s.size() != nsp) {
      return Error("MaxUnpool2d", absl::StrCat("kernel_size, stride and dilation need one value or ", nsp));
    }
    // The input size a pooling with these options maps to this size (flat pads list the last axis first).
    for (size_t j = 0; j < nsp; ++j) {
      const int64_t both = (*pads)[2 * (nsp - 1 - j)] + (*pads)[2 * (nsp - 1 - j) + 1];
      out.push_back((shape[2 + j] - 1) * s[j] - both + d[j] * (k[j] - 1) + 1);
    }
  }
  for (int64_t size : out) {
    if (size < 0) return Error("MaxUnpool2d", "the output size " + TupleString(out) + " is negative");
  }
  const int64_t positions = tensor_internal::NumElements(out);
  // tinygrad's _one_hot_along_dim(positions, 2) of the indices as (batch, channels, 1, pooled).
  Tensor one_hot = indices.Reshape({shape[0], shape[1], 1, -1})
                       .Eq(Arange(0, positions, 1, std::nullopt, indices.Device()).Reshape({positions, 1}));
  Dims result = {shape[0], shape[1]};
  result.insert(result.end(), out.begin(), out.end());
  return (one_hot * Reshape({shape[0], shape[1], 1, -1})).Sum(3).Reshape(result);
}

Tensor Tensor::AvgPool2d(Dims kernel_size, Dims stride, Dims dilation, Dims padding, bool count_include_pad,
                         bool ceil_mode) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (auto symbolic = SymbolicSizeError(*this, "AvgPool2d", PooledAxes(*this, kernel_size))) return *symbolic;
  absl::StatusOr<Dims> regular = ResolvePoolPads(padding, kernel_size.size());
  if (!regular.ok()) return FromError(regular.status());
  absl::StatusOr<Dims> pads = PoolPads(*this, kernel_size, stride, dilation, padding, ceil_mode);
  if (!pads.ok()) return Error("AvgPool2d", std::string(pads.status().message()));
  Dims s = stride.empty() ? kernel_size : stride;
  auto pool = [&](const Tensor& x, const Dims& flat_pads) {
    return tensor_internal::Pool(FlatPad(x, flat_pads), kernel_size, s, dilation);
  };
  const Dims axes = PooledAxes(kernel_size.size());
  if (!count_include_pad) return pool(*this, *pads).Sum(axes) / pool(OnesLike(), *pads).Sum(axes);
  if (!ceil_mode) return pool(*this, *pads).Mean(axes);
  // The padding counts, but not what ceil_mode added after it.
  Dims added(pads->size());
  for (size_t i = 0; i < added.size(); ++i) added[i] = (*pads)[i] - (*regular)[i];
  return pool(*this, *pads).Sum(axes) / pool(FlatPad(*this, *regular).OnesLike(), added).Sum(axes);
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

Tensor Tensor::Triu(int64_t diagonal) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (ndim() < 2) return Error("Triu", "needs at least 2 dimensions, got shape " + TupleString(Shape()));
  if (auto symbolic = SymbolicSizeError(*this, "Triu", {ndim() - 2, ndim() - 1})) return *symbolic;
  Dims s = Shape();
  return Tri(s[s.size() - 2], s.back(), diagonal, Device()).Where(*this, 0).Cast(dtype());
}

Tensor Tensor::Tril(int64_t diagonal) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (ndim() < 2) return Error("Tril", "needs at least 2 dimensions, got shape " + TupleString(Shape()));
  if (auto symbolic = SymbolicSizeError(*this, "Tril", {ndim() - 2, ndim() - 1})) return *symbolic;
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

// ---- image_conv2d / image_dot (tinygrad's, as it builds them without IMAGE>=2 image casts) ----

Tensor Tensor::ImageConv2d(const Tensor& weight, const Tensor* bias, const ConvOptions& o,
                           std::optional<DType> dtype) const {
  UOPC_TENSOR_PROPAGATE(this, &weight);
  if (bias != nullptr) UOPC_TENSOR_PROPAGATE(bias);
  const Dims xs = Shape(), ws = weight.Shape();
  const int64_t groups = o.groups;
  if (xs.size() != 4 || ws.size() != 4 || groups < 1 || ws[0] % groups != 0 || groups * ws[1] != xs[1]) {
    return Error("ImageConv2d",
                 absl::StrCat("input shape ", TupleString(xs), " does not match the weight shape ",
                              TupleString(ws), " with groups=", groups, " (both must be 4-D)"));
  }
  const int64_t bs = xs[0], iy = xs[2], ix = xs[3], H = ws[2], W = ws[3];
  int64_t cout = ws[0], cin = ws[1], rcout = cout / groups;
  Tensor x = *this, w = weight.Reshape({groups, rcout, cin, H, W});
  // Input channels padded to a multiple of 4 (unless depthwise over groups of 4).
  if (cin % 4 != 0 && !(cin == 1 && groups % 4 == 0)) {
    const int64_t added = 4 - cin % 4;
    x = x.Reshape({bs, groups, cin, iy, ix}).Pad({{0, 0}, {0, 0}, {0, added}, {0, 0}, {0, 0}});
    w = w.Pad({{0, 0}, {0, 0}, {0, added}, {0, 0}, {0, 0}});
    cin += added;
    x = x.Reshape({bs, groups * cin, iy, ix});
  }
  // Output channels per group likewise, cut off at the end.
  int64_t added_out = 0;
  if (rcout % 4 != 0 && !(rcout == 1 && groups % 4 == 0)) {
    added_out = 4 - rcout % 4;
    rcout += added_out;
    cout = groups * rcout;
    w = w.Pad({{0, 0}, {0, added_out}, {0, 0}, {0, 0}, {0, 0}});
  }
  // The packed layouts the images would have.
  x = x.Permute({0, 2, 3, 1});
  const bool cin_last = iy == 1 && ix == 1;
  if (cin == 1) {
    w = w.Reshape({cout / 4, 4, H, W}).Permute({0, 2, 3, 1});
  } else if (cin_last) {
    w = w.Reshape({cout / 4, 4, cin / 4, 4, H, W}).Permute({0, 4, 2, 5, 1, 3});
  } else {
    w = w.Reshape({cout / 4, 4, cin / 4, 4, H, W}).Permute({0, 4, 2, 5, 3, 1});
  }
  x = x.Contiguous();
  w = w.Contiguous();
  const int64_t rcin_hi = cin >= 4 ? cin / 4 : 1, rcin_lo = cin >= 4 ? 4 : 1;
  const Dims cout_expand = {cin == 1 ? groups / 4 : groups, cin == 1 ? 4 : 1, rcout >= 4 ? rcout / 4 : 1,
                            rcout >= 4 ? 4 : 1};
  x = x.Reshape({bs, iy, ix, groups, rcin_hi, rcin_lo});
  if (cin_last) {
    w = w.Reshape({cout / 4, H, rcin_hi, W, 4, rcin_lo});
  } else {
    w = w.Reshape({cout / 4, H, rcin_hi, W, rcin_lo, 4}).Permute({0, 1, 2, 3, 5, 4});
  }
  absl::StatusOr<Dims> pads = ResolvePoolPads(o.padding, 2);
  if (!pads.ok()) return FromError(pads.status());
  x = tensor_internal::Pool(FlatPad(x.Permute({0, 3, 4, 5, 1, 2}), *pads), {H, W}, o.stride, o.dilation);
  UOPC_TENSOR_PROPAGATE(&x, &w);
  const int64_t oy = x.Shape()[4], ox = x.Shape()[5];
  x = x.Permute({0, 4, 5, 1, 2, 3, 6, 7})
          .Reshape({bs, oy, ox, cout_expand[0], cout_expand[1], 1, 1, rcin_hi, rcin_lo, H, W});
  w = w.Permute({0, 4, 2, 5, 1, 3})
          .Reshape({1, 1, 1, cout_expand[0], cout_expand[1], cout_expand[2], cout_expand[3], rcin_hi, rcin_lo,
                    H, W});
  Tensor ret = (x * w).Cast(dtypes::kFloat32).Sum(Axes({-4, -3, -2, -1}), false, dtype);
  if (added_out != 0) {
    ret = ret.Reshape({bs, oy, ox, groups, rcout})
              .Index({Slice{}, Slice{}, Slice{}, Slice{}, Slice{std::nullopt, -added_out, std::nullopt}});
    cout = groups * (rcout - added_out);
  }
  ret = ret.Reshape({bs, oy, ox, cout}).Permute({0, 3, 1, 2});
  if (bias == nullptr) return ret;
  return ret.Add(bias->Reshape({1, -1, 1, 1}));
}

Tensor Tensor::ImageDot(const Tensor& w, std::optional<DType> dtype) const {
  UOPC_TENSOR_PROPAGATE(this, &w);
  const Dims xs = Shape(), ws = w.Shape();
  const int64_t dx = xs.size(), dw = ws.size();
  if (dx == 0 || dw == 0) {
    return Error("ImageDot",
                 absl::StrCat("both tensors need to be at least 1D, got ", dx, "D and ", dw, "D"));
  }
  if (xs.back() != ws[dw - std::min<int64_t>(dw, 2)]) {
    return Error("ImageDot", absl::StrCat("cannot image_dot ", TupleString(xs), " and ", TupleString(ws)));
  }
  // A 1x1 convolution: (m, k) @ (k, n) is (1, k, m, 1) convolved with (n, k, 1, 1).
  auto product = [](const Dims& s, int64_t end) {
    int64_t p = 1;
    for (int64_t i = 0; i < end; ++i) p *= s[i];
    return p;
  };
  const int64_t bs = product(xs, std::max<int64_t>(dx - 2, 0)),
                groups = product(ws, std::max<int64_t>(dw - 2, 0));
  const int64_t cin = ws[std::max<int64_t>(dw - 2, 0)], cout = ws[dw - 1];
  if (dw < 2 || groups < 1 || bs % groups != 0) {
    return Error("ImageDot", absl::StrCat("cannot image_dot ", TupleString(xs), " and ", TupleString(ws)));
  }
  Dims out_shape;
  if (dx > 1) {
    out_shape.assign(xs.begin(), xs.end() - 2);
    out_shape.insert(out_shape.end(), {cout, -1});
  } else {
    out_shape = {cout};
  }
  Tensor cx = Transpose(dx - 1, dx - 2).Reshape({bs / groups, groups * cin, -1, 1});
  Tensor cw = w.Transpose(dw - 1, dw - 2).Reshape({groups * cout, cin, 1, 1});
  ConvOptions options;
  options.groups = groups;
  return cx.ImageConv2d(cw, nullptr, options, dtype).Reshape(out_shape).Transpose(dx - 1, dx - 2);
}

}  // namespace uopc
