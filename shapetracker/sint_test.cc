#include "shapetracker/sint.h"

#include "gtest/gtest.h"
#include "shapetracker/contraction.h"
#include "uop/uop.h"

namespace uopc {
namespace {

TEST(SintTest, IntegersStayIntegers) {
  Sint a = 6, b = 4;
  EXPECT_TRUE((a + b).is_int());
  EXPECT_EQ((a + b).value(), 10);
  EXPECT_EQ((a - b).value(), 2);
  EXPECT_EQ((a * b).value(), 24);
  EXPECT_EQ((-a).value(), -6);
  EXPECT_EQ(a.ToString(), "6");
  EXPECT_EQ(a.ToUOp(), UOp::Const(dtypes::kInt32, 6));
}

TEST(SintTest, FloorDivisionAndModuloLikePython) {
  // Python: -7 // 2 == -4, -7 % 2 == 1, 7 // -2 == -4, 7 % -2 == -1.
  EXPECT_EQ(FloorDiv(-7, 2).value(), -4);
  EXPECT_EQ(Mod(-7, 2).value(), 1);
  EXPECT_EQ(FloorDiv(7, -2).value(), -4);
  EXPECT_EQ(Mod(7, -2).value(), -1);
  EXPECT_EQ(FloorDiv(-8, 2).value(), -4);
  EXPECT_EQ(Mod(-8, 2).value(), 0);
  EXPECT_EQ(CeilDiv(7, 2).value(), 4);
  EXPECT_EQ(CeilDiv(-7, 2).value(), -3);
  for (int64_t a = -20; a <= 20; ++a) {
    for (int64_t b : {-7, -3, -1, 1, 2, 5}) {
      Sint q = FloorDiv(a, b), r = Mod(a, b);
      EXPECT_EQ(q.value() * b + r.value(), a) << a << " " << b;
      EXPECT_TRUE(r.value() == 0 || (r.value() < 0) == (b < 0)) << a << " " << b;
    }
  }
}

TEST(SintTest, SymbolicArithmeticFoldsBackToIntegers) {
  UOpPtr n = UOp::Variable("n", 1, 10);
  Sint s = Sint::FromUOp(n);
  EXPECT_FALSE(s.is_int());
  EXPECT_EQ(s.vmin(), 1);
  EXPECT_EQ(s.vmax(), 10);
  Sint zero = s - s;
  ASSERT_TRUE(zero.is_int());
  EXPECT_EQ(zero.value(), 0);
  Sint times0 = s * 0;
  ASSERT_TRUE(times0.is_int());
  EXPECT_EQ(times0.value(), 0);
  Sint twice = s * 2;
  EXPECT_FALSE(twice.is_int());
  EXPECT_EQ(twice.vmax(), 20);
  EXPECT_EQ(twice, s + s) << "simplified to the same node";
}

TEST(SintTest, ComparisonsResolveByRange) {
  Sint n = Sint::FromUOp(UOp::Variable("n", 1, 10));
  EXPECT_EQ(Lt(n, 11), true);
  EXPECT_EQ(Lt(n, 1), false);
  EXPECT_EQ(Lt(n, 5), std::nullopt);
  EXPECT_EQ(Le(n, 10), true);
  EXPECT_EQ(Ne(n, 0), true);
  EXPECT_EQ(Eq(n, 0), false);
  EXPECT_EQ(Eq(n, 3), std::nullopt);
  EXPECT_EQ(Eq(n, n), true);
  EXPECT_TRUE(Resolve(Lt(n, 5)));
  EXPECT_FALSE(Resolve(Lt(n, 5), false));
  EXPECT_EQ(Lt(3, 4), true);
  EXPECT_EQ(Eq(3, 4), false);
}

TEST(SintTest, MaxMinProdAndTuples) {
  EXPECT_EQ(Max(3, 7).value(), 7);
  EXPECT_EQ(Min(3, 7).value(), 3);
  Sint n = Sint::FromUOp(UOp::Variable("n", 1, 10));
  EXPECT_EQ(Max(n, 0), n) << "n >= 1 so max(n, 0) is n";
  EXPECT_EQ(Min(n, 20), n);
  EXPECT_EQ(Prod({2, 3, 4}).value(), 24);
  EXPECT_EQ(Prod({}).value(), 1);
  EXPECT_TRUE(AllInt({1, 2}));
  EXPECT_FALSE(AllInt({1, n}));
  EXPECT_EQ(TupleString(SintVec{}), "()");
  EXPECT_EQ(TupleString(SintVec{3}), "(3,)");
  EXPECT_EQ(TupleString(SintVec{3, n}), "(3, UOp(Ops.DEFINE_VAR, dtypes.int, arg=('n', 1, 10), src=()))");
  EXPECT_EQ(n.ToString(), "UOp(Ops.DEFINE_VAR, dtypes.int, arg=('n', 1, 10), src=())");
}

// Symbolic sizes group by expression: (n, 4, 2) -> (4n, 2), not (m, 4, 2) -> (4n, 2) for another variable of
// the same range, which comparing by largest values would take.
TEST(SintTest, ContractionComparesSymbolicSizesAsExpressions) {
  const Sint n = Sint::FromUOp(UOp::Variable("n", 1, 10)), m = Sint::FromUOp(UOp::Variable("m", 1, 10));
  const SintVec old_shape = {n, 4, 2}, other = {m, 4, 2}, new_shape = {n * 4, 2};
  auto c = GetContraction(absl::MakeConstSpan(old_shape), absl::MakeConstSpan(new_shape));
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(*c, (std::vector<std::vector<int64_t>>{{0, 1}, {2}}));
  EXPECT_FALSE(GetContraction(absl::MakeConstSpan(other), absl::MakeConstSpan(new_shape)).has_value());
  // With reduce axes: as the integer shapes with n = 3 group.
  const SintVec old_r = {n, 1}, new_r = {n, 1, 1};
  const std::vector<int64_t> old_3 = {3, 1}, new_3 = {3, 1, 1};
  auto r = GetContractionWithReduce(absl::MakeConstSpan(old_r), absl::MakeConstSpan(new_r), {1});
  ASSERT_TRUE(r.has_value());
  EXPECT_EQ(r, GetContractionWithReduce(old_3, new_3, {1}));
}

}  // namespace
}  // namespace uopc
