// The C-style GPU targets (OpenCL, Metal, CUDA sm_80) through the whole pipeline on every corpus kernel,
// against tinygrad's `opencl`, `metal` and `cuda` targets: the opts the heuristic picks (tensor cores for
// CUDA's half matmul), the kernel name, launch dims, the linear program where the corpus has one, and the
// source byte for byte.
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/gpu_cstyle.h"
#include "uop/print.h"

namespace uopc {
namespace {

std::string FirstDifference(const std::string& got, const std::string& want) {
  std::vector<std::string> a = absl::StrSplit(got, '\n'), b = absl::StrSplit(want, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "<end>", y = i < b.size() ? b[i] : "<end>";
    if (x != y) return absl::StrCat("line ", i + 1, ":\n  got:  ", x, "\n  want: ", y);
  }
  return "equal";
}

// Checks every kernel for one target; returns how many passed each check.
std::map<std::string, int> CheckTarget(const Renderer& renderer, const std::string& target,
                                       std::string* report) {
  std::map<std::string, int> equal;
  std::map<std::string, std::vector<std::string>> differ;
  auto tally = [&](const std::string& check, bool same, const std::string& id) {
    if (same) {
      ++equal[check];
    } else {
      differ[check].push_back(id);
    }
  };
  for (const CorpusKernel& k : KernelCorpus()) {
    const CorpusTarget& want = k.target(target);
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> p =
        CompileKernel(ParseCorpusGraph(k.ast), renderer, CompileOptions{}, &names);
    tally("compiles", p.ok(), k.id);
    if (!p.ok()) continue;
    std::vector<std::string> opts;
    for (const Opt& o : p->applied_opts) opts.push_back(o.ToString());
    tally("opts", opts == want.opts, k.id);
    tally("name", p->name == want.name, k.id);
    if (!want.uops.empty()) {
      std::vector<const UOp*> raw;
      for (const UOpPtr& u : p->uops) raw.push_back(u.get());
      tally("uops", PrintUOpsListing(raw) == want.uops, k.id);
    }
    const bool same_src = p->src == want.src;
    tally("src", same_src, k.id);
    if (!same_src && differ["src"].size() <= 2) {
      absl::StrAppend(report, target, " ", k.id, " src differs at ", FirstDifference(p->src, want.src), "\n");
    }
  }
  for (const auto& [check, ids] : differ) {
    absl::StrAppend(report, target, " ", check, ": ", equal[check],
                    " equal; differ: ", absl::StrJoin(ids, " "), "\n");
  }
  return equal;
}

TEST(GpuCorpusTest, OpenCL) {
  std::string report;
  std::map<std::string, int> equal = CheckTarget(OpenCLRenderer(), "opencl", &report);
  std::cout << report;
  for (const char* check : {"compiles", "opts", "name", "src"})
    EXPECT_GE(equal[check], 93) << check << "\n" << report;
}

TEST(GpuCorpusTest, Metal) {
  std::string report;
  std::map<std::string, int> equal = CheckTarget(MetalRenderer(), "metal", &report);
  std::cout << report;
  for (const char* check : {"compiles", "opts", "name", "src"})
    EXPECT_GE(equal[check], 93) << check << "\n" << report;
}

TEST(GpuCorpusTest, Cuda) {
  std::string report;
  std::map<std::string, int> equal = CheckTarget(CUDARenderer("sm_80"), "cuda", &report);
  std::cout << report;
  for (const char* check : {"compiles", "opts", "name", "src", "uops"}) {
    EXPECT_GE(equal[check], 93) << check << "\n" << report;
  }
}

}  // namespace
}  // namespace uopc
