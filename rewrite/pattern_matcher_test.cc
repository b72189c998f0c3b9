#include "rewrite/pattern_matcher.h"

#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/print.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

// Selects an engine for one test (the attempt counts below are the interpreted engine's filters).
class ScopedMatcherEngine {
 public:
  explicit ScopedMatcherEngine(MatcherEngine engine) : saved_(GetMatcherEngine()) {
    SetMatcherEngine(engine);
  }
  ~ScopedMatcherEngine() { SetMatcherEngine(saved_); }

 private:
  MatcherEngine saved_;
};

class PatternMatcherTest : public ::testing::Test {
 protected:
  UOpPtr a = UOp::Variable("a", 0, 10);
  UOpPtr b = UOp::Variable("b", 0, 10);
  UOpPtr two = UOp::Const(dtypes::kInt32, 2);
  UPat x = UPat::Var("x");
  UPat y = UPat::Var("y");
};

TEST_F(PatternMatcherTest, RewritesWithTheFirstAcceptingRule) {
  PatternMatcher pm({
      {x + 0, [](const Match& m) { return m["x"]; }},
      {x * 1, [](const Match& m) { return m["x"]; }},
      {x * UPat::Cvar("c"), [](const Match& m) { return m["x"] + m["x"]; }},
  });
  EXPECT_EQ(pm.Rewrite(a + 0), a);
  EXPECT_EQ(pm.Rewrite(0 + a), a);
  EXPECT_EQ(pm.Rewrite(a * 1), a);  // rule 1 and rule 2 both match; rule 1 comes first
  EXPECT_EQ(pm.Rewrite(a * 2), a + a);
  EXPECT_EQ(pm.Rewrite(a + 1), nullptr);
  EXPECT_EQ(pm.Rewrite(a), nullptr);
}

TEST_F(PatternMatcherTest, DecliningCallbackFallsThroughToOtherMatchesThenRules) {
  std::vector<std::string> calls;
  PatternMatcher pm({
      // Declines unless x is b: sees (x=a, y=b) first, then accepts (x=b, y=a).
      {x + y,
       [&calls](const Match& m) -> UOpPtr {
         calls.push_back("first:" + m["x"]->var_name());
         return m["x"]->var_name() == "b" ? m["y"] : nullptr;
       }},
      {x + y,
       [&calls](const Match& m) -> UOpPtr {
         calls.push_back("second");
         return m["x"];
       }},
  });
  EXPECT_EQ(pm.Rewrite(a + b), a);
  EXPECT_THAT(calls, ::testing::ElementsAre("first:a", "first:b"));
}

TEST_F(PatternMatcherTest, ReturningTheSameNodeDeclines) {
  PatternMatcher pm({
      {UPat(Ops::ADD).named("r"), [](const Match& m) { return m.root(); }},
      {x + y, [](const Match& m) { return m["y"]; }},
  });
  EXPECT_EQ(pm.Rewrite(a + b), b);
}

TEST_F(PatternMatcherTest, DispatchesByOpAndRejectsEarly) {
  ScopedMatcherEngine interpreted(MatcherEngine::kInterpreted);
  PatternMatcher pm({
      {x * 1, [](const Match& m) { return m["x"]; }},                 // MUL only
      {x + UPat(Ops::CONST), [](const Match& m) { return m["x"]; }},  // needs a CONST source
      {UPat(Ops::ADD).src(UPat(Ops::MUL), y), [](const Match& m) { return m["y"]; }},
  });
  RewriteStats stats;
  EXPECT_EQ(pm.Rewrite(a + b, nullptr, &stats, nullptr), nullptr);
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, 0);  // not registered for ADD
  EXPECT_EQ(stats.Get(pm.rule(1)).attempts, 0);  // early reject: no CONST among the sources
  EXPECT_EQ(stats.Get(pm.rule(2)).attempts, 0);  // early reject: no MUL among the sources
  int fired = 7;
  EXPECT_EQ(pm.Rewrite(a + 2, nullptr, &stats, &fired), a);
  EXPECT_EQ(fired, 1);
  EXPECT_EQ(stats.Get(pm.rule(1)).attempts, 1);
  EXPECT_EQ(stats.Get(pm.rule(1)).matches, 1);
  // A MUL source passes tinygrad's reject of rule 2, but rule 2 wants it first: its source pair rejects the
  // node before matching. Rule 1 is rejected (no CONST).
  EXPECT_EQ(pm.Rewrite(b + a * b, nullptr, &stats, &fired), nullptr);
  EXPECT_EQ(fired, -1);
  EXPECT_EQ(stats.Get(pm.rule(2)).attempts, 0);
  EXPECT_EQ(stats.Get(pm.rule(1)).attempts, 1);
  EXPECT_EQ(pm.Rewrite(a * b + b, nullptr, &stats, &fired), b);
  EXPECT_EQ(fired, 2);
  EXPECT_EQ(stats.Get(pm.rule(2)).attempts, 1);
  EXPECT_EQ(stats.Total().attempts, 2);
  EXPECT_EQ(stats.Total().matches, 2);
}

