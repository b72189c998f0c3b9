#include "shapetracker/view.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "rewrite/symbolic.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using Mask = std::vector<std::pair<int64_t, int64_t>>;

SintVec S(std::initializer_list<int64_t> v) { return SintVec(v.begin(), v.end()); }
std::optional<PairVec> M(const Mask& m) {
  PairVec out;
  for (auto [b, e] : m) out.emplace_back(b, e);
  return out;
}
std::vector<SintPair> P(const Mask& m) {
  std::vector<SintPair> out;
  for (auto [b, e] : m) out.emplace_back(b, e);
  return out;
}

// A view exactly as written (tinygrad's View(...) constructor, no canonicalization).
View Raw(SintVec shape, SintVec strides, int64_t offset, std::optional<Mask> mask, bool contiguous) {
  absl::StatusOr<View> v = View::FromFields(std::move(shape), std::move(strides), offset,
                                            mask ? M(*mask) : std::nullopt, contiguous);
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}
View Make(SintVec shape, std::optional<SintVec> strides = std::nullopt, int64_t offset = 0,
          std::optional<Mask> mask = std::nullopt) {
  absl::StatusOr<View> v =
      View::Create(std::move(shape), std::move(strides), offset, mask ? M(*mask) : std::nullopt);
  EXPECT_TRUE(v.ok()) << v.status();
  return *v;
}

std::vector<int64_t> Unflatten(const View& v, int64_t flat) {
  std::vector<int64_t> pos(v.shape().size());
  for (size_t k = pos.size(); k-- > 0;) {
    int64_t d = v.shape()[k].value();
    pos[k] = flat % d;
    flat /= d;
  }
  return pos;
}

// The buffer element a position reads, or -1 for padding, straight from the definition of a view.
int64_t Read(const View& v, const std::vector<int64_t>& pos) {
  int64_t idx = v.offset().value();
  for (size_t k = 0; k < pos.size(); ++k) {
    if (v.mask() && (pos[k] < (*v.mask())[k].first.value() || pos[k] >= (*v.mask())[k].second.value()))
      return -1;
    idx += pos[k] * v.strides()[k].value();
  }
  return idx;
}

// Reading through `bottom` then `top`: top's index, unraveled row-major in bottom's shape, read by bottom.
int64_t ReadStack(const View& bottom, const View& top, const std::vector<int64_t>& pos) {
  int64_t mid = Read(top, pos);
  if (mid < 0) return -1;
  int64_t size = 1;
  for (const Sint& s : bottom.shape()) size *= s.value();
  if (mid >= size) return -2;  // top reads outside bottom: not a valid stack
  return Read(bottom, Unflatten(bottom, mid));
}

void ExpectMergeCorrect(const View& bottom, const View& top) {
  std::optional<View> merged = bottom.Merge(top);
  if (!merged) return;
  ASSERT_EQ(merged->shape(), top.shape());
  for (int64_t p = 0; p < top.Size(); ++p) {
    std::vector<int64_t> pos = Unflatten(top, p);
    int64_t want = ReadStack(bottom, top, pos);
    if (want == -2) continue;
    EXPECT_EQ(Read(*merged, pos), want) << bottom.ToString() << " + " << top.ToString() << " at " << p;
  }
}

TEST(ViewTest, CreateCanonicalizes) {
  View v = Make(S({2, 1, 3}));
  EXPECT_EQ(v.strides(), S({3, 0, 1}));
  EXPECT_TRUE(v.contiguous());
  EXPECT_EQ(v.ToString(), "View(shape=(2, 1, 3), strides=(3, 0, 1), offset=0, mask=None, contiguous=True)");
  // A no-op mask is dropped.
  EXPECT_FALSE(Make(S({2, 2, 2}), S({4, 2, 1}), 0, Mask{{0, 2}, {0, 2}, {0, 2}}).mask().has_value());
  EXPECT_FALSE(Make(S({4, 3, 2}), S({1, 4, 10}), 0, Mask{{0, 4}, {0, 3}, {0, 2}}).mask().has_value());
  EXPECT_TRUE(Make(S({2, 3, 4}), std::nullopt, 0, Mask{{0, 2}, {0, 3}, {0, 4}}).contiguous());
  // Zero in the shape: all strides 0, contiguous.
  View z = Make(S({3, 0}), S({5, 7}), 4, Mask{{1, 2}, {0, 0}});
  EXPECT_EQ(z.ToString(), "View(shape=(3, 0), strides=(0, 0), offset=0, mask=None, contiguous=True)");
  // An axis masked to one index gets stride 0 and moves the offset there.
  View one = Make(S({4, 5}), S({5, 1}), 0, Mask{{2, 3}, {0, 5}});
  EXPECT_EQ(one.strides(), S({0, 1}));
  EXPECT_EQ(one.offset(), Sint(10));
  // An empty mask makes everything zero.
  View empty = Make(S({4, 5}), S({5, 1}), 3, Mask{{2, 2}, {0, 5}});
  EXPECT_EQ(empty.ToString(),
            "View(shape=(4, 5), strides=(0, 0), offset=0, mask=((0, 0), (0, 0)), contiguous=False)");
}

