// tinygrad's nn layers (nn/__init__.py) and initialisers (Tensor.glorot_uniform and kin) on the Tensor API.
#include "nn/layers.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/collective.h"
#include "uop/util.h"

namespace uopc::nn {
namespace {

int64_t Product(Dims::const_iterator begin, Dims::const_iterator end) {
  int64_t p = 1;
  for (auto it = begin; it != end; ++it) p *= *it;
  return p;
}

Tensor LayerError(absl::string_view layer, absl::string_view message) {
  return Tensor::FromError(absl::InvalidArgumentError(absl::StrCat(layer, ": ", message)));
}

// One value per axis from one value or one per axis (tinygrad's make_tuple).
Dims PerAxis(const Dims& values, size_t n) {
  if (values.size() == 1) return Dims(n, values[0]);
  return values;
}

// (1, -1, 1, ..., 1) for an input of `ndim` axes: a per-channel tensor broadcast over axis 1.
Dims ChannelShape(int64_t ndim) {
  Dims shape(std::max<int64_t>(ndim, 2), 1);
  shape[1] = -1;
  return shape;
}

// An (N, C, *spatial) input for a kernel of `spatial_axes` axes (tinygrad asserts the ranks match).
absl::Status CheckConvInput(absl::string_view layer, const Tensor& x, size_t spatial_axes) {
  const Dims shape = x.Shape();
  if (shape.size() != spatial_axes + 2) {
    return absl::InvalidArgumentError(absl::StrCat(layer, ": a kernel of ", spatial_axes,
                                                   " spatial axes needs an (N, C, ...) input of ",
                                                   spatial_axes + 2, " axes, not ", TupleString(shape)));
  }
  return absl::OkStatus();
}

}  // namespace

Tensor GlorotUniform(const Dims& shape, DType dtype, const std::string& device) {
  if (shape.empty()) return LayerError("GlorotUniform", "the shape needs at least one axis");
  double fan = static_cast<double>(shape[0] + Product(shape.begin() + 1, shape.end()));
  return Tensor::Uniform(shape, -1.0, 1.0, dtype, device) * std::sqrt(6.0 / fan);
}

Tensor KaimingUniform(const Dims& shape, double a, DType dtype, const std::string& device) {
  if (shape.empty()) return LayerError("KaimingUniform", "the shape needs at least one axis");
  double bound = std::sqrt(3.0) * std::sqrt(2.0 / (1 + a * a)) /
                 std::sqrt(static_cast<double>(Product(shape.begin() + 1, shape.end())));
  return Tensor::Uniform(shape, -bound, bound, dtype, device);
}

Tensor ScaledUniform(const Dims& shape, DType dtype, const std::string& device) {
  return Tensor::Uniform(shape, -1.0, 1.0, dtype, device) *
         std::pow(static_cast<double>(Product(shape.begin(), shape.end())), -0.5);
}

// ---- Linear ----

Linear::Linear(int64_t in_features, int64_t out_features, bool has_bias) {
  double bound = 1.0 / std::sqrt(static_cast<double>(in_features));
  weight = Tensor::Uniform({out_features, in_features}, -bound, bound);
  if (has_bias) bias = Tensor::Uniform({out_features}, -bound, bound);
}

Tensor Linear::operator()(const Tensor& x) const {
  Tensor wt = weight.Transpose();
  return x.Linear(wt, bias ? &*bias : nullptr);
}

void Linear::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
}

// ---- Conv2d ----

namespace {

Dims KernelDims(Dims kernel_size) {
  if (kernel_size.size() == 1) return {kernel_size[0], kernel_size[0]};
  return kernel_size;
}

}  // namespace

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Dims kernel, const Conv2dOptions& opts)
    : Conv2d(in_channels, out_channels, KernelDims(std::move(kernel)), opts, ExactKernel{}) {}

