#include "rewrite/graph_rewrite.h"

#include <algorithm>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

std::string Loc(int line) { return "graph_rewrite_test.cc:" + std::to_string(line); }

class GraphRewriteTest : public ::testing::Test {
 protected:
  UOpPtr a = UOp::Variable("a", 0, 10);
  UOpPtr b = UOp::Variable("b", 0, 10);
  UOpPtr c = UOp::Variable("c", 0, 10);
  UPat x = UPat::Var("x");
  UPat y = UPat::Var("y");
  PatternMatcher identities{
      {x + 0, [](const Match& m) { return m["x"]; }},
      {x * 1, [](const Match& m) { return m["x"]; }},
  };
};

TEST_F(GraphRewriteTest, FoldsToAFixpoint) {
  EXPECT_EQ(GraphRewrite(((a * 1) + 0) * 1, identities), a);
  EXPECT_EQ(GraphRewrite((a + 0) + (b * 1), identities), a + b);
  EXPECT_EQ(GraphRewrite((a + 0) + (b * 1), identities, {.bottom_up = true}), a + b);
  UOpPtr untouched = a * b + 2;
  EXPECT_EQ(GraphRewrite(untouched, identities), untouched);
  EXPECT_EQ(GraphRewrite(untouched, identities, {.bottom_up = true}), untouched);
}

TEST_F(GraphRewriteTest, TopDownRewritesSourcesFirstBottomUpTheNodeFirst) {
  // (x + y) * 2 -> x*2 + y*2 only fires bottom-up: top-down, (a + 0) has become a before MUL is looked at.
  PatternMatcher pm = identities + PatternMatcher({
                                       {(x + y) * 2, [](const Match& m) { return m["x"] * 2 + m["y"] * 2; }},
                                   });
  UOpPtr in = (a + 0) * 2;
  EXPECT_EQ(GraphRewrite(in, pm), a * 2);
  UOpPtr zero = a.const_like(0);
  EXPECT_EQ(GraphRewrite(in, pm, {.bottom_up = true}), a * 2 + zero * 2);
}

TEST_F(GraphRewriteTest, RebuiltNodesAreVisitedAgain) {
  // Once the MULs fold, the rebuilt ADD(a, b) matches a rule it did not match before.
  PatternMatcher pm =
      identities +
      PatternMatcher({
          {UPat(Ops::ADD).src(UPat(Ops::DEFINE_VAR).named("p"), UPat(Ops::DEFINE_VAR).named("q")),
           [](const Match& m) { return m["p"] * m["q"]; }},
      });
  RewriteTrace trace;
  for (bool bottom_up : {false, true}) {
    trace.rewrites.clear();
    UOpPtr in = (a * 1) + (b * 1);
    EXPECT_EQ(GraphRewrite(in, pm, {.bottom_up = bottom_up, .trace = &trace}), a * b);
    ASSERT_EQ(trace.rewrites.size(), 1u);
    const std::vector<RewriteEvent>& ev = trace.rewrites[0].events;
    ASSERT_EQ(ev.size(), 3u);
    EXPECT_EQ(ev[0].before, a * 1);
    EXPECT_EQ(ev[0].after, a);
    EXPECT_EQ(ev[0].rule.get(), &pm.rule(1));
    EXPECT_EQ(ev[1].before, b * 1);
    EXPECT_EQ(ev[2].before, a + b);
    EXPECT_EQ(ev[2].after, a * b);
    EXPECT_EQ(ev[2].rule.get(), &pm.rule(2));
    EXPECT_EQ(trace.rewrites[0].input, in);
    EXPECT_EQ(trace.rewrites[0].output, a * b);
    EXPECT_EQ(trace.rewrites[0].bottom_up, bottom_up);
  }
}

