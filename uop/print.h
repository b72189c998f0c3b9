// tinygrad's two debug printers, byte for byte: the `print_uops` listing of a linearized program and the
// `UOp(Ops.SINK, dtypes.void, arg=None, src=(` tree that `repr(uop)` prints.
//
// tinygrad users read these at DEBUG>=5/6, and the reference outputs in testdata/tinygrad_examples are in
// these forms, so the text must match tinygrad v0.10.3 exactly: column widths, Python str()/repr() of args,
// the `x2:=` names of shared nodes and their numbering. The round-tripping textual IR is elsewhere
// (uop/text_ir.h); these printers are for people, not for parsing back.
#ifndef UOPC_UOP_PRINT_H_
#define UOPC_UOP_PRINT_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <string>

#include "absl/types/span.h"
#include "uop/arg.h"
#include "uop/uop.h"

namespace uopc {

// tinygrad's print_uops: one line per uop, each ending in '\n':
//   `{i:4d} {op:20s}: {dtype:30s} {parents:32s} {arg}`
// where parents is Python's str() of a list holding, per source, its position in `uops` (a CONST source shows
// its value as a string, `'3'`; a source not in the list shows `'--'`), and arg is Python's str() of the arg.
std::string PrintUOpsListing(absl::Span<const UOp* const> uops);

// tinygrad's UOp.__repr__ (pretty_print): the graph under `root` as nested `UOp(op, dtype, arg=...,
// src=(...))` with two-space indentation. A node reached more than once is printed in full the first time as
// `xN:=UOp(...)` and as ` xN` afterwards, N being tinygrad's number for it (its order of discovery in a
// depth-first walk). No trailing newline. A non-None tag (uopc's addition; v0.10.3 has none) prints as `,
// tag=...` after the arg. Iterative: deep graphs do not overflow the stack (though the output grows with
// depth times node count).
std::string PrintUOpTree(const UOp* root);

// Python's str() of an arg (repr() except that a string prints without quotes).
std::string PythonStr(const Arg& arg);
// Python's str() of a node's arg: like PythonStr, but CONST/VCONST values are read through the node's dtype
// (so a uint64 constant stored as a negative bit pattern prints as its unsigned value).
std::string NodeArgStr(const UOp* u);
// tinygrad's UOp.argstr(): repr() of the arg (with CONST/VCONST read through the dtype); REDUCE_AXIS args
// print as `(Ops.ADD, (0, 1))`, the str() of each element joined.
std::string NodeArgRepr(const UOp* u);

}  // namespace uopc

#endif  // UOPC_UOP_PRINT_H_
