// Composition (`a + b`), masks and inversion of ShapeTrackers: the intent of tinygrad's
// test_shapetracker_math.py, with equality checked by evaluating index and valid at every position.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "shapetracker/movement_ops.h"
#include "shapetracker/shapetracker.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using Mask = std::vector<std::pair<int64_t, int64_t>>;
SintVec S(std::initializer_list<int64_t> v) { return SintVec(v.begin(), v.end()); }
std::vector<SintPair> P(const Mask& m) {
  std::vector<SintPair> out;
  for (auto [b, e] : m) out.emplace_back(b, e);
  return out;
}
ShapeTracker From(SintVec shape) { return *ShapeTracker::FromShape(shape); }
View Raw(SintVec shape, SintVec strides, int64_t offset, bool contiguous) {
  return *View::FromFields(std::move(shape), std::move(strides), offset, std::nullopt, contiguous);
}

// Every position's index (or -1), evaluated from the tracker's (index, valid) expressions.
std::vector<int64_t> Index(const ShapeTracker& st) {
  absl::StatusOr<std::vector<int64_t>> index = IndexArray(st);
  EXPECT_TRUE(index.ok()) << index.status();
  return index.ok() ? *index : std::vector<int64_t>{};
}

// tinygrad's st_equal without recording a failure: same shape, and the same element (or padding) at every
// position.
bool StEqualQuiet(const ShapeTracker& a, const ShapeTracker& b) {
  return a.shape() == b.shape() && (a == b || Index(a) == Index(b));
}

// st_equal, recording which trackers differ.
bool StEqual(const ShapeTracker& a, const ShapeTracker& b) {
  if (StEqualQuiet(a, b)) return true;
  ADD_FAILURE() << "trackers differ: " << a.ToString() << " vs " << b.ToString();
  return false;
}

TEST(ShapeTrackerBasicsTest, PadThenShrinkRemovesTheMask) {
  ShapeTracker a = *From(S({10, 10})).Pad(P({{0, 2}, {0, 2}}))->Shrink(P({{0, 10}, {0, 10}}));
  ASSERT_EQ(a.views().size(), 1u);
  EXPECT_FALSE(a.views().back().mask().has_value());
  ShapeTracker b = *From(S({10, 10})).Pad(P({{0, 2}, {0, 2}}))->Shrink(P({{0, 10}, {0, 11}}));
  ASSERT_EQ(b.views().size(), 1u);
  EXPECT_TRUE(b.views().back().mask().has_value());
}

TEST(ShapeTrackerBasicsTest, ReshapeMakesSame) {
  ShapeTracker x = *From(S({2, 5})).Pad(P({{2, 0}, {0, 0}}))->Reshape(S({2, 2, 5}));
  ShapeTracker x1 = *x.Reshape(S({4, 5}))->Reshape(S({2, 2, 5}));
  EXPECT_EQ(x, x1.Simplify());
}

TEST(ShapeTrackerBasicsTest, SimplifyIsCorrect) {
  ShapeTracker multi({Raw(S({15, 3}), S({9, 1}), 6, false), Raw(S({4, 3}), S({12, 4}), 0, false)});
  EXPECT_TRUE(StEqual(multi, multi.Simplify()));
}

TEST(ShapeTrackerAddTest, SimpleAdds) {
  ShapeTracker a = *From(S({10, 10})).Reshape(S({100}));
  ShapeTracker b = From(S({100}));
  EXPECT_EQ(a.Compose(b), b);
  ShapeTracker p = *From(S({10, 10})).Permute({1, 0});
  EXPECT_EQ(p.Compose(p), From(S({10, 10})));
}

TEST(ShapeTrackerAddTest, PlusReal) {
  ShapeTracker backup = *From(S({15, 9})).Shrink(P({{0, 15}, {6, 9}}));
  ShapeTracker st0 = *backup.Reshape(S({45}))->Flip({true})->Reshape(S({15, 3}));
  ShapeTracker st1 = *From(backup.shape()).Reshape(S({45}))->Flip({true})->Reshape(S({15, 3}));
  EXPECT_TRUE(StEqual(backup.Compose(st1), st0));
}

TEST(ShapeTrackerAddTest, OffByOneIsDetected) {
  ShapeTracker st1({Raw(S({5}), S({1}), 0, true), Raw(S({5}), S({1}), 0, true)});
  ShapeTracker st2({Raw(S({4}), S({1}), 0, true), Raw(S({5}), S({1}), 0, true)});
  // st2 reads past its 4-element first view; the checker must see the difference in the last position.
  EXPECT_EQ(Index(st1), (std::vector<int64_t>{0, 1, 2, 3, 4}));
  EXPECT_NE(Index(st2), Index(st1)) << "position 4 wraps to element 0 in st2";
  EXPECT_FALSE(StEqualQuiet(st1, st2));
}

