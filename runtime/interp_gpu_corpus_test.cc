// INTERP runs the GPU targets' programs: every corpus kernel compiled for OpenCL, Metal and CUDA (thread ids,
// local memory, barriers, tensor cores) and interpreted gives the corpus's outputs, so every GPU renderer's
// input is checked on any machine.
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/gpu_cstyle.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"

namespace uopc {
namespace {

int CheckTarget(const Renderer& renderer, const std::string& target, std::vector<std::string>* failing) {
  absl::StatusOr<Device*> interp = GetDevice("INTERP");
  EXPECT_TRUE(interp.ok());
  int right = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    absl::StatusOr<nlohmann::json> out =
        RunOnCorpusInputs(ParseCorpusGraph(k.ast), nlohmann::json(), **interp, renderer, CompileOptions{});
    std::string diff;
    if (!out.ok()) {
      diff = out.status().ToString();
    } else {
      for (const CorpusBuffer& b : k.buffers) {
        const std::string arg = std::to_string(b.arg);
        if (!k.outputs.contains(arg)) continue;
        if (!out->contains(arg)) {
          diff = "buffer " + arg + " was not stored to";
          break;
        }
        absl::StatusOr<DType> dtype = CorpusDType(b.dtype);
        diff = dtype.ok() ? CorpusValuesMismatch(*dtype, (*out)[arg], k.outputs[arg]) : "bad dtype";
        if (!diff.empty()) break;
      }
    }
    if (diff.empty()) {
      ++right;
    } else {
      failing->push_back(k.id);
      if (failing->size() <= 2) ADD_FAILURE() << target << " " << k.id << ": " << diff;
    }
  }
  return right;
}

TEST(InterpGpuCorpusTest, OpenCL) {
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(OpenCLRenderer(), "opencl", &failing), 93) << absl::StrJoin(failing, " ");
}
TEST(InterpGpuCorpusTest, Metal) {
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(MetalRenderer(), "metal", &failing), 93) << absl::StrJoin(failing, " ");
}
TEST(InterpGpuCorpusTest, Cuda) {
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(CUDARenderer("sm_80"), "cuda", &failing), 93) << absl::StrJoin(failing, " ");
}

}  // namespace
}  // namespace uopc
