// DType and ConstValue: the element types of the UOp IR and the constants they hold.
//
// A DType is a small value (16 bytes, compared and hashed by field) describing a scalar, a vector of scalars, or a
// pointer to either, exactly the type lattice of tinygrad v0.10.3's dtype.py: names, priorities, promotion
// (least_upper_dtype), min/max and printing (`dtypes.float.vec(4)`, `dtypes.int.ptr(3)`).
//
// A ConstValue is a constant with Python-like numbers: a bool, an integer (128 bits, so any int64 or uint64 value
// and the product of two of them is exact) or a double. Truncate() turns a value into what a given dtype can hold
// (integer wraparound, float16/bfloat16/float32 rounding), the way tinygrad's exec_alu truncates its outputs.
#ifndef UOPC_UOP_DTYPE_H_
#define UOPC_UOP_DTYPE_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>

#include "absl/numeric/int128.h"
#include "absl/strings/string_view.h"

namespace uopc {

// Scalar element types, in tinygrad's priority order (void first). fp8 types are not supported.
enum class ScalarType : uint8_t {
  kVoid,
  kBool,
  kInt8,
  kUInt8,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat16,
  kBFloat16,
  kFloat32,
  kFloat64,
};
inline constexpr int kNumScalarTypes = 14;

class DType {
 public:
  // void.
  constexpr DType() = default;
  constexpr explicit DType(ScalarType scalar) : scalar_(scalar) {}

  ScalarType scalar_type() const { return scalar_; }
  // The scalar element type: count 1, not a pointer.
  DType scalar() const { return DType(scalar_); }
  // Vector width of the element (for a pointer: of the pointee).
  int count() const { return count_; }
  bool is_ptr() const { return is_ptr_; }
  bool is_local() const { return local_; }
  // Number of elements a pointer points at; -1 is unlimited. 0 for non-pointers.
  int64_t ptr_size() const { return size_; }
  // A pointer's own vector width (tinygrad's PtrDType.v); for non-pointers the element count.
  int vcount() const { return is_ptr_ ? v_ : count_; }
  // A pointer's pointee (scalar or vector); non-pointers return themselves.
  DType base() const;

  // tinygrad's dtype.vec(n): a vector of n elements, or for a pointer a vector of n pointers. vec(1) and void.vec(n)
  // are the type itself. Returns nullopt where tinygrad asserts (vectorizing a vector).
  std::optional<DType> vec(int n) const;
  // Pointer to this type with `size` elements (-1 unlimited). nullopt for a pointer (no pointers to pointers).
  std::optional<DType> ptr(int64_t size = -1, bool local = false) const;
  // Unchecked forms for code that knows the preconditions hold.
  DType Vec(int n) const { return *vec(n); }
  DType Ptr(int64_t size = -1, bool local = false) const { return *ptr(size, local); }

  // Bytes of one element: for vectors itemsize*count; for pointers the pointee's size (as tinygrad).
  int itemsize() const;
  int priority() const;

  bool is_void() const { return scalar_ == ScalarType::kVoid && !is_ptr_; }
  bool is_bool() const { return scalar_ == ScalarType::kBool; }
  bool is_float() const { return scalar_ >= ScalarType::kFloat16 && scalar_ <= ScalarType::kFloat64; }
  bool is_int() const { return scalar_ >= ScalarType::kInt8 && scalar_ <= ScalarType::kUInt64; }  // not bool
  bool is_unsigned() const;
  // Number of value bits of an integer scalar (8..64); 1 for bool.
  int bits() const { return itemsize_of(scalar_) * 8; }

  // tinygrad's name field: "float", "unsigned char", "half", "__bf16", "float4", ...
  std::string name() const;
  // C name of the scalar element ("float", "unsigned char", "half", "__bf16", "bool", "void").
  absl::string_view c_name() const;
  // tinygrad's short name of the scalar: "float", "half", "uchar", "int", "bfloat16", ...
  absl::string_view short_name() const;
  // tinygrad's repr: dtypes.int, dtypes.float.vec(4), dtypes.int.ptr(3), dtypes.half.ptr(16, local=True).vec(4).
  std::string ToString() const;

