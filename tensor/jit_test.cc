#include "tensor/jit.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/realize.h"
#include "runtime/registry.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;
using ::testing::Pointwise;

Tensor Vec(std::vector<float> v) {
  const int64_t n = static_cast<int64_t>(v.size());
  return Tensor::FromVector<float>(v, {n});
}

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

// Counts kernels RunSchedule runs (replays do not go through it).
class ScheduledKernels {
 public:
  ScheduledKernels() {
    SetKernelRunListener([this](const KernelRun&) { ++count_; });
  }
  ~ScheduledKernels() { SetKernelRunListener({}); }
  int count() const { return count_; }

 private:
  int count_ = 0;
};

TinyJit::Function MulAddSum() {
  return [](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{(in[0] * in[1] + 1).Sum(), (in[0] - in[1]).Contiguous()};
  };
}

TEST(TinyJitTest, ReplaysWithNewInputsWithoutScheduling) {
  TinyJit jit(MulAddSum());
  for (int call = 0; call < 5; ++call) {
    const float k = static_cast<float>(call);
    Tensor a = Vec({1 + k, 2, 3}), b = Vec({4, 5 + k, 6});
    ScheduledKernels scheduled;
    absl::StatusOr<std::vector<Tensor>> out = jit({a, b});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values((*out)[0]), ElementsAre((1 + k) * 4 + 2 * (5 + k) + 18 + 3)) << "call " << call;
    EXPECT_THAT(Values((*out)[1]), ElementsAre(1 + k - 4, 2 - 5 - k, -3)) << "call " << call;
    EXPECT_EQ(jit.calls(), call + 1);
    EXPECT_EQ(jit.captured(), call >= 1);
    if (call >= 2) {
      EXPECT_EQ(scheduled.count(), 0) << "a replay scheduled kernels";
    }
  }
  EXPECT_GE(jit.captured_runs().kernel_count(), 2u);
}

// A replay sums its kernels' times where measuring them costs nothing (the CPU's), and leaves them untimed on
// a device where a timed launch waits for the kernel (OpenCL's profiling event, CUDA's): there the replay
// stays one stream of launches.
TEST(TinyJitTest, ReplaysTimeKernelsOnlyWhereTimingDoesNotWait) {
  int devices = 0;
  for (const char* name : {"CPU", "OPENCL"}) {
    absl::StatusOr<Device*> device = GetDevice(name);
    if (!device.ok()) continue;
    ++devices;
    EXPECT_EQ((*device)->TimingWaits(), std::string(name) == "OPENCL");
    Tensor a = Tensor::Rand({64, 64}, dtypes::kFloat32, name),
           b = Tensor::Rand({64, 64}, dtypes::kFloat32, name);
    ASSERT_TRUE(Tensor::RealizeAll({a, b}).ok());
    TinyJit jit(MulAddSum());
    for (int call = 0; call < 3; ++call) ASSERT_TRUE(jit({a, b}).ok()) << name;
    EXPECT_EQ(jit.last_kernel_seconds() > 0, !(*device)->TimingWaits()) << name;
  }
  EXPECT_GE(devices, 1);
}

TEST(TinyJitTest, InputsThatAreViewsOrLazyAreRealizedFirst) {
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{(in[0] * 2).Contiguous()};
  });
  for (int call = 0; call < 4; ++call) {
    Tensor m = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
    Tensor x = (m + call).T();  // lazy, and a permuted view
    absl::StatusOr<std::vector<Tensor>> out = jit({x});
    ASSERT_TRUE(out.ok()) << out.status();
    const float c = 2.0f * call;
    EXPECT_THAT(Values((*out)[0]), ElementsAre(2 + c, 8 + c, 4 + c, 10 + c, 6 + c, 12 + c)) << call;
  }
}

