// uopc's side of examples/beside_pytorch.sh: the workloads of examples/torch_workloads.py through the Tensor
// API on the default device, each step a TinyJit replay (no graph building, scheduling or compiling timed):
//   matmul/1024, matmul/4096      a float32 matmul of two n x n tensors (uopc's kernels read the right side
//   from
//                                 packed panels); BM_MatmulWithoutPanels: the same product as tinygrad's
//                                 multiply and sum, without them
//   conv3x3/fwd, conv3x3/fwd_bwd  a ResNet stage-1 3x3 convolution (batch 16, 64 -> 64 channels, 56 x 56,
//                                 padding 1): the forward pass, and the forward pass with both gradients
//
//   ./bazelw run -c opt //examples:workloads_benchmark                      # uopc's kernels
//   UOPC_KERNELS=tinygrad bazel-bin/examples/workloads_benchmark            # tinygrad's kernels
//
// GFLOPS counts the multiply-adds as two operations (the backward pass as twice the forward's).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "benchmark/benchmark.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

void CheckOk(const absl::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "workloads_benchmark: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

// Calls `jit` until it replays, then times replays.
void TimeReplays(benchmark::State& state, TinyJit& jit, const std::vector<Tensor>& inputs, double flops) {
  while (!jit.captured() || jit.calls() < 3) CheckOk(jit(inputs).status(), "the step");
  for (auto _ : state) CheckOk(jit(inputs).status(), "the step");
  state.counters["GFLOPS"] = benchmark::Counter(flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
}

void BM_Matmul(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = Tensor::Rand({n, n}), b = Tensor::Rand({n, n});
  CheckOk(Tensor::RealizeAll({a, b}), "the inputs");
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{in[0].Matmul(in[1])};
  });
  TimeReplays(state, jit, {a, b}, 2.0 * n * n * n);
}
BENCHMARK(BM_Matmul)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();

// The product Matmul builds with tinygrad's graph (a times B transposed, summed over k), which never reads B
// from panels: what the panels gain, in one run.
void BM_MatmulWithoutPanels(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor a = Tensor::Rand({n, n}), b = Tensor::Rand({n, n});
  CheckOk(Tensor::RealizeAll({a, b}), "the inputs");
  TinyJit jit([n](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{(in[0].Reshape({n, 1, n}) * in[1].Transpose().Reshape({1, n, n})).Sum(-1)};
  });
  TimeReplays(state, jit, {a, b}, 2.0 * n * n * n);
}
BENCHMARK(BM_MatmulWithoutPanels)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();

constexpr int64_t kBatch = 16, kChannels = 64, kSize = 56;
constexpr double kConvFlops = 2.0 * kBatch * kChannels * kChannels * 9 * kSize * kSize;

void BM_Conv3x3Forward(benchmark::State& state) {
  Tensor x = Tensor::Rand({kBatch, kChannels, kSize, kSize}), w = Tensor::Rand({kChannels, kChannels, 3, 3});
  CheckOk(Tensor::RealizeAll({x, w}), "the inputs");
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    return std::vector<Tensor>{in[0].Conv2d(in[1], ConvOptions{.padding = {1}})};
  });
  TimeReplays(state, jit, {x, w}, kConvFlops);
}
BENCHMARK(BM_Conv3x3Forward)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_Conv3x3ForwardBackward(benchmark::State& state) {
  Tensor x = Tensor::Rand({kBatch, kChannels, kSize, kSize}).RequiresGrad(),
         w = Tensor::Rand({kChannels, kChannels, 3, 3}).RequiresGrad();
  CheckOk(Tensor::RealizeAll({x, w}), "the inputs");
  TinyJit jit([](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    in[0].SetGrad(std::nullopt);
    in[1].SetGrad(std::nullopt);
    Tensor loss = in[0].Conv2d(in[1], ConvOptions{.padding = {1}}).Sum();
    absl::Status backward = loss.Backward();
    if (!backward.ok()) return backward;
    return std::vector<Tensor>{loss, *in[0].Grad(), *in[1].Grad()};
  });
  TimeReplays(state, jit, {x, w}, 3 * kConvFlops);
}
BENCHMARK(BM_Conv3x3ForwardBackward)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
