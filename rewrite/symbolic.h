// The symbolic simplifier: tinygrad v0.10.3's rule sets, correct under C semantics.
//
//   SymbolicSimple()  self folding, zero folding, constant folding (exec_alu), casts, pow   (symbolic_simple)
//   Symbolic()        + canonical operand order, term combining, div/mod folding by range, lt folding, where
//                     folding, GEP pushing                                                 (symbolic)
//   SymbolicFlat()    + distributing constants over sums                                   (symbolic_flat)
//   Sym()             + vectorize/GEP, load/store, threefry, pow expansion, reduce folds   (sym; codegen)
//
// Where tinygrad's rules assume Python's floor division, these rules add the guards that make them right for
// C's truncating `//` and `%` (see rewrite/symbolic_folding.h); everywhere else they give tinygrad's results.
#ifndef UOPC_REWRITE_SYMBOLIC_H_
#define UOPC_REWRITE_SYMBOLIC_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

// How int32 arithmetic is read while it is simplified.
//
// A kernel's own int32 arithmetic is C's: it wraps around, so a fold that is exact only on unbounded integers
// (splitting a sum whose value leaves int32 inside a mod, distributing a product past int32) would change
// what the program computes, and those folds decline. Index arithmetic (the index and valid expressions a
// ShapeTracker builds) is exact instead: its nodes are int32 only until the indexing pass gives every node
// whose range leaves int32 the type int64 (tinygrad's pm_upcast), so no value it describes ever wraps. There
// the rules fold as tinygrad folds them, with Python's unbounded integers: a large arange's valid, for one,
// reduces to a small sum the reduce collapse can solve. Only int32, the dtype the indexing pass widens, is
// affected.
enum class IntegerSemantics { kWrapping, kExact };

// The semantics the symbolic rules use on this thread (kWrapping unless a scope below says otherwise).
IntegerSemantics CurrentIntegerSemantics();
// True when `dtype`'s arithmetic is exact on this thread: kExact is in force and dtype is int32.
bool ExactIntegers(DType dtype);

// Sets the semantics for the rewrites run on this thread while it lives; scopes nest.
class ScopedIntegerSemantics {
 public:
  explicit ScopedIntegerSemantics(IntegerSemantics semantics);
  ~ScopedIntegerSemantics();
  ScopedIntegerSemantics(const ScopedIntegerSemantics&) = delete;
  ScopedIntegerSemantics& operator=(const ScopedIntegerSemantics&) = delete;

 private:
  IntegerSemantics previous_;
};

// While it lives, the division and modulo folds on this thread may use Python's floor-division identities on
// dividends whose range reaches below zero, as tinygrad does everywhere. Only for an expression whose every
// dividend is known to be non-negative wherever its value matters (SimplifyValid sets it for a clause of a
// valid whose dividends the other clauses keep non-negative): there C's `//` and `%` agree with floor's.
class ScopedFloorDivision {
 public:
  ScopedFloorDivision();
  ~ScopedFloorDivision();
  ScopedFloorDivision(const ScopedFloorDivision&) = delete;
  ScopedFloorDivision& operator=(const ScopedFloorDivision&) = delete;

 private:
  bool previous_;
};
// True inside a ScopedFloorDivision on this thread.
bool FloorDivisionAssumed();

const PatternMatcher& SymbolicSimple();
const PatternMatcher& Commutative();
const PatternMatcher& GepPushing();
const PatternMatcher& Symbolic();
const PatternMatcher& SymbolicFlat();
const PatternMatcher& Sym();

// UOp.simplify(): graph_rewrite with Symbolic().
UOpPtr Simplify(const UOpPtr& u);
// sym_infer: the value of u with its variables (DEFINE_VAR, by name) bound to `values`. Evaluated on the
// graph itself with exec_alu (not on a simplified form, so it cannot inherit a simplification bug). Errors
// for unbound variables or ops that are not integer/bool arithmetic.
absl::StatusOr<ConstValue> SymInfer(const UOp* u, const absl::flat_hash_map<std::string, int64_t>& values);

}  // namespace uopc

#endif  // UOPC_REWRITE_SYMBOLIC_H_
