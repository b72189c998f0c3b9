// Defined integer division and modulo on every device: a graph pass that guards IDIV and MOD whose divisor
// may be 0, or -1 with a dividend that may be its dtype's minimum.
//
// C, LLVM IR and OpenCL leave `x / 0`, `x % 0` and `INT_MIN / -1` undefined, and x86 traps on them (SIGFPE).
// uopc defines them as tinygrad's Python device and exec_alu (so INTERP and constant folding) do:
//
//   x // 0 = 0      x % 0 = x      MIN // -1 = MIN (it wraps)      MIN % -1 = 0
//
// The guard divides by 1 instead of a divisor that would trap, which gives the last two directly, and selects
// 0 (IDIV) or x (MOD) where the divisor is 0:
//
//   x // y  ->  (y != 0).where(x // ok.where(y, 1), 0)      ok = (y != 0) & ((y != -1) | (x != MIN))
//   x %  y  ->  (y != 0).where(x %  ok.where(y, 1), x)
//
// Only divisions whose divisor's range (vmin/vmax) includes 0, or -1 together with a dividend range that
// includes MIN, are guarded, and only with the conditions their ranges allow: the index arithmetic codegen
// makes divides by positive constants and stays as it is, so tinygrad's kernels render byte for byte.
#ifndef UOPC_CODEGEN_INT_DIVISION_GUARD_H_
#define UOPC_CODEGEN_INT_DIVISION_GUARD_H_

#include "uop/uop.h"

namespace uopc {

// `sink` with every IDIV and MOD that could trap replaced by its guarded form (the graph itself when none).
UOpPtr GuardIntDivision(const UOpPtr& sink);

}  // namespace uopc

#endif  // UOPC_CODEGEN_INT_DIVISION_GUARD_H_