  // Parses a short name ("float", "half", "int32", "uint8", "bool", "void", ...) into a scalar type.
  static std::optional<DType> FromName(absl::string_view name);

  friend bool operator==(const DType& a, const DType& b) {
    return a.scalar_ == b.scalar_ && a.count_ == b.count_ && a.is_ptr_ == b.is_ptr_ && a.local_ == b.local_ &&
           a.v_ == b.v_ && a.size_ == b.size_;
  }
  friend bool operator!=(const DType& a, const DType& b) { return !(a == b); }
  // tinygrad's DType ordering: (priority, itemsize, name, count); used by least_upper_dtype.
  friend bool operator<(const DType& a, const DType& b);

  template <typename H>
  friend H AbslHashValue(H h, const DType& d) {
    return H::combine(std::move(h), d.scalar_, d.count_, d.is_ptr_, d.local_, d.v_, d.size_);
  }
  friend std::ostream& operator<<(std::ostream& os, const DType& d) { return os << d.ToString(); }
  // The fields other than ptr_size() in one word (equal types give equal words), for hashing on hot paths.
  uint64_t Bits() const {
    return static_cast<uint64_t>(scalar_) | uint64_t{is_ptr_} << 8 | uint64_t{local_} << 9 |
           uint64_t{count_} << 16 | uint64_t{v_} << 32;
  }

  static int itemsize_of(ScalarType s);

 private:
  ScalarType scalar_ = ScalarType::kVoid;
  bool is_ptr_ = false;
  bool local_ = false;
  uint16_t count_ = 1;  // element vector width
  uint16_t v_ = 1;      // pointer vector width
  int64_t size_ = 0;    // pointer size
};

// The named types, as tinygrad's `dtypes.` namespace.
namespace dtypes {
inline constexpr DType kVoid{ScalarType::kVoid};
inline constexpr DType kBool{ScalarType::kBool};
inline constexpr DType kInt8{ScalarType::kInt8};
inline constexpr DType kUInt8{ScalarType::kUInt8};
inline constexpr DType kInt16{ScalarType::kInt16};
inline constexpr DType kUInt16{ScalarType::kUInt16};
inline constexpr DType kInt32{ScalarType::kInt32};
inline constexpr DType kUInt32{ScalarType::kUInt32};
inline constexpr DType kInt64{ScalarType::kInt64};
inline constexpr DType kUInt64{ScalarType::kUInt64};
inline constexpr DType kFloat16{ScalarType::kFloat16};
inline constexpr DType kBFloat16{ScalarType::kBFloat16};
inline constexpr DType kFloat32{ScalarType::kFloat32};
inline constexpr DType kFloat64{ScalarType::kFloat64};
// tinygrad's defaults.
inline constexpr DType kDefaultInt = kInt32;
inline constexpr DType kDefaultFloat = kFloat32;
// Index arithmetic is int32 in tinygrad v0.10.3.
inline constexpr DType kIndex = kInt32;
}  // namespace dtypes

// tinygrad's least_upper_dtype: the smallest type every argument promotes to (JAX-style lattice).
DType LeastUpperDType(DType a, DType b);
// least_upper_float: dt itself if it is a float, else the promotion of dt and the default float.
DType LeastUpperFloat(DType dt);
// sum_acc_dtype: the accumulator type tinygrad uses for sums of dt.
DType SumAccDType(DType dt);

// A constant: bool, integer or float, with Python's numeric meaning.
class ConstValue {
 public:
  enum class Kind : uint8_t { kBool, kInt, kFloat };

  constexpr ConstValue() = default;  // integer 0
  static constexpr ConstValue Bool(bool b) { return ConstValue(Kind::kBool, b ? 1 : 0, 0.0); }
  static constexpr ConstValue Int(absl::int128 i) { return ConstValue(Kind::kInt, i, 0.0); }
  static constexpr ConstValue Float(double f) { return ConstValue(Kind::kFloat, 0, f); }

  Kind kind() const { return kind_; }
  bool is_bool() const { return kind_ == Kind::kBool; }
  bool is_int() const { return kind_ == Kind::kInt; }
  bool is_float() const { return kind_ == Kind::kFloat; }

  // Raw accessors (only meaningful for the matching kind; bools read as 0/1 through int()).
  bool b() const { return int_ != 0; }
  absl::int128 i() const { return int_; }
  double f() const { return float_; }

