// Arg: the `arg` field of a UOp, an immutable value hashed and compared by content.
//
// It holds what tinygrad puts there: None, ints, floats, bools, strings, tuples of args, a DType, an Op, and an
// extension payload through which higher layers attach their own types (a ShapeTracker, a KernelInfo) without the
// `uop` layer knowing them. Floats compare by bit pattern, so CONST 0.0 and CONST -0.0 are different nodes and a
// NaN constant is interned like any other value.
//
// Integers are 64-bit; a uint64 value of 2^63 or more is stored as its two's-complement bit pattern and read back
// through the owning node's dtype (see ConstFromArg).
#ifndef UOPC_UOP_ARG_H_
#define UOPC_UOP_ARG_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/check.h"
#include "uop/dtype.h"
#include "uop/ops.h"

namespace uopc {

// An arg type defined by a higher layer. Payloads are immutable and shared.
class ArgPayload {
 public:
  virtual ~ArgPayload() = default;
  // The payload's type name, which is also the first word of its printed form ("ShapeTracker", "KernelInfo").
  virtual absl::string_view type_name() const = 0;
  virtual size_t Hash() const = 0;
  // `other` is guaranteed to have the same type_name().
  virtual bool Equals(const ArgPayload& other) const = 0;
  // tinygrad's repr of the payload; the textual IR uses it too, so it must parse back (see RegisterPayloadParser).
  virtual std::string ToString() const = 0;
};

class Arg {
 public:
  enum class Kind : uint8_t { kNone, kInt, kFloat, kBool, kString, kTuple, kDType, kOp, kPayload };
  using Tuple = std::vector<Arg>;

  Arg() = default;  // None
  Arg(int v) : value_(int64_t{v}) {}  // NOLINT: implicit, args are written as literals
  Arg(int64_t v) : value_(v) {}       // NOLINT
  Arg(double v) : value_(v) {}        // NOLINT
  Arg(bool v) : value_(v) {}          // NOLINT
  Arg(const char* v) : Arg(std::string(v)) {}                                                  // NOLINT
  Arg(std::string v) : value_(std::make_shared<const std::string>(std::move(v))) {}           // NOLINT
  Arg(DType v) : value_(v) {}                                                                  // NOLINT
  Arg(Ops v) : value_(v) {}                                                                    // NOLINT
  Arg(Tuple v) : value_(std::make_shared<const Tuple>(std::move(v))) {}                       // NOLINT
  Arg(std::initializer_list<Arg> v) : Arg(Tuple(v)) {}                                         // NOLINT
  Arg(std::shared_ptr<const ArgPayload> v) : value_(std::move(v)) {}                         // NOLINT
  static Arg None() { return Arg(); }
  static Arg IntTuple(absl::Span<const int64_t> ints);

  Kind kind() const { return static_cast<Kind>(value_.index()); }
  bool is_none() const { return kind() == Kind::kNone; }
  bool is_int() const { return kind() == Kind::kInt; }
  bool is_float() const { return kind() == Kind::kFloat; }
  bool is_bool() const { return kind() == Kind::kBool; }
  bool is_string() const { return kind() == Kind::kString; }
  bool is_tuple() const { return kind() == Kind::kTuple; }
  bool is_dtype() const { return kind() == Kind::kDType; }
  bool is_op() const { return kind() == Kind::kOp; }
  bool is_payload() const { return kind() == Kind::kPayload; }

  // Accessors; calling one of the wrong kind is a bug (CHECK-fails).
  int64_t as_int() const {
    UOPC_CHECK(is_int(), "Arg is not an int");
    return *std::get_if<int64_t>(&value_);
  }
  double as_float() const {
    UOPC_CHECK(is_float(), "Arg is not a float");
    return *std::get_if<double>(&value_);
  }
  bool as_bool() const {
    UOPC_CHECK(is_bool(), "Arg is not a bool");
    return *std::get_if<bool>(&value_);
  }
  const std::string& as_string() const;
  const Tuple& as_tuple() const;
  DType as_dtype() const;
  Ops as_op() const;
  const ArgPayload& as_payload() const;
  const std::shared_ptr<const ArgPayload>& payload_ptr() const;
  // The payload as T if it is one (compared by type_name, no RTTI needed), else nullptr.
  template <typename T>
  const T* payload_as() const {
    if (!is_payload()) return nullptr;
    const ArgPayload& p = as_payload();
    return p.type_name() == T::kTypeName ? static_cast<const T*>(&p) : nullptr;
  }
  // For tuples: element count and element i.
  size_t size() const { return as_tuple().size(); }
  const Arg& operator[](size_t i) const { return as_tuple()[i]; }

  size_t Hash() const;
  friend bool operator==(const Arg& a, const Arg& b);
  friend bool operator!=(const Arg& a, const Arg& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const Arg& a) {
    return H::combine(std::move(h), a.Hash());
  }

  // Python's repr(): None, 5, 1.0, True, 'name', (1, 2), (1,), dtypes.int, Ops.ADD, or the payload's ToString().
  std::string ToString() const;
  friend std::ostream& operator<<(std::ostream& os, const Arg& a) { return os << a.ToString(); }

 private:
  std::variant<std::monostate, int64_t, double, bool, std::shared_ptr<const std::string>,
               std::shared_ptr<const Tuple>, DType, Ops, std::shared_ptr<const ArgPayload>>
      value_;
};

// The arg that stores constant v in a node of dtype dt (ints as int64 bit patterns, floats as double, bools).
Arg ArgFromConst(ConstValue v, DType dt);
// The constant held by a CONST node's arg; uint64 bit patterns are read back as unsigned values.
ConstValue ConstFromArg(const Arg& arg, DType dt);

// Parsers for payload types, keyed by type_name, used by the textual IR. A parser gets the text starting at the
// type name and returns the payload and the number of characters it consumed. Higher layers register theirs
// (e.g. from a static initializer in the library that defines the payload).
struct PayloadParse {
  std::shared_ptr<const ArgPayload> payload;
  size_t consumed = 0;
};
using PayloadParser = absl::StatusOr<PayloadParse> (*)(absl::string_view text);
void RegisterPayloadParser(absl::string_view type_name, PayloadParser parser);
// nullptr if none is registered.
PayloadParser FindPayloadParser(absl::string_view type_name);

}  // namespace uopc

#endif  // UOPC_UOP_ARG_H_
