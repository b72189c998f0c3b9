// UOp: the node of every uopc graph, immutable and hash-consed.
//
// Two UOps with equal (op, dtype, src, arg, tag) are the same object, so graph equality is pointer equality
// and common subexpressions are shared for free. Nodes are reference counted: a UOpPtr owns a reference, a
// plain `const UOp*` borrows one. The intern table is sharded and thread safe (compare MLIR's
// StorageUniquer), and it holds no references itself: a node nobody references is freed and leaves the table,
// and later nodes reuse its memory, so a long-running process holds at most the memory of its peak number of
// nodes (node memory goes back to a pool, not to the allocator). Freeing is iterative, so dropping a
// million-node chain does not recurse.
//
// Every node carries its value range (tinygrad's vmin/vmax from `_min_max`), computed once when it is
// interned.
//
// UOpPtr also carries the builders of tinygrad's MathTrait: `a + b`, `a * 2`, `a.idiv(4)`, `a.lt(b)`,
// `c.where(x, y)`, `a.cast(dtypes::kFloat32)`... Comparison builders are named methods (lt, le, gt, ge, ne,
// eq) because the C++ comparison operators of UOpPtr keep their pointer meaning.
#ifndef UOPC_UOP_UOP_H_
#define UOPC_UOP_UOP_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/arg.h"
#include "uop/dtype.h"
#include "uop/ops.h"

namespace uopc {

class UOp;

// An owning, reference-counted handle to an interned UOp (or null).
class UOpPtr {
 public:
  UOpPtr() = default;
  UOpPtr(std::nullptr_t) {}  // NOLINT
  // Takes a new reference to a node the caller already keeps alive.
  explicit UOpPtr(const UOp* u);
  UOpPtr(const UOpPtr& o);
  UOpPtr(UOpPtr&& o) noexcept : ptr_(o.ptr_) { o.ptr_ = nullptr; }
  UOpPtr& operator=(const UOpPtr& o);
  UOpPtr& operator=(UOpPtr&& o) noexcept;
  ~UOpPtr();

  const UOp* get() const { return ptr_; }
  const UOp* operator->() const { return ptr_; }
  // How many handles hold the node (the intern table holds none): 1 means this is the only one.
  int32_t use_count() const;
  const UOp& operator*() const { return *ptr_; }
  explicit operator bool() const { return ptr_ != nullptr; }
  operator const UOp*() const { return ptr_; }  // NOLINT: borrowing is always safe while the handle lives

  // ---- tinygrad's MathTrait builders. Plain numbers become constants of this node's dtype (const_like).
  // ----
  UOpPtr alu(Ops op, absl::Span<const UOpPtr> more = {}) const;
  UOpPtr const_like(ConstValue v) const;
  UOpPtr const_like(int64_t v) const { return const_like(ConstValue::Int(v)); }
  UOpPtr const_like(int v) const { return const_like(ConstValue::Int(v)); }
  UOpPtr const_like(double v) const { return const_like(ConstValue::Float(v)); }
  UOpPtr const_like(bool v) const { return const_like(ConstValue::Bool(v)); }