TEST(ViewTest, CreateRejectsBadArguments) {
  EXPECT_FALSE(View::Create(S({2, -1})).ok());
  EXPECT_FALSE(View::Create(S({2, 3}), S({1})).ok());
  EXPECT_FALSE(View::Create(S({2, 3}), std::nullopt, 0, M({{0, 1}})).ok());
  absl::Status s = View::Create(S({2, -1})).status();
  EXPECT_NE(s.message().find("negative"), absl::string_view::npos) << s;
}

TEST(ViewTest, FromFieldsKeepsFieldsButRejectsNonsense) {
  View raw = Raw(S({2, 3}), S({3, 1}), 0, std::nullopt, false);
  EXPECT_FALSE(raw.contiguous()) << "exactly as given";
  EXPECT_FALSE(View::FromFields(S({0, 3}), S({1, 0}), 0, std::nullopt, true).ok());
  EXPECT_FALSE(View::FromFields(S({2}), S({1, 1}), 0, std::nullopt, false).ok());
  EXPECT_FALSE(View::FromFields(S({-2}), S({1}), 0, std::nullopt, false).ok());
  EXPECT_TRUE(View::FromFields(S({0, 3}), S({0, 0}), 0, std::nullopt, true).ok());
}

TEST(ViewTest, EmptyMaskKeepsContiguity) {
  EXPECT_EQ(Make(S({1, 1, 1, 4}), S({0, 0, 0, 1})).contiguous(),
            Make(S({1, 1, 1, 4}), S({0, 0, 0, 1}), 0, Mask{{0, 1}, {0, 1}, {0, 1}, {0, 4}}).contiguous());
}

TEST(ViewTest, MinifyMergesZeroStridedAndContiguousAxes) {
  View target = Make(S({2, 2}), S({30, 2}), 7);
  for (const auto& [shape, strides] : std::vector<std::pair<SintVec, SintVec>>{
           {S({2, 1, 2}), S({30, 0, 2})},
           {S({1, 2, 2}), S({0, 30, 2})},
           {S({2, 2, 1}), S({30, 2, 0})},
           {S({2, 1, 1, 2}), S({30, 0, 0, 2})},
           {S({1, 1, 2, 2}), S({0, 0, 30, 2})},
           {S({1, 2, 1, 2}), S({0, 30, 0, 2})},
       }) {
    EXPECT_EQ(Make(shape, strides, 7).Minify(), target) << TupleString(shape);
  }
  EXPECT_EQ(Make(S({2, 3, 4})).Minify().shape(), S({24}));
  EXPECT_EQ(Make(S({2, 3, 4}), S({0, 4, 1})).Minify().shape(), S({2, 12}));
  EXPECT_EQ(Make(S({2, 3, 4}), S({0, 0, 0})).Minify().shape(), S({24}));
  // Padded: (1,2) padded ((1,0),(0,1)) minifies to one axis of 6.
  EXPECT_EQ(Make(S({2, 3}), S({0, 1}), -1, Mask{{1, 2}, {0, 2}}).Minify().shape(), S({6}));
}

