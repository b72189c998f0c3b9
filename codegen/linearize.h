// The linearizer: turns the kernel graph after codegen's "final rewrite" step into the linear program the
// renderers print, in exactly the order tinygrad v0.10.3's codegen/linearize.py gives (`full_rewrite(...)`).
//
// tinygrad does this in four graph rewrites over BLOCK/BLOCKSTART/BLOCKEND nodes whose args are BasicBlock
// objects compared by identity: "Create Blocks" (bottom-up, with a BlockContext of child counts and the
// RANGE/IF context of every node), "Merge Blockends", "Merge Blocks" and "Finalize". uopc runs the same four
// steps with the same traversal orders, but on a small private graph of block nodes instead of interned UOps:
// a block's arg has identity, not value, semantics, so it does not belong in the hash-consed UOp world, and a
// private arena graph keeps the linearizer self-contained and fast. The kernel's own UOps are only read; the
// ENDRANGE/ENDIF (and BARRIER) nodes the linearizer adds are ordinary interned UOps.
#ifndef UOPC_CODEGEN_LINEARIZE_H_
#define UOPC_CODEGEN_LINEARIZE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "uop/uop.h"

namespace uopc {

// The linear program of `sink` (tinygrad's `full_rewrite(...)` list, i.e. the final block's `lst`): the
// DEFINE_GLOBAL/DEFINE_LOCAL/DEFINE_VAR/SPECIAL/CONST nodes first in tuplize order, then the blocks, with
// ENDRANGE/ENDIF closing every RANGE/IF, ending with the SINK. A graph tinygrad could not linearize (an
// ASSIGN not to a DEFINE_ACC, blocks that do not merge into one) is an error, not a crash.
absl::StatusOr<std::vector<UOpPtr>> Linearize(const UOpPtr& sink);

}  // namespace uopc

#endif  // UOPC_CODEGEN_LINEARIZE_H_
