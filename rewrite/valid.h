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

#include "absl/types/span.h"
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

// `uop` simplified on the assumption that `valid` holds; `uop` itself when nothing simplifies or the valid
// has a clause that cannot be parsed; nullptr when the valid can never hold (some expr's range is empty).
UOpPtr UopGivenValid(const UOpPtr& valid, const UOpPtr& uop);

// `valid` with each clause simplified given the others (in tinygrad's order); nullptr when nothing changed.
// Then, beyond tinygrad: a clause whose divisions and modulos have dividends the other clauses keep
// non-negative (NonNegativeGiven) is simplified with floor-division identities (ScopedFloorDivision), which
// tinygrad applies to every dividend; C's `//` and `%` agree with them there.
UOpPtr SimplifyValid(const UOpPtr& valid);

// True when the integer expression x is at least 0 wherever every clause of `given` holds. Clauses of
// ParseValid's forms bound their expressions (others are ignored); a part of x that is a multiple of a
// bounded expression takes that expression's bounds, every other term its own range, so
// 56*a + 56*b + 4*c - 113 is non-negative given a + b >= 2 and c >= 1. Sound, not complete: false when x
// is not a sum of constant multiples of terms, or the bound is not found.
bool NonNegativeGiven(const UOpPtr& x, absl::Span<const UOpPtr> given);

}  // namespace uopc

#endif  // UOPC_REWRITE_VALID_H_
