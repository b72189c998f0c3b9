#include "shapetracker/shapetracker.h"

#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rewrite/infix.h"
#include "shapetracker/movement_ops.h"
#include "shapetracker/testing/reference_model.h"
#include "uop/text_ir.h"
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

// Every position's index (or -1) from the tracker's (index, valid) expressions.
std::vector<int64_t> Evaluate(const ShapeTracker& st) {
  absl::StatusOr<std::vector<int64_t>> index = IndexArray(st);
  EXPECT_TRUE(index.ok()) << index.status();
  return index.ok() ? *index : std::vector<int64_t>{};
}

// Applies the same ops to a tracker and to the reference model, checking they agree after every step.
class Checker {
 public:
  explicit Checker(std::vector<int64_t> shape)
      : st_(*ShapeTracker::FromShape(SintVec(shape.begin(), shape.end()))),
        model_(*ReferenceModel::FromShape(shape)) {}
  Checker& Reshape(std::vector<int64_t> s) {
    st_ = *st_.Reshape(SintVec(s.begin(), s.end()));
    model_ = *model_.Reshape(s);
    return Check("reshape");
  }
  Checker& Permute(std::vector<int64_t> o) {
    st_ = *st_.Permute(o);
    model_ = *model_.Permute(o);
    return Check("permute");
  }
  Checker& Expand(std::vector<int64_t> s) {
    st_ = *st_.Expand(SintVec(s.begin(), s.end()));
    model_ = *model_.Expand(s);
    return Check("expand");
  }
  Checker& Pad(Mask m) {
    st_ = *st_.Pad(P(m));
    model_ = *model_.Pad(m);
    return Check("pad");
  }
  Checker& Shrink(Mask m) {
    st_ = *st_.Shrink(P(m));
    model_ = *model_.Shrink(m);
    return Check("shrink");
  }
  Checker& Flip(std::vector<bool> f) {
    bool arr[16];
    for (size_t i = 0; i < f.size(); ++i) arr[i] = f[i];
    st_ = *st_.Flip(absl::MakeConstSpan(arr, f.size()));
    model_ = *model_.Flip(absl::MakeConstSpan(arr, f.size()));
    return Check("flip");
  }
  const ShapeTracker& st() const { return st_; }

 private:
  Checker& Check(const char* op) {
    EXPECT_EQ(Evaluate(st_), model_.index()) << "after " << op << ": " << st_.ToString();
    ShapeTracker simplified = st_.Simplify();
    EXPECT_LE(simplified.views().size(), st_.views().size());
    EXPECT_EQ(Evaluate(simplified), model_.index())
        << "simplified after " << op << ": " << simplified.ToString();
    return *this;
  }
  ShapeTracker st_;
  ReferenceModel model_;
};

TEST(ShapeTrackerTest, FromShapeAndPrinting) {
  ShapeTracker st = *ShapeTracker::FromShape(S({3}));
  EXPECT_EQ(st.ToString(),
            "ShapeTracker(views=(View(shape=(3,), strides=(1,), offset=0, mask=None, contiguous=True),))");
  EXPECT_TRUE(st.contiguous());
  EXPECT_TRUE(st.consecutive());
  EXPECT_EQ(st.size(), 3);
  ShapeTracker two = *st.Reshape(S({3}))->Pad(P({{1, 1}}))->Reshape(S({5, 1}));
  EXPECT_EQ(two.views().size(), 1u);
  ShapeTracker perm = *(*ShapeTracker::FromShape(S({3, 4}))).Permute({1, 0});
  ShapeTracker stacked = *perm.Reshape(S({12}));
  ASSERT_EQ(stacked.views().size(), 2u);
  EXPECT_EQ(stacked.ToString(),
            "ShapeTracker(views=(View(shape=(4, 3), strides=(1, 4), offset=0, mask=None, contiguous=False), "
            "View(shape=(12,), strides=(1,), offset=0, mask=None, contiguous=True)))");
  EXPECT_FALSE(stacked.contiguous());
  EXPECT_FALSE(stacked.consecutive());
  ShapeTracker masked = *(*ShapeTracker::FromShape(S({2, 2}))).Pad(P({{0, 1}, {2, 0}}));
  EXPECT_EQ(masked.ToString(),
            "ShapeTracker(views=(View(shape=(3, 4), strides=(2, 1), offset=-2, mask=((0, 2), (2, 4)), "
            "contiguous=False),))");
  ShapeTracker offset = *(*ShapeTracker::FromShape(S({4, 4}))).Shrink(P({{1, 3}, {0, 4}}));
  EXPECT_FALSE(offset.contiguous());
  EXPECT_TRUE(offset.consecutive()) << "row-major strides with an offset";
}

