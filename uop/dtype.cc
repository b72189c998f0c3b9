#include "uop/dtype.h"

#include <bit>
#include <cfloat>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <sstream>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "uop/check.h"

namespace uopc {
namespace {

struct ScalarInfo {
  int priority;
  int itemsize;
  absl::string_view c_name;      // tinygrad's DType.name
  absl::string_view short_name;  // tinygrad's INVERSE_DTYPES_DICT name
};

constexpr ScalarInfo kScalarInfo[kNumScalarTypes] = {
    {-1, 0, "void", "void"},
    {0, 1, "bool", "bool"},
    {1, 1, "signed char", "char"},
    {2, 1, "unsigned char", "uchar"},
    {3, 2, "short", "short"},
    {4, 2, "unsigned short", "ushort"},
    {5, 4, "int", "int"},
    {6, 4, "unsigned int", "uint"},
    {7, 8, "long", "long"},
    {8, 8, "unsigned long", "ulong"},
    {11, 2, "half", "half"},
    {12, 2, "__bf16", "bfloat16"},
    {13, 4, "float", "float"},
    {14, 8, "double", "double"},
};

const ScalarInfo& Info(ScalarType s) { return kScalarInfo[static_cast<int>(s)]; }

template <typename T>
T BitCast(const auto& from) {
  static_assert(sizeof(T) == sizeof(from));
  T to;
  std::memcpy(&to, &from, sizeof(T));
  return to;
}

constexpr double kInf = std::numeric_limits<double>::infinity();
using int128 = absl::int128;
using uint128 = absl::uint128;

// ---- exactly-once rounding to narrower floats ----

// v rounded to a double: to nearest-even, or with round_to_odd to the truncation with its last bit set when
// inexact. Rounding to odd at 53 bits and then to nearest at <= 51 bits is one correct rounding, which is how
// integers reach float32/half/bfloat16 without the double rounding of a plain (float)(double)x.
double IntToDouble(int128 v, bool round_to_odd) {
  bool negative = v < 0;
  uint128 mag = negative ? -static_cast<uint128>(v) : static_cast<uint128>(v);
  uint64_t hi = absl::Uint128High64(mag);
  int length = hi != 0 ? 64 + std::bit_width(hi) : std::bit_width(absl::Uint128Low64(mag));
  double d;
  int shift = length - 53;
  if (shift > 0) {
    uint128 kept = mag >> shift;
    uint128 rest = mag & ((uint128(1) << shift) - 1);
    uint128 half = uint128(1) << (shift - 1);
    if (round_to_odd) {
      if (rest != 0) kept |= 1;
    } else if (rest > half || (rest == half && (kept & 1) != 0)) {
      kept += 1;  // may carry to 2^53: still exact
    }
    d = std::ldexp(static_cast<double>(absl::Uint128Low64(kept)), shift);
  } else {
    d = static_cast<double>(absl::Uint128Low64(mag));
  }
  return negative ? -d : d;
}

// d rounded to float precision with round-to-odd (truncate, then set the last bit when inexact), as a double.
// Out-of-range magnitudes give +-FLT_MAX (odd), which any narrower format then rounds to +-inf.
double RoundToOddFloat(double d) {
  if (!std::isfinite(d)) return d;
  if (std::fabs(d) > FLT_MAX) return std::copysign(static_cast<double>(FLT_MAX), d);
  float f = static_cast<float>(d);
  if (static_cast<double>(f) == d) return d;
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  return static_cast<double>(BitCast<float>(BitCast<uint32_t>(f) | 1u));
}

// d rounded to the float dtype `dt`, nearest-even, overflowing to +-inf; exactly one rounding.
ConstValue RoundFloat(double d, DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kFloat32:
      if (std::isfinite(d) && std::fabs(d) > FLT_MAX) {
        // Midway between FLT_MAX and 2^128 rounds to even, which is the infinity.
        constexpr double kOverflow = FLT_MAX + 0x1p103;
        return ConstValue::Float(std::fabs(d) >= kOverflow ? std::copysign(kInf, d)
                                                           : std::copysign(static_cast<double>(FLT_MAX), d));
      }
      return ConstValue::Float(static_cast<float>(d));
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16:
      // Truncate rounds half/bfloat16 from a float; rounding to odd first makes the pair one rounding.
      {
      float f = static_cast<float>(RoundToOddFloat(d));
      return ConstValue::Float(dt.scalar_type() == ScalarType::kFloat16 ? HalfBitsToFloat(FloatToHalfBits(f))
                                                                        : BFloat16BitsToFloat(FloatToBFloat16Bits(f)));
    }
    default:
      return ConstValue::Float(d);
  }
}

ConstValue IntToFloat(int128 v, DType dt) {
  if (dt.scalar_type() == ScalarType::kFloat64) return ConstValue::Float(IntToDouble(v, false));
  return RoundFloat(IntToDouble(v, true), dt);
}

}  // namespace

