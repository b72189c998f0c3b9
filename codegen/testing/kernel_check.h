// The kernel fuzzer's check: a random kernel, optimized with random valid opts and run on the CPU, must
// compute what the interpreter computes on its unoptimized program (within the corpus tolerances).
//
// The interpreter runs the linear program uop by uop with exec_alu's semantics and bounds-checked memory, so
// a disagreement is a codegen bug (an opt, a pass, the renderer) or a runtime bug; the message holds the AST
// as textual IR and the opts, ready for `uopc compile --opts=...`.
#ifndef UOPC_CODEGEN_TESTING_KERNEL_CHECK_H_
#define UOPC_CODEGEN_TESTING_KERNEL_CHECK_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/opt.h"
#include "codegen/testing/random_kernel.h"
#include "nlohmann/json.hpp"
#include "shapetracker/testing/differential.h"

namespace uopc {

// Up to `max_opts` opts drawn from `choices` that the kernel accepts (tinygrad's checks) for `device`'s
// target (the CPU's when empty), in order.
std::vector<Opt> RandomValidOpts(const UOpPtr& ast, ChoiceSource& choices, int max_opts = 4,
                                 const std::string& device = "CPU");

// nullopt when `device` (CPU, LLVM, OPENCL) with `opts` and INTERP without opts agree on every output of
// `kernel`; else why not. A kernel the device cannot run here (half on an OpenCL without cl_khr_fp16) passes.
// With `isolate`, the device's run happens in a forked child process (RunIsolated), so that a kernel that
// crashes is a failure naming the signal, with the AST and opts, instead of the end of the fuzzer's process.
// Isolation covers CPU and LLVM (their programs run in process); OPENCL and CUDA drivers do not survive a
// fork and run in process as before.
std::optional<std::string> CheckKernel(const RandomKernel& kernel, const std::vector<Opt>& opts,
                                       const std::string& device = "CPU", bool isolate = false);

// `run` in a forked child process; its result comes back through a pipe. A child killed by a signal (or
// exiting without a result) gives an Internal error naming the signal ("crashed with signal 11 (SIGSEGV)").
absl::StatusOr<nlohmann::json> RunIsolated(const std::function<absl::StatusOr<nlohmann::json>()>& run);

}  // namespace uopc

#endif  // UOPC_CODEGEN_TESTING_KERNEL_CHECK_H_
