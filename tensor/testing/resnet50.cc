#include "tensor/testing/resnet50.h"

#include <utility>

namespace uopc {

Tensor ResnetConv::operator()(const Tensor& x) const {
  return x.Conv2d(weight, ConvOptions{.stride = {stride}, .padding = {padding}});
}

Tensor ResnetBatchNorm::operator()(const Tensor& x) const {
  Tensor var = running_var.Reshape({1, -1, 1, 1}).Expand(x.Shape());
  return x.Batchnorm(&weight, &bias, running_mean, var.Add(eps).Rsqrt());
}

Tensor ResnetBottleneck::operator()(const Tensor& x) const {
  Tensor out = bn1(conv1(x)).Relu();
  out = bn2(conv2(out)).Relu();
  out = bn3(conv3(out));
  Tensor shortcut = downsample_conv ? (*downsample_bn)((*downsample_conv)(x)) : x;
  return (out + shortcut).Relu();
}

Resnet50 Resnet50::WithEmptyWeights(int64_t num_classes, const std::string& device) {
  auto conv = [&](int64_t in, int64_t out, int64_t k, int64_t stride, int64_t padding) {
    return ResnetConv{Tensor::Empty({out, in, k, k}, dtypes::kFloat32, device), stride, padding};
  };
  auto bn = [&](int64_t c) {
    auto empty = [&] { return Tensor::Empty({c}, dtypes::kFloat32, device); };
    return ResnetBatchNorm{empty(), empty(), empty(), empty()};
  };
  Resnet50 m;
  m.conv1_ = conv(3, 64, 7, 2, 3);
  m.bn1_ = bn(64);
  constexpr int64_t kExpansion = 4;
  const int64_t blocks[4] = {3, 4, 6, 3};
  int64_t in_planes = 64;
  for (int64_t stage = 0; stage < 4; ++stage) {
    const int64_t planes = int64_t{64} << stage;
    std::vector<ResnetBottleneck> layer;
    for (int64_t b = 0; b < blocks[stage]; ++b) {
      const int64_t stride = (b == 0 && stage > 0) ? 2 : 1;
      ResnetBottleneck block{.conv1 = conv(in_planes, planes, 1, 1, 0),
                             .conv2 = conv(planes, planes, 3, stride, 1),
                             .conv3 = conv(planes, planes * kExpansion, 1, 1, 0),
                             .bn1 = bn(planes),
                             .bn2 = bn(planes),
                             .bn3 = bn(planes * kExpansion),
                             .downsample_conv = std::nullopt,
                             .downsample_bn = std::nullopt};
      if (stride != 1 || in_planes != planes * kExpansion) {
        block.downsample_conv = conv(in_planes, planes * kExpansion, 1, stride, 0);
        block.downsample_bn = bn(planes * kExpansion);
      }
      layer.push_back(std::move(block));
      in_planes = planes * kExpansion;
    }
    m.layers_.push_back(std::move(layer));
  }
  m.fc_weight_ = Tensor::Empty({num_classes, 512 * kExpansion}, dtypes::kFloat32, device);
  m.fc_bias_ = Tensor::Empty({num_classes}, dtypes::kFloat32, device);
  return m;
}

Tensor Resnet50::Forward(const Tensor& x) const {
  Tensor out = bn1_(conv1_(x)).Relu();
  out = out.Pad({{0, 0}, {0, 0}, {1, 1}, {1, 1}}).MaxPool2d({3, 3}, {2, 2});
  for (const std::vector<ResnetBottleneck>& layer : layers_) {
    for (const ResnetBottleneck& block : layer) out = block(out);
  }
  return out.Mean({2, 3}).Cast(dtypes::kFloat32).Linear(fc_weight_.Transpose(), &fc_bias_);
}

std::vector<Tensor> Resnet50::Parameters() const {
  std::vector<Tensor> out;
  auto add = [&](const ResnetConv& conv, const ResnetBatchNorm& bn) {
    for (const Tensor* t : {&conv.weight, &bn.weight, &bn.bias, &bn.running_mean, &bn.running_var}) {
      out.push_back(*t);
    }
  };
  add(conv1_, bn1_);
  for (const std::vector<ResnetBottleneck>& layer : layers_) {
    for (const ResnetBottleneck& b : layer) {
      add(b.conv1, b.bn1);
      add(b.conv2, b.bn2);
      add(b.conv3, b.bn3);
      if (b.downsample_conv) add(*b.downsample_conv, *b.downsample_bn);
    }
  }
  out.push_back(fc_weight_);
  out.push_back(fc_bias_);
  return out;
}

}  // namespace uopc
