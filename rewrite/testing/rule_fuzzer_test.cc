#include "rewrite/testing/rule_fuzzer.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "rewrite/infix.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/symbolic.h"
#include "rewrite/upat.h"
#include "uop/uop.h"

namespace uopc {
namespace {

int NodeCount(const UOpPtr& u) { return static_cast<int>(u->Toposort().size()); }

// Runs `pm` on `n` random expressions; returns the Status and reports the time taken.
// `min_fired`: a floor on the rules that fired (the generator's reach; rules for vectors, loads and floats
// are out of it).
absl::Status RunTimed(const char* name, const PatternMatcher& pm, int n, RuleFuzzerOptions options = {},
                      int min_fired = 0) {
  // These rule sets have rules for vectors, loads, floats, ...: the generator cannot reach them.
  options.allow_unfired_rules = true;
  RuleFuzzer fuzzer(pm, options);
  auto start = std::chrono::steady_clock::now();
  absl::Status s = fuzzer.Run(n);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %lld checked, %lld rewritten, %lld skipped, %.2f s\n%s", name,
              static_cast<long long>(fuzzer.checked()), static_cast<long long>(fuzzer.changed()),
              static_cast<long long>(fuzzer.skipped()), secs, fuzzer.CoverageReport().c_str());
  if (s.ok()) {
    EXPECT_GE(fuzzer.checked(), n * 9 / 10) << name;
    EXPECT_GE(fuzzer.changed(), n / 10) << name << ": the rules rewrote almost nothing";
  }
  EXPECT_GE(fuzzer.rules_fired(), min_fired) << name << "\n" << fuzzer.CoverageReport();
  return s;
}

// 10,000 random expressions per rule set: values, bounds, idempotence and termination.
TEST(RuleFuzzerTest, SymbolicSimpleOn10000Expressions) {
  absl::Status s = RunTimed("SymbolicSimple", SymbolicSimple(), 10000, {}, 23);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(RuleFuzzerTest, SymbolicOn10000Expressions) {
  absl::Status s = RunTimed("Symbolic", Symbolic(), 10000, {.seed = 2}, 60);
  EXPECT_TRUE(s.ok()) << s.message();
}

TEST(RuleFuzzerTest, SymOn10000Expressions) {
  absl::Status s = RunTimed("Sym", Sym(), 10000, {.seed = 3}, 65);
  EXPECT_TRUE(s.ok()) << s.message();
}

// The fuzzer on a wrong rule must report a failure of `kind` whose shrunk expression has at most `max_nodes`.
RuleFailure ExpectCaught(const PatternMatcher& pm, RuleFailure::Kind kind, int max_nodes,
                         RuleFuzzerOptions options = {}) {
  RuleFuzzer fuzzer(pm, options);
  for (int i = 0; i < 5000; ++i) {
    std::optional<RuleFailure> f = fuzzer.CheckOne(fuzzer.GenerateMixed());  // what Run() checks
    if (!f) continue;
    EXPECT_EQ(f->kind, kind) << f->ToString();
    EXPECT_LE(NodeCount(f->expr), max_nodes) << f->ToString();
    EXPECT_GE(f->original_size, NodeCount(f->expr));
    std::printf("%s", f->ToString().c_str());
    return *f;
  }
  ADD_FAILURE() << "no failure found in 5000 expressions";
  return {};
}

TEST(RuleFuzzerTest, CatchesModDropped) {
  UPat x = UPat::Var("x"), c = UPat::Cvar("c");
  PatternMatcher wrong({{x % c, [](const Match& m) { return m["x"]; }}});
  RuleFailure f = ExpectCaught(wrong, RuleFailure::Kind::kValueMismatch, 3);
  ASSERT_TRUE(f.expr);
  EXPECT_EQ(f.expr->op(), Ops::MOD);
  ASSERT_TRUE(f.before && f.after);
  EXPECT_NE(*f.before, *f.after);
  // The report is infix text that parses back to the shrunk expression with the reported ranges.
  absl::StatusOr<UOpPtr> parsed = ParseInfix(RenderInfix(f.expr.get()), f.vars);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(*parsed, f.expr);
  EXPECT_NE(f.ToString().find(RenderInfix(f.expr.get())), std::string::npos);
  EXPECT_NE(f.ToString().find("ranges:"), std::string::npos);
  // The reported values are those of the reported expressions at the reported assignment.
  absl::StatusOr<ConstValue> before = SymInfer(f.expr.get(), f.assignment);
  absl::StatusOr<ConstValue> after = SymInfer(f.rewritten.get(), f.assignment);
  ASSERT_TRUE(before.ok() && after.ok());
  EXPECT_EQ(*before, *f.before);
  EXPECT_EQ(*after, *f.after);
}

TEST(RuleFuzzerTest, CatchesDivTimesDropped) {
  UPat x = UPat::Var("x"), c = UPat::Cvar("c");
  PatternMatcher wrong({{x.idiv(c) * c, [](const Match& m) { return m["x"]; }}});
  RuleFailure f = ExpectCaught(wrong, RuleFailure::Kind::kValueMismatch, 4);
  ASSERT_TRUE(f.expr);
  EXPECT_EQ(f.expr->op(), Ops::MUL);
}

TEST(RuleFuzzerTest, CatchesMaxDropped) {
  // max(x, c) -> x is right only when x >= c.
  UPat x = UPat::Var("x"), c = UPat::Cvar("c");
  PatternMatcher wrong({{x.maximum(c), [](const Match& m) { return m["x"]; }}});
  ExpectCaught(wrong, RuleFailure::Kind::kValueMismatch, 3);
}

TEST(RuleFuzzerTest, CatchesNonIdempotentPair) {
  // With pure rules every result of the engine is a fixpoint; rules that consult state outside the graph
  // (here a counter standing in for a cache) are not. `x ^ 0 -> x + 0` fires on every other call only, and `y
  // + 0 -> y` finishes the job: a rewrite that skips an `x ^ 0` leaves it for the next one. Values never
  // change.
  static int calls = 0;
  calls = 0;
  UPat x = UPat::Var("x"), y = UPat::Var("y");
  PatternMatcher wrong(
      {{x ^ 0, [](const Match& m) -> UOpPtr { return calls++ % 2 == 1 ? m["x"] + 0 : nullptr; }},
       {y + 0, [](const Match& m) { return m["y"]; }}});
  RuleFuzzerOptions options;
  options.max_const = 2;  // many `^ 0`
  RuleFailure f = ExpectCaught(wrong, RuleFailure::Kind::kNotIdempotent, 8, options);
  EXPECT_NE(f.detail.find("again"), std::string::npos);
}

TEST(RuleFuzzerTest, CatchesCyclingPair) {
  UPat x = UPat::Var("x");
  // x * 2 -> x + x -> x * 2 -> ...
  PatternMatcher cycling({{x * 2, [](const Match& m) { return m["x"] + m["x"]; }},
                          {x + x, [](const Match& m) { return m["x"] * 2; }}});
  RuleFailure f = ExpectCaught(cycling, RuleFailure::Kind::kRewriteError, 3, {.max_steps = 1000});
  EXPECT_TRUE(f.expr->op() == Ops::ADD || f.expr->op() == Ops::MUL) << f.ToString();
  EXPECT_FALSE(f.detail.empty());
}

TEST(RuleFuzzerTest, CatchesGrowingRule) {
  // x * c -> (x * c) + 0 and x + 0 -> x would cycle; x -> x + 0 alone grows without bound: the step limit
  // ends it.
  UPat x = UPat::Var("x"), c = UPat::Cvar("c");
  PatternMatcher growing({{x * c, [](const Match& m) { return (m["x"] + 1) * m["c"] - m["c"]; }}});
  ExpectCaught(growing, RuleFailure::Kind::kRewriteError, 3, {.max_steps = 2000});
}

TEST(RuleFuzzerTest, CorrectRulesPass) {
  UPat x = UPat::Var("x");
  PatternMatcher right({{x + 0, [](const Match& m) { return m["x"]; }},
                        {x * 1, [](const Match& m) { return m["x"]; }},
                        {x.maximum(x), [](const Match& m) { return m["x"]; }}});
  RuleFuzzer fuzzer(right);
  absl::Status s = fuzzer.Run(2000);
  EXPECT_TRUE(s.ok()) << s.message();
  EXPECT_GT(fuzzer.changed(), 0);
}

TEST(RuleFuzzerTest, CheckOneFindsTheGivenCounterexample) {
  UPat x = UPat::Var("x"), c = UPat::Cvar("c");
  PatternMatcher wrong({{x.idiv(c) * c, [](const Match& m) { return m["x"]; }}});
  std::vector<InfixVar> vars = {{"a", 0, 9}, {"b", 0, 3}};
  absl::StatusOr<UOpPtr> e = ParseInfix("(((a // 4) * 4) + b)", vars);
  ASSERT_TRUE(e.ok()) << e.status();
  RuleFuzzer fuzzer(wrong);
  std::optional<RuleFailure> f = fuzzer.CheckOne(*e);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->kind, RuleFailure::Kind::kValueMismatch);
  EXPECT_EQ(f->original_size, NodeCount(*e));
  EXPECT_LT(NodeCount(f->expr), NodeCount(*e));  // b and the ADD shrink away
  ASSERT_TRUE(f->before && f->after);
  EXPECT_NE(*f->before, *f->after);
  // The rule is right when a is a multiple of 4: the shrunk counterexample has a constant or assignment that
  // is not.
  EXPECT_EQ(f->expr->op(), Ops::MUL) << f->ToString();
  if (f->assignment.contains("a")) {
    EXPECT_NE(f->assignment.at("a") % 4, 0);
  }
  EXPECT_LE(NodeCount(f->expr), 5) << f->ToString();
  // The same expression passes a correct matcher.
  RuleFuzzer ok(SymbolicSimple());
  EXPECT_FALSE(ok.CheckOne(*e));
}

TEST(RuleFuzzerTest, FromBytesIsDeterministic) {
  RuleFuzzer fuzzer(SymbolicSimple());
  const uint8_t bytes[] = {7, 1, 200, 3, 99, 42, 5, 17, 250, 0, 12, 31, 64, 128, 9, 77};
  UOpPtr a = fuzzer.GenerateFromBytes(bytes, sizeof(bytes));
  UOpPtr b = fuzzer.GenerateFromBytes(bytes, sizeof(bytes));
  EXPECT_EQ(a, b);
  EXPECT_TRUE(fuzzer.GenerateFromBytes(nullptr, 0));
  EXPECT_FALSE(fuzzer.FuzzOneInput(bytes, sizeof(bytes)));
}

TEST(RuleFuzzerTest, NoNegativeShiftCounts) {
  RuleFuzzerOptions options;
  options.ops.Insert(Ops::SHL);
  options.ops.Insert(Ops::SHR);
  RuleFuzzer fuzzer(SymbolicSimple(), options);
  int shifts = 0;
  for (int i = 0; i < 2000; ++i) {
    UOpPtr e = fuzzer.Generate();
    for (const UOp* u : e->Toposort()) {
      if (u->op() != Ops::SHL && u->op() != Ops::SHR) continue;
      ++shifts;
      EXPECT_GE(u->src(1)->vmin(), ConstValue::Int(0));
    }
  }
  EXPECT_GT(shifts, 0);
}

// ---- rules from the rules' own patterns (issue 21) ----

// One rule, default options, Run(20000): the failure found, or OK. Prints the outcome and the coverage.
absl::Status RunOneRule(const char* name, const PatternMatcher& pm, RuleFuzzer* fuzzer, int n = 20000) {
  auto start = std::chrono::steady_clock::now();
  absl::Status s = fuzzer->Run(n);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("%s: %lld checked, %.2f s, %s\n%s", name, static_cast<long long>(fuzzer->checked()), secs,
              s.ok() ? "OK" : std::string(s.message()).c_str(), fuzzer->CoverageReport().c_str());
  return s;
}

const UPat kX = UPat::Var("x"), kC = UPat::Cvar("c"), kC2 = UPat::Cvar("c2");

void ExpectFound(const char* name, const PatternMatcher& pm) {
  RuleFuzzer fuzzer(pm);
  absl::Status s = RunOneRule(name, pm, &fuzzer);
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << name << ": " << s;
  EXPECT_NE(s.message().find("value mismatch"), std::string::npos) << name << ": " << s;
}

// The table of issue 21: rules a user wrote, checked from the default options.
TEST(RuleFuzzerIssueTableTest, DivTimesTwoDroppedIsFound) {
  ExpectFound("(x // 2) * 2 -> x", PatternMatcher({{kX.idiv(2) * 2, [](const Match& m) { return m["x"]; }}}));
}

TEST(RuleFuzzerIssueTableTest, MulModDistributedWronglyIsFound) {
  ExpectFound("(x * 3) % 6 -> (x % 3) * 3",
              PatternMatcher({{(kX * 3) % 6, [](const Match& m) { return (m["x"] % 3) * 3; }}}));
}

TEST(RuleFuzzerIssueTableTest, OrOfLessThansIsFound) {
  ExpectFound("(x < c) | (x < c2) -> x < min(c, c2)",
              PatternMatcher({{kX.lt(kC) | kX.lt(kC2), [](const Match& m) {
                                 int64_t a = m["c"]->const_value().AsInt64(),
                                         b = m["c2"]->const_value().AsInt64();
                                 return m["x"].lt(m["x"].const_like(std::min(a, b)));
                               }}}));
}

TEST(RuleFuzzerIssueTableTest, DivTimesConstDroppedIsFound) {
  ExpectFound("(x // c) * c -> x",
              PatternMatcher({{kX.idiv(kC) * kC, [](const Match& m) { return m["x"]; }}}));
}

TEST(RuleFuzzerIssueTableTest, RightRulePassesAndFires) {
  PatternMatcher right({{kX % kC + kX.idiv(kC) * kC, [](const Match& m) { return m["x"]; }}});
  RuleFuzzer fuzzer(right);
  absl::Status s = RunOneRule("(x % c) + (x // c) * c -> x", right, &fuzzer, 5000);
  EXPECT_TRUE(s.ok()) << s;
  ASSERT_EQ(fuzzer.coverage().size(), 1u);
  EXPECT_GT(fuzzer.coverage()[0].replaced, 100);
  EXPECT_GT(fuzzer.coverage()[0].matched, 100);
  EXPECT_EQ(fuzzer.rules_fired(), 1);
}

// A rule the generator cannot exercise (a float op) fails Run, by its location; the option makes it a
// warning.
TEST(RuleFuzzerCoverageTest, RulesThatNeverFiredFailRun) {
  PatternMatcher pm({{kX + 0, [](const Match& m) { return m["x"]; }},
                     {kX.sqrt().sqrt(), [](const Match& m) { return m["x"]; }}});
  const std::string unreachable = pm.rule(1).location();
  RuleFuzzer fuzzer(pm);
  absl::Status s = fuzzer.Run(500);
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_NE(s.message().find("1 of 2 rules never fired"), std::string::npos) << s;
  EXPECT_NE(s.message().find(unreachable), std::string::npos) << s;
  EXPECT_EQ(s.message().find(pm.rule(0).location()), std::string::npos) << s;
  EXPECT_GT(fuzzer.coverage()[0].replaced, 0);
  EXPECT_EQ(fuzzer.coverage()[1].matched, 0);
  EXPECT_NE(fuzzer.CoverageReport().find("1 of 2 rules fired"), std::string::npos);

  RuleFuzzer lenient(pm, {.allow_unfired_rules = true});
  EXPECT_TRUE(lenient.Run(500).ok());
}

// Declines are counted apart from replacements.
TEST(RuleFuzzerCoverageTest, CountsDeclines) {
  PatternMatcher pm({{kX * kC, [](const Match& m) -> UOpPtr {
                        return m["c"]->const_value().AsInt64() == 1 ? m["x"] : nullptr;
                      }}});
  RuleFuzzer fuzzer(pm);
  EXPECT_TRUE(fuzzer.Run(2000).ok());
  const RuleCoverage& c = fuzzer.coverage()[0];
  EXPECT_GT(c.generated, 0);
  EXPECT_GT(c.replaced, 0);
  EXPECT_GT(c.declined, c.replaced);
  EXPECT_GE(c.replaced + c.declined, c.matched);
}

}  // namespace
}  // namespace uopc
