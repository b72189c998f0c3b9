// Simplifying an expression under a validity condition (tinygrad v0.10.3's simplify_valid / uop_given_valid).
//
// A `valid` is a bool UOp that is an AND of clauses of the form `expr < c` or `(expr < c) != true` (that is,
// expr >= c). Knowing that the valid holds narrows each clause's expr to a range; UopGivenValid rewrites an
// index expression with those narrower ranges, which removes the divisions and modulos that padding and
// shrinking leave behind. ShapeTracker's to_indexed_uops and the codegen's load/store rules use these.
#ifndef UOPC_REWRITE_VALID_H_
#define UOPC_REWRITE_VALID_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <optional>
#include <vector>

#include "uop/uop.h"

namespace uopc {

// The operands of a left-leaning or balanced chain of `sep` (tinygrad's split_uop): for sep=ADD,
// `(a + b) + c` gives {a, b, c}. A node of another op is its own single operand.
std::vector<UOpPtr> SplitUop(const UOpPtr& x, Ops sep);

// One clause of a valid: `expr <= bound` when is_upper, else `expr >= bound`.
struct ValidClause {
  UOpPtr expr;
  bool is_upper = false;
  int64_t bound = 0;
};
// nullopt when `clause` has neither form (tinygrad raises; callers then leave the expression alone).
std::optional<ValidClause> ParseValid(const UOpPtr& clause);

// `uop` simplified on the assumption that `valid` holds; `uop` itself when nothing simplifies or the valid has
// a clause that cannot be parsed; nullptr when the valid can never hold (some expr's range is empty).
UOpPtr UopGivenValid(const UOpPtr& valid, const UOpPtr& uop);

// `valid` with each clause simplified given the others (in tinygrad's order); nullptr when nothing changed.
UOpPtr SimplifyValid(const UOpPtr& valid);

}  // namespace uopc

#endif  // UOPC_REWRITE_VALID_H_
