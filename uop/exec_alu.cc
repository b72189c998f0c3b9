#include "uop/exec_alu.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using absl::int128;
using absl::uint128;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

template <typename To, typename From>
To BitCast(const From& from) {
  static_assert(sizeof(To) == sizeof(From));
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

std::string Where(Ops op, DType dtype) {
  return absl::StrCat("ExecAlu(", OpName(op), ", ", dtype.ToString(), ")");
}

// Why `dt` is not a scalar value dtype, or nullptr when it is one.
const char* NotScalar(DType dt) {
  if (dt.is_ptr()) return "a pointer dtype";
  if (dt.count() != 1) return "a vector dtype (use ExecAluVector)";
  if (dt.is_void()) return "void";
  return nullptr;
}

// C's float-to-integer conversion made total: truncate toward zero, wrap modulo 2^bits; NaN and inf give 0.
ConstValue FloatToInt(double d, DType dt) {
  if (!std::isfinite(d)) return Truncate(ConstValue::Int(0), dt);
  double t = std::trunc(d);
  if (std::fabs(t) < 0x1p63) return Truncate(ConstValue::Int(static_cast<int64_t>(t)), dt);
  // |t| >= 2^63 is m * 2^(e-53) with a 53-bit integer m and e >= 64; keep it modulo 2^64.
  int e;
  double m = std::frexp(std::fabs(t), &e);
  uint64_t mant = static_cast<uint64_t>(std::ldexp(m, 53));
  int shift = e - 53;
  uint64_t low = shift >= 64 ? 0 : mant << shift;
  if (t < 0) low = 0 - low;
  return Truncate(ConstValue::Int(int128(low)), dt);
}

// The value `v` (of any kind) converted to the scalar dtype `to`.
ConstValue Convert(ConstValue v, DType to) {
  if (to.is_bool()) return ConstValue::Bool(v.AsBool());
  if (to.is_int()) return v.is_float() ? FloatToInt(v.f(), to) : Truncate(ConstValue::Int(v.i()), to);
  return v.is_float() ? Truncate(ConstValue::Float(v.f()), to) : Truncate(ConstValue::Int(v.i()), to);
}

// ---- bit patterns ----

// The bits of `v`, a value of the scalar dtype `dt`, in the low itemsize bytes.
uint64_t BitsOf(ConstValue v, DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kBool:
      return v.AsBool() ? 1 : 0;
    case ScalarType::kFloat16:
      return FloatToHalfBits(static_cast<float>(v.f()));
    case ScalarType::kBFloat16:
      return FloatToBFloat16Bits(static_cast<float>(v.f()));
    case ScalarType::kFloat32:
      return BitCast<uint32_t>(static_cast<float>(v.f()));
    case ScalarType::kFloat64:
      return BitCast<uint64_t>(v.f());
    default: {
      uint64_t low = absl::Uint128Low64(static_cast<uint128>(v.i()));
      int bits = dt.bits();
      return bits == 64 ? low : low & ((uint64_t{1} << bits) - 1);
    }
  }
}

ConstValue FromBits(uint64_t bits, DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kBool:
      return ConstValue::Bool(bits != 0);
    case ScalarType::kFloat16:
      return ConstValue::Float(HalfBitsToFloat(static_cast<uint16_t>(bits)));
    case ScalarType::kBFloat16:
      return ConstValue::Float(BFloat16BitsToFloat(static_cast<uint16_t>(bits)));
    case ScalarType::kFloat32:
      return ConstValue::Float(BitCast<float>(static_cast<uint32_t>(bits)));
    case ScalarType::kFloat64:
      return ConstValue::Float(BitCast<double>(bits));
    default:
      return Truncate(ConstValue::Int(int128(bits)), dt);
  }
}

// ---- integer ops ----

uint64_t Low64(int128 x) { return absl::Uint128Low64(static_cast<uint128>(x)); }

// floor(x / 2^n) for 0 <= n < 64 without relying on the shift of a negative number.
int128 FloorShift(int128 x, int n) { return x >= 0 ? x >> n : -((-x - 1) >> n) - 1; }

uint32_t RotL(uint32_t x, int r) { return (x << r) | (x >> (32 - r)); }

// Threefry-2x32 with 20 rounds (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3"), the counter
// and key packed low word first, the result packed the same way; the variant tinygrad lowers Ops.THREEFRY to.
uint64_t Threefry2x32(uint64_t counter, uint64_t key) {
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  const uint32_t k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  const uint32_t schedule[3] = {k0, k1, k0 ^ k1 ^ 0x1BD11BDAu};
  uint32_t x0 = static_cast<uint32_t>(counter) + schedule[0];
  uint32_t x1 = static_cast<uint32_t>(counter >> 32) + schedule[1];
  for (uint32_t i = 0; i < 5; ++i) {
    for (int r : kRotations[i % 2]) {
      x0 += x1;
      x1 = RotL(x1, r) ^ x0;
    }
    x0 += schedule[(i + 1) % 3];
    x1 += schedule[(i + 2) % 3] + i + 1;
  }
  return (static_cast<uint64_t>(x1) << 32) | x0;
}