Conv2d::Conv2d(int64_t in_channels, int64_t out_channels, Dims kernel, const Conv2dOptions& opts, ExactKernel)
    : kernel_size(std::move(kernel)), options(opts) {
  double scale =
      1.0 / std::sqrt(static_cast<double>(in_channels * Product(kernel_size.begin(), kernel_size.end())));
  Dims wshape = {out_channels, options.groups > 0 ? in_channels / options.groups : in_channels};
  wshape.insert(wshape.end(), kernel_size.begin(), kernel_size.end());
  weight = Tensor::Uniform(wshape, -scale, scale);
  if (options.bias) bias = Tensor::Uniform({out_channels}, -scale, scale);
}

ConvOptions Conv2d::conv_options() const {
  ConvOptions c;
  c.groups = options.groups;
  c.stride = options.stride;
  c.dilation = options.dilation;
  c.padding = options.padding;
  if (options.same_padding) {
    // Per axis, last first: (d*(k-1)//2, d*(k-1) - d*(k-1)//2).
    Dims dilation = PerAxis(options.dilation, kernel_size.size());
    c.padding.clear();
    for (size_t r = kernel_size.size(); r-- > 0;) {
      int64_t span = (r < dilation.size() ? dilation[r] : 1) * (kernel_size[r] - 1);
      c.padding.push_back(span / 2);
      c.padding.push_back(span - span / 2);
    }
  }
  return c;
}

Tensor Conv2d::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  if (absl::Status rank = CheckConvInput("Conv2d", x, kernel_size.size()); !rank.ok()) {
    return Tensor::FromError(rank);
  }
  if (options.same_padding) {
    for (int64_t s : options.stride) {
      if (s != 1) return LayerError("Conv2d", "same padding is not supported for strided convolutions");
    }
  }
  return x.Conv2d(weight, bias ? &*bias : nullptr, conv_options());
}

void Conv2d::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
}

Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size, const Conv2dOptions& options) {
  return Conv2d(in_channels, out_channels, {kernel_size}, options, Conv2d::ExactKernel{});
}

// ---- ConvTranspose2d ----

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, Dims kernel,
                                 const Conv2dOptions& opts, Dims output_pad)
    : ConvTranspose2d(in_channels, out_channels, KernelDims(std::move(kernel)), opts, std::move(output_pad),
                      ExactKernel{}) {}

ConvTranspose2d::ConvTranspose2d(int64_t in_channels, int64_t out_channels, Dims kernel,
                                 const Conv2dOptions& opts, Dims output_pad, ExactKernel)
    : kernel_size(std::move(kernel)), options(opts), output_padding(std::move(output_pad)) {
  // tinygrad builds the Conv2d first (drawing its weight and bias), then draws the transposed weight.
  double scale =
      1.0 / std::sqrt(static_cast<double>(in_channels * Product(kernel_size.begin(), kernel_size.end())));
  int64_t groups = options.groups > 0 ? options.groups : 1;
  Dims conv_shape = {out_channels, in_channels / groups};
  conv_shape.insert(conv_shape.end(), kernel_size.begin(), kernel_size.end());
  Tensor unused = Tensor::Uniform(conv_shape, -scale, scale);
  if (options.bias) bias = Tensor::Uniform({out_channels}, -scale, scale);
  Dims wshape = {in_channels, out_channels / groups};
  wshape.insert(wshape.end(), kernel_size.begin(), kernel_size.end());
  weight = Tensor::Uniform(wshape, -scale, scale);
}

Tensor ConvTranspose2d::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  if (absl::Status rank = CheckConvInput("ConvTranspose2d", x, kernel_size.size()); !rank.ok()) {
    return Tensor::FromError(rank);
  }
  ConvOptions c;
  c.groups = options.groups;
  c.stride = options.stride;
  c.dilation = options.dilation;
  c.padding = options.padding;
  return x.ConvTranspose2d(weight, bias ? &*bias : nullptr, c, output_padding);
}

void ConvTranspose2d::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
}

