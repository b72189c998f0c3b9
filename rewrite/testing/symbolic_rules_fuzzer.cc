// libFuzzer target for one symbolic rule set (UOPC_FUZZ_RULES: Symbolic or Sym, set by the BUILD target): the
// rules must rewrite every expression RuleFuzzer derives from the input to one with the same values, within
// its bounds, idempotently and within the step limit. A finding is printed shrunk, as infix text with the
// variable ranges and the failing assignment, and aborts.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>

#ifndef UOPC_FUZZ_RULES
#error "define UOPC_FUZZ_RULES to the rule set: Symbolic or Sym"
#endif
#define UOPC_STRINGIFY(x) #x
#define UOPC_NAME(x) UOPC_STRINGIFY(x)

#include "rewrite/symbolic.h"
#include "rewrite/testing/rule_fuzzer.h"
#include "uop/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static uopc::RuleFuzzer* fuzzer = [] {
    uopc::RuleFuzzerOptions options;
    options.max_depth = 5;
    // Fewer assignments per input than the unit test: executions per second matter more here.
    options.max_exhaustive = 512;
    options.num_samples = 64;
    if (uopc::EnvString("UOPC_FUZZ_GENERATOR") == "random") options.pattern_percent = 0;
    static uopc::RuleFuzzer* f = new uopc::RuleFuzzer(uopc::UOPC_FUZZ_RULES(), options);
    std::atexit([] {
      std::fprintf(stderr, UOPC_NAME(UOPC_FUZZ_RULES) "() rule coverage (%lld inputs checked):\n%s",
                   static_cast<long long>(f->checked()), f->CoverageReport().c_str());
    });
    return f;
  }();
  std::optional<uopc::RuleFailure> failure = fuzzer->FuzzOneInput(data, size);
  if (failure) {
    std::fprintf(stderr, UOPC_NAME(UOPC_FUZZ_RULES) "() finding:\n%s", failure->ToString().c_str());
    std::abort();
  }
  return 0;
}
