#include "rewrite/valid.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "rewrite/symbolic.h"
#include "uop/uop.h"

namespace uopc {
namespace {

int64_t Eval(const UOpPtr& u, const absl::flat_hash_map<std::string, int64_t>& values) {
  absl::StatusOr<ConstValue> v = SymInfer(u.get(), values);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? v->AsInt64() : -999999;
}

TEST(SplitUopTest, FlattensChainsOfTheSeparator) {
  UOpPtr a = UOp::Variable("a", 0, 5), b = UOp::Variable("b", 0, 5), c = UOp::Variable("c", 0, 5);
  std::vector<UOpPtr> terms = SplitUop((a + b) + (c * 2), Ops::ADD);
  ASSERT_EQ(terms.size(), 3u);
  EXPECT_EQ(terms[0], a);
  EXPECT_EQ(terms[1], b);
  EXPECT_EQ(terms[2], c * 2);
  std::vector<UOpPtr> single = SplitUop(c * 2, Ops::ADD);
  ASSERT_EQ(single.size(), 1u);
  EXPECT_EQ(single[0], c * 2);
}

TEST(ParseValidTest, ParsesBothForms) {
  UOpPtr x = UOp::Variable("x", 0, 10);
  std::optional<ValidClause> upper = ParseValid(x.lt(5));
  ASSERT_TRUE(upper.has_value());
  EXPECT_EQ(upper->expr, x);
  EXPECT_TRUE(upper->is_upper);
  EXPECT_EQ(upper->bound, 4);

  std::optional<ValidClause> lower = ParseValid(x.ge(3));
  ASSERT_TRUE(lower.has_value());
  EXPECT_EQ(lower->expr, x);
  EXPECT_FALSE(lower->is_upper);
  EXPECT_EQ(lower->bound, 3);

  EXPECT_FALSE(ParseValid(x.ne(3)).has_value());
  EXPECT_FALSE(ParseValid(x.lt(UOp::Variable("y", 0, 3))).has_value());
  UOpPtr f = UOp::New(Ops::DEFINE_VAR, dtypes::kFloat32, {}, Arg{Arg("f"), Arg(0.0), Arg(1.0)});
  EXPECT_FALSE(ParseValid(f.lt(f.const_like(0.5))).has_value());
}

TEST(UopGivenValidTest, RemovesDivAndModUnderTheValid) {
  UOpPtr x = UOp::Variable("x", 0, 9);
  UOpPtr valid = x.lt(4);
  UOpPtr idx = Simplify(x.idiv(4) * 100 + x % 4);
  UOpPtr out = UopGivenValid(valid, idx);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(out, x) << "x//4 is 0 and x%4 is x when x < 4";
  for (int64_t v = 0; v < 4; ++v) EXPECT_EQ(Eval(out, {{"x", v}}), Eval(idx, {{"x", v}}));
}

TEST(UopGivenValidTest, LowerAndUpperBoundTogether) {
  UOpPtr x = UOp::Variable("x", 0, 20);
  UOpPtr valid = x.ge(8).bitwise_and(x.lt(12));
  UOpPtr idx = Simplify((x + -8).idiv(4) * 7 + x);
  UOpPtr out = UopGivenValid(valid, idx);
  ASSERT_NE(out, nullptr);
  EXPECT_NE(out, idx);
  for (int64_t v = 8; v < 12; ++v) EXPECT_EQ(Eval(out, {{"x", v}}), Eval(idx, {{"x", v}})) << v;
}

TEST(UopGivenValidTest, SingleValueBecomesAConstant) {
  UOpPtr x = UOp::Variable("x", 0, 20);
  UOpPtr valid = x.ge(3).bitwise_and(x.lt(4));
  UOpPtr out = UopGivenValid(valid, x * 2 + 1);
  ASSERT_NE(out, nullptr);
  ASSERT_TRUE(out->is_const());
  EXPECT_EQ(out->const_value().AsInt64(), 7);
}

TEST(UopGivenValidTest, ImpossibleValidGivesNull) {
  UOpPtr x = UOp::Variable("x", 0, 20);
  EXPECT_EQ(UopGivenValid(x.lt(3).bitwise_and(x.ge(5)), x), nullptr);
  // Outside the variable's own range too.
  EXPECT_EQ(UopGivenValid(x.ge(30), x), nullptr);
}

TEST(UopGivenValidTest, UnparsableValidLeavesTheUopAlone) {
  UOpPtr x = UOp::Variable("x", 0, 20), y = UOp::Variable("y", 0, 20);
  UOpPtr idx = x.idiv(4);
  EXPECT_EQ(UopGivenValid(x.lt(4).bitwise_and(x.ne(y)), idx), idx);
}

TEST(UopGivenValidTest, SimplexClause) {
  // a + b >= 1 with a, b >= 0: in every branch where one of them is at least 1, (a+b-1)//big is 0.
  UOpPtr a = UOp::Variable("a", 0, 3), b = UOp::Variable("b", 0, 3);
  UOpPtr valid = (a + b).ge(1);
  UOpPtr idx = Simplify((a + b + -1).idiv(16));
  UOpPtr out = UopGivenValid(valid, idx);
  ASSERT_NE(out, nullptr);
  EXPECT_TRUE(out->is_const()) << "got a non-constant";
  for (int64_t va = 0; va <= 3; ++va) {
    for (int64_t vb = 0; vb <= 3; ++vb) {
      if (va + vb < 1) continue;
      EXPECT_EQ(Eval(out, {{"a", va}, {"b", vb}}), Eval(idx, {{"a", va}, {"b", vb}}));
    }
  }
}

TEST(SimplifyValidTest, LaterClauseSimplifiedByEarlierOne) {
  UOpPtr x = UOp::Variable("x", 0, 20);
  // (x//4 < 1) is implied by x < 3; the clause whose expr (x) appears in the other goes first.
  UOpPtr valid = x.idiv(4).lt(1).bitwise_and(x.lt(3));
  UOpPtr out = SimplifyValid(valid);
  ASSERT_NE(out, nullptr);
  for (int64_t v = 0; v <= 20; ++v) {
    EXPECT_EQ(Eval(out, {{"x", v}}), Eval(valid, {{"x", v}})) << v;
  }
  std::vector<UOpPtr> clauses = SplitUop(out, Ops::AND);
  ASSERT_EQ(clauses.size(), 2u);
  EXPECT_EQ(clauses[0], x.lt(3));
  EXPECT_TRUE(clauses[1]->is_const());
}

// A stride-2 transposed convolution's load of an odd tap: its valid holds `(x % 2) < 1` for an x that is odd
// wherever the other clauses hold, and non-negative there too, so the clause is false. tinygrad folds x % 2
// to 1 with floor division; C's % agrees only for x >= 0, which here follows from a + b >= 2 and c >= 1 (x's
// own range starts at -113).
TEST(SimplifyValidTest, ModClauseFoldsWhereTheOtherClausesKeepItsDividendNonNegative) {
  UOpPtr a = UOp::Variable("a", 0, 55), b = UOp::Variable("b", 0, 3), r = UOp::Variable("r", 0, 2),
         c = UOp::Variable("c", 0, 13);
  UOpPtr x = Simplify(a * 56 + b * 56 + r * 3136 + c * 4 + -113);
  ASSERT_LT(x->vmin().AsInt64(), 0);
  UOpPtr inside = (a + b).ge(2).bitwise_and((a + b).lt(57));
  UOpPtr valid = inside.bitwise_and(c.ge(1)).bitwise_and((x % 2).lt(1));
  UOpPtr out = SimplifyValid(valid);
  ASSERT_NE(out, nullptr);
  UOpPtr folded = Simplify(out);
  ASSERT_TRUE(folded->is_const()) << "the odd tap's clause is false";
  EXPECT_FALSE(folded->const_value().AsBool());

  // Without c >= 1, x is -1 at a + b = 2, r = c = 0, where C's -1 % 2 < 1 holds: the clause stays.
  UOpPtr open = inside.bitwise_and((x % 2).lt(1));
  UOpPtr kept = SimplifyValid(open);
  UOpPtr result = kept ? kept : open;
  for (int64_t va : {0, 1, 2, 30, 55}) {
    for (int64_t vb = 0; vb <= 3; ++vb) {
      for (int64_t vr = 0; vr <= 2; ++vr) {
        for (int64_t vc = 0; vc <= 13; ++vc) {
          absl::flat_hash_map<std::string, int64_t> at = {{"a", va}, {"b", vb}, {"r", vr}, {"c", vc}};
          EXPECT_EQ(Eval(result, at), Eval(open, at)) << va << " " << vb << " " << vr << " " << vc;
        }
      }
    }
  }
  EXPECT_EQ(Eval(result, {{"a", 2}, {"b", 0}, {"r", 0}, {"c", 0}}), 1);
}

TEST(SimplifyValidTest, NothingToDoGivesNull) {
  UOpPtr x = UOp::Variable("x", 0, 20), y = UOp::Variable("y", 0, 20);
  EXPECT_EQ(SimplifyValid(x.lt(3).bitwise_and(y.lt(5))), nullptr);
  EXPECT_EQ(SimplifyValid(x.lt(3)), nullptr);
}

}  // namespace
}  // namespace uopc