ConvTranspose2d ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                const Conv2dOptions& options, int64_t output_padding) {
  return ConvTranspose2d(in_channels, out_channels, {kernel_size}, options, {output_padding},
                         ConvTranspose2d::ExactKernel{});
}

// ---- BatchNorm ----

BatchNorm::BatchNorm(int64_t size, const BatchNormOptions& opts) : options(opts) {
  if (options.affine) {
    weight = Tensor::Ones({size});
    bias = Tensor::Zeros({size});
  }
  // tinygrad uses long where the device supports it; every uopc device does.
  num_batches_tracked = Tensor::Zeros({1}, dtypes::kInt64).RequiresGrad(false);
  if (options.track_running_stats) {
    running_mean = Tensor::Zeros({size}).RequiresGrad(false);
    running_var = Tensor::Ones({size}).RequiresGrad(false);
  }
}

Tensor BatchNorm::operator()(const Tensor& x) {
  if (!x.ok()) return x;
  if (x.ndim() < 2) return LayerError("BatchNorm", "the input needs (N, C, ...) axes");
  const Dims shape = x.Shape();
  const Dims mask = ChannelShape(x.ndim());
  Tensor mean, var;
  const bool use_running = options.track_running_stats && !Tensor::Training();
  const bool synced = !options.sync_communicator.empty() && Tensor::Training();
  int64_t processes = 1;
  if (synced) {
    absl::StatusOr<Communicator*> communicator = GetCommunicator(options.sync_communicator);
    if (!communicator.ok()) return Tensor::FromError(communicator.status());
    processes = (*communicator)->size();
  }
  if (use_running) {
    if (running_mean->Shape() != Dims{shape[1]}) {
      return LayerError("BatchNorm", absl::StrCat("the input has ", shape[1], " channels, the layer ",
                                                  running_mean->Shape()[0]));
    }
    mean = *running_mean;
    var = running_var->Reshape(mask).Expand(shape);
  } else {
    Dims reduce_axes;
    for (int64_t a = 0; a < x.ndim(); ++a) {
      if (a != 1) reduce_axes.push_back(a);
    }
    // The mean over the batch, or over every process's batch: the sums all-reduced, over all of their count.
    const double count = static_cast<double>(x.numel() / shape[1] * processes);
    auto batch_mean = [&](const Tensor& t) {
      return synced ? t.Sum(reduce_axes).AllReduce(Ops::ADD, options.sync_communicator) * (1.0 / count)
                    : t.Mean(reduce_axes);
    };
    mean = batch_mean(x);
    // The variance does not back-propagate into the mean (d var / d mean = 0).
    Tensor centered = x - mean.Detach().Reshape(mask);
    var = batch_mean(centered * centered);
  }
  if (options.track_running_stats && Tensor::Training()) {
    const double n = static_cast<double>(x.numel() * processes);
    Tensor new_mean = (1 - options.momentum) * *running_mean + options.momentum * mean.Detach();
    Tensor new_var = (1 - options.momentum) * *running_var +
                     options.momentum * n / (n - static_cast<double>(shape[1])) * var.Detach();
    Tensor assigned_mean = running_mean->Assign(new_mean);
    if (!assigned_mean.ok()) return assigned_mean;
    Tensor assigned_var = running_var->Assign(new_var);
    if (!assigned_var.ok()) return assigned_var;
    Tensor counted = num_batches_tracked.Assign(num_batches_tracked + 1);
    if (!counted.ok()) return counted;
  }
  Tensor invstd = var.Add(options.eps).Rsqrt();
  return x.Batchnorm(weight ? &*weight : nullptr, bias ? &*bias : nullptr, mean, invstd);
}

void BatchNorm::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
  state.Add("num_batches_tracked", num_batches_tracked);
  state.Add("running_mean", running_mean);
  state.Add("running_var", running_var);
}

// ---- LayerNorm ----

LayerNorm::LayerNorm(Dims shape, double eps_value, bool elementwise_affine)
    : normalized_shape(std::move(shape)), eps(eps_value) {
  if (elementwise_affine) {
    weight = Tensor::Ones(normalized_shape);
    bias = Tensor::Zeros(normalized_shape);
  }
}

