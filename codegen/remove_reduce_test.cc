#include "codegen/remove_reduce.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"

namespace uopc {
namespace {

// Every corpus kernel, both CPU targets: the expander's output becomes tinygrad's "remove_reduce" stage.
TEST(RemoveReduceTest, CorpusStagesMatch) {
  ClangRenderer clang;
  int matched = 0, total = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      const CorpusTarget& t = k.target(target);
      const std::string* in = t.Stage("expander");
      const std::string* want = t.Stage("remove_reduce");
      ASSERT_NE(in, nullptr);
      ASSERT_NE(want, nullptr);
      ++total;
      absl::StatusOr<UOpPtr> got = RewriteRemoveReduce(ParseCorpusGraph(*in), clang);
      if (!got.ok()) {
        failing.push_back(k.id + ":" + target + " (" + std::string(got.status().message()) + ")");
        continue;
      }
      std::string diff = GraphDifference(*got, *want);
      if (diff.empty()) {
        ++matched;
      } else {
        if (failing.empty()) std::cerr << k.id << " " << target << ":\n" << diff << "\n";
        failing.push_back(k.id + ":" + target);
      }
    }
  }
  EXPECT_EQ(total, 186);
  EXPECT_EQ(matched, 186) << "failing: " << absl::StrJoin(failing, ", ");
}

}  // namespace
}  // namespace uopc
