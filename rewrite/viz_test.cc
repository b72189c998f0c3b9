#include "rewrite/viz.h"

#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/rewrite_recorder.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Turns recording on for one test and leaves the record empty afterwards.
class Recording {
 public:
  Recording() {
    RewriteRecorder::Take();
    RewriteRecorder::SetEnabled(true);
  }
  ~Recording() {
    RewriteRecorder::SetEnabled(false);
    RewriteRecorder::Take();
  }
};

class VizTest : public ::testing::Test {
 protected:
  UOpPtr a = UOp::Variable("a", 0, 10);
  UOpPtr b = UOp::Variable("b", 0, 10);
  UPat x = UPat::Var("x");
  PatternMatcher identities{
      {x + 0, [](const Match& m) { return m["x"]; }},
      {x * 1, [](const Match& m) { return m["x"]; }},
  };
};

int Count(const std::string& text, const std::string& needle) {
  int n = 0;
  for (size_t pos = text.find(needle); pos != std::string::npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

TEST_F(VizTest, RecordsNothingWhenOff) {
  RewriteRecorder::SetEnabled(false);
  RewriteRecorder::Take();
  {
    RewriteGroupScope group("kernel");
    GraphRewrite((a + 0) * 1, identities, {.name = "fold"});
    RewriteRecorder::AddText("source", "int x;");
  }
  EXPECT_TRUE(RewriteRecorder::Take().empty());
}

TEST_F(VizTest, RecordsEachRewriteInItsGroup) {
  Recording on;
  GraphRewrite(b * 1, identities, {.name = "loose"});
  {
    RewriteGroupScope group("first");
    GraphRewrite((a + 0) * 1, identities, {.name = "fold"});
    {
      RewriteGroupScope inner("inner");
      GraphRewrite(b + 0, identities, {.name = "inner fold"});
    }
    group.SetLabel("renamed");
    RewriteRecorder::AddText("source", "void f() {}");
  }
  std::vector<RewriteGroup> groups = RewriteRecorder::Take();
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].label, "(outside any group)");
  ASSERT_EQ(groups[0].rewrites.size(), 1u);
  EXPECT_EQ(groups[0].rewrites[0].name, "loose");
  EXPECT_EQ(groups[1].label, "renamed");
  ASSERT_EQ(groups[1].rewrites.size(), 1u);
  EXPECT_EQ(groups[1].rewrites[0].events.size(), 2u);
  EXPECT_EQ(groups[1].rewrites[0].output, a);
  ASSERT_EQ(groups[1].texts.size(), 1u);
  EXPECT_EQ(groups[1].texts[0].second, "void f() {}");
  EXPECT_EQ(groups[2].label, "inner");
  EXPECT_EQ(groups[2].rewrites[0].output, b);
}

TEST_F(VizTest, ThreadsRecordIntoTheirOwnGroups) {
  Recording on;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      RewriteGroupScope group("kernel " + std::to_string(t));
      for (int i = 0; i < 20; ++i) GraphRewrite((a + 0) * 1, identities, {.name = "fold"});
    });
  }
  for (std::thread& t : threads) t.join();
  std::vector<RewriteGroup> groups = RewriteRecorder::Take();
  ASSERT_EQ(groups.size(), 4u);
  for (const RewriteGroup& g : groups) EXPECT_EQ(g.rewrites.size(), 20u) << g.label;
}

TEST_F(VizTest, RecordingDoesNotChangeResults) {
  UOpPtr in = ((a + 0) * 1 + (b * 1)) * 1;
  UOpPtr off = GraphRewrite(in, identities);
  Recording on;
  EXPECT_EQ(GraphRewrite(in, identities), off);
  EXPECT_EQ(GraphRewrite(in, identities, {.bottom_up = true}), off);
}

TEST_F(VizTest, GroupsThatRecordedNothingAreDropped) {
  Recording on;
  { RewriteGroupScope empty("nothing here"); }
  {
    RewriteGroupScope group("something");
    GraphRewrite(a + 0, identities, {.name = "fold"});
  }
  std::vector<RewriteGroup> groups = RewriteRecorder::Take();
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(groups[0].label, "something");
}

// A rule that substitutes inside the node it matched: its graph_rewrite runs inside the outer one's.
class NestedVizTest : public VizTest {
 protected:
  PatternMatcher substituting{
      {UPat::Var("x") * 2,
       [this](const Match& m) {
         return Substitute(m["x"], UOpMap{{a.get(), b}}, "a to b") * 3;
       }},
  };
};

TEST_F(NestedVizTest, RewritesMadeInsideAStepAreRecordedUnderIt) {
  Recording on;
  {
    RewriteGroupScope group("g");
    GraphRewrite((a + 1) * 2, substituting, {.name = "outer"});
  }
  std::vector<RewriteGroup> groups = RewriteRecorder::Take();
  ASSERT_EQ(groups.size(), 1u);
  const std::vector<TracedRewrite>& r = groups[0].rewrites;
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(r[0].name, "outer");
  EXPECT_EQ(r[0].depth, 0);
  EXPECT_EQ(r[1].name, "a to b");
  EXPECT_EQ(r[1].depth, 1);
  EXPECT_EQ(r[1].output, b + 1);
}

