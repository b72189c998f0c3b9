#include "rewrite/upat.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using Binding = std::map<std::string, const UOp*>;

// Every match of `p` on `n`, in the order a callback sees them (the callback declines each one).
std::vector<Binding> AllMatches(const UPat& p, const UOpPtr& n) {
  std::vector<Binding> out;
  Rule rule(RuleSpec{p, [&out](const Match& m) -> UOpPtr {
                       Binding b;
                       for (const std::string& name : m.names())
                         b[name] = m.has(name) ? m[name].get() : nullptr;
                       out.push_back(b);
                       return nullptr;
                     }});
  EXPECT_EQ(rule.Apply(n), nullptr);
  return out;
}

bool Matches(const UPat& p, const UOpPtr& n) { return !AllMatches(p, n).empty(); }

class UPatTest : public ::testing::Test {
 protected:
  UOpPtr a = UOp::Variable("a", 0, 10);
  UOpPtr b = UOp::Variable("b", 0, 10);
  UOpPtr c = UOp::Variable("c", 0, 10);
  UOpPtr zero = UOp::Const(dtypes::kInt32, 0);
  UOpPtr two = UOp::Const(dtypes::kInt32, 2);
  UPat x = UPat::Var("x");
  UPat y = UPat::Var("y");
};

TEST_F(UPatTest, VarMatchesAnythingAndCapturesIt) {
  EXPECT_THAT(AllMatches(x, a), ::testing::ElementsAre(Binding{{"x", a.get()}}));
  EXPECT_THAT(AllMatches(x, a + b), ::testing::ElementsAre(Binding{{"x", (a + b).get()}}));
  EXPECT_TRUE(Matches(UPat(), two));
}

TEST_F(UPatTest, OpAndOpSet) {
  EXPECT_TRUE(Matches(UPat(Ops::ADD), a + b));
  EXPECT_FALSE(Matches(UPat(Ops::MUL), a + b));
  EXPECT_TRUE(Matches(UPat(OpSet{Ops::MUL, Ops::ADD}), a + b));
  EXPECT_TRUE(Matches(UPat(groups::kBinary), a * b));
  EXPECT_FALSE(Matches(UPat(groups::kUnary), a * b));
}

TEST_F(UPatTest, DTypeScalarMatchesItsVectorsButNotPointers) {
  UOpPtr f = UOp::Const(dtypes::kFloat32, 1.0);
  UOpPtr f4 = UOp::Vectorize({f, f, f, f});
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, Arg(0));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kFloat32), f));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kFloat32), f4));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kFloat32), buf));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kInt32), f));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kFloat32.Ptr(16)), buf));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kFloat32.Ptr(8)), buf));
  // A vector dtype in the set matches exactly that vector.
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kFloat32.Vec(4)), f4));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kFloat32.Vec(2)), f4));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kFloat32.Vec(4)), f));
}

TEST_F(UPatTest, DTypeGroups) {
  UOpPtr i8 = UOp::Const(dtypes::kInt8, 1);
  UOpPtr u32 = UOp::Const(dtypes::kUInt32, 1);
  UOpPtr h = UOp::Const(dtypes::kFloat16, 1.0);
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kInts), i8));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kInts), u32));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kInts), h));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kSInts), i8));
  EXPECT_FALSE(Matches(UPat::Var("x", dtypes::kSInts), u32));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kUInts), u32));
  EXPECT_TRUE(Matches(UPat::Var("x", dtypes::kFloats), h));
  EXPECT_TRUE(Matches(UPat::Var("x", {dtypes::kInt8, dtypes::kFloat16}), h));
  EXPECT_FALSE(Matches(UPat::Var("x", {dtypes::kInt8, dtypes::kFloat32}), h));
}