TEST(ShapeTrackerTest, MovementOpsAgreeWithTheNaiveModel) {
  Checker({4, 1, 3, 5})
      .Permute({0, 3, 1, 2})
      .Pad({{0, 0}, {1, 0}, {0, 1}, {0, 1}})
      .Reshape({4, 6, 8})
      .Permute({1, 0, 2});
  Checker({4, 3, 5}).Flip({false, true, false}).Permute({1, 0, 2}).Reshape({60}).Pad({{1, 0}}).Flip({true});
  Checker({1, 3, 2, 1}).Expand({5, 3, 2, 2}).Pad({{0, 0}, {0, 3}, {0, 0}, {0, 0}}).Reshape({5, 2, 3, 2, 2});
  Checker({10, 10}).Shrink({{2, 8}, {1, 9}}).Permute({1, 0}).Reshape({4, 2, 6}).Flip({true, false, true});
  Checker({6})
      .Pad({{3, 3}})
      .Reshape({3, 4})
      .Shrink({{1, 3}, {0, 4}})
      .Reshape({8})
      .Expand({8})
      .Reshape({2, 2, 2});
  Checker({2, 3})
      .Reshape({2, 3, 1})
      .Expand({2, 3, 4})
      .Permute({2, 0, 1})
      .Reshape({4, 6})
      .Pad({{1, 1}, {0, 2}})
      .Shrink({{0, 5}, {1, 8}});
  Checker({3, 4}).Permute({1, 0}).Reshape({2, 6}).Permute({1, 0}).Reshape({12}).Flip({true}).Reshape({3, 4});
  Checker({4, 4}).Pad({{1, 1}, {1, 1}}).Reshape({36}).Shrink({{7, 29}}).Reshape({2, 11}).Flip({false, true});
}

TEST(ShapeTrackerTest, ReshapePushesAViewOnlyWhenNeeded) {
  ShapeTracker st = *ShapeTracker::FromShape(S({3, 4}));
  EXPECT_EQ(st.Reshape(S({2, 6}))->views().size(), 1u);
  ShapeTracker t = *st.Permute({1, 0});
  ShapeTracker r = *t.Reshape(S({12}));
  EXPECT_EQ(r.views().size(), 2u);
  EXPECT_EQ(r.views()[0], t.views()[0]);
  EXPECT_EQ(r.Simplify().views().size(), 2u) << "a transpose then a flatten is not one view";
  // Reshaping back merges.
  EXPECT_EQ(r.Reshape(S({4, 3}))->Simplify().views().size(), 1u);
}

TEST(ShapeTrackerTest, InvalidArgumentsAreErrors) {
  ShapeTracker st = *ShapeTracker::FromShape(S({2, 3}));
  EXPECT_FALSE(ShapeTracker::FromShape(S({2, -3})).ok());
  EXPECT_FALSE(st.Reshape(S({7})).ok());
  EXPECT_FALSE(st.Reshape(S({-2, -3})).ok());
  EXPECT_FALSE(st.Permute({1}).ok());
  EXPECT_FALSE(st.Permute({1, 1}).ok());
  EXPECT_FALSE(st.Expand(S({4, 3})).ok());
  EXPECT_FALSE(st.Expand(S({2})).ok());
  EXPECT_FALSE(st.Shrink(P({{0, 3}, {0, 3}})).ok());
  EXPECT_FALSE(st.Shrink(P({{2, 1}, {0, 3}})).ok());
  EXPECT_FALSE(st.Pad(P({{-1, 0}, {0, 0}})).ok());
  EXPECT_FALSE(st.Pad(P({{0, 0}})).ok());
  EXPECT_FALSE(st.Flip({true}).ok());
  // Errors on a tracker with two views look at the last one.
  ShapeTracker two = *st.Permute({1, 0})->Reshape(S({6}));
  EXPECT_FALSE(two.Permute({0, 1}).ok());
  EXPECT_TRUE(two.Permute({0}).ok());
}

