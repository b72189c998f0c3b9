// Every corpus kernel split across 2 and 3 cores gives exactly the outputs it gives as one loop, on both CPU
// devices (CPU: clang; LLVM), with tinygrad's hand-coded opts and without opts.
//
// The renderers here split every kernel whose outermost loop has 2 or more iterations (no minimum work per
// core), so the small corpus kernels exercise the split: even chunks, a short last chunk, more cores than
// iterations. The devices run the chunks on 3 worker threads. The one-core programs are tinygrad's source
// (the codegen corpus tests pin that), so equal outputs mean the threaded kernels compute what tinygrad's do.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "renderer/llvmir.h"
#include "runtime/corpus_run.h"
#include "runtime/cpu_device.h"
#include "runtime/llvm_device.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

constexpr int kPoolThreads = 3;

std::unique_ptr<Renderer> MakeRenderer(absl::string_view device, int64_t cores) {
  const CoreSplit split{.cores = cores, .min_work_per_core = 0};
  if (device == "CPU") return std::make_unique<ClangRenderer>(split);
  return std::make_unique<LLVMRenderer>(split);
}

std::unique_ptr<Device> MakeDevice(absl::string_view device) {
  const std::string cache = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache");
  if (device == "CPU")
    return std::make_unique<CpuDevice>(CpuDevice::Options{.cache_directory = cache, .threads = kPoolThreads});
  absl::StatusOr<std::unique_ptr<LLVMDevice>> llvm =
      LLVMDevice::Create({.cache_directory = cache, .threads = kPoolThreads});
  if (!llvm.ok()) {
    std::fprintf(stderr, "cannot create the LLVM device: %s\n", llvm.status().ToString().c_str());
    std::abort();
  }
  return *std::move(llvm);
}

// Kernels [begin, end) of the corpus (tests take a quarter each, so that shards share the compiling).
void ExpectThreadedOutputsEqualOneCore(absl::string_view device_name, bool optimize, size_t begin,
                                       size_t end) {
  std::unique_ptr<Device> device = MakeDevice(device_name);
  const std::unique_ptr<Renderer> one_core = MakeRenderer(device_name, 1);
  CompileOptions options;
  options.optimize = optimize;
  int sampled = 0, compared = 0, split = 0;
  end = std::min(end, KernelCorpus().size());
  for (size_t i = begin; i < end; ++i) {
    if (!InTestSample(i)) continue;
    ++sampled;
    const CorpusKernel& k = KernelCorpus()[i];
    const UOpPtr ast = ParseCorpusGraph(k.ast);
    absl::StatusOr<nlohmann::json> want = RunOnCorpusInputs(ast, nullptr, *device, *one_core, options);
    ASSERT_TRUE(want.ok()) << k.id << ": " << want.status();
    for (int64_t cores : {2, 3}) {
      const std::unique_ptr<Renderer> renderer = MakeRenderer(device_name, cores);
      KernelNameCounter names;
      absl::StatusOr<ProgramSpec> spec = CompileKernel(ast, *renderer, options, &names);
      ASSERT_TRUE(spec.ok()) << k.id << ": " << spec.status();
      if (spec->global_size.has_value()) {
        ++split;
        EXPECT_LE((*spec->global_size)[0], 4 * cores) << k.id;
      }
      absl::StatusOr<nlohmann::json> got = RunOnCorpusInputs(ast, nullptr, *device, *renderer, options);
      ASSERT_TRUE(got.ok()) << k.id << " on " << cores << " cores: " << got.status();
      EXPECT_EQ(spec->global_size.has_value(), spec->src.find("core_id") != std::string::npos) << k.id;
      // Bit for bit: the JSON holds every value exactly (floats round-trip), NaNs as "nan".
      EXPECT_EQ(*got, *want) << k.id << " on " << cores << " cores" << (optimize ? "" : ", no opts")
                             << "\nsource:\n"
                             << spec->src;
      ++compared;
    }
  }
  std::printf("%s%s, kernels %zu to %zu: %d threaded runs compared, %d of them split across cores\n",
              std::string(device_name).c_str(), optimize ? "" : " (no opts)", begin, end, compared, split);
  EXPECT_EQ(compared, 2 * sampled);
  // Most corpus kernels have an outer loop to split; a lowerer that stopped splitting fails here.
  EXPECT_GE(split, compared / 3);
}

struct Slice {
  const char* device;
  bool optimize;
  int quarter;
};

class CpuThreadsCorpusTest : public ::testing::TestWithParam<Slice> {};

TEST_P(CpuThreadsCorpusTest, ThreadedOutputsEqualOneCore) {
  const Slice s = GetParam();
  const size_t n = KernelCorpus().size(), quarter = (n + 3) / 4;
  ExpectThreadedOutputsEqualOneCore(s.device, s.optimize, s.quarter * quarter, (s.quarter + 1) * quarter);
}

std::vector<Slice> AllSlices() {
  std::vector<Slice> slices;
  for (const char* device : {"CPU", "LLVM"}) {
    for (bool optimize : {true, false}) {
      for (int quarter = 0; quarter < 4; ++quarter) slices.push_back({device, optimize, quarter});
    }
  }
  return slices;
}

INSTANTIATE_TEST_SUITE_P(Corpus, CpuThreadsCorpusTest, ::testing::ValuesIn(AllSlices()),
                         [](const ::testing::TestParamInfo<Slice>& info) {
                           return absl::StrCat(info.param.device, info.param.optimize ? "_opts" : "_noopt",
                                               "_", info.param.quarter);
                         });

}  // namespace
}  // namespace uopc