TEST_F(GraphRewriteTest, ReplacementsAreRewrittenUntilNoRuleFires) {
  // CONST n -> CONST n-1 down to 0, on the node itself (top-down) and through a chain (bottom-up).
  PatternMatcher countdown({{UPat::Cvar("c", dtypes::kInt32, false), [](const Match& m) -> UOpPtr {
                               int64_t v = m["c"]->const_value().AsInt64();
                               return v > 0 ? m["c"].const_like(v - 1) : nullptr;
                             }}});
  UOpPtr five = UOp::Const(dtypes::kInt32, 5);
  UOpPtr zero = UOp::Const(dtypes::kInt32, 0);
  RewriteStats stats;
  EXPECT_EQ(GraphRewrite(five, countdown, {.stats = &stats}), zero);
  EXPECT_EQ(stats.Get(countdown.rule(0)).matches, 5);
  EXPECT_EQ(GraphRewrite(five + five, countdown, {.bottom_up = true}), zero + zero);
  EXPECT_EQ(GraphRewrite(five + five, countdown), zero + zero);
}

TEST_F(GraphRewriteTest, SharedNodesAreRewrittenOnce) {
  // 2^60 paths, 61 nodes: every node is looked at once.
  UOpPtr n = a;
  for (int i = 0; i < 60; ++i) n = n + n;
  struct Seen {
    int adds = 0;
  };
  PatternMatcher count({{UPat(Ops::ADD), [](const Match& m) -> UOpPtr {
                           ++m.ctx<Seen>().adds;
                           return nullptr;
                         }}});
  for (bool bottom_up : {false, true}) {
    Seen seen;
    EXPECT_EQ(GraphRewrite(n, count, {.bottom_up = bottom_up, .ctx = &seen}), n);
    EXPECT_EQ(seen.adds, 60);
  }
  // A rewrite of the shared leaf reaches every level.
  PatternMatcher a_to_b({{UPat(Ops::DEFINE_VAR).named("v"),
                          [this](const Match& m) -> UOpPtr { return m["v"] == a ? b : nullptr; }}});
  UOpPtr expected = b;
  for (int i = 0; i < 60; ++i) expected = expected + expected;
  EXPECT_EQ(GraphRewrite(n, a_to_b), expected);
  EXPECT_EQ(GraphRewrite(n, a_to_b, {.bottom_up = true}), expected);
}

TEST_F(GraphRewriteTest, MemoWorksWithAndWithoutTheScratchLease) {
  // A rewrite keeps its memo in the nodes when it gets the process's scratch lease, in a table otherwise
  // (here the test holds the lease). Both must see each node once and give the same result.
  UOpPtr n = a;
  for (int i = 0; i < 40; ++i) n = (n + n) * 1;
  struct Seen {
    int adds = 0;
  };
  PatternMatcher count_and_fold({{UPat(Ops::ADD), [](const Match& m) -> UOpPtr {
                                    ++m.ctx<Seen>().adds;
                                    return nullptr;
                                  }}});
  count_and_fold = identities + count_and_fold;
  UOpPtr expected = a;
  for (int i = 0; i < 40; ++i) expected = expected + expected;
  for (bool hold_lease : {false, true}) {
    std::optional<ScratchLease> lease = hold_lease ? ScratchLease::TryAcquire() : std::nullopt;
    ASSERT_EQ(lease.has_value(), hold_lease);
    for (bool bottom_up : {false, true}) {
      Seen seen;
      EXPECT_EQ(GraphRewrite(n, count_and_fold, {.bottom_up = bottom_up, .ctx = &seen}), expected);
      // Bottom-up also tries each ADD before its sources are rewritten.
      EXPECT_EQ(seen.adds, bottom_up ? 80 : 40) << "hold_lease=" << hold_lease << " bottom_up=" << bottom_up;
    }
  }
}

