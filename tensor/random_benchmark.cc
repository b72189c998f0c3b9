// Tensor::Rand at the sizes model initialisers draw (issue 36: a large arange's reduction must fold, or the
// counter kernel is quadratic): each iteration realizes Rand({n, n}) on the CPU device, its kernels compiled
// once and cached. tinygrad's figure for the same realize, measured beside it, is in docs/performance.md.
//
//   ./bazelw run -c opt //tensor:random_benchmark
#include <string>

#include "benchmark/benchmark.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

void BM_Rand(benchmark::State& state) {
  const int64_t n = state.range(0);
  Tensor::ManualSeed(0);
  for (auto _ : state) {
    absl::Status s = Tensor::Rand({n, n}).Realize();
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      return;
    }
  }
  state.counters["Mvalues/s"] =
      benchmark::Counter(static_cast<double>(n * n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Rand)->Arg(1024)->Arg(4096)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
