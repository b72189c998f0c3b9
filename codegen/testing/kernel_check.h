// The kernel fuzzer's check: a random kernel, optimized with random valid opts and run on the CPU, must
// compute what the interpreter computes on its unoptimized program (within the corpus tolerances).
//
// The interpreter runs the linear program uop by uop with exec_alu's semantics and bounds-checked memory, so
// a disagreement is a codegen bug (an opt, a pass, the renderer) or a runtime bug; the message holds the AST
// as textual IR and the opts, ready for `uopc compile --opts=...`.
#ifndef UOPC_CODEGEN_TESTING_KERNEL_CHECK_H_
#define UOPC_CODEGEN_TESTING_KERNEL_CHECK_H_

#include <optional>
#include <string>
#include <vector>

#include "codegen/opt.h"
#include "codegen/testing/random_kernel.h"
#include "shapetracker/testing/differential.h"

namespace uopc {

// Up to `max_opts` opts drawn from `choices` that the kernel accepts (tinygrad's checks) for `device`'s
// target (the CPU's when empty), in order.
std::vector<Opt> RandomValidOpts(const UOpPtr& ast, ChoiceSource& choices, int max_opts = 4,
                                 const std::string& device = "CPU");

// nullopt when `device` (CPU, LLVM, OPENCL) with `opts` and INTERP without opts agree on every output of
// `kernel`; else why not. A kernel the device cannot run here (half on an OpenCL without cl_khr_fp16) passes.
std::optional<std::string> CheckKernel(const RandomKernel& kernel, const std::vector<Opt>& opts,
                                       const std::string& device = "CPU");

}  // namespace uopc

#endif  // UOPC_CODEGEN_TESTING_KERNEL_CHECK_H_
