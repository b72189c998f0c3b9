// The symbolic simplifier: tinygrad v0.10.3's rule sets, correct under C semantics.
//
//   SymbolicSimple()  self folding, zero folding, constant folding (exec_alu), casts, pow   (symbolic_simple)
//   Symbolic()        + canonical operand order, term combining, div/mod folding by range, lt folding, where
//                     folding, GEP pushing                                                 (symbolic)
//   SymbolicFlat()    + distributing constants over sums                                   (symbolic_flat)
//   Sym()             + vectorize/GEP, load/store, threefry, pow expansion, reduce folds   (sym, used by codegen)
//
// Where tinygrad's rules assume Python's floor division, these rules add the guards that make them right for C's
// truncating `//` and `%` (see rewrite/symbolic_folding.h); everywhere else they give tinygrad's results.
#ifndef UOPC_REWRITE_SYMBOLIC_H_
#define UOPC_REWRITE_SYMBOLIC_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

const PatternMatcher& SymbolicSimple();
const PatternMatcher& Commutative();
const PatternMatcher& GepPushing();
const PatternMatcher& Symbolic();
const PatternMatcher& SymbolicFlat();
const PatternMatcher& Sym();

// UOp.simplify(): graph_rewrite with Symbolic().
UOpPtr Simplify(const UOpPtr& u);
// sym_infer: the value of u with its variables (DEFINE_VAR, by name) bound to `values`. Evaluated on the graph
// itself with exec_alu (not on a simplified form, so it cannot inherit a simplification bug). Errors for unbound
// variables or ops that are not integer/bool arithmetic.
absl::StatusOr<ConstValue> SymInfer(const UOp* u, const absl::flat_hash_map<std::string, int64_t>& values);

}  // namespace uopc

#endif  // UOPC_REWRITE_SYMBOLIC_H_