TEST_F(GraphRewriteTest, IntermediatesAreFreedOnceTheirRewriteIsKnown) {
  // Each chain counts down: v + k -> v + (k - 1) -> ... -> v; every step is garbage once the chain ends.
  // With the scratch lease (the memo lives in the nodes) and no context, a step is freed when its rewrite is
  // known, so the live count grows by one chain at most. Without the lease (a memo keyed by address) or with
  // a context (rules may keep state in it) steps are kept until the call ends. At the end `v0 * 150` becomes
  // `v0 + 150`, a step of the first chain: freed by then in the first case, so rewritten again (to the same
  // result); found in the memo in the others.
  struct Counts {
    size_t baseline = 0;
    size_t peak = 0;
    int steps = 0;
  };
  Counts counts;
  auto count_down = [&counts](const Match& m) -> UOpPtr {
    counts.peak = std::max(counts.peak, UOp::LiveCount() - counts.baseline);
    ++counts.steps;
    int64_t c = m["c"]->arg().as_int();
    return c == 0 ? m["x"] : m["x"] + (c - 1);
  };
  PatternMatcher pm({
      {x + UPat::Cvar("c"), count_down},
      {x * UPat::Cvar("c"), [](const Match& m) { return m["x"] + m["c"]; }},
  });
  constexpr int kChains = 20, kLength = 200;
  std::vector<UOpPtr> vars, chains;
  for (int i = 0; i < kChains; ++i) {
    vars.push_back(UOp::Variable("v" + std::to_string(i), 0, 10));
    chains.push_back(vars.back() + kLength);
  }
  chains.push_back(vars[0] * 150);
  UOpPtr sink = UOp::Sink(chains);
  std::vector<UOpPtr> expected_src = vars;
  expected_src.push_back(vars[0]);
  const UOpPtr expected = UOp::Sink(expected_src);
  for (bool other_holds_lease : {false, true}) {
    for (bool with_ctx : {false, true}) {
      std::optional<ScratchLease> lease = other_holds_lease ? ScratchLease::TryAcquire() : std::nullopt;
      ASSERT_EQ(lease.has_value(), other_holds_lease);
      SCOPED_TRACE(::testing::Message()
                   << "other_holds_lease=" << other_holds_lease << " with_ctx=" << with_ctx);
      counts = Counts{.baseline = UOp::LiveCount()};
      int unused_ctx = 0;
      EXPECT_EQ(GraphRewrite(sink, pm, {.ctx = with_ctx ? &unused_ctx : nullptr}), expected);
      EXPECT_EQ(UOp::LiveCount(), counts.baseline);
      if (!other_holds_lease && !with_ctx) {
        EXPECT_LE(counts.peak, static_cast<size_t>(kLength + 10));
        EXPECT_EQ(counts.steps, kChains * (kLength + 1) + 151);
      } else {
        EXPECT_GE(counts.peak, static_cast<size_t>(kChains * kLength));
        EXPECT_EQ(counts.steps, kChains * (kLength + 1));
      }
    }
  }
}

TEST_F(GraphRewriteTest, ConcurrentRewritesAgree) {
  // One thread gets the scratch lease, the others fall back to their own tables; the rules here build
  // new nodes, so the threads also race in the intern table.
  PatternMatcher distribute(
      {{(x + y) * UPat::Cvar("c"), [](const Match& m) { return m["x"] * m["c"] + m["y"] * m["c"]; }}});
  UOpPtr n = a;
  for (int i = 0; i < 40; ++i) n = (n + (i % 2 == 0 ? b : c)) * (i % 5 + 2);
  UOpPtr expected = GraphRewrite(n, distribute);
  std::vector<std::thread> threads;
  std::vector<UOpPtr> results(4);
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 10; ++i) results[t] = GraphRewrite(n, distribute);
    });
  }
  for (std::thread& t : threads) t.join();
  for (const UOpPtr& r : results) EXPECT_EQ(r, expected);
}

