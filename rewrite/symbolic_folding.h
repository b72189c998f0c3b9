// The algorithms behind the symbolic rules that do more than one pattern can say: division and modulo folding
// using value ranges, comparison folding, unrolled-division folding, and the canonical operand order.
//
// They follow tinygrad v0.10.3's codegen/symbolic.py, with one deliberate difference: every result is correct
// under C semantics (`//` truncates toward zero, `%` takes the dividend's sign). tinygrad derives several
// folds with Python's floor semantics and applies them to negative dividends and divisors, where C disagrees;
// here those folds are applied only where both semantics agree (see the comments at each guard). Each
// function returns a null UOpPtr for "no rewrite".
#ifndef UOPC_REWRITE_SYMBOLIC_FOLDING_H_
#define UOPC_REWRITE_SYMBOLIC_FOLDING_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/numeric/int128.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "uop/uop.h"

namespace uopc {

// The constant `op` gives on constant operands of `operand_dtype`, as tinygrad folds constants (exec_alu with
// truncate_output=False): on floats in double precision, so a float32 constant may hold a value float32
// cannot represent (the C compiler rounds the literal); integers wrap to their dtype as the C program would,
// except int32 under IntegerSemantics::kExact (symbolic.h), which folds exactly (within int64).
absl::StatusOr<ConstValue> FoldConstantOp(Ops op, DType dtype, absl::Span<const ConstValue> operands,
                                          DType operand_dtype);

// Builders for the right-hand sides of the symbolic rules that do at once what the rules would do next to the
// node they build: `a op b` on two scalar constants is the folded constant (exec_alu, as the constant-folding
// rule computes it), and integer `x + 0` and `x * 1` are x and `x * 0` is 0. The engine rewrites each
// replacement to its fixpoint, sources first, and that rewrite of the built node would end exactly there, so
// the final graph is the same with fewer nodes built, interned, visited and freed. Only for rule sets that
// include symbolic_simple. `op` is ADD, MUL, MAX, AND, OR or XOR.
UOpPtr FoldedAlu(Ops op, const UOpPtr& a, const UOpPtr& b);
// a * -1 (logical not for bool), folded the same way.
UOpPtr FoldedNeg(const UOpPtr& a);
inline UOpPtr FoldedAdd(const UOpPtr& a, const UOpPtr& b) { return FoldedAlu(Ops::ADD, a, b); }
inline UOpPtr FoldedMul(const UOpPtr& a, const UOpPtr& b) { return FoldedAlu(Ops::MUL, a, b); }

// Python's `//` on exact integers (rounds toward negative infinity), for compile-time arithmetic on constants
// where the identity is exact. y != 0.
absl::int128 FloorDiv(absl::int128 x, absl::int128 y);

// The terms of a chain of `sep` ops, left to right (tinygrad's split_uop).
using TermList = absl::InlinedVector<const UOp*, 8>;
TermList SplitUOp(const UOp* x, Ops sep);

// The largest known integer dividing x (tinygrad's const_factor).
absl::int128 ConstFactor(const UOp* x);
// x / v when that is exact and easy to see (tinygrad's divides), else null.
UOpPtr Divides(const UOp* x, absl::int128 v);

// x // y or x % y simplified using the ranges of x and y.
UOpPtr DivAndModFolding(const UOp* x, const UOp* y, Ops which, bool split_rem = false);
// x//d + (x+1)//d + ... + (x+d-1)//d -> x (times fac).
UOpPtr FoldUnrolledDivs(const UOp* divs, absl::int128 denominator, absl::int128 fac = 1);
// x < c where x is a sum whose non-constant part shares a factor with c.
UOpPtr LtFolding(const UOp* x, absl::int128 c);
// a0*x0 + a1*x1 + ... (ai > 0, xi >= 0) -> x0 + x1 + ..., or null.
UOpPtr CanonicalizeSimplex(const UOp* x);

// tinygrad's `tuplize` order: (op, arg, dtype, sources...) compared lexicographically, with Python's
// comparison of the args and dtypes. Used to put commutative operands in a canonical order. Returns <0, 0 or
// >0; 0 also where Python's `<` is false both ways (the first unequal item is two dtypes Python does not
// order, such as two pointers to one type).
int CompareTuplize(const UOp* a, const UOp* b);

// b ** e on floats as exp2/log2 with tinygrad's sign and zero fixes (transcendental.xpow).
UOpPtr XPow(const UOpPtr& base, const UOpPtr& exponent);
// b ** e on integers and bools, exact and wrapped to the dtype as ExecAlu computes it (uopc's addition: XPow
// needs floats). Square-and-multiply over every bit of e; a negative e gives C's truncated 1 / b ** -e.
UOpPtr IntPow(const UOpPtr& base, const UOpPtr& exponent);
// threefry2x32 on uint64 lanes, written with 32-bit ops (tinygrad's threefry2x32 rewrite).
UOpPtr Threefry2x32(const UOpPtr& x, const UOpPtr& key);

}  // namespace uopc

#endif  // UOPC_REWRITE_SYMBOLIC_FOLDING_H_
