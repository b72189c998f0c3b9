#include "codegen/expander.h"

#include <functional>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/ignore.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using expander_internal::AxisSizes;
using expander_internal::LaneChoices;
using expander_internal::LaneIndex;
using expander_internal::SwizzleLanes;

using Step = std::function<absl::StatusOr<UOpPtr>(const UOpPtr&, const Renderer&)>;

// Runs `step` on every corpus kernel's stage `before` (both CPU targets) and counts the results equal to stage
// `after`; prints the first difference and the ids that differ.
int CorpusMatches(const char* before, const char* after, const Step& step) {
  ClangRenderer clang;
  int matched = 0;
  std::vector<std::string> failed;
  std::string first_diff;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      const CorpusTarget& t = k.target(target);
      const std::string* in = t.Stage(before);
      const std::string* want = t.Stage(after);
      EXPECT_NE(in, nullptr);
      EXPECT_NE(want, nullptr);
      if (in == nullptr || want == nullptr) continue;
      absl::StatusOr<UOpPtr> got = step(ParseCorpusGraph(*in), clang);
      std::string diff = got.ok() ? GraphDifference(*got, *want) : std::string(got.status().message());
      if (diff.empty()) {
        ++matched;
      } else {
        failed.push_back(k.id + "@" + target);
        if (first_diff.empty()) first_diff = k.id + "@" + target + ":\n" + diff;
      }
    }
  }
  if (!failed.empty()) {
    std::cout << after << ": " << matched << " matched; differing: " << absl::StrJoin(failed, " ") << "\n"
              << first_diff << "\n";
  }
  return matched;
}

constexpr int kCorpusGraphs = 93 * 2;

TEST(ExpanderCorpusTest, InitialSymbolic) {
  EXPECT_EQ(CorpusMatches("lowerer", "initial symbolic", RewriteInitialSymbolic), kCorpusGraphs);
}

TEST(ExpanderCorpusTest, StoreIgnore) {
  EXPECT_EQ(CorpusMatches("initial symbolic", "store_ignore", RewriteStoreIgnore), kCorpusGraphs);
}

TEST(ExpanderCorpusTest, MoveIgnore) {
  EXPECT_EQ(CorpusMatches("store_ignore", "move_ignore", RewriteMoveIgnore), kCorpusGraphs);
}

TEST(ExpanderCorpusTest, Expander) {
  EXPECT_EQ(CorpusMatches("move_ignore", "expander", RewriteExpander), kCorpusGraphs);
}

}  // namespace
}  // namespace uopc
