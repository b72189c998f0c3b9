#include "codegen/heuristic.h"

#include <iostream>
#include <string>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"

namespace uopc {
namespace {

std::vector<std::string> Reprs(const std::vector<Opt>& opts) {
  std::vector<std::string> out;
  for (const Opt& o : opts) out.push_back(o.ToString());
  return out;
}

// Every corpus kernel: the hand-coded opts on the CPU target are tinygrad's `clang` opts.
TEST(HeuristicCorpusTest, ClangOptsMatchTinygrad) {
  ClangRenderer clang;
  int matched = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& ck : KernelCorpus()) {
    absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), clang);
    if (!k.ok()) {
      failing.push_back(ck.id + " (create: " + std::string(k.status().message()) + ")");
      continue;
    }
    absl::StatusOr<std::vector<Opt>> opts = HandCodedOptimizations(*k);
    if (!opts.ok()) {
      failing.push_back(ck.id + " (" + std::string(opts.status().message()) + ")");
      continue;
    }
    if (Reprs(*opts) == ck.target("clang").opts) {
      ++matched;
    } else {
      failing.push_back(ck.id + " got " + OptListToString(*opts));
    }
  }
  std::cout << "hand-coded opts equal to tinygrad's clang opts: " << matched << "/" << KernelCorpus().size()
            << "\n";
  for (const std::string& f : failing) ADD_FAILURE() << "opts differ: " << f;
  EXPECT_EQ(matched, static_cast<int>(KernelCorpus().size()));
}

}  // namespace
}  // namespace uopc
