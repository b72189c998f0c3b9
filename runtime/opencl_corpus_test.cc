// Every kernel of the codegen corpus, as tinygrad rendered it for the `opencl` target, built and run on the
// OPENCL device with the corpus's launch dims on buffers filled by the corpus formula, and compared with the
// corpus's outputs. Kernels using half need cl_khr_fp16, which POCL on x86 lacks: there the device must
// refuse them with an error naming the extension.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "runtime/corpus_values.h"
#include "runtime/device.h"
#include "runtime/exec_item.h"
#include "runtime/opencl_device.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

struct Case {
  const CorpusKernel* kernel;
  ProgramSpec spec;
  LaunchParams launch;
  absl::StatusOr<std::unique_ptr<Program>> program = absl::UnknownError("not compiled");
};

// Runs `program` on formula-filled buffers; "" when every output matches, else the mismatches.
absl::StatusOr<std::string> OutputMismatches(Device& device, Program& program, const CorpusKernel& kernel,
                                             const LaunchParams& launch) {
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
  UOPC_RETURN_IF_ERROR(program.Launch(args, {}, launch));
  UOPC_RETURN_IF_ERROR(device.Synchronize());
  if (kernel.outputs.empty()) return "the corpus lists no outputs";
  std::string problems;
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
  absl::StatusOr<std::string> problems = OutputMismatches(device, **c.program, *c.kernel, c.launch);
  return problems.ok() ? *std::move(problems) : problems.status().ToString();
}

TEST(OpenCLCorpusTest, EveryKernelReproducesTheCorpusOutputs) {
  // Caches of the test's own keep it hermetic, every kernel built from scratch once per run: uopc's, and
  // POCL's kernel cache (which otherwise lands in $HOME/.cache or /tmp and makes a second run 6x faster).
  setenv("POCL_CACHE_DIR", absl::StrCat(std::getenv("TEST_TMPDIR"), "/pocl_cache").c_str(), /*overwrite=*/0);
  absl::StatusOr<std::unique_ptr<Device>> device = MakeOpenCLDevice(
      OpenCLDeviceOptions{.cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache")});
  if (absl::IsFailedPrecondition(device.status())) GTEST_SKIP() << device.status().message();
  ASSERT_TRUE(device.ok()) << device.status();
  auto& cl = static_cast<OpenCLDevice&>(**device);

  std::vector<Case> cases;
  for (const CorpusKernel& kernel : KernelCorpus()) {
    const CorpusTarget& t = kernel.target("opencl");
    Case c{
        &kernel,
        ProgramSpec{.name = t.name, .src = t.src, .global_size = t.global_size, .local_size = t.local_size},
        LaunchParams{}};
    for (const CorpusBuffer& b : kernel.buffers) c.spec.globals.push_back(b.arg);
    std::sort(c.spec.globals.begin(), c.spec.globals.end());
    absl::StatusOr<LaunchParams> launch = LaunchDims(c.spec);
    ASSERT_TRUE(launch.ok()) << kernel.id << ": " << launch.status();
    c.launch = *launch;
    cases.push_back(std::move(c));
  }
  ASSERT_EQ(cases.size(), 93u);

  auto start = std::chrono::steady_clock::now();
  std::atomic<size_t> next{0};
  std::vector<std::thread> workers;
  for (unsigned w = 0; w < std::clamp(std::thread::hardware_concurrency(), 1u, 4u); ++w) {
    workers.emplace_back([&] {
      for (size_t i = next++; i < cases.size(); i = next++)
        cases[i].program = cl.CreateProgram(cases[i].spec);
    });
  }
  for (std::thread& t : workers) t.join();
  double build_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const bool has_fp16 = cl.HasExtension("cl_khr_fp16");
  int matching = 0, refused_half = 0;
  std::vector<std::string> failing;
  for (Case& c : cases) {
    if (OpenCLSourceUsesHalf(c.spec.src) && !has_fp16) {
      // The one clear error, and nothing built.
      if (!c.program.ok() && absl::StrContains(c.program.status().message(), "cl_khr_fp16")) {
        ++refused_half;
      } else {
        failing.push_back(c.kernel->id);
        ADD_FAILURE() << c.kernel->id << ": a half kernel without cl_khr_fp16 must be refused naming it; got "
                      << (c.program.ok() ? "a program" : c.program.status().ToString());
      }
      continue;
    }
    std::string problem = RunAndCompare(cl, c);
    if (problem.empty()) {
      ++matching;
    } else {
      failing.push_back(c.kernel->id);
      ADD_FAILURE() << c.kernel->id << ": " << problem;
    }
  }
  std::printf("%s: %d corpus kernels match, %d half kernels refused; built in %.1f s (compiles: %lld)\n",
              cl.device_name().c_str(), matching, refused_half, build_seconds,
              static_cast<long long>(cl.compiler().stats().compiles));
  if (has_fp16) {
    EXPECT_EQ(matching, 93) << "failing: " << absl::StrJoin(failing, ", ");
  } else {
    EXPECT_EQ(matching, 90) << "failing: " << absl::StrJoin(failing, ", ");
    EXPECT_EQ(refused_half, 3) << "failing: " << absl::StrJoin(failing, ", ");
  }
}

}  // namespace
}  // namespace uopc
