// Elementwise ops: casts, arithmetic with Python's promotion and broadcasting, comparisons, where, unary math
// and activations, each built as tinygrad's tensor.py builds it (e.g. exp is exp2 of x * 1/ln 2, abs is
// x * sign(x)).
#include <cmath>

#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "runtime/registry.h"
#include "tensor/multi.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::Error;

namespace {

constexpr double kLn2 = 0.6931471805599453;

// fxn(lhs, rhs) on the broadcast operands (tinygrad's _apply_broadcasted_uop).
Tensor Binary(const Tensor& self, Ops op, const Tensor::Operand& x, bool reverse) {
  if (self.ok() && x.is_tensor() && x.tensor().ok() && self.Device() != x.tensor().Device()) {
    return Error(OpName(op), absl::StrCat("operands on different devices: ", TupleString(self.Shape()),
                                          " on ", self.Device(), " and ", TupleString(x.tensor().Shape()),
                                          " on ", x.tensor().Device(), " (move one with .To(device))"));
  }
  auto [a, b] = self.Broadcasted(x, reverse);
  UOPC_TENSOR_PROPAGATE(&a, &b);
  return Tensor(Alu(op, {a.uop(), b.uop()}));
}

Tensor Unary(const Tensor& self, Ops op) {
  UOPC_TENSOR_PROPAGATE(&self);
  return Tensor(Alu(op, {self.uop()}));
}

Tensor FloatUnary(const Tensor& self, Ops op) {
  UOPC_TENSOR_PROPAGATE(&self);
  return Unary(self.Cast(LeastUpperFloat(self.dtype())), op);
}

Tensor Inverse(const Tensor& t) {
  if (t.dtype().is_float()) return t.Neg();
  if (t.dtype().is_int()) return t.BitwiseNot();
  return t.LogicalNot();
}

bool IntOrBool(DType d) { return d.is_int() || d.is_bool(); }

// The polynomial with `coeffs` (highest power first) at x, by Horner's rule from 0.0 (tinygrad's polyN).
Tensor PolyN(const Tensor& x, absl::Span<const double> coeffs) {
  Tensor acc;
  for (size_t i = 0; i < coeffs.size(); ++i) acc = (i == 0 ? 0.0 * x : acc * x) + coeffs[i];
  return acc;
}

}  // namespace

Tensor Tensor::Cast(DType dt) const {
  UOPC_TENSOR_PROPAGATE(this);
  if ((dt == dtypes::kUInt8 || dt == dtypes::kUInt16) && dtype().is_float()) {
    return Tensor(CastTo(CastTo(uop(), dtypes::kInt32), dt));
  }
  if (dtype() == dt) return *this;
  return Tensor(CastTo(uop(), dt));
}

Tensor Tensor::Bitcast(DType dt) const {
  UOPC_TENSOR_PROPAGATE(this);
  int ns = dt.itemsize(), os = dtype().itemsize();
  Dims shape = Shape();
  if (ns != os && (shape.empty() || (shape.back() * os) % ns != 0)) {
    return Error("Bitcast", absl::StrCat("cannot bitcast a tensor of shape ", TupleString(shape), " from ",
                                         dtype().ToString(), " to ", dt.ToString()));
  }
  if (ns != os) {
    auto uint_of = [](int size) {
      return size == 1   ? dtypes::kUInt8
             : size == 2 ? dtypes::kUInt16
             : size == 4 ? dtypes::kUInt32
                         : dtypes::kUInt64;
    };
    DType new_uint = uint_of(ns), old_uint = uint_of(os);
    Tensor tmp = Bitcast(old_uint);
    if (ns > os) {
      Tensor acc;
      for (int i = 0; i < ns / os; ++i) {
        std::vector<IndexItem> idx = {Ellipsis{}, Slice{i, std::nullopt, ns / os}};
        Tensor part = tmp.Index(idx).Cast(new_uint) << (8 * i * os);
        acc = i == 0 ? part : acc + part;
      }
      return acc.Bitcast(dt);
    }
    std::vector<Tensor> parts;
    for (int i = 0; i < os / ns; ++i) parts.push_back(tmp >> (8 * i * ns));
    return Stack(parts, -1).Flatten(-2).Cast(new_uint).Bitcast(dt);
  }
  if (dtype() == dt) return *this;
  return Tensor(UOp::New(Ops::BITCAST, dt, {uop()}));
}

