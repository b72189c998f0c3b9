// Unit tests of the Tensor API: Python's promotion rules, broadcasting, shape errors that name the shapes,
// and values after realize (checked against tinygrad v0.10.3's output for the same program).
#include "tensor/tensor.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/testing/graph_compare.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor Ints(std::vector<int32_t> v, DType dt = dtypes::kInt32) {
  return Tensor::FromVector<int32_t>(v, {static_cast<int64_t>(v.size())}).Cast(dt);
}
Tensor Floats(std::vector<float> v, Dims shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(v.size())};
  return Tensor::FromVector<float>(v, shape);
}

TEST(TensorPromotionTest, PythonNumbersFollowTinygrad) {
  Tensor i = Ints({1, 2, 3}), f = Floats({1, 2, 3});
  EXPECT_EQ((i * 2).dtype(), dtypes::kInt32);
  EXPECT_EQ((i * 2.5).dtype(), dtypes::kFloat32);
  EXPECT_EQ((i.Cast(dtypes::kBool) + 1).dtype(), dtypes::kInt32);
  EXPECT_EQ((i.Cast(dtypes::kBool) & true).dtype(), dtypes::kBool);
  EXPECT_EQ((f.Cast(dtypes::kFloat16) * 2.0).dtype(), dtypes::kFloat16);
  EXPECT_EQ((i.Cast(dtypes::kInt8) * 1000).dtype(), dtypes::kInt8);
  EXPECT_EQ((i / 2).dtype(), dtypes::kFloat32);  // true division
  EXPECT_EQ(i.IDiv(2).dtype(), dtypes::kInt32);
  EXPECT_EQ((i < 2).dtype(), dtypes::kBool);
  EXPECT_EQ(i.Sqrt().dtype(), dtypes::kFloat32);
  EXPECT_EQ(i.Mean().dtype(), dtypes::kFloat32);
  EXPECT_EQ(i.Cast(dtypes::kUInt8).Sum().dtype(), dtypes::kUInt32);
}

TEST(TensorPromotionTest, TensorsPromoteOnTheLattice) {
  EXPECT_EQ((Ints({1}, dtypes::kInt8) + Ints({1}, dtypes::kUInt8)).dtype(),
            dtypes::kInt16);  // tinygrad: short
  EXPECT_EQ((Ints({1}, dtypes::kInt32) + Floats({1}).Cast(dtypes::kFloat16)).dtype(), dtypes::kFloat16);
  EXPECT_EQ((Floats({1}).Cast(dtypes::kFloat16) + Floats({1})).dtype(), dtypes::kFloat32);
  EXPECT_EQ((Ints({1}, dtypes::kInt64) * Ints({1}, dtypes::kUInt32)).dtype(), dtypes::kInt64);
}

TEST(TensorBroadcastTest, Shapes) {
  EXPECT_THAT((Floats({1, 2, 3}, {3, 1}) + Floats({1, 2, 3, 4}, {1, 4})).Shape(), ElementsAre(3, 4));
  EXPECT_THAT((Floats({1, 2, 3, 4, 5, 6}, {2, 3}) + Floats({1, 2, 3})).Shape(), ElementsAre(2, 3));
  EXPECT_THAT((Floats({1, 2, 3, 4, 5, 6}, {2, 3}) * 2).Shape(), ElementsAre(2, 3));
  EXPECT_THAT(Floats({1, 2}, {2, 1}).Expand({-1, 5}).Shape(), ElementsAre(2, 5));
}

TEST(TensorErrorTest, MixedDevicesFailWhereTheExpressionIsBuilt) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3}, {3}, dtypes::kFloat32, "CPU");
  Tensor b = Tensor::FromVector<float>({1, 2, 3}, {3}, dtypes::kFloat32, "INTERP");
  Tensor sum = a + b;
  EXPECT_THAT(sum.status().message(),
              HasSubstr("ADD: operands on different devices: (3,) on CPU and (3,) on INTERP"));
  EXPECT_THAT((a - b).status().message(), HasSubstr("operands on different devices"));
  EXPECT_THAT(a.Where(a, b).status().message(), HasSubstr("operands on different devices"));
  EXPECT_TRUE((a + b.To("CPU")).status().ok());
}

