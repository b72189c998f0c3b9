// The CPU devices' thread pool against a oneTBB task arena of the same size, on what a kernel launch asks
// of them: run `threads` coarse chunks and wait for all. `work` is the length of each chunk's busy loop
// (0: the launch overhead alone). ./bazelw run -c opt //runtime:cpu_thread_pool_benchmark
#include <cstdint>

#include "benchmark/benchmark.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"
#include "oneapi/tbb/task_arena.h"
#include "runtime/cpu_thread_pool.h"

namespace uopc {
namespace {

// A chunk of kernel-like work that the compiler cannot remove.
void Chunk(int64_t chunk, int64_t work) {
  uint64_t x = static_cast<uint64_t>(chunk) + 1;
  for (int64_t i = 0; i < work; ++i) x = x * 6364136223846793005ull + 1442695040888963407ull;
  benchmark::DoNotOptimize(x);
}

void BM_HandWrittenPool(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t work = state.range(1);
  CpuThreadPool pool(threads);
  for (auto _ : state) pool.Run(threads, [&](int64_t chunk) { Chunk(chunk, work); });
}

void BM_TbbArena(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  const int64_t work = state.range(1);
  tbb::task_arena arena(threads);
  for (auto _ : state) {
    arena.execute([&] {
      tbb::parallel_for(
          0, threads, 1, [&](int chunk) { Chunk(chunk, work); }, tbb::static_partitioner());
    });
  }
}

void Args(benchmark::internal::Benchmark* b) {
  for (int threads : {2}) {
    for (int64_t work : {0, 1000, 100000}) b->Args({threads, work});
  }
  b->UseRealTime();
}

BENCHMARK(BM_HandWrittenPool)->Apply(Args);
BENCHMARK(BM_TbbArena)->Apply(Args);

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