TEST_F(UPatTest, ConstComparesLikePythonNumbers) {
  UPat any_zero = UPat::Const({}, 0);
  EXPECT_TRUE(Matches(any_zero, zero));
  EXPECT_TRUE(Matches(any_zero, UOp::Const(dtypes::kFloat32, 0.0)));
  EXPECT_TRUE(Matches(any_zero, UOp::Const(dtypes::kFloat32, -0.0)));
  EXPECT_TRUE(Matches(any_zero, UOp::Const(dtypes::kBool, false)));
  EXPECT_FALSE(Matches(any_zero, UOp::Const(dtypes::kBool, true)));
  EXPECT_FALSE(Matches(any_zero, two));
  EXPECT_FALSE(Matches(any_zero, a));
  EXPECT_TRUE(Matches(UPat::Const({}, 1.0), UOp::Const(dtypes::kInt64, 1)));
  EXPECT_TRUE(Matches(UPat::Const({}, true), UOp::Const(dtypes::kInt32, 1)));
  EXPECT_FALSE(Matches(UPat::Const(dtypes::kInt32, 0), UOp::Const(dtypes::kFloat32, 0.0)));
  // uint64 values above 2^63 are stored as bit patterns; the pattern compares values.
  UOpPtr big = UOp::Const(dtypes::kUInt64, ConstValue::Int(absl::int128(0xFFFFFFFFFFFFFFFFull)));
  EXPECT_TRUE(Matches(UPat::Const({}, 0xFFFFFFFFFFFFFFFFull), big));
  EXPECT_FALSE(Matches(UPat::Const({}, -1), big));
  UOpPtr nan = UOp::Const(dtypes::kFloat32, std::nan(""));
  EXPECT_FALSE(Matches(UPat::Const({}, std::nan("")), nan));  // NaN != NaN, as in Python
}

TEST_F(UPatTest, CvarIsConstOrVconst) {
  UOpPtr v = UOp::VConst(dtypes::kInt32.Vec(2), {ConstValue::Int(1), ConstValue::Int(2)});
  ASSERT_EQ(v->op(), Ops::VCONST);
  EXPECT_TRUE(Matches(UPat::Cvar("c"), two));
  EXPECT_TRUE(Matches(UPat::Cvar("c"), v));
  EXPECT_FALSE(Matches(UPat::Cvar("c", {}, /*vec=*/false), v));
  EXPECT_FALSE(Matches(UPat::Cvar("c"), a));
  EXPECT_FALSE(Matches(UPat::Cvar("c", dtypes::kFloat32), two));
}

TEST_F(UPatTest, ArgComparesLikePython) {
  UOpPtr gep = UOp::New(Ops::GEP, dtypes::kInt32, {UOp::Vectorize({a, b})}, Arg::IntTuple({1}));
  EXPECT_TRUE(Matches(UPat(Ops::GEP).arg(Arg::IntTuple({1})), gep));
  EXPECT_TRUE(Matches(UPat(Ops::GEP).arg(Arg(Arg::Tuple{Arg(1.0)})), gep));  // (1.0,) == (1,)
  EXPECT_FALSE(Matches(UPat(Ops::GEP).arg(Arg::IntTuple({0})), gep));
  EXPECT_TRUE(Matches(x.gep(1), gep));
  EXPECT_FALSE(Matches(x.gep(0), gep));
  EXPECT_TRUE(Matches(x.gep(), gep));
  UOpPtr r = UOp::New(Ops::REDUCE_AXIS, dtypes::kInt32, {a}, Arg{Arg(Ops::ADD), Arg::IntTuple({0})});
  EXPECT_TRUE(Matches(UPat(Ops::REDUCE_AXIS).arg(Arg{Arg(Ops::ADD), Arg::IntTuple({0})}), r));
  EXPECT_FALSE(Matches(UPat(Ops::REDUCE_AXIS).arg(Arg{Arg(Ops::MAX), Arg::IntTuple({0})}), r));
}

TEST_F(UPatTest, ExactTupleKeepsOrder) {
  UPat lt = x.lt(UPat::Cvar("c"));
  EXPECT_TRUE(Matches(lt, a.lt(two)));
  EXPECT_FALSE(Matches(lt, two.lt(a)));
  EXPECT_TRUE(Matches(x.idiv(UPat::Cvar("c")), a.idiv(two)));
  EXPECT_FALSE(Matches(x.idiv(UPat::Cvar("c")), two.idiv(a)));
  // Sources must have exactly the tuple's length.
  EXPECT_FALSE(Matches(UPat(Ops::SINK).src(x), UOp::Sink({a, b})));
  EXPECT_TRUE(Matches(UPat(Ops::SINK).src(x, y), UOp::Sink({a, b})));
  EXPECT_FALSE(Matches(UPat(Ops::SINK).src(x, y), UOp::Sink({a})));
}

