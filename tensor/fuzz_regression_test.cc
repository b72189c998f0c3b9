// Programs the tensor and schedule fuzzers (tensor/testing/random_program.h) found wrong, minimized: each
// test failed before its fix.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

// `x != x` (ints) and `x < x` fold to False in the scheduler's simplifier; the constant must keep the
// tensor's shape and device (tinygrad's const_like), not become a bare CONST that nothing can realize
// ("cannot realize CONTIGUOUS: it has no shape").
TEST(FuzzRegressionTest, ComparingATensorWithItselfFoldsToAConstantOfItsShape) {
  Tensor a = Tensor::FromVector<int32_t>({-7, -1, -3, -6}, {2, 2});
  Tensor ne = a.Ne(a);
  Tensor permuted = ne.Permute({1, 0});
  ASSERT_TRUE(Tensor::RealizeAll({permuted, ne}).ok());
  absl::StatusOr<std::vector<bool>> v = permuted.ToVector<bool>();
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(*v, std::vector<bool>(4, false));

  Tensor f = Tensor::FromVector<float>({-0.25f, 0.03125f}, {1, 2});
  // f <= f is (f < f).logical_not(): all true; summed, compared and used as a condition.
  Tensor count = f.Le(f).Cast(dtypes::kInt32).Sum({1}, /*keepdim=*/true);
  Tensor picked = count.Lt(2).Where(f, f);
  ASSERT_TRUE(Tensor::RealizeAll({picked, count}).ok());
  EXPECT_EQ(*count.ToVector<int32_t>(), (std::vector<int32_t>{2}));
  EXPECT_EQ(*picked.ToVector<float>(), (std::vector<float>{-0.25f, 0.03125f}));
}

// A kernel that reads a buffer's values from before an assign in the same realize runs before the assign,
// also when it comes first in the graph and waits on another kernel (here the cast of b): tinygrad's
// fix_assign linked only readers after the assign, and its linearizer did not order by those links.
TEST(FuzzRegressionTest, AReaderOfTheOldValuesRunsBeforeTheAssign) {
  Tensor a = Tensor::FromVector<uint8_t>({4, 11, 14, 1}, {4});
  Tensor not_a = a.BitwiseNot();  // reads a before the assign
  a.Assign((a > 8).Cast(dtypes::kUInt8));
  Tensor b = Tensor::FromVector<int8_t>({-4}, {1});
  Tensor out = not_a.Maximum(b);  // int16
  ASSERT_TRUE(Tensor::RealizeAll({out, a}).ok());
  EXPECT_EQ(*out.ToVector<int16_t>(), (std::vector<int16_t>{251, 244, 241, 254}));
  EXPECT_EQ(*a.ToVector<uint8_t>(), (std::vector<uint8_t>{0, 1, 1, 0}));
}

// Two assigns in a row before a realize: tinygrad's merge_views makes the second the value itself (`ASSIGN to
// unrealized replaces the UOp`), and the first one stays lazy in what its node becomes, as the simplified
// graph (a VIEW of a reduction here), which SPEC=1's check after becomes_map took for an invalid tensor
// graph.
TEST(FuzzRegressionTest, TwoAssignsInARowPassTheChecksAfterBecomesMap) {
  Tensor a = Tensor::FromVector<float>({3.75f}, {1});
  Tensor b = Tensor::FromVector<float>({-2.25f, 2.5f, 3.75f, -1.25f, 1}, {1, 5, 1});
  a.Assign(b.Any({-3, 1}).Cast(dtypes::kFloat32));
  Tensor c = Tensor::FromBytes({1}, {1}, dtypes::kBool);
  Tensor second = c.Cast(dtypes::kFloat32);
  a.Assign(second);
  ASSERT_TRUE(Tensor::RealizeAll({second, a}).ok());
  EXPECT_EQ(*a.ToVector<float>(), std::vector<float>{1.0f});
}

// `x // -1` becomes `x * -1` in the scheduler's simplifier; the -1 it builds had no shape or device, so the
// kernel's AST held a bare CONST ("buffer op CONST has no VIEW"). Found by the schedule fuzzer built with
// clang, whose order of evaluating arguments draws other programs from a seed than gcc's.
TEST(FuzzRegressionTest, ConstantsThatRulesBuildInATensorGraphHaveItsShape) {
  Tensor a = Tensor::FromVector<int32_t>({-2}, {});
  Tensor times8 = a.Mul(8, /*reverse=*/true);
  a.Assign(times8);
  Tensor negated = times8.IDiv(-1);
  absl::Status realized = Tensor::RealizeAll({negated, a});
  ASSERT_TRUE(realized.ok()) << realized;
  EXPECT_EQ(*negated.ToVector<int32_t>(), std::vector<int32_t>{16});
  EXPECT_EQ(*a.ToVector<int32_t>(), std::vector<int32_t>{-16});
}

// Open: int8 arithmetic that wraps gives device-dependent results. exec_alu (INTERP) and LLVM wrap 100 + 100
// to -56; the C renderer writes `(val0+val1)<0`, which C computes in int (200), so CPU says false.
TEST(FuzzRegressionTest, DISABLED_NarrowIntArithmeticWrapsOnEveryDevice) {
  for (const char* device : {"CPU", "INTERP", "LLVM"}) {
    Tensor a = Tensor::FromVector<int8_t>({100}, {1}, dtypes::kInt8, device);
    absl::StatusOr<std::vector<bool>> v = (a + a).Lt(0).ToVector<bool>();
    ASSERT_TRUE(v.ok()) << v.status();
    EXPECT_EQ(*v, std::vector<bool>{true}) << device;
  }
}

// Open: the symbolic rules and the range analysis compute with unbounded integers, so where an int op wraps
// they change the result on every device (tinygrad v0.10.3 does the same): `(2 - x) < -4` becomes `-x < -6`
// (for int8 x = -127, 2 - x wraps to -127 and the comparison is true), and `-x < 10` on uint8 folds to true
// (-3 is 253).
TEST(FuzzRegressionTest, DISABLED_RewritesKeepWrappingIntSemantics) {
  Tensor x = Tensor::FromVector<int8_t>({-127}, {1});
  EXPECT_EQ(*x.Sub(2, /*reverse=*/true).Lt(-4).ToVector<bool>(), std::vector<bool>{true});
  Tensor u = Tensor::FromVector<uint8_t>({3}, {1});
  EXPECT_EQ(*u.Neg().Lt(10).ToVector<bool>(), std::vector<bool>{false});
}

}  // namespace
}  // namespace uopc