TEST_F(GraphRewriteTest, ContextAndStatsFlowThroughOptions) {
  int64_t offset = 7;
  PatternMatcher pm({{UPat(Ops::DEFINE_VAR).named("v"), [](const Match& m) -> UOpPtr {
                        return m["v"]->var_name() == "a" ? m["v"].const_like(m.ctx<int64_t>()) : nullptr;
                      }}});
  RewriteStats stats;
  EXPECT_EQ(GraphRewrite(a + b, pm, {.ctx = &offset, .stats = &stats}), a.const_like(7) + b);
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, 2);
  EXPECT_EQ(stats.Get(pm.rule(0)).matches, 1);
}

TEST_F(GraphRewriteTest, RulesMayRewriteSubgraphsThemselves) {
  // A callback that runs a nested graph_rewrite, like tinygrad rules calling simplify().
  PatternMatcher outer({{UPat(Ops::SINK).named("s"), [this](const Match& m) -> UOpPtr {
                           UOpPtr inner = GraphRewrite(m["s"]->src()[0], identities);
                           return inner == m["s"]->src()[0] ? nullptr : UOp::Sink({inner});
                         }}});
  EXPECT_EQ(GraphRewrite(UOp::Sink({(a + 0) * 1}), outer, {.bottom_up = true}), UOp::Sink({a}));
}

TEST_F(GraphRewriteTest, RewriteMapCoversEveryNode) {
  UOpPtr a0 = a + 0, b0 = b + 0, root = a0 * b0;
  UOpMap map = GraphRewriteMap(root, identities);
  EXPECT_EQ(map.size(), 6u);  // a, 0, a+0, b, b+0, root
  EXPECT_EQ(map.at(root.get()), a * b);
  EXPECT_EQ(map.at(a0.get()), a);
  EXPECT_EQ(map.at(b0.get()), b);
  EXPECT_EQ(map.at(a.get()), a);
  EXPECT_EQ(map.at(a0->src()[1].get()), a0->src()[1]);
  // input_map: k -> v maps k to v's rewrite (or v itself outside the graph).
  UOpPtr k1 = UOp::Variable("k1", 0, 1), k2 = UOp::Variable("k2", 0, 1);
  UOpMap input = {{k1.get(), a0}, {k2.get(), c}};
  UOpMap with_input = GraphRewriteMap(root, identities, {.bottom_up = true}, &input);
  EXPECT_EQ(with_input.size(), 8u);
  EXPECT_EQ(with_input.at(k1.get()), a);
  EXPECT_EQ(with_input.at(k2.get()), c);
  EXPECT_EQ(with_input.at(root.get()), a * b);
}

TEST_F(GraphRewriteTest, SubstituteAsTinygrad) {
  UOpPtr root = (a + b) * a;
  EXPECT_EQ(Substitute(root, {}), root);
  EXPECT_EQ(Substitute(root, {{a.get(), c}}), (c + b) * c);
  // Replacements chain, and apply inside replacement values.
  EXPECT_EQ(Substitute(root, {{a.get(), b}, {b.get(), c}}), (c + c) * c);
  UOpPtr b1 = b + 1;
  EXPECT_EQ(Substitute(root, {{a.get(), b1}, {b.get(), c}}), ((c + 1) + c) * (c + 1));
  EXPECT_EQ(Substitute(root, {{(a + b).get(), c}}), c * a);
  EXPECT_DEATH(Substitute(root, {{a.get(), b}, {b.get(), a}}), "does not terminate");
}

