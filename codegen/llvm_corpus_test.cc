// The LLVM target through the whole pipeline on every corpus kernel, against tinygrad's `llvm` target: the
// opts the hand-coded heuristic picks, the kernel name, the linear program where the corpus has one, and the
// IR byte for byte.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/llvmir.h"
#include "uop/print.h"

namespace uopc {
namespace {

// The first line where two texts differ, both versions, for a readable failure.
std::string FirstDifference(const std::string& got, const std::string& want) {
  std::vector<std::string> a = absl::StrSplit(got, '\n'), b = absl::StrSplit(want, '\n');
  for (size_t i = 0; i < std::max(a.size(), b.size()); ++i) {
    const std::string x = i < a.size() ? a[i] : "<end>", y = i < b.size() ? b[i] : "<end>";
    if (x != y) return absl::StrCat("line ", i + 1, ":\n  got:  ", x, "\n  want: ", y);
  }
  return "equal";
}

TEST(LlvmCorpusTest, PipelineMatchesTinygradsLlvmTarget) {
  LLVMRenderer llvm;
  std::map<std::string, int> equal;
  std::map<std::string, std::vector<std::string>> differ;
  auto tally = [&](const std::string& check, bool same, const std::string& id) {
    if (same) {
      ++equal[check];
    } else {
      differ[check].push_back(id);
    }
  };
  int kernels = 0, with_uops = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    const CorpusTarget& want = k.target("llvm");
    ++kernels;
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> p = CompileKernel(ParseCorpusGraph(k.ast), llvm, CompileOptions{}, &names);
    tally("compiles", p.ok(), k.id);
    if (!p.ok()) {
      ADD_FAILURE() << k.id << ": " << p.status();
      continue;
    }
    std::vector<std::string> opts;
    for (const Opt& o : p->applied_opts) opts.push_back(o.ToString());
    tally("opts", opts == want.opts, k.id);
    tally("name", p->name == want.name, k.id);
    if (!want.uops.empty()) {
      ++with_uops;
      std::vector<const UOp*> raw;
      for (const UOpPtr& u : p->uops) raw.push_back(u.get());
      tally("uops", PrintUOpsListing(raw) == want.uops, k.id);
    }
    tally("src", p->src == want.src, k.id);
    if (p->src != want.src) ADD_FAILURE() << k.id << " src differs at " << FirstDifference(p->src, want.src);
  }
  std::string report;
  for (const auto& [check, ids] : differ) {
    absl::StrAppend(&report, check, ": ", equal[check], "/", kernels,
                    " equal; differ: ", absl::StrJoin(ids, " "), "\n");
  }
  std::cout << report;
  EXPECT_EQ(kernels, 93);
  // The corpus records no linear programs for `llvm`; if it ever does, they must match too.
  EXPECT_EQ(equal["uops"], with_uops) << report;
  for (const char* check : {"compiles", "opts", "name", "src"})
    EXPECT_EQ(equal[check], 93) << check << "\n" << report;
}

}  // namespace
}  // namespace uopc