  UOpPtr neg() const;  // bool: logical_not, else x * -1
  UOpPtr logical_not() const { return ne(const_like(true)); }
  UOpPtr add(const UOpPtr& x) const { return alu(Ops::ADD, {x}); }
  UOpPtr sub(const UOpPtr& x) const { return add(x.neg()); }
  UOpPtr mul(const UOpPtr& x) const { return alu(Ops::MUL, {x}); }
  UOpPtr div(const UOpPtr& x) const { return mul(x.reciprocal()); }   // float division
  UOpPtr idiv(const UOpPtr& x) const { return alu(Ops::IDIV, {x}); }  // C-truncating (tinygrad's `//`)
  UOpPtr idiv(int64_t x) const { return idiv(const_like(x)); }
  UOpPtr mod(const UOpPtr& x) const { return alu(Ops::MOD, {x}); }
  UOpPtr bitwise_and(const UOpPtr& x) const { return alu(Ops::AND, {x}); }
  UOpPtr bitwise_or(const UOpPtr& x) const { return alu(Ops::OR, {x}); }
  UOpPtr bitwise_xor(const UOpPtr& x) const { return alu(Ops::XOR, {x}); }
  UOpPtr lshift(const UOpPtr& x) const { return alu(Ops::SHL, {x}); }
  UOpPtr rshift(const UOpPtr& x) const { return alu(Ops::SHR, {x}); }
  UOpPtr lt(const UOpPtr& x) const { return alu(Ops::CMPLT, {x}); }
  UOpPtr gt(const UOpPtr& x) const { return x.alu(Ops::CMPLT, {*this}); }
  UOpPtr ge(const UOpPtr& x) const { return lt(x).logical_not(); }
  UOpPtr le(const UOpPtr& x) const { return gt(x).logical_not(); }
  UOpPtr ne(const UOpPtr& x) const { return alu(Ops::CMPNE, {x}); }
  UOpPtr eq(const UOpPtr& x) const { return ne(x).logical_not(); }
  UOpPtr lt(int64_t x) const { return lt(const_like(x)); }
  UOpPtr gt(int64_t x) const { return gt(const_like(x)); }
  UOpPtr ge(int64_t x) const { return ge(const_like(x)); }
  UOpPtr le(int64_t x) const { return le(const_like(x)); }
  UOpPtr ne(int64_t x) const { return ne(const_like(x)); }
  UOpPtr eq(int64_t x) const { return eq(const_like(x)); }
  UOpPtr maximum(const UOpPtr& x) const { return alu(Ops::MAX, {x}); }
  UOpPtr minimum(const UOpPtr& x) const { return neg().maximum(x.neg()).neg(); }
  // this ? t : f. Numbers become constants of the other branch's dtype.
  UOpPtr where(const UOpPtr& t, const UOpPtr& f) const { return alu(Ops::WHERE, {t, f}); }
  UOpPtr where(const UOpPtr& t, ConstValue f) const { return where(t, t.const_like(f)); }
  UOpPtr where(ConstValue t, const UOpPtr& f) const { return where(f.const_like(t), f); }
  UOpPtr reciprocal() const { return alu(Ops::RECIP); }
  UOpPtr sqrt() const { return alu(Ops::SQRT); }
  UOpPtr sin() const { return alu(Ops::SIN); }
  UOpPtr log2() const { return alu(Ops::LOG2); }
  UOpPtr exp2() const { return alu(Ops::EXP2); }
  UOpPtr pow(const UOpPtr& x) const { return alu(Ops::POW, {x}); }

  // Structural builders.
  UOpPtr cast(DType dt) const;  // no-op when the dtype already matches
  UOpPtr bitcast(DType dt) const;
  UOpPtr gep(absl::Span<const int64_t> idx) const;
  UOpPtr gep(int64_t i) const { return gep(absl::Span<const int64_t>(&i, 1)); }
  UOpPtr broadcast(int count) const;  // VECTORIZE of `count` copies
  UOpPtr index(const UOpPtr& idx, const UOpPtr& valid = nullptr) const;
  UOpPtr load(absl::Span<const UOpPtr> more = {}) const;  // dtype: this pointer's base
  UOpPtr store(absl::Span<const UOpPtr> more) const;
  UOpPtr sink(absl::Span<const UOpPtr> more = {}) const;
  UOpPtr assign(const UOpPtr& x) const;
  UOpPtr bind(int64_t value) const;  // DEFINE_VAR -> BIND(var, const)

  // Replaces fields, returning this node when nothing changes.
  UOpPtr replace_src(absl::Span<const UOpPtr> src) const;
  UOpPtr replace_dtype(DType dt) const;
  UOpPtr replace_arg(Arg arg) const;

  friend bool operator==(const UOpPtr& a, const UOpPtr& b) { return a.ptr_ == b.ptr_; }
  friend bool operator!=(const UOpPtr& a, const UOpPtr& b) { return a.ptr_ != b.ptr_; }
  friend bool operator==(const UOpPtr& a, const UOp* b) { return a.ptr_ == b; }
  friend bool operator==(const UOpPtr& a, std::nullptr_t) { return a.ptr_ == nullptr; }
  template <typename H>
  friend H AbslHashValue(H h, const UOpPtr& u) {
    return H::combine(std::move(h), u.ptr_);
  }

