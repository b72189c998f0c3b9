// Uses uopc's RuleFuzzer from another workspace, as a user testing their own rewrite rules would, through
// `@uopc//rewrite` and `@uopc//rewrite/testing:rule_fuzzer` alone, with the default options: a wrong rule
// must be found, and a right one must pass with its rule fired. Exits non-zero otherwise.
#include <cstdlib>
#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/testing/rule_fuzzer.h"
#include "rewrite/upat.h"

int main() {
  using uopc::Match;
  using uopc::PatternMatcher;
  using uopc::UPat;
  int failures = 0;
  const UPat x = UPat::Var("x");

  // (x // 2) * 2 -> x is wrong for odd x.
  PatternMatcher wrong({{x.idiv(2) * 2, [](const Match& m) { return m["x"]; }}});
  uopc::RuleFuzzer wrong_fuzzer(wrong);
  absl::Status found = wrong_fuzzer.Run(20000);
  std::cout << "wrong rule: " << found << "\n" << wrong_fuzzer.CoverageReport();
  if (found.code() != absl::StatusCode::kInternal ||
      std::string(found.message()).find("value mismatch") == std::string::npos) {
    std::cerr << "FAILED: the wrong rule (x // 2) * 2 -> x was not found\n";
    ++failures;
  }

  // (x % 2) + (x // 2) * 2 -> x holds in C.
  PatternMatcher right({{x % 2 + x.idiv(2) * 2, [](const Match& m) { return m["x"]; }}});
  uopc::RuleFuzzer right_fuzzer(right);
  absl::Status passed = right_fuzzer.Run(2000);
  std::cout << "right rule: " << passed << "\n" << right_fuzzer.CoverageReport();
  if (!passed.ok() || right_fuzzer.rules_fired() != 1) {
    std::cerr << "FAILED: the right rule did not pass with its rule fired\n";
    ++failures;
  }

  if (failures == 0) std::cout << "rule_fuzzer_consumer_test: all checks passed\n";
  return failures == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
