// Recording every rewrite for VIZ never changes what is compiled: the 93 corpus kernels compiled with the
// recorder off and on give the same names, opts and sources, and the record has one group per kernel holding
// the codegen steps.
#include <algorithm>
#include <string>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/rewrite_recorder.h"

namespace uopc {
namespace {

std::vector<ProgramSpec> CompileAll() {
  ClangRenderer clang;
  std::vector<ProgramSpec> out;
  for (const CorpusKernel& k : KernelCorpus()) {
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> p = CompileKernel(ParseCorpusGraph(k.ast), clang, CompileOptions{}, &names);
    EXPECT_TRUE(p.ok()) << k.id << ": " << p.status();
    if (p.ok()) out.push_back(*std::move(p));
  }
  return out;
}

TEST(VizParityTest, RecordingChangesNothingCompiled) {
  RewriteRecorder::SetEnabled(false);
  std::vector<ProgramSpec> off = CompileAll();
  RewriteRecorder::Take();
  RewriteRecorder::SetEnabled(true);
  std::vector<ProgramSpec> on = CompileAll();
  RewriteRecorder::SetEnabled(false);
  std::vector<RewriteGroup> groups = RewriteRecorder::Take();

  ASSERT_EQ(off.size(), KernelCorpus().size());
  ASSERT_EQ(on.size(), off.size());
  for (size_t i = 0; i < off.size(); ++i) {
    EXPECT_EQ(on[i].name, off[i].name);
    EXPECT_EQ(on[i].src, off[i].src) << off[i].name;
  }
  ASSERT_EQ(groups.size(), off.size());
  for (size_t i = 0; i < groups.size(); ++i) {
    EXPECT_EQ(groups[i].label, off[i].name);
    std::vector<std::string> named;
    for (const TracedRewrite& r : groups[i].rewrites) {
      if (!r.name.empty()) named.push_back(r.name);
    }
    for (const char* step : {"lowerer", "expander", "devectorize", "final rewrite"}) {
      EXPECT_NE(std::find(named.begin(), named.end(), step), named.end()) << off[i].name << " lacks " << step;
    }
    ASSERT_EQ(groups[i].texts.size(), 2u);
    EXPECT_EQ(groups[i].texts[1].second, off[i].src);
  }
}

}  // namespace
}  // namespace uopc