Tensor Tensor::Add(const Operand& x, bool reverse) const { return Binary(*this, Ops::ADD, x, reverse); }
Tensor Tensor::Mul(const Operand& x, bool reverse) const { return Binary(*this, Ops::MUL, x, reverse); }
Tensor Tensor::IDiv(const Operand& x, bool reverse) const { return Binary(*this, Ops::IDIV, x, reverse); }

Tensor Tensor::Sub(const Operand& x, bool reverse) const {
  auto [a, b] = Broadcasted(x, reverse);
  return a + (-b);
}

Tensor Tensor::Div(const Operand& x, bool reverse) const {
  auto [n, d] = Broadcasted(x, reverse);
  UOPC_TENSOR_PROPAGATE(&n, &d);
  return n.Cast(LeastUpperFloat(n.dtype())) * d.Cast(LeastUpperFloat(d.dtype())).Reciprocal();
}

Tensor Tensor::Mod(const Operand& x, bool reverse) const {
  auto [a, b] = Broadcasted(x, reverse);
  UOPC_TENSOR_PROPAGATE(&a, &b);
  Tensor d = a.Cast(LeastUpperFloat(a.dtype())) * b.Cast(LeastUpperFloat(b.dtype())).Reciprocal();
  DType out = a.dtype().is_int() ? a.dtype() : d.dtype();
  return a - d.Floor().Cast(out) * b;
}

#define UOPC_BITWISE(METHOD, OP)                                                              \
  Tensor Tensor::METHOD(const Operand& x, bool reverse) const {                               \
    UOPC_TENSOR_PROPAGATE(this);                                                              \
    if (!IntOrBool(dtype())) return Error(#METHOD, dtype().ToString() + " is not supported"); \
    return Binary(*this, OP, x, reverse);                                                     \
  }
UOPC_BITWISE(BitwiseAnd, Ops::AND)
UOPC_BITWISE(BitwiseOr, Ops::OR)
UOPC_BITWISE(BitwiseXor, Ops::XOR)
#undef UOPC_BITWISE

Tensor Tensor::BitwiseNot() const {
  UOPC_TENSOR_PROPAGATE(this);
  if (!IntOrBool(dtype())) return Error("BitwiseNot", dtype().ToString() + " is not supported");
  return dtype().is_bool() ? LogicalNot() : BitwiseXor(-1);
}

Tensor Tensor::LShift(int64_t bits) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (!dtype().is_unsigned() || bits < 0 || bits > 62) {
    return Error("LShift", absl::StrCat("needs an unsigned dtype and a shift in [0, 62], got ",
                                        dtype().ToString(), " and ", bits));
  }
  return Mul(int64_t{1} << bits);
}

Tensor Tensor::RShift(int64_t bits) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (!dtype().is_unsigned() || bits < 0 || bits > 62) {
    return Error("RShift", absl::StrCat("needs an unsigned dtype and a shift in [0, 62], got ",
                                        dtype().ToString(), " and ", bits));
  }
  return IDiv(int64_t{1} << bits);
}

Tensor Tensor::Pow(const Operand& x, bool reverse) const {
  auto [base, exponent] = Broadcasted(x, reverse);
  UOPC_TENSOR_PROPAGATE(&base, &exponent);
  if (!base.dtype().is_float())
    return Error("Pow", "the base needs to be float, got " + base.dtype().ToString());
  Tensor ret(Alu(Ops::POW, {base.uop(), exponent.uop()}));
  return dtype().is_float() ? ret : ret.Round().Cast(dtype());
}

Tensor Tensor::Maximum(const Operand& x) const { return Binary(*this, Ops::MAX, x, false); }
Tensor Tensor::Minimum(const Operand& x) const {
  auto [t, y] = Broadcasted(x);
  return Inverse(Inverse(t).Maximum(Inverse(y)));
}

Tensor Tensor::Lt(const Operand& x) const { return Binary(*this, Ops::CMPLT, x, false); }
Tensor Tensor::Gt(const Operand& x) const { return Binary(*this, Ops::CMPLT, x, true); }
Tensor Tensor::Ne(const Operand& x) const { return Binary(*this, Ops::CMPNE, x, false); }
Tensor Tensor::Ge(const Operand& x) const { return Lt(x).LogicalNot(); }
Tensor Tensor::Le(const Operand& x) const { return Gt(x).LogicalNot(); }
Tensor Tensor::Eq(const Operand& x) const { return Ne(x).LogicalNot(); }

Tensor Tensor::LogicalNot() const { return Cast(dtypes::kBool).Ne(true); }
Tensor Tensor::Neg() const {
  UOPC_TENSOR_PROPAGATE(this);
  return dtype().is_bool() ? LogicalNot() : Mul(-1);
}

