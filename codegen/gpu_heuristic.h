// uopc's own opts for GPU targets (Renderer::uopc_gpu_opts(), UOPC_KERNELS=fast), tried before tinygrad's
// hand-coded ones, which stay the default everywhere else (codegen/heuristic.h).
//
// Coalesced reductions: a long reduction into fewer outputs than a GPU has threads (batch-norm statistics,
// the first half of a split reduce) gets tinygrad's heuristic's few large blocks, each thread summing its
// own run of memory while its neighbours sum runs far away, so that no two threads of a warp read one cache
// line (200 GB/s of an H200's 4.8 TB/s). Instead, each output gets a workgroup of up to 256 threads that
// GROUP the innermost reduce axes along which the largest input is contiguous: neighbouring threads read
// neighbouring elements, and the workgroup sums its partial results in shared memory. Where the input is
// contiguous along the outputs instead (a column sum, a linear layer's weight gradient), a workgroup takes 8
// to 64 neighbouring outputs (LOCAL, as many as leave 128 workgroups) and up to 32 threads for each (a GROUP
// of the innermost reduce axis). The opts are tinygrad's GROUP and LOCAL, so BEAM searches the same space.
#ifndef UOPC_CODEGEN_GPU_HEURISTIC_H_
#define UOPC_CODEGEN_GPU_HEURISTIC_H_

#include <optional>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/opt.h"

namespace uopc {

// The coalesced-reduction opts above for `k` (k itself is not changed), or nullopt where they do not apply:
// a target without locals and shared memory, a kernel with opts applied, other than one ADD or MAX reduce, an
// output of more than 65,536 elements, a reduction of fewer than 64 elements per output, or fewer than 8
// contiguous elements to group along either.
std::optional<std::vector<Opt>> CoalescedReduceOptimizations(const Kernel& k);

}  // namespace uopc

#endif  // UOPC_CODEGEN_GPU_HEURISTIC_H_
