// libFuzzer target: random kernels with random valid opts, compiled for a device (CPU, or $UOPC_FUZZ_DEVICE:
// LLVM, OPENCL), against the interpreter on the unoptimized program (codegen/testing/kernel_check.h), with
// SPEC=1's checks between codegen steps. The fuzz input is the generator's choices.
//
// UOPC_FUZZ_ISOLATE=1 runs each kernel on the device in a forked child (CPU, LLVM), so that a kernel that
// crashes is reported with its AST and opts like any other mismatch; UOPC_FUZZ_KEEP_GOING=1 prints each
// failure and goes on instead of stopping at the first (docs/safety.md).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "codegen/testing/kernel_check.h"
#include "codegen/testing/random_kernel.h"
#include "uop/spec.h"
#include "uop/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // SPEC=1: codegen verifies the kernel after every step, so a step that breaks it is named.
  static const bool spec = (uopc::SetSpecChecks(true), true);
  (void)spec;
  uopc::ChoiceSource choices(data, size);
  uopc::RandomKernel kernel = uopc::MakeRandomKernel(choices);
  static const std::string device = uopc::EnvString("UOPC_FUZZ_DEVICE", "CPU");
  std::vector<uopc::Opt> opts = uopc::RandomValidOpts(kernel.ast, choices, 4, device);
  static const bool isolate = uopc::EnvFlag("UOPC_FUZZ_ISOLATE");
  static const bool keep_going = uopc::EnvFlag("UOPC_FUZZ_KEEP_GOING");
  if (std::optional<std::string> failure = uopc::CheckKernel(kernel, opts, device, isolate)) {
    std::fprintf(stderr, "%s\n", failure->c_str());
    if (!keep_going) std::abort();
  }
  return 0;
}
