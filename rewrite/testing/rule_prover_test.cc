// Wrong rules the fuzzer (default options) and the prover must both refute, each needing a particular kind of
// value to show up, and right rules both must pass (the prover with every instantiation proven).
#include "rewrite/testing/rule_prover.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <string>

#include "absl/numeric/bits.h"
#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "rewrite/infix.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/symbolic.h"
#include "rewrite/testing/rule_fuzzer.h"
#include "rewrite/upat.h"
#include "uop/uop.h"

namespace uopc {
namespace {

const UPat x = UPat::Var("x"), y = UPat::Var("y"), c = UPat::Cvar("c"), c2 = UPat::Cvar("c2");

int64_t I(const UOpPtr& u) { return u->const_value().AsInt64(); }

void ExpectRefuted(const char* name, const PatternMatcher& pm) {
  RuleFuzzer fuzzer(pm);
  absl::Status s = fuzzer.Run(5000);
  std::printf("fuzzer on %s: %lld checked: %s\n", name, static_cast<long long>(fuzzer.checked()),
              std::string(s.message()).c_str());
  EXPECT_EQ(s.code(), absl::StatusCode::kInternal) << name << ": " << s;

  RuleProver prover(pm, {.instantiations_per_rule = 30});
  absl::Status p = prover.Run();
  std::printf("prover on %s:\n%s%s\n", name, prover.Report().c_str(), std::string(p.message()).c_str());
  EXPECT_EQ(p.code(), absl::StatusCode::kInternal) << name;
  ASSERT_EQ(prover.results().size(), 1u);
  EXPECT_GT(prover.results()[0].found, 0) << name;
  ASSERT_FALSE(prover.findings().empty());
  // The report has the fuzzer's form: infix expression, ranges, assignment, both values.
  const RuleFailure& f = prover.findings()[0];
  EXPECT_NE(f.ToString().find("expr:"), std::string::npos);
  ASSERT_TRUE(f.before && f.after) << f.ToString();
  EXPECT_NE(*f.before, *f.after) << f.ToString();
  EXPECT_TRUE(f.detail.empty()) << f.ToString();
}

void ExpectRight(const char* name, const PatternMatcher& pm) {
  RuleFuzzer fuzzer(pm);
  absl::Status s = fuzzer.Run(3000);
  EXPECT_TRUE(s.ok()) << name << ": " << s;
  EXPECT_EQ(fuzzer.rules_fired(), static_cast<int>(pm.size())) << fuzzer.CoverageReport();

  RuleProver prover(pm, {.instantiations_per_rule = 30});
  absl::Status p = prover.Run();
  std::printf("prover on %s:\n%s\n", name, prover.Report().c_str());
  EXPECT_TRUE(p.ok()) << name << ": " << p;
  for (const RuleProof& r : prover.results()) {
    EXPECT_GT(r.proven, 0) << name << " " << r.location;
    EXPECT_EQ(r.found, 0) << name << " " << r.location;
    EXPECT_EQ(r.unsupported, 0) << name << " " << r.location;
  }
}

// ---- the table of issue 21 ----

TEST(RuleProverIssueTableTest, WrongRulesAreRefuted) {
  ExpectRefuted("(x // 2) * 2 -> x",
                PatternMatcher({{x.idiv(2) * 2, [](const Match& m) { return m["x"]; }}}));
  ExpectRefuted("(x * 3) % 6 -> (x % 3) * 3",
                PatternMatcher({{(x * 3) % 6, [](const Match& m) { return (m["x"] % 3) * 3; }}}));
  ExpectRefuted("(x < c) | (x < c2) -> x < min(c, c2)",
                PatternMatcher({{x.lt(c) | x.lt(c2), [](const Match& m) {
                                   return m["x"].lt(m["x"].const_like(std::min(I(m["c"]), I(m["c2"]))));
                                 }}}));
  ExpectRefuted("(x // c) * c -> x",
                PatternMatcher({{x.idiv(c) * c, [](const Match& m) { return m["x"]; }}}));
}

TEST(RuleProverIssueTableTest, RightRuleIsProven) {
  ExpectRight("(x % c) + (x // c) * c -> x",
              PatternMatcher({{x % c + x.idiv(c) * c, [](const Match& m) { return m["x"]; }}}));
}

// ---- wrong rules that need one kind of value ----

// Right for x >= 0 only: a shift floors, C's division truncates. Needs a negative x.
TEST(RuleProverTest, DivByPowerOfTwoAsShiftNeedsANegativeOperand) {
  ExpectRefuted("x // 2^k -> x >> k", PatternMatcher({{x.idiv(c), [](const Match& m) -> UOpPtr {
                                                         int64_t k = I(m["c"]);
                                                         if (k <= 1 || (k & (k - 1)) != 0) return nullptr;
                                                         return m["x"] >> m["x"].const_like(absl::countr_zero(
                                                                              static_cast<uint64_t>(k)));
                                                       }}}));
}

// Right for c != 0; 0 // 0 is 0 in uopc (and tinygrad's C). Needs the constant 0.
TEST(RuleProverTest, MulDivCancelNeedsAZeroConstant) {
  ExpectRefuted("(x * c) // c -> x",
                PatternMatcher({{(x * c).idiv(c), [](const Match& m) { return m["x"]; }}}));
}

// Right for c != 1: x % 1 is 0, not x. Needs the constant 1.
TEST(RuleProverTest, ModOfSmallerNeedsAOneConstant) {
  ExpectRefuted("x % c -> x when vmax(x) <= c",
                PatternMatcher({{x % c, [](const Match& m) -> UOpPtr {
                                   if (m["x"]->vmin() < ConstValue::Int(0) || I(m["c"]) <= 0) return nullptr;
                                   return m["x"]->vmax() <= m["c"]->vmax() ? m["x"] : nullptr;
                                 }}}));
}

// Off by one: x < c is false when vmin(x) >= c, not when vmin(x) + 1 >= c. Needs x at its range's lower end.
TEST(RuleProverTest, LtFoldOffByOneNeedsTheRangeBoundary) {
  ExpectRefuted("x < c -> false when vmin(x) + 1 >= c",
                PatternMatcher({{x.lt(c), [](const Match& m) -> UOpPtr {
                                   if (m["x"]->op() != Ops::DEFINE_VAR) return nullptr;
                                   if (m["x"]->vmin().AsInt64() + 1 < I(m["c"])) return nullptr;
                                   return UOp::Const(dtypes::kBool, false);
                                 }}}));
}

// x // x is 1 only for x != 0. Needs a repeated capture (and a range with 0).
TEST(RuleProverTest, SelfDivisionNeedsARepeatedCapture) {
  ExpectRefuted("x // x -> 1",
                PatternMatcher({{x.idiv(x), [](const Match& m) { return m["x"].const_like(1); }}}));
}

// ---- right rules ----

TEST(RuleProverTest, RightRulesPass) {
  ExpectRight("x * 2 -> x + x", PatternMatcher({{x * 2, [](const Match& m) { return m["x"] + m["x"]; }}}));
  ExpectRight("(x + c) + c2 -> x + (c + c2)",
              PatternMatcher({{(x + c) + c2, [](const Match& m) {
                                 return m["x"] + m["x"].const_like(I(m["c"]) + I(m["c2"]));
                               }}}));
  ExpectRight("x // x -> 1 when x != 0",
              PatternMatcher({{x.idiv(x), [](const Match& m) -> UOpPtr {
                                 const UOpPtr& v = m["x"];
                                 if (v->vmin() <= ConstValue::Int(0) && v->vmax() >= ConstValue::Int(0))
                                   return nullptr;
                                 return v.const_like(1);
                               }}}));
  ExpectRight("x ^ x -> 0", PatternMatcher({{x ^ x, [](const Match& m) { return m["x"].const_like(0); }}}));
  ExpectRight(
      "where(c, y, y) -> y",
      PatternMatcher({{UPat::Var("b", dtypes::kBool).where(y, y), [](const Match& m) { return m["y"]; }}}));
}

// The prover on a slice of the symbolic rules: nothing refuted, most rewrites proven.
TEST(RuleProverTest, SymbolicSimpleIsProven) {
  RuleProver prover(SymbolicSimple(), {.instantiations_per_rule = 8});
  absl::Status p = prover.Run();
  std::printf("%s\n", prover.Report().c_str());
  EXPECT_TRUE(p.ok()) << p;
  int64_t proven = 0;
  for (const RuleProof& r : prover.results()) proven += r.proven;
  EXPECT_GT(proven, 50);
}

// The rewritten graph's range leaves int32 (x * -1 of INT_MIN): its bounds bound nothing, and the rewrite is
// proven (a translation that wrapped the bounds around claimed a counterexample exec_alu disagreed with).
TEST(RuleProverTest, BoundsBeyondInt32BoundNothing) {
  absl::StatusOr<UOpPtr> e = ParseInfix("((a // 0) // where(true, c, c))", {{"a", -4, 8}, {"c", -8, -1}});
  ASSERT_TRUE(e.ok()) << e.status();
  RuleProver prover(Symbolic());
  std::optional<RuleFailure> f;
  RuleProver::Verdict v = prover.ProveOne(*e, &f);
  EXPECT_EQ(v, RuleProver::Verdict::kProven) << RuleProverVerdictName(v) << "\n" << (f ? f->ToString() : "");
}

}  // namespace
}  // namespace uopc
