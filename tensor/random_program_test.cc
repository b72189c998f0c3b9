// The fuzzers' support code: the host reference on values worked out by hand (tinygrad's promotion, `//`,
// `%`, the sum's dtype, error bounds), and seeded random programs of both profiles against it, so that
// `bazel test` runs the generator and the pipeline on programs beyond the seed corpora.
#include "tensor/testing/random_program.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tensor/testing/host_tensor.h"
#include "uop/spec.h"
#include "uop/util.h"

namespace uopc {
namespace {

HostOperand Of(const HostTensor& t) { return HostOperand{&t, {}}; }
HostOperand Int(double v) { return HostOperand{nullptr, {HostScalar::Kind::kInt, v}}; }
HostOperand Float(double v) { return HostOperand{nullptr, {HostScalar::Kind::kFloat, v}}; }

TEST(HostTensorTest, Promotion) {
  EXPECT_EQ(HostLeastUpper(dtypes::kInt8, dtypes::kUInt8), dtypes::kInt16);
  EXPECT_EQ(HostLeastUpper(dtypes::kBool, dtypes::kInt32), dtypes::kInt32);
  EXPECT_EQ(HostLeastUpper(dtypes::kUInt32, dtypes::kInt32), dtypes::kInt64);
  EXPECT_EQ(HostLeastUpper(dtypes::kInt64, dtypes::kUInt64), dtypes::kFloat16);
  EXPECT_EQ(HostLeastUpper(dtypes::kInt32, dtypes::kFloat32), dtypes::kFloat32);
  EXPECT_EQ(HostSumAccDType(dtypes::kInt8), dtypes::kInt32);
  EXPECT_EQ(HostSumAccDType(dtypes::kUInt8), dtypes::kUInt32);
  EXPECT_EQ(HostSumAccDType(dtypes::kBool), dtypes::kInt32);
  // An int tensor and an int number stay int8; a float number makes float32; a bool tensor and an int, int32.
  HostTensor i8 = HostTensor::Of(dtypes::kInt8, {2}, {100, -100});
  std::optional<HostTensor> sum = HostBinary(BinaryOp::kAdd, Of(i8), Int(20));
  ASSERT_TRUE(sum);
  EXPECT_EQ(sum->dtype, dtypes::kInt8);
  EXPECT_EQ(sum->v, (std::vector<double>{120, -80}));
  // An ALU op that leaves the dtype's range is not pinned down (host_tensor.cc says why); a cast wraps.
  EXPECT_FALSE(HostBinary(BinaryOp::kAdd, Of(i8), Int(100)));
  EXPECT_EQ(HostCast(HostTensor::Of(dtypes::kInt32, {2}, {200, -129}), dtypes::kInt8)->v,
            (std::vector<double>{-56, 127}));
  EXPECT_EQ(HostBinary(BinaryOp::kMul, Of(i8), Float(0.5))->dtype, dtypes::kFloat32);
  HostTensor b = HostTensor::Of(dtypes::kBool, {2}, {1, 0});
  EXPECT_EQ(HostBinary(BinaryOp::kAdd, Of(b), Int(2))->dtype, dtypes::kInt32);
}

TEST(HostTensorTest, IntegerDivisionAndModulo) {
  HostTensor a = HostTensor::Of(dtypes::kInt32, {4}, {7, -7, 7, 5});
  HostTensor d = HostTensor::Of(dtypes::kInt32, {4}, {2, 2, -2, 0});
  std::optional<HostTensor> q = HostBinary(BinaryOp::kIDiv, Of(a), Of(d));
  ASSERT_TRUE(q);
  EXPECT_EQ(q->v, (std::vector<double>{3, -3, -3, 0}));  // truncating; x // 0 is 0
  // Python's floor modulo, through float32; by zero it is not pinned down (a cast of inf).
  EXPECT_FALSE(HostBinary(BinaryOp::kMod, Of(a), Of(d)));
  HostTensor d2 = HostTensor::Of(dtypes::kInt32, {4}, {2, 2, -2, 3});
  EXPECT_EQ(HostBinary(BinaryOp::kMod, Of(a), Of(d2))->v, (std::vector<double>{1, 1, -1, 2}));
}

TEST(HostTensorTest, ReductionsAndMovement) {
  HostTensor a = HostTensor::Of(dtypes::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::optional<HostTensor> s = HostReduce(ReduceOp::kSum, a, {1}, /*keepdim=*/true);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->shape, (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(s->v, (std::vector<double>{6, 15}));
  EXPECT_EQ(s->err, (std::vector<double>{0, 0}));  // exact: every partial sum fits float32
  EXPECT_EQ(HostReduce(ReduceOp::kMean, a, {0, 1}, false)->v, (std::vector<double>{3.5}));
  EXPECT_EQ(HostPermute(a, {1, 0}).v, (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(HostFlip(a, {1}).v, (std::vector<double>{3, 2, 1, 6, 5, 4}));
  EXPECT_EQ(HostShrink(a, {{1, 2}, {0, 2}}).v, (std::vector<double>{4, 5}));
  EXPECT_EQ(HostPad(HostReshape(a, {6}), {{1, 0}}, 9).v, (std::vector<double>{9, 1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(HostCumsum(HostTensor::Of(dtypes::kInt8, {3}, {1, 2, 3}), 0)->dtype, dtypes::kInt32);
  // A third is not exact: the bound covers its rounding, and a comparison it cannot decide is refused.
  std::optional<HostTensor> third =
      HostBinary(BinaryOp::kDiv, Of(HostTensor::Of(dtypes::kFloat32, {1}, {1})), Float(3));
  ASSERT_TRUE(third);
  EXPECT_GT(third->err[0], 0);
  EXPECT_EQ(HostCompare(*third, {1.0 / 3}), "");
  EXPECT_NE(HostCompare(*third, {0.3334}), "");
  EXPECT_FALSE(HostBinary(BinaryOp::kEq, Of(*third), Of(*third)));
}

// UOPC_FUZZ_SEEDS=N runs N seeds (from UOPC_FUZZ_FIRST_SEED) in place of the default: a fuzzing run without
// libFuzzer's instrumentation, `./bazelw test -c opt //tensor:random_program_test
// --test_env=UOPC_FUZZ_SEEDS=2000`.
void RunSeeds(const ProgramProfile& profile, int n) {
  SetSpecChecks(true);
  n = static_cast<int>(EnvInt("UOPC_FUZZ_SEEDS", n));
  const int first = static_cast<int>(EnvInt("UOPC_FUZZ_FIRST_SEED", 0));
  int compared = 0;
  for (int seed = first; seed < first + n; ++seed) {
    FuzzChoices choices(static_cast<uint64_t>(seed));
    ProgramOutcome out = RunRandomProgram(choices, profile);
    ASSERT_EQ(out.failure, "") << "seed " << seed << "\n" << out.listing;
    compared += out.outputs_compared;
  }
  EXPECT_GT(compared, n);
}

TEST(RandomProgramTest, TensorProfile) { RunSeeds(TensorFuzzProfile(), 30); }
TEST(RandomProgramTest, ScheduleProfile) { RunSeeds(ScheduleFuzzProfile(), 30); }

}  // namespace
}  // namespace uopc
