// RuleFuzzer: differential testing of any PatternMatcher on integer/bool expressions made from its own rules.
//
// It generates typed expression graphs over int32 variables with small ranges, rewrites each with
// TryGraphRewrite, and checks that the rules are sound and well behaved:
//   (a) the rewritten graph has the same dtype and value as the original at every assignment of the variables
//       (every assignment when there are at most `max_exhaustive` of them, else `num_samples` sampled ones,
//       all-min and all-max among them); values come from exec_alu (C semantics), as SymInfer computes them;
//   (b) every value lies within [vmin, vmax] of the rewritten graph (and of the original);
//   (c) rewriting the result again gives the identical node (idempotence);
//   (d) the rewrite terminates: TryGraphRewrite returns OK within `max_steps` rule applications.
// A failure is shrunk (subtrees replaced by their sources or by small constants while the failure persists)
// and reported as infix text (rewrite/infix.h) with the variable ranges, the failing assignment and both
// values.
//
// Generation is directed by the rules, as Halide's and slinky's rule testers do it: most expressions are
// instantiations of one rule's pattern (an op from its op set, a dtype from its dtype set, one alternative of
// each UPat::Any, the operands of commutative ops in a random order), with each capture bound to a variable,
// a constant or a small random subexpression (a name used twice binds the same node). Constants lean towards
// the values where rules break: 0, +-1, +-2, the pattern's and the instantiation's other constants and their
// sums and products, powers of two and their neighbours, the ends of the variables' ranges, negatives.
// Variable ranges straddle 0 or sit at small boundaries. The rest are random expressions, and some of either
// kind are placed in a random context (`e + 1`, `e < k`, `where(v < k, e, k)`, ...) so that rules that only
// fire inside a larger graph are reached. Run() spreads its budget over the rules in turn.
//
// Coverage: for every rule (named by its `file.cc:line`), how many expressions were made from its pattern,
// in how many rewrites its pattern matched, and how many times its callback returned a replacement or
// declined. Run() fails, naming them, when some rule never fired: a rule the fuzzer could not exercise is
// untested, not passed (`allow_unfired_rules` makes that a warning on stderr).
//
//   RuleFuzzer fuzzer(Symbolic(), {.seed = 7});
//   absl::Status s = fuzzer.Run(10000);                 // the first failure, shrunk, as a kInternal Status
//   std::printf("%s", fuzzer.CoverageReport().c_str()); // one line per rule
//   std::optional<RuleFailure> f = fuzzer.CheckOne(ParseInfix("((a * 4) // 4)", vars).value());
//
// Integer overflow: uopc defines it (int32 wraps), but tinygrad's rules and range analysis assume it does not
// happen, so by default expressions with a node whose range leaves its dtype are not generated or checked
// (`allow_overflow`). Division and modulo by ranges that include 0 are generated (x//0 = 0 and x%0 = x).
// Shift counts are constants in [0, 31], never negative.
#ifndef UOPC_REWRITE_TESTING_RULE_FUZZER_H_
#define UOPC_REWRITE_TESTING_RULE_FUZZER_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/infix.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

struct RuleFuzzerOptions {
  // Ops random expressions (and the subexpressions captures bind to) are built from. Supported: ADD MUL IDIV
  // MOD MAX AND OR XOR SHL SHR CMPLT CMPNE WHERE. A rule's instantiation takes its ops from the pattern:
  // these, and CAST between int32 and bool; rules on other ops or dtypes cannot be instantiated.
  OpSet ops = {Ops::ADD, Ops::MUL, Ops::IDIV, Ops::MOD, Ops::CMPLT, Ops::CMPNE,
               Ops::AND, Ops::OR,  Ops::XOR,  Ops::MAX, Ops::WHERE};
  // Root dtypes generated (int32 and/or bool; inner nodes use both as the ops require).
  bool int_roots = true;
  bool bool_roots = true;
  // Variables a, b, c, ...: each gets a random range [lo, hi] with var_min <= lo <= hi <= var_max.
  int num_vars = 3;
  int64_t var_min = -8;
  int64_t var_max = 24;
  // Integer constants are drawn from [-max_const, max_const] (mostly small).
  int64_t max_const = 16;
  int max_depth = 4;
  uint64_t seed = 1;
  // Rule applications allowed per TryGraphRewrite call.
  int64_t max_steps = 20000;
  // Assignments: all of them when there are at most this many, else `num_samples` (incl. all-min, all-max).
  int64_t max_exhaustive = 4096;
  int num_samples = 256;
  bool allow_overflow = false;
  // Candidate expressions tried while shrinking one failure.
  int shrink_budget = 3000;
  // Percent of the expressions Run() and FuzzOneInput make from a rule's pattern (the rest are random).
  int pattern_percent = 75;
  // Percent of the expressions placed inside a random context.
  int context_percent = 30;
  // Run() fails when a rule never fired; with this set it prints a warning to stderr instead (for rule sets
  // with rules the generator cannot reach: vectors, loads, floats, ...).
  bool allow_unfired_rules = false;
};

// What the fuzzer did with one rule.
struct RuleCoverage {
  std::string location;   // "symbolic.cc:123"
  std::string pattern;    // UPat::ToString()
  int64_t generated = 0;  // expressions instantiated from this rule's pattern
  int64_t matched = 0;    // rewrites in which the pattern matched (the callback ran at least once)
  int64_t replaced = 0;   // callback results that replaced a node
  int64_t declined = 0;   // callback results that declined (null, or the node itself)
};