int DType::itemsize_of(ScalarType s) { return Info(s).itemsize; }

DType DType::base() const {
  if (!is_ptr_) return *this;
  DType b(scalar_);
  b.count_ = count_;
  return b;
}

std::optional<DType> DType::vec(int n) const {
  if (n < 1 || n > 65535) return std::nullopt;
  if (is_ptr_) {
    if (v_ != 1) return std::nullopt;
    DType r = *this;
    r.v_ = static_cast<uint16_t>(n);
    return r;
  }
  if (count_ != 1) return std::nullopt;
  if (n == 1 || scalar_ == ScalarType::kVoid) return *this;
  DType r = *this;
  r.count_ = static_cast<uint16_t>(n);
  return r;
}

std::optional<DType> DType::ptr(int64_t size, bool local) const {
  if (is_ptr_ || size < -1) return std::nullopt;
  DType r = *this;
  r.is_ptr_ = true;
  r.local_ = local;
  r.v_ = 1;
  r.size_ = size;
  return r;
}

int DType::itemsize() const { return Info(scalar_).itemsize * count_; }
int DType::priority() const { return Info(scalar_).priority; }

bool DType::is_unsigned() const {
  switch (scalar_) {
    case ScalarType::kUInt8:
    case ScalarType::kUInt16:
    case ScalarType::kUInt32:
    case ScalarType::kUInt64:
      return true;
    default:
      return false;
  }
}

std::string DType::name() const {
  if (count_ > 1) return absl::StrCat(Info(scalar_).short_name, count_);
  return std::string(Info(scalar_).c_name);
}

absl::string_view DType::c_name() const { return Info(scalar_).c_name; }
absl::string_view DType::short_name() const { return Info(scalar_).short_name; }

std::string DType::ToString() const {
  std::string s = absl::StrCat("dtypes.", Info(scalar_).short_name);
  if (count_ > 1) absl::StrAppend(&s, ".vec(", count_, ")");
  if (is_ptr_) {
    absl::StrAppend(&s, ".ptr(", size_, local_ ? ", local=True" : "", ")");
    if (v_ != 1) absl::StrAppend(&s, ".vec(", v_, ")");
  }
  return s;
}

std::optional<DType> DType::FromName(absl::string_view name) {
  static constexpr std::pair<absl::string_view, ScalarType> kAliases[] = {
      {"void", ScalarType::kVoid},       {"bool", ScalarType::kBool},         {"int8", ScalarType::kInt8},
      {"char", ScalarType::kInt8},       {"uint8", ScalarType::kUInt8},       {"uchar", ScalarType::kUInt8},
      {"int16", ScalarType::kInt16},     {"short", ScalarType::kInt16},       {"uint16", ScalarType::kUInt16},
      {"ushort", ScalarType::kUInt16},   {"int32", ScalarType::kInt32},       {"int", ScalarType::kInt32},
      {"uint32", ScalarType::kUInt32},   {"uint", ScalarType::kUInt32},       {"int64", ScalarType::kInt64},
      {"long", ScalarType::kInt64},      {"uint64", ScalarType::kUInt64},     {"ulong", ScalarType::kUInt64},
      {"float16", ScalarType::kFloat16}, {"half", ScalarType::kFloat16},      {"bfloat16", ScalarType::kBFloat16},
      {"float32", ScalarType::kFloat32}, {"float", ScalarType::kFloat32},     {"float64", ScalarType::kFloat64},
      {"double", ScalarType::kFloat64},
  };
  for (const auto& [alias, scalar] : kAliases) {
    if (alias == name) return DType(scalar);
  }
  return std::nullopt;
}

