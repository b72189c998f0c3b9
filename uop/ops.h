// Ops: every operation of the UOp IR, and the op groups passes dispatch on.
//
// The enum holds every op of tinygrad v0.10.3's `Ops`, in tinygrad's order (the order is meaningful: the
// linearizer breaks ties by it), followed by the stage-boundary ops of the newest tinygrad that uopc uses for
// stage outputs (LINEAR, CALL, PROGRAM, SOURCE, BINARY, PARAM, END), then uopc's CUSTOM_GRADIENT: a
// tensor-level node whose value is its first source's and whose other sources' gradients a rule named by its
// arg gives (tensor/gradient.h). Enumerators are spelled as in tinygrad (`Ops::ADD`) so rules read the same
// in both code bases. OpSet is a constexpr bitset of ops; `groups::` holds tinygrad's GroupOp sets.
#ifndef UOPC_UOP_OPS_H_
#define UOPC_UOP_OPS_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <ostream>

#include "absl/strings/string_view.h"

namespace uopc {

#define UOPC_FOR_EACH_OP(X)                                                                                 \
  X(SINK) X(CONTIGUOUS) X(CONTIGUOUS_BACKWARD) X(DETACH) X(KERNEL) X(UNIQUE) X(COPY) X(BUFFER_VIEW) X(BLOCK)   \
  X(BLOCKSTART) X(BLOCKEND) X(BLOCKFINAL) X(RESHAPE) X(PERMUTE) X(EXPAND) X(PAD) X(SHRINK) X(FLIP) X(UNROLL)   \
  X(CONTRACT) X(VIEW) X(DEFINE_GLOBAL) X(BUFFER) X(DEFINE_VAR) X(DEFINE_LOCAL) X(DEFINE_ACC) X(VALID)          \
  X(SPECIAL) X(NOOP) X(REDUCE_AXIS) X(REDUCE) X(GEP) X(VECTORIZE) X(CAT) X(PTRCAT) X(CAST) X(BITCAST) X(EXP2) \
  X(LOG2) X(SIN) X(SQRT) X(RECIP) X(NEG) X(LOAD) X(STORE) X(INDEX) X(WMMA) X(ADD) X(MUL) X(SHL) X(SHR)        \
  X(IDIV) X(MAX) X(MOD) X(CMPLT) X(CMPNE) X(XOR) X(OR) X(AND) X(THREEFRY) X(SUB) X(FDIV) X(POW) X(WHERE)      \
  X(MULACC) X(ASSIGN) X(BIND) X(BARRIER) X(RANGE) X(IF) X(ENDRANGE) X(ENDIF) X(VCONST) X(CONST) X(DEVICE)     \
  X(MULTI) X(CUSTOM) X(CUSTOMI) X(IGNORE) X(FUSE) X(LINEAR) X(CALL) X(PROGRAM) X(SOURCE) X(BINARY) X(PARAM)   \
  X(END) X(CUSTOM_GRADIENT)

enum class Ops : uint8_t {
#define UOPC_OP_ENUMERATOR(name) name,
  UOPC_FOR_EACH_OP(UOPC_OP_ENUMERATOR)
#undef UOPC_OP_ENUMERATOR
};

#define UOPC_OP_COUNT(name) +1
inline constexpr int kNumOps = 0 UOPC_FOR_EACH_OP(UOPC_OP_COUNT);
#undef UOPC_OP_COUNT

// "ADD".
absl::string_view OpName(Ops op);
// The inverse of OpName.
std::optional<Ops> OpFromName(absl::string_view name);
// "Ops.ADD", as tinygrad prints it.
inline std::ostream& operator<<(std::ostream& os, Ops op) { return os << "Ops." << OpName(op); }

// A set of ops as a 128-bit bitset; usable in constant expressions.
class OpSet {
 public:
  constexpr OpSet() = default;
  constexpr OpSet(std::initializer_list<Ops> ops) {
    for (Ops op : ops) Insert(op);
  }
  constexpr void Insert(Ops op) { bits_[Word(op)] |= Bit(op); }
  constexpr bool contains(Ops op) const { return (bits_[Word(op)] & Bit(op)) != 0; }
  constexpr bool empty() const { return bits_[0] == 0 && bits_[1] == 0; }
  constexpr int size() const { return __builtin_popcountll(bits_[0]) + __builtin_popcountll(bits_[1]); }
  constexpr OpSet operator|(const OpSet& o) const { return OpSet(bits_[0] | o.bits_[0], bits_[1] | o.bits_[1]); }
  constexpr OpSet operator&(const OpSet& o) const { return OpSet(bits_[0] & o.bits_[0], bits_[1] & o.bits_[1]); }
  constexpr OpSet operator-(const OpSet& o) const { return OpSet(bits_[0] & ~o.bits_[0], bits_[1] & ~o.bits_[1]); }
  constexpr bool operator==(const OpSet& o) const { return bits_[0] == o.bits_[0] && bits_[1] == o.bits_[1]; }
  // True when every op of `o` is in this set.
  constexpr bool ContainsAll(const OpSet& o) const { return (o - *this).empty(); }

