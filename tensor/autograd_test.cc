// Unit tests of autograd (Gradient, Backward, Grad, RequiresGrad, Detach, ContiguousBackward) and Assign:
// values against the calculus (and tinygrad v0.10.3's output), and the errors for what has no gradient.
#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor Floats(std::vector<float> v, Dims shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::FromVector<float>(v, shape);
}
std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

TEST(GradientTest, ProductRule) {
  Tensor a = Floats({1, 2, 3}), b = Floats({4, 5, 6});
  Tensor loss = ((a + b) * a).Sum();
  absl::StatusOr<std::vector<Tensor>> g = loss.Gradient({a, b});
  ASSERT_TRUE(g.ok()) << g.status();
  // d/da = 2a + b, d/db = a
  EXPECT_THAT(Values((*g)[0]), Pointwise(FloatNear(1e-6), std::vector<float>{6, 9, 12}));
  EXPECT_THAT(Values((*g)[1]), Pointwise(FloatNear(1e-6), std::vector<float>{1, 2, 3}));
}

TEST(GradientTest, UpstreamGradient) {
  Tensor a = Floats({1, 2, 3});
  Tensor y = a * a;
  absl::StatusOr<std::vector<Tensor>> g = y.Gradient({a}, Floats({1, 10, 100}));
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(Values((*g)[0]), Pointwise(FloatNear(1e-4), std::vector<float>{2, 40, 600}));
  EXPECT_THAT(y.Gradient({a}).status().message(), HasSubstr("must be a scalar"));
}

TEST(GradientTest, UnaryOps) {
  Tensor a = Floats({0.5f, 1.0f, 2.0f});
  absl::StatusOr<std::vector<Tensor>> g = (a.Exp() + a.Log() + a.Sqrt() + a.Sin()).Sum().Gradient({a});
  ASSERT_TRUE(g.ok()) << g.status();
  std::vector<float> want;
  for (float x : {0.5f, 1.0f, 2.0f}) want.push_back(std::exp(x) + 1 / x + 0.5f / std::sqrt(x) + std::cos(x));
  EXPECT_THAT(Values((*g)[0]), Pointwise(FloatNear(1e-4), want));
}

TEST(GradientTest, ProductAndPower) {
  Tensor a = Floats({1, 2, 3, 4});
  absl::StatusOr<std::vector<Tensor>> g = a.Prod().Gradient({a});
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(Values((*g)[0]), Pointwise(FloatNear(1e-4), std::vector<float>{24, 12, 8, 6}));
  Tensor x = Floats({2, 3}), y = Floats({3, 2});
  g = x.Pow(y).Sum().Gradient({x, y});
  ASSERT_TRUE(g.ok()) << g.status();
  // d/dx = y x^(y-1), d/dy = x^y ln x
  EXPECT_THAT(Values((*g)[0]), Pointwise(FloatNear(1e-3), std::vector<float>{12, 6}));
  EXPECT_THAT(Values((*g)[1]),
              Pointwise(FloatNear(1e-3), std::vector<float>{8 * std::log(2.0f), 9 * std::log(3.0f)}));
}

TEST(GradientTest, TargetNotOnThePathIsAnError) {
  Tensor a = Floats({1, 2}), b = Floats({3, 4});
  absl::StatusOr<std::vector<Tensor>> g = (a * 2).Sum().Gradient({b});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("not on a path"));
  // materialized, it is zeros
  g = (a * 2).Sum().Gradient({b}, std::nullopt, true);
  ASSERT_TRUE(g.ok()) << g.status();
  EXPECT_THAT(Values((*g)[0]), ElementsAre(0, 0));
  // through DETACH there is no path
  EXPECT_FALSE((a.Detach() * a.Detach()).Sum().Gradient({a}).ok());
}

TEST(GradientTest, OpWithoutRuleIsAnErrorNamingIt) {
  Tensor a = Floats({1, 2, 3});
  // IDIV has no rule; reaching it through a cast back to float must say so
  Tensor loss = a.Cast(dtypes::kInt32).IDiv(2).Cast(dtypes::kFloat32).Sum();
  absl::StatusOr<std::vector<Tensor>> g = loss.Gradient({a});
  EXPECT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(g.status().message(), HasSubstr("IDIV"));
}

TEST(GradientTest, IntegerTensorsHaveNoGradient) {
  Tensor i = Tensor::FromVector<int32_t>({1, 2, 3}, {3});
  EXPECT_THAT((i * 2).Sum().Gradient({i}).status().message(), HasSubstr("only float tensors"));
  Tensor a = Floats({1, 2, 3});
  EXPECT_THAT((a.Cast(dtypes::kFloat32) * i).Cast(dtypes::kInt32).Sum().Gradient({a}).status().message(),
              HasSubstr("only float tensors"));
}