// A root with exactly two source patterns is not attempted on a node whose two sources' ops fit neither order
// (or the one order of an exact tuple); other shapes keep tinygrad's early reject.
TEST_F(PatternMatcherTest, SourcePairsRejectBeforeMatching) {
  ScopedMatcherEngine interpreted(MatcherEngine::kInterpreted);
  UPat mul = UPat(Ops::MUL).named("m"), idiv = UPat(Ops::IDIV).named("d");
  PatternMatcher pm({
      {mul + idiv, [](const Match& m) { return m["d"]; }},                               // either order
      {UPat(Ops::MAX).src(mul, idiv), [](const Match& m) { return m["d"]; }},            // this order only
      {UPat(Ops::MAX).src(mul).allow_any_len(), [](const Match& m) { return m["m"]; }},  // a prefix
  });
  EXPECT_EQ(pm.rule(0).pair_kind(), Rule::PairKind::kEitherOrder);
  EXPECT_EQ(pm.rule(1).pair_kind(), Rule::PairKind::kOrdered);
  EXPECT_EQ(pm.rule(2).pair_kind(), Rule::PairKind::kNone);
  UOpPtr ab = a * b, a_b = a.idiv(b);
  RewriteStats stats;
  EXPECT_EQ(pm.Rewrite(ab + a_b, nullptr, &stats, nullptr), a_b);
  EXPECT_EQ(pm.Rewrite(a_b + ab, nullptr, &stats, nullptr), a_b);
  EXPECT_EQ(pm.Rewrite(ab + ab, nullptr, &stats, nullptr), nullptr);  // rejected: no IDIV
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, 2);
  EXPECT_EQ(pm.Rewrite(ab.maximum(a_b), nullptr, &stats, nullptr), a_b);
  EXPECT_EQ(pm.Rewrite(a_b.maximum(ab), nullptr, &stats, nullptr), nullptr);  // rule 1 rejected, rule 2 tried
  EXPECT_EQ(stats.Get(pm.rule(1)).attempts, 1);
  EXPECT_EQ(stats.Get(pm.rule(2)).attempts, 1);
  // Three sources: the pair rules are rejected, the prefix rule matches.
  UOpPtr three = UOp::New(Ops::MAX, dtypes::kInt32, {ab, a_b, b});
  EXPECT_EQ(pm.Rewrite(three, nullptr, &stats, nullptr), ab);
  EXPECT_EQ(stats.Get(pm.rule(1)).attempts, 1);
}

// An op with several rules dispatches two-source nodes through a table by the sources' ops; which rule fires
// must not change: on every pair of sources it is the first rule that matches when tried alone.
// What the dispatch must preserve: `pm` rewrites `node` as its rules tried one by one, in order, would.
void ExpectFirstMatchingRuleFires(const PatternMatcher& pm, const UOpPtr& node, RewriteStats* stats) {
  UOpPtr expected;
  for (size_t i = 0; i < pm.size() && expected == nullptr; ++i) expected = pm.rule(i).Apply(node);
  EXPECT_EQ(pm.Rewrite(node, nullptr, stats, nullptr), expected)
      << "sources " << node->src(0)->op() << " " << node->src(0)->arg() << ", " << node->src(1)->op() << " "
      << node->src(1)->arg();
}

