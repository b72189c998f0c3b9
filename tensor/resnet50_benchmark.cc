// tinygrad's compile benchmark (test/external/external_benchmark_schedule.py) in C++: ResNet-50's forward
// pass, batch 64, 224x224, Tensor::Empty weights, the CPU (clang) target; each iteration builds the graph,
// schedules it and codegens its 32 unique kernels. The counters split the time by tinygrad's phases (in ms);
// the argument is the number of threads for the per-kernel phases (1 is tinygrad's serial loop).
//
//   ./bazelw run -c opt //tensor:resnet50_benchmark
#include "benchmark/benchmark.h"
#include "renderer/cstyle.h"
#include "tensor/testing/compile_phases.h"
#include "tensor/testing/resnet50.h"

namespace uopc {
namespace {

void BM_Resnet50Compile(benchmark::State& state) {
  Resnet50 model = Resnet50::WithEmptyWeights();
  Tensor images = Tensor::Empty({64, 3, 224, 224});
  ClangRenderer clang;
  CompilePhasesOptions options{.threads = static_cast<int>(state.range(0)), .render = state.range(1) != 0};
  double tensor = 0, schedule = 0, opts = 0, prep = 0, rewrite = 0, render = 0;
  int64_t uops = 0, kernels = 0;
  for (auto _ : state) {
    absl::StatusOr<CompilePhases> p =
        MeasureCompilePhases([&] { return model.Forward(images); }, clang, options);
    if (!p.ok()) {
      state.SkipWithError(std::string(p.status().message()).c_str());
      return;
    }
    tensor += p->tensor, schedule += p->schedule, opts += p->opts, prep += p->prep, rewrite += p->rewrite;
    render += p->render;
    uops = p->total_uops();
    kernels = static_cast<int64_t>(p->unique_asts.size());
  }
  const double n = static_cast<double>(state.iterations());
  state.counters["tensor_ms"] = tensor / n * 1e3;
  state.counters["schedule_ms"] = schedule / n * 1e3;
  state.counters["opts_ms"] = opts / n * 1e3;
  state.counters["prep_ms"] = prep / n * 1e3;
  state.counters["rewrite_ms"] = rewrite / n * 1e3;
  if (options.render) state.counters["render_ms"] = render / n * 1e3;
  state.counters["uops"] = static_cast<double>(uops);
  state.counters["kernels"] = static_cast<double>(kernels);
}

// {threads, render}
BENCHMARK(BM_Resnet50Compile)
    ->ArgNames({"threads", "render"})
    ->Args({1, 0})
    ->Args({2, 0})
    ->Args({1, 1})
    ->Args({2, 1})
    ->Unit(benchmark::kMillisecond)
    ->MinTime(2.0);

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
