// The generated kernels' speed against the hardware: add and sum of 16M float32 (GB/s) against plain C loops,
// and the 1024x1024 float32 matmul (GFLOPS), each compiled by uopc's codegen for the CPU (clang) and LLVM
// devices and run on 1 and 2 threads:
//   ./bazelw run -c opt //runtime:kernel_benchmark
//
// The kernels are tinygrad v0.10.3's ASTs for the workloads (runtime/testdata/kernel_benchmark.jsonl, with
// the script that harvested them); a workload of several kernels (the sum: tinygrad splits a large reduction
// into three) is timed as a whole. Rows are WORKLOAD/DEVICE/threads:N/OPTS, where OPTS is `default`
// (the device's default opts) or `beam` (after BEAM search, BEAM=2 unless set; see BeamOptions below).
// With UOPC_KERNELS=tinygrad and one thread the CPU device renders tinygrad's source byte for byte (by
// default it renders uopc's vector-blocked kernels, docs/performance.md); with more, codegen splits each
// large enough kernel's outer loop across the threads (docs/threads.md). The plain C loops run on one thread,
// compiled by the CPU device's clang with the same flags.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmark/benchmark.h"
#include "codegen/codegen.h"
#include "nlohmann/json.hpp"
#include "runtime/cpu_device.h"
#include "runtime/device.h"
#include "runtime/exec_item.h"
#include "runtime/llvm_device.h"
#include "runtime/search_driver.h"
#include "uop/kernel_info.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"
#include "uop/util.h"

namespace uopc {
namespace {

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "kernel_benchmark: %s\n", message.c_str());
  std::exit(1);
}

template <typename T>
T OrDie(absl::StatusOr<T> value, absl::string_view what) {
  if (!value.ok()) Die(absl::StrCat(what, ": ", value.status().ToString()));
  return *std::move(value);
}

// ---- the workloads ----

struct Workload {
  const char* name;
  double bytes;  // memory a run must move at least (for GB/s), or 0
  double flops;  // arithmetic of a run (for GFLOPS), or 0
  // A plain C function `ref` computing the same with the first kernel's parameters, or null.
  const char* plain_c;
};

constexpr int64_t kN = 16 * 1024 * 1024;
const Workload kWorkloads[] = {
    {"add_16M_f32", 3.0 * 4 * kN, 0,
     "void ref(float* restrict out, const float* restrict a, const float* restrict b) {\n"
     "  for (int i = 0; i < 16777216; i++) out[i] = a[i] + b[i];\n}\n"},
    // Eight accumulators: what an engineer writes to let the loop run at memory speed.
    {"sum_16M_f32", 4.0 * kN, 0,
     "void ref(float* restrict out, const float* restrict a) {\n"
     "  float acc[8] = {0};\n"
     "  for (int i = 0; i < 16777216; i += 8)\n"
     "    for (int j = 0; j < 8; j++) acc[j] += a[i + j];\n"
     "  float total = 0;\n  for (int j = 0; j < 8; j++) total += acc[j];\n  out[0] = total;\n}\n"},
    {"matmul_1024_f32", 0, 2.0 * 1024 * 1024 * 1024, nullptr},
};

// The workloads' kernel ASTs in schedule order.
std::vector<UOpPtr> WorkloadAsts(const std::string& name) {
  static const nlohmann::json* const all = [] {
    (void)KernelInfoAsArg(KernelInfo{});  // links the KernelInfo payload parser
    auto* json = new nlohmann::json(nlohmann::json::object());
    for (const char* path :
         {"runtime/testdata/kernel_benchmark.jsonl", "../runtime/testdata/kernel_benchmark.jsonl"}) {
      std::ifstream in(path);
      if (!in) continue;
      std::string line;
      while (std::getline(in, line)) {
        nlohmann::json record = nlohmann::json::parse(line);
        (*json)[record["workload"].get<std::string>()] = record["kernels"];
      }
      return json;
    }
    Die("cannot find runtime/testdata/kernel_benchmark.jsonl (run from the workspace root, or bazel run)");
  }();
  if (!all->contains(name)) Die(absl::StrCat("no workload ", name, " in kernel_benchmark.jsonl"));
  std::vector<UOpPtr> asts;
  for (const nlohmann::json& text : (*all)[name]) {
    asts.push_back(OrDie(ParseIrSingle(text.get<std::string>()), absl::StrCat(name, "'s AST")));
  }
  return asts;
}

