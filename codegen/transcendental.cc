#include "codegen/transcendental.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "uop/check.h"

namespace uopc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();
constexpr double kPi = 3.141592653589793;

ScalarType ScalarOf(const UOpPtr& x) { return x->dtype().scalar_type(); }

// The same-width integer type of a float type (signed or unsigned), as a vector of x's width.
DType IntLike(const UOpPtr& x, bool is_unsigned = false) {
  DType s;
  switch (ScalarOf(x)) {
    case ScalarType::kFloat64:
      s = is_unsigned ? dtypes::kUInt64 : dtypes::kInt64;
      break;
    case ScalarType::kFloat32:
      s = is_unsigned ? dtypes::kUInt32 : dtypes::kInt32;
      break;
    default:
      s = is_unsigned ? dtypes::kUInt16 : dtypes::kInt16;
      break;
  }
  return s.Vec(x->dtype().count());
}

int MantissaBits(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kFloat64:
      return 52;
    case ScalarType::kFloat32:
      return 23;
    default:
      return 10;
  }
}
int ExponentBias(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kFloat64:
      return 1023;
    case ScalarType::kFloat32:
      return 127;
    default:
      return 15;
  }
}
int ExponentMask(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kFloat64:
      return 2047;
    case ScalarType::kFloat32:
      return 255;
    default:
      return 31;
  }
}

// tinygrad's shr/shl: division and multiplication by 2**y (later rules turn them into shifts where they can).
UOpPtr Shr(const UOpPtr& x, int y) { return x.idiv(int64_t{1} << y); }
UOpPtr Shl(const UOpPtr& x, int y) { return x * (int64_t{1} << y); }

// tinygrad's cast_vec: always a CAST node, even to the same dtype.
UOpPtr CastVec(const UOpPtr& x, DType scalar) {
  return UOp::New(Ops::CAST, scalar.Vec(x->dtype().count()), {x});
}

UOpPtr Lt(const UOpPtr& x, double v) { return x.lt(x.const_like(v)); }
UOpPtr Ne(const UOpPtr& x, double v) { return x.ne(x.const_like(v)); }
UOpPtr Select(const UOpPtr& cond, const UOpPtr& t, double f) { return cond.where(t, t.const_like(f)); }
UOpPtr Select(const UOpPtr& cond, double t, const UOpPtr& f) { return cond.where(f.const_like(t), f); }
UOpPtr Select(const UOpPtr& cond, const UOpPtr& like, double t, double f) {
  return cond.where(like.const_like(t), like.const_like(f));
}

// acc*x + c for each coefficient, starting from 0.0 (tinygrad's polyN).
UOpPtr PolyN(const UOpPtr& x, const std::vector<double>& coefficients) {
  UOpPtr acc;
  for (double c : coefficients) {
    acc = (acc == nullptr ? x.const_like(0.0).mul(x) : acc * x) + c;
  }
  return acc;
}

// inf -> inf, -inf -> neg_inf, nan -> nan, anything else -> ratio.
UOpPtr LazyMapNumbers(const UOpPtr& x, const UOpPtr& inf, const UOpPtr& neg_inf, const UOpPtr& nan,
                      const UOpPtr& ratio) {
  return Ne(x, kInf).where(x.ne(x).where(nan, Ne(x, -kInf).where(ratio, neg_inf)), inf);
}

// Rounds to an integer, halves away from zero.
UOpPtr Rintk(const UOpPtr& d) { return (d + Select(Lt(d, 0.0), d, -0.5, 0.5)).cast(IntLike(d)); }

// 2**q as float_dtype, for an integer q in the exponent's range.
UOpPtr Pow2If(const UOpPtr& q, DType float_dtype) {
  DType out;
  switch (ScalarOf(q)) {
    case ScalarType::kInt64:
      out = dtypes::kFloat64;
      break;
    case ScalarType::kInt32:
      out = dtypes::kFloat32;
      break;
    default:
      out = float_dtype.scalar();
      break;
  }
  out = out.Vec(q->dtype().vcount());
  return Shl(q + ExponentBias(out), MantissaBits(out)).bitcast(out);
}

// The integer part of log2(d) for a normal d >= 0.
UOpPtr Ilogb2k(const UOpPtr& d) {
  UOpPtr dint = d.bitcast(IntLike(d).scalar().Vec(d->dtype().vcount()));
  return (Shr(dint, MantissaBits(d->dtype())) & ExponentMask(d->dtype())) - ExponentBias(d->dtype());
}

