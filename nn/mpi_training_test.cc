// Training across processes through MPI (Tensor::AllReduce over //runtime:mpi's "MPI"), run by nn/mpi_test.sh
// under `mpirun -np 2`, each rank running every test: sums across the ranks (in a TinyJit replay too), the
// gradient through an all-reduce, and a data-parallel step (each rank a shard of the batch, BatchNorm's
// statistics and the gradients all-reduced) that trains as one process does with the whole batch. With
// UOPC_MPI_TEST_FAIL_RANK or UOPC_MPI_TEST_HANG_RANK set, one rank fails or hangs instead of joining an
// all-reduce, and the script checks that every rank ends, with an error, soon.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/optim.h"
#include "nn/state.h"
#include "runtime/mpi.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc::nn {
namespace {

using ::testing::ElementsAre;

struct World {
  int rank = 0;
  int size = 1;
};

World TheWorld() {
  absl::StatusOr<Communicator*> world = mpi::World();
  EXPECT_TRUE(world.ok()) << world.status();
  return world.ok() ? World{(*world)->rank(), (*world)->size()} : World{};
}

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.Cast(dtypes::kFloat32).ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

TEST(MpiTest, AllReduceCombinesEveryRank) {
  const World w = TheWorld();
  const float r = static_cast<float>(w.rank), n = static_cast<float>(w.size);
  Tensor x = Tensor::FromVector<float>({r + 1, 10 * (r + 1), -r}, {3});
  EXPECT_THAT(Values(x.AllReduce()), ElementsAre(n * (n + 1) / 2, 10 * n * (n + 1) / 2, -n * (n - 1) / 2));
  EXPECT_THAT(Values(x.AllReduce(Ops::MAX)), ElementsAre(n, 10 * n, 0));
  Tensor i = Tensor::FromVector<int32_t>({w.rank + 2, 3}, {2});
  absl::StatusOr<std::vector<int32_t>> product = i.AllReduce(Ops::MUL).ToVector<int32_t>();
  ASSERT_TRUE(product.ok()) << product.status();
  int32_t expected = 1;
  for (int k = 0; k < w.size; ++k) expected *= k + 2;
  EXPECT_EQ((*product)[0], expected);
  // A computed tensor, and kernels after the all-reduce.
  Tensor m = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2}) * (r + 1);
  EXPECT_THAT(Values((m.Sum(0).AllReduce() + 1) * 2),
              ElementsAre(2 * (4 * n * (n + 1) / 2 + 1), 2 * (6 * n * (n + 1) / 2 + 1)));
}

// Independent all-reduces of one size, realized together: every rank must run them in the same order.
TEST(MpiTest, IndependentAllReducesPairUp) {
  const World w = TheWorld();
  std::vector<Tensor> sums;
  for (int i = 0; i < 12; ++i) {
    Tensor t = Tensor::FromVector<float>({static_cast<float>(100 * i + w.rank)}, {1}) * 2;
    sums.push_back(t.AllReduce() + 0.5);
  }
  ASSERT_TRUE(Tensor::RealizeAll(sums).ok());
  float ranks = 0;
  for (int k = 0; k < w.size; ++k) ranks += static_cast<float>(k);
  for (int i = 0; i < 12; ++i) {
    EXPECT_THAT(Values(sums[i]), ElementsAre(2 * (100 * i * w.size + ranks) + 0.5)) << i;
  }
}

TEST(MpiTest, AJitReplaysItsAllReduces) {
  const World w = TheWorld();
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{(in[0] * 2).AllReduce() + 1};
  });
  for (int call = 0; call < 4; ++call) {
    const float v = static_cast<float>(call * 10 + w.rank);
    absl::StatusOr<std::vector<Tensor>> out = jit({Tensor::FromVector<float>({v, -v}, {2})});
    ASSERT_TRUE(out.ok()) << out.status();
    float sum = 0;
    for (int k = 0; k < w.size; ++k) sum += static_cast<float>(call * 10 + k);
    EXPECT_THAT(Values((*out)[0]), ElementsAre(2 * sum + 1, -2 * sum + 1)) << "call " << call;
  }
  EXPECT_TRUE(jit.captured());
}

TEST(MpiTest, TheGradientOfASumAllReducesTheGradient) {
  const World w = TheWorld();
  const float r = static_cast<float>(w.rank);
  Tensor x = Tensor::FromVector<float>({1, 2}, {2}).RequiresGrad();
  Tensor weight = Tensor::FromVector<float>({r + 1, 2 * (r + 1)}, {2});
  // Rank k's loss reads every rank's x through the sum: d(sum of the losses)/dx = the sum of the weights.
  Tensor loss = (x.AllReduce() * weight).Sum();
  absl::StatusOr<std::vector<Tensor>> grads = loss.Gradient({x});
  ASSERT_TRUE(grads.ok()) << grads.status();
  const float n = static_cast<float>(w.size);
  EXPECT_THAT(Values((*grads)[0]), ElementsAre(n * (n + 1) / 2, n * (n + 1)));
}

class Net : public Module {
 public:
  explicit Net(const std::string& sync) : norm(4, BatchNormOptions{.sync_communicator = sync}) {}
  Tensor operator()(const Tensor& x) { return linear(norm(conv(x).Relu()).MaxPool2d().Flatten(1)); }
  void CollectState(StateCollector& state) const override {
    state.Add("conv", conv);
    state.Add("norm", norm);
    state.Add("linear", linear);
  }
  Conv2d conv{1, 4, {3}};
  BatchNorm norm;
  Linear linear{36, 3};
};

constexpr int64_t kBatch = 8;

