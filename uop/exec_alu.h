// ExecAlu: what every ALU op, CAST and BITCAST computes on constants of every scalar dtype.
//
// This is the single source of truth for op semantics: constant folding, the interpreter device and every
// fuzzer call it, and the C-style renderers must produce kernels that agree with it. The semantics are those
// of the C code tinygrad v0.10.3 renders, which are also those of its Python `exec_alu` (compute exactly,
// then truncate to the dtype), with every case C leaves undefined given a definition:
//
// Operands. Each value operand is first converted to its dtype (see ExecCast: a value outside the dtype
// wraps or rounds, a float given for an integer dtype truncates), so callers may pass Python-like numbers.
// `dtype` is the OUTPUT dtype. The operands have the same dtype, except:
//   - CMPLT, CMPNE: `dtype` must be bool; the operands' dtype is `operand_dtype`. When it is absent, the
//     operands are compared as exact numbers with Python semantics (right whenever they are already values
//     of one dtype).
//   - WHERE: operand 0 is the condition, read as Python's bool() (nonzero; NaN is true); operands 1 and 2
//     have `dtype`.
//   - CAST, BITCAST: `operand_dtype` is the source dtype. For CAST it may be absent: the operand's exact
//     value is converted. BITCAST requires it.
//   Otherwise `operand_dtype`, when given, must equal `dtype`.
//
// Integers (int8..uint64; bool behaves as the integers 0 and 1, and a nonzero result is true):
//   - ADD SUB MUL NEG MULACC SHL POW wrap modulo 2^bits (two's complement); no signed overflow is undefined.
//   - IDIV and MOD truncate toward zero, as C does: -7//2 = -3, -7%2 = -1, 7%-2 = 1; INT_MIN//-1 wraps to
//     INT_MIN and INT_MIN%-1 is 0. Division by zero, as tinygrad's cdiv/cmod: x//0 = 0 and x%0 = x.
//   - SHL/SHR by n: x * 2^n (wrapped) and floor(x / 2^n) (arithmetic for signed, logical for unsigned).
//     A count >= the bit width follows the same formulas: SHL gives 0; SHR gives 0, or -1 for a negative x.
//     A negative count is an InvalidArgument error.
//   - POW: the exact power, wrapped. A negative exponent gives the C-truncated 1/x^-n: 1 for x=1, +-1 for
//     x=-1, and 0 otherwise (x=0 included, like x//0).
//   - XOR OR AND act on the two's complement bits; MAX, CMPLT, CMPNE compare exactly.
//   - THREEFRY: threefry2x32 (20 rounds, the Random123/JAX function tinygrad uses for its RNG): operand 0
//     is the counter, operand 1 the key, each a uint64 holding two uint32 words (low word first); dtype
//     must be uint64.
//   - EXP2 LOG2 SIN SQRT RECIP FDIV are float-only: an error on integers and bool.
//
// Floats (float16, bfloat16, float32, float64): IEEE 754, NaN/inf/-0 included.
//   - Every op rounds its result to the dtype once, to nearest-even, overflowing to +-inf: float32
//     arithmetic is float32 arithmetic (ADD SUB MUL FDIV SQRT are correctly rounded, as in C), and half and
//     bfloat16 likewise. MULACC is unfused: round(round(a*b) + c).
//   - EXP2 LOG2 SIN POW are computed in double precision and rounded once to the dtype (a C library's
//     float32 sinf may differ in the last place). LOG2(+-0) = -inf, LOG2(x<0) = nan, SQRT(x<0) = nan,
//     SQRT(-0) = -0, SIN(+-inf) = nan, RECIP(+-0) = +-inf, x/+-0 = +-inf by the signs, 0/0 = nan. POW is
//     C's pow() (pow(x, 0) = 1 even for a NaN x; pow(0, y<0) = inf).
//   - MAX(a, b) is `a < b ? b : a`, exactly what tinygrad's C renderers emit and Python's max() does: a
//     NaN in `a` is returned, a NaN in `b` is not (MAX(nan, 1) = nan, MAX(1, nan) = 1), and
//     MAX(-0.0, 0.0) = -0.0. So MAX is commutative only up to NaNs and the sign of zero.
//   - CMPLT is false and CMPNE true when either operand is NaN.
//   - SHL SHR IDIV MOD XOR OR AND THREEFRY are integer-only: an error on floats.
//
// Vectors: ExecAlu takes scalar dtypes only; ExecAluVector applies an op elementwise. Pointer and void
// dtypes are errors, and so are wrong operand counts and ops other than ALU/CAST/BITCAST; nothing here
// crashes or has undefined behaviour on any input.
#ifndef UOPC_UOP_EXEC_ALU_H_
#define UOPC_UOP_EXEC_ALU_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "uop/dtype.h"
#include "uop/ops.h"

namespace uopc {

// Computes `op` (an op of groups::kALU, or CAST or BITCAST) on scalar operands; `dtype` is the output dtype.
// See the file comment for the operand dtypes and every op's semantics.
absl::StatusOr<ConstValue> ExecAlu(Ops op, DType dtype, absl::Span<const ConstValue> operands,
                                   std::optional<DType> operand_dtype = std::nullopt);

// ExecAlu elementwise over vectors: `dtype` (and `operand_dtype`, if given) may be vectors of width n; each
// operand holds n values or a single value used for every lane (as tinygrad's exec_alu broadcasts scalars).
// Returns the n results.
absl::StatusOr<std::vector<ConstValue>> ExecAluVector(Ops op, DType dtype,
                                                      absl::Span<const std::vector<ConstValue>> operands,
                                                      std::optional<DType> operand_dtype = std::nullopt);

// C's conversion of a value of dtype `from` to dtype `to` (both scalar). `v` is first made a value of `from`.
//   - to bool: nonzero (NaN is true).
//   - integer or bool to float: rounded once to nearest-even (int64 to float32 does not double-round).
//   - float to float: rounded to nearest-even, overflowing to +-inf.
//   - float to integer, which C leaves undefined out of range: truncate toward zero, then wrap modulo 2^bits
//     (as tinygrad's truncate does with Python's int()); NaN and +-inf give 0. -1.5 to uint8 is 255.
//   - integer to integer: wrap modulo 2^bits.
absl::StatusOr<ConstValue> ExecCast(ConstValue v, DType from, DType to);

// Reinterprets the bits of a value of scalar dtype `from` as scalar dtype `to` of the same itemsize (an error
// otherwise). bool is one byte holding 0 or 1; any nonzero byte read as bool is true. NaN payloads survive
// except that a signaling NaN may come back quiet.
absl::StatusOr<ConstValue> ExecBitcast(ConstValue v, DType from, DType to);

}  // namespace uopc

#endif  // UOPC_UOP_EXEC_ALU_H_