TEST(ViewTest, ReshapeAllInvalid) {
  absl::StatusOr<std::optional<View>> v =
      Make(S({4, 5}), std::nullopt, 0, Mask{{0, 0}, {0, 0}}).Reshape(S({20}));
  ASSERT_TRUE(v.ok());
  ASSERT_TRUE(v->has_value());
  EXPECT_EQ(**v, Make(S({20}), std::nullopt, 0, Mask{{0, 0}}));
}

TEST(ViewTest, ReshapeMaskedAndStrided) {
  // tinygrad: from_shape((4,)).pad(((2,2),)).reshape((4,2)).
  View padded = *Make(S({4})).Pad(P({{2, 2}}));
  EXPECT_EQ(padded.ToString(), "View(shape=(8,), strides=(1,), offset=-2, mask=((2, 6),), contiguous=False)");
  auto r = padded.Reshape(S({4, 2}));
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->ToString(),
            "View(shape=(4, 2), strides=(2, 1), offset=-2, mask=((1, 3), (0, 2)), contiguous=False)");
  // A pad that cuts across the new rows cannot be reshaped.
  View odd = *Make(S({4})).Pad(P({{1, 1}}));
  auto r2 = odd.Reshape(S({3, 2}));
  ASSERT_TRUE(r2.ok());
  EXPECT_FALSE(r2->has_value());
  // A permuted view cannot be flattened as one view, but splitting an axis works.
  View t = *Make(S({3, 4})).Permute({1, 0});
  auto flat = t.Reshape(S({12}));
  ASSERT_TRUE(flat.ok());
  EXPECT_FALSE(flat->has_value());
  auto split = t.Reshape(S({2, 2, 3}));
  ASSERT_TRUE(split.ok() && split->has_value());
  EXPECT_EQ((*split)->strides(), S({2, 1, 4}));
  // Expanded axes stay stride 0 when split.
  View e = *Make(S({1, 3})).Expand(S({4, 3}));
  auto es = e.Reshape(S({2, 2, 3}));
  ASSERT_TRUE(es.ok() && es->has_value());
  EXPECT_EQ((*es)->strides(), S({0, 0, 1}));
}

TEST(ViewTest, ReshapeErrors) {
  View v = Make(S({3, 4}));
  EXPECT_FALSE(v.Reshape(S({5, 2})).ok());
  EXPECT_FALSE(v.Reshape(S({-3, -4})).ok());
  absl::Status s = v.Reshape(S({5, 2})).status();
  EXPECT_NE(s.message().find("(3, 4)"), absl::string_view::npos) << s;
}

TEST(ViewTest, MovementOps) {
  View v = Make(S({2, 3, 4}));
  EXPECT_EQ(v.Permute({2, 0, 1})->ToString(),
            "View(shape=(4, 2, 3), strides=(1, 12, 4), offset=0, mask=None, contiguous=False)");
  EXPECT_EQ(v.Flip({false, true, true})->ToString(),
            "View(shape=(2, 3, 4), strides=(12, -4, -1), offset=11, mask=None, contiguous=False)");
  EXPECT_EQ(v.Shrink(P({{0, 2}, {1, 3}, {1, 2}}))->ToString(),
            "View(shape=(2, 2, 1), strides=(12, 4, 0), offset=5, mask=None, contiguous=False)");
  EXPECT_EQ(v.Pad(P({{0, 0}, {1, 1}, {0, 2}}))->ToString(),
            "View(shape=(2, 5, 6), strides=(12, 4, 1), offset=-4, mask=((0, 2), (1, 4), (0, 4)), "
            "contiguous=False)");
  EXPECT_EQ(*v.Pad(P({{0, 0}, {0, 0}, {0, 0}})), v);
  View one = Make(S({1, 3}));
  EXPECT_EQ(one.Expand(S({5, 3}))->ToString(),
            "View(shape=(5, 3), strides=(0, 1), offset=0, mask=None, contiguous=False)");
  // Expanding a padded size-1 axis: masked everywhere or nowhere.
  View pad1 = *Make(S({1, 3})).Pad(P({{1, 0}, {0, 0}}));
  View shr = *pad1.Shrink(P({{0, 1}, {0, 3}}));
  EXPECT_EQ(shr.Expand(S({4, 3}))->ToString(),
            "View(shape=(4, 3), strides=(0, 0), offset=0, mask=((0, 0), (0, 0)), contiguous=False)");
  // Flipping a masked axis mirrors the mask.
  View fm = *Make(S({5})).Pad(P({{2, 0}}))->Flip({true});
  EXPECT_EQ(fm.ToString(), "View(shape=(7,), strides=(-1,), offset=4, mask=((0, 5),), contiguous=False)");
}