TEST_F(GraphRewriteTest, StepLimitNamesTheRulesThatKeepFiring) {
  // Even and odd constants step to the next one forever: every result is a new node.
  const int even_line = __LINE__ + 4;  // rules are named by the line their callback starts on
  const int odd_line = even_line + 5;
  PatternMatcher forever({
      {UPat::Cvar("c", dtypes::kInt32, false),
       [](const Match& m) -> UOpPtr {
         int64_t v = m["c"]->const_value().AsInt64();
         return v % 2 == 0 ? m["c"].const_like(v + 1) : nullptr;
       }},
      {UPat::Cvar("c", dtypes::kInt32, false),
       [](const Match& m) -> UOpPtr {
         int64_t v = m["c"]->const_value().AsInt64();
         return v % 2 == 1 ? m["c"].const_like(v + 1) : nullptr;
       }},
  });
  for (bool bottom_up : {false, true}) {
    absl::StatusOr<UOpPtr> r = TryGraphRewrite(a + UOp::Const(dtypes::kInt32, 0), forever,
                                               {.bottom_up = bottom_up, .max_steps = 1000});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_THAT(r.status().message(), HasSubstr("exceeded 1000 rule applications"));
    EXPECT_THAT(r.status().message(), HasSubstr(Loc(even_line) + " c@CONST:int (501x)"));
    EXPECT_THAT(r.status().message(), HasSubstr(Loc(odd_line) + " c@CONST:int (500x)"));
  }
  // A generous limit lets a long but finite rewrite finish.
  PatternMatcher countdown({{UPat::Cvar("c", dtypes::kInt32, false), [](const Match& m) -> UOpPtr {
                               int64_t v = m["c"]->const_value().AsInt64();
                               return v > 0 ? m["c"].const_like(v - 1) : nullptr;
                             }}});
  EXPECT_TRUE(TryGraphRewrite(UOp::Const(dtypes::kInt32, 1000), countdown, {.max_steps = 1000}).ok());
  EXPECT_FALSE(TryGraphRewrite(UOp::Const(dtypes::kInt32, 1001), countdown, {.max_steps = 1000}).ok());
  EXPECT_TRUE(TryGraphRewrite(UOp::Const(dtypes::kInt32, 5000), countdown, {.max_steps = 0}).ok());
}

// A rule that pushes a wrapper down a graph with sharing (codegen's IGNORE through a threefry's rounds, each
// feeding two of the next) rewrites each pushed node once, as tinygrad does, whichever thread runs it: with
// the scratch lease the engine drops only cheap intermediates, so the pushed nodes, whose rewrites are not
// cheap, are not rewritten again once per path (2^40 paths here). Run on a thread that holds the lease and on
// one that cannot get it.
TEST_F(GraphRewriteTest, PushingANodeDownASharedGraphIsLinear) {
  UOpPtr a = UOp::Variable("a", 0, 9), b = UOp::Variable("b", 0, 9);
  for (int i = 0; i < 40; ++i) std::tie(a, b) = std::make_pair(a + b, a * b);
  const UOpPtr root = (a + b).alu(Ops::NOOP, {});
  PatternMatcher push({
      {UPat(Ops::NOOP).src(UPat(OpSet{Ops::ADD, Ops::MUL}).named("x")),
       [](const Match& m) {
         const UOpPtr& x = m["x"];
         return UOp::WithSources(*x, {x->src()[0].alu(Ops::NOOP, {}), x->src()[1].alu(Ops::NOOP, {})});
       }},
      {UPat(Ops::NOOP).src(UPat(Ops::DEFINE_VAR).named("v")), [](const Match& m) { return m["v"]; }},
  });
  auto run = [&] { return TryGraphRewrite(root, push, {.max_steps = 2000}); };
  ASSERT_TRUE(ScratchLease::TryAcquire().has_value()) << "this thread can get the lease";
  absl::StatusOr<UOpPtr> here = run();
  ASSERT_TRUE(here.ok()) << here.status();
  EXPECT_EQ(*here, a + b);
  std::optional<ScratchLease> held = ScratchLease::TryAcquire();  // the other thread gets no lease
  absl::StatusOr<UOpPtr> there = absl::InternalError("not run");
  std::thread([&] { there = run(); }).join();
  ASSERT_TRUE(there.ok()) << there.status();
  EXPECT_EQ(*there, a + b);
}

