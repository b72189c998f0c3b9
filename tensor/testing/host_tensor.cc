#include "tensor/testing/host_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace uopc {
namespace {

using Shape = std::vector<int64_t>;
using Int = __int128;  // wide enough for any product of two supported ints

// Floats beyond this are not compared (no overflow to inf, every float-to-int cast in range).
constexpr double kFloatBound = 1e6;

// ---- dtypes ----

// tinygrad v0.10.3's promo_lattice (dtype.py): each dtype's direct parents.
std::vector<DType> Parents(DType d) {
  using namespace dtypes;  // NOLINT: the table reads as tinygrad's
  if (d == kBool) return {kInt8, kUInt8};
  if (d == kInt8) return {kInt16};
  if (d == kInt16) return {kInt32};
  if (d == kInt32) return {kInt64};
  if (d == kInt64) return {kFloat16, kBFloat16};
  if (d == kUInt8) return {kInt16, kUInt16};
  if (d == kUInt16) return {kInt32, kUInt32};
  if (d == kUInt32) return {kInt64, kUInt64};
  if (d == kUInt64) return {kFloat16, kBFloat16};
  if (d == kFloat16 || d == kBFloat16) return {kFloat32};
  if (d == kFloat32) return {kFloat64};
  return {};
}

// The dtypes in tinygrad's order (priority, then size): least_upper_dtype takes the first common one.
const std::vector<DType>& Ordered() {
  using namespace dtypes;  // NOLINT
  static const std::vector<DType> order = {kBool,  kInt8,   kUInt8,   kInt16,    kUInt16,  kInt32,  kUInt32,
                                           kInt64, kUInt64, kFloat16, kBFloat16, kFloat32, kFloat64};
  return order;
}

void Ancestors(DType d, std::vector<DType>* out) {
  if (std::find(out->begin(), out->end(), d) != out->end()) return;
  out->push_back(d);
  for (DType p : Parents(d)) Ancestors(p, out);
}

int Bits(DType d) { return d.itemsize() * 8; }
bool Signed(DType d) { return d.is_int() && !d.is_unsigned(); }

// An int ALU result in dtype `d`, or nullopt when it leaves the dtype's range. tinygrad's semantics wrap
// (exec_alu truncates every result), but neither its rules nor its C code do: int32 and int64 overflow is
// undefined in C, the symbolic rules and the range analysis compute with unbounded integers (`(2 - x) < -4`
// becomes `-x < -6`; `-x < 10` on uint8 folds to True), and C computes char and short arithmetic in int
// without narrowing it before a comparison. So no program the fuzzers make overflows an ALU op; casts and
// constants still wrap (tensor/fuzz_regression_test.cc and docs/safety.md list the reproducers).
std::optional<double> IntResult(Int x, DType d) {
  if (d.is_bool()) return x != 0 ? 1.0 : 0.0;
  const int bits = Bits(d);
  const Int lo = Signed(d) ? -(Int{1} << (bits - 1)) : 0;
  const Int hi = Signed(d) ? (Int{1} << (bits - 1)) - 1 : (Int{1} << bits) - 1;
  if (x < lo || x > hi) return std::nullopt;
  return static_cast<double>(x);
}

// A value converted to int dtype `d` (a cast or a constant): modular, as C converts to a narrower type.
double Wrap(Int x, DType d) {
  if (d.is_bool()) return x != 0 ? 1.0 : 0.0;
  const Int mod = Int{1} << Bits(d);
  Int r = x % mod;
  if (r < 0) r += mod;
  if (Signed(d) && r >= mod / 2) r -= mod;
  return static_cast<double>(r);
}

double F32(double x) { return static_cast<double>(static_cast<float>(x)); }

// The float32 spacing at |x|.
double Ulp32(double x) {
  x = std::fabs(x);
  if (x < std::ldexp(1.0, -126)) return std::ldexp(1.0, -149);
  int e = 0;
  std::frexp(x, &e);  // x = m * 2^e, m in [0.5, 1)
  return std::ldexp(1.0, e - 24);
}

// A float result: the float32 value of `exact`, its rounding added to `err`; nullopt past the bound.
bool FloatResult(double exact, double err, double* v, double* e) {
  if (!std::isfinite(exact) || !std::isfinite(err) || std::fabs(exact) + err > kFloatBound) return false;
  *v = F32(exact);
  *e = err + std::fabs(exact - *v);
  return true;
}

// ---- indexes ----

Shape Strides(const Shape& shape) {
  Shape s(shape.size(), 1);
  for (int i = static_cast<int>(shape.size()) - 2; i >= 0; --i) s[i] = s[i + 1] * shape[i + 1];
  return s;
}

Shape Unravel(int64_t i, const Shape& shape) {
  Shape idx(shape.size(), 0);
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    if (shape[d] == 0) continue;
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

// The flat index of `a` that broadcasting reads at position `idx` of the (wider or equal) shape `out`.
int64_t BroadcastIndex(const Shape& idx, const Shape& out, const Shape& a_shape, const Shape& a_strides) {
  int64_t flat = 0;
  const size_t off = out.size() - a_shape.size();
  for (size_t d = 0; d < a_shape.size(); ++d) {
    if (a_shape[d] != 1) flat += idx[off + d] * a_strides[d];
  }
  return flat;
}

HostTensor Empty(DType dtype, Shape shape) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.v.assign(HostNumel(t.shape), 0.0);
  t.err.assign(t.v.size(), 0.0);
  return t;
}

// The tensor broadcast to `shape`.
HostTensor Broadcast(const HostTensor& a, const Shape& shape) {
  if (a.shape == shape) return a;
  HostTensor out = Empty(a.dtype, shape);
  const Shape strides = Strides(a.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    int64_t j = BroadcastIndex(Unravel(i, shape), shape, a.shape, strides);
    out.v[i] = a.v[j];
    out.err[i] = a.err[j];
  }
  return out;
}

// A number as a constant of `dtype` (tinygrad's dtypes.as_const, then the constant's value on a device).
double ConstAs(const HostScalar& s, DType dtype) {
  if (dtype.is_bool()) return s.value != 0 ? 1.0 : 0.0;
  if (dtype.is_float()) return F32(s.value);
  return Wrap(static_cast<Int>(s.value), dtype);
}

// The operands of a binary op as two tensors of one shape and dtype (tinygrad's _broadcasted), or nullopt.
std::optional<std::pair<HostTensor, HostTensor>> Broadcasted(const HostOperand& a, const HostOperand& b,
                                                             bool match_dtype = true) {
  if (a.tensor == nullptr && b.tensor == nullptr) return std::nullopt;
  const HostTensor& t = a.tensor != nullptr ? *a.tensor : *b.tensor;
  auto as_tensor = [&](const HostOperand& o) {
    if (o.tensor != nullptr) return *o.tensor;
    DType d = HostScalarDType(t.dtype, o.scalar.kind);
    return HostTensor::Of(d, {}, {ConstAs(o.scalar, d)});
  };
  HostTensor x = as_tensor(a), y = as_tensor(b);
  if (!HostSupported(x.dtype) || !HostSupported(y.dtype)) return std::nullopt;
  if (match_dtype && x.dtype != y.dtype) {
    DType out = HostLeastUpper(x.dtype, y.dtype);
    if (!HostSupported(out)) return std::nullopt;
    std::optional<HostTensor> cx = HostCast(x, out), cy = HostCast(y, out);
    if (!cx || !cy) return std::nullopt;
    x = *std::move(cx);
    y = *std::move(cy);
  }
  std::optional<Shape> shape = HostBroadcastShape(x.shape, y.shape);
  if (!shape) return std::nullopt;
  return std::make_pair(Broadcast(x, *shape), Broadcast(y, *shape));
}

// Whether `a < b` (or ==) is decided for values within their bounds.
bool Decided(double a, double ea, double b, double eb) {
  const double e = ea + eb;
  return e == 0 || std::fabs(a - b) > e;
}

// The truth of a value (x != 0), or nullopt when the bound includes 0.
std::optional<bool> Truth(double x, double e) {
  if (e > 0 && std::fabs(x) <= e) return std::nullopt;
  return x != 0;
}

// One element of a float binary op: the value and the bound.
bool FloatBinary(BinaryOp op, double a, double ea, double b, double eb, double* v, double* e) {
  switch (op) {
    case BinaryOp::kAdd:
      return FloatResult(a + b, ea + eb, v, e);
    case BinaryOp::kSub:
      // a + (-b): negation is exact.
      return FloatResult(a - b, ea + eb, v, e);
    case BinaryOp::kMul:
      return FloatResult(a * b, std::fabs(a) * eb + std::fabs(b) * ea + ea * eb, v, e);
    case BinaryOp::kDiv: {
      // tinygrad: a * b.reciprocal(), two roundings.
      if (std::fabs(b) - eb <= 1.0 / kFloatBound) return false;
      double r = 0, er = 0;
      if (!FloatResult(1.0 / b, eb / (std::fabs(b) * (std::fabs(b) - eb)), &r, &er)) return false;
      return FloatResult(a * r, std::fabs(a) * er + std::fabs(r) * ea + ea * er, v, e);
    }
    case BinaryOp::kMax:
      *v = std::max(a, b);
      *e = std::max(ea, eb);
      return true;
    case BinaryOp::kMin:
      *v = std::min(a, b);
      *e = std::max(ea, eb);
      return true;
    default:
      return false;
  }
}

// One element of an int (or bool) binary op in dtype `d`, or nullopt.
std::optional<double> IntBinary(BinaryOp op, double da, double db, DType d) {
  const Int a = static_cast<Int>(da), b = static_cast<Int>(db);
  if (d.is_bool()) {
    const bool x = a != 0, y = b != 0;
    switch (op) {
      case BinaryOp::kAdd:  // a bool ADD is an OR on every device
      case BinaryOp::kOr:
      case BinaryOp::kMax:
        return (x || y) ? 1.0 : 0.0;
      case BinaryOp::kSub:  // a + (-b), and -b is logical_not(b)
        return (x || !y) ? 1.0 : 0.0;
      case BinaryOp::kMul:
      case BinaryOp::kAnd:
      case BinaryOp::kMin:
        return (x && y) ? 1.0 : 0.0;
      case BinaryOp::kXor:
        return (x != y) ? 1.0 : 0.0;
      default:
        return std::nullopt;
    }
  }
  switch (op) {
    case BinaryOp::kAdd:
      return IntResult(a + b, d);
    case BinaryOp::kSub:
      // a + (-b); -b of an unsigned b is not refused: the device's a + b * -1 is a - b where that is in
      // range.
      return IntResult(a - b, d);
    case BinaryOp::kMul:
      return IntResult(a * b, d);
    case BinaryOp::kIDiv: {
      // Truncating; x // 0 is 0 and MIN // -1 is MIN on every device (docs/safety.md).
      if (b == 0) return 0.0;
      return IntResult(a / b, d);  // C++ division truncates; MIN / -1 leaves the range: refused
    }
    case BinaryOp::kMod: {
      // tinygrad: a - floor(float(a) * float(b).reciprocal()) * b, in float32 (least_upper_float).
      if (b == 0) return std::nullopt;  // the float quotient is inf or nan; its cast to int is undefined
      if (std::fabs(da) >= 16777216.0 || std::fabs(db) >= 16777216.0) return std::nullopt;
      const double fq = std::floor(F32(F32(da) * F32(1.0 / F32(db))));
      if (std::fabs(fq) > 2147483647.0) return std::nullopt;
      std::optional<double> q = IntResult(static_cast<Int>(fq), d);  // floor(...).cast(a.dtype)
      if (!q) return std::nullopt;
      std::optional<double> prod = IntResult(static_cast<Int>(*q) * b, d);
      if (!prod) return std::nullopt;
      return IntResult(a - static_cast<Int>(*prod), d);
    }
    case BinaryOp::kMax:
      return static_cast<double>(std::max(a, b));
    case BinaryOp::kMin:
      return static_cast<double>(std::min(a, b));
    case BinaryOp::kAnd:
      return IntResult(a & b, d);
    case BinaryOp::kOr:
      return IntResult(a | b, d);
    case BinaryOp::kXor:
      return IntResult(a ^ b, d);
    default:
      return std::nullopt;
  }
}

bool IsComparison(BinaryOp op) {
  return op == BinaryOp::kLt || op == BinaryOp::kGt || op == BinaryOp::kLe || op == BinaryOp::kGe ||
         op == BinaryOp::kEq || op == BinaryOp::kNe;
}

bool Compare(BinaryOp op, double a, double b) {
  switch (op) {
    case BinaryOp::kLt:
      return a < b;
    case BinaryOp::kGt:
      return a > b;
    case BinaryOp::kLe:
      return a <= b;
    case BinaryOp::kGe:
      return a >= b;
    case BinaryOp::kEq:
      return a == b;
    default:
      return a != b;
  }
}

Shape ReducedShape(const Shape& shape, const std::set<int64_t>& axes, bool keepdim) {
  Shape out;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (!axes.count(static_cast<int64_t>(d))) {
      out.push_back(shape[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
}

// The elements of `a` grouped by the position they reduce into (in the keepdim shape's order).
std::vector<std::vector<int64_t>> ReduceGroups(const HostTensor& a, const std::set<int64_t>& axes) {
  const Shape kept = ReducedShape(a.shape, axes, /*keepdim=*/true);
  const Shape kept_strides = Strides(kept);
  std::vector<std::vector<int64_t>> groups(HostNumel(kept));
  for (int64_t i = 0; i < a.numel(); ++i) {
    Shape idx = Unravel(i, a.shape);
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      if (!axes.count(static_cast<int64_t>(d))) o += idx[d] * kept_strides[d];
    }
    groups[o].push_back(i);
  }
  return groups;
}

// The smallest k with x * 2^k an integer (up to 60).
int Granularity(double x) {
  int k = 0;
  while (k < 60 && x != std::floor(x)) {
    x *= 2;
    ++k;
  }
  return k;
}

// A float sum of `vals` in any order: the value and a bound that covers every order's roundings.
bool FloatSum(const std::vector<double>& vals, const std::vector<double>& errs, double* v, double* e) {
  double exact = 0, abs_sum = 0, err = 0;
  int grain = 0;
  for (size_t i = 0; i < vals.size(); ++i) {
    exact += vals[i];
    abs_sum += std::fabs(vals[i]);
    err += errs[i];
    grain = std::max(grain, Granularity(vals[i]));
  }
  // Every partial sum is exact in float32 when all of them fit 24 bits at the finest granularity.
  const bool exact_partials = std::ldexp(abs_sum, grain) < 16777216.0;
  if (!exact_partials && vals.size() > 1) err += static_cast<double>(vals.size()) * Ulp32(abs_sum);
  return FloatResult(exact, err, v, e);
}

}  // namespace

// ---- public ----

HostTensor HostTensor::Of(DType dtype, std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.v = std::move(values);
  t.err.assign(t.v.size(), 0.0);
  return t;
}

std::string HostScalar::ToString() const {
  switch (kind) {
    case Kind::kBool:
      return value != 0 ? "true" : "false";
    case Kind::kInt:
      return absl::StrCat(static_cast<int64_t>(value));
    case Kind::kFloat:
      return absl::StrCat(value, value == std::floor(value) ? ".0" : "");
  }
  return "";
}

bool HostSupported(DType d) {
  using namespace dtypes;  // NOLINT
  return d == kBool || d == kInt8 || d == kUInt8 || d == kInt16 || d == kUInt16 || d == kInt32 ||
         d == kUInt32 || d == kInt64 || d == kFloat32;
}

DType HostLeastUpper(DType a, DType b) {
  if (a == b) return a;
  std::vector<DType> pa, pb;
  Ancestors(a, &pa);
  Ancestors(b, &pb);
  for (DType d : Ordered()) {
    if (std::find(pa.begin(), pa.end(), d) != pa.end() && std::find(pb.begin(), pb.end(), d) != pb.end()) {
      return d;
    }
  }
  return dtypes::kFloat64;
}

DType HostScalarDType(DType t, HostScalar::Kind kind) {
  // A float tensor, or an int tensor with an int, keeps its dtype; otherwise the number's Python dtype.
  if (t.is_float() || (t.is_int() && kind == HostScalar::Kind::kInt)) return t;
  switch (kind) {
    case HostScalar::Kind::kBool:
      return dtypes::kBool;
    case HostScalar::Kind::kInt:
      return dtypes::kInt32;
    case HostScalar::Kind::kFloat:
      return dtypes::kFloat32;
  }
  return t;
}

DType HostSumAccDType(DType d) {
  if (d.is_int() && d.is_unsigned()) return HostLeastUpper(d, dtypes::kUInt32);
  if (d.is_int() || d.is_bool()) return HostLeastUpper(d, dtypes::kInt32);
  return HostLeastUpper(d, dtypes::kFloat32);
}

bool HostRepresentable(double x, DType d) {
  if (d.is_bool()) return x == 0 || x == 1;
  if (d.is_float()) return std::fabs(x) <= kFloatBound;
  const int bits = Bits(d);
  if (Signed(d)) return x >= -std::ldexp(1.0, bits - 1) && x < std::ldexp(1.0, bits - 1);
  return x >= 0 && x < std::ldexp(1.0, bits);
}

std::optional<std::vector<int64_t>> HostBroadcastShape(absl::Span<const int64_t> a,
                                                       absl::Span<const int64_t> b) {
  const size_t n = std::max(a.size(), b.size());
  Shape out(n);
  for (size_t i = 0; i < n; ++i) {
    const int64_t x = i < n - a.size() ? 1 : a[i - (n - a.size())];
    const int64_t y = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[i] = x == 1 ? y : x;
  }
  return out;
}

int64_t HostNumel(absl::Span<const int64_t> shape) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return n;
}

std::optional<HostTensor> HostCast(const HostTensor& a, DType to) {
  if (!HostSupported(a.dtype) || !HostSupported(to)) return std::nullopt;
  HostTensor out = Empty(to, a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.v[i], e = a.err[i];
    if (to.is_bool()) {
      std::optional<bool> t = Truth(x, e);
      if (!t) return std::nullopt;
      out.v[i] = *t ? 1.0 : 0.0;
    } else if (to.is_float()) {
      // Converting an int is correctly rounded; a float32 stays.
      if (!FloatResult(x, e, &out.v[i], &out.err[i])) return std::nullopt;
    } else if (a.dtype.is_float()) {
      // C truncates; a value out of the target's range is undefined, and a bound that crosses an integer
      // leaves the result open.
      const double t = std::trunc(x);
      if (e > 0 && (std::trunc(x - e) != t || std::trunc(x + e) != t)) return std::nullopt;
      if (!HostRepresentable(t, to)) return std::nullopt;
      out.v[i] = t;
    } else {
      // Between ints (and from bool): modular.
      out.v[i] = Wrap(static_cast<Int>(x), to);
    }
  }
  return out;
}

std::optional<HostTensor> HostBinary(BinaryOp op, const HostOperand& a, const HostOperand& b) {
  std::optional<std::pair<HostTensor, HostTensor>> xy = Broadcasted(a, b);
  if (!xy) return std::nullopt;
  auto& [x, y] = *xy;
  const DType d = x.dtype;
  if (op == BinaryOp::kDiv) {
    // True division in float32 (least_upper_float of each side).
    if (!d.is_float()) {
      std::optional<HostTensor> fx = HostCast(x, dtypes::kFloat32), fy = HostCast(y, dtypes::kFloat32);
      if (!fx || !fy) return std::nullopt;
      x = *std::move(fx);
      y = *std::move(fy);
    }
  }
  if ((op == BinaryOp::kIDiv || op == BinaryOp::kMod) && !d.is_int()) return std::nullopt;
  if ((op == BinaryOp::kAnd || op == BinaryOp::kOr || op == BinaryOp::kXor) && d.is_float())
    return std::nullopt;
  HostTensor out = Empty(IsComparison(op) ? dtypes::kBool : x.dtype, x.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const double va = x.v[i], ea = x.err[i], vb = y.v[i], eb = y.err[i];
    if (IsComparison(op)) {
      if (!Decided(va, ea, vb, eb)) return std::nullopt;
      out.v[i] = Compare(op, va, vb) ? 1.0 : 0.0;
    } else if (x.dtype.is_float()) {
      if (!FloatBinary(op, va, ea, vb, eb, &out.v[i], &out.err[i])) return std::nullopt;
    } else {
      std::optional<double> r = IntBinary(op, va, vb, d);
      if (!r) return std::nullopt;
      out.v[i] = *r;
    }
  }
  return out;
}

std::optional<HostTensor> HostUnary(UnaryOp op, const HostTensor& a) {
  if (!HostSupported(a.dtype)) return std::nullopt;
  const DType d = a.dtype;
  const bool transcendental = op == UnaryOp::kExp2 || op == UnaryOp::kSqrt || op == UnaryOp::kSin ||
                              op == UnaryOp::kReciprocal || op == UnaryOp::kFloor;
  if (transcendental && !d.is_float()) return std::nullopt;
  if (d.is_bool() && op != UnaryOp::kNeg && op != UnaryOp::kLogicalNot && op != UnaryOp::kBitwiseNot) {
    return std::nullopt;
  }
  if (op == UnaryOp::kBitwiseNot && d.is_float()) return std::nullopt;
  HostTensor out = Empty(op == UnaryOp::kLogicalNot ? dtypes::kBool : d, a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.v[i], e = a.err[i];
    double& v = out.v[i];
    double& ve = out.err[i];
    if (op == UnaryOp::kLogicalNot || (d.is_bool() && (op == UnaryOp::kNeg || op == UnaryOp::kBitwiseNot))) {
      std::optional<bool> t = Truth(x, e);
      if (!t) return std::nullopt;
      v = *t ? 0.0 : 1.0;
      continue;
    }
    if (!d.is_float()) {
      const Int xi = static_cast<Int>(x);
      std::optional<double> r;
      switch (op) {
        case UnaryOp::kNeg:
          r = IntResult(-xi, d);  // x * -1
          break;
        case UnaryOp::kAbs:
          r = IntResult(xi < 0 ? -xi : xi, d);  // x * sign(x)
          break;
        case UnaryOp::kRelu:
          r = static_cast<double>(std::max<Int>(xi, 0));
          break;
        case UnaryOp::kSquare:
          r = IntResult(xi * xi, d);
          break;
        case UnaryOp::kBitwiseNot:
          r = Wrap(~xi, d);  // x ^ -1: every bit flipped, in range for every int dtype
          break;
        default:
          return std::nullopt;
      }
      if (!r) return std::nullopt;
      v = *r;
      continue;
    }
    bool ok = true;
    switch (op) {
      case UnaryOp::kNeg:
        v = -x;
        ve = e;
        break;
      case UnaryOp::kAbs:
        v = std::fabs(x);
        ve = e;
        break;
      case UnaryOp::kRelu:  // 1-Lipschitz: no decision to pin down
        v = std::max(x, 0.0);
        ve = e;
        break;
      case UnaryOp::kSquare:
        ok = FloatResult(x * x, 2 * std::fabs(x) * e + e * e, &v, &ve);
        break;
      case UnaryOp::kExp2: {
        if (std::fabs(x) + e > 19) return std::nullopt;
        const double y = std::exp2(x);
        // The input's bound, then a few float32 ulps for the device's exp2.
        ok = FloatResult(y, y * (std::exp2(e) - 1) + std::ldexp(y, -20) + 1e-30, &v, &ve);
        break;
      }
      case UnaryOp::kSqrt:
        if (x - e < 0) return std::nullopt;
        ok = FloatResult(std::sqrt(x), std::sqrt(e) + Ulp32(std::sqrt(x)), &v, &ve);
        break;
      case UnaryOp::kSin:
        if (std::fabs(x) + e > 100) return std::nullopt;
        ok = FloatResult(std::sin(x), e + 2e-6, &v, &ve);
        break;
      case UnaryOp::kReciprocal:
        if (std::fabs(x) - e <= 1.0 / kFloatBound) return std::nullopt;
        ok = FloatResult(1.0 / x, e / (std::fabs(x) * (std::fabs(x) - e)), &v, &ve);
        break;
      case UnaryOp::kFloor: {
        // (x < trunc(x)).where(trunc(x) - 1, trunc(x)): open when the bound reaches an integer.
        const double f = std::floor(x);
        if (e > 0 && (std::floor(x - e) != f || std::floor(x + e) != f)) return std::nullopt;
        v = f;
        ve = 0;
        break;
      }
      default:
        return std::nullopt;
    }
    if (!ok) return std::nullopt;
  }
  return out;
}

std::optional<HostTensor> HostWhere(const HostTensor& cond, const HostOperand& x, const HostOperand& y) {
  if (!cond.dtype.is_bool()) return std::nullopt;
  std::optional<std::pair<HostTensor, HostTensor>> xy =
      x.tensor != nullptr ? Broadcasted(x, y) : [&]() -> std::optional<std::pair<HostTensor, HostTensor>> {
    std::optional<std::pair<HostTensor, HostTensor>> yx = Broadcasted(y, x);
    if (!yx) return std::nullopt;
    return std::make_pair(yx->second, yx->first);
  }();
  if (!xy) return std::nullopt;
  std::optional<Shape> shape = HostBroadcastShape(cond.shape, xy->first.shape);
  if (!shape) return std::nullopt;
  HostTensor c = Broadcast(cond, *shape), a = Broadcast(xy->first, *shape), b = Broadcast(xy->second, *shape);
  HostTensor out = Empty(a.dtype, *shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const HostTensor& pick = c.v[i] != 0 ? a : b;
    out.v[i] = pick.v[i];
    out.err[i] = pick.err[i];
  }
  return out;
}

std::optional<HostTensor> HostReduce(ReduceOp op, const HostTensor& in, absl::Span<const int64_t> axes_in,
                                     bool keepdim) {
  if (!HostSupported(in.dtype)) return std::nullopt;
  std::set<int64_t> axes(axes_in.begin(), axes_in.end());
  // The dtype the reduction runs in, and the result's.
  HostTensor a = in;
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kMean: {
      std::optional<HostTensor> c = HostCast(in, HostSumAccDType(in.dtype));
      if (!c) return std::nullopt;
      a = *std::move(c);
      break;
    }
    case ReduceOp::kAny:
    case ReduceOp::kAll: {
      std::optional<HostTensor> c = HostCast(in, dtypes::kBool);
      if (!c) return std::nullopt;
      a = *std::move(c);
      break;
    }
    case ReduceOp::kProd:
      if (in.dtype.is_bool()) return std::nullopt;
      break;
    default:
      break;
  }
  const DType d = a.dtype;
  if (in.shape.empty()) axes.clear();
  std::vector<std::vector<int64_t>> groups = ReduceGroups(a, axes);
  HostTensor out = Empty(op == ReduceOp::kMean ? dtypes::kFloat32 : d, ReducedShape(a.shape, axes, keepdim));
  for (size_t o = 0; o < groups.size(); ++o) {
    const std::vector<int64_t>& g = groups[o];
    std::vector<double> vals, errs;
    for (int64_t i : g) {
      vals.push_back(a.v[i]);
      errs.push_back(a.err[i]);
    }
    double& v = out.v[o];
    double& e = out.err[o];
    switch (op) {
      case ReduceOp::kSum:
      case ReduceOp::kMean: {
        if (d.is_float()) {
          if (!FloatSum(vals, errs, &v, &e)) return std::nullopt;
        } else {
          Int s = 0;
          for (double x : vals) s += static_cast<Int>(x);
          // int32 overflow anywhere in any order: the partial sums are bounded by the sum of magnitudes.
          Int mag = 0;
          for (double x : vals) mag += static_cast<Int>(std::fabs(x));
          if (Signed(d) && !IntResult(mag, d)) return std::nullopt;
          std::optional<double> r = IntResult(s, d);
          if (!r) return std::nullopt;
          v = *r;
        }
        if (op == ReduceOp::kMean) {
          // numerator.div(n): float(sum) * float(n).reciprocal(), in float32.
          const double n = static_cast<double>(g.size());
          if (n == 0) return std::nullopt;
          double fv = 0, fe = 0, r = 0, re = 0;
          if (!FloatResult(v, e, &fv, &fe) || !FloatResult(1.0 / n, 0, &r, &re)) return std::nullopt;
          if (!FloatResult(fv * r, fe * r + std::fabs(fv) * re, &v, &e)) return std::nullopt;
        }
        break;
      }
      case ReduceOp::kProd: {
        if (d.is_float()) {
          double p = 1, hi = 1;
          for (size_t i = 0; i < vals.size(); ++i) {
            p *= vals[i];
            hi *= std::fabs(vals[i]) + errs[i];
          }
          // Every factor at its bound's edge, plus a rounding per multiplication.
          const double err = (hi - std::fabs(p)) + static_cast<double>(vals.size()) * Ulp32(hi);
          if (!FloatResult(p, err, &v, &e)) return std::nullopt;
        } else {
          // In range in any order: the product of the magnitudes fits.
          Int p = 1, mag = 1;
          for (double x : vals) {
            p *= static_cast<Int>(x);
            mag *= std::max<Int>(1, static_cast<Int>(std::fabs(x)));
            if (mag > (Int{1} << 62)) return std::nullopt;
          }
          if (!IntResult(mag, d)) return std::nullopt;
          std::optional<double> r = IntResult(p, d);
          if (!r) return std::nullopt;
          v = *r;
        }
        break;
      }
      case ReduceOp::kMax:
      case ReduceOp::kMin:
      case ReduceOp::kAny:
      case ReduceOp::kAll: {
        // Over nothing, the identity (-inf, the dtype's minimum) is not a value the reference compares.
        if (vals.empty()) return std::nullopt;
        const bool is_max = op == ReduceOp::kMax || op == ReduceOp::kAny;
        v = vals[0];
        e = 0;
        for (size_t i = 0; i < vals.size(); ++i) {
          v = is_max ? std::max(v, vals[i]) : std::min(v, vals[i]);
          e = std::max(e, errs[i]);
        }
        break;
      }
    }
  }
  return out;
}