// d * 2**e for an e holding an integer in [-127, 127].
UOpPtr Ldexp3k(const UOpPtr& d, const UOpPtr& e) {
  DType int_dtype = IntLike(d);
  UOpPtr m1 = d.bitcast(int_dtype);
  UOpPtr m2 = Shl(e.cast(int_dtype), MantissaBits(d->dtype()));
  return (m1 + m2).bitcast(d->dtype()).cast(d->dtype());
}

// d * 2**e for d > 0 and normal; e an integer.
UOpPtr Ldexp2k(const UOpPtr& d, const UOpPtr& e) {
  return (d * Pow2If(Shr(e, 1), d->dtype())) * Pow2If(e - Shr(e, 1), d->dtype());
}

// (mantissa in [0.5, 1), exponent) of v != 0.
std::pair<UOpPtr, UOpPtr> Frexp(const UOpPtr& v) {
  int64_t m1, m2;
  switch (ScalarOf(v)) {
    case ScalarType::kFloat64:
      m1 = 0x000FFFFFFFFFFFFF, m2 = 0x3FE0000000000000;
      break;
    case ScalarType::kFloat32:
      m1 = 0x807FFFFF, m2 = 0x3F000000;
      break;
    default:
      m1 = 0x83FF, m2 = 0x3800;
      break;
  }
  UOpPtr bits = v.bitcast(IntLike(v, /*is_unsigned=*/true));
  UOpPtr exponent = Shr(bits, MantissaBits(v->dtype())) & ExponentMask(v->dtype());
  UOpPtr mantissa = ((bits & m1) | m2).bitcast(v->dtype());
  UOpPtr exp = exponent - ExponentBias(v->dtype()) + 1;
  return {mantissa, exp};
}

// Payne-Hanek reduction of d >= 39800 modulo pi/2: (remainder, quadrant as int32).
std::pair<UOpPtr, UOpPtr> PayneHanekReduction(const UOpPtr& d) {
  static constexpr int64_t kTwoOverPi[] = {0x00000000, 0x28be60db, 0x9391054a, 0x7f09d5f4,
                                           0x7d4d3770, 0x36d8a566, 0x4f10e410};
  constexpr int kLen = 7;
  const int count = d->dtype().count();
  const DType intermediate = ScalarOf(d) == ScalarType::kFloat16 ? dtypes::kFloat32.Vec(count) : d->dtype();

  auto [f, e] = Frexp(d);
  UOpPtr ia = CastVec(f.cast(intermediate) * 4.294967296e9, dtypes::kUInt64);
  UOpPtr i = Shr(CastVec(e, dtypes::kUInt64), 5);
  e = CastVec(e, dtypes::kInt32) & 31;
  UOpPtr offset = 32 - e;

  // two_over_pi[i + offset], as a chain of selects on i.
  auto take = [&](auto&& self, const UOpPtr& an, int off, int n) -> UOpPtr {
    if (n + off < kLen - 1) {
      return i.ne(n).where(self(self, an, off, n + 1), an.const_like(int64_t{kTwoOverPi[n + off]}));
    }
    return an;
  };
  auto shl_lazy = [&](const UOpPtr& x, const UOpPtr& y) {
    return CastVec(CastVec(x, dtypes::kUInt64) * CastVec(Pow2If(y, d->dtype()), dtypes::kUInt64),
                   dtypes::kUInt32);
  };
  auto shr_lazy = [&](const UOpPtr& x, const UOpPtr& y) {
    return CastVec(CastVec(x, dtypes::kUInt64).idiv(CastVec(Pow2If(y, d->dtype()), dtypes::kUInt64)),
                   dtypes::kUInt32);
  };
  std::vector<UOpPtr> a;
  for (int k = 0; k < 4; ++k)
    a.push_back(take(take, UOp::Const(dtypes::kUInt32.Vec(count), int64_t{0}), k, 0));
  UOpPtr hi = shl_lazy(a[0], e) | shr_lazy(a[1], offset);
  UOpPtr mi = shl_lazy(a[1], e) | shr_lazy(a[2], offset);
  UOpPtr lo = shl_lazy(a[2], e) | shr_lazy(a[3], offset);

  auto hp_mul = [](const UOpPtr& x, const UOpPtr& y) {
    return CastVec(x, dtypes::kUInt64) * CastVec(y, dtypes::kUInt64);
  };
  UOpPtr p = Shl(hp_mul(ia, hi), 32) + hp_mul(ia, mi) + Shr(hp_mul(ia, lo), 32);
  UOpPtr q = CastVec(Shr(p, 62), dtypes::kInt32);
  p = p & int64_t{0x3fffffffffffffff};
  UOpPtr r = (p.cast(intermediate) * 3.4061215800865545e-19).cast(d->dtype());
  UOpPtr small = Lt(f, 0.5);
  return {small.where(r, r - kPi / 2), small.where(q, q + 1)};
}

