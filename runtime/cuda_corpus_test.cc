// Every kernel of the codegen corpus, as tinygrad rendered it for the `cuda` target (CUDA C, through NVRTC)
// and the `ptx` target (PTX, loaded as it is), and as uopc's codegen renders it for PTX, run on the CUDA
// device with the corpus's launch dims on buffers filled by the corpus formula, and compared with the
// corpus's outputs. Skips, with the device's reason, where there is no NVIDIA driver or GPU.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/cuda_device.h"
#include "runtime/device.h"
#include "runtime/exec_item.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

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

// Builds and runs `kernel`'s program for `target` on formula-filled buffers; "" when every output matches,
// else why not.
std::string RunAndCompare(Device& device, const CorpusKernel& kernel, const std::string& target) {
  const CorpusTarget& t = kernel.target(target);
  ProgramSpec spec{.name = t.name, .src = t.src, .global_size = t.global_size, .local_size = t.local_size};
  // tinygrad's double_ops/0 has `sqrt.approx.f64`, which PTX lacks, and its float `setp.ne` is false for NaN;
  // they run as uopc renders them (docs/parity.md).
  if (target == "ptx")
    spec.src =
        absl::StrReplaceAll(spec.src, {{"sqrt.approx.f64", "sqrt.rn.f64"}, {"setp.ne.f", "setp.neu.f"}});
  std::vector<CorpusBuffer> specs = kernel.buffers;
  std::sort(specs.begin(), specs.end(), [](const auto& a, const auto& b) { return a.arg < b.arg; });
  for (const CorpusBuffer& b : specs) spec.globals.push_back(b.arg);
  absl::StatusOr<std::unique_ptr<Program>> program = device.CreateProgram(spec);
  if (!program.ok()) return absl::StrCat("compile: ", program.status().ToString());
  absl::StatusOr<LaunchParams> launch = LaunchDims(spec);
  if (!launch.ok()) return absl::StrCat("launch dims: ", launch.status().ToString());
  absl::StatusOr<std::string> problems = OutputMismatches(device, **program, kernel, *launch);
  return problems.ok() ? *std::move(problems) : problems.status().ToString();
}

void RunCorpus(CudaDeviceOptions::Language language, const std::string& target) {
  absl::StatusOr<std::unique_ptr<Device>> device = MakeCudaDevice(CudaDeviceOptions{
      .language = language, .cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache")});
  if (absl::IsFailedPrecondition(device.status())) GTEST_SKIP() << device.status().message();
  ASSERT_TRUE(device.ok()) << device.status();
  ASSERT_EQ(KernelCorpus().size(), 93u);
  int matching = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& kernel : KernelCorpus()) {
    std::string problem = RunAndCompare(**device, kernel, target);
    if (problem.empty()) {
      ++matching;
    } else {
      failing.push_back(kernel.id);
      ADD_FAILURE() << kernel.id << " [" << target << "]: " << problem;
    }
  }
  std::printf("%d of 93 corpus `%s` programs match on CUDA\n", matching, target.c_str());
  EXPECT_EQ(matching, 93) << "failing: " << absl::StrJoin(failing, ", ");
}

// uopc's own PTX (codegen with the hand-coded opts and the PTX renderer) for every corpus kernel.
TEST(CudaCorpusTest, UopcPtxReproducesTheCorpusOutputs) {
  absl::StatusOr<std::unique_ptr<Device>> device = MakeCudaDevice(
      CudaDeviceOptions{.language = CudaDeviceOptions::Language::kPtx,
                        .cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache")});
  if (absl::IsFailedPrecondition(device.status())) GTEST_SKIP() << device.status().message();
  ASSERT_TRUE(device.ok()) << device.status();
  int matching = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& kernel : KernelCorpus()) {
    absl::StatusOr<nlohmann::json> got =
        RunOnCorpusInputs(ParseCorpusGraph(kernel.ast), nullptr, **device, CompileOptions{});
    std::string problem = got.ok() ? "" : got.status().ToString();
    for (const auto& [arg, want] : kernel.outputs.items()) {
      if (!problem.empty()) break;
      absl::StatusOr<DType> dtype = absl::InvalidArgumentError("no such buffer");
      for (const CorpusBuffer& b : kernel.buffers) {
        if (absl::StrCat(b.arg) == arg) dtype = CorpusDType(b.dtype);
      }
      if (!dtype.ok())
        problem = absl::StrCat("buffer ", arg, ": ", dtype.status().ToString());
      else if (!got->contains(arg))
        problem = absl::StrCat("buffer ", arg, " was not stored to");
      else
        problem = CorpusValuesMismatch(*dtype, (*got)[arg], want);
    }
    if (problem.empty()) {
      ++matching;
    } else {
      failing.push_back(kernel.id);
      ADD_FAILURE() << kernel.id << " [uopc ptx]: " << problem;
    }
  }
  std::printf("%d of 93 corpus kernels match on CUDA with uopc's PTX\n", matching);
  EXPECT_EQ(matching, 93) << "failing: " << absl::StrJoin(failing, ", ");
}

TEST(CudaCorpusTest, CudaSourcesReproduceTheCorpusOutputs) {
  RunCorpus(CudaDeviceOptions::Language::kCudaC, "cuda");
}

TEST(CudaCorpusTest, PtxSourcesReproduceTheCorpusOutputs) {
  RunCorpus(CudaDeviceOptions::Language::kPtx, "ptx");
}

}  // namespace
}  // namespace uopc