Tensor LayerNorm::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  const Dims shape = x.Shape();
  const size_t n = normalized_shape.size();
  if (shape.size() < n || !std::equal(normalized_shape.begin(), normalized_shape.end(), shape.end() - n)) {
    return LayerError("LayerNorm", absl::StrCat("the last axes of ", TupleString(shape), " must be ",
                                                TupleString(normalized_shape)));
  }
  Dims axes;
  for (size_t i = 0; i < n; ++i) axes.push_back(-1 - static_cast<int64_t>(i));
  Tensor y = x.Layernorm(axes, eps);
  if (!weight) return y;
  return y * *weight + *bias;
}

void LayerNorm::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
}

// ---- LayerNorm2d ----

Tensor LayerNorm2d::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  if (x.ndim() != 4) {
    return LayerError("LayerNorm2d",
                      absl::StrCat("the input needs (N, C, H, W) axes, not ", TupleString(x.Shape())));
  }
  if (x.Shape()[1] != normalized_shape[0]) {
    return LayerError("LayerNorm2d", absl::StrCat("the input has ", x.Shape()[1], " channels, the layer ",
                                                  normalized_shape[0]));
  }
  return LayerNorm::operator()(x.Permute({0, 2, 3, 1})).Permute({0, 3, 1, 2});
}

// ---- InstanceNorm ----

InstanceNorm::InstanceNorm(int64_t features, double eps_value, bool affine)
    : num_features(features), eps(eps_value) {
  if (affine) {
    weight = Tensor::Ones({features});
    bias = Tensor::Zeros({features});
  }
}

Tensor InstanceNorm::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  if (x.ndim() < 2) return LayerError("InstanceNorm", "the input needs (N, C, ...) axes");
  const Dims shape = x.Shape();
  if (shape[1] != num_features) {
    return LayerError("InstanceNorm",
                      absl::StrCat("the input has ", shape[1], " channels, the layer ", num_features));
  }
  Tensor y = x.Reshape({shape[0], num_features, -1}).Layernorm(-1, eps).Reshape(shape);
  if (!weight) return y;
  const Dims mask = ChannelShape(x.ndim());
  return y * weight->Reshape(mask) + bias->Reshape(mask);
}

void InstanceNorm::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
}

// ---- GroupNorm ----

GroupNorm::GroupNorm(int64_t groups, int64_t channels, double eps_value, bool affine)
    : num_groups(groups), num_channels(channels), eps(eps_value) {
  if (affine) {
    weight = Tensor::Ones({channels});
    bias = Tensor::Zeros({channels});
  }
}

Tensor GroupNorm::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  if (x.ndim() < 2) return LayerError("GroupNorm", "the input needs (N, C, ...) axes");
  const Dims shape = x.Shape();
  Tensor y = x.Reshape({shape[0], num_groups, -1}).Layernorm(-1, eps).Reshape(shape);
  if (!weight) return y;
  const Dims mask = ChannelShape(x.ndim());
  return y * weight->Reshape(mask) + bias->Reshape(mask);
}

void GroupNorm::CollectState(StateCollector& state) const {
  state.Add("weight", weight);
  state.Add("bias", bias);
}

// ---- RMSNorm ----

RMSNorm::RMSNorm(int64_t dim, double eps_value) : eps(eps_value), weight(Tensor::Ones({dim})) {}

Tensor RMSNorm::operator()(const Tensor& x) const {
  if (!x.ok()) return x;
  Tensor f = x.Float();
  Tensor normed = f * (f.Square().Mean(-1, true) + eps).Rsqrt();
  return normed.Cast(x.dtype()) * weight;
}

void RMSNorm::CollectState(StateCollector& state) const { state.Add("weight", weight); }

// ---- Embedding ----

Embedding::Embedding(int64_t vocab, int64_t embed)
    : vocab_size(vocab), embed_size(embed), weight(GlorotUniform({vocab, embed})) {}