// The opts BEAM search picks for `ast` on `device`: the "after BEAM" rows. The width is BEAM from the
// environment (2 when unset, tinygrad's usual); the winners are kept in the BEAM cache, so only the first run
// of the benchmark searches (IGNORE_BEAM_CACHE=1 searches again). The search's progress goes to stderr.
absl::StatusOr<CompileOptions> BeamOptions(const UOpPtr& ast, Device& device) {
  const int64_t width = EnvInt("BEAM", 0) > 0 ? EnvInt("BEAM", 0) : 2;
  DeviceBeamOptions options = DeviceBeamOptions::FromEnvironment(width, /*debug=*/1);
  UOPC_ASSIGN_OR_RETURN(DeviceBeamResult searched, BeamSearchOnDevice(ast, device, options));
  CompileOptions out;
  out.opts = std::move(searched.opts);
  return out;
}

// ---- programs and their buffers ----

struct Step {
  std::unique_ptr<Program> program;
  std::vector<Buffer*> args;
  LaunchParams launch;
};

// A workload compiled for a device, with its buffers: kernel i's output (buffer 0) is kernel i + 1's
// buffer 1, as tinygrad's schedule chains them; every other buffer is an input, filled with small values.
struct Compiled {
  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<Step> steps;
  std::string description;  // kernel names and launch sizes

  void Run() {
    for (Step& step : steps) {
      absl::Status s = step.program->Launch(step.args, {}, step.launch);
      if (!s.ok()) Die(s.ToString());
    }
  }
};

Buffer* NewInput(Device& device, DType dtype, int64_t size, std::vector<std::unique_ptr<Buffer>>& keep) {
  auto buffer = std::make_unique<Buffer>(OrDie(Buffer::Allocate(device, dtype, size), "allocate"));
  std::vector<float> values(size);
  for (int64_t i = 0; i < size; ++i) values[i] = static_cast<float>((i * 7919) % 17) * 0.125f - 1.0f;
  if (dtype == dtypes::kFloat32) {
    absl::Status s = buffer->CopyIn(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(values.data()), values.size() * sizeof(float)));
    if (!s.ok()) Die(s.ToString());
  }
  keep.push_back(std::move(buffer));
  return keep.back().get();
}

absl::StatusOr<Compiled> Compile(Device& device, const std::vector<UOpPtr>& asts, bool beam) {
  Compiled c;
  Buffer* previous_output = nullptr;
  KernelNameCounter names;
  for (const UOpPtr& ast : asts) {
    CompileOptions options;
    if (beam) {
      UOPC_ASSIGN_OR_RETURN(options, BeamOptions(ast, device));
    }
    UOPC_ASSIGN_OR_RETURN(ProgramSpec spec, CompileKernel(ast, *device.renderer(), options, &names));
    Step step;
    UOPC_ASSIGN_OR_RETURN(step.launch, LaunchDims(spec));
    absl::StrAppend(
        &c.description, c.description.empty() ? "" : " ", spec.name,
        step.launch.global_size[0] > 1 ? absl::StrCat("[", step.launch.global_size[0], " cores]") : "");
    if (beam) {
      std::vector<std::string> opts;
      for (const Opt& o : spec.applied_opts) opts.push_back(o.ToString());
      absl::StrAppend(&c.description, "{", absl::StrJoin(opts, ","), "}");
    }
    UOPC_ASSIGN_OR_RETURN(step.program, device.CreateProgram(spec));
    Buffer* output = nullptr;
    for (int64_t arg : spec.globals) {
      const UOp* global = nullptr;
      for (const UOp* u : ast->Toposort()) {
        if (u->op() == Ops::DEFINE_GLOBAL && u->arg().as_int() == arg) global = u;
      }
      const DType dtype = global->dtype().base().scalar();
      const int64_t size = global->dtype().ptr_size();
      Buffer* b =
          arg == 1 && previous_output != nullptr ? previous_output : NewInput(device, dtype, size, c.buffers);
      if (arg == 0) output = b;
      step.args.push_back(b);
    }
    previous_output = output;
    c.steps.push_back(std::move(step));
  }
  return c;
}