TEST_F(PatternMatcherTest, DispatchTableFiresTheFirstMatchingRule) {
  UPat x = UPat::Var("x"), c = UPat::Cvar("c");
  UPat mul = UPat(Ops::MUL).named("m"), idiv = UPat(Ops::IDIV).named("d");
  auto mark = [](int i) { return [i](const Match& m) { return m.root().const_like(100 + i); }; };
  PatternMatcher pm({
      {mul + idiv, mark(0)},                                                     // either order
      {UPat(Ops::ADD).src(c, mul), mark(1)},                                     // this order only
      {UPat(Ops::ADD).src(mul).allow_any_len(), mark(2)},                        // requires a MUL source
      {x + x, mark(3)},                                                          // any ops, same node twice
      {UPat(Ops::ADD).dtype(dtypes::kBool).named("r"), mark(4)},                 // other scalar types only
      {UPat::Any(UPat(Ops::ADD).src(x, c), UPat(Ops::ADD).src(c, x)), mark(5)},  // alternatives
      {(x % UPat::Var("y")) + x, mark(6)},                                       // a deeper pattern
  });
  std::vector<UOpPtr> sources = {a, b, UOp::Const(dtypes::kInt32, 3), a * b, a.idiv(b), a % b, a + b, -a};
  RewriteStats stats;
  int tried = 0;
  for (const UOpPtr& s0 : sources) {
    for (const UOpPtr& s1 : sources) {
      ExpectFirstMatchingRuleFires(pm, UOp::New(Ops::ADD, dtypes::kInt32, {s0, s1}), &stats);
      ++tried;
    }
  }
  // The table did skip rules: fewer attempts than rules times nodes.
  EXPECT_LT(stats.Total().attempts, static_cast<int64_t>(pm.size()) * tried / 2);
  EXPECT_EQ(stats.Get(pm.rule(4)).attempts, 0);
}

// The table also tells sources apart by the small constants the rules name and by whether the two sources
// are one node: each node still gets the first rule that matches when tried one by one, and a rule naming a
// constant is not attempted on a node with no source equal to it.
TEST_F(PatternMatcherTest, DispatchTableKnowsConstantsAndRepeatedNames) {
  ScopedMatcherEngine interpreted(MatcherEngine::kInterpreted);
  UPat c = UPat::Cvar("c");
  auto mark = [](int i) { return [i](const Match& m) { return m.root().const_like(100 + i); }; };
  PatternMatcher pm({
      {x + 0, mark(0)},                                      // either order
      {UPat(Ops::ADD).src(UPat::Const({}, 1), x), mark(1)},  // this order only
      {x + -1, mark(2)},
      {x + 1.0, mark(3)},  // equals 1 and True as Python numbers do
      {x + x, mark(4)},
      {UPat(Ops::ADD).src(x, x), mark(5)},
      {x + UPat::Const({}, 2).named("x"), mark(6)},  // only 2 + 2
      {x + c, mark(7)},
      // Too big for the table: only the op test applies.
      {UPat(Ops::ADD).src(x, UPat::Const({}, int64_t{1} << 40)), mark(8)},
  });
  auto int_const = [](int64_t v) { return UOp::Const(dtypes::kInt32, v); };
  std::vector<UOpPtr> sources = {a,
                                 b,
                                 int_const(0),
                                 int_const(1),
                                 int_const(-1),
                                 int_const(2),
                                 int_const(3),
                                 int_const(int64_t{1} << 40),
                                 UOp::Const(dtypes::kBool, true),
                                 UOp::Const(dtypes::kBool, false),
                                 UOp::Const(dtypes::kFloat32, 1.0),
                                 UOp::Const(dtypes::kFloat32, 0.5),
                                 UOp::Const(dtypes::kFloat32, -0.0),
                                 UOp::Const(dtypes::kUInt64, ConstValue::Int(~uint64_t{0})),
                                 a * b};
  RewriteStats stats;
  int64_t plus_zero_matches = 0;
  for (const UOpPtr& s0 : sources) {
    for (const UOpPtr& s1 : sources) {
      UOpPtr node = UOp::New(Ops::ADD, dtypes::kInt32, {s0, s1});
      ExpectFirstMatchingRuleFires(pm, node, &stats);
      if (pm.rule(0).Apply(node) != nullptr) ++plus_zero_matches;
    }
  }
  // The compiled engine fires the same rules on the same nodes.
  {
    ScopedMatcherEngine compiled(MatcherEngine::kCompiled);
    RewriteStats compiled_stats;
    for (const UOpPtr& s0 : sources) {
      for (const UOpPtr& s1 : sources) {
        ExpectFirstMatchingRuleFires(pm, UOp::New(Ops::ADD, dtypes::kInt32, {s0, s1}), &compiled_stats);
      }
    }
    EXPECT_LE(compiled_stats.Total().attempts, stats.Total().attempts);
  }
  // `x + 0` was attempted exactly where a source equals 0 (0, False and -0.0 do).
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, plus_zero_matches);
  EXPECT_EQ(plus_zero_matches, static_cast<int64_t>(sources.size() * sources.size() -
                                                    (sources.size() - 3) * (sources.size() - 3)));
  // a + b: only the rules with no constant and no repeated name are tried.
  RewriteStats one;
  EXPECT_EQ(pm.Rewrite(a + b, nullptr, &one, nullptr), nullptr);
  EXPECT_EQ(one.Total().attempts, 0);
  EXPECT_EQ(pm.Rewrite(a + 3, nullptr, &one, nullptr), pm.rule(7).Apply(a + 3));
  EXPECT_EQ(one.Total().attempts, 1);  // x + c alone
  RewriteStats twice;
  EXPECT_EQ(pm.Rewrite(a + a, nullptr, &twice, nullptr), int_const(104));
  EXPECT_EQ(twice.Total().attempts, 1);
}

