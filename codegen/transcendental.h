// Polynomial fallbacks for EXP2, LOG2 and SIN on targets that lack them (tinygrad v0.10.3's
// codegen/transcendental.py, after SLEEF): each builds, from a float16/32/64 UOp `d`, a graph of integer and
// float arithmetic, bit casts and selects with about 1 ULP of error. The final rewrite puts them in place of
// the ops the renderer does not support; the graphs are built with the same operand order as tinygrad's, so
// the rewritten kernels equal tinygrad's node for node.
#ifndef UOPC_CODEGEN_TRANSCENDENTAL_H_
#define UOPC_CODEGEN_TRANSCENDENTAL_H_

#include "uop/dtype.h"
#include "uop/uop.h"

namespace uopc {

// Whether `dt` (its scalar type) is one the fallbacks handle: float16, float32, float64.
bool IsTranscendentalDType(DType dt);

// exp2(d), log2(d), sin(d). `d` must have a dtype IsTranscendentalDType accepts (the rules that call these
// match only those). XSin with `fast` assumes |d| <= switch_over and uses only the Cody-Waite reduction.
// (tinygrad's xpow, which sym also uses, is XPow in rewrite/symbolic_folding.h.)
UOpPtr XExp2(const UOpPtr& d);
UOpPtr XLog2(const UOpPtr& d);
UOpPtr XSin(const UOpPtr& d, bool fast = false, double switch_over = 30.0);

}  // namespace uopc

#endif  // UOPC_CODEGEN_TRANSCENDENTAL_H_