std::optional<HostTensor> HostCumsum(const HostTensor& a, int64_t axis) {
  if (!HostSupported(a.dtype)) return std::nullopt;
  if (a.shape.empty() || HostNumel(a.shape) == 0) return a;  // tinygrad returns the tensor itself
  std::optional<HostTensor> c = HostCast(a, HostSumAccDType(a.dtype));
  if (!c) return std::nullopt;
  HostTensor out = *c;
  const Shape strides = Strides(a.shape);
  for (int64_t i = 0; i < a.numel(); ++i) {
    const Shape idx = Unravel(i, a.shape);
    std::vector<double> vals, errs;
    for (int64_t k = 0; k <= idx[axis]; ++k) {
      const int64_t j = i + (k - idx[axis]) * strides[axis];
      vals.push_back(c->v[j]);
      errs.push_back(c->err[j]);
    }
    if (out.dtype.is_float()) {
      if (!FloatSum(vals, errs, &out.v[i], &out.err[i])) return std::nullopt;
    } else {
      Int s = 0, mag = 0;
      for (double x : vals) {
        s += static_cast<Int>(x);
        mag += static_cast<Int>(std::fabs(x));
      }
      if (Signed(out.dtype) && !IntResult(mag, out.dtype)) return std::nullopt;
      std::optional<double> r = IntResult(s, out.dtype);
      if (!r) return std::nullopt;
      out.v[i] = *r;
    }
  }
  return out;
}