TEST(ShapeTrackerTest, RealStridesAndMasks) {
  ShapeTracker st = *ShapeTracker::FromShape(S({4, 3}));
  auto rs = st.RealStrides();
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_EQ(*rs[0], Sint(3));
  EXPECT_EQ(*rs[1], Sint(1));
  EXPECT_EQ(st.UnitStrideAxes(), std::vector<int64_t>{1});
  ShapeTracker padded = *st.Pad(P({{1, 0}, {0, 0}}));
  auto prs = padded.RealStrides();
  EXPECT_FALSE(prs[0].has_value()) << "axis 0 is masked";
  EXPECT_EQ(*prs[1], Sint(1));
  auto ignore = padded.RealStrides(/*ignore_valid=*/true);
  EXPECT_EQ(*ignore[0], Sint(3));
  EXPECT_TRUE(padded.AxisIsMasked(0));
  EXPECT_FALSE(padded.AxisIsMasked(1));
  ShapeTracker expanded = *(*ShapeTracker::FromShape(S({1, 3}))).Expand(S({4, 3}))->Reshape(S({4, 3}));
  EXPECT_EQ(*expanded.RealStrides()[0], Sint(0));
  // Two views: strides read from the combined index.
  ShapeTracker two = *st.Permute({1, 0})->Reshape(S({12}))->Reshape(S({3, 4}));
  ASSERT_EQ(two.views().size(), 2u);
  EXPECT_EQ(two.UnitStrideAxes(), std::vector<int64_t>{0});
  EXPECT_EQ(*two.Simplify().RealStrides()[1], Sint(3));
}

TEST(ShapeTrackerTest, RealSizeAndReduce) {
  ShapeTracker st = *ShapeTracker::FromShape(S({4, 3}));
  EXPECT_EQ(st.RealSize(), 12);
  EXPECT_EQ(st.Shrink(P({{0, 2}, {0, 3}}))->RealSize(), 6);
  EXPECT_EQ(st.Pad(P({{2, 2}, {0, 0}}))->RealSize(), 12);
  EXPECT_EQ(st.Shrink(P({{1, 3}, {1, 2}}))->RealSize(), 8);
  EXPECT_EQ((*ShapeTracker::FromShape(S({4, 0}))).RealSize(), 0);
  EXPECT_EQ(st.Reduce({1}), S({4, 1}));
  EXPECT_EQ(st.Reduce({0, 1}), S({1, 1}));
}

TEST(ShapeTrackerTest, ComposeAndInvert) {
  ShapeTracker base = *ShapeTracker::FromShape(S({3, 4}));
  ShapeTracker top = *(*ShapeTracker::FromShape(S({4, 3}))).Flip({true, false});
  ShapeTracker moved = *base.Permute({1, 0});
  ShapeTracker composed = moved.Compose(top);
  EXPECT_EQ(composed.views().size(), 1u);
  EXPECT_EQ(Evaluate(composed), Evaluate(*moved.Flip({true, false})));
  std::optional<ShapeTracker> inv = moved.Invert(S({3, 4}));
  ASSERT_TRUE(inv.has_value());
  EXPECT_TRUE(moved.Compose(*inv).contiguous()) << moved.Compose(*inv).ToString();
}

TEST(ShapeTrackerTest, ToIndexedUopsUpcastsLargeIndices) {
  ShapeTracker st = *ShapeTracker::FromShape(S({70000, 70000}));
  auto [idx, valid] = st.ToIndexedUops();
  EXPECT_EQ(idx->dtype(), dtypes::kInt64) << "70000*70000 does not fit in int32";
  ShapeTracker small = *ShapeTracker::FromShape(S({100, 100}));
  EXPECT_EQ(small.ToIndexedUops().first->dtype(), dtypes::kInt32);
  // Cached: the same result object again.
  EXPECT_EQ(small.ToIndexedUops().first, small.ToIndexedUops().first);
}