TEST(TinyJitTest, ATrainingStepReplaysAsItRan) {
  // Plain SGD on y = x.w, once through the jit and once without; the same kernels give the same bits.
  auto make_step = [](Tensor w) {
    return [w](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
      Tensor loss = ((in[0].Matmul(w) - in[1]).Square()).Mean();
      UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> g, loss.Gradient({w}));
      Tensor updated = w.Assign(w - g[0] * 0.1);
      UOPC_RETURN_IF_ERROR(updated.status());
      return std::vector<Tensor>{loss, updated};
    };
  };
  Tensor w_jit = Tensor::FromVector<float>({0.5f, -0.25f, 1.0f, 0.0f, 0.75f, -1.0f}, {3, 2});
  Tensor w_plain = Tensor::FromVector<float>({0.5f, -0.25f, 1.0f, 0.0f, 0.75f, -1.0f}, {3, 2});
  TinyJit jit(make_step(w_jit));
  auto plain = make_step(w_plain);
  for (int step = 0; step < 6; ++step) {
    std::vector<float> xs, ys;
    for (int i = 0; i < 12; ++i) xs.push_back(0.1f * ((i * 7 + step * 3) % 11) - 0.5f);
    for (int i = 0; i < 8; ++i) ys.push_back(0.2f * ((i * 5 + step) % 7) - 0.6f);
    Tensor x = Tensor::FromVector<float>(xs, {4, 3}), y = Tensor::FromVector<float>(ys, {4, 2});
    absl::StatusOr<std::vector<Tensor>> a = jit({x, y});
    ASSERT_TRUE(a.ok()) << a.status();
    std::vector<Tensor> inputs = {x, y};
    absl::StatusOr<std::vector<Tensor>> b = plain(inputs);
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(Tensor::RealizeAll(*b).ok());
    EXPECT_THAT(Values((*a)[0]), Pointwise(FloatEq(), Values((*b)[0]))) << "loss, step " << step;
    EXPECT_THAT(Values(w_jit), Pointwise(FloatEq(), Values(w_plain))) << "weights, step " << step;
  }
}

TEST(TinyJitTest, RandomNumbersAdvanceOnReplay) {
  // The RNG counter is a device tensor the kernels assign, so replays draw new numbers: tinygrad's.
  Tensor::ManualSeed(7);
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{Tensor::Rand({4}) + in[0]};
  });
  std::vector<std::vector<float>> jitted;
  for (int call = 0; call < 4; ++call) {
    absl::StatusOr<std::vector<Tensor>> out = jit({Tensor::Zeros({4}).Contiguous()});
    ASSERT_TRUE(out.ok()) << out.status();
    jitted.push_back(Values((*out)[0]));
  }
  Tensor::ManualSeed(7);
  for (int call = 0; call < 4; ++call) {
    EXPECT_THAT(Values(Tensor::Rand({4})), Pointwise(FloatEq(), jitted[call])) << "call " << call;
  }
}

TEST(TinyJitTest, AnInputOfAnotherShapeOrDtypeIsAnError) {
  TinyJit jit(MulAddSum());
  for (int call = 0; call < 3; ++call) ASSERT_TRUE(jit({Vec({1, 2, 3}), Vec({4, 5, 6})}).ok());
  absl::StatusOr<std::vector<Tensor>> bad = jit({Vec({1, 2}), Vec({4, 5})});
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(bad.status().message(), HasSubstr("input 0 is dtypes.float(2,) on CPU, captured as "
                                                "dtypes.float(3,) on CPU"));
  bad = jit({Vec({1, 2, 3}), Tensor::FromVector<int32_t>({1, 2, 3}, {3})});
  EXPECT_THAT(bad.status().message(), HasSubstr("input 1 is dtypes.int"));
  bad = jit({Vec({1, 2, 3})});
  EXPECT_THAT(bad.status().message(), HasSubstr("captured with 2 inputs, called with 1"));
  bad = jit({Vec({1, 2, 3}), Tensor::FromError(absl::InvalidArgumentError("broken"))});
  EXPECT_THAT(bad.status().message(), HasSubstr("input 1: broken"));
  // Reset captures again, at the new shape.
  jit.Reset();
  for (int call = 0; call < 3; ++call) {
    absl::StatusOr<std::vector<Tensor>> out = jit({Vec({1, 2}), Vec({3, 4})});
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_THAT(Values((*out)[0]), ElementsAre(1 * 3 + 2 * 4 + 2));
  }
}