TEST_F(UPatTest, CommutativeOperatorsTryBothOrders) {
  UPat p = x + UPat::Cvar("c");
  EXPECT_THAT(AllMatches(p, a + two), ::testing::ElementsAre(Binding{{"x", a.get()}, {"c", two.get()}}));
  EXPECT_THAT(AllMatches(p, two + a), ::testing::ElementsAre(Binding{{"x", a.get()}, {"c", two.get()}}));
  // Both orders match when both sources are constants: first the given order, then the swapped one.
  UOpPtr three = UOp::Const(dtypes::kInt32, 3);
  EXPECT_THAT(AllMatches(p, two + three),
              ::testing::ElementsAre(Binding{{"x", two.get()}, {"c", three.get()}},
                                     Binding{{"x", three.get()}, {"c", two.get()}}));
  EXPECT_THAT(AllMatches(x + y, a + b), ::testing::ElementsAre(Binding{{"x", a.get()}, {"y", b.get()}},
                                                               Binding{{"x", b.get()}, {"y", a.get()}}));
}

TEST_F(UPatTest, AnyOrderOfThreeTriesEveryPermutationInItertoolsOrder) {
  UPat z = UPat::Var("z");
  UPat p = UPat(Ops::SINK).src_any_order(x, y, z);
  std::vector<Binding> got = AllMatches(p, UOp::Sink({a, b, c}));
  ASSERT_EQ(got.size(), 6u);
  // itertools.permutations((x, y, z)): (x,y,z) (x,z,y) (y,x,z) (y,z,x) (z,x,y) (z,y,x); source i gets
  // perm[i].
  EXPECT_EQ(got[0], (Binding{{"x", a.get()}, {"y", b.get()}, {"z", c.get()}}));
  EXPECT_EQ(got[1], (Binding{{"x", a.get()}, {"z", b.get()}, {"y", c.get()}}));
  EXPECT_EQ(got[2], (Binding{{"y", a.get()}, {"x", b.get()}, {"z", c.get()}}));
  EXPECT_EQ(got[3], (Binding{{"y", a.get()}, {"z", b.get()}, {"x", c.get()}}));
  EXPECT_EQ(got[4], (Binding{{"z", a.get()}, {"x", b.get()}, {"y", c.get()}}));
  EXPECT_EQ(got[5], (Binding{{"z", a.get()}, {"y", b.get()}, {"x", c.get()}}));
  // Orders that only swap identical patterns are tried once (tinygrad's all_same).
  EXPECT_EQ(AllMatches(x + x, a + a).size(), 1u);
  EXPECT_EQ(AllMatches(UPat(Ops::SINK).src_any_order(x, x, y), UOp::Sink({a, a, b})).size(), 1u);
}

TEST_F(UPatTest, RepeatedNameMustBindTheSameNode) {
  EXPECT_TRUE(Matches(x + x, a + a));
  EXPECT_FALSE(Matches(x + x, a + b));
  EXPECT_TRUE(Matches(x.idiv(x), a.idiv(a)));
  EXPECT_FALSE(Matches(x.idiv(x), a.idiv(b)));
  UPat idem = UPat(groups::kIdempotent).src(x, x);
  EXPECT_TRUE(Matches(idem, a.maximum(a)));
  EXPECT_FALSE(Matches(idem, a + a));  // ADD is not idempotent
  // Across levels: (x % c) + (x // c) * c.
  UPat cv = UPat::Cvar("c");
  UPat p = x % cv + x.idiv(cv) * cv;
  EXPECT_TRUE(Matches(p, a % two + a.idiv(two) * two));
  EXPECT_TRUE(Matches(p, two * a.idiv(two) + a % two));
  EXPECT_FALSE(Matches(p, a % two + b.idiv(two) * two));
  EXPECT_FALSE(Matches(p, a % two + a.idiv(two) * UOp::Const(dtypes::kInt32, 3)));
}

