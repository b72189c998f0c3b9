// Register blocking for CPU targets that keep float32 vectors (Renderer::vector_width() > 1), uopc's default
// opts there in place of tinygrad's hand-coded ones (codegen/heuristic.h keeps those, and the targets that
// devectorize get them unchanged).
//
// A reduce of a product of two loads (a matmul, a convolution and their gradients) gets an output tile held
// in vector accumulators. The lanes: an output axis along which one input is broadcast, upcast by 16 (or 8),
// preferring one where the other input and the output are contiguous (a matmul's columns), then one where
// the other input is (a convolution's rows), then any (its channels, gathered lane by lane). The rows: an
// output axis along which the lanes' input is broadcast and the other is not, upcast by up to 8 (at most
// 128 accumulator floats). Each vector of the lanes' input then feeds one multiply-add per row, and each
// scalar of the other input one per lane. The reduce loop is left to the C compiler. A matmul whose lane
// input is far larger than the cache gets its column blocks' loop outside the rows' (SWAP). Then VECTOR keeps
// the tile's vectors whole (uopc's opt; the UPCASTs and SWAP are tinygrad's, and BEAM searches all of them).
#ifndef UOPC_CODEGEN_VECTOR_HEURISTIC_H_
#define UOPC_CODEGEN_VECTOR_HEURISTIC_H_

#include <optional>
#include <vector>

#include "codegen/kernel.h"
#include "codegen/opt.h"

namespace uopc {

// The opts above for `k` (k itself is not changed), or nullopt when the kernel is not such a reduce, its
// renderer does not keep vectors, or the opts do not apply to it.
std::optional<std::vector<Opt>> VectorBlockedOptimizations(const Kernel& k);

}  // namespace uopc

#endif  // UOPC_CODEGEN_VECTOR_HEURISTIC_H_