  // Calls f(op) for each op in enum order.
  template <typename F>
  void ForEach(F&& f) const {
    for (int i = 0; i < kNumOps; ++i) {
      if (contains(static_cast<Ops>(i))) f(static_cast<Ops>(i));
    }
  }

 private:
  constexpr OpSet(uint64_t lo, uint64_t hi) : bits_{lo, hi} {}
  static constexpr int Word(Ops op) { return static_cast<int>(op) >> 6; }
  static constexpr uint64_t Bit(Ops op) { return uint64_t{1} << (static_cast<int>(op) & 63); }
  uint64_t bits_[2] = {0, 0};
};

// tinygrad's GroupOp.
namespace groups {
inline constexpr OpSet kUnary{Ops::EXP2, Ops::LOG2, Ops::SIN, Ops::SQRT, Ops::RECIP, Ops::NEG};
inline constexpr OpSet kBinary{Ops::ADD,   Ops::MUL, Ops::IDIV, Ops::MAX, Ops::MOD,      Ops::CMPLT,
                               Ops::CMPNE, Ops::XOR, Ops::SHL,  Ops::SHR, Ops::OR,       Ops::AND,
                               Ops::THREEFRY, Ops::SUB, Ops::FDIV, Ops::POW};
inline constexpr OpSet kTernary{Ops::WHERE, Ops::MULACC};
inline constexpr OpSet kALU = kUnary | kBinary | kTernary;
inline constexpr OpSet kIrreducible{Ops::CONST, Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE};
inline constexpr OpSet kMovement{Ops::RESHAPE, Ops::EXPAND, Ops::PERMUTE, Ops::PAD, Ops::SHRINK, Ops::FLIP};
inline constexpr OpSet kBuffer{Ops::LOAD, Ops::STORE, Ops::VALID, Ops::CONST, Ops::DEFINE_VAR};
inline constexpr OpSet kBlock{Ops::BLOCK, Ops::BLOCKEND, Ops::BLOCKSTART};
// Binary ops with f(a, b) == f(b, a).
inline constexpr OpSet kCommutative{Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPNE, Ops::XOR, Ops::AND, Ops::OR};
// Binary ops with f(f(a, b), c) == f(a, f(b, c)).
inline constexpr OpSet kAssociative{Ops::ADD, Ops::MUL, Ops::AND, Ops::OR, Ops::MAX};
// Binary ops with f(x, x) == x.
inline constexpr OpSet kIdempotent{Ops::OR, Ops::AND, Ops::MAX};
// Ops that do not preserve f(0) == 0, so padding cannot be pushed through them.
inline constexpr OpSet kUnsafePad{Ops::RECIP, Ops::LOG2, Ops::EXP2, Ops::IDIV, Ops::POW};
inline constexpr OpSet kMeta{Ops::COPY, Ops::BUFFER_VIEW};
// Comparisons produce bool.
inline constexpr OpSet kComparison{Ops::CMPLT, Ops::CMPNE};
}  // namespace groups

}  // namespace uopc

#endif  // UOPC_UOP_OPS_H_
