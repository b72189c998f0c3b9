// RuleFuzzer: differential testing of any PatternMatcher on random integer/bool expressions.
//
// It generates random typed expression graphs over int32 variables with small ranges, rewrites each with
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
//   RuleFuzzer fuzzer(Symbolic(), {.seed = 7});
//   absl::Status s = fuzzer.Run(10000);                 // the first failure, shrunk, as a kInternal Status
//   std::optional<RuleFailure> f = fuzzer.CheckOne(ParseInfix("((a * 4) // 4)", vars).value());
//
// Integer overflow: uopc defines it (int32 wraps), but tinygrad's rules and range analysis assume it does not
// happen, so by default expressions with a node whose range leaves its dtype are not generated or checked
// (`allow_overflow`). Division and modulo by ranges that include 0 are generated (x//0 = 0 and x%0 = x).
// Shift counts are constants in [0, 31], never negative.
#ifndef UOPC_REWRITE_TESTING_RULE_FUZZER_H_
#define UOPC_REWRITE_TESTING_RULE_FUZZER_H_

#include <cstddef>
#include <cstdint>
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
  // Ops the generator builds. Supported: ADD MUL IDIV MOD MAX AND OR XOR SHL SHR CMPLT CMPNE WHERE.
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

  // Generates and checks `num_expressions` expressions; the first failure, shrunk, as an error.
  absl::Status Run(int num_expressions);
  // Checks one expression (int32/bool ALU ops over int32 DEFINE_VARs); a failure comes back shrunk. Returns
  // nullopt when it passes, or when it cannot be judged (may overflow without allow_overflow, or its original
  // value cannot be evaluated).
  std::optional<RuleFailure> CheckOne(const UOpPtr& expr);
  // The same without shrinking.
  std::optional<RuleFailure> CheckOneUnshrunk(const UOpPtr& expr);
  // For libFuzzer: an expression derived deterministically from the bytes (variable ranges included),
  // checked.
  std::optional<RuleFailure> FuzzOneInput(const uint8_t* data, size_t size);

  // A random expression from the fuzzer's generator (advances its state).
  UOpPtr Generate();
  // The expression FuzzOneInput builds from these bytes.
  UOpPtr GenerateFromBytes(const uint8_t* data, size_t size) const;

  // Counters since construction.
  int64_t checked() const { return checked_; }  // expressions judged
  int64_t skipped() const { return skipped_; }  // expressions that could not be judged
  int64_t changed() const { return changed_; }  // expressions the rules rewrote

 private:
  class Choices;
  UOpPtr GenerateWith(Choices& choices) const;
  std::optional<RuleFailure> Shrink(RuleFailure failure);
  bool Judgeable(const UOpPtr& expr) const;

  const PatternMatcher& pm_;
  RuleFuzzerOptions options_;
  std::mt19937_64 rng_;
  int64_t checked_ = 0;
  int64_t skipped_ = 0;
  int64_t changed_ = 0;
};

}  // namespace uopc

#endif  // UOPC_REWRITE_TESTING_RULE_FUZZER_H_
