// tinygrad's own compile benchmark (test/external/external_benchmark_schedule.py: ResNet-50's forward pass,
// batch 64) makes 32 unique kernels; codegen/testdata/resnet50_kernels.jsonl holds them as tinygrad compiled
// them. Each AST, compiled in the benchmark's order with one name counter, gives tinygrad's opts, name, C
// source and linear program length. These convolutions exercise what the 93-kernel corpus never did: three of
// them upcast two axes whose choice depends on the strides of the reduce's input (a contiguous tracker of its
// shape in tinygrad, whatever its sources' views).
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/heuristic.h"
#include "codegen/kernel.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"

namespace uopc {
namespace {

constexpr char kPath[] = "codegen/testdata/resnet50_kernels.jsonl";

const std::vector<CorpusKernel>& ResnetKernels() {
  static const auto* kernels = [] {
    absl::StatusOr<std::vector<CorpusKernel>> k = LoadKernelCorpus(kPath);
    if (!k.ok()) ADD_FAILURE() << kPath << ": " << k.status();
    return new std::vector<CorpusKernel>(k.ok() ? *std::move(k) : std::vector<CorpusKernel>{});
  }();
  return *kernels;
}

// The `n_uops` field of every line, in order.
std::vector<int64_t> UopCounts() {
  std::ifstream in(kPath);
  std::vector<int64_t> out;
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(nlohmann::json::parse(line).at("n_uops").get<int64_t>());
  }
  return out;
}

std::vector<std::string> Reprs(const std::vector<Opt>& opts) {
  std::vector<std::string> out;
  for (const Opt& o : opts) out.push_back(o.ToString());
  return out;
}

TEST(Resnet50KernelsTest, ThirtyTwoKernelsOfTheBenchmark) {
  ASSERT_EQ(ResnetKernels().size(), 32u);
  int64_t total = 0;
  for (int64_t n : UopCounts()) total += n;
  EXPECT_EQ(total, 19686);  // what tinygrad's benchmark prints
}

TEST(Resnet50KernelsTest, HandCodedOptsAreTinygrads) {
  ClangRenderer clang;
  ASSERT_EQ(ResnetKernels().size(), 32u);
  int matched = 0;
  for (const CorpusKernel& ck : ResnetKernels()) {
    absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), clang);
    ASSERT_TRUE(k.ok()) << ck.id << ": " << k.status();
    absl::StatusOr<std::vector<Opt>> opts = HandCodedOptimizations(*k);
    ASSERT_TRUE(opts.ok()) << ck.id << ": " << opts.status();
    if (Reprs(*opts) == ck.target("clang").opts) {
      ++matched;
    } else {
      ADD_FAILURE() << ck.id << " " << ck.target("clang").name << ": got " << OptListToString(*opts)
                    << "\nwant " << absl::StrJoin(ck.target("clang").opts, ", ");
    }
  }
  EXPECT_EQ(matched, 32);
}

// r_64_64_784_16_4_4_4: tinygrad upcasts axis 2 (stride sum 67 over the trackers) before axis 1 (207040),
// because the reduce input's tracker is contiguous (strides 51380224, 200704, 64, 1), not its first load's.
TEST(Resnet50KernelsTest, ReduceInputTrackerIsContiguous) {
  ClangRenderer clang;
  ASSERT_EQ(ResnetKernels().size(), 32u);
  const CorpusKernel& ck = ResnetKernels()[3];
  ASSERT_EQ(ck.target("clang").name, "r_64_64_784_16_4_4_4");
  absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), clang);
  ASSERT_TRUE(k.ok()) << k.status();
  // bufs (output, two loads), then the reduce's output and input trackers, then the full shape.
  ASSERT_EQ(k->sts().size(), 6u);
  const View& in = k->sts()[4].views().back();
  EXPECT_EQ(in.strides(), (SintVec{51380224, 200704, 64, 1}));
  EXPECT_EQ(k->sts()[4].shape(), (SintVec{64, 256, 3136, 64}));
}

TEST(Resnet50KernelsTest, CompiledInBenchmarkOrderGivesTinygradsNamesAndSource) {
  ClangRenderer clang;
  KernelNameCounter names;  // one counter, as the benchmark's one process numbers repeated names
  std::vector<int64_t> uop_counts = UopCounts();
  ASSERT_EQ(uop_counts.size(), ResnetKernels().size());
  int same_src = 0;
  int64_t total_uops = 0;
  for (size_t i = 0; i < ResnetKernels().size(); ++i) {
    const CorpusKernel& ck = ResnetKernels()[i];
    absl::StatusOr<ProgramSpec> p = CompileKernel(ParseCorpusGraph(ck.ast), clang, {}, &names);
    ASSERT_TRUE(p.ok()) << ck.id << ": " << p.status();
    EXPECT_EQ(p->name, ck.target("clang").name) << ck.id;
    EXPECT_EQ(Reprs(p->applied_opts), ck.target("clang").opts) << ck.id;
    EXPECT_EQ(static_cast<int64_t>(p->uops.size()), uop_counts[i]) << ck.id;
    total_uops += static_cast<int64_t>(p->uops.size());
    if (p->src == ck.target("clang").src) {
      ++same_src;
    } else {
      ADD_FAILURE() << ck.id << " " << ck.target("clang").name << ": the C source differs";
    }
  }
  EXPECT_EQ(same_src, 32);
  EXPECT_EQ(total_uops, 19686);
}

}  // namespace
}  // namespace uopc
