// A captured training step (TinyJit) replays exactly what running the step does: a small conv net with
// BatchNorm (running statistics assigned in the step) and Adam (moments assigned), trained for a few steps
// through the jit and without it from the same weights and batches, ends with the same bits.
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/state.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"

namespace uopc::nn {
namespace {

class Net : public Module {
 public:
  Tensor operator()(const Tensor& x) { return linear(norm(conv(x).Relu()).MaxPool2d().Flatten(1)); }
  void CollectState(StateCollector& state) const override {
    state.Add("conv", conv);
    state.Add("norm", norm);
    state.Add("linear", linear);
  }
  Conv2d conv{1, 4, {3}};
  BatchNorm norm{4};
  Linear linear{36, 3};
};

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.Cast(dtypes::kFloat32).ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

struct Batch {
  Tensor x, y;
};

Batch MakeBatch(int step) {
  std::vector<uint8_t> pixels(8 * 64), labels(8);
  for (size_t p = 0; p < pixels.size(); ++p) pixels[p] = static_cast<uint8_t>((p * 37 + step * 101) % 256);
  for (size_t l = 0; l < labels.size(); ++l) labels[l] = static_cast<uint8_t>((l + step) % 3);
  return {Tensor::FromBytes(pixels, {8, 1, 8, 8}, dtypes::kUInt8),
          Tensor::FromBytes(labels, {8}, dtypes::kUInt8)};
}

absl::StatusOr<std::vector<Tensor>> Step(Net& net, Adam& opt, absl::Span<const Tensor> in) {
  Tensor::Train training;
  opt.ZeroGrad();
  Tensor loss = net(in[0]).SparseCategoricalCrossentropy(in[1]);
  UOPC_RETURN_IF_ERROR(loss.Backward());
  UOPC_RETURN_IF_ERROR(opt.Step());
  return std::vector<Tensor>{loss};
}

// The loss and every tensor of the net after each step.
using Trace = std::vector<std::vector<std::vector<float>>>;

TEST(JitTrainingTest, AReplayedStepIsTheStep) {
  constexpr int kSteps = 5;
  // One net after the other: two optimizers alive before either steps would share their identical
  // unrealized state (tinygrad v0.10.3 does the same; docs/support.md).
  Trace plain_trace, jitted_trace;
  {
    Tensor::ManualSeed(3);
    Net net;
    Adam opt(GetParameters(net));
    for (int i = 0; i < kSteps; ++i) {
      Batch b = MakeBatch(i);
      std::vector<Tensor> in = {b.x, b.y};
      absl::StatusOr<std::vector<Tensor>> out = Step(net, opt, in);
      ASSERT_TRUE(out.ok()) << out.status();
      std::vector<std::vector<float>>& row = plain_trace.emplace_back();
      row.push_back(Values((*out)[0]));
      for (const auto& [name, t] : GetStateDict(net)) row.push_back(Values(t));
    }
  }
  Tensor::ManualSeed(3);
  Net net;
  Adam opt(GetParameters(net));
  TinyJit jit([&](absl::Span<const Tensor> in) { return Step(net, opt, in); });
  for (int i = 0; i < kSteps; ++i) {
    Batch b = MakeBatch(i);
    absl::StatusOr<std::vector<Tensor>> out = jit({b.x, b.y});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<std::vector<float>>& row = jitted_trace.emplace_back();
    row.push_back(Values((*out)[0]));
    for (const auto& [name, t] : GetStateDict(net)) row.push_back(Values(t));
  }
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_EQ(plain_trace[i].size(), jitted_trace[i].size());
    EXPECT_EQ(plain_trace[i][0], jitted_trace[i][0]) << "loss at step " << i;
    size_t k = 1;
    for (const auto& [name, t] : GetStateDict(net)) {
      EXPECT_EQ(plain_trace[i][k], jitted_trace[i][k]) << name << " at step " << i;
      ++k;
    }
  }
  EXPECT_TRUE(jit.captured());
  EXPECT_GT(jit.captured_runs().kernel_count(), 10u);
}

// Data-parallel training (tinygrad's shard): the weights on CPU and CPU:1, each batch split along its images,
// the gradients and BatchNorm's batch statistics all-reduced, the step captured and replayed. It trains as
// one device does with the whole batch, to float rounding (the sums run in another order).
TEST(JitTrainingTest, ADataParallelStepIsTheStep) {
  constexpr int kSteps = 4;
  const std::vector<std::string> devices = {"CPU:0", "CPU:1"};
  auto train = [&](bool sharded) {
    Trace trace;
    Tensor::ManualSeed(3);
    Net net;
    if (sharded) {
      for (const Tensor& t : GetParameters(net)) EXPECT_TRUE(t.To_("CPU:0,CPU:1").ok());
    }
    Adam opt(GetParameters(net));
    TinyJit jit([&](absl::Span<const Tensor> in) { return Step(net, opt, in); });
    for (int i = 0; i < kSteps; ++i) {
      Batch b = MakeBatch(i);
      if (sharded) {
        b.x.Shard_(devices, 0);
        b.y.Shard_(devices, 0);
      }
      absl::StatusOr<std::vector<Tensor>> out = jit({b.x, b.y});
      EXPECT_TRUE(out.ok()) << out.status();
      if (!out.ok()) return trace;
      std::vector<std::vector<float>>& row = trace.emplace_back();
      row.push_back(Values((*out)[0]));
      for (const auto& [name, t] : GetStateDict(net)) {
        if (sharded) EXPECT_EQ(t.Device(), "CPU,CPU:1") << name;
        row.push_back(Values(t));
      }
    }
    EXPECT_TRUE(jit.captured());
    return trace;
  };
  const Trace one = train(false), two = train(true);
  ASSERT_EQ(one.size(), kSteps);
  ASSERT_EQ(two.size(), kSteps);
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_EQ(one[i].size(), two[i].size());
    for (size_t k = 0; k < one[i].size(); ++k) {
      ASSERT_EQ(one[i][k].size(), two[i][k].size());
      for (size_t j = 0; j < one[i][k].size(); ++j) {
        EXPECT_NEAR(two[i][k][j], one[i][k][j], 1e-4 + 1e-4 * std::abs(one[i][k][j]))
            << "tensor " << k << " (0: the loss) element " << j << " at step " << i;
      }
    }
  }
}

}  // namespace
}  // namespace uopc::nn
