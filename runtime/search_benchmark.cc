// BEAM search on tinygrad's kernels for the 1024x1024 float32 matmul and the 16M-element float32 sum
// (testdata/beam_workloads.jsonl): the search's wall time, and the searched kernels' speed beside the
// hand-coded opts', on CPU (clang) and LLVM. One iteration each (a search takes seconds); the disk cache is
// not read, so every run searches.
//
//   ./bazelw run -c opt //runtime:search_benchmark                       # BEAM=2
//   BEAM=4 ./bazelw run -c opt //runtime:search_benchmark -- --benchmark_filter=matmul_CPU
//
// Counters: search_s (wall time of the searches of the workload's kernels) and its phases (render_s: opts and
// codegen; compile_s: test programs and the compiler; time_s: timing), GFLOPS or GB/s of the searched kernels
// and of the hand-coded ones (`*_default`), the best of 5 runs of each kernel, on fresh buffers; rounds,
// programs compiled, timed and dropped.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "codegen/codegen.h"
#include "codegen/search.h"
#include "nlohmann/json.hpp"
#include "runtime/device.h"
#include "runtime/registry.h"
#include "runtime/search_driver.h"
#include "uop/text_ir.h"
#include "uop/util.h"

namespace uopc {
namespace {

struct WorkloadKernel {
  UOpPtr ast;
  double flops = 0;
  double bytes = 0;
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "search_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// The kernels of workload `name` ("matmul_1024", "sum_16M"), in order.
std::vector<WorkloadKernel> Workload(const std::string& name) {
  std::ifstream in("runtime/testdata/beam_workloads.jsonl");
  if (!in) Die("runtime/testdata/beam_workloads.jsonl is missing (run from the runfiles root)");
  std::vector<WorkloadKernel> out;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    std::string id = row["id"];
    if (id.substr(0, id.find('/')) != name) continue;
    absl::StatusOr<UOpPtr> ast = ParseIrSingle(row["ast"].get<std::string>());
    if (!ast.ok()) Die(ast.status().ToString());
    out.push_back({*ast, row["flops"].get<double>(), row["bytes"].get<double>()});
  }
  if (out.empty()) Die("no workload " + name);
  return out;
}

// The best of `runs` runs of the kernel compiled with `options`, on zeroed scratch buffers.
double BestSeconds(Device& device, const UOpPtr& ast, const CompileOptions& options, int runs) {
  absl::StatusOr<ProgramSpec> spec = CompileKernel(ast, *device.renderer(), options, nullptr);
  if (!spec.ok()) Die(spec.status().ToString());
  absl::StatusOr<std::unique_ptr<Program>> program = device.CreateProgram(*spec);
  if (!program.ok()) Die(program.status().ToString());
  absl::StatusOr<std::vector<TimingBuffer>> wanted = TimingBuffers(ast);
  if (!wanted.ok()) Die(wanted.status().ToString());
  std::vector<Buffer> buffers;
  for (const TimingBuffer& b : *wanted) {
    absl::StatusOr<Buffer> buffer = Buffer::Allocate(device, b.dtype, b.size);
    if (!buffer.ok()) Die(buffer.status().ToString());
    if (!buffer->CopyIn(std::vector<uint8_t>(buffer->nbytes())).ok()) Die("CopyIn");
    buffers.push_back(std::move(*buffer));
  }
  std::vector<Buffer*> params;
  for (int64_t g : spec->globals) params.push_back(&buffers[g]);
  double best = 1e30;
  for (int i = 0; i < runs; ++i) {
    double seconds = 0;
    absl::Status s = (*program)->Launch(params, {}, LaunchParams{}, &seconds);
    if (!s.ok()) Die(s.ToString());
    best = std::min(best, seconds);
  }
  return best;
}

void BM_BeamSearch(benchmark::State& state, const std::string& workload, const std::string& device_name,
                   bool rate_is_flops) {
  absl::StatusOr<Device*> device = GetDevice(device_name);
  if (!device.ok()) {
    state.SkipWithError(device.status().ToString().c_str());
    return;
  }
  const int64_t beam = EnvInt("BEAM", 0) > 0 ? EnvInt("BEAM", 0) : 2;
  std::vector<WorkloadKernel> kernels = Workload(workload);
  DeviceBeamOptions options = DeviceBeamOptions::FromEnvironment(beam, /*debug=*/1);
  options.read_cache = false;
  options.write_cache = false;
  double search_seconds = 0, searched_seconds = 0, default_seconds = 0, work = 0;
  int64_t rounds = 0, timed = 0, failed = 0, compiled = 0;
  double render_seconds = 0, compile_seconds = 0, timing_seconds = 0;
  std::vector<std::string> chosen;
  for (auto _ : state) {
    for (const WorkloadKernel& k : kernels) {
      absl::StatusOr<DeviceBeamResult> r = BeamSearchOnDevice(k.ast, **device, options);
      if (!r.ok()) Die(r.status().ToString());
      search_seconds += r->wall_seconds;
      rounds += r->search.rounds;
      timed += r->search.timed;
      failed += r->search.failed;
      compiled += r->search.compiled;
      render_seconds += r->search.render_seconds;
      compile_seconds += r->search.compile_seconds;
      timing_seconds += r->search.timing_seconds;
      std::vector<std::string> opts;
      for (const Opt& o : r->opts) opts.push_back(o.ToCompactString());
      chosen.push_back("[" + absl::StrJoin(opts, " ") + "]");
      CompileOptions searched, hand_coded;
      searched.opts = r->opts;
      searched_seconds += BestSeconds(**device, k.ast, searched, 5);
      default_seconds += BestSeconds(**device, k.ast, hand_coded, 5);
      work += rate_is_flops ? k.flops : k.bytes;
    }
  }
  const char* unit = rate_is_flops ? "GFLOPS" : "GB/s";
  state.counters["search_s"] = search_seconds;
  state.counters[unit] = work / searched_seconds / 1e9;
  state.counters[std::string(unit) + "_default"] = work / default_seconds / 1e9;
  state.counters["rounds"] = static_cast<double>(rounds);
  state.counters["timed"] = static_cast<double>(timed);
  state.counters["dropped"] = static_cast<double>(failed);
  state.counters["compiled"] = static_cast<double>(compiled);
  state.counters["render_s"] = render_seconds;
  state.counters["compile_s"] = compile_seconds;
  state.counters["time_s"] = timing_seconds;
  state.SetLabel(absl::StrJoin(chosen, " "));
}

BENCHMARK_CAPTURE(BM_BeamSearch, matmul_CPU, "matmul_1024", "CPU", true)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_BeamSearch, matmul_LLVM, "matmul_1024", "LLVM", true)
    ->Iterations(1)
    ->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_BeamSearch, sum_CPU, "sum_16M", "CPU", false)->Iterations(1)->Unit(benchmark::kSecond);
BENCHMARK_CAPTURE(BM_BeamSearch, sum_LLVM, "sum_16M", "LLVM", false)->Iterations(1)->Unit(benchmark::kSecond);

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
