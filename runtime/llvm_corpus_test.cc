// Every kernel of the codegen corpus on the LLVM device, run once on buffers filled by the corpus formula and
// compared with the corpus's outputs: (a) tinygrad's own `llvm` IR, (b) what uopc's codegen and LLVM renderer
// make of the kernel's AST, with the LLVM target's hand-coded opts and without opts.
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/device.h"
#include "runtime/llvm_device.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

std::unique_ptr<LLVMDevice> MakeDevice(const std::string& cache) {
  LLVMDevice::Options options;
  options.cache_directory = cache;
  absl::StatusOr<std::unique_ptr<LLVMDevice>> device = LLVMDevice::Create(options);
  if (!device.ok()) {
    std::fprintf(stderr, "cannot create the LLVM device: %s\n", device.status().ToString().c_str());
    std::abort();
  }
  return *std::move(device);
}

// "" when `got` (buffer arg -> values) has every output of the kernel within the corpus's tolerances.
std::string CompareOutputs(const CorpusKernel& k, const nlohmann::json& got) {
  if (k.outputs.empty()) return "the corpus lists no outputs";
  std::string problems;
  for (const auto& [arg, want] : k.outputs.items()) {
    const CorpusBuffer* buffer = nullptr;
    for (const CorpusBuffer& b : k.buffers) {
      if (absl::StrCat(b.arg) == arg) buffer = &b;
    }
    if (buffer == nullptr) return absl::StrCat("output ", arg, " is not a buffer");
    if (!got.contains(arg)) return absl::StrCat("buffer ", arg, " was not stored to");
    absl::StatusOr<DType> dtype = CorpusDType(buffer->dtype);
    if (!dtype.ok()) return dtype.status().ToString();
    std::string mismatch = CorpusValuesMismatch(*dtype, got[arg], want);
    if (!mismatch.empty()) absl::StrAppend(&problems, "buffer ", arg, ": ", mismatch, "\n");
  }
  return problems;
}

// Runs `program` on formula-filled buffers; the outputs as {"ARG": [values]}.
absl::StatusOr<nlohmann::json> RunProgram(Device& device, Program& program, const CorpusKernel& k) {
  std::vector<CorpusBuffer> specs = k.buffers;
  std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.arg < b.arg; });
  std::vector<Buffer> buffers;
  for (const CorpusBuffer& b : specs) {
    UOPC_ASSIGN_OR_RETURN(DType dtype, CorpusDType(b.dtype));
    UOPC_ASSIGN_OR_RETURN(Buffer buffer, Buffer::Allocate(device, dtype, b.size));
    UOPC_RETURN_IF_ERROR(buffer.CopyIn(CorpusInputBytes(dtype, b.arg, b.size)));
    buffers.push_back(std::move(buffer));
  }
  std::vector<Buffer*> args;
  for (Buffer& b : buffers) args.push_back(&b);
  UOPC_RETURN_IF_ERROR(program.Launch(args, {}, LaunchParams{}));
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < specs.size(); ++i) {
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[i].ToBytes());
    UOPC_ASSIGN_OR_RETURN(out[absl::StrCat(specs[i].arg)], CorpusJsonFromBytes(buffers[i].dtype(), bytes));
  }
  return out;
}

void ExpectAllMatch(const std::vector<std::string>& failing, int matching, absl::string_view what) {
  std::printf("%s: %d of %zu corpus kernels match\n", std::string(what).c_str(), matching,
              KernelCorpus().size());
  EXPECT_EQ(matching, 93) << what << ", failing: " << absl::StrJoin(failing, ", ");
}

TEST(LlvmCorpusTest, TinygradsIrReproducesTheCorpusOutputs) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice(absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache"));
  const std::vector<CorpusKernel>& corpus = KernelCorpus();
  ASSERT_EQ(corpus.size(), 93u);
  std::vector<absl::StatusOr<std::unique_ptr<Program>>> programs(corpus.size());
  // Compiling dominates; LLVM compiles on two threads (the device is thread safe).
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < 2; ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < corpus.size(); i = next++) {
        const CorpusTarget& t = corpus[i].target("llvm");
        ProgramSpec spec{.name = t.name, .src = t.src};
        for (const CorpusBuffer& b : corpus[i].buffers) spec.globals.push_back(b.arg);
        std::sort(spec.globals.begin(), spec.globals.end());
        programs[i] = llvm->CreateProgram(spec);
      }
    });
  }
  for (std::thread& t : workers) t.join();

  int matching = 0;
  std::vector<std::string> failing;
  for (size_t i = 0; i < corpus.size(); ++i) {
    std::string problem;
    if (!programs[i].ok()) {
      problem = absl::StrCat("compile: ", programs[i].status().ToString());
    } else {
      absl::StatusOr<nlohmann::json> got = RunProgram(*llvm, **programs[i], corpus[i]);
      problem = got.ok() ? CompareOutputs(corpus[i], *got) : got.status().ToString();
    }
    if (problem.empty()) {
      ++matching;
    } else {
      failing.push_back(corpus[i].id);
      ADD_FAILURE() << corpus[i].id << ": " << problem;
    }
  }
  ExpectAllMatch(failing, matching, "tinygrad's llvm IR");
}

// uopc's own pipeline for the LLVM device (the way `uopc run --device=LLVM` runs a kernel).
void ExpectUopcKernelsMatch(bool optimize) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice("");
  CompileOptions options;
  options.optimize = optimize;
  int matching = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& k : KernelCorpus()) {
    absl::StatusOr<nlohmann::json> got = RunOnCorpusInputs(ParseCorpusGraph(k.ast), nullptr, *llvm, options);
    const std::string problem = got.ok() ? CompareOutputs(k, *got) : got.status().ToString();
    if (problem.empty()) {
      ++matching;
    } else {
      failing.push_back(k.id);
      ADD_FAILURE() << k.id << (optimize ? " (opts)" : " (no opts)") << ": " << problem;
    }
  }
  ExpectAllMatch(failing, matching, optimize ? "uopc, hand-coded opts" : "uopc, no opts");
}

TEST(LlvmCorpusTest, UopcKernelsWithOptsReproduceTheCorpusOutputs) { ExpectUopcKernelsMatch(true); }
TEST(LlvmCorpusTest, UopcKernelsWithoutOptsReproduceTheCorpusOutputs) { ExpectUopcKernelsMatch(false); }

}  // namespace
}  // namespace uopc
