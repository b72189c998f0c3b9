// Codegen time over tinygrad's 93 corpus kernels: opts, every pass, the linearizer and the C renderer (no C
// compiler), with the hand-coded opts and without any; and for every target. tinygrad v0.10.3 takes 0.945 s
// (with opts) and 0.284 s (without) for the same kernels on this machine kind
// (shared/reference/tinygrad-v0.10.3/README.md). BM_RenderForTarget times the renderers alone.
//
//   ./bazelw run -c opt //codegen:codegen_benchmark
#include <memory>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "renderer/cstyle.h"
#include "renderer/targets.h"

namespace uopc {
namespace {

void CompileCorpusFor(benchmark::State& state, const Renderer& renderer, bool optimize) {
  std::vector<UOpPtr> asts;
  for (const CorpusKernel& k : KernelCorpus()) asts.push_back(ParseCorpusGraph(k.ast));
  CompileOptions options;
  options.optimize = optimize;
  for (auto _ : state) {
    for (const UOpPtr& ast : asts) {
      KernelNameCounter names;
      absl::StatusOr<ProgramSpec> p = CompileKernel(ast, renderer, options, &names);
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

void BM_CorpusWithOpts(benchmark::State& state) { CompileCorpusFor(state, ClangRenderer(), true); }
void BM_CorpusWithoutOpts(benchmark::State& state) { CompileCorpusFor(state, ClangRenderer(), false); }
BENCHMARK(BM_CorpusWithOpts)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CorpusWithoutOpts)->Unit(benchmark::kMillisecond);

// Every target, with its default opts (tensor cores for CUDA and PTX where they apply).
void BM_CorpusForTarget(benchmark::State& state, const std::string& target) {
  absl::StatusOr<std::unique_ptr<Renderer>> renderer = MakeRendererForTarget(target);
  if (!renderer.ok()) {
    state.SkipWithError(std::string(renderer.status().message()).c_str());
    return;
  }
  CompileCorpusFor(state, **renderer, true);
}
BENCHMARK_CAPTURE(BM_CorpusForTarget, clang, std::string("clang"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CorpusForTarget, opencl, std::string("opencl"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CorpusForTarget, metal, std::string("metal"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CorpusForTarget, cuda, std::string("cuda"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CorpusForTarget, ptx, std::string("ptx"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_CorpusForTarget, llvm, std::string("llvm"))->Unit(benchmark::kMillisecond);

// Rendering alone: every corpus kernel's linear program (compiled once, with the target's default opts) to
// source, per target. The time is for all 93.
void BM_RenderForTarget(benchmark::State& state, const std::string& target) {
  absl::StatusOr<std::unique_ptr<Renderer>> renderer = MakeRendererForTarget(target);
  if (!renderer.ok()) {
    state.SkipWithError(std::string(renderer.status().message()).c_str());
    return;
  }
  std::vector<std::vector<const UOp*>> programs;
  std::vector<ProgramSpec> specs;  // keeps the uops alive
  for (const CorpusKernel& k : KernelCorpus()) {
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> p =
        CompileKernel(ParseCorpusGraph(k.ast), **renderer, CompileOptions(), &names);
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      return;
    }
    specs.push_back(*std::move(p));
    programs.emplace_back();
    for (const UOpPtr& u : specs.back().uops) programs.back().push_back(u.get());
  }
  for (auto _ : state) {
    for (const std::vector<const UOp*>& program : programs) {
      absl::StatusOr<std::string> src = (*renderer)->Render(program);
      benchmark::DoNotOptimize(src->data());
    }
  }
  state.counters["kernels"] = static_cast<double>(programs.size());
}
BENCHMARK_CAPTURE(BM_RenderForTarget, clang, std::string("clang"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderForTarget, opencl, std::string("opencl"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderForTarget, metal, std::string("metal"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderForTarget, cuda, std::string("cuda"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderForTarget, ptx, std::string("ptx"))->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_RenderForTarget, llvm, std::string("llvm"))->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