TEST(BackwardTest, AccumulatesIntoGrad) {
  Tensor w = Floats({1, 2, 3}).RequiresGrad();
  Tensor x = Floats({4, 5, 6});
  EXPECT_FALSE(w.Grad().has_value());
  ASSERT_TRUE((w * x).Sum().Backward().ok());
  ASSERT_TRUE(w.Grad().has_value());
  EXPECT_THAT(Values(*w.Grad()), ElementsAre(4, 5, 6));
  EXPECT_FALSE(x.Grad().has_value());  // x does not require grad
  ASSERT_TRUE((w * w).Sum().Backward().ok());
  EXPECT_THAT(Values(*w.Grad()), ElementsAre(6, 9, 12));
  w.SetGrad(std::nullopt);
  EXPECT_FALSE(w.Grad().has_value());
}

TEST(BackwardTest, IntermediatesAboveATensorThatRequiresGradGetOne) {
  Tensor w = Floats({1, 2}).RequiresGrad();
  Tensor h = w * 3;
  Tensor c = Floats({5, 7});  // unset: no gradient
  ASSERT_TRUE((h * c).Sum().Backward().ok());
  ASSERT_TRUE(h.Grad().has_value());
  EXPECT_THAT(Values(*h.Grad()), ElementsAre(5, 7));
  EXPECT_THAT(Values(*w.Grad()), ElementsAre(15, 21));
  EXPECT_FALSE(c.Grad().has_value());
}

TEST(BackwardTest, ContiguousBackwardKeepsValues) {
  Tensor w = Floats({1, 2, 3, 4}, {2, 2}).RequiresGrad();
  Tensor loss = (w.ContiguousBackward().T() * Floats({1, 2, 3, 4}, {2, 2})).Sum();
  ASSERT_TRUE(loss.Backward().ok());
  EXPECT_THAT(Values(*w.Grad()), ElementsAre(1, 3, 2, 4));
}

TEST(AssignTest, WritesAfterReadsScheduledWithIt) {
  Tensor a = Floats({1, 2, 3});
  ASSERT_TRUE(a.Realize().ok());
  Tensor before = a * 2;
  Tensor same = a.Assign(a + 10);
  EXPECT_TRUE(same.Is(a));
  ASSERT_TRUE(Tensor::RealizeAll({before, a}).ok());
  EXPECT_THAT(Values(before), ElementsAre(2, 4, 6));
  EXPECT_THAT(Values(a), ElementsAre(11, 12, 13));
  // a number fills
  ASSERT_TRUE(a.Assign(0.5).ok());
  EXPECT_THAT(Values(a), ElementsAre(0.5, 0.5, 0.5));
}

// The three cases below are tinygrad v0.10.3's output for the same Python.
TEST(AssignTest, ReadsAfterTheAssignSeeTheNewValues) {
  Tensor a = Floats({1, 2, 3});
  ASSERT_TRUE(a.Realize().ok());
  a.Assign(a + 1);
  Tensor b = a * 2;
  ASSERT_TRUE(Tensor::RealizeAll({b, a}).ok());
  EXPECT_THAT(Values(a), ElementsAre(2, 3, 4));
  EXPECT_THAT(Values(b), ElementsAre(4, 6, 8));
}

TEST(AssignTest, MomentumSteps) {
  Tensor w = Floats({1, 2, 3}), buf = Floats({0.5, 0.5, 0.5}), g = Floats({1, 1, 1});
  ASSERT_TRUE(Tensor::RealizeAll({w, buf, g}).ok());
  for (int step = 0; step < 3; ++step) {
    buf.Assign(buf * 0.9 + g);
    w.Assign(w.Detach() - buf * 0.1);
    ASSERT_TRUE(Tensor::RealizeAll({w, buf}).ok());
  }
  EXPECT_THAT(Values(w),
              Pointwise(FloatNear(1e-6), std::vector<float>{0.31705001f, 1.31704998f, 2.31704998f}));
  EXPECT_THAT(Values(buf),
              Pointwise(FloatNear(1e-6), std::vector<float>{3.07450008f, 3.07450008f, 3.07450008f}));
}

TEST(AssignTest, SwapThroughACopy) {
  Tensor x = Floats({1, 2, 3}), y = Floats({10, 20, 30});
  ASSERT_TRUE(Tensor::RealizeAll({x, y}).ok());
  Tensor old = (x + y).Contiguous();
  x.Assign(y * 2);
  y.Assign(old);
  ASSERT_TRUE(Tensor::RealizeAll({old, x, y}).ok());
  EXPECT_THAT(Values(old), ElementsAre(11, 22, 33));
  EXPECT_THAT(Values(x), ElementsAre(20, 40, 60));
  EXPECT_THAT(Values(y), ElementsAre(11, 22, 33));
}

TEST(AssignTest, MismatchesAreErrors) {
  Tensor a = Floats({1, 2, 3});
  EXPECT_THAT(a.Assign(Floats({1, 2})).status().message(), HasSubstr("shape mismatch"));
  EXPECT_THAT(a.Assign(Floats({1, 2, 3}).Cast(dtypes::kFloat16)).status().message(),
              HasSubstr("dtype mismatch"));
  EXPECT_THAT(a.Assign(Floats({1, 2, 3}).RequiresGrad()).status().message(), HasSubstr("requires grad"));
  EXPECT_THAT(Values(a), ElementsAre(1, 2, 3));  // unchanged
}

}  // namespace
}  // namespace uopc
