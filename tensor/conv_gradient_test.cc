// With uopc's kernels on the host's devices, a large convolution's gradients come from rules (tensor_nn.cc, a
// CUSTOM_GRADIENT node): the input's is a transposed convolution of the output gradient, the weight's a
// grouped convolution of the input with the output gradient over groups of 16 images, then summed. Both
// give tinygrad's gradients (to float rounding: the sums run in another order) with strides, dilation,
// uneven padding, groups and one or two spatial axes, and tinygrad's graph stays wherever a rule does not
// apply.
#include <algorithm>
#include <cctype>
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

const UOp* CustomGradientNode(const Tensor& t) {
  for (const UOp* u : t.uop()->Toposort()) {
    if (u->op() == Ops::CUSTOM_GRADIENT) return u;
  }
  return nullptr;
}

bool HasCustomGradient(const Tensor& t) { return CustomGradientNode(t) != nullptr; }

// The rules the node carries: whether x's gradient is the rule's, and the weight's batch split (0: none).
std::pair<bool, int64_t> Rules(const Tensor& t) {
  const UOp* node = CustomGradientNode(t);
  if (node == nullptr) return {false, 0};
  const Arg::Tuple& arg = node->arg().as_tuple();
  return {arg[5].as_int() != 0, arg[6].as_int()};
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
      {"stride 2, dilation 2",
       {64, 16, 23, 23},
       {16, 16, 3, 3},
       {.stride = {2}, .dilation = {2}, .padding = {1}}},
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

TEST(ConvGradientTest, TheWeightsRuleSplitsTheBatchIntoGroupsOf16Images) {
  KernelsEnvironment fast("fast");
  auto rules = [](Dims x, Dims w, ConvOptions options = {}, DType dtype = dtypes::kFloat32) {
    return Rules(Tensor::Zeros(x, dtype, "LLVM").Conv2d(Tensor::Zeros(w, dtypes::kFloat32, "LLVM"), options));
  };
  EXPECT_EQ(rules({32, 16, 20, 20}, {32, 16, 3, 3}, {.padding = {1}}), std::make_pair(true, int64_t{2}));
  EXPECT_EQ(rules({512, 32, 24, 24}, {32, 32, 5, 5}), std::make_pair(true, int64_t{32}));
  // Not a power of two: the largest one that divides the batch and leaves 16 images or more a group.
  EXPECT_EQ(rules({96, 16, 24, 24}, {16, 16, 5, 5}), std::make_pair(true, int64_t{4}));
  // Fewer than 32 images, or groups: tinygrad's weight gradient.
  EXPECT_EQ(rules({24, 16, 24, 24}, {16, 16, 5, 5}), std::make_pair(true, int64_t{0}));
  EXPECT_EQ(rules({64, 32, 16, 16}, {32, 8, 3, 3}, {.groups = 4, .padding = {1}}),
            std::make_pair(true, int64_t{0}));
  // The first layer's pixels: no gradient rule for them, the weight's still applies.
  EXPECT_EQ(rules({512, 1, 28, 28}, {32, 1, 5, 5}, {}, dtypes::kUInt8), std::make_pair(false, int64_t{32}));
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

// The gradients of x, the weight and the bias, with the rules and with tinygrad's graph, on LLVM (its
// in-process compiles keep the test quick). One case a test, so that the shards share them out.
class ConvGradientCaseTest : public testing::TestWithParam<Case> {};

TEST_P(ConvGradientCaseTest, GradientsAreTinygradsGraphs) {
  const Case& c = GetParam();
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

INSTANTIATE_TEST_SUITE_P(Cases, ConvGradientCaseTest, testing::ValuesIn(Cases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           std::string name;
                           for (char ch : info.param.name) name += std::isalnum(ch) ? ch : '_';
                           return name;
                         });

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

// A first layer: uint8 pixels and float weights; the weight's gradient is the rule's and tinygrad's.
TEST(ConvGradientTest, TheWeightsGradientForPixels) {
  const std::string device = "LLVM";
  Tensor x = Tensor::Randint({128, 1, 28, 28}, 0, 256, dtypes::kUInt8, device);
  Tensor w = Tensor::Randn({8, 1, 5, 5}, dtypes::kFloat32, device);
  Tensor upstream = Tensor::Randn({128, 8, 24, 24}, dtypes::kFloat32, device);
  std::vector<float> dw[2];
  for (int tinygrad = 0; tinygrad < 2; ++tinygrad) {
    KernelsEnvironment env(tinygrad ? "tinygrad" : "fast");
    Tensor y = x.Conv2d(w);
    EXPECT_EQ(Rules(y), std::make_pair(false, int64_t{tinygrad ? 0 : 8}));
    absl::StatusOr<std::vector<Tensor>> g = (y * upstream).Sum().Gradient({w});
    ASSERT_TRUE(g.ok()) << g.status();
    dw[tinygrad] = Values((*g)[0]);
  }
  float scale = 0;
  for (float v : dw[1]) scale = std::max(scale, std::abs(v));
  EXPECT_THAT(dw[0], Pointwise(FloatNear(1e-5f * scale), dw[1]));
}

// The input needs no gradient (a network's first convolution) and the batch is too small to split: the
// weight's comes through the value's graph.
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