// ---- movement ----

HostTensor HostReshape(const HostTensor& a, std::vector<int64_t> shape) {
  HostTensor out = a;
  out.shape = std::move(shape);
  return out;
}

HostTensor HostPermute(const HostTensor& a, absl::Span<const int64_t> order) {
  Shape shape(order.size());
  for (size_t d = 0; d < order.size(); ++d) shape[d] = a.shape[order[d]];
  HostTensor out = Empty(a.dtype, shape);
  const Shape in_strides = Strides(a.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const Shape idx = Unravel(i, shape);
    int64_t j = 0;
    for (size_t d = 0; d < order.size(); ++d) j += idx[d] * in_strides[order[d]];
    out.v[i] = a.v[j];
    out.err[i] = a.err[j];
  }
  return out;
}

HostTensor HostExpand(const HostTensor& a, std::vector<int64_t> shape) { return Broadcast(a, shape); }

HostTensor HostPad(const HostTensor& a, absl::Span<const std::pair<int64_t, int64_t>> padding, double value) {
  Shape shape = a.shape;
  for (size_t d = 0; d < shape.size(); ++d) shape[d] += padding[d].first + padding[d].second;
  HostTensor out = Empty(a.dtype, shape);
  const Shape in_strides = Strides(a.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const Shape idx = Unravel(i, shape);
    int64_t j = 0;
    bool inside = true;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t k = idx[d] - padding[d].first;
      if (k < 0 || k >= a.shape[d]) inside = false;
      j += k * in_strides[d];
    }
    out.v[i] = inside ? a.v[j] : value;
    out.err[i] = inside ? a.err[j] : 0;
  }
  return out;
}

