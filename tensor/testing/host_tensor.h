// The reference the tensor fuzzers compare against: tensors as plain row-major host arrays and the Tensor
// API's ops on them as straightforward loops over indexes and strides. It is written from the semantics
// tinygrad v0.10.3 documents (tensor.py: type promotion, `//` truncating, `%` through a float floor division,
// `/` as a multiplication by the reciprocal, the sum's accumulator dtype) and C's, and shares no code with
// uopc's scheduler, codegen, exec_alu or interpreter: a bug there cannot hide by being made twice.
//
// Values are doubles (every integer the fuzzers make is exact in one). A float tensor also carries, per
// element, a bound on how far a correct float32 device result may be from the value (`err`): 0 while every
// result is exactly representable, growing with roundings, with the reassociation a reduction may do, and
// with the error of the device's transcendental functions. An op whose result the reference cannot pin down
// returns nullopt and the generator picks another: comparing floats closer than their bounds, casting a float
// near an integer boundary or out of the target's range, a value beyond 1e6, a division by a value whose
// bound includes 0, signed overflow of int32/int64 (undefined in C), a dtype outside the supported set (bool,
// (u)int8/16/32, int64, float32).
//
//   HostTensor a = HostTensor::Of(dtypes::kInt32, {2, 3}, {1, 2, 3, 4, 5, 6});
//   std::optional<HostTensor> s = HostReduce(ReduceOp::kSum, a, {1}, /*keepdim=*/false);  // int32 {6, 15}
#ifndef UOPC_TENSOR_TESTING_HOST_TENSOR_H_
#define UOPC_TENSOR_TESTING_HOST_TENSOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "uop/dtype.h"

namespace uopc {

struct HostTensor {
  DType dtype = dtypes::kFloat32;
  std::vector<int64_t> shape;
  std::vector<double> v;    // row-major values
  std::vector<double> err;  // per-element error bound (floats); zeros otherwise

  static HostTensor Of(DType dtype, std::vector<int64_t> shape, std::vector<double> values);
  int64_t numel() const { return static_cast<int64_t>(v.size()); }
};

// A Python number operand: its kind decides the promotion (tinygrad's _broadcasted).
struct HostScalar {
  enum class Kind { kInt, kFloat, kBool };
  Kind kind = Kind::kInt;
  double value = 0;
  std::string ToString() const;
};

// A tensor or a number.
struct HostOperand {
  const HostTensor* tensor = nullptr;  // when null, `scalar`
  HostScalar scalar;
};

enum class BinaryOp {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kIDiv,
  kMod,
  kMax,
  kMin,
  kAnd,
  kOr,
  kXor,
  kLt,
  kGt,
  kLe,
  kGe,
  kEq,
  kNe
};
enum class UnaryOp {
  kNeg,
  kAbs,
  kRelu,
  kSquare,
  kExp2,
  kSqrt,
  kSin,
  kReciprocal,
  kFloor,
  kLogicalNot,
  kBitwiseNot
};
enum class ReduceOp { kSum, kMax, kMin, kProd, kMean, kAny, kAll };

// ---- dtypes (tinygrad's promotion lattice and defaults) ----

// The dtypes the reference computes in.
bool HostSupported(DType d);
// least_upper_dtype: the smallest dtype both promote to.
DType HostLeastUpper(DType a, DType b);
// The dtype a number takes next to a tensor of dtype `t` (before promotion).
DType HostScalarDType(DType t, HostScalar::Kind kind);
// sum_acc_dtype: bool and ints sum in (u)int32 or wider, floats in float32 or wider.
DType HostSumAccDType(DType d);
// Whether a value fits dtype `d` (ints: its range; floats: the reference's 1e6 bound).
bool HostRepresentable(double x, DType d);

// ---- shapes ----

// The broadcast shape of two shapes (numpy's rules), or nullopt.
std::optional<std::vector<int64_t>> HostBroadcastShape(absl::Span<const int64_t> a,
                                                       absl::Span<const int64_t> b);
int64_t HostNumel(absl::Span<const int64_t> shape);

// ---- ops; nullopt where the result is not pinned down (above) ----

std::optional<HostTensor> HostBinary(BinaryOp op, const HostOperand& a, const HostOperand& b);
std::optional<HostTensor> HostUnary(UnaryOp op, const HostTensor& a);
std::optional<HostTensor> HostCast(const HostTensor& a, DType to);
// cond.where(x, y), with tinygrad's promotion of x and y.
std::optional<HostTensor> HostWhere(const HostTensor& cond, const HostOperand& x, const HostOperand& y);
std::optional<HostTensor> HostReduce(ReduceOp op, const HostTensor& a, absl::Span<const int64_t> axes,
                                     bool keepdim);
std::optional<HostTensor> HostCumsum(const HostTensor& a, int64_t axis);

HostTensor HostReshape(const HostTensor& a, std::vector<int64_t> shape);
HostTensor HostPermute(const HostTensor& a, absl::Span<const int64_t> order);
HostTensor HostExpand(const HostTensor& a, std::vector<int64_t> shape);
HostTensor HostPad(const HostTensor& a, absl::Span<const std::pair<int64_t, int64_t>> padding, double value);
// Tensor.pad with a number: zeros keep the dtype; another value is added as tinygrad does it,
// `x.pad(p) + ones_like(x).pad(p).where(0, value)`, so the result's dtype is promoted with the value's.
std::optional<HostTensor> HostPadWith(const HostTensor& a,
                                      absl::Span<const std::pair<int64_t, int64_t>> padding,
                                      const HostScalar& value);
HostTensor HostShrink(const HostTensor& a, absl::Span<const std::pair<int64_t, int64_t>> bounds);
HostTensor HostFlip(const HostTensor& a, absl::Span<const int64_t> axes);

// ---- bytes and comparison ----

// The values as the device stores them (dtype's width, little-endian).
std::vector<uint8_t> HostToBytes(const HostTensor& a);
// A device buffer's bytes read as values of `dtype`.
std::vector<double> HostFromBytes(DType dtype, absl::Span<const uint8_t> bytes);
// Empty when `got` matches (ints and bools exactly; floats within err plus an ulp), else the first
// difference: "element 3 (index (1, 0)): got 2.5, want 2.25 (bound 0)".
std::string HostCompare(const HostTensor& want, absl::Span<const double> got);

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_HOST_TENSOR_H_
