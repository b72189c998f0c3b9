// Tensor graph to C source: the scheduler and codegen together, no C compiler (what tinygrad v0.10.3 was
// timed on: the reference README's "Tensor graph to rendered C source" table). The four graphs are tinygrad's
// own, harvested into schedule/testdata/benchmark_graphs.jsonl; each iteration schedules the graph and
// compiles every kernel for the CPU target with tinygrad's default opts.
//
//   ./bazelw run -c opt //runtime:schedule_benchmark
#include <fstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "schedule/schedule.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

UOpPtr LoadGraph(const std::string& name) {
  std::ifstream in("schedule/testdata/benchmark_graphs.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    if (j["program"] == name) return *ParseIrSingle(j["graph"].get<std::string>());
  }
  return nullptr;
}

void BM_GraphToSource(benchmark::State& state, const std::string& name) {
  UOpPtr graph = LoadGraph(name);
  if (graph == nullptr) {
    state.SkipWithError("graph not found (run from the workspace root: ./bazelw run sets it)");
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