TEST_F(NestedVizTest, PageListsRewritesMadeInsideAStepIndentedWhenARuleFiredInThem) {
  std::vector<RewriteGroup> groups;
  {
    Recording on;
    {
      RewriteGroupScope group("g");
      GraphRewrite((a + 1) * 2, substituting, {.name = "outer"});
      GraphRewrite((b + 1) * 2, substituting, {.name = "substitutes nothing"});
      GraphRewrite(a * b, identities, {.name = "nothing fires"});
    }
    groups = RewriteRecorder::Take();
  }
  VizSummary summary;
  absl::StatusOr<std::string> html =
      RenderVizPage(groups, {.dot_binary = "/nonexistent/uopc-no-dot"}, &summary);
  ASSERT_TRUE(html.ok()) << html.status();
  // outer, its substitute (depth 1), and "substitutes nothing" (its own rule fired); not its substitute of
  // b, in which nothing fired, nor "nothing fires" (this is not a kernel's group).
  EXPECT_EQ(summary.steps, 3);
  EXPECT_THAT(*html, HasSubstr("\"depth\":1,\"events\":1"));
  EXPECT_EQ(Count(*html, "\"name\":\"a to b\""), 1);
  EXPECT_THAT(*html, Not(HasSubstr("nothing fires")));
}

TEST_F(VizTest, DotHasOneNodePerUOpAndOneEdgePerSource) {
  UOpPtr g = (a + b) * a;  // a, b, a + b, (a + b) * a
  std::string dot = UOpGraphToDot(g.get(), {g.get()});
  EXPECT_EQ(Count(dot, "[label="), 4);
  EXPECT_EQ(Count(dot, " -> "), 4);
  EXPECT_EQ(Count(dot, "penwidth=3"), 1);
  EXPECT_THAT(dot, HasSubstr("MUL\\ndtypes.int"));
}

TEST_F(VizTest, PageListsGroupsStepsAndRules) {
  std::vector<RewriteGroup> groups;
  {
    Recording on;
    {
      RewriteGroupScope group("E_4");
      GraphRewrite((a + 0) * 1, identities, {.name = "fold"});
      GraphRewrite(a * b, identities, {.name = "nothing fires"});
      GraphRewrite(a * b, identities);  // unnamed and nothing fired: not listed
      RewriteRecorder::AddText("source", "void E_4() { /* </script> */ }");
    }
    groups = RewriteRecorder::Take();
  }
  ASSERT_FALSE(groups.empty());
  VizSummary summary;
  absl::StatusOr<std::string> html = RenderVizPage(groups, {}, &summary);
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(summary.groups, 1);
  EXPECT_EQ(summary.steps, 2);
  EXPECT_EQ(summary.events, 2);
  EXPECT_THAT(*html, HasSubstr("\"label\":\"E_4\""));
  EXPECT_THAT(*html, HasSubstr("\"name\":\"fold\""));
  EXPECT_THAT(*html, HasSubstr("viz_test.cc:"));
  // The source's `</script>` is escaped, so the data block is not cut short.
  EXPECT_EQ(Count(*html, "</script>"), 2);
  if (!summary.dot_missing) {
    EXPECT_EQ(summary.graphs_drawn, 2);
    EXPECT_THAT(*html, HasSubstr("<svg"));
  }
}

TEST_F(VizTest, LargeGraphsAreCappedWithANote) {
  std::vector<RewriteGroup> groups(1);
  groups[0].label = "big";
  groups[0].texts = {{"source", "void big() {}"}};  // a kernel's group: its steps are listed
  UOpPtr g = a;
  for (int i = 0; i < 50; ++i) g = g * (b + i);
  groups[0].rewrites.push_back({.name = "step", .input = g, .output = g, .events = {}});
  VizSummary summary;
  absl::StatusOr<std::string> html = RenderVizPage(groups, {.max_graph_nodes = 20}, &summary);
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_EQ(summary.graphs_capped, 1);
  EXPECT_EQ(summary.graphs_drawn, 0);
  EXPECT_THAT(*html, HasSubstr("are not drawn"));
}

TEST_F(VizTest, MissingDotLeavesANoteInsteadOfAGraph) {
  std::vector<RewriteGroup> groups(1);
  groups[0].label = "k";
  groups[0].texts = {{"source", "void k() {}"}};
  groups[0].rewrites.push_back({.name = "step", .input = a + 0, .output = a, .events = {}});
  VizSummary summary;
  absl::StatusOr<std::string> html =
      RenderVizPage(groups, {.dot_binary = "/nonexistent/uopc-no-dot"}, &summary);
  ASSERT_TRUE(html.ok()) << html.status();
  EXPECT_TRUE(summary.dot_missing);
  EXPECT_THAT(*html, HasSubstr("apt-get install graphviz"));
  EXPECT_THAT(*html, Not(HasSubstr("<svg")));
}

TEST_F(VizTest, AnEmptyRecordIsAnError) {
  absl::StatusOr<std::string> html = RenderVizPage({}, {});
  ASSERT_FALSE(html.ok());
  EXPECT_THAT(std::string(html.status().message()), HasSubstr("nothing was recorded"));
}

}  // namespace
}  // namespace uopc