TEST(ViewTest, MovementOpErrors) {
  View v = Make(S({2, 3}));
  EXPECT_FALSE(v.Permute({0}).ok());
  EXPECT_FALSE(v.Permute({0, 0}).ok());
  EXPECT_FALSE(v.Permute({0, 2}).ok());
  EXPECT_FALSE(v.Permute({1, -1}).ok());
  EXPECT_FALSE(v.Expand(S({4, 3})).ok()) << "axis 0 is 2, not 1";
  EXPECT_FALSE(v.Expand(S({2, 3, 1})).ok());
  EXPECT_FALSE(Make(S({1, 3})).Expand(S({-2, 3})).ok());
  EXPECT_FALSE(v.Shrink(P({{0, 3}, {0, 3}})).ok());
  EXPECT_FALSE(v.Shrink(P({{1, 0}, {0, 3}})).ok());
  EXPECT_FALSE(v.Shrink(P({{-1, 1}, {0, 3}})).ok());
  EXPECT_FALSE(v.Shrink(P({{0, 1}})).ok());
  EXPECT_FALSE(v.Pad(P({{0, 1}})).ok());
  EXPECT_FALSE(v.Pad(P({{0, -1}, {0, 0}})).ok());
  EXPECT_FALSE(v.Flip({true}).ok());
  EXPECT_FALSE(v.Flip({true, false, true}).ok());
  // Entries past the rank that flip nothing are ignored, as tinygrad does.
  ASSERT_TRUE(v.Flip({true, false, false}).ok());
  EXPECT_EQ(*v.Flip({true, false, false}), *v.Flip({true, false}));
  absl::Status s = v.Permute({0, 0}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("permut"), absl::string_view::npos) << s;
}

TEST(ViewTest, MergeCasesFromTinygrad) {
  struct Case {
    View v0, v1;
    std::optional<View> want;
  };
  std::vector<Case> cases = {
      {Raw(S({1, 1, 5, 8}), S({0, 0, 5, 1}), -3, Mask{{0, 1}, {0, 1}, {0, 5}, {3, 8}}, false),
       Raw(S({1, 1, 2, 2}), S({0, 0, 8, 1}), 3, std::nullopt, false),
       Raw(S({1, 1, 2, 2}), S({0, 0, 5, 1}), 0, std::nullopt, false)},
      {Raw(S({3, 3, 5, 3}), S({27, 9, 3, 1}), -6, Mask{{0, 3}, {0, 3}, {2, 4}, {1, 3}}, false),
       Raw(S({3, 3, 2, 2}), S({45, 15, 3, 1}), 7, std::nullopt, false),
       Raw(S({3, 3, 2, 2}), S({27, 9, 3, 1}), 1, std::nullopt, false)},
      {Raw(S({3, 3, 5, 3}), S({27, 9, -3, 1}), 6, Mask{{0, 3}, {0, 3}, {0, 2}, {0, 2}}, false),
       Raw(S({3, 3, 2, 2}), S({45, 15, -3, 1}), 3, std::nullopt, false),
       Raw(S({3, 3, 2, 2}), S({27, 9, 3, 1}), 3, std::nullopt, false)},
      {Raw(S({3, 3, 4, 4}), S({27, 9, 3, 1}), -5, Mask{{0, 3}, {0, 3}, {2, 4}, {0, 2}}, false),
       Raw(S({3, 3, 4, 2}), S({48, 16, 4, 1}), 0, std::nullopt, false),
       Raw(S({3, 3, 4, 2}), S({27, 9, 3, 1}), -5, Mask{{0, 3}, {0, 3}, {2, 4}, {0, 2}}, false)},
      {Raw(S({3, 3, 5, 3}), S({27, 9, -3, 1}), 6, Mask{{0, 3}, {0, 3}, {0, 2}, {1, 3}}, false),
       Raw(S({3, 3, 3, 3}), S({45, 15, 3, 1}), 6, std::nullopt, false),
       Raw(S({3, 3, 3, 3}), S({0, 0, 0, 0}), 0, Mask{{0, 0}, {0, 0}, {0, 0}, {0, 0}}, false)},
      {Raw(S({1, 1, 6, 5}), S({0, 0, 5, 1}), -5, Mask{{0, 1}, {0, 1}, {1, 6}, {0, 5}}, false),
       Raw(S({1, 1, 6, 3}), S({0, 0, 5, -1}), 3, std::nullopt, false),
       Raw(S({1, 1, 6, 3}), S({0, 0, 5, -1}), -2, Mask{{0, 1}, {0, 1}, {1, 6}, {0, 3}}, false)},
      {Raw(S({2}), S({0}), 0, Mask{{1, 2}}, false), Raw(S({1}), S({0}), 0, std::nullopt, true),
       Raw(S({1}), S({0}), 0, Mask{{0, 0}}, false)},
      {Raw(S({1, 1, 10, 7}), S({0, 0, 5, 1}), -15, Mask{{0, 1}, {0, 1}, {3, 8}, {0, 5}}, false),
       Raw(S({0, 0, 0, 0}), S({0, 0, 0, 0}), 0, std::nullopt, true),
       Raw(S({0, 0, 0, 0}), S({0, 0, 0, 0}), 0, std::nullopt, true)},
      {Raw(S({2, 4}), S({0, 1}), 4, Mask{{0, 1}, {0, 4}}, false),
       Raw(S({1, 4}), S({0, 1}), 4, std::nullopt, false),
       Raw(S({1, 4}), S({0, 0}), 0, Mask{{0, 0}, {0, 0}}, false)},
  };
  for (const Case& c : cases) {
    std::optional<View> got = c.v0.Merge(c.v1);
    ASSERT_TRUE(got.has_value()) << c.v0.ToString() << " + " << c.v1.ToString();
    EXPECT_EQ(*got, *c.want) << got->ToString();
    ExpectMergeCorrect(c.v0, c.v1);
  }
}