bool operator<(const DType& a, const DType& b) {
  auto key = [](const DType& d) {
    return std::make_tuple(d.priority(), d.itemsize(), d.name(), d.count_, d.is_ptr_, d.local_, d.v_, d.size_);
  };
  return key(a) < key(b);
}

// ---- promotion lattice ----

namespace {

// Direct parents in tinygrad's promo_lattice.
std::vector<ScalarType> LatticeParents(ScalarType s) {
  using S = ScalarType;
  switch (s) {
    case S::kBool: return {S::kInt8, S::kUInt8};
    case S::kInt8: return {S::kInt16};
    case S::kInt16: return {S::kInt32};
    case S::kInt32: return {S::kInt64};
    case S::kInt64: return {S::kFloat16, S::kBFloat16};
    case S::kUInt8: return {S::kInt16, S::kUInt16};
    case S::kUInt16: return {S::kInt32, S::kUInt32};
    case S::kUInt32: return {S::kInt64, S::kUInt64};
    case S::kUInt64: return {S::kFloat16, S::kBFloat16};
    case S::kFloat16: return {S::kFloat32};
    case S::kBFloat16: return {S::kFloat32};
    case S::kFloat32: return {S::kFloat64};
    default: return {};
  }
}

// Bitmask of s and every type it promotes to.
uint32_t Ancestors(ScalarType s) {
  uint32_t mask = 1u << static_cast<int>(s);
  for (ScalarType p : LatticeParents(s)) mask |= Ancestors(p);
  return mask;
}

}  // namespace

DType LeastUpperDType(DType a, DType b) {
  if (a == b) return a;
  uint32_t common = Ancestors(a.scalar_type()) & Ancestors(b.scalar_type());
  if (common == 0) return dtypes::kFloat64;  // void involved: nothing sensible, fall back to the top
  std::optional<DType> best;
  for (int i = 0; i < kNumScalarTypes; ++i) {
    if (common & (1u << i)) {
      DType d(static_cast<ScalarType>(i));
      if (!best || d < *best) best = d;
    }
  }
  return *best;
}

DType LeastUpperFloat(DType dt) { return dt.is_float() ? dt : LeastUpperDType(dt, dtypes::kDefaultFloat); }

DType SumAccDType(DType dt) {
  if (dt.is_unsigned()) return LeastUpperDType(dt, dtypes::kUInt32);
  if (dt.is_int() || dt.is_bool()) return LeastUpperDType(dt, dtypes::kInt32);
  return LeastUpperDType(dt, dtypes::kFloat32);
}

// ---- ConstValue ----

bool ConstValue::AsBool() const {
  switch (kind_) {
    case Kind::kBool:
    case Kind::kInt:
      return int_ != 0;
    case Kind::kFloat:
      return float_ != 0.0;  // NaN is truthy in Python, and NaN != 0.0 holds
  }
  return false;
}

absl::int128 ConstValue::FloatAsInt(double f) {
  if (!std::isfinite(f)) return 0;
  double t = std::trunc(f);
  // 2^127 bounds; beyond that saturate.
  if (t >= 1.7014118346046923e38) return absl::Int128Max();
  if (t <= -1.7014118346046923e38) return absl::Int128Min();
  bool negative = t < 0;
  double mag = negative ? -t : t;
  uint64_t hi = static_cast<uint64_t>(std::ldexp(mag, -64));
  double rest = mag - std::ldexp(static_cast<double>(hi), 64);
  absl::uint128 u = absl::MakeUint128(hi, static_cast<uint64_t>(rest));
  absl::int128 r = static_cast<absl::int128>(u);
  return negative ? -r : r;
}

double ConstValue::AsFloat() const {
  if (kind_ == Kind::kFloat) return float_;
  return static_cast<double>(int_);
}

int64_t ConstValue::AsInt64() const {
  UOPC_CHECK(kind_ != Kind::kFloat, "AsInt64 on a float constant");
  if (int_ > std::numeric_limits<int64_t>::max()) return std::numeric_limits<int64_t>::max();
  if (int_ < std::numeric_limits<int64_t>::min()) return std::numeric_limits<int64_t>::min();
  return static_cast<int64_t>(int_);
}