TEST(ShapeTrackerAddTest, MaskedComposition) {
  // Padding below, shrinking on top: composes into one masked view.
  ShapeTracker padded = *From(S({4, 4})).Pad(P({{1, 1}, {1, 1}}));
  ShapeTracker top = *From(S({6, 6})).Shrink(P({{0, 5}, {1, 6}}))->Flip({false, true});
  ShapeTracker composed = padded.Compose(top);
  EXPECT_EQ(composed.views().size(), 1u) << composed.ToString();
  ShapeTracker direct = *padded.Shrink(P({{0, 5}, {1, 6}}))->Flip({false, true});
  EXPECT_TRUE(StEqual(composed, direct));
  // A mask on top of a permuted view: the merge projects the mask.
  ShapeTracker perm = *From(S({3, 4})).Permute({1, 0});
  ShapeTracker masked_top = *From(S({4, 3})).Pad(P({{0, 2}, {1, 0}}));
  ShapeTracker c2 = perm.Compose(masked_top);
  EXPECT_TRUE(StEqual(c2, *perm.Pad(P({{0, 2}, {1, 0}}))));
}

TEST(ShapeTrackerAddVariableTest, SelfAdd) {
  Sint j = Sint::FromUOp(UOp::Variable("j", 0, 20).bind(10));
  ShapeTracker x = *From(S({10, 10})).Reshape({10, j});
  EXPECT_EQ(x.Compose(x), x);
  EXPECT_EQ(x.Reshape({5, 2, j})->Compose(x), x);
}

TEST(ShapeTrackerAddVariableTest, MergeSymbolicViews) {
  Sint i = Sint::FromUOp(UOp::Variable("i", 1, 10));
  Sint j = Sint::FromUOp(UOp::Variable("j", 1, 10));
  ShapeTracker vm1({*View::FromFields({i, j}, {0, 0}, 0, std::nullopt, false)});
  ShapeTracker vm2({*View::FromFields({i, j}, {j, 1}, 0, std::nullopt, true)});
  ShapeTracker ret = *vm1.Compose(vm2).Reshape({i, j, 1});
  ShapeTracker ret2 = vm1.Compose(*vm2.Reshape({i, j, 1}));
  EXPECT_EQ(ret, ret2);
  // Composition with mismatched symbolic strides must not crash.
  ShapeTracker a({*View::FromFields({i, i, 3}, {3, 0, 1}, 0, std::nullopt, false)});
  ShapeTracker b({*View::FromFields({i, i, 3}, {i * 3, 3, 1}, 0, std::nullopt, true)});
  EXPECT_EQ(a.Compose(b).shape(), a.shape());
}

TEST(ShapeTrackerInvertTest, InvertUndoes) {
  ShapeTracker a = From(S({10, 10}));
  ShapeTracker x = *a.Reshape(S({5, 20}));
  EXPECT_EQ(From(x.shape()).Compose(*x.Invert(a.shape())), a);

  ShapeTracker b = From(S({5, 20}));
  ShapeTracker xp = *b.Permute({1, 0});
  EXPECT_EQ(xp.Compose(*xp.Invert(b.shape())), b);

  ShapeTracker c = From(S({8, 4, 5}));
  ShapeTracker xc = *c.Permute({1, 2, 0});
  EXPECT_EQ(xc.Compose(*xc.Invert(c.shape())), c);

  ShapeTracker d = From(S({3, 6, 10}));
  ShapeTracker xd = *d.Reshape(S({3, 3, 2, 10}))->Permute({2, 1, 3, 0});
  EXPECT_EQ(xd.Compose(*xd.Invert(d.shape())), d);
}

TEST(ShapeTrackerInvertTest, CannotInvertExpandOrShrink) {
  ShapeTracker a = From(S({10, 1}));
  EXPECT_FALSE(a.Expand(S({10, 10}))->Invert(a.shape()).has_value());
  ShapeTracker b = From(S({10, 10}));
  EXPECT_FALSE(b.Shrink(P({{0, 10}, {2, 8}}))->Invert(b.shape()).has_value());
}

TEST(ShapeTrackerInvertTest, InvertsFlips) {
  ShapeTracker a = From(S({20, 10}));
  ShapeTracker x = *a.Flip({true, false});
  std::optional<ShapeTracker> inv = x.Invert(a.shape());
  ASSERT_TRUE(inv.has_value());
  EXPECT_TRUE(StEqual(x.Compose(*inv), a));
  ShapeTracker y = *a.Permute({1, 0})->Flip({true, false});
  std::optional<ShapeTracker> inv2 = y.Invert(a.shape());
  ASSERT_TRUE(inv2.has_value());
  EXPECT_TRUE(StEqual(y.Compose(*inv2), a));
}

TEST(ShapeTrackerInvertTest, InvertThroughPadAndReshapes) {
  ShapeTracker a = From(S({2, 5}));
  ShapeTracker x = *a.Pad(P({{2, 0}, {0, 0}}))->Reshape(S({2, 2, 5}))->Reshape(S({4, 5}));
  std::optional<ShapeTracker> inv = x.Invert(a.shape());
  ASSERT_TRUE(inv.has_value());
  EXPECT_TRUE(StEqual(x.Compose(*inv), a));
}

}  // namespace
}  // namespace uopc
