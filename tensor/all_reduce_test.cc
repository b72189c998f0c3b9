// Tensor::AllReduce without MPI: a stand-in communicator ("TWINS", two processes that hold the same values,
// so a sum doubles each element) checks the schedule item, the TinyJit replay, the gradient and the errors;
// //nn:mpi_test runs the real one under mpirun.
#include <cmath>
#include <memory>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/collective.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Two processes with equal values: ADD doubles, MUL squares, MAX keeps. Counts its all-reduces.
class Twins : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  absl::Status AllReduce(absl::Span<uint8_t> bytes, DType dtype, Ops op) override {
    ++calls;
    if (dtype != dtypes::kFloat32) return absl::UnimplementedError("twins reduce float32 only");
    float* values = reinterpret_cast<float*>(bytes.data());
    for (size_t i = 0; i < bytes.size() / sizeof(float); ++i) {
      if (op == Ops::ADD) values[i] *= 2;
      if (op == Ops::MUL) values[i] *= values[i];
    }
    return absl::OkStatus();
  }
  [[noreturn]] void Abort(int code) override { std::abort(); }
  static inline int calls = 0;
};

class Failing : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 2; }
  absl::Status AllReduce(absl::Span<uint8_t>, DType, Ops) override {
    return absl::DeadlineExceededError("rank 1 did not come");
  }
  [[noreturn]] void Abort(int code) override { std::abort(); }
};

const bool twins_registered = RegisterCommunicator(
    "TWINS", []() -> absl::StatusOr<std::unique_ptr<Communicator>> { return std::make_unique<Twins>(); });
const bool failing_registered = RegisterCommunicator(
    "FAILING", []() -> absl::StatusOr<std::unique_ptr<Communicator>> { return std::make_unique<Failing>(); });

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

TEST(AllReduceTest, ReducesBetweenKernels) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3}, {3});
  const int before = Twins::calls;
  EXPECT_THAT(Values((x * 2).AllReduce(Ops::ADD, "TWINS") + 1), ElementsAre(5, 9, 13));
  EXPECT_EQ(Twins::calls, before + 1);
  EXPECT_THAT(Values(x.AllReduce(Ops::MUL, "TWINS")), ElementsAre(1, 4, 9));
  EXPECT_THAT(Values(x.AllReduce(Ops::MAX, "TWINS")), ElementsAre(1, 2, 3));
  // A constant is not folded through it: the sum over processes of ones is not one.
  EXPECT_THAT(Values(Tensor::Full(std::vector<int64_t>{2}, 1.0).AllReduce(Ops::ADD, "TWINS")),
              ElementsAre(2, 2));
  // A view of the result, and a reduction of a view.
  Tensor m = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_THAT(Values(m.T().AllReduce(Ops::ADD, "TWINS").Sum(1)), ElementsAre(8, 12));
  // Its node: a COPY to its own device whose arg names the communicator and the op.
  UOpPtr node = x.AllReduce(Ops::ADD, "TWINS").uop();
  EXPECT_EQ(node->op(), Ops::COPY);
  std::optional<AllReduceSpec> spec = AllReduceOf(node->arg());
  ASSERT_TRUE(spec.has_value());
  EXPECT_EQ(spec->communicator, "TWINS");
  EXPECT_EQ(spec->op, Ops::ADD);
  EXPECT_FALSE(AllReduceOf(x.To("CPU:1").uop()->arg()).has_value());
}

TEST(AllReduceTest, AJitReplaysIt) {
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{(in[0] + 1).AllReduce(Ops::ADD, "TWINS") * 3};
  });
  for (int call = 0; call < 4; ++call) {
    const float v = static_cast<float>(call);
    const int before = Twins::calls;
    absl::StatusOr<std::vector<Tensor>> out = jit({Tensor::FromVector<float>({v, -v}, {2})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values((*out)[0]), ElementsAre(6 * (v + 1), 6 * (1 - v))) << "call " << call;
    EXPECT_EQ(Twins::calls, before + 1) << "call " << call;
  }
  EXPECT_TRUE(jit.captured());
}

TEST(AllReduceTest, TheGradientOfASumIsTheSumOfTheGradient) {
  Tensor x = Tensor::FromVector<float>({1, 2}, {2}).RequiresGrad();
  Tensor w = Tensor::FromVector<float>({3, 5}, {2});
  absl::StatusOr<std::vector<Tensor>> grads = (x.AllReduce(Ops::ADD, "TWINS") * w).Sum().Gradient({x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  EXPECT_THAT(Values((*grads)[0]), ElementsAre(6, 10));
  // MAX and MUL have none.
  absl::StatusOr<std::vector<Tensor>> none = x.AllReduce(Ops::MAX, "TWINS").Sum().Gradient({x});
  EXPECT_FALSE(none.ok());
}

TEST(AllReduceTest, BadInputIsAnError) {
  Tensor x = Tensor::FromVector<float>({1, 2}, {2});
  EXPECT_THAT(std::string(x.AllReduce(Ops::SUB, "TWINS").status().message()), HasSubstr("ADD, MUL or MAX"));
  EXPECT_THAT(std::string(x.AllReduce(Ops::ADD, "").status().message()), HasSubstr("no communicator"));
  EXPECT_THAT(std::string(x.Shard({"CPU", "CPU:1"}).AllReduce().status().message()),
              HasSubstr("several devices"));
  // At realize: an unknown communicator, MPI not linked into this test, the communicator's own error.
  EXPECT_THAT(std::string(x.AllReduce(Ops::ADD, "NOPE").ToVector<float>().status().message()),
              HasSubstr("no communicator \"NOPE\""));
  EXPECT_THAT(std::string(x.AllReduce().ToVector<float>().status().message()), HasSubstr("//runtime:mpi"));
  absl::StatusOr<std::vector<float>> failed = x.AllReduce(Ops::ADD, "FAILING").ToVector<float>();
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kDeadlineExceeded);
  EXPECT_THAT(std::string(x.AllReduce(Ops::ADD, "TWINS")
                              .Cast(dtypes::kInt32)
                              .AllReduce(Ops::ADD, "TWINS")
                              .ToVector<int32_t>()
                              .status()
                              .message()),
              HasSubstr("float32 only"));
}

}  // namespace
}  // namespace uopc