Tensor Tensor::Where(const Operand& x_in, const Operand& y_in) const {
  UOPC_TENSOR_PROPAGATE(this);
  Operand x = x_in, y = y_in;
  if (x.is_tensor()) {
    auto [bx, by] = x.tensor().Broadcasted(y);
    x = bx;
    y = by;
  } else if (y.is_tensor()) {
    auto [by, bx] = y.tensor().Broadcasted(x);
    x = bx;
    y = by;
  }
  auto [cond1, tx] = Broadcasted(x, false, false);
  auto [cond, ty] = cond1.Broadcasted(y, false, false);
  auto [fx, fy] = tx.Broadcasted(ty);
  Tensor c = cond.Cast(dtypes::kBool);
  UOPC_TENSOR_PROPAGATE(&c, &fx, &fy);
  return Tensor(Alu(Ops::WHERE, {c.uop(), fx.uop(), fy.uop()}));
}

Tensor Tensor::Exp() const { return Mul(1 / kLn2).Exp2(); }
Tensor Tensor::Exp2() const { return FloatUnary(*this, Ops::EXP2); }
Tensor Tensor::Log() const { return Log2() * kLn2; }
Tensor Tensor::Log2() const { return FloatUnary(*this, Ops::LOG2); }
Tensor Tensor::Sqrt() const { return FloatUnary(*this, Ops::SQRT); }
Tensor Tensor::Rsqrt() const { return Sqrt().Reciprocal(); }
Tensor Tensor::Sin() const { return FloatUnary(*this, Ops::SIN); }
Tensor Tensor::Cos() const { return Sub(M_PI / 2, true).Sin(); }
Tensor Tensor::Tan() const { return Sin() / Cos(); }
Tensor Tensor::Reciprocal() const { return FloatUnary(*this, Ops::RECIP); }
Tensor Tensor::Sign() const {
  return Ne(0).Where(Lt(0).Where(FullLike(-1), FullLike(1)), FullLike(0)) + (*this) * 0;
}
Tensor Tensor::Abs() const { return (*this) * Sign(); }
Tensor Tensor::Square() const { return (*this) * (*this); }
Tensor Tensor::Trunc() const { return Cast(dtypes::kInt32).Cast(dtype()); }
Tensor Tensor::Floor() const {
  Tensor b = Trunc();
  return Lt(b).Where(b - 1, b);
}
Tensor Tensor::Ceil() const {
  Tensor b = Trunc();
  return Gt(b).Where(b + 1, b);
}
Tensor Tensor::Round() const {
  Tensor b = Cast(dtypes::kInt32) / 2.0;
  return Gt(0).Eq(b.Cast(dtypes::kInt32).Eq(b)).Where(Sub(0.5).Ceil(), Add(0.5).Floor());
}
Tensor Tensor::IsInf(bool detect_positive, bool detect_negative) const {
  return Eq(INFINITY) * detect_positive + Eq(-INFINITY) * detect_negative;
}
Tensor Tensor::IsNan() const { return Ne(*this); }
Tensor Tensor::IsFinite() const { return (IsInf() | IsNan()).LogicalNot(); }
Tensor Tensor::Clip(std::optional<Scalar> min, std::optional<Scalar> max) const {
  if (!min && !max) return Error("Clip", "at least one of min and max must be given");
  Tensor ret = min ? Maximum(*min) : *this;
  return max ? ret.Minimum(*max) : ret;
}
Tensor Tensor::Relu() const { return Gt(0).Where(*this, 0); }
Tensor Tensor::Sigmoid() const { return (1 + Mul(-1 / kLn2).Exp2()).Reciprocal(); }
Tensor Tensor::Tanh() const { return 2.0 * (2.0 * (*this)).Sigmoid() - 1.0; }
Tensor Tensor::Gelu() const {
  const Tensor& x = *this;
  return 0.5 * x * (1 + (std::sqrt(2 / M_PI) * (x + 0.044715 * x.Pow(3))).Tanh());
}
Tensor Tensor::Swish() const { return (*this) * Sigmoid(); }
Tensor Tensor::LeakyRelu(double neg_slope) const { return Lt(0).Where(neg_slope * (*this), *this); }
Tensor Tensor::Erf() const {
  Tensor t = 1.0 / (1.0 + 0.3275911 * Abs());
  Tensor p = PolyN(t, {1.061405429, -1.453152027, 1.421413741, -0.284496736, 0.254829592});
  return Sign() * (1.0 - t * p * (-Square()).Exp());
}
Tensor Tensor::Softplus(Scalar beta) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (beta.value.AsFloat() == 0) return Error("Softplus", "beta must not be 0");
  return (1.0 / beta.value.AsFloat()) * (1 + Mul(beta).Exp()).Log();
}
Tensor Tensor::Mish() const { return (*this) * Softplus().Tanh(); }
Tensor Tensor::Elu(double alpha) const { return Relu() - alpha * (1 - Exp()).Relu(); }
Tensor Tensor::Celu(double alpha) const { return Maximum(0) + (alpha * (Div(alpha).Exp() - 1)).Minimum(0); }
Tensor Tensor::Selu(double alpha, double gamma) const {
  return gamma * Ge(0).Detach().Where(*this, alpha * (Exp() - 1));
}
Tensor Tensor::Relu6() const { return Relu() - Sub(6).Relu(); }
Tensor Tensor::Hardswish() const { return (*this) * Add(3).Relu6() * (1.0 / 6); }
Tensor Tensor::Hardsigmoid(double alpha, double beta) const {
  return (alpha * (*this) + beta).Relu() - (alpha * (*this) + beta - 1).Relu();
}
Tensor Tensor::Hardtanh(Scalar min_val, Scalar max_val) const { return Clip(min_val, max_val); }
Tensor Tensor::Softsign() const { return Div(1 + Abs()); }
Tensor Tensor::QuickGelu() const { return (*this) * Mul(1.702).Sigmoid(); }
Tensor Tensor::Asin() const {
  Tensor x = M_PI / 2 -
             (1.0 - Abs()).Sqrt() * PolyN(Abs(), {-0.0012624911, 0.0066700901, -0.0170881256, 0.0308918810,
                                                  -0.0501743046, 0.0889789874, -0.2145988016, 1.5707963050});
  return Sign() * x;
}
Tensor Tensor::Acos() const { return M_PI / 2 - Asin(); }
Tensor Tensor::Atan() const { return Div((1 + (*this) * (*this)).Sqrt()).Asin(); }
Tensor Tensor::Sinh() const { return (Exp() - Neg().Exp()) / 2; }
Tensor Tensor::Cosh() const { return (Exp() + Neg().Exp()) / 2; }
Tensor Tensor::Atanh() const { return ((1 + (*this)) / (1 - (*this))).Log() / 2; }
Tensor Tensor::Asinh() const { return Add((Square() + 1).Sqrt()).Log(); }
Tensor Tensor::Acosh() const { return Add((Square() - 1).Sqrt()).Log(); }
Tensor Tensor::Copysign(const Operand& other) const {
  Tensor o = Broadcasted(other).second;
  return o.Lt(0).Where(-Abs(), Abs()) + o * 0;
}
Tensor Tensor::Lerp(const Tensor& end, const Operand& weight) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (dtype() == dtypes::kUInt8 && weight.is_tensor()) {
    // The weight in 7-bit fixed point; the difference fits int8 only modulo 256, as in tinygrad.
    constexpr int kWeightBits = 7;
    Tensor w = (weight.tensor() * (1 << kWeightBits) + 0.5).Cast(dtypes::kInt16);
    Tensor step = ((end - (*this)).Cast(dtypes::kInt8) * w + (1 << (kWeightBits - 1))).Cast(dtypes::kUInt16);
    return Add(step >> kWeightBits).Cast(dtypes::kUInt8);
  }
  return (*this) + (end - (*this)) * weight;
}
Tensor Tensor::IsClose(const Tensor& other, double rtol, double atol, bool equal_nan) const {
  Tensor finite_close =
      IsFinite() & other.IsFinite() & (((*this) - other).Abs() <= atol + rtol * other.Abs());
  Tensor infinite_close = (IsInf() | other.IsInf()) & Eq(other);
  Tensor nan_close = (IsNan() & other.IsNan()) & equal_nan;
  return finite_close | infinite_close | nan_close;
}
Tensor Tensor::Contiguous() const { return Unary(*this, Ops::CONTIGUOUS); }
Tensor Tensor::To(const std::string& device_in) const {
  UOPC_TENSOR_PROPAGATE(this);
  std::vector<std::string> devices;
  for (const std::string& d : tensor_internal::SplitDevices(device_in))
    devices.push_back(CanonicalDeviceName(d));
  const std::string device = absl::StrJoin(devices, ",");
  if (Device() == device) return *this;
  if (devices.size() > 1) return Shard(devices);
  return Tensor(UOp::New(Ops::COPY, dtype(), {uop(), UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))}));
}

}  // namespace uopc