Tensor Embedding::operator()(const Tensor& idx) const {
  if (!idx.ok()) return idx;
  if (!arange_) {
    arange_ =
        Tensor::Arange(0, vocab_size, 1, std::nullopt, weight.Device()).RequiresGrad(false).Unsqueeze(-1);
  }
  Dims big = idx.Shape();
  Dims idx_shape = big;
  idx_shape.push_back(1);
  idx_shape.push_back(1);
  big.push_back(vocab_size);
  big.push_back(embed_size);
  Tensor hit = arange_->Expand(big).Eq(idx.Reshape(idx_shape).Expand(big));
  Tensor vals = weight.Expand(big);
  return hit.Mul(vals).Sum(-2, false, vals.dtype());
}

void Embedding::CollectState(StateCollector& state) const { state.Add("weight", weight); }

// ---- LSTMCell ----

LSTMCell::LSTMCell(int64_t input_size, int64_t hidden_size, bool has_bias) {
  double bound = 1.0 / std::sqrt(static_cast<double>(hidden_size));
  weight_ih = Tensor::Uniform({hidden_size * 4, input_size}, -bound, bound);
  weight_hh = Tensor::Uniform({hidden_size * 4, hidden_size}, -bound, bound);
  if (has_bias) {
    bias_ih = Tensor::Zeros({hidden_size * 4});
    bias_hh = Tensor::Zeros({hidden_size * 4});
  }
}

std::pair<Tensor, Tensor> LSTMCell::operator()(const Tensor& x,
                                               const std::optional<std::pair<Tensor, Tensor>>& hc) const {
  auto failed = [](const Tensor& error) { return std::make_pair(error, error); };
  if (!x.ok()) return failed(x);
  const int64_t hidden = weight_hh.Shape()[1];
  if (x.ndim() != 2 || x.Shape()[1] != weight_ih.Shape()[1]) {
    return failed(LayerError("LSTMCell", absl::StrCat("the input must be (batch, ", weight_ih.Shape()[1],
                                                      "), not ", TupleString(x.Shape()))));
  }
  // Without a state, h and c are one zeros tensor, as tinygrad's.
  Tensor zeros = hc ? Tensor() : Tensor::Zeros({x.Shape()[0], hidden}, x.dtype(), x.Device());
  const Tensor& h = hc ? hc->first : zeros;
  const Tensor& c = hc ? hc->second : zeros;
  for (const Tensor* state : {&h, &c}) {
    if (!state->ok()) return failed(*state);
    if (state->Shape() != Dims{x.Shape()[0], hidden}) {
      return failed(LayerError("LSTMCell", absl::StrCat("the state must be (", x.Shape()[0], ", ", hidden,
                                                        "), not ", TupleString(state->Shape()))));
    }
  }
  Tensor wih = weight_ih.Transpose(), whh = weight_hh.Transpose();
  Tensor gates = x.Linear(wih, bias_ih ? &*bias_ih : nullptr) + h.Linear(whh, bias_hh ? &*bias_hh : nullptr);
  if (!gates.ok()) return failed(gates);
  std::vector<Tensor> chunks = gates.Chunk(4, 1);  // 4 * hidden columns: four equal pieces
  Tensor input_gate = chunks[0].Sigmoid(), forget_gate = chunks[1].Sigmoid(), cell_gate = chunks[2].Tanh(),
         output_gate = chunks[3].Sigmoid();
  Tensor new_c = forget_gate * c + input_gate * cell_gate;
  Tensor new_h = output_gate * new_c.Tanh();
  return {new_h.Contiguous(), new_c.Contiguous()};
}

void LSTMCell::CollectState(StateCollector& state) const {
  state.Add("weight_ih", weight_ih);
  state.Add("weight_hh", weight_hh);
  state.Add("bias_ih", bias_ih);
  state.Add("bias_hh", bias_hh);
}

}  // namespace uopc::nn
