// The model of tinygrad's examples/beautiful_mnist.py (4 convolutions, 2 BatchNorms, a Linear), shared by the
// training example (examples/mnist.cc) and the tool that writes its step's kernels for the BEAM tests
// (examples/mnist_step_kernels.cc).
#ifndef UOPC_EXAMPLES_MNIST_MODEL_H_
#define UOPC_EXAMPLES_MNIST_MODEL_H_

#include <string>

#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace uopc {

// beautiful_mnist's Model, its layers named as tinygrad's list would name them.
class MnistModel : public nn::Module {
 public:
  // `sync_communicator`: the BatchNorms' training statistics over every process of it ("MPI"; the
  // data-parallel training of examples/mnist.cc --mpi).
  explicit MnistModel(const std::string& sync_communicator = "")
      : norm1_(32, nn::BatchNormOptions{.sync_communicator = sync_communicator}),
        norm2_(64, nn::BatchNormOptions{.sync_communicator = sync_communicator}) {}
  Tensor operator()(const Tensor& x) {
    Tensor h = conv1_(x).Relu();
    h = conv2_(h).Relu();
    h = norm1_(h).MaxPool2d();
    h = conv3_(h).Relu();
    h = conv4_(h).Relu();
    h = norm2_(h).MaxPool2d();
    return linear_(h.Flatten(1));
  }
  void CollectState(nn::StateCollector& state) const override {
    state.Add("layers.0", conv1_);
    state.Add("layers.2", conv2_);
    state.Add("layers.4", norm1_);
    state.Add("layers.6", conv3_);
    state.Add("layers.8", conv4_);
    state.Add("layers.10", norm2_);
    state.Add("layers.13", linear_);
  }

 private:
  // Declared in tinygrad's order, so the weights draw the random stream in that order.
  nn::Conv2d conv1_{1, 32, {5}};
  nn::Conv2d conv2_{32, 32, {5}};
  nn::BatchNorm norm1_;
  nn::Conv2d conv3_{32, 64, {3}};
  nn::Conv2d conv4_{64, 64, {3}};
  nn::BatchNorm norm2_;
  nn::Linear linear_{576, 10};
};

}  // namespace uopc

#endif  // UOPC_EXAMPLES_MNIST_MODEL_H_
