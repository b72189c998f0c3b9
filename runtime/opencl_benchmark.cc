// Corpus kernels on the OPENCL device (tinygrad's `opencl` sources, on POCL here) against the same kernels on
// the CPU device (tinygrad's `clang` sources), on the same formula-filled inputs:
//   ./bazelw run -c opt //runtime:opencl_benchmark
//
// Two OpenCL figures per kernel: `opencl_wall` is a launch plus clFinish as the host sees it (dispatch and
// POCL's work-group scheduling included); `opencl_event` is the kernel's own time from the queue's profiling
// events. Times (and the FLOP/s counters) are wall-clock: POCL runs kernels on its own threads, so the
// host's CPU time says little. Before timing, every variant's output is checked against the corpus's outputs.
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
#include "runtime/exec_item.h"
#include "runtime/opencl_device.h"
#include "testdata/corpus_path.h"

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
    {"row_sum_256x256", "bigger_sum/0", 65536},
    {"matmul_64", "matmul_64/0", 2.0 * 64 * 64 * 64},
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "opencl_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// A program with its buffers, filled by the corpus formula, and its launch dims.
struct Runnable {
  Device* device = nullptr;
  std::unique_ptr<Program> program;
  std::vector<Buffer> buffers;
  std::vector<Buffer*> args;
  LaunchParams launch;
  DType out_dtype;

  // Launches and waits; returns the device's own kernel time.
  double Run() {
    double seconds = 0;
    absl::Status s = program->Launch(args, {}, launch, &seconds);
    if (s.ok()) s = device->Synchronize();
    if (!s.ok()) Die(s.ToString());
    return seconds;
  }
  nlohmann::json Output() { return CorpusJsonFromBytes(out_dtype, buffers[0].ToBytes().value()).value(); }
};

Runnable Make(Device& device, const CorpusKernel& kernel, const CorpusTarget& target) {
  Runnable r;
  r.device = &device;
  ProgramSpec spec{.name = target.name,
                   .src = target.src,
                   .global_size = target.global_size,
                   .local_size = target.local_size};
  for (const CorpusBuffer& b : kernel.buffers) {
    DType dtype = CorpusDType(b.dtype).value();
    absl::StatusOr<Buffer> buffer = Buffer::Allocate(device, dtype, b.size);
    if (!buffer.ok()) Die(buffer.status().ToString());
    if (!buffer->CopyIn(CorpusInputBytes(dtype, b.arg, b.size)).ok()) Die("copy in");
    r.buffers.push_back(*std::move(buffer));
    spec.globals.push_back(b.arg);
    if (b.arg == 0) r.out_dtype = dtype;
  }
  for (Buffer& b : r.buffers) r.args.push_back(&b);
  absl::StatusOr<LaunchParams> launch = LaunchDims(spec);
  if (!launch.ok()) Die(absl::StrCat(kernel.id, ": ", launch.status().ToString()));
  r.launch = *launch;
  absl::StatusOr<std::unique_ptr<Program>> program = device.CreateProgram(spec);
  if (!program.ok()) Die(absl::StrCat(kernel.id, " on ", device.name(), ": ", program.status().ToString()));
  r.program = *std::move(program);
  return r;
}

void Register(Device& cpu, Device& cl, const std::vector<CorpusKernel>& corpus, const Subject& subject) {
  const CorpusKernel* kernel = nullptr;
  for (const CorpusKernel& k : corpus) {
    if (k.id == subject.corpus_id) kernel = &k;
  }
  if (kernel == nullptr) Die(absl::StrCat("no kernel ", subject.corpus_id, " in the corpus"));
  auto on_cpu = std::make_shared<Runnable>(Make(cpu, *kernel, kernel->target("clang")));
  auto on_cl = std::make_shared<Runnable>(Make(cl, *kernel, kernel->target("opencl")));
  for (Runnable* r : {on_cpu.get(), on_cl.get()}) {
    r->Run();
    std::string mismatch = CorpusValuesMismatch(r->out_dtype, r->Output(), kernel->outputs["0"]);
    if (!mismatch.empty()) Die(absl::StrCat(subject.label, " on ", r->device->name(), ": ", mismatch));
  }
  auto rate = [flops = subject.flops](benchmark::State& state) {
    state.counters["FLOP/s"] = benchmark::Counter(flops * state.iterations(), benchmark::Counter::kIsRate);
  };
  benchmark::RegisterBenchmark(absl::StrCat(subject.label, "/cpu_clang").c_str(),
                               [on_cpu, rate](benchmark::State& state) {
                                 for (auto _ : state) on_cpu->Run();
                                 rate(state);
                               })
      ->UseRealTime();
  benchmark::RegisterBenchmark(absl::StrCat(subject.label, "/opencl_wall").c_str(),
                               [on_cl, rate](benchmark::State& state) {
                                 for (auto _ : state) on_cl->Run();
                                 rate(state);
                               })
      ->UseRealTime();
  benchmark::RegisterBenchmark(absl::StrCat(subject.label, "/opencl_event").c_str(),
                               [on_cl, rate](benchmark::State& state) {
                                 for (auto _ : state) state.SetIterationTime(on_cl->Run());
                                 rate(state);
                               })
      ->UseManualTime();
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  absl::StatusOr<std::vector<uopc::CorpusKernel>> corpus =
      uopc::LoadKernelCorpus(uopc::CorpusPath("codegen_kernels.jsonl"));
  if (!corpus.ok()) uopc::Die(corpus.status().ToString());
  absl::StatusOr<std::unique_ptr<uopc::Device>> cl = uopc::MakeOpenCLDevice();
  if (!cl.ok()) uopc::Die(cl.status().ToString());
  std::printf("OPENCL device: %s\n", static_cast<uopc::OpenCLDevice&>(**cl).device_name().c_str());
  // Devices own the programs' memory: both live until exit.
  static auto* cpu = new uopc::CpuDevice();
  static auto* opencl = cl->release();
  for (const uopc::Subject& subject : uopc::kSubjects) uopc::Register(*cpu, *opencl, *corpus, subject);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