// The compiled engine fires the rule the interpreted one fires, with the same result, and attempts a rule on
// a node only where the interpreted engine does (its decision tables are at least as selective).
TEST_F(PatternMatcherTest, CompiledEngineAgreesAndAttemptsNoMore) {
  UPat c = UPat::Cvar("c");
  auto mark = [](int i) { return [i](const Match& m) { return m.root().const_like(100 + i); }; };
  PatternMatcher pm({
      {x + 0, mark(0)},
      {UPat(Ops::ADD).src(UPat::Const({}, 1), x), mark(1)},
      {x + x, mark(2)},
      {UPat(Ops::ADD).src(UPat(Ops::MUL), y), mark(3)},
      {x + UPat(Ops::CONST), mark(4)},
      {(x * c) + (x * UPat::Cvar("d")), mark(5)},
      {(x + c) + UPat::Cvar("d"), mark(6)},
      {UPat(Ops::ADD).src(UPat(Ops::MUL)).allow_any_len(), mark(7)},
      {UPat::Any(UPat(Ops::ADD).src(x, c), UPat(Ops::ADD).src(c, x)), mark(8)},
      {UPat(Ops::ADD).dtype(dtypes::kBool).named("r"), mark(9)},
      {x.idiv(c) + (x % c), mark(10)},
      {UPat(Ops::ADD).src(UPat(Ops::IDIV).src(x, c), y), mark(11)},
  });
  auto k = [](int64_t v) { return UOp::Const(dtypes::kInt32, v); };
  std::vector<UOpPtr> leaves = {a, b, k(0), k(1), k(2), UOp::Const(dtypes::kBool, true)};
  std::vector<UOpPtr> sources = leaves;
  for (const UOpPtr& l : leaves) {
    for (const UOpPtr& r : {a, k(3)}) {
      sources.push_back(UOp::New(Ops::ADD, dtypes::kInt32, {l, r}));
      sources.push_back(UOp::New(Ops::MUL, dtypes::kInt32, {l, r}));
      sources.push_back(UOp::New(Ops::IDIV, dtypes::kInt32, {l, r}));
      sources.push_back(UOp::New(Ops::MOD, dtypes::kInt32, {l, r}));
    }
  }
  RewriteStats compiled, interpreted;
  int checked = 0;
  for (const UOpPtr& s0 : sources) {
    for (const UOpPtr& s1 : sources) {
      for (DType dt : {dtypes::kInt32, dtypes::kBool}) {
        for (const UOpPtr& node : {UOp::New(Ops::ADD, dt, {s0, s1}), UOp::New(Ops::ADD, dt, {s0, s1, s0}),
                                   UOp::New(Ops::ADD, dt, {s0})}) {
          int fired_c = -2, fired_i = -2;
          UOpPtr rc = pm.Rewrite(node, nullptr, &compiled, &fired_c, MatcherEngine::kCompiled);
          UOpPtr ri = pm.Rewrite(node, nullptr, &interpreted, &fired_i, MatcherEngine::kInterpreted);
          ASSERT_EQ(rc, ri) << node;
          ASSERT_EQ(fired_c, fired_i) << node;
          ++checked;
        }
      }
    }
  }
  EXPECT_GT(checked, 1000);
  for (size_t i = 0; i < pm.size(); ++i) {
    EXPECT_LE(compiled.Get(pm.rule(i)).attempts, interpreted.Get(pm.rule(i)).attempts) << "rule " << i;
    EXPECT_EQ(compiled.Get(pm.rule(i)).matches, interpreted.Get(pm.rule(i)).matches) << "rule " << i;
  }
  // The grandsource tables leave out deeper patterns the interpreted engine tries.
  EXPECT_LT(compiled.Total().attempts, interpreted.Total().attempts);
}

