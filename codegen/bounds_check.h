// Bounds proven or refused: every load and store of a kernel stays inside its buffer, or the kernel does not
// run (tinygrad's validate_index, made strict).
//
// A compiled program indexes its buffers with INDEX(buffer, index[, gate]). Devices that run native code
// (CPU, LLVM, OPENCL, CUDA) cannot trap an access outside the buffer: it corrupts memory or crashes the
// process. So before such a program is loaded, every INDEX is checked: the index's range (vmin/vmax, after
// narrowing it with the clauses of its gate, rewrite/valid.h), widened by the vector width of the access,
// must lie in [0, size) of the buffer's pointer dtype. What the ranges cannot prove goes to an `IndexProver`
// (z3, built in unless `--define=uopc_z3=0`); an index neither proves is refused with an error that names
// the kernel, the buffer, its size and the index range.
//
//   absl::Status s = CheckProgramBounds(spec.uops, spec.name);   // before Device::CreateProgram loads it
//   absl::Status t = CheckKernelAstBounds(ast);                   // the same for a kernel AST (VIEWs)
//
// Buffers of unknown size (ptr(-1)) are not checked.
#ifndef UOPC_CODEGEN_BOUNDS_CHECK_H_
#define UOPC_CODEGEN_BOUNDS_CHECK_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/uop.h"

namespace uopc {

// Decides what range analysis leaves open: whether `index`, and the `width - 1` elements after it, stay in
// [0, size) whenever `gate` (null: always) holds.
class IndexProver {
 public:
  enum class Verdict { kInBounds, kOutOfBounds, kUnknown };
  virtual ~IndexProver() = default;
  virtual absl::string_view name() const = 0;
  // On kOutOfBounds, *witness may describe an assignment that escapes ("ridx0=999 gives index 999").
  virtual Verdict Prove(const UOp* index, const UOp* gate, int64_t size, int64_t width,
                        std::string* witness) const = 0;
};

// The prover built into this binary: z3 (codegen:z3_index_prover) unless built with `--define=uopc_z3=0`, else null.
const IndexProver* BuiltinIndexProver();
// For the prover's own library: makes `prover` the built-in one (called from a static initializer).
void RegisterBuiltinIndexProver(const IndexProver* prover);

// OK when every INDEX among `uops` (a linear program, or any graph's nodes) stays in bounds; else
// InvalidArgument naming `kernel`, the buffer, its size and the index range. `prover` may be null.
absl::Status CheckProgramBounds(absl::Span<const UOpPtr> uops, absl::string_view kernel,
                                const IndexProver* prover = BuiltinIndexProver());
// The same for the graph under `sink` (the nodes in toposort order).
absl::Status CheckProgramBounds(const UOp* sink, absl::string_view kernel,
                                const IndexProver* prover = BuiltinIndexProver());

// The same for a kernel AST: each LOAD/STORE of a DEFINE_GLOBAL through a VIEW, with the VIEW's index and
// valid (ShapeTracker::ToIndexedUops) over the view's whole shape.
absl::Status CheckKernelAstBounds(const UOp* ast, const IndexProver* prover = BuiltinIndexProver());

}  // namespace uopc

#endif  // UOPC_CODEGEN_BOUNDS_CHECK_H_
