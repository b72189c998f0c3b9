// Tensor graph to C source: the scheduler and codegen together, no C compiler (what tinygrad v0.10.3 was
// timed on: the reference README's "Tensor graph to rendered C source" table). The four graphs are tinygrad's
// own, harvested into schedule/testdata/benchmark_graphs.jsonl; each iteration schedules the graph and
// compiles every kernel for the CPU target with tinygrad's default opts.
//
//   ./bazelw run -c opt //runtime:schedule_benchmark
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "renderer/cstyle.h"
#include "schedule/schedule.h"
#include "tensor/benchmark_graphs.h"

namespace uopc {
namespace {

UOpPtr BuildGraph(const std::string& name) {
  for (const auto& [graph_name, build] : BenchmarkGraphs()) {
    if (graph_name == name) return UOp::Sink({build().uop()});
  }
  return nullptr;
}

void BM_GraphToSource(benchmark::State& state, const std::string& name) {
  UOpPtr graph = BuildGraph(name);
  if (graph == nullptr) {
    state.SkipWithError("no such graph");
    return;
  }
  ClangRenderer clang;
  size_t kernels = 0, source_bytes = 0;
  for (auto _ : state) {
    absl::StatusOr<Schedule> schedule = CreateSchedule(graph);
    if (!schedule.ok()) {
      state.SkipWithError(std::string(schedule.status().message()).c_str());
      return;
    }
    KernelNameCounter names;
    kernels = source_bytes = 0;
    for (const ScheduleItem& item : schedule->items) {
      if (item.ast->op() != Ops::SINK) continue;
      absl::StatusOr<ProgramSpec> spec = CompileKernel(item.ast, clang, CompileOptions{}, &names);
      if (!spec.ok()) {
        state.SkipWithError(std::string(spec.status().message()).c_str());
        return;
      }
      ++kernels;
      source_bytes += spec->src.size();
    }
    benchmark::DoNotOptimize(source_bytes);
  }
  state.counters["kernels"] = static_cast<double>(kernels);
}

// The scheduler alone, for the split.
void BM_Schedule(benchmark::State& state, const std::string& name) {
  UOpPtr graph = BuildGraph(name);
  for (auto _ : state) {
    absl::StatusOr<Schedule> schedule = CreateSchedule(graph);
    benchmark::DoNotOptimize(schedule);
  }
}

BENCHMARK_CAPTURE(BM_Schedule, matmul_1024, std::string("matmul_1024"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Schedule, mlp_784_512_512_10, std::string("mlp_784_512_512_10"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Schedule, resnet_basic_block, std::string("resnet_basic_block"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Schedule, attention_block, std::string("attention_block"))
    ->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_GraphToSource, matmul_1024, std::string("matmul_1024"))->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GraphToSource, mlp_784_512_512_10, std::string("mlp_784_512_512_10"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GraphToSource, resnet_basic_block, std::string("resnet_basic_block"))
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_GraphToSource, attention_block, std::string("attention_block"))
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