// A rule is not attempted on a node whose scalar type its root pattern cannot accept; vectors of an accepted
// scalar and patterns with vector or pointer dtypes are attempted (the full match decides).
TEST_F(PatternMatcherTest, RejectsByRootScalarType) {
  PatternMatcher pm({
      {UPat(Ops::ADD).dtype(dtypes::kBool).named("r"),
       [](const Match& m) { return m.root().const_like(true); }},
      {UPat::Any(UPat(Ops::ADD).dtype(dtypes::kFloat32), UPat(Ops::ADD).dtype(dtypes::kInt32.Vec(2))),
       [](const Match& m) { return m.root().const_like(0); }},
  });
  EXPECT_EQ(pm.rule(0).root_scalar_types(), 1u << static_cast<int>(ScalarType::kBool));
  EXPECT_EQ(pm.rule(1).root_scalar_types(), 0xffff);
  RewriteStats stats;
  EXPECT_EQ(pm.Rewrite(a + b, nullptr, &stats, nullptr), nullptr);
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, 0);  // int32 is not bool
  EXPECT_EQ(stats.Get(pm.rule(1)).attempts, 1);  // a vector alternative: no scalar filter
  UOpPtr p = UOp::New(Ops::DEFINE_VAR, dtypes::kBool, {}, Arg{Arg("p"), Arg(0), Arg(1)});
  EXPECT_EQ(pm.Rewrite(p + p, nullptr, &stats, nullptr), UOp::Const(dtypes::kBool, true));
  UOpPtr v = UOp::New(Ops::VECTORIZE, dtypes::kBool.Vec(2), {p, p});
  EXPECT_EQ(pm.Rewrite(v + v, nullptr, &stats, nullptr), UOp::Const(dtypes::kBool.Vec(2), true));
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, 2);
}

TEST_F(PatternMatcherTest, EarlyRejectIsTinygrads) {
  Rule add_const(RuleSpec{x + UPat::Cvar("c"), [](const Match& m) { return m["x"]; }});
  EXPECT_TRUE(add_const.early_reject() == OpSet{});  // Cvar has two ops: no requirement
  Rule add_zero(RuleSpec{x + 0, [](const Match& m) { return m["x"]; }});
  EXPECT_TRUE(add_zero.early_reject() == OpSet{Ops::CONST});
  Rule vec(
      RuleSpec{UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::GEP)), [](const Match& m) { return m.root(); }});
  EXPECT_TRUE(vec.early_reject() == OpSet{Ops::GEP});
  Rule custom(
      RuleSpec{UPat(Ops::ADD).custom_early_reject({Ops::RANGE}), [](const Match& m) { return m.root(); }});
  EXPECT_TRUE(custom.early_reject() == OpSet{Ops::RANGE});
  EXPECT_TRUE(add_zero.root_ops() == OpSet{Ops::ADD});
  Rule any_root(RuleSpec{UPat::Any(UPat(Ops::ADD), UPat(Ops::MUL)), [](const Match& m) { return m.root(); }});
  EXPECT_TRUE(any_root.root_ops() == (OpSet{Ops::ADD, Ops::MUL}));
}

TEST_F(PatternMatcherTest, RootsWithoutAnOpMatchEveryOp) {
  PatternMatcher pm({
      {UPat::Var("v", dtypes::kInt32),
       [](const Match& m) -> UOpPtr { return m["v"]->op() == Ops::DEFINE_VAR ? m["v"] * 3 : nullptr; }},
      {UPat::Any(UPat(Ops::RECIP), UPat(Ops::SQRT)).named("u"),
       [](const Match& m) { return m["u"]->src()[0]; }},
  });
  EXPECT_EQ(pm.Rewrite(a), a * 3);
  EXPECT_EQ(pm.Rewrite(a + b), nullptr);
  UOpPtr f = UOp::Const(dtypes::kFloat32, 2.0);
  EXPECT_EQ(pm.Rewrite(f.sqrt()), f);
  EXPECT_EQ(pm.Rewrite(f.reciprocal()), f);
  EXPECT_EQ(pm.Rewrite(f.sin()), nullptr);
}

