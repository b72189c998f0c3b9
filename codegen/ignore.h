// IGNORE: how codegen keeps a masked store's value from being simplified as if every lane were stored
// (tinygrad v0.10.3's IGNORE support in codegen/expander.py).
//
// A STORE through a gated INDEX(buf, idx, mask) only writes where `mask` holds, so its value is wrapped in
// IGNORE(value, mask) ("store_ignore"), and the IGNOREs are pushed down through ALUs, casts and vectorizes to
// the leaves ("move_ignore"), where an IGNORE of the mask itself is `true` and an IGNORE of a constant is the
// constant. The expander step then deletes what is left (PmDeleteIgnore).
#ifndef UOPC_CODEGEN_IGNORE_H_
#define UOPC_CODEGEN_IGNORE_H_

#include "absl/status/statusor.h"
#include "renderer/renderer.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

// STORE(INDEX(buf, idx, mask), value) -> STORE(INDEX(...), IGNORE(value, mask)) (tinygrad's pm_store_ignore).
const PatternMatcher& PmStoreIgnore();
// IGNORE(x, x) -> true, IGNORE(const, _) -> const, IGNORE(alu(a, b..), m) -> alu(IGNORE(a, m), ..)
// (tinygrad's pm_move_ignore).
const PatternMatcher& PmMoveIgnore();
// IGNORE(x, _) -> x (tinygrad's pm_delete_ignore; part of the expander step).
const PatternMatcher& PmDeleteIgnore();

// The codegen steps "store_ignore" and "move_ignore". The renderer is unused. move_ignore rewrites each
// IGNORE it builds once, however many paths lead to it (a shared subgraph such as THREEFRY's rounds), and
// its rule applications are bounded by the graph's nodes times its masks (kResourceExhausted past that).
absl::StatusOr<UOpPtr> RewriteStoreIgnore(const UOpPtr& sink, const Renderer& renderer);
absl::StatusOr<UOpPtr> RewriteMoveIgnore(const UOpPtr& sink, const Renderer& renderer);

}  // namespace uopc

#endif  // UOPC_CODEGEN_IGNORE_H_