absl::StatusOr<ConstValue> IntOp(Ops op, DType dtype, const ConstValue* v) {
  const int128 a = v[0].i();
  const int128 b = groups::kUnary.contains(op) ? 0 : v[1].i();
  auto wrap = [&](uint64_t r) { return Truncate(ConstValue::Int(int128(r)), dtype); };
  auto exact = [&](int128 r) { return Truncate(ConstValue::Int(r), dtype); };
  auto negative_count = [&] {
    return absl::InvalidArgumentError(
        absl::StrCat(Where(op, dtype), ": negative shift count ", v[1].ToString()));
  };
  switch (op) {
    case Ops::NEG:
      return wrap(0 - Low64(a));
    case Ops::ADD:
      return wrap(Low64(a) + Low64(b));
    case Ops::SUB:
      return wrap(Low64(a) - Low64(b));
    case Ops::MUL:
      return wrap(Low64(a) * Low64(b));
    case Ops::MULACC:
      return wrap(Low64(a) * Low64(b) + Low64(v[2].i()));
    case Ops::XOR:
      return wrap(Low64(a) ^ Low64(b));
    case Ops::OR:
      return wrap(Low64(a) | Low64(b));
    case Ops::AND:
      return wrap(Low64(a) & Low64(b));
    case Ops::IDIV:
      return exact(CDiv(a, b));
    case Ops::MOD:
      return exact(CMod(a, b));
    case Ops::MAX:
      return exact(a < b ? b : a);
    case Ops::SHL:
      if (b < 0) return negative_count();
      return wrap(b >= 64 ? 0 : Low64(a) << static_cast<int>(b));
    case Ops::SHR:
      if (b < 0) return negative_count();
      return exact(b >= 64 ? (a < 0 ? -1 : 0) : FloorShift(a, static_cast<int>(b)));
    case Ops::POW: {
      if (b < 0) return exact(a == 1 ? 1 : a == -1 ? ((Low64(b) & 1) != 0 ? -1 : 1) : 0);
      uint64_t base = Low64(a), result = 1;
      for (uint64_t e = Low64(b); e != 0; e >>= 1) {
        if ((e & 1) != 0) result *= base;
        base *= base;
      }
      return wrap(result);
    }
    case Ops::THREEFRY:
      return wrap(Threefry2x32(Low64(a), Low64(b)));
    default:
      break;
  }
  return absl::InvalidArgumentError(absl::StrCat(Where(op, dtype), ": not defined on integers"));
}

// ---- float ops ----

// IEEE division with the zero divisor spelled out, so no sanitizer flags it.
double Divide(double x, double y) {
  if (y != 0) return x / y;
  if (std::isnan(x) || x == 0) return kNaN;
  return std::signbit(x) != std::signbit(y) ? -kInf : kInf;
}

absl::StatusOr<ConstValue> FloatOp(Ops op, DType dtype, const ConstValue* v) {
  const double a = v[0].f();
  const double b = groups::kUnary.contains(op) ? 0.0 : v[1].f();
  double r;
  switch (op) {
    case Ops::NEG:
      r = -a;
      break;
    case Ops::ADD:
      r = a + b;
      break;
    case Ops::SUB:
      r = a - b;
      break;
    case Ops::MUL:
      r = a * b;
      break;
    case Ops::FDIV:
      r = Divide(a, b);
      break;
    case Ops::RECIP:
      r = Divide(1.0, a);
      break;
    case Ops::MULACC:
      r = Truncate(ConstValue::Float(a * b), dtype).f() + v[2].f();
      break;
    case Ops::MAX:
      r = a < b ? b : a;
      break;
    case Ops::EXP2:
      r = std::exp2(a);
      break;
    case Ops::LOG2:
      r = a > 0 ? std::log2(a) : a == 0 ? -kInf : kNaN;
      break;
    case Ops::SQRT:
      r = a >= 0 ? std::sqrt(a) : kNaN;
      break;
    case Ops::SIN:
      r = std::isinf(a) ? kNaN : std::sin(a);
      break;
    case Ops::POW:
      r = std::pow(a, b);
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(Where(op, dtype), ": not defined on floats"));
  }
  return Truncate(ConstValue::Float(r), dtype);
}

int Arity(Ops op) {
  if (groups::kUnary.contains(op)) return 1;
  if (groups::kBinary.contains(op)) return 2;
  if (groups::kTernary.contains(op)) return 3;
  return 1;  // CAST, BITCAST
}