TEST(TensorErrorTest, EachErrorNamesTheShapes) {
  Tensor a = Floats({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor bad_broadcast = a + Floats({1, 2, 3, 4});
  EXPECT_THAT(bad_broadcast.status().message(), HasSubstr("(2, 3)"));
  EXPECT_THAT(bad_broadcast.status().message(), HasSubstr("(4,)"));
  EXPECT_THAT(a.Reshape({4}).status().message(), HasSubstr("cannot reshape a tensor of shape (2, 3)"));
  EXPECT_THAT(a.Reshape({4}).status().message(), HasSubstr("(4,)"));
  EXPECT_THAT(a.Reshape({-1, -1}).status().message(), HasSubstr("only one dimension"));
  Tensor mm = a.Matmul(Floats({1, 2, 3, 4}, {2, 2}));
  EXPECT_THAT(mm.status().message(), HasSubstr("cannot dot (2, 3) and (2, 2)"));
  EXPECT_THAT(a.Sum(2).status().message(), HasSubstr("dim=2 out of range"));
  EXPECT_THAT(a.Sum(2).status().message(), HasSubstr("(2, 3)"));
  EXPECT_THAT(a.Permute({0, 0}).status().message(), HasSubstr("not a valid permutation"));
  EXPECT_THAT(a.Cat({Floats({1, 2})}).status().message(),
              HasSubstr("cannot concatenate shapes (2, 3) and (2,)"));
  EXPECT_THAT(a.Index({int64_t{5}}).status().message(), HasSubstr("out of bounds"));
  EXPECT_THAT(a.Conv2d(Floats({1, 2, 3, 4}, {1, 1, 2, 2})).status().message(), HasSubstr("(2, 3)"));
  EXPECT_FALSE(Tensor::FromVector<float>({1, 2, 3}, {2, 2}).ok());
  EXPECT_THAT(Floats({1.5}).BitwiseAnd(1).status().message(), HasSubstr("not supported"));
}

// tinygrad's arange of 2^31 + 7 elements pools through an axis of about 2^63 elements (its graph holds a
// RESHAPE to 9223372099131801704); shapes here are int64, so it is an error that says so, not a wrapped size.
TEST(TensorErrorTest, PoolPastInt64IsAnError) {
  Tensor huge = Tensor::Arange(0, (int64_t{1} << 31) + 7, 1, dtypes::kInt64);
  EXPECT_THAT(huge.status().message(), HasSubstr("intermediate axis of 2^63 elements or more"));
  // Just under the limit it builds: 2 * (2^31 - 1)^2 < 2^63.
  EXPECT_TRUE(Tensor::Arange((int64_t{1} << 31) - 1).ok());
}

TEST(TensorErrorTest, ErrorsPropagateToRealize) {
  Tensor bad = Floats({1, 2, 3}).Reshape({2, 2});
  Tensor later = (bad + 1).Relu().Sum();
  EXPECT_FALSE(later.ok());
  EXPECT_EQ(later.status(), bad.status());
  EXPECT_FALSE(later.Realize().ok());
  EXPECT_FALSE(later.ToVector<float>().ok());
  EXPECT_FALSE(later.Ok().ok());
  EXPECT_FALSE(Tensor().ok());
}

TEST(TensorValuesTest, ArithmeticAndReductions) {
  Tensor a = Floats({1, 5, 3, 7, 2, 9}, {2, 3});
  EXPECT_THAT(*(a * 2 + 1).ToVector<float>(), ElementsAre(3, 11, 7, 15, 5, 19));
  EXPECT_THAT(*a.Sum(1).ToVector<float>(), ElementsAre(9, 18));
  EXPECT_THAT(*a.Max(0).ToVector<float>(), ElementsAre(7, 5, 9));
  EXPECT_THAT(*a.Argmax(1).ToVector<int32_t>(), ElementsAre(1, 2));
  EXPECT_FLOAT_EQ(*Floats({1, 2, 3, 4}).Std().Item<float>(), 1.2909945f);
  EXPECT_THAT(*a.T().Contiguous().ToVector<float>(), ElementsAre(1, 7, 5, 2, 3, 9));
  EXPECT_THAT(*a.Index({Slice{}, Slice{std::nullopt, std::nullopt, -1}}).ToVector<float>(),
              ElementsAre(3, 5, 1, 9, 2, 7));
  EXPECT_THAT(*Tensor::Arange(0, 1, 0.25).ToVector<float>(), ElementsAre(0, 0.25, 0.5, 0.75));
  // Python's float floor division counts the steps: 4.0 / 1e-6 rounds to 4000000, but the double 1e-6 is just
  // under 10^-6, so tinygrad's arange has 4000001 elements.
  EXPECT_EQ(Tensor::Arange(0, 4.0, 1e-6).Shape(), (Dims{4000001}));
  EXPECT_EQ(Tensor::Arange(0.5, 3.0, 0.75).Shape(), (Dims{4}));
  EXPECT_THAT(*Tensor::Eye(2, 3).ToVector<float>(), ElementsAre(1, 0, 0, 0, 1, 0));
  Tensor big = Tensor::Arange(600).Cast(dtypes::kFloat32);
  EXPECT_FLOAT_EQ(*big.Cumsum().Index({int64_t{-1}}).Item<float>(), 179700.0f);  // the two-stage cumsum
  EXPECT_THAT(*Ints({3, 1}).OneHot(4).ToVector<int32_t>(), ElementsAre(0, 0, 0, 1, 0, 1, 0, 0));
}

// A kernel of one size pools one axis, as tinygrad's avg_pool2d(kernel_size=(4,)); {k, k} pools two.
TEST(TensorValuesTest, PoolsOverAsManyAxesAsTheKernelHas) {
  Tensor x = Floats({1, 2, 3, 4, 5, 6, 7, 8}, {1, 2, 4});
  EXPECT_EQ(x.AvgPool2d({4}).Shape(), (Dims{1, 2, 1}));
  EXPECT_THAT(*x.AvgPool2d({4}).ToVector<float>(), ElementsAre(2.5, 6.5));
  EXPECT_THAT(*x.MaxPool2d({2}).ToVector<float>(), ElementsAre(2, 4, 6, 8));
  EXPECT_THAT(*x.MaxPool2d({2, 2}).ToVector<float>(), ElementsAre(6, 8));
}

TEST(TensorValuesTest, RealizeUpdatesEveryHandle) {
  Tensor a = Floats({1, 2, 3}) + 1;
  Tensor alias = a;
  ASSERT_TRUE(a.Realize().ok());
  EXPECT_EQ(alias.uop()->op(), Ops::BUFFER);
  EXPECT_THAT(*alias.ToVector<float>(), ElementsAre(2, 3, 4));
}

TEST(TensorValuesTest, CopiesBetweenDevices) {
  Tensor a = Tensor::FromVector<float>({1, 2, 3}, {3}, dtypes::kFloat32, "INTERP");
  EXPECT_EQ(a.Device(), "INTERP");
  Tensor b = (a * 2).To("CPU") + 1;
  EXPECT_EQ(b.Device(), "CPU");
  EXPECT_THAT(*b.ToVector<float>(), ElementsAre(3, 5, 7));
}

// Data waiting for a device this machine lacks stops only the realize that needs it (a program can be built
// and scheduled for any device, as tinygrad's can).
TEST(TensorErrorTest, AMissingDeviceFailsOnlyTheRealizeThatNeedsIt) {
  Tensor elsewhere = Tensor::FromVector<float>({1, 2}, {2}, dtypes::kFloat32, "NO_SUCH_DEVICE");
  EXPECT_THAT(*(Floats({1, 2}) * 3).ToVector<float>(), ElementsAre(3, 6));
  absl::StatusOr<std::vector<float>> missing = (elsewhere + 1).ToVector<float>();
  EXPECT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("NO_SUCH_DEVICE"));
  EXPECT_THAT(*Floats({4}).ToVector<float>(), ElementsAre(4));
}

TEST(TensorValuesTest, RandomNumbersAreTinygrads) {
  // tinygrad v0.10.3: Tensor.manual_seed(42); Tensor.rand(4); Tensor.rand(4); Tensor.randn(3);
  // Tensor.randint(5)
  Tensor::ManualSeed(42);
  std::vector<float> first = *Tensor::Rand({4}).ToVector<float>();
  std::vector<float> second = *Tensor::Rand({4}).ToVector<float>();
  std::vector<float> normal = *Tensor::Randn({3}).ToVector<float>();
  std::vector<int32_t> ints = *Tensor::Randint({5}, 0, 10).ToVector<int32_t>();
  EXPECT_THAT(first, Pointwise(FloatNear(1e-6), {0.3645024299621582f, 0.8505264520645142f,
                                                 0.9106684923171997f, 0.8811285495758057f}));
  EXPECT_THAT(second, Pointwise(FloatNear(1e-6), {0.08720660209655762f, 0.7681974172592163f,
                                                  0.31888341903686523f, 0.9452327489852905f}));
  EXPECT_THAT(normal,
              Pointwise(FloatNear(1e-5), {-1.2954907417297363f, -0.1633177250623703f, 0.4398767054080963f}));
  EXPECT_THAT(ints, ElementsAre(1, 2, 4, 0, 9));
}

}  // namespace
}  // namespace uopc