// The global batch of a step: the same on every rank.
std::pair<std::vector<uint8_t>, std::vector<uint8_t>> GlobalBatch(int step) {
  std::vector<uint8_t> pixels(kBatch * 64), labels(kBatch);
  for (size_t p = 0; p < pixels.size(); ++p) pixels[p] = static_cast<uint8_t>((p * 37 + step * 101) % 256);
  for (size_t l = 0; l < labels.size(); ++l) labels[l] = static_cast<uint8_t>((l * 5 + step) % 3);
  return {pixels, labels};
}

// The loss (over the global batch) and every tensor of the net after each step.
using Trace = std::vector<std::vector<std::vector<float>>>;

Trace Train(const World& w, bool data_parallel, int steps) {
  Trace trace;
  Tensor::ManualSeed(3);
  Net net(data_parallel ? mpi::kCommunicator : "");
  // Realized first: a gradient with respect to an unrealized constant (BatchNorm's weight is ones(4) until
  // then) also flows into every identical constant, here the loss's ones(4) over a local batch of 4
  // (docs/nn.md; tinygrad does the same).
  EXPECT_TRUE(Tensor::RealizeAll(GetParameters(net)).ok());
  Adam opt(GetParameters(net));
  const int64_t rows = data_parallel ? kBatch / w.size : kBatch;
  const int64_t first = data_parallel ? w.rank * rows : 0;
  TinyJit jit([&](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    Tensor::Train training;
    opt.ZeroGrad();
    Tensor loss = net(in[0]).SparseCategoricalCrossentropy(in[1]);
    UOPC_RETURN_IF_ERROR(loss.Backward());
    if (data_parallel) {
      // The mean over the global batch: each rank's gradient of its mean, all-reduced, over the ranks.
      for (const Tensor& p : GetParameters(net)) {
        if (std::optional<Tensor> g = p.Grad()) p.SetGrad(g->AllReduce() * (1.0 / w.size));
      }
      loss = loss.AllReduce() * (1.0 / w.size);
    }
    UOPC_RETURN_IF_ERROR(opt.Step());
    return std::vector<Tensor>{loss};
  });
  for (int step = 0; step < steps; ++step) {
    auto [pixels, labels] = GlobalBatch(step);
    std::vector<uint8_t> x(pixels.begin() + first * 64, pixels.begin() + (first + rows) * 64);
    std::vector<uint8_t> y(labels.begin() + first, labels.begin() + first + rows);
    absl::StatusOr<std::vector<Tensor>> out = jit({Tensor::FromBytes(x, {rows, 1, 8, 8}, dtypes::kUInt8),
                                                   Tensor::FromBytes(y, {rows}, dtypes::kUInt8)});
    EXPECT_TRUE(out.ok()) << out.status();
    if (!out.ok()) return trace;
    std::vector<std::vector<float>>& row = trace.emplace_back();
    row.push_back(Values((*out)[0]));
    for (const auto& [name, t] : GetStateDict(net)) row.push_back(Values(t));
  }
  return trace;
}

TEST(MpiTest, ADataParallelStepIsTheOneProcessStep) {
  const World w = TheWorld();
  ASSERT_EQ(kBatch % w.size, 0);
  constexpr int kSteps = 4;
  const Trace one = Train(w, false, kSteps);
  const Trace parallel = Train(w, true, kSteps);
  ASSERT_EQ(one.size(), kSteps);
  ASSERT_EQ(parallel.size(), kSteps);
  for (int i = 0; i < kSteps; ++i) {
    ASSERT_EQ(one[i].size(), parallel[i].size());
    for (size_t k = 0; k < one[i].size(); ++k) {
      ASSERT_EQ(one[i][k].size(), parallel[i][k].size());
      for (size_t j = 0; j < one[i][k].size(); ++j) {
        EXPECT_NEAR(parallel[i][k][j], one[i][k][j], 1e-4 + 1e-4 * std::abs(one[i][k][j]))
            << "rank " << w.rank << ": tensor " << k << " (0: the loss) element " << j << " at step " << i;
      }
    }
  }
}

// With UOPC_MPI_TEST_FAIL_RANK=k, rank k exits with status 3 instead of joining the all-reduce; with
// UOPC_MPI_TEST_HANG_RANK=k it sleeps a minute. The others must end with an error (mpirun's, or their own
// past UOPC_MPI_TIMEOUT_S), never wait on: nn/mpi_test.sh bounds and checks that.
TEST(MpiTest, ARankThatFailsEndsTheJob) {
  const int64_t fail_rank = EnvInt("UOPC_MPI_TEST_FAIL_RANK", -1);
  const int64_t hang_rank = EnvInt("UOPC_MPI_TEST_HANG_RANK", -1);
  if (fail_rank < 0 && hang_rank < 0) GTEST_SKIP() << "run by nn/mpi_test.sh with a failing rank";
  const World w = TheWorld();
  if (w.rank == fail_rank) {
    std::fprintf(stderr, "rank %d: failing on purpose\n", w.rank);
    std::_Exit(3);
  }
  if (w.rank == hang_rank) {
    std::fprintf(stderr, "rank %d: hanging on purpose\n", w.rank);
    std::this_thread::sleep_for(std::chrono::seconds(60));
    std::_Exit(4);
  }
  absl::StatusOr<std::vector<float>> sum = Tensor::FromVector<float>({1}, {1}).AllReduce().ToVector<float>();
  if (!sum.ok()) {
    std::fprintf(stderr, "rank %d: error: %s\n", w.rank, sum.status().ToString().c_str());
    mpi::Abort(1);
  }
  ADD_FAILURE() << "the all-reduce returned without the failed rank";
}

}  // namespace
}  // namespace uopc::nn
