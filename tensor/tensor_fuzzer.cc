// libFuzzer target for the Tensor API: a random tensor program (tensor/testing/random_program.h, the Tensor
// API profile: many dtypes, promotion, casts, division, reductions, movement ops, assigns) built through the
// C++ Tensor API, realized through the scheduler, codegen and the CPU device with SPEC=1's checks between
// passes, and compared with the host reference (tensor/testing/host_tensor.h). The fuzz input is the
// generator's choices.
//
// A mismatch prints the program and aborts; UOPC_FUZZ_KEEP_GOING=1 prints it and goes on.
//   ./bazelw run --config=fuzz //tensor:tensor_fuzzer -- -max_total_time=600
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include "tensor/testing/random_program.h"
#include "uop/spec.h"
#include "uop/util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const bool keep_going = [] {
    uopc::SetSpecChecks(true);
    return uopc::EnvFlag("UOPC_FUZZ_KEEP_GOING");
  }();
  uopc::FuzzChoices choices(data, size);
  uopc::ProgramOutcome out = uopc::RunRandomProgram(choices, uopc::TensorFuzzProfile());
  if (!out.failure.empty()) {
    std::fprintf(stderr, "tensor_fuzzer: %s\n--- program\n%s\n", out.failure.c_str(), out.listing.c_str());
    if (!keep_going) std::abort();
  }
  return 0;
}