// The valid of a large arange (Tensor::Rand({512, 512})'s counter kernel, r_32768_32768_4_4): unraveled, its
// flat index is 4*g + 1048576*r + u + 262144*v, far past int32, inside a mod by 262143. Index arithmetic is
// exact, so the mod folds as tinygrad folds it, to a sum of 4*g + 4*r + u + v that fits int32; the reduce
// collapse then solves the kernel's reduction in closed form. Declining the fold for fear of int32 wraparound
// left the mod, widened the index to int64 and kept an O(n^2) loop.
TEST(ShapeTrackerTest, LargeArangeValidFoldsAsTinygradDoes) {
  absl::StatusOr<ShapeTracker> st = ShapeTracker::Parse(
      "ShapeTracker(views=(View(shape=(131073, 262143), strides=(0, 0), offset=0, "
      "mask=((0, 131073), (131071, 262143)), contiguous=False), View(shape=(32768, 32768, 4, 4), "
      "strides=(4, 1048576, 1, 262144), offset=0, mask=None, contiguous=False)))");
  ASSERT_TRUE(st.ok()) << st.status();
  const std::vector<UOpPtr> idxs = {UOp::Range(dtypes::kInt32, 32768, 0),
                                    UOp::Range(dtypes::kInt32, 32768, 1), UOp::Variable("u", 0, 3),
                                    UOp::Variable("v", 0, 3)};
  UOpPtr valid = st->ToIndexedUops(idxs).second;
  EXPECT_EQ(RenderTinygrad(valid.get()), "(((v+((u+(ridx0*4))+(ridx1*4)))<131071)!=True)");
  for (const UOp* u : valid->Toposort()) EXPECT_NE(u->dtype(), dtypes::kInt64) << RenderTinygrad(u);
}

// A view's offset past 2^31 is an int32 constant until the index is widened; widened, it keeps its value
// (folding the cast of the int32 constant would wrap it to -2147483641 and read before the buffer).
TEST(ShapeTrackerTest, WidenedIndexKeepsLargeOffsets) {
  const int64_t n = (int64_t{1} << 31) + 8;
  ShapeTracker flipped = *ShapeTracker::FromShape(S({n}))->Flip({true});
  UOpPtr idx = flipped.ToIndexedUops().first;
  EXPECT_EQ(idx->dtype(), dtypes::kInt64);
  EXPECT_EQ(idx->vmin().AsInt64(), 0);
  EXPECT_EQ(idx->vmax().AsInt64(), n - 1);
  EXPECT_EQ(RenderTinygrad(idx.get()), "(((long)(ridx0)*-1)+2147483655)");
}

TEST(ShapeTrackerTest, SymbolicVarsAndUnbind) {
  UOpPtr n = UOp::Variable("n", 1, 10);
  UOpPtr bound = n.bind(4);
  ShapeTracker st = *ShapeTracker::FromShape({Sint::FromUOp(bound), 3});
  std::vector<UOpPtr> vars = st.Vars();
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0], bound);
  auto [unbound, values] = st.Unbind();
  EXPECT_EQ(unbound.shape()[0], Sint::FromUOp(n));
  EXPECT_EQ(values.at(n), 4);
  EXPECT_EQ(unbound.Vars(), std::vector<UOpPtr>{n});
  auto [same, none] = unbound.Unbind();
  EXPECT_EQ(same, unbound);
  EXPECT_TRUE(none.empty());
  // Symbolic index: n*3 positions.
  auto [idx, valid] = unbound.ToIndexedUops();
  EXPECT_TRUE(valid->is_const());
  EXPECT_EQ(idx->vmax().AsInt64(), 29);
}