 private:
  friend class UOp;
  friend struct UOpInternals;
  struct Adopt {};
  UOpPtr(const UOp* u, Adopt) : ptr_(u) {}  // takes over a reference
  const UOp* ptr_ = nullptr;
};

// Arithmetic operators: tinygrad's __add__, __mul__, ... A number on either side becomes a constant of the
// node's dtype; a number on the left is the left operand (2 - x is ADD(CONST 2, MUL(x, -1))).
UOpPtr operator+(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator/(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator&(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator|(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator^(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator<<(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator>>(const UOpPtr& a, const UOpPtr& b);
UOpPtr operator-(const UOpPtr& a);
#define UOPC_DECLARE_SCALAR_OPERATORS(T)   \
  UOpPtr operator+(const UOpPtr& a, T b);  \
  UOpPtr operator+(T a, const UOpPtr& b);  \
  UOpPtr operator-(const UOpPtr& a, T b);  \
  UOpPtr operator-(T a, const UOpPtr& b);  \
  UOpPtr operator*(const UOpPtr& a, T b);  \
  UOpPtr operator*(T a, const UOpPtr& b);  \
  UOpPtr operator/(const UOpPtr& a, T b);  \
  UOpPtr operator%(const UOpPtr& a, T b);  \
  UOpPtr operator&(const UOpPtr& a, T b);  \
  UOpPtr operator|(const UOpPtr& a, T b);  \
  UOpPtr operator^(const UOpPtr& a, T b);  \
  UOpPtr operator<<(const UOpPtr& a, T b); \
  UOpPtr operator>>(const UOpPtr& a, T b);
UOPC_DECLARE_SCALAR_OPERATORS(int)
UOPC_DECLARE_SCALAR_OPERATORS(int64_t)
UOPC_DECLARE_SCALAR_OPERATORS(double)
UOPC_DECLARE_SCALAR_OPERATORS(bool)
#undef UOPC_DECLARE_SCALAR_OPERATORS

class UOp {
 public:
  using SrcVector = absl::InlinedVector<UOpPtr, 3>;

  // Interns the node (op, dtype, src, arg, tag): returns the existing node when an equal one is alive.
  static UOpPtr New(Ops op, DType dtype = dtypes::kVoid, absl::Span<const UOpPtr> src = {}, Arg arg = {},
                    Arg tag = {});
  // Takes the sources over (saves reference-count traffic when the caller built them for this call).
  static UOpPtr New(Ops op, DType dtype, SrcVector&& src, Arg arg = {}, Arg tag = {});
  static UOpPtr New(Ops op, DType dtype, std::initializer_list<UOpPtr> src, Arg arg = {}, Arg tag = {}) {
    return New(op, dtype, absl::MakeConstSpan(src.begin(), src.size()), std::move(arg), std::move(tag));
  }

  // tinygrad's UOp.const: CONST of dtype dt holding v converted as dtypes.as_const does.
  static UOpPtr Const(DType dt, ConstValue v);
  static UOpPtr Const(DType dt, int64_t v) { return Const(dt, ConstValue::Int(v)); }
  static UOpPtr Const(DType dt, int v) { return Const(dt, ConstValue::Int(v)); }
  static UOpPtr Const(DType dt, double v) { return Const(dt, ConstValue::Float(v)); }
  static UOpPtr Const(DType dt, bool v) { return Const(dt, ConstValue::Bool(v)); }
  // VCONST of a vector dtype; collapses to CONST when all elements are equal.
  static UOpPtr VConst(DType dt, absl::Span<const ConstValue> values);
  // DEFINE_VAR with arg (name, min, max).
  static UOpPtr Variable(std::string name, int64_t min, int64_t max, DType dt = dtypes::kInt32);
  // RANGE over [0, end) with axis number `axis`.
  static UOpPtr Range(DType dt, int64_t end, int64_t axis);
  static UOpPtr Range(const UOpPtr& end, int64_t axis);
  static UOpPtr Sink(absl::Span<const UOpPtr> src, Arg arg = {});
  // `like` with sources `src`, whose references it takes over (UOpPtr::replace_src for a caller that built
  // the sources for this call); `like` itself when they are its sources.
  static UOpPtr WithSources(const UOp& like, SrcVector&& src);
  static UOpPtr Vectorize(absl::Span<const UOpPtr> src);

  Ops op() const { return op_; }
  DType dtype() const { return dtype_; }
  absl::Span<const UOpPtr> src() const { return src_; }
  const UOp* src(size_t i) const { return src_[i].get(); }
  size_t num_src() const { return src_.size(); }
  const Arg& arg() const { return arg_; }
  const Arg& tag() const { return tag_ ? *tag_ : NoTag(); }
  size_t hash() const { return hash_; }

  // The value of a CONST node (uint64 bit patterns read back as unsigned).
  ConstValue const_value() const {
    if (arg_.is_int() && dtype_.scalar_type() != ScalarType::kUInt64) return ConstValue::Int(arg_.as_int());
    return ConstFromArg(arg_, dtype_);
  }
  bool is_const() const { return op_ == Ops::CONST; }

  // Range analysis (tinygrad's _min_max): bounds on every value this node can take. For integer nodes these
  // are exact Python-integer bounds (no wraparound), for floats doubles, for bools bools.
  ConstValue vmin() const { return LoadBound(vmin_); }
  ConstValue vmax() const { return LoadBound(vmax_); }

  // Every node reachable from this one, each after all of its sources (tinygrad's toposort order). `gate`,
  // when given, stops the walk below nodes for which it returns false (those nodes are not included).
  std::vector<const UOp*> Toposort(const std::function<bool(const UOp*)>& gate = nullptr) const;

  // Replaces every occurrence of a key of `replacements` (the keys are not searched inside the replacement
  // values) and rebuilds the nodes above them.
  UOpPtr Substitute(const absl::flat_hash_map<const UOp*, UOpPtr>& replacements) const;

  // DEFINE_VAR helpers: name, min and max from the arg.
  const std::string& var_name() const { return arg_[0].as_string(); }

  // A new reference to this node.
  UOpPtr ref() const { return UOpPtr(this); }

  // Starts loading the node into the cache without waiting for it. A walk calls this on the nodes it will
  // read next (a node's sources, say), so that on graphs larger than the cache their misses overlap instead
  // of stalling one after another.
  void Prefetch() const {
    // Nodes are at least 16-byte aligned, so a node spans at most three cache lines.
    static_assert(sizeof(UOp) <= 2 * 64 + 16);
    const char* begin = reinterpret_cast<const char*>(this);
    __builtin_prefetch(begin);
    __builtin_prefetch(begin + 64);
    __builtin_prefetch(begin + sizeof(UOp) - 1);
  }

  // Number of live nodes in the intern table (for tests and statistics), not counting the small integer
  // constants UOp::Const keeps for reuse.
  static size_t LiveCount();

  UOp(const UOp&) = delete;
  UOp& operator=(const UOp&) = delete;

 private:
  friend class UOpPtr;
  friend struct UOpInternals;
  UOp(Ops op, DType dtype, SrcVector&& src, Arg&& arg, Arg&& tag, size_t hash);
  UOp(Ops op, DType dtype, SrcVector&& src, const Arg& arg, const Arg& tag, size_t hash);
  // Nodes come from a per-thread pool (see uop.cc): graph rewrites create and drop hundreds of thousands.
  static void* operator new(size_t size);
  static void operator delete(void* p, size_t size);
  // Interns a node; a new one takes its sources from *owned_src when given, and moves arg and tag from the
  // caller when `own_args` (they are the caller's temporaries), else copies them.
  static UOpPtr NewImpl(Ops op, DType dtype, absl::Span<const UOpPtr> src, SrcVector* owned_src,
                        const Arg& arg, const Arg& tag, bool own_args);
  ~UOp() = default;

  ConstValue LoadBound(absl::int128 raw) const {
    if (dtype_.is_float()) return FloatBound(raw);
    return dtype_.is_bool() ? ConstValue::Bool(raw != 0) : ConstValue::Int(raw);
  }
  static ConstValue FloatBound(absl::int128 raw);

  void AddRef() const { refs_.fetch_add(1, std::memory_order_relaxed); }
  // Succeeds unless the node is already dying (count 0).
  bool TryAddRef() const;
  void Release() const;

  friend class ScratchLease;

  static const Arg& NoTag();

  // Ordered so that the node is 144 bytes with no padding, and so that what a walk reads of every node it
  // passes (the op, the sources, the scratch slot) comes first.
  Ops op_;
  mutable std::atomic<int32_t> refs_{1};
  SrcVector src_;
  // The scratch slot (see ScratchLease): meaningful only when scratch_owner_ is the current lease's token.
  mutable uint64_t scratch_owner_ = 0;
  mutable const void* scratch_value_ = nullptr;
  DType dtype_;
  size_t hash_;
  Arg arg_;
  // Out of line, since few nodes have one: null stands for None.
  std::unique_ptr<const Arg> tag_;
  // vmin/vmax stored as 128-bit integers; for float dtypes the double's bits.
  absl::int128 vmin_ = 0;
  absl::int128 vmax_ = 0;
};

// Exclusive use of a per-node scratch slot, so that a graph walk can keep its memo in the nodes themselves
// instead of in a hash table keyed by node (one cache miss less per visit on graphs larger than the cache).
// At most one lease exists in the process at a time; a walk that cannot get one (another thread, or a walk
// nested inside a rule callback, holds it) keeps its own table. A slot written under an earlier lease reads
// as empty, so a new lease needs no clearing.
class ScratchLease {
 public:
  // The lease, or nullopt while another one is held.
  static std::optional<ScratchLease> TryAcquire();
  ScratchLease(ScratchLease&& o) noexcept : token_(o.token_) { o.token_ = 0; }
  ScratchLease& operator=(ScratchLease&&) = delete;
  ~ScratchLease();

  // The value set on `u` under this lease, or false when none was.
  bool Get(const UOp* u, const void** value) const {
    if (u->scratch_owner_ != token_) return false;
    *value = u->scratch_value_;
    return true;
  }
  void Set(const UOp* u, const void* value) const {
    u->scratch_owner_ = token_;
    u->scratch_value_ = value;
  }

 private:
  explicit ScratchLease(uint64_t token) : token_(token) {}
  uint64_t token_;  // 0: moved from
};

inline UOpPtr::UOpPtr(const UOp* u) : ptr_(u) {
  if (ptr_) ptr_->AddRef();
}
inline UOpPtr::UOpPtr(const UOpPtr& o) : ptr_(o.ptr_) {
  if (ptr_) ptr_->AddRef();
}
inline UOpPtr& UOpPtr::operator=(const UOpPtr& o) {
  if (o.ptr_) o.ptr_->AddRef();
  if (ptr_) ptr_->Release();
  ptr_ = o.ptr_;
  return *this;
}
inline UOpPtr& UOpPtr::operator=(UOpPtr&& o) noexcept {
  if (this != &o) {
    if (ptr_) ptr_->Release();
    ptr_ = o.ptr_;
    o.ptr_ = nullptr;
  }
  return *this;
}
inline UOpPtr::~UOpPtr() {
  if (ptr_) ptr_->Release();
}

// The ArgPayload that holds a symbolic int UOp (a DEFINE_VAR, a BIND, or arithmetic on them) where tinygrad
// keeps the UOp itself in an arg: an element of a movement op's arg, as in SHRINK's ((0, UOp(Ops.BIND, ...)),
// (0, 4)), or a SPECIAL's size when a launch dim is symbolic. It prints as tinygrad's repr of the UOp on one
// line (print.cc, beside the printer it uses), which the textual IR reads back (//shapetracker's parser).
class UOpArg : public ArgPayload {
 public:
  static constexpr absl::string_view kTypeName = "UOp";  // for Arg::payload_as
  explicit UOpArg(UOpPtr uop) : uop_(std::move(uop)) {}
  const UOpPtr& uop() const { return uop_; }
  absl::string_view type_name() const override { return kTypeName; }
  size_t Hash() const override { return absl::HashOf(uop_.get()); }
  bool Equals(const ArgPayload& other) const override {
    return static_cast<const UOpArg&>(other).uop_ == uop_;
  }
  std::string ToString() const override;

 private:
  UOpPtr uop_;  // hash-consed: identity is structural equality
};

// Range analysis of a would-be node, used when interning; exposed for tests and for rules that want the
// bounds of a node before building it.
std::pair<ConstValue, ConstValue> ComputeBounds(Ops op, DType dtype, absl::Span<const UOpPtr> src,
                                                const Arg& arg);
// The bounds ComputeBounds gives an integer node `op(a, b)` whose sources have bounds [a_lo, a_hi] and
// [b_lo, b_hi], without building it (rules use it to test a rewrite before committing to it); nullopt for
// ops that interval arithmetic does not cover.
std::optional<std::pair<ConstValue, ConstValue>> IntBinaryBounds(Ops op, const ConstValue& a_lo,
                                                                 const ConstValue& a_hi,
                                                                 const ConstValue& b_lo,
                                                                 const ConstValue& b_hi);

inline int32_t UOpPtr::use_count() const {
  return ptr_ == nullptr ? 0 : ptr_->refs_.load(std::memory_order_relaxed);
}

namespace internal {
// The bounds of x % y (op MOD) and x // y (op IDIV) in C's truncating division, for integer bounds of x and y
// within +-2^125; nullopt where they are not derived (a divisor range holding 0). Shared by ComputeBounds and
// UOp::New's fast path.
std::optional<std::pair<absl::int128, absl::int128>> IntDivModBounds(Ops op, absl::int128 xlo,
                                                                     absl::int128 xhi, absl::int128 ylo,
                                                                     absl::int128 yhi);

// Numbers for UNIQUE nodes (tinygrad's UOp.unique_num), process-wide and never repeated. The textual IR
// parser reserves the numbers it reads, so a UNIQUE made afterwards never equals a parsed one (which would
// make two buffers one node).
int64_t NextUniqueNumber();
void ReserveUniqueNumbers(int64_t at_least);

// For tests: how many chunks of node memory the process has carved (0 in ASan builds, which allocate each
// node on its own).
size_t NodeChunksForTesting();
}  // namespace internal

}  // namespace uopc

#endif  // UOPC_UOP_UOP_H_
