// Sint: a shape quantity that is either a plain integer or a symbolic int UOp (tinygrad's `sint`).
//
// Shapes, strides, offsets and mask bounds are almost always plain integers, so a Sint keeps an int64 inline
// and only holds a UOp for symbolic dimensions (a DEFINE_VAR, a BIND, or arithmetic on them). Arithmetic
// folds integers directly (division and modulo of two integers floor like Python's, which is what the view
// algebra relies on for negative offsets) and builds simplified UOps otherwise; a UOp that simplifies to a
// CONST becomes a plain integer again, so `is_int()` is the canonical test.
//
// Comparisons involving a symbolic value are decided by its range where possible (tinygrad's `resolve`):
//   Resolve(Lt(a, b), /*if_unknown=*/true)
#ifndef UOPC_SHAPETRACKER_SINT_H_
#define UOPC_SHAPETRACKER_SINT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "uop/uop.h"
#include "uop/util.h"

namespace uopc {

class Sint {
 public:
  Sint() = default;             // 0
  Sint(int64_t v) : int_(v) {}  // NOLINT: integers are the common case
  Sint(int v) : int_(v) {}      // NOLINT
  // Simplifies `u` (an int-typed UOp); a CONST result becomes an integer.
  static Sint FromUOp(const UOpPtr& u);

  bool is_int() const { return uop_ == nullptr; }
  int64_t value() const;      // UOPC_CHECKs is_int()
  const UOpPtr& uop() const;  // UOPC_CHECKs !is_int()
  // tinygrad's sint_to_uop: a CONST of dtype int for integers, the UOp itself otherwise.
  UOpPtr ToUOp() const;
  // The value range: the integer itself, or the UOp's vmin/vmax.
  int64_t vmin() const;
  int64_t vmax() const;

  // Python repr: `5`, or the UOp's tinygrad repr for symbolic values.
  std::string ToString() const;

  // Structural identity: same integer, or the same (hash-consed) UOp.
  friend bool operator==(const Sint& a, const Sint& b) { return a.int_ == b.int_ && a.uop_ == b.uop_; }
  friend bool operator!=(const Sint& a, const Sint& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Sint& s) {
    return H::combine(std::move(h), s.int_, s.uop_.get());
  }

  friend Sint operator+(const Sint& a, const Sint& b);
  friend Sint operator-(const Sint& a, const Sint& b);
  friend Sint operator*(const Sint& a, const Sint& b);
  Sint operator-() const;
  Sint& operator+=(const Sint& b) { return *this = *this + b; }
  Sint& operator*=(const Sint& b) { return *this = *this * b; }

 private:
  int64_t int_ = 0;  // 0 when symbolic
  UOpPtr uop_;
};

// Python `//` and `%` for integers (floor); IDIV/MOD UOps for symbolic operands.
Sint FloorDiv(const Sint& a, const Sint& b);
Sint Mod(const Sint& a, const Sint& b);
Sint CeilDiv(const Sint& a, const Sint& b);
Sint Max(const Sint& a, const Sint& b);  // tinygrad's smax / smin
Sint Min(const Sint& a, const Sint& b);

// Comparisons: the answer when the ranges decide it, nullopt otherwise.
std::optional<bool> Lt(const Sint& a, const Sint& b);
std::optional<bool> Le(const Sint& a, const Sint& b);
std::optional<bool> Eq(const Sint& a, const Sint& b);
std::optional<bool> Ne(const Sint& a, const Sint& b);
inline bool Resolve(std::optional<bool> cond, bool if_unknown = true) { return cond.value_or(if_unknown); }

using SintVec = absl::InlinedVector<Sint, 6>;
using SintPair = std::pair<Sint, Sint>;
bool AllInt(absl::Span<const Sint> v);
Sint Prod(absl::Span<const Sint> v);
// `(1, 2, 3)` / `(1,)` / `()` like a Python tuple (uop/util.h's TupleString for Sints).
std::string TupleString(absl::Span<const Sint> v);

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_SINT_H_