std::optional<HostTensor> HostPadWith(const HostTensor& a,
                                      absl::Span<const std::pair<int64_t, int64_t>> padding,
                                      const HostScalar& value) {
  if (value.value == 0) return HostPad(a, padding, 0);  // Python's `value == 0`, True for 0, 0.0 and False
  // where(0, value) on a condition of a's dtype: each number takes its dtype next to a's, then they promote.
  const DType zero_dtype = HostScalarDType(a.dtype, HostScalar::Kind::kInt);
  const DType value_dtype = HostScalarDType(a.dtype, value.kind);
  const DType w_dtype = HostLeastUpper(zero_dtype, value_dtype);
  if (!HostSupported(w_dtype)) return std::nullopt;
  HostTensor ones = HostTensor::Of(a.dtype, a.shape, std::vector<double>(a.numel(), 1.0));
  HostTensor inside = HostPad(ones, padding, 0);
  std::optional<HostTensor> w =
      HostCast(HostTensor::Of(value_dtype, {}, {ConstAs(value, value_dtype)}), w_dtype);
  if (!w) return std::nullopt;
  HostTensor filled = HostTensor::Of(w_dtype, inside.shape, std::vector<double>(inside.numel(), 0.0));
  for (int64_t i = 0; i < filled.numel(); ++i) filled.v[i] = inside.v[i] != 0 ? 0.0 : w->v[0];
  HostTensor padded = HostPad(a, padding, 0);
  return HostBinary(BinaryOp::kAdd, HostOperand{&padded, {}}, HostOperand{&filled, {}});
}

