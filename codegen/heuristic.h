// The hand-coded optimizations (tinygrad v0.10.3's codegen/heuristic.py): the opts tinygrad picks for a
// kernel when it does not search (BEAM=0), with its environment knobs at their defaults (MV_BLOCKSIZE=4,
// MV_THREADS_PER_ROW=8, MV_ROWS_PER_THREAD=4, NOLOCALS=0).
//
// The choice depends on the target: with locals, a matrix-vector product gets GROUP/LOCAL/UPCAST and small
// outputs get a GROUPTOP; then masked small axes and expanded axes are upcast, a small last reduce is
// unrolled, and, with locals, up to three axes become local.
#ifndef UOPC_CODEGEN_HEURISTIC_H_
#define UOPC_CODEGEN_HEURISTIC_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "renderer/renderer.h"
#include "uop/uop.h"

namespace uopc {

// The opts tinygrad's hand_coded_optimizations gives for `k` (k itself is not changed).
absl::StatusOr<std::vector<Opt>> HandCodedOptimizations(const Kernel& k);

// What tinygrad does for a kernel without BEAM: tensor cores when they apply (its TC, TC_SELECT and TC_OPT
// knobs), else the hand-coded opts; applied to `k`. On a target that keeps vectors (Renderer::vector_width()
// > 1) the vector-blocked opts (codegen/vector_heuristic.h) come before the hand-coded ones; on a GPU target
// with Renderer::uopc_gpu_opts() a product's reduction tries further choices of tensor-core axes, and a long
// reduction into few outputs gets coalesced workgroups (codegen/gpu_heuristic.h).
absl::Status ApplyDefaultOptimizations(Kernel& k);

// The codegen step from a kernel AST to its optimized AST: `opts` when given (an empty list is tinygrad's
// NOOPT=1), else the default optimizations; the kernel is named through `names` (nullptr: no repeat suffix).
absl::StatusOr<UOpPtr> OptimizeKernelAst(const UOpPtr& ast, const Renderer& renderer,
                                         KernelNameCounter* names,
                                         const std::optional<std::vector<Opt>>& opts = std::nullopt);

}  // namespace uopc

#endif  // UOPC_CODEGEN_HEURISTIC_H_
