// With uopc's kernels on the host's devices, a large convolution's input gradient is a transposed convolution
// of the output gradient (tensor_nn.cc, a CUSTOM_GRADIENT node): the same gradients as tinygrad's graph (to
// float rounding: the sums run in another order) with strides, dilation, uneven padding, groups and one or
// two spatial axes, and tinygrad's graph wherever the rule does not apply.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"
#include "tensor/testing/kernels_environment.h"

namespace uopc {
namespace {

using ::testing::FloatNear;
using ::testing::Pointwise;

bool HasCustomGradient(const Tensor& t) {
  for (const UOp* u : t.uop()->Toposort()) {
    if (u->op() == Ops::CUSTOM_GRADIENT) return true;
  }
  return false;
}

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

struct Case {
  std::string name;
  Dims x, w;
  ConvOptions options;
};

// Every case has at least 2^20 products of the output gradient and the weights, where the rule applies.
std::vector<Case> Cases() {
  return {
      {"3x3 padded", {32, 16, 20, 20}, {32, 16, 3, 3}, {.padding = {1}}},
      {"stride 2, odd size, uneven padding",
       {64, 32, 21, 19},
       {16, 32, 3, 3},
       {.stride = {2}, .padding = {1, 0, 2, 1}}},
      {"groups 4, dilation 2",
       {16, 32, 16, 16},
       {32, 8, 3, 3},
       {.groups = 4, .dilation = {2}, .padding = {2}}},
      {"one spatial axis, stride 3", {64, 32, 400}, {32, 32, 5}, {.stride = {3}, .padding = {2}}},
  };
}

TEST(ConvGradientTest, LargeConvolutionsCarryTheRule) {
  KernelsEnvironment fast("fast");
  for (const Case& c : Cases()) {
    for (const char* device : {"CPU", "LLVM"}) {
      Tensor x = Tensor::Zeros(c.x, dtypes::kFloat32, device),
             w = Tensor::Zeros(c.w, dtypes::kFloat32, device);
      EXPECT_TRUE(HasCustomGradient(x.Conv2d(w, c.options))) << c.name << " on " << device;
    }
  }
}

TEST(ConvGradientTest, TinygradsGraphWhereTheRuleDoesNotApply) {
  auto conv = [](Dims x, Dims w, ConvOptions options = {}, DType dtype = dtypes::kFloat32,
                 const std::string& device = "CPU") {
    return Tensor::Zeros(x, dtype, device).Conv2d(Tensor::Zeros(w, dtype, device), options);
  };
  {
    KernelsEnvironment fast("fast");
    // Under 2^20 products, another device, an int dtype, padding wider than the kernel.
    EXPECT_FALSE(HasCustomGradient(conv({2, 16, 24, 24}, {16, 16, 5, 5})));
    EXPECT_FALSE(HasCustomGradient(conv({8, 16, 24, 24}, {16, 16, 5, 5}, {}, dtypes::kFloat32, "INTERP")));
    EXPECT_FALSE(HasCustomGradient(conv({8, 16, 24, 24}, {16, 16, 5, 5}, {}, dtypes::kInt32)));
    EXPECT_FALSE(HasCustomGradient(conv({8, 16, 24, 24}, {16, 16, 3, 3}, {.padding = {3}})));
  }
  KernelsEnvironment tinygrad("tinygrad");
  EXPECT_FALSE(HasCustomGradient(conv({8, 16, 24, 24}, {16, 16, 5, 5})));
}

// The gradients of x, the weight and the bias, with the rule and with tinygrad's graph, on LLVM (its
// in-process compiles keep the test quick).
TEST(ConvGradientTest, GradientsAreTinygradsGraphs) {
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.name);
    const std::string device = "LLVM";
    Tensor x = Tensor::Randn(c.x, dtypes::kFloat32, device);
    Tensor w = Tensor::Randn(c.w, dtypes::kFloat32, device) * 0.1;
    Tensor b = Tensor::Randn({c.w[0]}, dtypes::kFloat32, device);
    Tensor upstream = Tensor::Randn(x.Conv2d(w, c.options).Shape(), dtypes::kFloat32, device);
    std::vector<std::vector<float>> grads[2];
    for (int tinygrad = 0; tinygrad < 2; ++tinygrad) {
      KernelsEnvironment env(tinygrad ? "tinygrad" : "fast");
      Tensor y = x.Conv2d(w, &b, c.options);
      EXPECT_EQ(HasCustomGradient(y), !tinygrad);
      // x is also used outside the convolution: its gradients add up.
      absl::StatusOr<std::vector<Tensor>> g = (y * upstream).Sum().Add(x.Square().Sum()).Gradient({x, w, b});
      ASSERT_TRUE(g.ok()) << g.status();
      for (const Tensor& t : *g) grads[tinygrad].push_back(Values(t));
    }
    for (size_t i = 0; i < grads[0].size(); ++i) {
      ASSERT_EQ(grads[0][i].size(), grads[1][i].size());
      float scale = 0, diff = 0;
      for (size_t k = 0; k < grads[0][i].size(); ++k) {
        scale = std::max(scale, std::abs(grads[1][i][k]));
        diff = std::max(diff, std::abs(grads[0][i][k] - grads[1][i][k]));
      }
      EXPECT_LE(diff, 1e-5f * scale + 1e-5f) << "gradient " << i << " of " << scale;
    }
  }
}

TEST(ConvGradientTest, BackwardThroughTheRuleOnLlvm) {
  Tensor x = Tensor::Randn({8, 16, 24, 24}, dtypes::kFloat32, "LLVM").RequiresGrad();
  Tensor w = (Tensor::Randn({16, 16, 5, 5}, dtypes::kFloat32, "LLVM") * 0.1).RequiresGrad();
  std::vector<std::vector<float>> grads;
  for (const char* kernels : {"fast", "tinygrad"}) {
    KernelsEnvironment env(kernels);
    x.SetGrad(std::nullopt);
    w.SetGrad(std::nullopt);
    ASSERT_TRUE(x.Conv2d(w).Relu().Sum().Backward().ok());
    grads.push_back(Values(*x.Grad()));
    grads.push_back(Values(*w.Grad()));
  }
  EXPECT_THAT(grads[0], Pointwise(FloatNear(1e-4f), grads[2]));
  EXPECT_THAT(grads[1], Pointwise(FloatNear(1e-2f), grads[3]));
}

// The input needs no gradient (a network's first convolution): the weight's comes through the value's graph.
TEST(ConvGradientTest, OnlyTheWeightsGradient) {
  KernelsEnvironment fast("fast");
  Tensor x = Tensor::Randn({8, 16, 24, 24}), w = Tensor::Randn({16, 16, 5, 5});
  Tensor y = x.Conv2d(w);
  ASSERT_TRUE(HasCustomGradient(y));
  absl::StatusOr<std::vector<Tensor>> grads = y.Sum().Gradient({w});
  ASSERT_TRUE(grads.ok()) << grads.status();
  std::vector<float> dw = Values((*grads)[0]);
  KernelsEnvironment tinygrad("tinygrad");
  absl::StatusOr<std::vector<Tensor>> reference = x.Conv2d(w).Sum().Gradient({w});
  ASSERT_TRUE(reference.ok()) << reference.status();
  EXPECT_THAT(dw, Pointwise(FloatNear(1e-2f), Values((*reference)[0])));
}

}  // namespace
}  // namespace uopc