HostTensor HostShrink(const HostTensor& a, absl::Span<const std::pair<int64_t, int64_t>> bounds) {
  Shape shape(a.shape.size());
  for (size_t d = 0; d < shape.size(); ++d) shape[d] = bounds[d].second - bounds[d].first;
  HostTensor out = Empty(a.dtype, shape);
  const Shape in_strides = Strides(a.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const Shape idx = Unravel(i, shape);
    int64_t j = 0;
    for (size_t d = 0; d < shape.size(); ++d) j += (idx[d] + bounds[d].first) * in_strides[d];
    out.v[i] = a.v[j];
    out.err[i] = a.err[j];
  }
  return out;
}

HostTensor HostFlip(const HostTensor& a, absl::Span<const int64_t> axes) {
  std::set<int64_t> flip(axes.begin(), axes.end());
  HostTensor out = Empty(a.dtype, a.shape);
  const Shape strides = Strides(a.shape);
  for (int64_t i = 0; i < out.numel(); ++i) {
    const Shape idx = Unravel(i, a.shape);
    int64_t j = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      j += (flip.count(static_cast<int64_t>(d)) ? a.shape[d] - 1 - idx[d] : idx[d]) * strides[d];
    }
    out.v[i] = a.v[j];
    out.err[i] = a.err[j];
  }
  return out;
}

