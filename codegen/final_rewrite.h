// The "final rewrite" codegen step (tinygrad v0.10.3's pm_final_rewrite): symbolic_simple, the late rewrites
// that turn ops the target lacks into ones it has (get_late_rewrite_patterns: the transcendental fallbacks,
// MOD/IDIV/MUL by powers of two as AND/SHR/SHL, division by a constant as multiply-and-shift, NEG, SUB,
// MULACC), pm_render (constants and multi-element GEPs as explicit VECTORIZEs, an alternative value for gated
// loads, an IF around gated stores) and the renderer's extra_matcher. Runs with TRANSCENDENTAL=1: the
// fallbacks replace only the ops the renderer does not support. Before them, integer divisions that could
// trap are guarded (int_division_guard.h: uopc's addition, defined results on every device).
#ifndef UOPC_CODEGEN_FINAL_REWRITE_H_
#define UOPC_CODEGEN_FINAL_REWRITE_H_

#include <vector>

#include "absl/status/statusor.h"
#include "renderer/renderer.h"
#include "rewrite/pattern_matcher.h"
#include "uop/ops.h"
#include "uop/uop.h"

namespace uopc {

absl::StatusOr<UOpPtr> RewriteFinal(const UOpPtr& sink, const Renderer& renderer);

// get_late_rewrite_patterns(supported_ops, force_transcendental). The division rules read a `const Renderer`
// ctx when there is one (to widen the multiply of a division by a constant). `fallback_dtypes` (uopc's
// addition, Renderer::transcendental_fallback_dtypes) are float dtypes whose EXP2, LOG2 and SIN get the
// fallbacks even where supported_ops has the op.
PatternMatcher LateRewritePatterns(const OpSet& supported_ops, bool force_transcendental = false,
                                   const std::vector<DType>& fallback_dtypes = {});
// pm_render.
const PatternMatcher& RenderPatterns();

}  // namespace uopc

#endif  // UOPC_CODEGEN_FINAL_REWRITE_H_