// Checks both dtypes of a conversion; `name` is the function reporting.
absl::Status CheckConversion(absl::string_view name, DType from, DType to) {
  for (DType dt : {from, to}) {
    if (const char* why = NotScalar(dt)) {
      return absl::InvalidArgumentError(
          absl::StrCat(name, "(", from.ToString(), " -> ", to.ToString(), "): ", dt.ToString(), " is ", why));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConstValue> ExecCast(ConstValue v, DType from, DType to) {
  UOPC_RETURN_IF_ERROR(CheckConversion("ExecCast", from, to));
  return Convert(Convert(v, from), to);
}

absl::StatusOr<ConstValue> ExecBitcast(ConstValue v, DType from, DType to) {
  UOPC_RETURN_IF_ERROR(CheckConversion("ExecBitcast", from, to));
  if (from.itemsize() != to.itemsize()) {
    return absl::InvalidArgumentError(absl::StrCat("ExecBitcast(", from.ToString(), " -> ", to.ToString(),
                                                   "): itemsizes differ (", from.itemsize(), " and ",
                                                   to.itemsize(), " bytes)"));
  }
  return FromBits(BitsOf(Convert(v, from), from), to);
}

absl::StatusOr<ConstValue> ExecAlu(Ops op, DType dtype, absl::Span<const ConstValue> operands,
                                   std::optional<DType> operand_dtype) {
  // Messages are built only on failure: this function is on the constant folder's and interpreter's hot path.
  auto error = [&](const auto&... parts) {
    return absl::InvalidArgumentError(absl::StrCat(Where(op, dtype), ": ", parts...));
  };
  const bool is_cast = op == Ops::CAST || op == Ops::BITCAST;
  if (!is_cast && !groups::kALU.contains(op)) return error("not an ALU, CAST or BITCAST op");
  if (static_cast<int>(operands.size()) != Arity(op)) {
    return error("needs ", Arity(op), " operands, got ", operands.size());
  }
  if (const char* why = NotScalar(dtype)) return error("the dtype is ", why);
  if (operand_dtype) {
    if (const char* why = NotScalar(*operand_dtype)) {
      return error("the operand dtype ", operand_dtype->ToString(), " is ", why);
    }
  }

  if (op == Ops::BITCAST) {
    if (!operand_dtype) return error("BITCAST needs the operand dtype");
    return ExecBitcast(operands[0], *operand_dtype, dtype);
  }
  if (op == Ops::CAST)
    return Convert(operand_dtype ? Convert(operands[0], *operand_dtype) : operands[0], dtype);

  if (groups::kComparison.contains(op)) {
    if (!dtype.is_bool()) return error("a comparison produces bool");
    ConstValue a = operands[0], b = operands[1];
    if (operand_dtype) {
      a = Convert(a, *operand_dtype);
      b = Convert(b, *operand_dtype);
    }
    return ConstValue::Bool(op == Ops::CMPLT ? a < b : a != b);
  }
  if (operand_dtype && *operand_dtype != dtype) {
    return error("the operand dtype ", operand_dtype->ToString(), " differs from the dtype");
  }
  if (op == Ops::WHERE) return Convert(operands[0].AsBool() ? operands[1] : operands[2], dtype);

  static constexpr OpSet kFloatOnly{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIP, Ops::FDIV};
  static constexpr OpSet kIntOnly{Ops::SHL, Ops::SHR, Ops::IDIV, Ops::MOD,
                                  Ops::XOR, Ops::OR,  Ops::AND,  Ops::THREEFRY};
  if (dtype.is_float() && kIntOnly.contains(op)) return error("an integer-only op on a float dtype");
  if (!dtype.is_float() && kFloatOnly.contains(op)) return error("a float-only op on a non-float dtype");
  if (op == Ops::THREEFRY && dtype != dtypes::kUInt64) return error("THREEFRY is defined on uint64 only");

  ConstValue values[3];
  for (size_t i = 0; i < operands.size(); ++i) values[i] = Convert(operands[i], dtype);
  return dtype.is_float() ? FloatOp(op, dtype, values) : IntOp(op, dtype, values);
}

absl::StatusOr<std::vector<ConstValue>> ExecAluVector(Ops op, DType dtype,
                                                      absl::Span<const std::vector<ConstValue>> operands,
                                                      std::optional<DType> operand_dtype) {
  auto error = [&](const auto&... parts) {
    return absl::InvalidArgumentError(
        absl::StrCat("ExecAluVector(", OpName(op), ", ", dtype.ToString(), "): ", parts...));
  };
  if (dtype.is_ptr() || (operand_dtype && operand_dtype->is_ptr())) return error("a pointer dtype");
  const int lanes = dtype.count();
  std::optional<DType> scalar_operand_dtype;
  if (operand_dtype) {
    if (operand_dtype->count() != 1 && operand_dtype->count() != lanes) {
      return error("the operand dtype ", operand_dtype->ToString(), " has the wrong width");
    }
    scalar_operand_dtype = operand_dtype->scalar();
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (operands[i].size() != 1 && static_cast<int>(operands[i].size()) != lanes) {
      return error("operand ", i, " has ", operands[i].size(), " values, want 1 or ", lanes);
    }
  }
  std::vector<ConstValue> results;
  results.reserve(lanes);
  std::vector<ConstValue> lane_operands(operands.size());
  for (int lane = 0; lane < lanes; ++lane) {
    for (size_t i = 0; i < operands.size(); ++i) {
      lane_operands[i] = operands[i].size() == 1 ? operands[i][0] : operands[i][lane];
    }
    UOPC_ASSIGN_OR_RETURN(ConstValue r, ExecAlu(op, dtype.scalar(), lane_operands, scalar_operand_dtype));
    results.push_back(r);
  }
  return results;
}

}  // namespace uopc
