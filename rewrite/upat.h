// UPat: a pattern over UOp graphs, the left-hand side of a rewrite rule (tinygrad's UPat).
//
// A UPat constrains a node's op (one op or a set), dtype (one dtype or a set; a scalar dtype also matches its
// vectors), arg, and sources, and may name the node so the rule's callback can read it. Sources are given as
// an exact tuple (`src`), as a tuple tried in every order (`src_any_order`, tinygrad's list), or as one
// pattern every source must match (`src_repeat`). A name used twice must bind the same node. `UPat::Any`
// tries alternatives in order.
//
// Patterns build like the algebra they match, with tinygrad's meaning: `x + 0` is ADD with sources in any
// order (ADD is commutative) and a CONST 0 of x's dtype, `x.idiv(c)` is IDIV with sources in that order,
// `x - 1` is `x + (-1)`, `x.lt(c)` or `x < c` is CMPLT, `c.where(t, f)` is WHERE. A number in a pattern
// equals a constant the way Python numbers compare (0 matches CONST 0, 0.0 and False).
//
//   UPat x = UPat::Var("x"), c1 = UPat::Cvar("c1"), c2 = UPat::Cvar("c2");
//   (x * c1) * c2                                  // MUL{MUL{x, c1}, c2}, every operand order
//   UPat(Ops::CAST).src(UPat::Cvar("c")).named("root")
//   UPat(groups::kBinary).src(x, x).named("alu")   // both sources the same node
//   UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::CONST))
//
// UPats are immutable values that share structure; copying one is cheap. PatternMatcher compiles them.
#ifndef UOPC_REWRITE_UPAT_H_
#define UOPC_REWRITE_UPAT_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/string_view.h"
#include "uop/arg.h"
#include "uop/dtype.h"
#include "uop/ops.h"

namespace uopc {

// A set of dtypes a pattern accepts; the empty set accepts every dtype (tinygrad's dtype=None). A node
// matches when its dtype is in the set or its tinygrad scalar() is (so `float` matches float4; `float.ptr()`
// matches float.ptr().vec(4) but not float).
class DTypeSet {
 public:
  constexpr DTypeSet() = default;
  DTypeSet(DType dt);                          // NOLINT: a single dtype reads naturally in patterns
  DTypeSet(std::initializer_list<DType> dts);  // NOLINT
  constexpr DTypeSet(std::initializer_list<ScalarType> scalars) {  // NOLINT
    for (ScalarType s : scalars) scalar_mask_ |= static_cast<uint16_t>(1u << static_cast<int>(s));
  }

  // True when the set places no constraint.
  bool any() const { return scalar_mask_ == 0 && num_extra_ == 0; }
  bool Matches(DType dt) const {
    // Plain scalars: dt itself (count 1) or its element type (vectors) is in the mask.
    if (!dt.is_ptr() && (scalar_mask_ >> static_cast<int>(dt.scalar_type()) & 1) != 0) return true;
    return num_extra_ != 0 && MatchesExtra(dt);
  }
  // The scalar types of the dtypes this set can match, one bit per ScalarType (all bits when the set has
  // vectors or pointers, or is `any`): a dtype whose scalar type's bit is clear does not match.
  uint16_t ScalarTypes() const { return num_extra_ == 0 && scalar_mask_ != 0 ? scalar_mask_ : 0xffff; }
  // The union of two sets; `any` absorbs everything.
  DTypeSet Union(const DTypeSet& o) const;
  // "int", "{int, long}", "" for any.
  std::string ToString() const;
  friend bool operator==(const DTypeSet& a, const DTypeSet& b);

 private:
  static constexpr int kMaxExtra = 4;
  void Add(DType dt);
  bool MatchesExtra(DType dt) const;
  uint16_t scalar_mask_ = 0;  // plain scalar dtypes, one bit per ScalarType
  uint8_t num_extra_ = 0;
  DType extra_[kMaxExtra];  // vectors and pointers
};

// tinygrad's dtype groups, for patterns such as `UPat::Var("x", dtypes::kInts)`.
namespace dtypes {
inline constexpr DTypeSet kUInts{ScalarType::kUInt8, ScalarType::kUInt16, ScalarType::kUInt32,
                                 ScalarType::kUInt64};
inline constexpr DTypeSet kSInts{ScalarType::kInt8, ScalarType::kInt16, ScalarType::kInt32,
                                 ScalarType::kInt64};
inline constexpr DTypeSet kInts{ScalarType::kUInt8,  ScalarType::kUInt16, ScalarType::kUInt32,
                                ScalarType::kUInt64, ScalarType::kInt8,   ScalarType::kInt16,
                                ScalarType::kInt32,  ScalarType::kInt64};
inline constexpr DTypeSet kFloats{ScalarType::kFloat16, ScalarType::kBFloat16, ScalarType::kFloat32,
                                  ScalarType::kFloat64};
}  // namespace dtypes

// A number written in a pattern (`x + 0`, `x * -1`, `x.where(t, 1.0)`); Python's int, float or bool.
struct PatConst {
  PatConst(int v) : value(ConstValue::Int(v)) {}                                        // NOLINT
  PatConst(long v) : value(ConstValue::Int(v)) {}                                       // NOLINT
  PatConst(long long v) : value(ConstValue::Int(v)) {}                                  // NOLINT
  PatConst(unsigned v) : value(ConstValue::Int(v)) {}                                   // NOLINT
  PatConst(unsigned long v) : value(ConstValue::Int(static_cast<uint64_t>(v))) {}       // NOLINT
  PatConst(unsigned long long v) : value(ConstValue::Int(static_cast<uint64_t>(v))) {}  // NOLINT
  PatConst(double v) : value(ConstValue::Float(v)) {}                                   // NOLINT
  PatConst(bool v) : value(ConstValue::Bool(v)) {}                                      // NOLINT
  PatConst(ConstValue v) : value(v) {}                                                  // NOLINT
  ConstValue value;
};

class UPat;

namespace internal {
struct UPatNode;
}  // namespace internal

class UPat {
 public:
  enum class SrcKind : uint8_t {
    kNone,          // sources unconstrained
    kTuple,         // exact order
    kAnyOrder,      // every permutation, in itertools.permutations order
    kRepeat,        // one pattern for every source (any count)
    kAlternatives,  // UPat::Any: the node matches one of `src`
  };

