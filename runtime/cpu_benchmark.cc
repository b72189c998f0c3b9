// Corpus kernels as tinygrad renders them (targets `clang` and `clang_noopt`) against the plain C loop an
// engineer would write for the same computation, all compiled by the CPU device with the same flags and run
// on the same buffers: ./bazelw run -c opt //runtime:cpu_benchmark
//
// Before timing, each reference loop's output is checked against the corpus kernel's (corpus tolerances), so
// the comparison is between programs that compute the same thing.
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
#include "testdata/corpus_path.h"

namespace uopc {
namespace {

struct Subject {
  const char* label;      // benchmark name
  const char* corpus_id;  // the kernel in the corpus
  const char* reference;  // a C function `ref` computing the same, with the kernel's parameters
  double flops;           // per run, for the rate counter
};

const Subject kSubjects[] = {
    {"add_1024", "add_f32_1d/0",
     "void ref(float* restrict out, float* restrict a, float* restrict b) {\n"
     "  for (int i = 0; i < 1024; i++) out[i] = a[i] + b[i];\n}\n",
     1024},
    {"sum_1000", "sum_all/0",
     "void ref(float* restrict out, float* restrict a) {\n"
     "  float acc = 0.0f;\n  for (int i = 0; i < 1000; i++) acc += a[i];\n  out[0] = acc;\n}\n",
     1000},
    {"row_sum_256x256", "bigger_sum/0",
     "void ref(float* restrict out, float* restrict a) {\n"
     "  for (int r = 0; r < 256; r++) {\n    float acc = 0.0f;\n"
     "    for (int i = 0; i < 256; i++) acc += a[r * 256 + i];\n    out[r] = acc;\n  }\n}\n",
     65536},
    // i-k-j order: the inner loop runs along rows of b and c, the cache-friendly plain loop.
    {"matmul_64", "matmul_64/0",
     "void ref(float* restrict c, float* restrict a, float* restrict b) {\n"
     "  for (int i = 0; i < 64; i++) {\n    for (int j = 0; j < 64; j++) c[i * 64 + j] = 0.0f;\n"
     "    for (int k = 0; k < 64; k++) {\n      float aik = a[i * 64 + k];\n"
     "      for (int j = 0; j < 64; j++) c[i * 64 + j] += aik * b[k * 64 + j];\n    }\n  }\n}\n",
     2.0 * 64 * 64 * 64},
};

[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "cpu_benchmark: %s\n", message.c_str());
  std::exit(1);
}

// A program with its buffers, filled by the corpus formula.
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

Runnable Make(Device& device, const CorpusKernel& kernel, const std::string& name, const std::string& src) {
  Runnable r;
  ProgramSpec spec;
  spec.name = name;
  spec.src = src;
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
  absl::StatusOr<std::unique_ptr<Program>> program = device.CreateProgram(spec);
  if (!program.ok()) Die(absl::StrCat(kernel.id, " ", name, ": ", program.status().ToString()));
  r.program = *std::move(program);
  return r;
}

void Register(Device& device, const std::vector<CorpusKernel>& corpus, const Subject& subject) {
  const CorpusKernel* kernel = nullptr;
  for (const CorpusKernel& k : corpus) {
    if (k.id == subject.corpus_id) kernel = &k;
  }
  if (kernel == nullptr) Die(absl::StrCat("no kernel ", subject.corpus_id, " in the corpus"));
  auto variants = std::make_shared<std::vector<std::pair<std::string, Runnable>>>();
  for (const char* target : {"clang", "clang_noopt"}) {
    const CorpusTarget& t = kernel->target(target);
    variants->emplace_back(absl::StrCat(target, "/", t.name), Make(device, *kernel, t.name, t.src));
  }
  variants->emplace_back("plain_c_loop", Make(device, *kernel, "ref", subject.reference));
  for (auto& [name, runnable] : *variants) {
    runnable.Run();
    std::string mismatch = CorpusValuesMismatch(runnable.out_dtype, runnable.Output(), kernel->outputs["0"]);
    if (!mismatch.empty())
      Die(absl::StrCat(subject.label, " ", name, " computes something else: ", mismatch));
  }
  for (size_t i = 0; i < variants->size(); ++i) {
    benchmark::RegisterBenchmark(absl::StrCat(subject.label, "/", (*variants)[i].first).c_str(),
                                 [variants, i, flops = subject.flops](benchmark::State& state) {
                                   Runnable& r = (*variants)[i].second;
                                   for (auto _ : state) r.Run();
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
  // Devices own the programs' memory: this one lives until exit.
  static auto* cpu = new uopc::CpuDevice();
  for (const uopc::Subject& subject : uopc::kSubjects) uopc::Register(*cpu, *corpus, subject);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