TEST_F(UPatTest, BacktracksIntoInnerPermutations) {
  // x*y + y on (b*a) + b: the inner MUL's first order binds y=a, which fails at the outer source; the second
  // order (x=a, y=b) succeeds.
  UPat p = x * y + y;
  EXPECT_THAT(AllMatches(p, b * a + b), ::testing::ElementsAre(Binding{{"x", a.get()}, {"y", b.get()}}));
  EXPECT_THAT(AllMatches(p, b + a * b), ::testing::ElementsAre(Binding{{"x", a.get()}, {"y", b.get()}}));
  EXPECT_FALSE(Matches(p, a * b + c));
}

TEST_F(UPatTest, AllowAnyLenMatchesAPrefix) {
  UPat p = UPat(Ops::SINK).src(x).allow_any_len();
  EXPECT_THAT(AllMatches(p, UOp::Sink({a, b})), ::testing::ElementsAre(Binding{{"x", a.get()}}));
  EXPECT_TRUE(Matches(p, UOp::Sink({a})));
  EXPECT_FALSE(Matches(p, UOp::Sink({})));
}

TEST_F(UPatTest, RepeatMatchesEverySource) {
  UPat all_const = UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::CONST));
  EXPECT_TRUE(Matches(all_const, UOp::Vectorize({two, zero, two})));
  EXPECT_FALSE(Matches(all_const, UOp::Vectorize({two, a, two})));
  // A named repeated pattern: every source is the same node.
  UPat same = UPat(Ops::VECTORIZE).src_repeat(x);
  EXPECT_TRUE(Matches(same, UOp::Vectorize({a, a, a})));
  EXPECT_FALSE(Matches(same, UOp::Vectorize({a, b, a})));
  // No recursion per source: a ten-thousand source SINK.
  std::vector<UOpPtr> many(10000, two);
  EXPECT_TRUE(Matches(UPat(Ops::SINK).src_repeat(UPat::Cvar()), UOp::Sink(many)));
  many.back() = a;
  EXPECT_FALSE(Matches(UPat(Ops::SINK).src_repeat(UPat::Cvar()), UOp::Sink(many)));
}

TEST_F(UPatTest, AnyTriesAlternativesInOrder) {
  UPat p = UPat::Any(UPat::Cvar("c"), UPat(Ops::CAST).src(UPat::Cvar("c")));
  EXPECT_TRUE(Matches(p, two));
  EXPECT_TRUE(Matches(p, two.cast(dtypes::kFloat32)));
  EXPECT_FALSE(Matches(p, a.cast(dtypes::kFloat32)));
  // Both alternatives accept a node: both matches are seen, first alternative first.
  UPat q = UPat::Any(x, UPat(Ops::ADD).named("add"));
  UOpPtr ab = a + b;
  std::vector<Binding> got = AllMatches(q, ab);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0], (Binding{{"x", ab.get()}, {"add", nullptr}}));
  EXPECT_EQ(got[1], (Binding{{"x", nullptr}, {"add", ab.get()}}));
  // or_casted: the node itself or a CAST of it, either named.
  UPat oc = UPat::Var({}, dtypes::kInt32).or_casted("v");
  EXPECT_THAT(AllMatches(oc, a), ::testing::ElementsAre(Binding{{"v", a.get()}}));
  EXPECT_THAT(AllMatches(oc, a.cast(dtypes::kFloat32)),
              ::testing::ElementsAre(Binding{{"v", a.cast(dtypes::kFloat32).get()}}));
}

TEST_F(UPatTest, AnyInsideAPermutation) {
  UPat p = x + UPat::Any(UPat::Cvar("c"), UPat(Ops::CAST).src(UPat::Cvar("c")));
  EXPECT_TRUE(Matches(p, a + two));
  EXPECT_TRUE(Matches(p, two.cast(dtypes::kInt64) + a));
  EXPECT_FALSE(Matches(p, a + b));
}

