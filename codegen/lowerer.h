// The lowerer: the first codegen step (tinygrad v0.10.3's codegen/lowerer.py), which turns the optimized
// kernel AST, whose loads and stores address buffers through ShapeTrackers, into explicit index arithmetic.
//
// Every axis of the kernel's full shape gets an index: a launch dimension (SPECIAL gidx/lidx, on targets with
// local memory), a loop (RANGE), or, for the upcasted axes, an UNROLL the expander later vectorizes. Then
//   LOAD/STORE(buf, VIEW, ...)  -> LOAD/STORE(INDEX(buf, idx, valid), ...)
//   REDUCE_AXIS(x)              -> REDUCE(x or CONTRACT(x), ranges...)
//   CONST/DEFINE_VAR(VIEW)      -> the bare constant or variable
//   VALID(VIEW)                 -> the view's valid expression
//
//   ClangRenderer clang;
//   ASSIGN_OR_RETURN(UOpPtr lowered, RewriteLowerer(optimized_ast, clang));
#ifndef UOPC_CODEGEN_LOWERER_H_
#define UOPC_CODEGEN_LOWERER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"
#include "shapetracker/sint.h"
#include "uop/uop.h"

namespace uopc {

// The indices of a kernel's axes (tinygrad's IndexContext): `idxs` address global memory, `ridxs` are the
// same except that grouped-reduce axes are loops (RANGE 1000+axis) for reading back local memory.
struct IndexContext {
  std::vector<UOpPtr> idxs;
  std::vector<UOpPtr> ridxs;
};

// tinygrad's get_index: the axis indices of the optimized AST `sink` (a SINK whose arg is a KernelInfo, or
// none) for `renderer`. Errors when the AST's shapes cannot be launched on the target.
absl::StatusOr<IndexContext> GetIndex(const UOpPtr& sink, const Renderer& renderer);

// tinygrad's get_grouped_dims: SPECIAL indices named `prefix`0, 1, ... for launch dimensions `dims`, fitted
// to `max_sizes` (nullopt: no limit) by merging adjacent dims or splitting one across several; the result has
// one index expression per entry of `dims`. `reverse` assigns the first SPECIAL to the last dim. Symbolic
// dims are neither merged nor split: each is one SPECIAL whose size is the symbolic UOp (a UOpArg). An error
// when the dims cannot be fitted (symbolic ones by their largest values).
absl::StatusOr<std::vector<UOpPtr>> GetGroupedDims(absl::string_view prefix, absl::Span<const Sint> dims,
                                                   const std::optional<std::vector<int64_t>>& max_sizes,
                                                   bool reverse = false);

// The lowerer step: `sink` is the optimized AST; the result is tinygrad's "lowerer" stage graph.
absl::StatusOr<UOpPtr> RewriteLowerer(const UOpPtr& sink, const Renderer& renderer);

}  // namespace uopc

#endif  // UOPC_CODEGEN_LOWERER_H_
