// Tensor::AllReduce without MPI: a stand-in communicator ("TWINS", two processes that hold the same values,
// so a sum doubles each element) checks the schedule item, the TinyJit replay, the gradient and the errors;
// //nn:mpi_test runs the real one under mpirun.
#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
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

// Twins whose all-reduces complete late: a Test never completes one ("LATE"), or the `tests`-th does
// ("SOON"); the doubling happens only then. Counts those in flight at once.
class LateTwins : public Twins {
 public:
  explicit LateTwins(int tests) : tests_(tests) {}
  class Pending : public PendingAllReduce {
   public:
    Pending(std::vector<uint8_t> bytes, int tests) : bytes_(std::move(bytes)), tests_left_(tests) {
      most_in_flight = std::max(most_in_flight, ++in_flight);
    }
    ~Pending() override { EXPECT_TRUE(done_) << "an all-reduce was never waited for"; }
    absl::StatusOr<bool> Test() override {
      if (!done_ && --tests_left_ == 0) Complete();
      return done_;
    }
    absl::StatusOr<std::vector<uint8_t>> Wait() override {
      if (!done_) Complete();
      return std::move(bytes_);
    }

   private:
    void Complete() {
      float* values = reinterpret_cast<float*>(bytes_.data());
      for (size_t i = 0; i < bytes_.size() / sizeof(float); ++i) values[i] *= 2;
      done_ = true;
      --in_flight;
    }
    std::vector<uint8_t> bytes_;
    int tests_left_;
    bool done_ = false;
  };
  absl::StatusOr<std::unique_ptr<PendingAllReduce>> StartAllReduce(std::vector<uint8_t> bytes, DType dtype,
                                                                   Ops op) override {
    if (dtype != dtypes::kFloat32 || op != Ops::ADD) return absl::UnimplementedError("late twins add floats");
    return std::make_unique<Pending>(std::move(bytes), tests_);
  }
  static inline int in_flight = 0, most_in_flight = 0;

 private:
  int tests_;
};

const bool late_registered = RegisterCommunicator(
    "LATE",
    []() -> absl::StatusOr<std::unique_ptr<Communicator>> { return std::make_unique<LateTwins>(-1); });
const bool soon_registered = RegisterCommunicator(
    "SOON", []() -> absl::StatusOr<std::unique_ptr<Communicator>> { return std::make_unique<LateTwins>(2); });
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

// A run starts an all-reduce and goes on; it writes the output before the first item that reads it.
TEST(AllReduceTest, AllReducesOverlapTheItemsThatDoNotNeedThem) {
  for (const char* communicator : {"LATE", "SOON"}) {
    SCOPED_TRACE(communicator);
    auto step = [&](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
      Tensor a = (in[0] + 1).AllReduce(Ops::ADD, communicator);
      Tensor b = (in[1] * 3).AllReduce(Ops::ADD, communicator);
      return std::vector<Tensor>{a * b, a.AllReduce(Ops::ADD, communicator) - 1};
    };
    TinyJit jit(step);
    for (int call = 0; call < 4; ++call) {
      const float v = static_cast<float>(call);
      LateTwins::most_in_flight = 0;
      absl::StatusOr<std::vector<Tensor>> out =
          jit({Tensor::FromVector<float>({v, 1}, {2}), Tensor::FromVector<float>({2, v}, {2})});
      ASSERT_TRUE(out.ok()) << out.status();
      EXPECT_THAT(Values((*out)[0]), ElementsAre(2 * (v + 1) * 12, 4 * 6 * v)) << "call " << call;
      EXPECT_THAT(Values((*out)[1]), ElementsAre(4 * (v + 1) - 1, 7)) << "call " << call;
      EXPECT_EQ(LateTwins::in_flight, 0) << "call " << call;
      // a and b are both in flight before the product waits for them (only once a Test completes none).
      if (std::string(communicator) == "LATE") EXPECT_EQ(LateTwins::most_in_flight, 2) << "call " << call;
    }
    EXPECT_TRUE(jit.captured());
  }
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
