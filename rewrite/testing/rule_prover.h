// RuleProver: proves the instantiations the RuleFuzzer makes of a PatternMatcher's rules, with z3.
//
// For each instantiation of a rule's pattern (rewrite/testing/rule_fuzzer.h), the expression before and after
// TryGraphRewrite become z3 bit-vector terms with uopc's C semantics (exec_alu): int32 wraps around, `//` and
// `%` truncate, x//0 = 0 and x%0 = x, SHL/SHR by a count >= 32 give 0 (or -1 for a negative x shifted right),
// comparisons are signed, WHERE is if-then-else, bool ops are logical, CAST between int32 and bool is `!= 0`
// and 0/1. Every variable is constrained to its range, and z3 is asked for an assignment where the two
// differ, or where the rewritten value leaves the rewritten graph's [vmin, vmax], or where a shift of the
// rewritten graph has a negative count (which exec_alu rejects). `unsat` proves the instantiation for every
// value of its variables, not only sampled ones; constants stay concrete, because the rules' callbacks
// compute with them. A counterexample is checked again with exec_alu, shrunk and reported like a fuzzer
// failure.
//
//   RuleProver prover(Sym(), {.instantiations_per_rule = 40});
//   absl::Status s = prover.Run();   // kInternal with every counterexample; per-rule counts in results()
//   std::printf("%s", prover.Report().c_str());
//
// With UOPC_PROVER_DEBUG set in the environment, every satisfiable query and its model go to stderr.
//
// Instantiations that may overflow (as RuleFuzzer::Judgeable) or use ops or dtypes other than int32/bool
// arithmetic are skipped. Links Debian's libz3 (//third_party:z3): a separate target, so users of the fuzzer
// alone do not need it.
#ifndef UOPC_REWRITE_TESTING_RULE_PROVER_H_
#define UOPC_REWRITE_TESTING_RULE_PROVER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/testing/rule_fuzzer.h"
#include "uop/uop.h"

namespace uopc {

struct RuleProverOptions {
  // The generator's settings (seed, variables, constants); context_percent applies too.
  RuleFuzzerOptions fuzzer = {};
  // Instantiations per rule in which the rule fires (at most 4 times as many are tried).
  int instantiations_per_rule = 40;
  // z3's time limit per query, in milliseconds.
  int timeout_ms = 2000;
  // Counterexamples kept (the first of each rule).
  int max_findings = 20;
};

// What the prover established for the rewrites one rule took part in (a rewrite counts for every rule that
// replaced a node in it).
struct RuleProof {
  std::string location;  // "symbolic.cc:123"
  std::string pattern;
  int64_t proven = 0;       // unsat: equal for every value of the variables
  int64_t timed_out = 0;    // z3 gave up (timeout or unknown)
  int64_t found = 0;        // counterexamples
  int64_t unsupported = 0;  // rewrites with an op or dtype the translation does not cover
};

class RuleProver {
 public:
  enum class Verdict { kProven, kTimedOut, kFound, kUnchanged, kUnsupported, kSkipped };

  // `pm` must outlive the prover.
  explicit RuleProver(const PatternMatcher& pm, RuleProverOptions options = {});
  ~RuleProver();
  RuleProver(const RuleProver&) = delete;
  RuleProver& operator=(const RuleProver&) = delete;

  // Proves instantiations_per_rule instantiations of every rule (see RuleProverOptions). OK when no
  // counterexample was found, else kInternal with the (shrunk) counterexamples, one report per rule.
  absl::Status Run();
  // One expression: rewritten, translated and proven. A counterexample comes back in *failure (shrunk).
  Verdict ProveOne(const UOpPtr& expr, std::optional<RuleFailure>* failure);

  // Per rule, in the matcher's order.
  const std::vector<RuleProof>& results() const { return results_; }
  const std::vector<RuleFailure>& findings() const { return findings_; }
  // The rules that replaced a node in the last expression ProveOne rewrote.
  const std::vector<int>& last_fired() const { return fired_; }
  // The fuzzer that makes and rewrites the instantiations (its coverage() counts them).
  RuleFuzzer& fuzzer() { return fuzzer_; }
  // A markdown table: rule, pattern, proven, timed out, found, unsupported; then totals.
  std::string Report() const;

 private:
  class Z3;
  const PatternMatcher& pm_;
  RuleProverOptions options_;
  RuleFuzzer fuzzer_;
  std::vector<RuleProof> results_;
  std::vector<RuleFailure> findings_;
  std::vector<int> fired_;
  Z3* z3_;
};

absl::string_view RuleProverVerdictName(RuleProver::Verdict v);

}  // namespace uopc

#endif  // UOPC_REWRITE_TESTING_RULE_PROVER_H_