struct RuleFailure {
  enum class Kind {
    kRewriteError,         // TryGraphRewrite failed: a cycle or the step limit (termination)
    kNotIdempotent,        // rewriting the result again changed it
    kDTypeChanged,         // the rewrite changed the root's dtype
    kValueMismatch,        // different values before and after
    kOutOfBounds,          // a value of the rewritten graph outside its [vmin, vmax]
    kOriginalOutOfBounds,  // a value of the original outside its [vmin, vmax] (a range-analysis bug)
    kEvalError,            // the rewritten graph cannot be evaluated (an op exec_alu rejects)
  };
  Kind kind;
  UOpPtr expr;                                           // the (shrunk) expression
  UOpPtr rewritten;                                      // its rewrite (null for kRewriteError)
  std::vector<InfixVar> vars;                            // variables of `expr` with their ranges
  absl::flat_hash_map<std::string, int64_t> assignment;  // the failing assignment (value/bounds kinds)
  std::optional<ConstValue> before, after;
  std::string detail;     // the Status of a failed rewrite, the second rewrite, ...
  int original_size = 0;  // nodes of the expression before shrinking

  // Multi-line report: kind, `expr` and `rewritten` as infix, ranges, assignment, values.
  std::string ToString() const;
  absl::Status ToStatus() const;  // kInternal with ToString()
};

absl::string_view RuleFailureKindName(RuleFailure::Kind kind);

class RuleFuzzer {
 public:
  // `pm` must outlive the fuzzer.
  explicit RuleFuzzer(const PatternMatcher& pm, RuleFuzzerOptions options = {});

  // Generates and checks `num_expressions` expressions; the first failure, shrunk, as a kInternal error.
  // Without a failure, a kFailedPrecondition error naming every rule that never fired (unless
  // allow_unfired_rules).
  absl::Status Run(int num_expressions);
  // Checks one expression (int32/bool ALU ops over int32 DEFINE_VARs); a failure comes back shrunk. Returns
  // nullopt when it passes, or when it cannot be judged (may overflow without allow_overflow, or its original
  // value cannot be evaluated).
  std::optional<RuleFailure> CheckOne(const UOpPtr& expr);
  // The same without shrinking.
  std::optional<RuleFailure> CheckOneUnshrunk(const UOpPtr& expr);
  // CheckOne, trying `assignment` (values of expr's variables) first: for counterexamples found elsewhere.
  std::optional<RuleFailure> CheckAt(const UOpPtr& expr,
                                     const absl::flat_hash_map<std::string, int64_t>& assignment);
  // For libFuzzer: an expression derived deterministically from the bytes (variable ranges included),
  // checked.
  std::optional<RuleFailure> FuzzOneInput(const uint8_t* data, size_t size);

  // A random expression, not directed by the rules (advances the generator's state).
  UOpPtr Generate();
  // An instantiation of rule `rule_index`'s pattern (an index into the matcher's rules), maybe in a random
  // context; null when the generator cannot build one (an op or dtype it does not make).
  UOpPtr GenerateForRule(size_t rule_index);
  // What Run() checks: a rule's instantiation (the rules in turn) or a random expression.
  UOpPtr GenerateMixed();
  // The expression FuzzOneInput builds from these bytes (a rule's instantiation or a random expression).
  UOpPtr GenerateFromBytes(const uint8_t* data, size_t size) const;

  // Per rule, in the matcher's order: counted over the expressions checked since construction.
  const std::vector<RuleCoverage>& coverage() const;
  // Rules whose callback replaced a node at least once.
  int rules_fired() const;
  // One line per rule: "symbolic.cc:123  generated 40  matched 31  replaced 12  declined 19  PATTERN", and a
  // summary line.
  std::string CoverageReport() const;
  // The rules (indices) that replaced a node in the last expression CheckOne/CheckOneUnshrunk judged, and
  // what that expression was rewritten to (null if it was not rewritten).
  const std::vector<int>& last_fired() const;
  const UOpPtr& last_rewritten() const { return last_rewritten_; }

  // Counters since construction.
  int64_t checked() const { return checked_; }  // expressions judged
  int64_t skipped() const { return skipped_; }  // expressions that could not be judged
  int64_t changed() const { return changed_; }  // expressions the rules rewrote

  // Implementation details, public for the helpers in rule_fuzzer.cc: the generator's source of decisions,
  // and the coverage counters the rules' callbacks update.
  class Choices;
  struct CoverageState;

 private:
  UOpPtr GenerateWith(Choices& choices) const;
  UOpPtr GenerateForRuleWith(Choices& choices, size_t rule_index) const;
  UOpPtr GenerateMixedWith(Choices& choices, size_t* next_rule, int* rule) const;
  std::optional<RuleFailure> Check(const UOpPtr& expr, const absl::flat_hash_map<std::string, int64_t>* hint);
  std::optional<RuleFailure> Shrink(RuleFailure failure);
  bool Judgeable(const UOpPtr& expr) const;

  const PatternMatcher& pm_;
  // pm_'s rules with callbacks that count into coverage_ (same patterns, order and locations).
  std::shared_ptr<CoverageState> coverage_;
  PatternMatcher counting_pm_;
  UOpPtr last_rewritten_;
  size_t next_rule_ = 0;
  RuleFuzzerOptions options_;
  std::mt19937_64 rng_;
  int64_t checked_ = 0;
  int64_t skipped_ = 0;
  int64_t changed_ = 0;
};

}  // namespace uopc

#endif  // UOPC_REWRITE_TESTING_RULE_FUZZER_H_