TEST_F(GraphRewriteTest, CyclesAreReportedWithTheirRules) {
  const int sqrt_line = __LINE__ + 2;
  PatternMatcher swap({
      {x.sqrt(), [](const Match& m) { return m["x"].sin(); }},
      {x.sin(), [](const Match& m) { return m["x"].sqrt(); }},
      {x + 0, [](const Match& m) { return m["x"]; }},  // not on the cycle
  });
  UOpPtr f = UOp::Variable("f", 0, 1, dtypes::kFloat32);
  for (bool bottom_up : {false, true}) {
    absl::StatusOr<UOpPtr> r =
        TryGraphRewrite((f + 0).sqrt() * 2.0, swap, {.bottom_up = bottom_up, .name = "swap"});
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(r.status().message(), HasSubstr("graph_rewrite 'swap' does not terminate"));
    EXPECT_THAT(r.status().message(), HasSubstr(Loc(sqrt_line) + " SQRT(x)"));
    EXPECT_THAT(r.status().message(), HasSubstr(Loc(sqrt_line + 1) + " SIN(x)"));
    EXPECT_THAT(r.status().message(), ::testing::Not(HasSubstr(Loc(sqrt_line + 2))));
  }
  EXPECT_DEATH(GraphRewrite(f.sqrt(), swap), "does not terminate");
  // A cycle through sources: a node rewritten into something containing itself.
  PatternMatcher grow({{UPat(Ops::DEFINE_VAR).named("v"), [](const Match& m) { return m["v"] + 1; }}});
  absl::StatusOr<UOpPtr> r = TryGraphRewrite(a, grow);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("DEFINE_VAR node is rewritten back into itself"));
}

TEST_F(GraphRewriteTest, MillionNodeChainsUseNoCStack) {
  constexpr int kDepth = 1000000;
  UOpPtr folding = a, fixed = a;
  for (int i = 0; i < kDepth; ++i) {
    folding = folding + 0;
    fixed = fixed + 1;
  }
  EXPECT_EQ(GraphRewrite(folding, identities), a);
  EXPECT_EQ(GraphRewrite(folding, identities, {.bottom_up = true}), a);
  EXPECT_EQ(GraphRewrite(fixed, identities), fixed);
  EXPECT_EQ(GraphRewrite(fixed, identities, {.bottom_up = true}), fixed);
  // A chain whose every node is rebuilt: rewriting the leaf rebuilds all million parents.
  PatternMatcher a_to_b({{UPat(Ops::DEFINE_VAR).named("v"),
                          [this](const Match& m) -> UOpPtr { return m["v"] == a ? b : nullptr; }}});
  UOpPtr rebuilt = GraphRewrite(fixed, a_to_b);
  const UOp* leaf = rebuilt.get();
  int depth = 0;
  while (leaf->num_src() > 0) {
    leaf = leaf->src(0);
    ++depth;
  }
  EXPECT_EQ(depth, kDepth);
  EXPECT_EQ(leaf, b.get());
  EXPECT_EQ(GraphRewrite(fixed, a_to_b, {.bottom_up = true}), rebuilt);
}

TEST_F(GraphRewriteTest, TraceRecordsEachCallAndCallsTheHook) {
  RewriteTrace trace;
  int hooked = 0;
  trace.on_event = [&](const TracedRewrite& call, const RewriteEvent& e) {
    ++hooked;
    EXPECT_EQ(call.name, "first");
    EXPECT_NE(e.before, e.after);
  };
  GraphRewrite((a + 0) * 1, identities, {.trace = &trace, .name = "first"});
  trace.on_event = nullptr;
  GraphRewrite(b, identities, {.bottom_up = true, .trace = &trace, .name = "second"});
  ASSERT_EQ(trace.rewrites.size(), 2u);
  EXPECT_EQ(hooked, 2);
  EXPECT_EQ(trace.rewrites[0].name, "first");
  EXPECT_EQ(trace.rewrites[0].events.size(), 2u);
  EXPECT_EQ(trace.rewrites[0].output, a);
  EXPECT_EQ(trace.rewrites[1].name, "second");
  EXPECT_TRUE(trace.rewrites[1].events.empty());
  EXPECT_EQ(trace.rewrites[1].output, b);
}

}  // namespace
}  // namespace uopc