  // Matches any node (tinygrad's UPat()).
  UPat();
  explicit UPat(Ops op);
  explicit UPat(OpSet ops);

  // ---- tinygrad's constructors ----
  // Any node, optionally named and dtype-constrained.
  static UPat Var(absl::string_view name = {}, DTypeSet dtype = {});
  // A constant: CONST, or also VCONST when vec.
  static UPat Cvar(absl::string_view name = {}, DTypeSet dtype = {}, bool vec = true);
  // CONST with value b (Python equality); dtype {} accepts any dtype.
  static UPat Const(DTypeSet dtype, PatConst b);
  // The first alternative that matches (all are tried, in order, when the callback declines).
  static UPat Any(std::initializer_list<UPat> alternatives);
  template <typename... Ts>
  static UPat Any(const UPat& a, const Ts&... rest) {
    return Any({a, UPat(rest)...});
  }

  // ---- modifiers: each returns a new pattern ----
  UPat src(std::vector<UPat> srcs) const;  // exact order
  template <typename... Ts>
  UPat src(const UPat& a, const Ts&... rest) const {
    return src(std::vector<UPat>{a, UPat(rest)...});
  }
  UPat src_any_order(std::vector<UPat> srcs) const;  // tinygrad's list: every permutation
  template <typename... Ts>
  UPat src_any_order(const UPat& a, const Ts&... rest) const {
    return src_any_order(std::vector<UPat>{a, UPat(rest)...});
  }
  UPat src_repeat(const UPat& each) const;  // every source matches `each`
  UPat allow_any_len() const;               // a tuple matches a prefix of the sources
  UPat named(absl::string_view name) const;
  UPat dtype(DTypeSet dtype) const;
  UPat arg(Arg arg) const;
  UPat custom_early_reject(OpSet ops) const;  // replaces the computed early-reject set

  // ---- tinygrad's UPat builders ----
  UPat alu(Ops op, std::vector<UPat> more = {}) const;
  UPat const_like(PatConst b) const { return Const(dtype_set(), b); }
  UPat cast(DTypeSet dtype = {}) const;
  UPat bitcast(DTypeSet dtype = {}) const;
  UPat gep(std::optional<int64_t> i = std::nullopt) const;
  UPat index(const UPat& idx) const;
  UPat index(const UPat& idx, const UPat& valid) const;
  UPat load(std::vector<UPat> more = {}) const;
  UPat store(std::vector<UPat> more = {}) const;
  UPat assign(const UPat& x) const;
  UPat reduce(std::vector<UPat> more = {}) const;
  UPat view(std::optional<Arg> st = std::nullopt) const;
  UPat or_casted(absl::string_view name = {}) const;
  UPat or_broadcasted() const;