namespace {

std::string Int128ToString(absl::int128 v) {
  if (v >= 0) {
    absl::uint128 u = static_cast<absl::uint128>(v);
    if (absl::Uint128High64(u) == 0) return absl::StrCat(absl::Uint128Low64(u));
  }
  std::ostringstream os;
  os << v;
  return os.str();
}

}  // namespace

std::string ConstValue::ToString() const {
  switch (kind_) {
    case Kind::kBool:
      return int_ != 0 ? "True" : "False";
    case Kind::kInt:
      return Int128ToString(int_);
    case Kind::kFloat:
      return PythonFloatRepr(float_);
  }
  return "";
}

namespace {

// -1, 0, 1 for a < b, a == b, a > b; nullopt when unordered (NaN).
std::optional<int> Compare(const ConstValue& a, const ConstValue& b) {
  if (!a.is_float() && !b.is_float()) {
    return a.i() < b.i() ? -1 : a.i() == b.i() ? 0 : 1;
  }
  if (a.is_float() && b.is_float()) {
    if (std::isnan(a.f()) || std::isnan(b.f())) return std::nullopt;
    return a.f() < b.f() ? -1 : a.f() == b.f() ? 0 : 1;
  }
  // Mixed int/float: exact comparison as Python does.
  const ConstValue& f = a.is_float() ? a : b;
  const ConstValue& i = a.is_float() ? b : a;
  int sign = a.is_float() ? 1 : -1;  // result is for (float vs int), flip when a is the int
  double x = f.f();
  if (std::isnan(x)) return std::nullopt;
  int r;
  if (std::isinf(x)) {
    r = x > 0 ? 1 : -1;
  } else {
    double t = std::trunc(x);
    absl::int128 ti = ConstValue::Float(t).AsInt();
    if (ti != i.i()) {
      r = ti < i.i() ? -1 : 1;
    } else {
      r = x > t ? 1 : x < t ? -1 : 0;
    }
  }
  return r * sign;
}

}  // namespace

absl::int128 CDiv(absl::int128 x, absl::int128 y) {
  if (y == 0) return 0;
  // C++'s int64 division truncates toward zero too and, unlike 128-bit division, is not a library call; the
  // values nearly always fit (INT64_MIN is left out: its quotient by -1 overflows).
  auto fits = [](absl::int128 v) {
    return v > std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
  };
  if (fits(x) && fits(y)) return static_cast<int64_t>(x) / static_cast<int64_t>(y);
  absl::int128 q = (x < 0 ? -x : x) / (y < 0 ? -y : y);
  return (x < 0) != (y < 0) ? -q : q;
}

bool ConstValue::EqualWithFloat(const ConstValue& a, const ConstValue& b) {
  auto c = Compare(a, b);
  return c && *c == 0;
}

bool ConstValue::LessWithFloat(const ConstValue& a, const ConstValue& b) {
  auto c = Compare(a, b);
  return c && *c < 0;
}

bool ConstValue::Identical(const ConstValue& o) const {
  if (kind_ != o.kind_) return false;
  if (kind_ == Kind::kFloat) return BitCast<uint64_t>(float_) == BitCast<uint64_t>(o.float_);
  return int_ == o.int_;
}

std::string PythonFloatRepr(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form: d[.ddd]e[+-]XX.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof(buf), f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  bool negative = sci[0] == '-';
  if (negative) sci.erase(0, 1);
  size_t e = sci.find('e');
  std::string mantissa = sci.substr(0, e);
  int exponent = std::stoi(sci.substr(e + 1));
  std::string digits;
  for (char c : mantissa) {
    if (c != '.') digits += c;
  }
  while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
  std::string out;
  if (exponent >= -4 && exponent < 16) {
    int point = exponent + 1;  // digits before the decimal point
    if (point <= 0) {
      out = "0." + std::string(-point, '0') + digits;
    } else if (point >= static_cast<int>(digits.size())) {
      out = digits + std::string(point - digits.size(), '0') + ".0";
    } else {
      out = digits.substr(0, point) + "." + digits.substr(point);
    }
  } else {
    out = digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    out += exponent < 0 ? "e-" : "e+";
    int mag = exponent < 0 ? -exponent : exponent;
    if (mag < 10) out += "0";
    out += std::to_string(mag);
  }
  return negative ? "-" + out : out;
}

