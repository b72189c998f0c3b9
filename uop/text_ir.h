// The textual IR: a UOp graph as text, one node per line in SSA form, and back.
//
//   %0 = DEFINE_VAR : int32 arg=('a', 0, 8)
//   %1 = CONST : int32 arg=2
//   %2 = MUL : int32 (%0, %1)
//   return %2
//
// Every node comes before its users; args use Python-repr-like literals (None, 3, -0.0, inf, True, 'str',
// (1,), dtypes.float32.vec(4), Ops.ADD, payloads such as ShapeTracker(...)). docs/ir.md is the full grammar.
// This is what `.uop` golden files, the uopc CLI and FileCheck tests read and write, the way LLVM tests use
// `.ll` text.
//
// Round trips are exact: ParseIr(PrintIr(g)) returns the very same interned nodes (pointer equality) for
// every dtype and every arg kind (doubles keep their bits, uint64 constants >= 2^63 included), and PrintIr of
// a parsed graph is the canonical text. The parser only builds nodes; it does not type-check them (run the
// spec verifier for that). Malformed text gets an InvalidArgumentError "line:col: expected ..., got ..."
// (1-based), never a crash; nothing in either direction recurses per node, so million-node chains are fine.
#ifndef UOPC_UOP_TEXT_IR_H_
#define UOPC_UOP_TEXT_IR_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/dtype.h"
#include "uop/uop.h"

namespace uopc {

// The canonical text of the graph under `root`, ending in `return %k`.
std::string PrintIr(const UOp* root);
// Several graphs in one text: for each root, the nodes not printed yet, then `return %k`. Shared nodes are
// printed once.
std::string PrintIr(absl::Span<const UOpPtr> roots);

// The roots of the text, in order: the values named by every `return` statement or, in a text without
// `return`, its last node (an empty text has no roots).
absl::StatusOr<std::vector<UOpPtr>> ParseIr(absl::string_view text);
// As ParseIr, for a text with exactly one root.
absl::StatusOr<UOpPtr> ParseIrSingle(absl::string_view text);

// The IR spelling of a dtype: int32, float32.vec(4), float32.ptr(16, local=True), bool.ptr(-1).vec(2).
std::string DTypeToIr(DType dtype);

}  // namespace uopc

#endif  // UOPC_UOP_TEXT_IR_H_
