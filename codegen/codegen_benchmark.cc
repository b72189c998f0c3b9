// Codegen time over tinygrad's 93 corpus kernels: opts, every pass, the linearizer and the C renderer (no C
// compiler), with the hand-coded opts and without any. tinygrad v0.10.3 takes 0.945 s (with opts) and 0.284 s
// (without) for the same kernels on this machine kind (shared/reference/tinygrad-v0.10.3/README.md).
//
//   ./bazelw run -c opt //codegen:codegen_benchmark
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "renderer/cstyle.h"

namespace uopc {
namespace {

void CompileCorpus(benchmark::State& state, bool optimize) {
  std::vector<UOpPtr> asts;
  for (const CorpusKernel& k : KernelCorpus()) asts.push_back(ParseCorpusGraph(k.ast));
  ClangRenderer clang;
  CompileOptions options;
  options.optimize = optimize;
  for (auto _ : state) {
    for (const UOpPtr& ast : asts) {
      KernelNameCounter names;
      absl::StatusOr<ProgramSpec> p = CompileKernel(ast, clang, options, &names);
      if (!p.ok()) {
        state.SkipWithError(std::string(p.status().message()).c_str());
        return;
      }
      benchmark::DoNotOptimize(p->src.data());
    }
  }
  // The time is for all of them; per kernel it is Time / kernels.
  state.counters["kernels"] = static_cast<double>(asts.size());
}

void BM_CorpusWithOpts(benchmark::State& state) { CompileCorpus(state, true); }
void BM_CorpusWithoutOpts(benchmark::State& state) { CompileCorpus(state, false); }
BENCHMARK(BM_CorpusWithOpts)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CorpusWithoutOpts)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
