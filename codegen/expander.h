// The expander: turns the lowerer's UNROLL/CONTRACT form of upcast and unrolled axes into vector ops
// (tinygrad v0.10.3's codegen/expander.py).
//
// The lowerer writes an upcast axis of size n as UNROLL(VCONST(0..n-1), ((axis, n),)): one scalar-typed value
// that stands for n lanes. Expansion pushes UNROLLs upward: an op with an UNROLL source becomes one vector op
// over all lanes of all the axes its sources unroll (sources reordered with GEPs, scalars broadcast), wrapped
// in an UNROLL naming those axes. CONTRACT folds axes back into a vector dtype (what a REDUCE over an
// unrolled axis or a vector store reads), and an UNROLL with no axes left is its source.
//
// Two codegen steps come from this file:
//   "initial symbolic"  Sym() + MigrateIndexing()   (gates loads behind barriers with the store's mask)
//   "expander"          PmDeleteIgnore() + Sym() + Expander()
#ifndef UOPC_CODEGEN_EXPANDER_H_
#define UOPC_CODEGEN_EXPANDER_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "renderer/renderer.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

// The UNROLL/CONTRACT expansion rules (tinygrad's `expander`).
const PatternMatcher& Expander();
// STORE through an INDEX gated by a mask: loads behind a BARRIER in the stored value get IF(mask, barrier)
// (tinygrad's `migrate_indexing`).
const PatternMatcher& MigrateIndexing();

// The codegen steps "initial symbolic" and "expander". The renderer is unused.
absl::StatusOr<UOpPtr> RewriteInitialSymbolic(const UOpPtr& sink, const Renderer& renderer);
absl::StatusOr<UOpPtr> RewriteExpander(const UOpPtr& sink, const Renderer& renderer);

namespace expander_internal {
// The axes of an UNROLL or CONTRACT arg: ((axis, size), ...).
using AxisSizes = std::vector<std::pair<int64_t, int64_t>>;
// A choice of one lane per axis (axis -> lane); later entries of an axis override earlier ones, like a dict.
using LaneChoice = std::vector<std::pair<int64_t, int64_t>>;

// Every lane choice of `axes`, the last axis varying fastest (tinygrad's _choices_from_args).
std::vector<LaneChoice> LaneChoices(const AxisSizes& axes);
// The flat lane index of `choice` in a vector unrolled over `axes` (the last axis varies fastest); -1 when
// the choice misses an axis (tinygrad's _expand_arg_to_idx).
int64_t LaneIndex(const AxisSizes& axes, const LaneChoice& choice);
// For each lane of a vector unrolled over `to`, the lane of a vector unrolled over `from` that holds its
// value; the axes in `zeroed` take lane 0 (tinygrad's _swizzle_args).
std::vector<int64_t> SwizzleLanes(const AxisSizes& to, const AxisSizes& from,
                                  const std::vector<int64_t>& zeroed);
}  // namespace expander_internal

}  // namespace uopc

#endif  // UOPC_CODEGEN_EXPANDER_H_