  // Python's conversions: bool(x), int(x) (floats truncate toward zero; NaN/inf give 0), float(x).
  bool AsBool() const;
  absl::int128 AsInt() const { return kind_ != Kind::kFloat ? int_ : FloatAsInt(float_); }
  double AsFloat() const;
  // Integer value as int64 (bools as 0/1); CHECK-fails for floats. Saturates outside int64.
  int64_t AsInt64() const;

  // Python's str(): True, False, 5, -3, 1.0, 0.5, inf, -inf, nan, 1e-05.
  std::string ToString() const;

  // Numeric comparisons with Python semantics across kinds (True == 1 == 1.0; NaN is unequal to everything).
  friend bool operator==(const ConstValue& a, const ConstValue& b) {
    if (a.kind_ != Kind::kFloat && b.kind_ != Kind::kFloat) return a.int_ == b.int_;
    return EqualWithFloat(a, b);
  }
  friend bool operator!=(const ConstValue& a, const ConstValue& b) { return !(a == b); }
  friend bool operator<(const ConstValue& a, const ConstValue& b) {
    if (a.kind_ != Kind::kFloat && b.kind_ != Kind::kFloat) return a.int_ < b.int_;
    return LessWithFloat(a, b);
  }
  friend bool operator<=(const ConstValue& a, const ConstValue& b) { return a < b || a == b; }
  friend bool operator>(const ConstValue& a, const ConstValue& b) { return b < a; }
  friend bool operator>=(const ConstValue& a, const ConstValue& b) { return b <= a; }
  // Exact identity: same kind and same bits (distinguishes 0.0 from -0.0, and NaN equals NaN).
  bool Identical(const ConstValue& o) const;

  friend std::ostream& operator<<(std::ostream& os, const ConstValue& v) { return os << v.ToString(); }

 private:
  constexpr ConstValue(Kind kind, absl::int128 i, double f) : kind_(kind), int_(i), float_(f) {}
  // The slow paths of AsInt, == and < (a float involved).
  static absl::int128 FloatAsInt(double f);
  static bool EqualWithFloat(const ConstValue& a, const ConstValue& b);
  static bool LessWithFloat(const ConstValue& a, const ConstValue& b);
  Kind kind_ = Kind::kInt;
  absl::int128 int_ = 0;
  double float_ = 0.0;
};

// Python's repr() of a float: shortest round-trip digits; fixed notation for exponents in [-4, 16), else
// scientific with a two-digit exponent ("1e-05", "1e+16"); "inf", "-inf", "nan".
std::string PythonFloatRepr(double f);

// dtypes.min / dtypes.max of a scalar type: integer bounds, -inf/inf for floats, False/True for bool.
ConstValue DTypeMin(DType dt);
ConstValue DTypeMax(DType dt);

// C's integer division and remainder on exact integers (tinygrad's cdiv/cmod): the quotient truncates toward
// zero, the remainder takes the dividend's sign; CDiv(x, 0) is 0 and CMod(x, 0) is x.
absl::int128 CDiv(absl::int128 x, absl::int128 y);
inline absl::int128 CMod(absl::int128 x, absl::int128 y) { return x - CDiv(x, y) * y; }

// dtypes.as_const: Python's int()/float()/bool() of v according to dt's scalar kind (no truncation).
ConstValue AsConst(ConstValue v, DType dt);
// tinygrad's truncate[dt]: what dt can hold. Integers wrap modulo 2^bits (two's complement); float32 rounds to
// nearest float, float16 and bfloat16 round to nearest-even with overflow to +-inf (what the C compilers we
// render for do; tinygrad's Python bfloat16 truncation chops the mantissa instead); bool is bool(v).
ConstValue Truncate(ConstValue v, DType dt);

// IEEE half and bfloat16 conversions (round to nearest even; NaN stays NaN).
uint16_t FloatToHalfBits(float f);
float HalfBitsToFloat(uint16_t h);
uint16_t FloatToBFloat16Bits(float f);
float BFloat16BitsToFloat(uint16_t b);

}  // namespace uopc

#endif  // UOPC_UOP_DTYPE_H_
