// Register blocking for CPU targets that keep float32 vectors (Renderer::vector_width() > 1), uopc's default
// opts there in place of tinygrad's hand-coded ones (codegen/heuristic.h keeps those, and the targets that
// devectorize get them unchanged).
//
// A reduce of a product of two loads (a matmul, a convolution and their gradients) gets an output tile held in
// vector accumulators: the output axis that is contiguous in the output and contiguous or broadcast in both
// inputs is upcast to whole vectors (the lanes), and an output axis along which the lane-contiguous input is
// broadcast is upcast a few times (the rows), so each vector load of that input feeds one multiply-add per row
// and each scalar of the other input one per lane. The reduce loop is left to the C compiler. The opts are
// ordinary UPCASTs (BEAM's actions); what makes them fast is the renderer keeping the vectors.
#ifndef UOPC_CODEGEN_VECTOR_HEURISTIC_H_
#define UOPC_CODEGEN_VECTOR_HEURISTIC_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"

namespace uopc {

// The opts above for `k` (k itself is not changed), or nullopt when the kernel is not such a reduce or its
// renderer does not keep vectors.
absl::StatusOr<std::optional<std::vector<Opt>>> VectorBlockedOptimizations(const Kernel& k);

}  // namespace uopc

#endif  // UOPC_CODEGEN_VECTOR_HEURISTIC_H_