TEST_F(UPatTest, OperatorsBuildTinygradsPatterns) {
  EXPECT_EQ((x + 0).ToString(), "ADD{x, CONST(0)}");
  EXPECT_EQ((x * 1).ToString(), "MUL{x, CONST(1)}");
  EXPECT_EQ((x - 1).ToString(), "ADD{x, CONST(-1)}");
  EXPECT_EQ((-1 * (x + y)).ToString(), "MUL{CONST(-1), ADD{x, y}}");
  EXPECT_EQ((x / y).ToString(), "MUL{x, RECIP(y)}");
  EXPECT_EQ(x.idiv(2).ToString(), "IDIV(x, CONST(2))");
  EXPECT_EQ((x % y).ToString(), "MOD(x, y)");
  EXPECT_EQ(x.lt(y).ToString(), "CMPLT:bool(x, y)");
  EXPECT_EQ((x < 3).ToString(), "CMPLT:bool(x, CONST(3))");
  EXPECT_EQ((x > 3).ToString(), "CMPLT:bool(CONST(3), x)");
  EXPECT_EQ(x.ne(y).ToString(), "CMPNE:bool{x, y}");
  EXPECT_EQ(x.logical_not().ToString(), "CMPNE:bool{x, CONST(True)}");
  EXPECT_EQ(x.where(y, 0).ToString(), "WHERE(x, y, CONST(0))");
  EXPECT_EQ(x.maximum(y).ToString(), "MAX{x, y}");
  EXPECT_EQ(x.cast(dtypes::kFloat32).ToString(), "CAST:float(x)");
  EXPECT_EQ(UPat::Cvar("c").ToString(), "c@VCONST|CONST");  // ops print in enum order
  EXPECT_EQ(UPat(Ops::LOAD).src(UPat::Const({}, 0)).allow_any_len().named("l").ToString(),
            "l@LOAD(CONST(0), ...)");
  EXPECT_EQ(UPat(Ops::VECTORIZE).src_repeat(x).ToString(), "VECTORIZE(x...)");
  EXPECT_EQ(UPat::Any(x, y).ToString(), "any(x | y)");
  EXPECT_EQ(UPat().ToString(), "_");
  // A pattern constant takes the other operand's dtype; a comparison is bool.
  UPat i = UPat::Var("i", dtypes::kInt32);
  EXPECT_EQ((i + 1).ToString(), "ADD:int{i@_:int, CONST:int(1)}");
  EXPECT_EQ((2 * i).ToString(), "MUL:int{CONST:int(2), i@_:int}");
}

TEST_F(UPatTest, OperatorPatternsMatch) {
  EXPECT_TRUE(Matches(x + 0, a + 0));
  EXPECT_TRUE(Matches(x + 0, 0 + a));
  EXPECT_FALSE(Matches(x + 0, a + 1));
  EXPECT_TRUE(Matches(x - 1, a - 1));  // ADD(a, CONST -1)
  EXPECT_TRUE(Matches(-1 * (x + UPat::Cvar("c")), (a + 2) * -1));
  EXPECT_TRUE(Matches(x.where(y, 0), a.lt(b).where(a, zero)));
  EXPECT_TRUE(Matches(x.logical_not(), a.lt(b).logical_not()));
  UPat bx = UPat::Var("x", dtypes::kBool), by = UPat::Var("y", dtypes::kBool);
  UOpPtr t = a.lt(b), u = b.lt(c);
  EXPECT_TRUE(Matches(bx * by, t * u));
  EXPECT_FALSE(Matches(bx * by, a * b));
  // A typed constant in a pattern checks its dtype: int32 pattern, int64 node.
  UPat i = UPat::Var("i", dtypes::kInt32);
  EXPECT_TRUE(Matches(i + 1, a + 1));
  UOpPtr l = UOp::Variable("l", 0, 10, dtypes::kInt64);
  EXPECT_FALSE(Matches(i + 1, l + 1));
}

TEST_F(UPatTest, ModifiersLeaveTheOriginalUnchanged) {
  UPat base = UPat(Ops::ADD);
  UPat named = base.named("n");
  UPat typed = base.dtype(dtypes::kFloat32);
  EXPECT_EQ(base.ToString(), "ADD");
  EXPECT_EQ(named.ToString(), "n@ADD");
  EXPECT_EQ(typed.ToString(), "ADD:float");
}

}  // namespace
}  // namespace uopc
