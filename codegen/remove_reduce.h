// remove_reduce: the codegen step that turns each REDUCE into an accumulator (tinygrad v0.10.3's pm_reduce
// with gep_pushing, from codegen/devectorizer.py), after the expander and before devectorize.
//
//   REDUCE(x, ranges...)  -> ASSIGN(DEFINE_ACC(identity, ranges..., arg=(n,)), acc op x0 op x1 ...)
//
// where x0, x1, ... are the horizontal slices of a vector x wider than the result, and n numbers the
// accumulators in the order the rewrite meets them. Before that, ranges the reduced value does not depend on
// leave the REDUCE (an ADD multiplies by their size), and a reduce over one range with no loads in the way is
// solved in closed form (the arange trick: `sum(i < n ? 0 : 1)` becomes arithmetic on n).
//
//   ASSIGN_OR_RETURN(UOpPtr out, RewriteRemoveReduce(expanded, clang));
#ifndef UOPC_CODEGEN_REMOVE_REDUCE_H_
#define UOPC_CODEGEN_REMOVE_REDUCE_H_

#include "absl/status/statusor.h"
#include "renderer/renderer.h"
#include "uop/uop.h"

namespace uopc {

// The remove_reduce step: `sink` is the expander's output; the result is tinygrad's "remove_reduce" stage.
absl::StatusOr<UOpPtr> RewriteRemoveReduce(const UOpPtr& sink, const Renderer& renderer);

}  // namespace uopc

#endif  // UOPC_CODEGEN_REMOVE_REDUCE_H_
