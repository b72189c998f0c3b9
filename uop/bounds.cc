// Range analysis: tinygrad's UOp._min_max, computed once per node when it is interned.
//
// Integer bounds are exact (128-bit, no wraparound), as tinygrad's Python integers are. Nodes whose shape does not
// fit a rule (wrong arity, non-integer args) get the dtype's full range: range analysis never fails.
#include <algorithm>
#include <cmath>
#include <limits>

#include "uop/uop.h"

namespace uopc {
namespace {

using Bounds = std::pair<ConstValue, ConstValue>;

Bounds Full(DType dt) { return {DTypeMin(dt), DTypeMax(dt)}; }

// Saturating 128-bit arithmetic: bounds beyond +-2^126 only arise from int64 products and are clamped, which
// stays conservative for every rule that compares bounds against small constants.
constexpr double kLimit = 8.5e37;  // about 2^126
absl::int128 Clamp(double v, absl::int128 exact) {
  if (v > kLimit) return absl::Int128Max() >> 1;
  if (v < -kLimit) return absl::Int128Min() >> 1;
  return exact;
}
absl::int128 SatAdd(absl::int128 a, absl::int128 b) {
  return Clamp(static_cast<double>(a) + static_cast<double>(b), a + b);
}
absl::int128 SatMul(absl::int128 a, absl::int128 b) {
  double approx = static_cast<double>(a) * static_cast<double>(b);
  if (approx > kLimit || approx < -kLimit) return Clamp(approx, 0);
  return a * b;
}

ConstValue Int(absl::int128 v) { return ConstValue::Int(v); }

ConstValue ClampedInt(const ConstValue& v);

bool AllInt(std::initializer_list<ConstValue> vs) {
  for (const ConstValue& v : vs) {
    if (v.is_float()) return false;
  }
  return true;
}

// Python's min/max over ConstValues (first of equals wins, as Python's min does).
ConstValue Min(ConstValue a, ConstValue b) { return b < a ? b : a; }
ConstValue Max(ConstValue a, ConstValue b) { return b > a ? b : a; }

// Bounds of an integer binary op on integer operand bounds, or nullopt for "not handled here".
std::optional<Bounds> IntBinary(Ops op, ConstValue a_lo, ConstValue a_hi, ConstValue b_lo, ConstValue b_hi) {
  // Bools and integers of any node are within +-2^125 (see ClampedInt), so nothing below overflows.
  absl::int128 s0lo = ClampedInt(a_lo).i(), s0hi = ClampedInt(a_hi).i(), s1lo = ClampedInt(b_lo).i(),
               s1hi = ClampedInt(b_hi).i();
  switch (op) {
    case Ops::ADD:
      return Bounds{Int(SatAdd(s0lo, s1lo)), Int(SatAdd(s0hi, s1hi))};
    case Ops::SUB:
      return Bounds{Int(SatAdd(s0lo, -s1hi)), Int(SatAdd(s0hi, -s1lo))};
    case Ops::AND:
      if (s1lo == s1hi && s0lo >= 0 && s1lo >= 0) {
        return Bounds{Int(std::min<absl::int128>(0, s0lo)), Int(std::min(s0hi, s1hi))};
      }
      return std::nullopt;
    case Ops::MUL: {
      absl::int128 v[4] = {SatMul(s0lo, s1lo), SatMul(s0lo, s1hi), SatMul(s0hi, s1lo), SatMul(s0hi, s1hi)};
      return Bounds{Int(*std::min_element(v, v + 4)), Int(*std::max_element(v, v + 4))};
    }
    case Ops::SHL:
    case Ops::SHR:
      if (s1lo == s1hi && s1lo >= 0 && s1lo < 64) {
        int sh = static_cast<int>(s1lo);
        if (op == Ops::SHR) return Bounds{Int(s0lo >> sh), Int(s0hi >> sh)};
        return Bounds{Int(SatMul(s0lo, absl::int128(1) << sh)), Int(SatMul(s0hi, absl::int128(1) << sh))};
      }
      return std::nullopt;
    case Ops::MOD:
    case Ops::IDIV:
      if (auto r = internal::IntDivModBounds(op, s0lo, s0hi, s1lo, s1hi)) {
        return Bounds{Int(r->first), Int(r->second)};
      }
      return std::nullopt;
    default:
      return std::nullopt;
  }
}

// Integer bounds are kept within +-2^125, so that the sums, negations and differences above cannot overflow 128
// bits whatever the inputs (a DEFINE_VAR may declare a range of +-1e300).
ConstValue ClampedInt(const ConstValue& v) {
  const absl::int128 limit = absl::int128(1) << 125;
  absl::int128 i = v.AsInt();
  return ConstValue::Int(i > limit ? limit : i < -limit ? -limit : i);
}

// Converts a result to the node's kind: bool nodes hold bools, int nodes ints, float nodes floats.
Bounds Normalize(Bounds b, DType dt) {
  if (dt.is_bool()) {
    // A bool is the integer result's truth: it can be false where the range holds 0 and true where it holds
    // anything else. (tinygrad takes bool(lo) and bool(hi), the same wherever lo >= 0; a bool SUB's [-1, 1]
    // would make it always true.)
    const ConstValue zero = ConstValue::Int(0);
    const bool can_be_false = b.first <= zero && zero <= b.second;
    const bool can_be_true = b.first != zero || b.second != zero;
    return {ConstValue::Bool(!can_be_false), ConstValue::Bool(can_be_true)};
  }
  if (dt.is_float()) return {ConstValue::Float(b.first.AsFloat()), ConstValue::Float(b.second.AsFloat())};
  if (dt.is_int()) return {ClampedInt(b.first), ClampedInt(b.second)};
  return b;
}

Bounds Compute(Ops op, DType dtype, absl::Span<const UOpPtr> src, const Arg& arg) {
  if (groups::kBinary.contains(op) && !dtype.is_float() && src.size() == 2) {
    ConstValue a_lo = src[0]->vmin(), a_hi = src[0]->vmax(), b_lo = src[1]->vmin(), b_hi = src[1]->vmax();
    if (AllInt({a_lo, a_hi, b_lo, b_hi})) {
      if (auto r = IntBinary(op, a_lo, a_hi, b_lo, b_hi)) return *r;
    }
    switch (op) {
      case Ops::MAX:
        return {Max(a_lo, b_lo), Max(a_hi, b_hi)};
      case Ops::CMPLT:
        return {ConstValue::Bool(a_hi < b_lo), ConstValue::Bool(a_lo < b_hi)};
      case Ops::CMPNE: {
        bool always = (a_hi < b_lo) || (b_hi < a_lo);
        bool all_equal = a_lo == a_hi && a_hi == b_lo && b_lo == b_hi;
        return {ConstValue::Bool(always), ConstValue::Bool(!all_equal)};
      }
      default:
        break;
    }
    if (dtype.is_bool()) {
      // Python's `or`/`and` on the bounds.
      if (op == Ops::OR) {
        return {a_lo.AsBool() ? a_lo : b_lo, a_hi.AsBool() ? a_hi : b_hi};
      }
      if (op == Ops::AND) {
        return {!a_lo.AsBool() ? a_lo : b_lo, !a_hi.AsBool() ? a_hi : b_hi};
      }
    }
  }
  switch (op) {
    case Ops::WHERE:
      if (dtype.is_int() && src.size() == 3) {
        return {Min(src[1]->vmin(), src[2]->vmin()), Max(src[1]->vmax(), src[2]->vmax())};
      }
      break;
    case Ops::DEFINE_VAR:
      if (arg.is_tuple() && arg.size() == 3) {
        auto bound = [](const Arg& a) -> std::optional<ConstValue> {
          if (a.is_int()) return ConstValue::Int(a.as_int());
          if (a.is_float()) return ConstValue::Float(a.as_float());
          if (a.is_bool()) return ConstValue::Bool(a.as_bool());
          return std::nullopt;
        };
        auto lo = bound(arg[1]), hi = bound(arg[2]);
        if (lo && hi) return {*lo, *hi};
      }
      break;
    case Ops::RANGE:
      if (src.size() >= 1) {
        ConstValue end_max = src[0]->vmax();
        if (!end_max.is_float()) return {ConstValue::Int(0), ConstValue::Int(end_max.AsInt() - 1)};
      }
      break;
    case Ops::BIND:
      if (src.size() >= 1) return {src[0]->vmin(), src[0]->vmax()};
      break;
    case Ops::UNROLL:
    case Ops::VECTORIZE:
      if (!src.empty()) {
        ConstValue lo = src[0]->vmin(), hi = src[0]->vmax();
        for (const UOpPtr& s : src) {
          lo = Min(lo, s->vmin());
          hi = Max(hi, s->vmax());
        }
        return {lo, hi};
      }
      break;
    case Ops::SPECIAL:
      if (arg.is_tuple() && arg.size() >= 2 && arg[1].is_int()) {
        return {ConstValue::Int(0), ConstValue::Int(absl::int128(arg[1].as_int()) - 1)};
      }
      // A symbolic launch dim: its index is below the size's largest value.
      if (const UOpArg* size = arg.is_tuple() && arg.size() >= 2 ? arg[1].payload_as<UOpArg>() : nullptr) {
        return {ConstValue::Int(0), ConstValue::Int(size->uop()->vmax().i() - 1)};
      }
      break;
    case Ops::CONST:
      if (arg.is_int() || arg.is_float() || arg.is_bool()) {
        ConstValue v = ConstFromArg(arg, dtype);
        return {v, v};
      }
      break;
    case Ops::VCONST:
      if (arg.is_tuple() && arg.size() > 0) {
        ConstValue lo = ConstFromArg(arg[0], dtype.scalar()), hi = lo;
        for (const Arg& a : arg.as_tuple()) {
          if (!(a.is_int() || a.is_float() || a.is_bool())) return Full(dtype);
          ConstValue v = ConstFromArg(a, dtype.scalar());
          lo = Min(lo, v);
          hi = Max(hi, v);
        }
        return {lo, hi};
      }
      break;
    case Ops::CAST:
      if (src.size() == 1 && dtype.is_bool() && !src[0]->dtype().is_bool()) {
        // bool(x) is true exactly where x != 0 (tinygrad clamps the numeric range, which is wrong for [-8, 0]).
        ConstValue lo = src[0]->vmin(), hi = src[0]->vmax(), zero = ConstValue::Int(0);
        return {ConstValue::Bool(lo > zero || hi < zero), ConstValue::Bool(!(lo == zero && hi == zero))};
      }
      if (src.size() == 1) {
        return {Max(DTypeMin(dtype), src[0]->vmin()), Min(src[0]->vmax(), DTypeMax(dtype))};
      }
      break;
    default:
      break;
  }
  return Full(dtype);
}

}  // namespace

namespace internal {

std::optional<std::pair<absl::int128, absl::int128>> IntDivModBounds(Ops op, absl::int128 xlo,
                                                                     absl::int128 xhi, absl::int128 ylo,
                                                                     absl::int128 yhi) {
  using Range = std::pair<absl::int128, absl::int128>;
  if (op == Ops::MOD) {
    // |x % d| < |d|, the largest |d| being at yhi or ylo (tinygrad uses yhi for a negative divisor, which is
    // too tight); the remainder takes the dividend's sign.
    if (ylo <= 0 && yhi >= 0) return std::nullopt;
    const absl::int128 most = (ylo > 0 ? yhi : -ylo) - 1;
    if (xlo >= 0) return Range{0, most};
    if (xhi <= 0) return Range{-most, 0};
    return Range{-most, most};
  }
  if (op != Ops::IDIV) return std::nullopt;
  if (ylo == yhi && ylo != 0) {
    return ylo > 0 ? Range{CDiv(xlo, ylo), CDiv(xhi, ylo)} : Range{CDiv(xhi, ylo), CDiv(xlo, ylo)};
  }
  if (xhi <= 0 && yhi < 0) return Range{CDiv(xhi, ylo), CDiv(xlo, yhi)};
  if (xlo >= 0 && ylo > 0) return Range{CDiv(xlo, yhi), CDiv(xhi, ylo)};
  if (xhi <= 0 && ylo > 0) return Range{CDiv(xlo, ylo), CDiv(xhi, yhi)};
  if (xlo >= 0 && yhi < 0) return Range{CDiv(xhi, yhi), CDiv(xlo, ylo)};
  return std::nullopt;
}

}  // namespace internal

std::pair<ConstValue, ConstValue> ComputeBounds(Ops op, DType dtype, absl::Span<const UOpPtr> src, const Arg& arg) {
  if (dtype.is_ptr() || dtype.is_void()) return {ConstValue::Int(0), ConstValue::Int(0)};
  return Normalize(Compute(op, dtype, src, arg), dtype);
}

std::optional<std::pair<ConstValue, ConstValue>> IntBinaryBounds(Ops op, const ConstValue& a_lo,
                                                                  const ConstValue& a_hi, const ConstValue& b_lo,
                                                                  const ConstValue& b_hi) {
  if (!AllInt({a_lo, a_hi, b_lo, b_hi})) return std::nullopt;
  std::optional<Bounds> b = IntBinary(op, a_lo, a_hi, b_lo, b_hi);
  if (!b) return std::nullopt;
  return std::pair<ConstValue, ConstValue>{ClampedInt(b->first), ClampedInt(b->second)};
}

}  // namespace uopc
