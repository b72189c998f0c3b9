// Layers with weights: tinygrad v0.10.3's nn (Linear, Conv1d, Conv2d, ConvTranspose1d, ConvTranspose2d,
// BatchNorm, LayerNorm, LayerNorm2d, GroupNorm, InstanceNorm, RMSNorm, Embedding, LSTMCell), their default
// initialisations and the initialisers behind them.
//
// Each layer holds its tensors as public members named as tinygrad names them (`weight`, `bias`,
// `running_mean`, ...), so the state dict of a layer has tinygrad's keys. Initial values come from
// Tensor::Rand in the order tinygrad draws them, so after `Tensor::ManualSeed(s)` a layer starts with
// tinygrad's numbers. A layer called on a tensor of the wrong shape returns an errored Tensor (see tensor.h),
// never aborts.
#ifndef UOPC_NN_LAYERS_H_
#define UOPC_NN_LAYERS_H_

#include <cstdint>
#include <optional>
#include <utility>

#include "nn/module.h"
#include "tensor/tensor.h"

namespace uopc::nn {

// ---- initialisers (tinygrad's Tensor.uniform family) ----

// U(-1, 1) scaled by sqrt(6 / (shape[0] + prod(shape[1:]))) (tinygrad's glorot_uniform).
Tensor GlorotUniform(const Dims& shape, DType dtype = dtypes::kFloat32, const std::string& device = "");
// U(-bound, bound), bound = sqrt(3) * sqrt(2 / (1 + a^2)) / sqrt(prod(shape[1:])) (tinygrad's
// kaiming_uniform).
Tensor KaimingUniform(const Dims& shape, double a = 0.01, DType dtype = dtypes::kFloat32,
                      const std::string& device = "");
// U(-1, 1) scaled by prod(shape)^-0.5 (tinygrad's scaled_uniform).
Tensor ScaledUniform(const Dims& shape, DType dtype = dtypes::kFloat32, const std::string& device = "");

// ---- layers ----

// y = x W^T + b, W: (out, in) and b: (out) drawn from U(-1/sqrt(in), 1/sqrt(in)).
class Linear : public Module {
 public:
  Linear(int64_t in_features, int64_t out_features, bool bias = true);
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;

  Tensor weight;
  std::optional<Tensor> bias;
};

// A 2-D (or N-D: the kernel has one size per spatial axis) convolution. Weight (out, in/groups, *kernel) and
// bias (out) from U(-s, s), s = 1/sqrt(in * prod(kernel)).
struct Conv2dOptions {
  Dims stride = {1};
  Dims padding = {0};  // as ConvOptions::padding
  Dims dilation = {1};
  int64_t groups = 1;
  bool bias = true;
  // tinygrad's padding='same' (stride 1 only): pads so the output keeps the input's spatial size.
  bool same_padding = false;
};
class Conv2d : public Module {
 public:
  // `kernel_size`: one size (square, 2-D) or one per spatial axis.
  Conv2d(int64_t in_channels, int64_t out_channels, Dims kernel_size, const Conv2dOptions& options = {});
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;
  ConvOptions conv_options() const;

  Dims kernel_size;
  Conv2dOptions options;
  Tensor weight;
  std::optional<Tensor> bias;

 private:
  friend Conv2d Conv1d(int64_t, int64_t, int64_t, const Conv2dOptions&);
  struct ExactKernel {};
  // `kernel_size` as given, one entry per spatial axis (a single entry is a 1-D kernel).
  Conv2d(int64_t in_channels, int64_t out_channels, Dims kernel_size, const Conv2dOptions& options,
         ExactKernel);
};

// tinygrad's Conv1d: a Conv2d with the 1-D kernel (kernel_size), so weight (out, in/groups, kernel_size), the
// same draws, and a (N, C, L) input.
Conv2d Conv1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
              const Conv2dOptions& options = {});

// The transposed convolution. Weight (in, out/groups, *kernel) from U(-s, s), s = 1/sqrt(in * prod(kernel));
// bias (out) as Conv2d's.
class ConvTranspose2d : public Module {
 public:
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Dims kernel_size,
                  const Conv2dOptions& options = {}, Dims output_padding = {0});
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;

  Dims kernel_size;
  Conv2dOptions options;
  Dims output_padding;
  Tensor weight;
  std::optional<Tensor> bias;

 private:
  friend ConvTranspose2d ConvTranspose1d(int64_t, int64_t, int64_t, const Conv2dOptions&, int64_t);
  struct ExactKernel {};
  ConvTranspose2d(int64_t in_channels, int64_t out_channels, Dims kernel_size, const Conv2dOptions& options,
                  Dims output_padding, ExactKernel);
};

