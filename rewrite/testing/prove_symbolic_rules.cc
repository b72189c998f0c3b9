// Runs the RuleProver over Symbolic() and Sym() and prints one markdown table per rule set, with the
// counterexamples found (docs/rule_prover.md records a run).
//   ./bazelw run -c opt //rewrite/testing:prove_symbolic_rules -- [instantiations per rule] [timeout ms]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "rewrite/symbolic.h"
#include "rewrite/testing/rule_prover.h"

int main(int argc, char** argv) {
  int per_rule = argc > 1 ? std::atoi(argv[1]) : 40;
  int timeout_ms = argc > 2 ? std::atoi(argv[2]) : 2000;
  int status = 0;
  for (auto [name, pm] : {std::pair{"symbolic", &uopc::Symbolic()}, std::pair{"sym", &uopc::Sym()}}) {
    auto start = std::chrono::steady_clock::now();
    uopc::RuleProver prover(*pm, {.instantiations_per_rule = per_rule, .timeout_ms = timeout_ms});
    absl::Status s = prover.Run();
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("## %s: %d instantiations per rule, %d ms per query, %.1f s\n\n%s\n", name, per_rule,
                timeout_ms, secs, prover.Report().c_str());
    if (!s.ok()) {
      std::printf("```\n%s```\n\n", std::string(s.message()).c_str());
      status = 1;
    }
  }
  return status;
}