TEST(TinyJitTest, ReturningAnInputIsAnError) {
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{in[0]};
  });
  ASSERT_TRUE(jit({Vec({1})}).ok());
  absl::StatusOr<std::vector<Tensor>> out = jit({Vec({1})});
  EXPECT_THAT(out.status().message(), HasSubstr("output 0 is input 0"));
  TinyJit twice(MulAddSum());
  Tensor a = Vec({1, 2, 3});
  ASSERT_TRUE(twice({a, a}).ok());
  EXPECT_THAT(twice({a, a}).status().message(), HasSubstr("inputs 0 and 1 are the same buffer"));
}

TEST(TinyJitTest, AFunctionErrorIsReturned) {
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{in[0].Reshape({7})};
  });
  for (int call = 0; call < 3; ++call) {
    EXPECT_THAT(jit({Vec({1, 2, 3})}).status().message(), HasSubstr("reshape")) << call;
  }
  EXPECT_FALSE(jit.captured());
}

TEST(TinyJitTest, JitZeroRunsTheFunctionEveryCall) {
  setenv("JIT", "0", 1);
  int runs = 0;
  TinyJit jit([&runs](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    ++runs;
    return std::vector<Tensor>{(in[0] + 1).Contiguous()};
  });
  unsetenv("JIT");
  for (int call = 0; call < 4; ++call) ASSERT_TRUE(jit({Vec({1})}).ok());
  EXPECT_EQ(runs, 4);
  EXPECT_FALSE(jit.captured());
}

// A symbolic step: the sum of the first pos + 1 rows of a realized table, times the input. Captured once, it
// replays at every position with the kernels' variable set to the new value.
TEST(TinyJitTest, ASymbolicStepReplaysAtEveryValueOfItsVariable) {
  std::vector<float> rows(8 * 3);
  for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<float>(i);
  const Tensor table = Tensor::FromVector<float>(rows, {8, 3});
  const Sint pos = Variable("pos", 0, 7);
  int runs = 0;
  TinyJit step(
      [&](absl::Span<const Tensor> in, absl::Span<const Sint> vars) -> absl::StatusOr<std::vector<Tensor>> {
        ++runs;
        return std::vector<Tensor>{(table.Shrink({{0, vars[0] + 1}, {0, 3}}).Sum(0) * in[0]).Contiguous()};
      });
  for (int64_t p : {2, 5, 0, 7, 3}) {
    absl::StatusOr<Sint> bound = Bind(pos, p);
    ASSERT_TRUE(bound.ok());
    absl::StatusOr<std::vector<Tensor>> out = step({Vec({1, 2, 3})}, {*bound});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<float> want(3);
    for (int64_t r = 0; r <= p; ++r)
      for (int c = 0; c < 3; ++c) want[c] += rows[r * 3 + c] * static_cast<float>(c + 1);
    EXPECT_THAT(*(*out)[0].ToVector<float>(), Pointwise(FloatEq(), want)) << "pos " << p;
  }
  EXPECT_EQ(runs, 2);  // run, capture; then replays
  EXPECT_EQ(step.captured_runs().kernel_count(), 1u);
  // A call that binds another variable, or none, is refused.
  EXPECT_THAT(step({Vec({1, 2, 3})}, {*Bind(Variable("other", 0, 7), 1)}).status().message(),
              HasSubstr("captured with [('pos', 0, 7)]"));
  EXPECT_THAT(step({Vec({1, 2, 3})}, {}).status().message(), HasSubstr("called with variables []"));
  EXPECT_THAT(step({Vec({1, 2, 3})}, {Sint(3)}).status().message(), HasSubstr("is not a bound Variable"));
}

}  // namespace
}  // namespace uopc
