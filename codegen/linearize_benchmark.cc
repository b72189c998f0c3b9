// Linearizer throughput on the codegen corpus: every kernel's "final rewrite" graph, both CPU targets.
//   ./bazelw run -c opt //codegen:linearize_benchmark
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/linearize.h"
#include "codegen/testing/kernel_corpus.h"

namespace uopc {
namespace {

void BM_LinearizeCorpus(benchmark::State& state) {
  std::vector<UOpPtr> graphs;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      graphs.push_back(ParseCorpusGraph(*k.target(target).Stage("final rewrite")));
    }
  }
  int64_t uops = 0;
  for (auto _ : state) {
    for (const UOpPtr& g : graphs) {
      absl::StatusOr<std::vector<UOpPtr>> program = Linearize(g);
      uops += program.ok() ? static_cast<int64_t>(program->size()) : 0;
      benchmark::DoNotOptimize(program);
    }
  }
  state.counters["kernels/s"] = benchmark::Counter(static_cast<double>(graphs.size() * state.iterations()),
                                                   benchmark::Counter::kIsRate);
  state.counters["uops/s"] = benchmark::Counter(static_cast<double>(uops), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_LinearizeCorpus)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uopc