ConstValue DTypeMin(DType dt) {
  DType s = dt.scalar();
  if (s.is_int()) {
    if (s.is_unsigned()) return ConstValue::Int(0);
    return ConstValue::Int(-(absl::int128(1) << (s.bits() - 1)));
  }
  if (s.is_float()) return ConstValue::Float(-std::numeric_limits<double>::infinity());
  return ConstValue::Bool(false);
}

ConstValue DTypeMax(DType dt) {
  DType s = dt.scalar();
  if (s.is_int()) {
    if (s.is_unsigned()) return ConstValue::Int((absl::int128(1) << s.bits()) - 1);
    return ConstValue::Int((absl::int128(1) << (s.bits() - 1)) - 1);
  }
  if (s.is_float()) return ConstValue::Float(std::numeric_limits<double>::infinity());
  return ConstValue::Bool(true);
}

ConstValue AsConst(ConstValue v, DType dt) {
  if (dt.is_int()) return ConstValue::Int(v.AsInt());
  if (dt.is_float()) return ConstValue::Float(v.AsFloat());
  return ConstValue::Bool(v.AsBool());
}

ConstValue Truncate(ConstValue v, DType dt) {
  DType s = dt.scalar();
  if (s.is_int()) {
    absl::int128 x = v.AsInt();
    int bits = s.bits();
    absl::uint128 mask = (absl::uint128(1) << bits) - 1;
    absl::uint128 u = static_cast<absl::uint128>(x) & mask;
    if (!s.is_unsigned() && (u >> (bits - 1)) != 0) {
      return ConstValue::Int(static_cast<absl::int128>(u) - (absl::int128(1) << bits));
    }
    return ConstValue::Int(static_cast<absl::int128>(u));
  }
  if (s.is_float()) {
    if (v.is_float()) return RoundFloat(v.f(), s);
    return IntToFloat(v.i(), s);
  }
  if (s.is_bool()) return ConstValue::Bool(v.AsBool());
  return v;
}

// ---- half / bfloat16 ----
// Note: rounding a double to half through float can double-round; exact for values already representable in
// float, which covers every float32 computation.

uint16_t FloatToHalfBits(float f) {
  uint32_t x = BitCast<uint32_t>(f);
  uint32_t sign = (x >> 16) & 0x8000u;
  uint32_t exp = (x >> 23) & 0xffu;
  uint32_t mant = x & 0x7fffffu;
  if (exp == 0xff) return static_cast<uint16_t>(sign | 0x7c00u | (mant ? 0x200u | (mant >> 13) : 0u));
  int e = static_cast<int>(exp) - 127 + 15;
  if (e >= 31) return static_cast<uint16_t>(sign | 0x7c00u);
  if (e <= 0) {
    if (e < -10) return static_cast<uint16_t>(sign);  // rounds to zero
    mant |= 0x800000u;
    int shift = 14 - e;
    uint32_t half = mant >> shift;
    uint32_t rem = mant & ((1u << shift) - 1);
    uint32_t halfway = 1u << (shift - 1);
    if (rem > halfway || (rem == halfway && (half & 1u))) ++half;
    return static_cast<uint16_t>(sign | half);
  }
  uint32_t half = (static_cast<uint32_t>(e) << 10) | (mant >> 13);
  uint32_t rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (half & 1u))) ++half;  // may carry into the exponent: correct (-> inf)
  return static_cast<uint16_t>(sign | half);
}

float HalfBitsToFloat(uint16_t h) {
  uint32_t sign = (static_cast<uint32_t>(h) & 0x8000u) << 16;
  uint32_t exp = (h >> 10) & 0x1fu;
  uint32_t mant = h & 0x3ffu;
  uint32_t bits;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400u) == 0);
      bits = sign | (static_cast<uint32_t>(127 - 15 - e) << 23) | ((mant & 0x3ffu) << 13);
    }
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  return BitCast<float>(bits);
}

uint16_t FloatToBFloat16Bits(float f) {
  uint32_t x = BitCast<uint32_t>(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
  uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>((x + rounding) >> 16);
}

float BFloat16BitsToFloat(uint16_t b) { return BitCast<float>(static_cast<uint32_t>(b) << 16); }

}  // namespace uopc