// ---- devices ----

Device& GetBenchmarkDevice(absl::string_view name, int threads) {
  // Devices own their programs' code: they live until exit.
  static auto* devices = new std::vector<std::pair<std::string, std::unique_ptr<Device>>>();
  const std::string key = absl::StrCat(name, "/", threads);
  for (auto& [k, d] : *devices) {
    if (k == key) return *d;
  }
  std::unique_ptr<Device> device;
  if (name == "CPU") {
    device = std::make_unique<CpuDevice>(CpuDevice::Options{.threads = threads});
  } else {
    device = OrDie(LLVMDevice::Create({.threads = threads}), "the LLVM device");
  }
  devices->emplace_back(key, std::move(device));
  return *devices->back().second;
}

void SetRates(benchmark::State& state, const Workload& w) {
  if (w.bytes > 0) {
    state.counters["GB/s"] = benchmark::Counter(w.bytes / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  }
  if (w.flops > 0) {
    state.counters["GFLOPS"] =
        benchmark::Counter(w.flops / 1e9, benchmark::Counter::kIsIterationInvariantRate);
  }
}

void RegisterWorkload(const Workload& w) {
  for (const char* device : {"CPU", "LLVM"}) {
    for (int threads : {1, 2}) {
      for (bool beam : {false, true}) {
        const std::string name =
            absl::StrCat(w.name, "/", device, "/threads:", threads, "/", beam ? "beam" : "default");
        benchmark::RegisterBenchmark(name.c_str(),
                                     [&w, device, threads, beam](benchmark::State& state) {
                                       absl::StatusOr<Compiled> compiled = Compile(
                                           GetBenchmarkDevice(device, threads), WorkloadAsts(w.name), beam);
                                       if (!compiled.ok()) {
                                         state.SkipWithError(compiled.status().ToString().c_str());
                                         return;
                                       }
                                       compiled->Run();  // warm: pages touched, code loaded
                                       for (auto _ : state) compiled->Run();
                                       state.SetLabel(compiled->description);
                                       SetRates(state, w);
                                     })
            ->UseRealTime()
            ->Unit(benchmark::kMillisecond);
      }
    }
  }
  if (w.plain_c == nullptr) return;
  benchmark::RegisterBenchmark(
      absl::StrCat(w.name, "/plain_c_loop").c_str(),
      [&w](benchmark::State& state) {
        Device& cpu = GetBenchmarkDevice("CPU", 1);
        const UOpPtr ast = WorkloadAsts(w.name).front();
        ProgramSpec spec{.name = "ref", .src = w.plain_c};
        Compiled c;
        Step step;
        std::vector<const UOp*> globals;
        for (const UOp* u : ast->Toposort()) {
          if (u->op() == Ops::DEFINE_GLOBAL) globals.push_back(u);
        }
        std::sort(globals.begin(), globals.end(),
                  [](const UOp* a, const UOp* b) { return a->arg().as_int() < b->arg().as_int(); });
        for (const UOp* g : globals) {
          spec.globals.push_back(g->arg().as_int());
          // The reference writes one value where the kernels write partial sums: size the output for either.
          step.args.push_back(NewInput(cpu, dtypes::kFloat32, g->dtype().ptr_size(), c.buffers));
        }
        step.program = OrDie(cpu.CreateProgram(spec), "the plain C loop");
        c.steps.push_back(std::move(step));
        c.Run();
        for (auto _ : state) c.Run();
        SetRates(state, w);
      })
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  for (const uopc::Workload& w : uopc::kWorkloads) uopc::RegisterWorkload(w);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