TEST_F(PatternMatcherTest, ConcatenationKeepsOrderAndSharesRules) {
  PatternMatcher first({{x + 0, [](const Match& m) { return m["x"]; }}});
  PatternMatcher second({
      {x + UPat::Cvar("c"), [](const Match& m) { return m["c"]; }},
      {x * 1, [](const Match& m) { return m["x"]; }},
  });
  PatternMatcher both = first + second;
  ASSERT_EQ(both.size(), 3u);
  EXPECT_EQ(&both.rule(0), &first.rule(0));
  EXPECT_EQ(&both.rule(2), &second.rule(1));
  EXPECT_EQ(both.Rewrite(a + 0), a);
  EXPECT_EQ((second + first).Rewrite(a + 0), a.const_like(0));
  EXPECT_EQ(both.Rewrite(a * 1), a);
  EXPECT_EQ(first.Rewrite(a * 1), nullptr);
}

TEST_F(PatternMatcherTest, ContextReachesCallbacks) {
  struct Counter {
    int seen = 0;
  };
  PatternMatcher pm({{UPat(Ops::ADD).named("r"), [](const Match& m) -> UOpPtr {
                        ++m.ctx<Counter>().seen;
                        return nullptr;
                      }}});
  Counter counter;
  pm.Rewrite(a + b, &counter);
  pm.Rewrite(a + 2, &counter);
  EXPECT_EQ(counter.seen, 2);
}

TEST_F(PatternMatcherTest, CapturingCallbacksAndFunctionPointers) {
  UOpPtr replacement = b;
  PatternMatcher pm({
      {x + 0, [replacement](const Match&) { return replacement; }},
      {x * 1, +[](const Match& m) -> UOpPtr { return m["x"]; }},
  });
  EXPECT_EQ(pm.Rewrite(a + 0), b);
  EXPECT_EQ(pm.Rewrite(a * 1), a);
}

TEST_F(PatternMatcherTest, RulesKnowWhereTheyWereWritten) {
  const int line = __LINE__ + 3;
  // clang-format off
  PatternMatcher pm({
      {x + 0, [](const Match& m) { return m["x"]; }},
      {x * 1,
       [](const Match& m) { return m["x"]; }},  // named by the line its callback starts on
  });
  // clang-format on
  EXPECT_EQ(pm.rule(0).location(), "pattern_matcher_test.cc:" + std::to_string(line));
  EXPECT_EQ(pm.rule(1).location(), "pattern_matcher_test.cc:" + std::to_string(line + 2));
  EXPECT_EQ(pm.rule(0).ToString(), "pattern_matcher_test.cc:" + std::to_string(line) + " ADD{x, CONST(0)}");
  EXPECT_NE(pm.rule(0).id(), pm.rule(1).id());
}

TEST_F(PatternMatcherTest, StatsReportNamesRules) {
  ScopedMatcherEngine interpreted(MatcherEngine::kInterpreted);  // counts its attempts
  const int line = __LINE__ + 1;
  PatternMatcher pm({{x + 0, [](const Match& m) { return m["x"]; }}});
  RewriteStats stats;
  pm.Rewrite(a + 0, nullptr, &stats, nullptr);
  pm.Rewrite(b + 0, nullptr, &stats, nullptr);
  pm.Rewrite(UOp::Const(dtypes::kInt32, 3) + 2, nullptr, &stats, nullptr);
  RuleStats s = stats.Get(pm.rule(0));
  EXPECT_EQ(s.attempts, 3);
  EXPECT_EQ(s.matches, 2);
  EXPECT_GE(s.total_ns, s.match_ns);
  std::string report = stats.Report();
  EXPECT_THAT(report, HasSubstr("pattern_matcher_test.cc:" + std::to_string(line)));
  EXPECT_THAT(report, HasSubstr("ADD{x, CONST(0)}"));
  EXPECT_THAT(report, HasSubstr("     2 /       3"));
  EXPECT_THAT(report, HasSubstr("TOTAL"));
  stats.Clear();
  EXPECT_EQ(stats.Get(pm.rule(0)).attempts, 0);
}