// ---- bytes and comparison ----

std::vector<uint8_t> HostToBytes(const HostTensor& a) {
  const int size = a.dtype.itemsize();
  std::vector<uint8_t> bytes(a.v.size() * size);
  for (size_t i = 0; i < a.v.size(); ++i) {
    uint8_t* p = bytes.data() + i * size;
    if (a.dtype == dtypes::kFloat32) {
      const float f = static_cast<float>(a.v[i]);
      std::memcpy(p, &f, 4);
    } else {
      // Two's complement, little-endian: the low bytes of the integer.
      const int64_t x = static_cast<int64_t>(a.v[i]);
      for (int b = 0; b < size; ++b) p[b] = static_cast<uint8_t>(static_cast<uint64_t>(x) >> (8 * b));
    }
  }
  return bytes;
}

std::vector<double> HostFromBytes(DType dtype, absl::Span<const uint8_t> bytes) {
  const int size = dtype.itemsize();
  std::vector<double> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) {
    const uint8_t* p = bytes.data() + i * size;
    if (dtype == dtypes::kFloat32) {
      float f;
      std::memcpy(&f, p, 4);
      out[i] = f;
    } else if (dtype.is_bool()) {
      out[i] = p[0] != 0 ? 1.0 : 0.0;
    } else {
      uint64_t x = 0;
      for (int b = 0; b < size; ++b) x |= static_cast<uint64_t>(p[b]) << (8 * b);
      if (Signed(dtype) && size < 8 && (x >> (8 * size - 1)) != 0) x |= ~uint64_t{0} << (8 * size);
      out[i] = Signed(dtype) ? static_cast<double>(static_cast<int64_t>(x)) : static_cast<double>(x);
    }
  }
  return out;
}

std::string HostCompare(const HostTensor& want, absl::Span<const double> got) {
  if (static_cast<int64_t>(got.size()) != want.numel()) {
    return absl::StrCat("got ", got.size(), " elements, want ", want.numel());
  }
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double w = want.v[i], e = want.err[i], g = got[i];
    const double tol = e > 0 ? e + Ulp32(std::fabs(w) + e) : 0;
    if (std::isfinite(g) && std::fabs(g - w) <= tol) continue;
    return absl::StrCat("element ", i, " (index (", absl::StrJoin(Unravel(i, want.shape), ", "), ")): got ",
                        g, ", want ", w, " (bound ", tol, ")");
  }
  return "";
}

}  // namespace uopc
