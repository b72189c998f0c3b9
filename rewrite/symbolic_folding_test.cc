#include "rewrite/symbolic_folding.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include "gtest/gtest.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/infix.h"
#include "rewrite/symbolic.h"
#include "rewrite/testing/rule_fuzzer.h"
#include "uop/text_ir.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using dtypes::kFloat32;
using dtypes::kInt32;

TEST(FoldedAluTest, FoldsScalarConstantsLikeTheConstantFoldingRule) {
  UOpPtr three = UOp::Const(kInt32, 3), four = UOp::Const(kInt32, 4);
  EXPECT_EQ(FoldedAlu(Ops::ADD, three, four), UOp::Const(kInt32, 7));
  EXPECT_EQ(FoldedAlu(Ops::MUL, three, four), UOp::Const(kInt32, 12));
  EXPECT_EQ(FoldedAlu(Ops::MAX, three, four), UOp::Const(kInt32, 4));
  // int32 wraps as the folding rule's exec_alu computes it.
  UOpPtr big = UOp::Const(kInt32, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(FoldedAlu(Ops::ADD, big, UOp::Const(kInt32, 1)), GraphRewrite(big + 1, Sym()));
  EXPECT_EQ(FoldedNeg(three), UOp::Const(kInt32, -3));
}

TEST(FoldedAluTest, DropsIntegerIdentities) {
  UOpPtr x = UOp::Variable("x", 0, 10);
  UOpPtr zero = x.const_like(0), one = x.const_like(1);
  EXPECT_EQ(FoldedAlu(Ops::ADD, x, zero), x);
  EXPECT_EQ(FoldedAlu(Ops::ADD, zero, x), x);
  EXPECT_EQ(FoldedAlu(Ops::MUL, x, one), x);
  EXPECT_EQ(FoldedAlu(Ops::MUL, one, x), x);
  EXPECT_EQ(FoldedAlu(Ops::MUL, x, zero), zero);
  EXPECT_EQ(FoldedAlu(Ops::MUL, zero, x), zero);
  EXPECT_EQ(FoldedAlu(Ops::ADD, x, one), x + 1);
  EXPECT_EQ(FoldedNeg(x), x * -1);
}

TEST(FoldedAluTest, LeavesFloatsAndVectorsToTheRules) {
  UOpPtr f = UOp::New(Ops::DEFINE_VAR, kFloat32, {}, Arg{Arg("f"), Arg(0.0), Arg(1.0)});
  // x * 0.0 is not 0.0 for an infinite or NaN x.
  UOpPtr fzero = f.const_like(0.0);
  EXPECT_EQ(FoldedAlu(Ops::MUL, f, fzero), f * fzero);
  UOpPtr v = UOp::Const(kInt32.Vec(4), 2);
  EXPECT_EQ(FoldedAlu(Ops::ADD, v, v), v + v);
}

// symbolic_simple's constant folding: scalars (one lane) and vectors (lane by lane) give exec_alu's results.
TEST(ConstantFoldingTest, ScalarsAndVectorsFoldLikeExecAlu) {
  UOpPtr big = UOp::Const(kInt32, std::numeric_limits<int32_t>::max());
  EXPECT_EQ(GraphRewrite(big.alu(Ops::ADD, {UOp::Const(kInt32, 1)}), Sym()),
            UOp::Const(kInt32, std::numeric_limits<int32_t>::min()));
  EXPECT_EQ(GraphRewrite(UOp::Const(kInt32, -7).alu(Ops::IDIV, {UOp::Const(kInt32, 2)}), Sym()),
            UOp::Const(kInt32, -3));  // C truncation
  EXPECT_EQ(GraphRewrite(UOp::Const(kInt32, 3).alu(Ops::CMPLT, {UOp::Const(kInt32, 4)}), Sym()),
            UOp::Const(dtypes::kBool, true));
  EXPECT_EQ(GraphRewrite(UOp::Const(kFloat32, 1.5).alu(Ops::MUL, {UOp::Const(kFloat32, 2.0)}), Sym()),
            UOp::Const(kFloat32, 3.0));
  UOpPtr cond = UOp::Const(dtypes::kBool, false);
  EXPECT_EQ(GraphRewrite(cond.alu(Ops::WHERE, {UOp::Const(kInt32, 1), UOp::Const(kInt32, 2)}), Sym()),
            UOp::Const(kInt32, 2));
  UOpPtr v = UOp::VConst(kInt32.Vec(2), {ConstValue::Int(1), ConstValue::Int(2)});
  EXPECT_EQ(GraphRewrite(v.alu(Ops::ADD, {UOp::Const(kInt32.Vec(2), 10)}), Sym()),
            UOp::VConst(kInt32.Vec(2), {ConstValue::Int(11), ConstValue::Int(12)}));
}

// Found by the sym fuzzer: distributing (a - 15) * K over the sum made the constant -15 * K leave int32, so
// it wrapped, and division folding then split a sum whose C value had wrapped. Both the distribution (which
// now declines when a product leaves the dtype and the product of the sum does not) and the division folding
// (which declines a dividend whose range leaves its dtype) guard against it.
TEST(FoldedAluTest, DistributingDoesNotIntroduceWraparound) {
  absl::StatusOr<UOpPtr> e = ParseInfix(
      "(((((22 * 22) * (a + -15)) * (22 * 22)) * (22 * (-15 + -15))) // (-15 + -15))", {{"a", 9, 10}});
  ASSERT_TRUE(e.ok()) << e.status();
  RuleFuzzer fuzzer(Sym());
  std::optional<RuleFailure> failure = fuzzer.CheckOne(*e);
  EXPECT_FALSE(failure.has_value()) << failure->ToString();
  EXPECT_EQ(RenderTinygrad(GraphRewrite(*e, Sym()).get()), "((a*5153632)+-77304480)");
}

// The claim the builders rest on: what they build rewrites to the same graph as the plain node would.
TEST(FoldedAluTest, RewritesToWhatThePlainNodeRewritesTo) {
  RuleFuzzerOptions options;
  options.bool_roots = false;
  options.max_depth = 3;
  options.seed = 7;
  RuleFuzzer fuzzer(Sym(), options);
  std::mt19937 rng(11);
  auto operand = [&]() -> UOpPtr {
    switch (rng() % 4) {
      case 0:
        return UOp::Const(kInt32, static_cast<int>(rng() % 5) - 2);  // 0 and 1 often
      default:
        return fuzzer.Generate();
    }
  };
  int compared = 0;
  for (int i = 0; i < 3000; ++i) {
    UOpPtr a = operand(), b = operand();
    if (a->dtype() != kInt32 || b->dtype() != kInt32) continue;
    for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX}) {
      EXPECT_EQ(GraphRewrite(FoldedAlu(op, a, b), Sym()), GraphRewrite(a.alu(op, {b}), Sym()))
          << OpName(op) << " of " << RenderInfix(a.get()) << " and " << RenderInfix(b.get());
      ++compared;
    }
    EXPECT_EQ(GraphRewrite(FoldedNeg(a), Sym()), GraphRewrite(a.neg(), Sym())) << RenderInfix(a.get());
  }
  EXPECT_GT(compared, 3000);
}

}  // namespace
}  // namespace uopc

