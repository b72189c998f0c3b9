// Every kernel of the codegen corpus, as tinygrad rendered it for the `clang` and `clang_noopt` targets,
// compiled by the CPU device, run once on buffers filled by the corpus formula, and compared with the
// corpus's outputs.
#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "runtime/corpus_values.h"
#include "runtime/cpu_device.h"
#include "runtime/device.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

constexpr const char* kTargets[] = {"clang", "clang_noopt"};

struct Case {
  const CorpusKernel* kernel;
  std::string target;
  ProgramSpec spec;
  absl::StatusOr<std::unique_ptr<Program>> program = absl::UnknownError("not compiled");
};

// Runs `program` on formula-filled buffers; "" when every output matches, else the mismatches.
absl::StatusOr<std::string> OutputMismatches(Device& device, Program& program, const CorpusKernel& kernel) {
  std::vector<CorpusBuffer> specs = kernel.buffers;
  std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.arg < b.arg; });
  std::vector<Buffer> buffers;
  std::vector<DType> dtypes;
  for (const CorpusBuffer& b : specs) {
    UOPC_ASSIGN_OR_RETURN(DType dtype, CorpusDType(b.dtype));
    UOPC_ASSIGN_OR_RETURN(Buffer buffer, Buffer::Allocate(device, dtype, b.size));
    UOPC_RETURN_IF_ERROR(buffer.CopyIn(CorpusInputBytes(dtype, b.arg, b.size)));
    buffers.push_back(std::move(buffer));
    dtypes.push_back(dtype);
  }
  std::vector<Buffer*> args;
  for (Buffer& b : buffers) args.push_back(&b);
  UOPC_RETURN_IF_ERROR(program.Launch(args, {}, LaunchParams{}));
  std::string problems;
  if (kernel.outputs.empty()) return "the corpus lists no outputs";
  for (const auto& [arg, want] : kernel.outputs.items()) {
    size_t i = 0;
    while (i < specs.size() && absl::StrCat(specs[i].arg) != arg) ++i;
    if (i == specs.size()) return absl::StrCat("output ", arg, " is not a buffer");
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[i].ToBytes());
    UOPC_ASSIGN_OR_RETURN(nlohmann::json got, CorpusJsonFromBytes(dtypes[i], bytes));
    std::string mismatch = CorpusValuesMismatch(dtypes[i], got, want);
    if (!mismatch.empty()) absl::StrAppend(&problems, "buffer ", arg, ": ", mismatch, "\n");
  }
  return problems;
}

// Runs the case's program on formula-filled buffers; "" when every output matches, else why not.
std::string RunAndCompare(Device& device, Case& c) {
  if (!c.program.ok()) return absl::StrCat("compile: ", c.program.status().ToString());
  absl::StatusOr<std::string> problems = OutputMismatches(device, **c.program, *c.kernel);
  return problems.ok() ? *std::move(problems) : problems.status().ToString();
}

TEST(CpuCorpusTest, EveryKernelReproducesTheCorpusOutputs) {
  // A cache of the test's own: hermetic, and the second target's identical sources hit it.
  CpuDevice::Options options;
  options.cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache");
  CpuDevice cpu(options);

  std::vector<Case> cases;
  for (const CorpusKernel& kernel : KernelCorpus()) {
    for (const char* target : kTargets) {
      const CorpusTarget& t = kernel.target(target);
      ProgramSpec spec;
      spec.name = t.name;
      spec.src = t.src;
      for (const CorpusBuffer& b : kernel.buffers) spec.globals.push_back(b.arg);
      std::sort(spec.globals.begin(), spec.globals.end());
      cases.push_back(Case{&kernel, target, std::move(spec)});
    }
  }
  ASSERT_EQ(cases.size(), 186u);

  // Compiling dominates; clang runs in parallel (the device is thread safe).
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < std::clamp(std::thread::hardware_concurrency(), 1u, 4u); ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < cases.size(); i = next++)
        cases[i].program = cpu.CreateProgram(cases[i].spec);
    });
  }
  for (std::thread& t : workers) t.join();

  int matching = 0;
  std::vector<std::string> failing;
  for (Case& c : cases) {
    std::string problem = RunAndCompare(cpu, c);
    if (problem.empty()) {
      ++matching;
    } else {
      failing.push_back(absl::StrCat(c.kernel->id, " [", c.target, "]"));
      ADD_FAILURE() << c.kernel->id << " [" << c.target << "]: " << problem;
    }
  }
  std::printf("%d of %zu corpus programs match; compiles: %lld, cache hits: %lld\n", matching, cases.size(),
              static_cast<long long>(cpu.compiler().stats().compiles),
              static_cast<long long>(cpu.compiler().stats().cache_hits));
  EXPECT_EQ(matching, 186) << "failing: " << absl::StrJoin(failing, ", ");
}

}  // namespace
}  // namespace uopc