TEST(ShapeTrackerTest, ParseRoundTrips) {
  UOpPtr n = UOp::Variable("n", 1, 10);
  std::vector<ShapeTracker> trackers = {
      *ShapeTracker::FromShape(S({3})),
      *ShapeTracker::FromShape(S({})),
      *(*ShapeTracker::FromShape(S({2, 2}))).Pad(P({{0, 1}, {2, 0}}))->Flip({true, false}),
      *(*ShapeTracker::FromShape(S({3, 4}))).Permute({1, 0})->Reshape(S({12}))->Pad(P({{1, 0}})),
      *ShapeTracker::FromShape({Sint::FromUOp(n), 3}),
      *ShapeTracker::FromShape({Sint::FromUOp(n.bind(3)), Sint::FromUOp(n) * 2 + 1}),
  };
  for (const ShapeTracker& st : trackers) {
    std::string text = st.ToString();
    absl::StatusOr<ShapeTracker> back = ShapeTracker::Parse(text);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    EXPECT_EQ(*back, st) << text;
    EXPECT_EQ(back->ToString(), text);
  }
}

TEST(ShapeTrackerTest, ParseErrorsNameTheColumn) {
  struct Bad {
    std::string text;
    std::string col;
  };
  for (const Bad& b : std::vector<Bad>{
           {"ShapeTrackr(views=())", "col 1:"},
           {"ShapeTracker(views=())", "col 22:"},
           {"ShapeTracker(views=(View(shape=(3,), strides=(1,), offset=x, mask=None, contiguous=True),))",
            "col 59:"},
           {"ShapeTracker(views=(View(shape=(3,), strides=(1, 2), offset=0, mask=None, contiguous=True),))",
            ""},
           {"ShapeTracker(views=(View(shape=(3,), strides=(1,), offset=0, mask=None, contiguous=Maybe),))",
            "col 84:"},
           {"ShapeTracker(views=(View(shape=(3,), strides=(1,), offset=0, mask=None, contiguous=True),)) "
            "junk",
            "col 93:"},
       }) {
    absl::StatusOr<ShapeTracker> st = ShapeTracker::Parse(b.text);
    ASSERT_FALSE(st.ok()) << b.text;
    EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(st.status().message().find(b.col), absl::string_view::npos) << st.status();
  }
}

TEST(ShapeTrackerTest, ViewUOpRoundTripsThroughTheTextualIr) {
  UOpPtr n = UOp::Variable("n", 1, 10);
  for (const ShapeTracker& st :
       {*(*ShapeTracker::FromShape(S({3, 4}))).Permute({1, 0})->Reshape(S({12})),
        *ShapeTracker::FromShape({Sint::FromUOp(n), 3}),
        *ShapeTracker::FromShape({Sint::FromUOp(n.bind(2)), Sint::FromUOp(n) * 3})}) {
    UOpPtr view = st.ToUOp();
    EXPECT_EQ(view->op(), Ops::VIEW);
    ASSERT_NE(ShapeTrackerOf(view.get()), nullptr);
    EXPECT_EQ(*ShapeTrackerOf(view.get()), st);
    std::string text = PrintIr(view.get());
    absl::StatusOr<UOpPtr> back = ParseIrSingle(text);
    ASSERT_TRUE(back.ok()) << back.status() << "\n" << text;
    EXPECT_EQ(*back, view) << text;
  }
  EXPECT_EQ(ShapeTrackerOf(UOp::Const(dtypes::kInt32, 1).get()), nullptr);
}

TEST(ShapeTrackerTest, ViewUOpFromATextIrFile) {
  std::ifstream in("shapetracker/shapetracker_test_view.uop");
  ASSERT_TRUE(in.good());
  std::stringstream buf;
  buf << in.rdbuf();
  absl::StatusOr<std::vector<UOpPtr>> roots = ParseIr(buf.str());
  ASSERT_TRUE(roots.ok()) << roots.status();
  ASSERT_EQ(roots->size(), 1u);
  const UOpPtr& root = (*roots)[0];
  const ShapeTracker* st = nullptr;
  for (const UOp* u : root->Toposort()) {
    if (u->op() == Ops::VIEW) st = ShapeTrackerOf(u);
  }
  ASSERT_NE(st, nullptr);
  ShapeTracker want =
      *(*ShapeTracker::FromShape(S({3, 4}))).Permute({1, 0})->Reshape(S({12}))->Pad(P({{1, 2}}));
  EXPECT_EQ(*st, want);
  EXPECT_EQ(PrintIr(root.get()), buf.str()) << "the file is in canonical form";
}

}  // namespace
}  // namespace uopc