// Cody-Waite reduction of 0 <= |d| <= 39800 modulo pi/2: (remainder, quadrant as int32).
std::pair<UOpPtr, UOpPtr> CodyWaiteReduction(const UOpPtr& d) {
  constexpr double kOneOverPi = 0.318309886183790671537767526745028724;
  const double two24 = 16777216.0;
  UOpPtr qdh = CastVec(d * (kOneOverPi / two24), dtypes::kInt64).cast(d->dtype()) * two24;
  auto reduce = [&](auto&& self, const UOpPtr& x, const UOpPtr& q) -> UOpPtr {
    if (ScalarOf(x) == ScalarType::kFloat64) {
      constexpr double kPiA = 3.1415926218032836914, kPiB = 3.1786509424591713469e-08,
                       kPiC = 1.2246467864107188502e-16, kPiD = 1.2736634327021899816e-24;
      UOpPtr r = qdh * -kPiA + x;
      r = q * -kPiA + r;
      r = qdh * -kPiB + r;
      r = q * -kPiB + r;
      r = qdh * -kPiC + r;
      r = q * -kPiC + r;
      return (qdh + q) * -kPiD + r;
    }
    if (ScalarOf(x) == ScalarType::kFloat16) {
      return CastVec(self(self, CastVec(x, dtypes::kFloat32), CastVec(q, dtypes::kFloat32)),
                     dtypes::kFloat16);
    }
    UOpPtr r = q * -3.1414794921875 + x;
    r = q * -0.00011315941810607910156 + r;
    r = q * -1.9841872589410058936e-09 + r;
    return q * -1.2154201256553420762e-10 + r;
  };
  UOpPtr quadrant = ScalarOf(d) == ScalarType::kFloat64 ? Rintk(d * kOneOverPi - qdh) : Rintk(d * kOneOverPi);
  return {reduce(reduce, d, quadrant.cast(d->dtype())), CastVec(quadrant, dtypes::kInt32)};
}

// sin on [-pi/2, pi/2].
UOpPtr SinPoly(const UOpPtr& d) {
  static const std::vector<double> k32 = {2.6083159809786593541503e-06, -0.0001981069071916863322258,
                                          0.00833307858556509017944336, -0.166666597127914428710938, 1.0};
  static const std::vector<double> k64 = {-7.97255955009037868891952e-18, 2.81009972710863200091251e-15,
                                          -7.64712219118158833288484e-13, 1.60590430605664501629054e-10,
                                          -2.50521083763502045810755e-08, 2.75573192239198747630416e-06,
                                          -0.000198412698412696162806809, 0.00833333333333332974823815,
                                          -0.166666666666666657414808,    1.0};
  return d * PolyN(d * d, ScalarOf(d) == ScalarType::kFloat64 ? k64 : k32);
}

UOpPtr IfAnd(const UOpPtr& q, int n) { return (q & n).ne(0); }

UOpPtr SinPolySmall(const UOpPtr& d, const UOpPtr& q) {
  UOpPtr r = SinPoly(d);
  return r * Select(IfAnd(q, 1), r, -1.0, 1.0);
}

UOpPtr SinPolyLarge(const UOpPtr& d, const UOpPtr& q) {
  UOpPtr r = SinPoly(d + Select(IfAnd(q, 1), d, kPi / 2, 0.0));
  return r * Select(IfAnd(q, 2), r, -1.0, 1.0);
}

}  // namespace

bool IsTranscendentalDType(DType dt) {
  ScalarType s = dt.scalar_type();
  return !dt.is_ptr() &&
         (s == ScalarType::kFloat16 || s == ScalarType::kFloat32 || s == ScalarType::kFloat64);
}

UOpPtr XSin(const UOpPtr& d, bool fast, double switch_over) {
  UOPC_CHECK(IsTranscendentalDType(d->dtype()), "XSin needs a float16/32/64 input");
  UOpPtr zero = d.const_like(0.0);
  UOpPtr x = LazyMapNumbers(d, zero, zero, zero, d);
  UOpPtr x_sign = Ne(x, 0).where(Select(Lt(x, 0), x, -1.0, 1.0), x.const_like(0.0));
  UOpPtr x_abs = x * x_sign;
  UOpPtr result;
  if (fast) {
    auto [r, q] = CodyWaiteReduction(x_abs);
    result = SinPolySmall(r, q);
  } else {
    auto [r, q] = PayneHanekReduction(x_abs);
    auto [r_small, q_small] = CodyWaiteReduction(x_abs);
    result = Lt(x_abs, switch_over).where(SinPolySmall(r_small, q_small), SinPolyLarge(r, q));
  }
  result = result * x_sign;
  UOpPtr nan = d.const_like(kNan);
  return LazyMapNumbers(d, nan, nan, nan, result);
}