TEST(ViewTest, HardMergesAreCorrectWhenTheyHappen) {
  // tinygrad cannot merge these (its expected failures); whatever Merge gives must still be right.
  std::vector<std::pair<View, View>> cases = {
      {Raw(S({2, 4}), S({2, 1}), -2, Mask{{0, 2}, {2, 4}}, false),
       Raw(S({2, 4, 2, 2}), S({4, 0, -2, -1}), 3, std::nullopt, false)},
      {Raw(S({5, 10, 12}), S({100, 1, 10}), -20, Mask{{0, 5}, {0, 10}, {2, 12}}, false),
       Raw(S({10, 6, 5, 2, 2}), S({12, 2, 120, 1, 0}), 0, std::nullopt, false)},
      {Raw(S({8, 7, 3}), S({1, 12, -4}), 6, Mask{{2, 6}, {0, 7}, {0, 3}}, false),
       Raw(S({4, 2, 6, 2, 1}), S({42, 21, 3, 1, 0}), 4, std::nullopt, false)},
      {Raw(S({7, 21, 3}), S({54, 3, 1}), -9, Mask{{0, 6}, {3, 21}, {0, 3}}, false),
       Raw(S({5, 3, 3, 7}), S({63, 1, 3, 9}), 63, std::nullopt, false)},
      {Raw(S({5, 1, 24}), S({20, 0, 1}), -2, Mask{{0, 5}, {0, 1}, {2, 22}}, false),
       Raw(S({12, 2, 5, 2, 1}), S({2, 1, 24, 0, 0}), 0, std::nullopt, false)},
  };
  for (const auto& [v0, v1] : cases) ExpectMergeCorrect(v0, v1);
}

TEST(ViewTest, InvertUndoesPermuteFlipAndShrink) {
  View base = Make(S({3, 4}));
  View moved = *base.Permute({1, 0})->Flip({true, false});
  std::optional<View> inv = moved.Invert(S({3, 4}));
  ASSERT_TRUE(inv.has_value());
  std::optional<View> round = moved.Merge(*inv);
  ASSERT_TRUE(round.has_value());
  EXPECT_TRUE(round->contiguous()) << round->ToString();
  // An expand has no inverse.
  View expanded = *Make(S({1, 4})).Expand(S({3, 4}));
  EXPECT_FALSE(expanded.Invert(S({1, 4})).has_value());
}

