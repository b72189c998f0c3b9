// ResNet-50 as tinygrad's compile benchmark builds it (test/external/external_benchmark_schedule.py with
// extra/models/resnet.py): torchvision's layout (a 7x7 stem, max pool, 16 bottleneck blocks in four stages
// of 3, 4, 6 and 3, stride in the 3x3 convolution, global average pool, Linear), batch norm in its eval form
// over running statistics, every parameter `Tensor::Empty` (the benchmark replaces each with Tensor.empty).
//
// It is built from Tensor ops directly: each layer is a small struct holding its parameters with the call
// tinygrad's nn module makes (nn.Conv2d, nn.BatchNorm2d, nn.Linear), so moving to nn modules changes the
// structs, not the model.
//
//   Resnet50 model = Resnet50::WithEmptyWeights();
//   Tensor logits = model.Forward(Tensor::Empty({64, 3, 224, 224}));   // 64x1000, unrealized
//   ASSIGN_OR_RETURN(Schedule s, CreateSchedule(UOp::Sink({logits.uop()})));
#ifndef UOPC_TENSOR_TESTING_RESNET50_H_
#define UOPC_TENSOR_TESTING_RESNET50_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace uopc {

// nn.Conv2d without bias: weight (out, in, k, k).
struct ResnetConv {
  Tensor weight;
  int64_t stride = 1;
  int64_t padding = 0;
  Tensor operator()(const Tensor& x) const;
};

// nn.BatchNorm2d in eval mode: (x - running_mean) * weight * rsqrt(running_var + eps) + bias, with the
// variance broadcast to x's shape before the rsqrt, as tinygrad's calc_stats does.
struct ResnetBatchNorm {
  Tensor weight, bias, running_mean, running_var;
  double eps = 1e-5;
  Tensor operator()(const Tensor& x) const;
};

// torchvision's Bottleneck, v1.5 (the stride is in the 3x3 convolution).
struct ResnetBottleneck {
  ResnetConv conv1, conv2, conv3;
  ResnetBatchNorm bn1, bn2, bn3;
  std::optional<ResnetConv> downsample_conv;
  std::optional<ResnetBatchNorm> downsample_bn;
  Tensor operator()(const Tensor& x) const;
};

class Resnet50 {
 public:
  // Every parameter Tensor::Empty on `device` ("" is the default device).
  static Resnet50 WithEmptyWeights(int64_t num_classes = 1000, const std::string& device = "");

  // Logits (N, num_classes) of images (N, 3, H, W).
  Tensor Forward(const Tensor& x) const;

  // The parameters in tinygrad's state-dict order (each conv weight, then its batch norm's weight, bias,
  // running mean and running variance; the fc weight and bias last): 267 tensors. tinygrad's
  // num_batches_tracked are left out: the forward pass never reads them.
  std::vector<Tensor> Parameters() const;

 private:
  ResnetConv conv1_;
  ResnetBatchNorm bn1_;
  std::vector<std::vector<ResnetBottleneck>> layers_;
  Tensor fc_weight_, fc_bias_;  // nn.Linear: weight (out, in)
};

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_RESNET50_H_