TEST_F(PatternMatcherTest, UnboundNamesAreNullAndUnknownNamesAreBugs) {
  PatternMatcher pm(
      {{UPat::Any(UPat(Ops::ADD).named("add"), UPat(Ops::MUL).named("mul")), [](const Match& m) -> UOpPtr {
          EXPECT_NE(m.has("add"), m.has("mul"));
          return m.has("add") ? m["mul"] : m["add"];  // the unbound one: null, so declined
        }}});
  EXPECT_EQ(pm.Rewrite(a + b), nullptr);
  EXPECT_EQ(pm.Rewrite(a * b), nullptr);
  PatternMatcher typo({{x + 0, [](const Match& m) { return m["y"]; }}});
  EXPECT_DEATH(typo.Rewrite(a + 0), "has no capture named 'y'");
}

TEST_F(PatternMatcherTest, NamesOfEveryLengthLookUpTheirOwnCapture) {
  // Names up to 7 bytes are compared packed into an integer, longer ones as strings: names that share a
  // prefix or differ only in length must still find their own node.
  PatternMatcher pm({{UPat::Var("x") + UPat::Var("x_shifted") * UPat::Var("x_shift") +
                          UPat::Var("x_shifted_by") * UPat::Var("xy"),
                      [&](const Match& m) -> UOpPtr {
                        EXPECT_EQ(m["x"], a);
                        EXPECT_EQ(m["x_shift"], two);
                        EXPECT_EQ(m["x_shifted_by"], b);
                        EXPECT_TRUE(m.has("x_shifted"));
                        EXPECT_FALSE(m.has("x_shif"));
                        return m["xy"] * m["x_shifted"];
                      }}});
  UOpPtr c = UOp::Const(dtypes::kInt32, 3);
  EXPECT_EQ(pm.Rewrite((a + b * two) + b * c), c * b);
  PatternMatcher typo({{UPat::Var("x_long_name") + 0, [](const Match& m) { return m["x_long_nam"]; }}});
  EXPECT_DEATH(typo.Rewrite(a + 0), "has no capture named 'x_long_nam'");
}

TEST_F(PatternMatcherTest, CallbackSeesRootAndCapturesWithoutCopies) {
  UOpPtr n = a * 2 + b;
  PatternMatcher pm({{(x * UPat::Cvar("c")) + y, [&](const Match& m) -> UOpPtr {
                        // Captures are the graph's own handles: the node's source slots.
                        EXPECT_EQ(&m.root(), &n);
                        EXPECT_EQ(&m["y"], &n->src()[1]);
                        EXPECT_EQ(&m["x"], &n->src()[0]->src()[0]);
                        return m["y"];
                      }}});
  EXPECT_EQ(pm.Rewrite(n), b);
}

