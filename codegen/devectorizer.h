// The "devectorize" codegen step (tinygrad v0.10.3's codegen/devectorizer.py, run with DEVECTORIZE=1):
// vectorized index arithmetic becomes per-element INDEXes grouped back into vector loads and stores where the
// addresses are consecutive (expand_index, load/store folding), loads and stores are split into the widths
// the target supports (correct_load_store), vector ALU ops and accumulators become scalar ones (devectorize),
// and gates are simplified (load_store_indexing). Image dtypes are not supported by uopc's DType, so
// tinygrad's image_fixup and image valid simplification have no counterpart here.
#ifndef UOPC_CODEGEN_DEVECTORIZER_H_
#define UOPC_CODEGEN_DEVECTORIZER_H_

#include "absl/status/statusor.h"
#include "renderer/renderer.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

// sym + devectorize + load_store_folding + correct_load_store + load_store_indexing. A kernel whose
// KernelInfo has a vector_width (uopc's VECTOR opt) keeps float32 vectors of up to that many lanes (and the
// renderer's vector_width) in its arithmetic, accumulators, loads and stores; any other is tinygrad's.
absl::StatusOr<UOpPtr> RewriteDevectorize(const UOpPtr& sink, const Renderer& renderer);

// The ctx of the rules below that read the target.
struct DevectorizeContext {
  const Renderer* renderer = nullptr;
  int vector_width = 1;  // float32 lanes kept whole; 1: tinygrad's devectorize
};

// The rule sets, for tests and for other steps. Rules that read the target take a `DevectorizeContext` ctx.
const PatternMatcher& LoadStoreIndexing();
const PatternMatcher& LoadStoreFolding();
const PatternMatcher& CorrectLoadStore();
const PatternMatcher& Devectorize();

}  // namespace uopc

#endif  // UOPC_CODEGEN_DEVECTORIZER_H_
