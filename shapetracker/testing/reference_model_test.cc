#include "shapetracker/testing/reference_model.h"

#include <cstdint>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

ReferenceModel Model(std::vector<int64_t> shape) {
  return ReferenceModel::FromShape(std::move(shape)).value();
}

TEST(ReferenceModelTest, FromShapeIsContiguous) {
  ReferenceModel m = Model({2, 3});
  EXPECT_THAT(m.shape(), ElementsAre(2, 3));
  EXPECT_THAT(m.index(), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(Model({}).index(), ElementsAre(0));
  EXPECT_THAT(Model({3, 0}).index(), IsEmpty());
  EXPECT_EQ(ReferenceModel::FromShape({2, -1}).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(ReferenceModel::FromShape({1 << 20, 1 << 20}).status().code(),
            absl::StatusCode::kResourceExhausted);
}

TEST(ReferenceModelTest, ReshapeKeepsOrder) {
  ReferenceModel m = Model({2, 3}).Permute({1, 0}).value().Reshape({6}).value();
  EXPECT_THAT(m.shape(), ElementsAre(6));
  EXPECT_THAT(m.index(), ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_FALSE(Model({2, 3}).Reshape({5}).ok());
  EXPECT_FALSE(Model({2, 3}).Reshape({-2, -3}).ok());
  EXPECT_TRUE(Model({2, 0}).Reshape({0, 7}).ok());
}

TEST(ReferenceModelTest, PermuteTransposes) {
  ReferenceModel m = Model({2, 3, 2}).Permute({2, 0, 1}).value();
  EXPECT_THAT(m.shape(), ElementsAre(2, 2, 3));
  // Position (a, b, c) reads source (b, c, a) = b*6 + c*2 + a.
  EXPECT_THAT(m.index(), ElementsAre(0, 2, 4, 6, 8, 10, 1, 3, 5, 7, 9, 11));
  EXPECT_FALSE(Model({2, 3}).Permute({0, 0}).ok());
  EXPECT_FALSE(Model({2, 3}).Permute({0}).ok());
  EXPECT_FALSE(Model({2, 3}).Permute({0, 2}).ok());
  EXPECT_FALSE(Model({2, 3}).Permute({-1, 0}).ok());
}

TEST(ReferenceModelTest, ExpandRepeats) {
  ReferenceModel m = Model({2, 1}).Expand({2, 3}).value();
  EXPECT_THAT(m.index(), ElementsAre(0, 0, 0, 1, 1, 1));
  EXPECT_THAT(Model({1}).Expand({0}).value().index(), IsEmpty());
  EXPECT_FALSE(Model({2, 1}).Expand({4, 3}).ok());
  EXPECT_FALSE(Model({2, 1}).Expand({2}).ok());
  EXPECT_FALSE(Model({1}).Expand({-3}).ok());
}

TEST(ReferenceModelTest, PadInsertsPadding) {
  ReferenceModel m = Model({2}).Pad({{1, 2}}).value();
  EXPECT_THAT(m.shape(), ElementsAre(5));
  EXPECT_THAT(m.index(), ElementsAre(-1, 0, 1, -1, -1));
  m = Model({1, 2}).Pad({{0, 1}, {1, 0}}).value();
  EXPECT_THAT(m.index(), ElementsAre(-1, 0, 1, -1, -1, -1));
  // Padding padding keeps -1.
  EXPECT_THAT(Model({1}).Pad({{1, 0}}).value().Pad({{0, 1}}).value().index(), ElementsAre(-1, 0, -1));
  EXPECT_FALSE(Model({2}).Pad({{-1, 0}}).ok());
  EXPECT_FALSE(Model({2}).Pad({{0, 0}, {0, 0}}).ok());
}

TEST(ReferenceModelTest, ShrinkSlices) {
  ReferenceModel m = Model({3, 3}).Shrink({{1, 3}, {0, 2}}).value();
  EXPECT_THAT(m.shape(), ElementsAre(2, 2));
  EXPECT_THAT(m.index(), ElementsAre(3, 4, 6, 7));
  EXPECT_THAT(Model({3}).Shrink({{2, 2}}).value().index(), IsEmpty());
  EXPECT_FALSE(Model({3}).Shrink({{2, 1}}).ok());
  EXPECT_FALSE(Model({3}).Shrink({{-1, 1}}).ok());
  EXPECT_FALSE(Model({3}).Shrink({{0, 4}}).ok());
}

TEST(ReferenceModelTest, FlipReverses) {
  ReferenceModel m = Model({2, 3}).Flip({true, false}).value();
  EXPECT_THAT(m.index(), ElementsAre(3, 4, 5, 0, 1, 2));
  m = Model({2, 3}).Flip({false, true}).value();
  EXPECT_THAT(m.index(), ElementsAre(2, 1, 0, 5, 4, 3));
  EXPECT_THAT(Model({2}).Pad({{1, 0}}).value().Flip({true}).value().index(), ElementsAre(1, 0, -1));
  EXPECT_FALSE(Model({2, 3}).Flip({true}).ok());
}

TEST(ReferenceModelTest, ToStringShowsShapeAndIndex) {
  EXPECT_EQ(Model({2}).Pad({{0, 1}}).value().ToString(), "shape (3,): [0, 1, -1]");
}

}  // namespace
}  // namespace uopc
