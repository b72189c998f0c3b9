// ParallelFor, the one parallel loop of the compiler, for BEAM's candidates (codegen/search.cc), a schedule's
// kernels (runtime/realize.cc) and the compile benchmark's phases (tensor/testing/compile_phases.cc).
//
// It runs on oneTBB. Under ThreadSanitizer it runs on plain std::threads instead: Debian's libtbb is not
// instrumented, so TSan cannot see its hand-offs and reports each of them as a data race; on threads it can
// see, the TSan stage of .ci/run checks what matters here, our own synchronization (the kernel cache,
// interning, kernel naming), with the same calls from the same loop bodies.
#ifndef UOPC_UOP_PARALLEL_FOR_H_
#define UOPC_UOP_PARALLEL_FOR_H_

#include <cstdint>

#include "absl/functional/function_ref.h"

namespace uopc {

// Calls fn(i) once for each i in [0, n) and returns when every call has returned. At most `threads` threads
// work on it (0: one per core); each index is its own task, because the callers' items (kernels, candidates)
// differ in cost by 10x or more. threads == 1 calls fn(0) ... fn(n-1) in order on the calling thread. Calls
// may nest.
void ParallelFor(int64_t n, int threads, absl::FunctionRef<void(int64_t)> fn);

}  // namespace uopc

#endif  // UOPC_UOP_PARALLEL_FOR_H_