// tinygrad's ConvTranspose1d: a ConvTranspose2d with the 1-D kernel (kernel_size), for a (N, C, L) input.
ConvTranspose2d ConvTranspose1d(int64_t in_channels, int64_t out_channels, int64_t kernel_size,
                                const Conv2dOptions& options = {}, int64_t output_padding = 0);

// Batch normalization over axis 1 of a (N, C, ...) input (tinygrad's BatchNorm, also BatchNorm2d/3d). In
// training mode (Tensor::Train) it normalizes with the batch's mean and biased variance and updates
// running_mean, running_var (unbiased) and num_batches_tracked in place; otherwise it uses the running
// statistics. With `sync_communicator` ("MPI"), training statistics are those of the batch of every process
// together (PyTorch's SyncBatchNorm): the sums all-reduced (Tensor::AllReduce), so data-parallel training
// normalizes as one process with the whole batch does.
struct BatchNormOptions {
  double eps = 1e-5;
  bool affine = true;
  bool track_running_stats = true;
  double momentum = 0.1;
  std::string sync_communicator;
};
class BatchNorm : public Module {
 public:
  explicit BatchNorm(int64_t size, const BatchNormOptions& options = {});
  // Not const: in training mode it assigns the running statistics.
  Tensor operator()(const Tensor& x);
  void CollectState(StateCollector& state) const override;

  BatchNormOptions options;
  std::optional<Tensor> weight, bias;
  std::optional<Tensor> running_mean, running_var;
  Tensor num_batches_tracked;
};

// Normalizes the last normalized_shape.size() axes; weight ones, bias zeros.
class LayerNorm : public Module {
 public:
  explicit LayerNorm(Dims normalized_shape, double eps = 1e-5, bool elementwise_affine = true);
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;

  Dims normalized_shape;
  double eps;
  std::optional<Tensor> weight, bias;
};

// LayerNorm over the channels of an (N, C, H, W) input: normalized_shape (C,), applied with the channels
// moved last and moved back.
class LayerNorm2d : public LayerNorm {
 public:
  explicit LayerNorm2d(int64_t channels, double eps = 1e-5, bool elementwise_affine = true)
      : LayerNorm({channels}, eps, elementwise_affine) {}
  Tensor operator()(const Tensor& x) const;
};

// Normalizes each (sample, channel) of an (N, C, ...) input over its spatial axes; weight ones, bias zeros
// (C,).
class InstanceNorm : public Module {
 public:
  explicit InstanceNorm(int64_t num_features, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;

  int64_t num_features;
  double eps;
  std::optional<Tensor> weight, bias;
};

// Normalizes each of num_groups groups of channels (axis 1) over the group's channels and spatial axes.
class GroupNorm : public Module {
 public:
  GroupNorm(int64_t num_groups, int64_t num_channels, double eps = 1e-5, bool affine = true);
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;

  int64_t num_groups, num_channels;
  double eps;
  std::optional<Tensor> weight, bias;
};

// x * rsqrt(mean(x^2, last axis) + eps) * weight, computed in float32; weight ones.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-6);
  Tensor operator()(const Tensor& x) const;
  void CollectState(StateCollector& state) const override;

  double eps;
  Tensor weight;
};

// A lookup table of vocab_size rows of embed_size (weight from GlorotUniform); an int tensor of indices of
// any shape gives shape + (embed_size). tinygrad's arange-compare-sum form, so it has a gradient.
class Embedding : public Module {
 public:
  Embedding(int64_t vocab_size, int64_t embed_size);
  Tensor operator()(const Tensor& idx) const;
  void CollectState(StateCollector& state) const override;

  int64_t vocab_size, embed_size;
  Tensor weight;

 private:
  mutable std::optional<Tensor> arange_;  // made on first use on the weight's device, as tinygrad
};

// One LSTM step: gates (i, f, g, o) = x W_ih^T + b_ih + h W_hh^T + b_hh; c' = sigmoid(f) c + sigmoid(i)
// tanh(g), h' = sigmoid(o) tanh(c'). Weights (4*hidden, input) and (4*hidden, hidden) from U(-s, s),
// s = 1/sqrt(hidden), in that order; biases zeros.
class LSTMCell : public Module {
 public:
  LSTMCell(int64_t input_size, int64_t hidden_size, bool bias = true);
  // x: (batch, input_size). Without `hc` the state starts at zeros. Returns (h', c'), both contiguous; on bad
  // input both are the same errored Tensor.
  std::pair<Tensor, Tensor> operator()(
      const Tensor& x, const std::optional<std::pair<Tensor, Tensor>>& hc = std::nullopt) const;
  void CollectState(StateCollector& state) const override;

  Tensor weight_ih, weight_hh;
  std::optional<Tensor> bias_ih, bias_hh;
};

}  // namespace uopc::nn

#endif  // UOPC_NN_LAYERS_H_