namespace uopc {
namespace {

// tinygrad's tuplize comparison stops at the first unequal item; for two dtypes that is DType.__lt__, which
// ignores a pointer's size: loads through int.ptr(384) and int.ptr(192) are in no order, so the commutative
// rule leaves MUL(a, b) as it is either way round (the matmul_int kernel of the codegen corpus).
TEST(CompareTuplizeTest, PointersOfOneTypeDifferingInSizeAreUnordered) {
  UOpPtr i = UOp::Const(kInt32, 0);
  UOpPtr a = UOp::New(Ops::DEFINE_GLOBAL, kInt32.Ptr(384), {}, Arg(1)).index(i).load();
  UOpPtr b = UOp::New(Ops::DEFINE_GLOBAL, kInt32.Ptr(192), {}, Arg(2)).index(i).load();
  EXPECT_GE(CompareTuplize(a, b), 0);
  EXPECT_GE(CompareTuplize(b, a), 0);
  EXPECT_EQ(GraphRewrite(a * b, Sym()), a * b);
  EXPECT_EQ(GraphRewrite(b * a, Sym()), b * a);
  // Other dtypes still order by tinygrad's key.
  EXPECT_LT(CompareTuplize(UOp::Const(kInt32, 1).cast(dtypes::kInt8), UOp::Const(kInt32, 1).cast(kFloat32)),
            0);
}

TEST(FloorDivTest, RoundsTowardNegativeInfinityOnEveryRange) {
  const absl::int128 kMax64 = std::numeric_limits<int64_t>::max(),
                     kMin64 = std::numeric_limits<int64_t>::min();
  const absl::int128 values[] = {
      0,          1,      2,          3,          7,      8,          12,
      kMax64 - 1, kMax64, kMax64 + 1, kMin64 + 1, kMin64, kMin64 - 1, absl::int128(1) << 100};
  for (absl::int128 x : values) {
    for (absl::int128 y : values) {
      for (absl::int128 sx : {1, -1}) {
        for (absl::int128 sy : {1, -1}) {
          const absl::int128 a = sx * x, b = sy * y;
          if (b == 0) continue;
          const absl::int128 q = FloorDiv(a, b);
          // q = floor(a / b): q * b lies within one |b| below a, on b's side.
          const absl::int128 r = a - q * b;
          EXPECT_TRUE(b > 0 ? (r >= 0 && r < b) : (r <= 0 && r > b))
              << "floor(" << a << " / " << b << ") = " << q;
        }
      }
    }
  }
}

// tinygrad compares dtypes by (priority, itemsize, name, fmt, count), so two pointers to int32 of different
// sizes are less neither way, and a tuplize comparison that reaches them is false both ways: commutative
// operands that differ first there keep their order.
TEST(CompareTuplizeTest, PointersToOneTypeAreUnordered) {
  auto load = [](int64_t arg, int64_t size) {
    UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, kInt32.Ptr(size), {}, Arg(arg));
    return buf.index(UOp::Const(kInt32, 0)).load();
  };
  UOpPtr big = load(1, 384), small = load(2, 192);
  EXPECT_EQ(CompareTuplize(big.get(), small.get()), 0);
  EXPECT_EQ(CompareTuplize(small.get(), big.get()), 0);
  EXPECT_EQ(GraphRewrite(big * small, Commutative()), big * small);
  EXPECT_EQ(GraphRewrite(small * big, Commutative()), small * big);
  // Pointers to different types still order by the type, and other differences by themselves.
  auto index = [](DType base) {
    return UOp::New(Ops::DEFINE_GLOBAL, base.Ptr(384), {}, Arg(int64_t{1})).index(UOp::Const(kInt32, 0));
  };
  EXPECT_LT(CompareTuplize(index(kInt32).get(), index(kFloat32).get()), 0);
  EXPECT_GT(CompareTuplize(index(kFloat32).get(), index(kInt32).get()), 0);
  EXPECT_LT(CompareTuplize(load(1, 8).get(), load(2, 8).get()), 0);
}

// A gated-off INDEX becomes a null pointer; casting it to a vector pointer gives a null pointer of that type,
// so that the load from it folds to 0 (codegen's devectorize relies on it for padded loads).
TEST(SymbolicSimpleTest, CastOfANullPointerIsANullPointer) {
  DType ptr = dtypes::kFloat32.Ptr(648);
  DType vec_ptr = dtypes::kFloat32.Vec(3).Ptr(648);
  UOpPtr null = UOp::New(Ops::CONST, ptr, {}, Arg(0.0));
  UOpPtr load = UOp::New(Ops::LOAD, dtypes::kFloat32.Vec(3), {null.cast(vec_ptr)});
  UOpPtr got = GraphRewrite(load, Sym());
  EXPECT_EQ(got, UOp::Const(dtypes::kFloat32.Vec(3), 0.0)) << PrintIr(got);
}

// tinygrad folds float constants in double precision (exec_alu with truncate_output=False): gelu's
// 0.7978845608028654 * 2.0 * -1.4426950408889634 stays -2.302208198144325 in its float32 CONST (the C
// compiler rounds the literal), where rounding each step to float32 would give -2.302208185195923. Integers
// still wrap.
TEST(FoldConstantOpTest, FloatsFoldInDoublePrecisionIntegersWrap) {
  UOpPtr x = UOp::Variable("x", 0, 9, dtypes::kFloat32);
  UOpPtr folded = GraphRewrite((x * 0.7978845608028654 * 2.0) * -1.4426950408889634, Sym());
  ASSERT_EQ(folded->op(), Ops::MUL);
  EXPECT_EQ(folded->src(1)->const_value().f(), 0.7978845608028654 * 2.0 * -1.4426950408889634);
  absl::StatusOr<ConstValue> wrapped = FoldConstantOp(
      Ops::ADD, dtypes::kInt32, {ConstValue::Int(2147483647), ConstValue::Int(1)}, dtypes::kInt32);
  ASSERT_TRUE(wrapped.ok());
  EXPECT_EQ(wrapped->AsInt(), -2147483648);
  absl::StatusOr<ConstValue> less = FoldConstantOp(
      Ops::CMPLT, dtypes::kBool, {ConstValue::Float(0.1), ConstValue::Float(0.1 + 1e-12)}, dtypes::kFloat32);
  ASSERT_TRUE(less.ok());
  EXPECT_TRUE(less->AsBool());  // compared as the doubles they hold, as Python does
}

// int32 is C's wrapping arithmetic unless a scope declares it exact index arithmetic (what a ShapeTracker
// builds before its upcast pass): then constants fold without wrapping, and a mod whose dividend leaves int32
// folds as on unbounded integers.
TEST(IntegerSemanticsTest, ExactIndexArithmeticFoldsPastInt32) {
  const std::vector<ConstValue> big = {ConstValue::Int(2147483647), ConstValue::Int(1)};
  absl::StatusOr<UOpPtr> mod = ParseInfix("((((g * 4) + (r * 1048576)) + (v * 262144)) % 262143)",
                                          {{"g", 0, 32767}, {"r", 0, 32767}, {"v", 0, 3}});
  ASSERT_TRUE(mod.ok()) << mod.status();
  EXPECT_EQ(CurrentIntegerSemantics(), IntegerSemantics::kWrapping);
  EXPECT_EQ(FoldConstantOp(Ops::ADD, kInt32, big, kInt32)->AsInt(), -2147483648);
  EXPECT_EQ(RenderTinygrad(GraphRewrite(*mod, SymbolicFlat()).get()),
            "((((g*4)+(r*1048576))+(v*262144))%262143)");  // C's int32 would wrap: left alone
  {
    ScopedIntegerSemantics exact(IntegerSemantics::kExact);
    EXPECT_TRUE(ExactIntegers(kInt32));
    EXPECT_FALSE(ExactIntegers(dtypes::kInt64));  // only the dtype the indexing pass widens
    EXPECT_EQ(FoldConstantOp(Ops::ADD, kInt32, big, kInt32)->AsInt(), 2147483648);
    EXPECT_EQ(RenderTinygrad(GraphRewrite(*mod, SymbolicFlat()).get()),
              "(v+((g*4)+(r*4)))");  // tinygrad's render
    {
      ScopedIntegerSemantics inner(IntegerSemantics::kWrapping);
      EXPECT_FALSE(ExactIntegers(kInt32));
    }
    EXPECT_TRUE(ExactIntegers(kInt32));
  }
  EXPECT_EQ(CurrentIntegerSemantics(), IntegerSemantics::kWrapping);
}

// C's % of a negative dividend takes its sign, so (2x - 1) % 2 is not 1 where x is 0; only a caller that
// knows the dividend is non-negative where it matters (ScopedFloorDivision) gets tinygrad's fold.
TEST(FloorDivisionTest, ModOfAPossiblyNegativeDividendFoldsOnlyInTheScope) {
  UOpPtr x = UOp::Variable("x", 0, 10);
  UOpPtr mod = (x * 2 + -1) % 2;
  EXPECT_FALSE(FloorDivisionAssumed());
  EXPECT_FALSE(Simplify(mod)->is_const());
  {
    ScopedFloorDivision floor_division;
    EXPECT_TRUE(FloorDivisionAssumed());
    EXPECT_EQ(Simplify(mod), UOp::Const(kInt32, 1));
  }
  EXPECT_FALSE(FloorDivisionAssumed());
}

// tinygrad folds a bitcast of a constant through Python's struct formats, and bfloat16 has none.
TEST(SymbolicSimpleTest, BitcastOfABfloat16ConstantStays) {
  UOpPtr one = UOp::Const(dtypes::kBFloat16, 1.0);
  UOpPtr bits = UOp::New(Ops::BITCAST, dtypes::kUInt16, {one});
  EXPECT_EQ(GraphRewrite(bits, SymbolicSimple()), bits);
  UOpPtr half_bits = UOp::New(Ops::BITCAST, dtypes::kUInt16, {UOp::Const(dtypes::kFloat16, 1.0)});
  EXPECT_EQ(GraphRewrite(half_bits, SymbolicSimple()), UOp::Const(dtypes::kUInt16, 15360));
}

}  // namespace
}  // namespace uopc
