// custom_rules: uopc's rewrite engine on its own (only //rewrite), with rules of your own.
//
// Two rules a backend might want: `x * 2^k -> x << k` for ints, and `(x + c1) + c2 -> x + (c1 + c2)`. They
// run with tinygrad's symbolic rules on an expression, then the RuleFuzzer checks each of them on expressions
// it builds from the rules' own patterns, and reports a counterexample for a rule that is wrong.
//
//   ./bazelw run //examples:custom_rules
#include <cstdlib>
#include <iostream>

#include "rewrite/graph_rewrite.h"
#include "rewrite/infix.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/symbolic.h"
#include "rewrite/testing/rule_fuzzer.h"

namespace {

using uopc::Match;
using uopc::PatternMatcher;
using uopc::UOp;
using uopc::UOpPtr;
using uopc::UPat;
namespace dtypes = uopc::dtypes;

// A rule is a pattern and a callback; the callback returns the replacement, or null to decline.
const UPat x = UPat::Var("x", dtypes::kInts);
const UPat c = UPat::Cvar("c", {}, /*vec=*/false), c1 = UPat::Cvar("c1", {}, false),
           c2 = UPat::Cvar("c2", {}, false);

PatternMatcher StrengthReduction() {
  return PatternMatcher({
      // x * 2^k -> x << k
      {x * c,
       [](const Match& m) -> UOpPtr {
         int64_t v = m["c"]->const_value().AsInt64();
         if (v <= 0 || (v & (v - 1)) != 0) return nullptr;
         return m["x"] << static_cast<int64_t>(__builtin_ctzll(v));
       }},
      // (x + c1) + c2 -> x + (c1 + c2), the constants folded here: leaving `c1 + c2` as a node for other
      // rules
      // would loop when x is itself a constant (the fuzzer finds that: try it)
      {(x + c1) + c2,
       [](const Match& m) {
         return m["x"] +
                m["x"].const_like(m["c1"]->const_value().AsInt64() + m["c2"]->const_value().AsInt64());
       }},
  });
}

// A wrong rule, to show what the fuzzer reports: (x // 2) * 2 is not x for odd x.
PatternMatcher WrongRule() {
  return PatternMatcher({{x.idiv(2) * 2, [](const Match& m) { return m["x"]; }}});
}

}  // namespace

int main() {
  UOpPtr a = UOp::Variable("a", 0, 100);
  UOpPtr expr = ((a + 3) + 4) * 8;
  PatternMatcher rules = StrengthReduction() + uopc::Symbolic();
  UOpPtr out = uopc::GraphRewrite(expr, rules, {.name = "strength reduction"});
  std::cout << "before: " << uopc::RenderInfix(expr.get()) << "\n"
            << "after:  " << uopc::RenderInfix(out.get()) << "\n\n";

  // The fuzzer evaluates each expression before and after the rewrite on random assignments of its variables.
  // The fuzzer keeps a reference to the rules: they must outlive it.
  PatternMatcher strength_reduction = StrengthReduction();
  uopc::RuleFuzzer good(strength_reduction);
  absl::Status s = good.Run(2000);
  std::cout << "strength reduction: " << (s.ok() ? "no counterexample" : s.ToString()) << "\n"
            << good.CoverageReport() << "\n";

  PatternMatcher wrong_rule = WrongRule();
  uopc::RuleFuzzer bad(wrong_rule);
  absl::Status wrong = bad.Run(2000);
  std::cout << "(x // 2) * 2 -> x: " << (wrong.ok() ? "no counterexample" : "found a counterexample") << "\n"
            << wrong.message() << "\n";
  return s.ok() && !wrong.ok() ? EXIT_SUCCESS : EXIT_FAILURE;
}