  // ---- MathTrait ----
  UPat neg() const;  // bool: logical_not, else x * -1
  UPat logical_not() const { return ne(PatConst(true)); }
  UPat idiv(const UPat& x) const { return alu(Ops::IDIV, {x}); }
  UPat idiv(PatConst x) const { return idiv(const_like(x)); }
  UPat lt(const UPat& x) const { return alu(Ops::CMPLT, {x}); }
  UPat lt(PatConst x) const { return lt(const_like(x)); }
  UPat gt(const UPat& x) const { return x.alu(Ops::CMPLT, {*this}); }
  UPat gt(PatConst x) const { return gt(const_like(x)); }
  UPat ge(const UPat& x) const { return lt(x).logical_not(); }
  UPat ge(PatConst x) const { return lt(x).logical_not(); }
  UPat le(const UPat& x) const { return gt(x).logical_not(); }
  UPat le(PatConst x) const { return gt(x).logical_not(); }
  UPat ne(const UPat& x) const { return alu(Ops::CMPNE, {x}); }
  UPat ne(PatConst x) const { return ne(const_like(x)); }
  UPat eq(const UPat& x) const { return ne(x).logical_not(); }
  UPat eq(PatConst x) const { return ne(x).logical_not(); }
  UPat maximum(const UPat& x) const { return alu(Ops::MAX, {x}); }
  UPat maximum(PatConst x) const { return maximum(const_like(x)); }
  UPat minimum(const UPat& x) const { return neg().maximum(x.neg()).neg(); }
  UPat where(const UPat& t, const UPat& f) const { return alu(Ops::WHERE, {t, f}); }
  UPat where(const UPat& t, PatConst f) const { return where(t, t.const_like(f)); }
  UPat where(PatConst t, const UPat& f) const { return where(f.const_like(t), f); }
  UPat reciprocal() const { return alu(Ops::RECIP); }
  UPat sqrt() const { return alu(Ops::SQRT); }
  UPat sin() const { return alu(Ops::SIN); }
  UPat log2() const { return alu(Ops::LOG2); }
  UPat exp2() const { return alu(Ops::EXP2); }
  UPat pow(const UPat& x) const { return alu(Ops::POW, {x}); }
  UPat pow(PatConst x) const { return pow(const_like(x)); }

  // ---- inspection ----
  // Compact form: `x`, `_`, `c@CONST|VCONST`, `ADD{x, CONST(0)}` ({} any order, () exact, (p...) repeated),
  // `any(a | b)`. Distinct patterns print differently.
  std::string ToString() const;
  // The accepted ops; nullopt when unconstrained.
  std::optional<OpSet> ops() const;
  const DTypeSet& dtype_set() const;
  const std::string& name() const;
  SrcKind src_kind() const;
  const std::vector<UPat>& srcs() const;
  // The pattern's node, shared by copies.
  const internal::UPatNode& node() const { return *node_; }

 private:
  explicit UPat(std::shared_ptr<const internal::UPatNode> node) : node_(std::move(node)) {}
  // A mutable copy of this pattern's node, for the modifiers.
  std::shared_ptr<internal::UPatNode> Copy() const;
  std::shared_ptr<const internal::UPatNode> node_;
};

namespace internal {
struct UPatNode {
  OpSet ops;
  bool any_op = true;
  DTypeSet dtype;
  std::optional<Arg> arg;               // compared with Python equality
  std::optional<ConstValue> const_arg;  // UPat::Const's value, compared numerically with the node's constant
  std::string name;
  UPat::SrcKind src_kind = UPat::SrcKind::kNone;
  std::vector<UPat> src;
  bool allow_any_len = false;
  std::optional<OpSet> custom_early_reject;
};
}  // namespace internal

// Operators: tinygrad's MathTrait on patterns. ADD, MUL, AND, OR, XOR (and MAX, CMPNE through methods) are
// commutative, so their sources match in any order. A number becomes a constant of the other operand's dtype.
UPat operator+(const UPat& a, const UPat& b);
UPat operator-(const UPat& a, const UPat& b);  // a + (-b)
UPat operator*(const UPat& a, const UPat& b);
UPat operator/(const UPat& a, const UPat& b);  // float division: a * reciprocal(b)
UPat operator%(const UPat& a, const UPat& b);
UPat operator&(const UPat& a, const UPat& b);
UPat operator|(const UPat& a, const UPat& b);
UPat operator^(const UPat& a, const UPat& b);
UPat operator<<(const UPat& a, const UPat& b);
UPat operator>>(const UPat& a, const UPat& b);
UPat operator<(const UPat& a, const UPat& b);  // CMPLT (patterns are never ordered, so < is free to build)
UPat operator>(const UPat& a, const UPat& b);
UPat operator-(const UPat& a);
UPat operator+(const UPat& a, PatConst b);
UPat operator+(PatConst a, const UPat& b);
UPat operator-(const UPat& a, PatConst b);
UPat operator-(PatConst a, const UPat& b);
UPat operator*(const UPat& a, PatConst b);
UPat operator*(PatConst a, const UPat& b);
UPat operator/(const UPat& a, PatConst b);
UPat operator/(PatConst a, const UPat& b);
UPat operator%(const UPat& a, PatConst b);
UPat operator%(PatConst a, const UPat& b);
UPat operator&(const UPat& a, PatConst b);
UPat operator&(PatConst a, const UPat& b);
UPat operator|(const UPat& a, PatConst b);
UPat operator|(PatConst a, const UPat& b);
UPat operator^(const UPat& a, PatConst b);
UPat operator^(PatConst a, const UPat& b);
UPat operator<<(const UPat& a, PatConst b);
UPat operator>>(const UPat& a, PatConst b);
UPat operator<(const UPat& a, PatConst b);
UPat operator>(const UPat& a, PatConst b);

// Every op (for a rule that looks at every node).
OpSet AllOps();

}  // namespace uopc

#endif  // UOPC_REWRITE_UPAT_H_