// Patterns one or two levels deep have a search of their own (nested loops instead of the general pending
// stack). On random patterns of that shape and random nodes, it must find the general search's matches, with
// the same captures, in the same order.
TEST_F(PatternMatcherTest, ShallowSearchFindsTheGeneralSearchsMatchesInOrder) {
  std::mt19937 rng(20261123);
  auto pick = [&](int n) { return static_cast<int>(rng() % n); };
  const std::vector<UPat> leaves = {UPat::Var("x"),
                                    UPat::Var("y"),
                                    UPat::Var("x", dtypes::kInts),
                                    UPat::Cvar("c"),
                                    UPat::Const({}, 0),
                                    UPat::Const({}, 1),
                                    UPat(Ops::DEFINE_VAR).named("v"),
                                    UPat::Var(),
                                    UPat(Ops::ADD).named("s"),
                                    UPat::Var("b", dtypes::kBool)};
  auto leaf = [&] { return leaves[pick(leaves.size())]; };
  // A node pattern over `src` (a random op and operand order); sometimes named.
  auto node = [&](const std::vector<UPat>& src) {
    UPat p;
    switch (pick(src.size() == 3 ? 1 : 5) + (src.size() == 3 ? 5 : 0)) {
      case 0:
        p = src[0] + src[1];
        break;
      case 1:
        p = src[0] * src[1];
        break;
      case 2:
        p = src[0].idiv(src[1]);
        break;
      case 3:
        p = src[0].lt(src[1]);
        break;
      case 4:
        p = src[0].maximum(src[1]);
        break;
      default:
        p = src[0].where(src[1], src[2]);
        break;
    }
    return pick(4) == 0 ? p.named("n") : p;
  };
  auto source_pattern = [&] {
    if (pick(2) == 0) return leaf();
    std::vector<UPat> src(pick(5) == 0 ? 3 : 2);
    for (UPat& s : src) s = leaf();
    return node(src);
  };

  const UOpPtr vars[] = {a, b, UOp::Const(dtypes::kInt32, 0), UOp::Const(dtypes::kInt32, 1), two};
  std::function<UOpPtr(int)> int_node = [&](int depth) -> UOpPtr {
    if (depth == 0 || pick(4) == 0) return vars[pick(5)];
    UOpPtr l = int_node(depth - 1), r = pick(3) == 0 ? l : int_node(depth - 1);
    switch (pick(5)) {
      case 0:
        return l + r;
      case 1:
        return l * r;
      case 2:
        return l.idiv(r);
      case 3:
        return l.maximum(r);
      default:
        return l.lt(r).where(l, r);
    }
  };

  // A node shaped like `p` (same ops down to its leaves), with random leaves, or a random node.
  std::function<UOpPtr(const UPat&)> like = [&](const UPat& p) -> UOpPtr {
    if (p.src_kind() == UPat::SrcKind::kNone || pick(8) == 0) {
      const int leaf_kind = pick(4);
      if (leaf_kind == 0) return a + b;
      if (leaf_kind == 1) return a.lt(b);
      return leaf_kind == 2 ? vars[pick(5)] : int_node(1);
    }
    std::vector<UOpPtr> src;
    for (const UPat& s : p.srcs()) src.push_back(pick(6) == 0 && !src.empty() ? src.back() : like(s));
    if (pick(2) == 0 && src.size() == 2) std::swap(src[0], src[1]);
    Ops op = Ops::NOOP;
    p.ops()->ForEach([&](Ops o) { op = o; });
    if (op == Ops::WHERE) return UOp::New(op, src[1]->dtype(), src);
    return UOp::New(op, op == Ops::CMPLT ? dtypes::kBool : src[0]->dtype(), src);
  };

  using Captures = std::vector<std::vector<const UOp*>>;
  int shallow_rules = 0, matches = 0;
  for (int round = 0; round < 400; ++round) {
    std::vector<UPat> src(pick(5) == 0 ? 3 : 2);
    for (UPat& s : src) s = source_pattern();
    const UPat pattern = node(src);
    Captures seen;
    Rule rule(RuleSpec{pattern, [&seen](const Match& m) -> UOpPtr {
                         std::vector<const UOp*> captured;
                         for (const std::string& name : m.names()) captured.push_back(m[name].get());
                         seen.push_back(captured);
                         return nullptr;
                       }});
    ASSERT_TRUE(internal::HasShapeSpecificSearch(rule)) << pattern.ToString();
    ++shallow_rules;
    for (int k = 0; k < 40; ++k) {
      const UOpPtr n = k % 2 == 0 ? like(pattern) : int_node(3);
      seen.clear();
      EXPECT_EQ(rule.Apply(n), nullptr);
      const Captures shallow = seen;
      seen.clear();
      EXPECT_EQ(internal::ApplyWithGeneralSearch(rule, n), nullptr);
      ASSERT_EQ(shallow, seen) << pattern.ToString() << " on " << PrintUOpTree(n.get());
      matches += static_cast<int>(seen.size());
    }
  }
  EXPECT_EQ(shallow_rules, 400);
  EXPECT_GT(matches, 500);  // the comparison is not vacuous
}

// Deeper patterns, UPat::Any, repeated sources and allow_any_len keep the general search.
TEST_F(PatternMatcherTest, OnlyShallowPatternsLeaveTheGeneralSearch) {
  auto has_own_search = [](const UPat& p) {
    return internal::HasShapeSpecificSearch(
        Rule(RuleSpec{p, [](const Match&) -> UOpPtr { return nullptr; }}));
  };
  EXPECT_TRUE(has_own_search(x));
  EXPECT_TRUE(has_own_search(x + 0));
  EXPECT_TRUE(has_own_search(x * UPat::Cvar("c0") + x * UPat::Cvar("c1")));
  EXPECT_FALSE(has_own_search((y + x * UPat::Cvar("c0")) + x * UPat::Cvar("c1")));
  EXPECT_FALSE(has_own_search(UPat::Any(x + 0, x * 1)));
  EXPECT_FALSE(has_own_search(x + UPat::Any(UPat::Const({}, 0), UPat::Const({}, 1))));
  EXPECT_FALSE(has_own_search(UPat(Ops::SINK).src_repeat(x)));
  EXPECT_FALSE(has_own_search(UPat(Ops::ADD).src(x).allow_any_len()));
}

}  // namespace
}  // namespace uopc