UOpPtr XExp2(const UOpPtr& d) {
  UOPC_CHECK(IsTranscendentalDType(d->dtype()), "XExp2 needs a float16/32/64 input");
  UOpPtr zero = d.const_like(0.0);
  UOpPtr x = LazyMapNumbers(d, zero, zero, zero, d);
  UOpPtr q = Rintk(x);
  UOpPtr s = x - q.cast(x->dtype());
  UOpPtr u;
  if (ScalarOf(d) == ScalarType::kFloat64) {
    u = PolyN(s, {0.4434359082926529454e-9, 0.7073164598085707425e-8, 0.1017819260921760451e-6,
                  0.1321543872511327615e-5, 0.1525273353517584730e-4, 0.1540353045101147808e-3,
                  0.1333355814670499073e-2, 0.9618129107597600536e-2, 0.5550410866482046596e-1,
                  0.2402265069591012214e+0, 0.6931471805599452862e+0, 0.1000000000000000000e+1});
  } else {
    u = PolyN(s, {0.1535920892e-3, 0.1339262701e-2, 0.9618384764e-2, 0.5550347269e-1, 0.2402264476e+0,
                  0.6931471825e+0, 1.0});
  }
  u = Ldexp2k(u, q);
  double upper, lower;
  switch (ScalarOf(d)) {
    case ScalarType::kFloat64:
      upper = 1024, lower = -2000;
      break;
    case ScalarType::kFloat32:
      upper = 128, lower = -150;
      break;
    default:
      upper = 23, lower = -22;
      break;
  }
  u = d.ge(d.const_like(upper)).where(d.const_like(kInf), u);
  u = Lt(d, lower).where(d.const_like(0.0), u);
  return d.ne(d).where(d.const_like(kNan), u);
}

UOpPtr XLog2(const UOpPtr& d) {
  UOPC_CHECK(IsTranscendentalDType(d->dtype()), "XLog2 needs a float16/32/64 input");
  if (ScalarOf(d) == ScalarType::kFloat16) {
    return CastVec(XLog2(CastVec(d, dtypes::kFloat32)), dtypes::kFloat16);
  }
  const bool is64 = ScalarOf(d) == ScalarType::kFloat64;
  UOpPtr is_denormal = Lt(d, 1e-4);
  UOpPtr a = is_denormal.where(d * 18446744073709551616.0, d);
  UOpPtr e = Ilogb2k(a * (1.0 / 0.75)).cast(a->dtype());
  UOpPtr m = Ldexp3k(a, -e);
  e = is_denormal.where(e - 64, e);
  UOpPtr x = (m - 1.0) / (m + 1.0);
  UOpPtr x2 = x * x;
  UOpPtr t, s_hi, s_lo;
  if (is64) {
    t = PolyN(x2, {0.2211941750456081490e+0, 0.2200768693152277689e+0, 0.2623708057488514656e+0,
                   0.3205977477944495502e+0, 0.4121985945485324709e+0, 0.5770780162997058982e+0,
                   0.96179669392608091449});
    s_hi = e + x * 2.885390081777926774;
    s_lo = e.const_like(0);
  } else {
    t = PolyN(x2, {0.4374550283e+0, 0.5764790177e+0, 0.9618012905120});
    s_hi = e + x * 2.8853900432586669922;
    s_lo = x * 3.2734474483568488616e-08;
  }
  UOpPtr r = t * (x * x2) + (s_hi + s_lo);
  r = Ne(d, kInf).where(r, r.const_like(kInf));
  // tinygrad writes `d < -0.0`; Python interns a CONST -0.0 as the equal CONST 0.0, and so does this (the
  // comparison is the same).
  r = Lt(d, 0.0).where(r.const_like(kNan), r);
  r = Ne(r, is64 ? -1087 : -191).where(r, r.const_like(-kInf));
  r = d.ne(d).where(r.const_like(kNan), r);
  return Ne(d.reciprocal(), -kInf).where(r, r.const_like(-kInf));
}

}  // namespace uopc