TEST(ViewTest, ToIndexedUopsMatchesTheDefinition) {
  View v = *Make(S({3, 4})).Pad(P({{1, 0}, {0, 2}}))->Flip({false, true})->Permute({1, 0});
  std::vector<UOpPtr> idxs;
  for (size_t k = 0; k < v.shape().size(); ++k) {
    idxs.push_back(UOp::Variable("i" + std::to_string(k), 0, v.shape()[k].value() - 1));
  }
  auto [idx, valid] = v.ToIndexedUops(absl::MakeConstSpan(idxs));
  EXPECT_EQ(valid->dtype(), dtypes::kBool);
  for (int64_t p = 0; p < v.Size(); ++p) {
    std::vector<int64_t> pos = Unflatten(v, p);
    absl::flat_hash_map<std::string, int64_t> vals{{"i0", pos[0]}, {"i1", pos[1]}};
    bool ok = SymInfer(valid.get(), vals)->AsBool();
    int64_t want = Read(v, pos);
    EXPECT_EQ(ok, want >= 0) << p;
    if (!ok) continue;
    EXPECT_EQ(SymInfer(idx.get(), vals)->AsInt64(), want) << p;
  }
  // Default indices are RANGEs, one per axis.
  auto [ridx, rvalid] = Make(S({3, 4})).ToIndexedUops();
  int ranges = 0;
  for (const UOp* u : ridx->Toposort()) ranges += u->op() == Ops::RANGE;
  EXPECT_EQ(ranges, 2);
  EXPECT_TRUE(rvalid->is_const());
}

TEST(ViewTest, SymbolicShapes) {
  UOpPtr n = UOp::Variable("n", 1, 10);
  Sint sn = Sint::FromUOp(n);
  View v = *View::Create({sn, 4});
  EXPECT_TRUE(v.contiguous());
  EXPECT_EQ(v.strides()[0], Sint(4));
  EXPECT_EQ(v.Size(), 40);
  EXPECT_EQ(
      v.ToString(),
      "View(shape=(UOp(Ops.DEFINE_VAR, dtypes.int, arg=('n', 1, 10), src=()), 4), strides=(4, 1), offset=0, "
      "mask=None, contiguous=True)");
  View t = *Make(S({1, 4})).Expand({sn, 4});
  EXPECT_EQ(t.strides(), S({0, 1}));
  // Bound variables: vars and unbind.
  UOpPtr bound = n.bind(3);
  View b = *View::Create({Sint::FromUOp(bound), 4});
  std::vector<UOpPtr> vars = b.Vars();
  ASSERT_EQ(vars.size(), 1u);
  EXPECT_EQ(vars[0], bound);
  auto [unbound, values] = b.Unbind();
  EXPECT_EQ(unbound.shape()[0], sn);
  ASSERT_EQ(values.size(), 1u);
  EXPECT_EQ(values.at(n), 3);
  // A contiguous view reshapes to a symbolic shape.
  Sint m = Sint::FromUOp(UOp::Variable("m", 1, 12));
  auto r = Make(S({12})).Reshape({m});
  ASSERT_TRUE(r.ok() && r->has_value());
  EXPECT_EQ((*r)->shape()[0], m);
  EXPECT_TRUE((*r)->contiguous());
  // A non-contiguous one only to a symbolic shape of the same rank whose bound values match.
  View perm = *Make(S({4, 3})).Permute({1, 0});
  EXPECT_FALSE(perm.Reshape({m}).ok());
  Sint bound4 = Sint::FromUOp(UOp::Variable("k", 1, 8).bind(4));
  auto same = perm.Reshape({3, bound4});
  ASSERT_TRUE(same.ok()) << same.status();
  ASSERT_TRUE(same->has_value());
  EXPECT_EQ((*same)->strides(), perm.strides());
  EXPECT_FALSE(perm.Reshape({3, Sint::FromUOp(UOp::Variable("k", 1, 8).bind(5))}).ok());
}

}  // namespace
}  // namespace uopc
