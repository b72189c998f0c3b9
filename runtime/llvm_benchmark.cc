// The LLVM device against the CPU device: ./bazelw run -c opt //runtime:llvm_benchmark
//
//  - compile/...: source to binary, uncached, wall time (clang works in a process of its own). LLVM parses,
//  optimizes (O2) and emits an object in process; the
//    CPU device runs a clang process that writes a shared object. Per kernel for add, sum and matmul_64, and
//    once over all 93 corpus kernels (the `per_kernel_ms` counter).
//  - load/...: binary to a callable program (ORC JIT linking against dlopen of an in-memory file).
//  - run/...: the corpus kernels add_f32_1d, sum_all and matmul_64 as tinygrad renders them for each device
//    (`llvm` IR on LLVM, `clang` C on CPU; uopc's renderers write the same text), on the same formula-filled
//    buffers. Each program's output is checked against the corpus before timing.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "codegen/testing/kernel_corpus.h"
#include "runtime/corpus_values.h"
#include "runtime/cpu_device.h"
#include "runtime/device.h"
#include "runtime/llvm_device.h"
#include "testdata/corpus_path.h"
#include "uop/util.h"

namespace uopc {
namespace {

struct Subject {
  const char* label;      // benchmark name
  const char* corpus_id;  // the kernel in the corpus
  double flops;           // per run, for the rate counter
};

const Subject kSubjects[] = {
    {"add_1024", "add_f32_1d/0", 1024},
    {"sum_1000", "sum_all/0", 1000},
    {"matmul_64", "matmul_64/0", 2.0 * 64 * 64 * 64},
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "llvm_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// The device and the corpus target it runs.
struct Side {
  const char* name;    // "LLVM", "CPU"
  const char* target;  // the corpus target of its renderer
  Device* device;
};

ProgramSpec SpecFor(const CorpusKernel& kernel, const char* target) {
  const CorpusTarget& t = kernel.target(target);
  ProgramSpec spec;
  spec.name = t.name;
  spec.src = t.src;
  for (const CorpusBuffer& b : kernel.buffers) spec.globals.push_back(b.arg);
  return spec;
}

// A program with its buffers, filled by the corpus formula (buffers in the kernel's argument order).
struct Runnable {
  std::unique_ptr<Program> program;
  std::vector<Buffer> buffers;
  std::vector<Buffer*> args;
  DType out_dtype;

  void Run() {
    absl::Status s = program->Launch(args, {}, LaunchParams{});
    if (!s.ok()) Die(s.ToString());
  }
  nlohmann::json Output() { return CorpusJsonFromBytes(out_dtype, buffers[0].ToBytes().value()).value(); }
};

Runnable Make(Device& device, const CorpusKernel& kernel, const ProgramSpec& spec) {
  Runnable r;
  for (const CorpusBuffer& b : kernel.buffers) {
    DType dtype = CorpusDType(b.dtype).value();
    absl::StatusOr<Buffer> buffer = Buffer::Allocate(device, dtype, b.size);
    if (!buffer.ok()) Die(buffer.status().ToString());
    if (!buffer->CopyIn(CorpusInputBytes(dtype, b.arg, b.size)).ok()) Die("copy in");
    r.buffers.push_back(*std::move(buffer));
    if (b.arg == 0) r.out_dtype = dtype;
  }
  for (Buffer& b : r.buffers) r.args.push_back(&b);
  absl::StatusOr<std::unique_ptr<Program>> program = device.CreateProgram(spec);
  if (!program.ok()) Die(absl::StrCat(kernel.id, " on ", device.name(), ": ", program.status().ToString()));
  r.program = *std::move(program);
  return r;
}

const CorpusKernel& Find(const std::vector<CorpusKernel>& corpus, const char* id) {
  for (const CorpusKernel& k : corpus) {
    if (k.id == id) return k;
  }
  Die(absl::StrCat("no kernel ", id, " in the corpus"));
}

std::string SourceFor(const Side& side, const ProgramSpec& spec) {
  absl::StatusOr<std::string> src = side.device->ProgramSource(spec);
  if (!src.ok()) Die(src.status().ToString());
  return *src;
}

void RegisterCompile(const Side& side, const std::vector<CorpusKernel>& corpus) {
  for (const Subject& subject : kSubjects) {
    const std::string src = SourceFor(side, SpecFor(Find(corpus, subject.corpus_id), side.target));
    benchmark::RegisterBenchmark(absl::StrCat("compile/", subject.label, "/", side.name).c_str(),
                                 [side, src](benchmark::State& state) {
                                   for (auto _ : state) {
                                     absl::StatusOr<std::string> lib = side.device->compiler().Compile(src);
                                     if (!lib.ok()) Die(lib.status().ToString());
                                     benchmark::DoNotOptimize(lib->data());
                                   }
                                 })
        ->UseRealTime()
        ->Unit(benchmark::kMillisecond);
  }
  auto sources = std::make_shared<std::vector<std::string>>();
  for (const CorpusKernel& k : corpus) sources->push_back(SourceFor(side, SpecFor(k, side.target)));
  benchmark::RegisterBenchmark(absl::StrCat("compile/all_93_kernels/", side.name).c_str(),
                               [side, sources](benchmark::State& state) {
                                 double seconds = 0;
                                 for (auto _ : state) {
                                   const auto start = std::chrono::steady_clock::now();
                                   for (const std::string& src : *sources) {
                                     absl::StatusOr<std::string> lib = side.device->compiler().Compile(src);
                                     if (!lib.ok()) Die(lib.status().ToString());
                                   }
                                   seconds += SecondsSince(start);
                                 }
                                 state.counters["wall_ms_per_kernel"] =
                                     1e3 * seconds /
                                     (static_cast<double>(sources->size()) * state.iterations());
                               })
      ->Iterations(1)
      ->UseRealTime()
      ->Unit(benchmark::kMillisecond);
}

void RegisterLoad(const Side& side, const std::vector<CorpusKernel>& corpus) {
  const ProgramSpec spec = SpecFor(Find(corpus, "matmul_64/0"), side.target);
  absl::StatusOr<std::string> lib = side.device->compiler().Compile(SourceFor(side, spec));
  if (!lib.ok()) Die(lib.status().ToString());
  benchmark::RegisterBenchmark(absl::StrCat("load/matmul_64/", side.name).c_str(),
                               [side, spec, lib = *lib](benchmark::State& state) {
                                 for (auto _ : state) {
                                   absl::StatusOr<std::unique_ptr<Program>> p =
                                       side.device->LoadProgram(spec, lib);
                                   if (!p.ok()) Die(p.status().ToString());
                                 }
                               })
      ->Unit(benchmark::kMicrosecond);
}

void RegisterRun(const Side& side, const std::vector<CorpusKernel>& corpus) {
  for (const Subject& subject : kSubjects) {
    const CorpusKernel& kernel = Find(corpus, subject.corpus_id);
    auto runnable = std::make_shared<Runnable>(Make(*side.device, kernel, SpecFor(kernel, side.target)));
    runnable->Run();
    std::string mismatch = CorpusValuesMismatch(runnable->out_dtype, runnable->Output(), kernel.outputs["0"]);
    if (!mismatch.empty())
      Die(absl::StrCat(subject.label, " on ", side.name, " computes something else: ", mismatch));
    benchmark::RegisterBenchmark(absl::StrCat("run/", subject.label, "/", side.name).c_str(),
                                 [runnable, flops = subject.flops](benchmark::State& state) {
                                   for (auto _ : state) runnable->Run();
                                   state.counters["FLOP/s"] = benchmark::Counter(flops * state.iterations(),
                                                                                 benchmark::Counter::kIsRate);
                                 });
  }
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  absl::StatusOr<std::vector<uopc::CorpusKernel>> corpus =
      uopc::LoadKernelCorpus(uopc::CorpusPath("codegen_kernels.jsonl"));
  if (!corpus.ok()) uopc::Die(corpus.status().ToString());
  // Devices own the programs' memory: they live until exit. No compile cache: compiles are what is timed.
  uopc::LLVMDevice::Options llvm_options;
  llvm_options.cache_directory = "";
  absl::StatusOr<std::unique_ptr<uopc::LLVMDevice>> llvm = uopc::LLVMDevice::Create(llvm_options);
  if (!llvm.ok()) uopc::Die(llvm.status().ToString());
  uopc::CpuDevice::Options cpu_options;
  cpu_options.cache_directory = "";
  static auto* cpu = new uopc::CpuDevice(cpu_options);
  static auto* llvm_device = llvm->release();
  const uopc::Side sides[] = {{"LLVM", "llvm", llvm_device}, {"CPU", "clang", cpu}};
  for (const uopc::Side& side : sides) uopc::RegisterCompile(side, *corpus);
  for (const uopc::Side& side : sides) uopc::RegisterLoad(side, *corpus);
  for (const uopc::Side& side : sides) uopc::RegisterRun(side, *corpus);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
