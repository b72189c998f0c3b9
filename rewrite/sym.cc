// Phase 3 of the symbolic rules: symbolic_flat (distributing constants) and sym, the full set codegen runs
// (vectorize/GEP cleanup, load/store folding, threefry lowering, pow expansion, reduce folding).
#include <algorithm>
#include <iterator>
#include <utility>
#include <vector>

#include "rewrite/symbolic.h"
#include "rewrite/symbolic_folding.h"

namespace uopc {
namespace {

const UPat x = UPat::Var("x"), y = UPat::Var("y"), c = UPat::Cvar("c");

UOpPtr U32(uint64_t v) { return UOp::Const(dtypes::kUInt32, ConstValue::Int(absl::int128(v))); }
UOpPtr U64(uint64_t v) { return UOp::Const(dtypes::kUInt64, ConstValue::Int(absl::int128(v))); }
UPat P64(uint64_t v) { return UPat::Const(dtypes::kUInt64, PatConst(static_cast<unsigned long long>(v))); }

UOpPtr Product(const std::vector<UOpPtr>& terms) {
  UOpPtr acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = acc * terms[i];
  return acc;
}

bool Reaches(const UOp* from, const UOp* target) {
  for (const UOp* u : from->Toposort()) {
    if (u == target) return true;
  }
  return false;
}

// REDUCE(a * b * ...): factors that do not depend on the reduce's ranges move outside (for MAX only
// non-negative).
UOpPtr ReduceMulChain(const UOpPtr& r) {
  Ops reduce_op = r->arg().is_op() ? r->arg().as_op() : Ops::NOOP;
  if (reduce_op != Ops::ADD && reduce_op != Ops::MAX) return nullptr;
  if (r->dtype() != r->src(0)->dtype()) return nullptr;
  std::vector<UOpPtr> inside, outside;
  for (const UOp* factor : SplitUOp(r->src(0), Ops::MUL)) {
    bool independent = true;
    for (size_t i = 1; i < r->num_src() && independent; ++i) independent = !Reaches(factor, r->src(i));
    if (independent && (reduce_op != Ops::MAX || factor->vmin() >= ConstValue::Int(0))) {
      outside.push_back(factor->ref());
    } else {
      inside.push_back(factor->ref());
    }
  }
  if (outside.empty()) return nullptr;
  std::vector<UOpPtr> src(r->src().begin(), r->src().end());
  src[0] = inside.empty() ? r->src()[0].const_like(1) : Product(inside);
  return r.replace_src(src) * Product(outside);
}

// Whether every product of a value of `a` (by range analysis) and the constant `c` is a value of a's dtype.
bool ProductInRange(const UOpPtr& a, const UOpPtr& c) {
  if (a->vmin().is_float() || c->op() != Ops::CONST || !c->arg().is_int()) return true;
  if (ExactIntegers(a->dtype())) return true;  // index arithmetic does not wrap
  // Beyond 2^62 in magnitude a product counts as out of range (conservative; keeps the products exact).
  const absl::int128 limit = absl::int128(1) << 62, k = c->const_value().AsInt();
  absl::int128 lo = a->vmin().AsInt(), hi = a->vmax().AsInt();
  if (lo < -limit || hi > limit || k < -limit || k > limit) return false;
  lo *= k;
  hi *= k;
  if (lo > hi) std::swap(lo, hi);
  DType scalar = a->dtype().scalar();
  return lo >= DTypeMin(scalar).AsInt() && hi <= DTypeMax(scalar).AsInt();
}

}  // namespace

const PatternMatcher& SymbolicFlat() {
  static const PatternMatcher* const pm = new PatternMatcher(
      Symbolic() +
      PatternMatcher({
          {-1 * (x + y), [](const Match& m) { return FoldedAdd(FoldedNeg(m["x"]), FoldedNeg(m["y"])); }},
          // (x+y)*c -> x*c + y*c, only for ints (inf*0 is NaN for floats). C: not when a product leaves the
          // dtype's range while (x+y)*c stays inside: C wraps the product around, and the folds that read
          // ranges would then reason about values the program does not compute.
          {(UPat::Var("x", dtypes::kInts) + y).named("sum") * c,
           [](const Match& m) -> UOpPtr {
             if (ProductInRange(m["sum"], m["c"]) &&
                 (!ProductInRange(m["x"], m["c"]) || !ProductInRange(m["y"], m["c"]))) {
               return nullptr;
             }
             return FoldedAdd(FoldedMul(m["x"], m["c"]), FoldedMul(m["y"], m["c"]));
           }},
      }));
  return *pm;
}

const PatternMatcher& Sym() {
  static const PatternMatcher* const pm = new PatternMatcher(SymbolicFlat() + PatternMatcher({
      // Assigning a value to itself is the value.
      {UPat(Ops::ASSIGN).src(x, x), [](const Match& m) { return m["x"]; }},
      // VECTORIZE of constants is a VCONST; VECTORIZE of GEPs of one source is a GEP.
      {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::CONST)).named("vec"),
       [](const Match& m) {
         std::vector<ConstValue> values;
         for (const UOpPtr& s : m["vec"]->src()) values.push_back(s->const_value());
         return UOp::VConst(m["vec"]->dtype(), values);
       }},
      {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::GEP).src(x)).named("vec"),
       [](const Match& m) -> UOpPtr {
         std::vector<int64_t> idx;
         for (const UOpPtr& g : m["vec"]->src()) idx.push_back(g->arg()[0].as_int());
         return m["x"].gep(idx);
       }},
      // ALU of two broadcasts is a broadcast of the scalar ALU.
      {UPat(groups::kALU)
           .src(UPat(Ops::VECTORIZE).src_repeat(UPat::Var("x")), UPat(Ops::VECTORIZE).src_repeat(UPat::Var("y")))
           .named("alu"),
       [](const Match& m) {
         const UOpPtr& alu = m["alu"];
         UOpPtr scalar = UOp::New(alu->op(), alu->dtype().scalar(), {m["x"], m["y"]});
         return scalar.broadcast(alu->dtype().count());
       }},
      {UPat(Ops::VECTORIZE).src(x), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::VECTORIZE).dtype(dtypes::kVoid).src_repeat(UPat(Ops::BARRIER).named("b")),
       [](const Match& m) { return m["b"]; }},
      {UPat(Ops::VECTORIZE).dtype(dtypes::kVoid).named("x"),
       [](const Match& m) { return UOp::New(Ops::SINK, dtypes::kVoid, m["x"]->src()); }},
      // A tensor core with a zero input is its accumulator.
      {UPat(Ops::WMMA).src(UPat::Const({}, 0.0), UPat::Var(), UPat::Var("acc")), [](const Match& m) { return m["acc"]; }},
      {UPat(Ops::WMMA).src(UPat::Var(), UPat::Const({}, 0.0), UPat::Var("acc")), [](const Match& m) { return m["acc"]; }},
      // threefry becomes 32-bit arithmetic, and the 64-bit round trips it leaves disappear.
      {UPat(Ops::THREEFRY).dtype(dtypes::kUInt64).src(x, UPat::Var("key")),
       [](const Match& m) { return Threefry2x32(m["x"], m["key"]); }},
      {UPat::Var("x", dtypes::kUInt32).cast(dtypes::kUInt64).cast(dtypes::kUInt32), [](const Match& m) { return m["x"]; }},
      {(UPat::Var("x", dtypes::kUInt64) & P64(0xFFFFFFFFu)).cast(dtypes::kUInt32),
       [](const Match& m) { return m["x"].cast(dtypes::kUInt32); }},
      {((UPat::Var({}, dtypes::kUInt64) * P64(uint64_t{1} << 32)) |
        UPat::Var("y", dtypes::kUInt32).cast(dtypes::kUInt64))
           .cast(dtypes::kUInt32),
       [](const Match& m) { return m["y"]; }},
      {((UPat::Var("x", dtypes::kUInt64) * P64(uint64_t{1} << 32)) |
        UPat::Var({}, dtypes::kUInt32).cast(dtypes::kUInt64))
           .idiv(P64(uint64_t{1} << 32)),
       [](const Match& m) { return m["x"]; }},
      {UPat::Var("x", dtypes::kUInt32).cast(dtypes::kUInt64) *
           UPat::Var("y").where(P64(uint64_t{1} << 32), P64(0)),
       [](const Match& m) {
         return m["y"].where(m["x"], U32(0)).cast(dtypes::kUInt64) * U64(uint64_t{1} << 32);
       }},
      {(UPat::Var("x", dtypes::kUInt64) & UPat::Var("y").where(P64(0xFFFFFFFFu), P64(0))).cast(dtypes::kUInt32),
       [](const Match& m) { return m["y"].where(m["x"].cast(dtypes::kUInt32), U32(0)); }},
      // ** self folding **
      {UPat(Ops::DEFINE_ACC).src(x), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::ASSIGN).src(UPat::Cvar(), x), [](const Match& m) { return m["x"]; }},
      // x != 0 is (bool)x.
      {x.ne(0), [](const Match& m) { return m["x"].cast(dtypes::kBool.Vec(m["x"]->dtype().count())); }},
      // ** where **
      {UPat::Var("s").where(UPat::Var("a"), UPat::Var("b")).cast().named("cast"),
       [](const Match& m) {
         DType dt = m["cast"]->dtype();
         return m["s"].where(m["a"].cast(dt), m["b"].cast(dt));
       }},
      {UPat::Var("a").where(UPat::Var("b").where(UPat::Var("c"), UPat::Var("d")), UPat::Var("d")),
       [](const Match& m) { return (m["a"] & m["b"]).where(m["c"], m["d"]); }},
      // ** pow **
      {UPat(Ops::POW).named("p"),
       [](const Match& m) {
         const UOpPtr &base = m["p"]->src()[0], &exponent = m["p"]->src()[1];
         return base->dtype().is_float() ? XPow(base, exponent) : IntPow(base, exponent);
       }},
      // ** load/store folding **
      {UPat(Ops::INDEX).named("index").store({UPat(Ops::INDEX).named("index").load()}),
       [](const Match& m) { return UOp::New(Ops::NOOP); }},
      {UPat(Ops::INDEX).named("index").store(
           {UPat::Var("gate").where(UPat::Var("alt"), UPat(Ops::INDEX).named("index").load())}),
       [](const Match& m) {
         const UOpPtr& index = m["index"];
         return index->src()[0].index(index->src()[1], m["gate"]).store({m["alt"]});
       }},
      // Gated INDEX: a true gate disappears, a false one is a null pointer.
      {UPat().index(UPat(), UPat::Const(dtypes::kBool, true)).named("idx"),
       [](const Match& m) { return m["idx"].replace_src({m["idx"]->src()[0], m["idx"]->src()[1]}); }},
      {UPat().index(UPat(), UPat::Const(dtypes::kBool, false)).named("idx"),
       [](const Match& m) { return m["idx"].const_like(0); }},
      {UPat(Ops::LOAD).src(UPat::Const({}, 0)).allow_any_len().named("x"),
       [](const Match& m) { return m["x"].const_like(0); }},
      {UPat(Ops::STORE).src(UPat::Const({}, 0)).allow_any_len(), [](const Match& m) { return UOp::New(Ops::NOOP); }},
      // SINKs drop NOOPs and flatten nested SINKs and UNROLLs.
      {UPat(Ops::SINK).named("root"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& root = m.root();
         auto is_noop = [](const UOpPtr& s) { return s->op() == Ops::NOOP; };
         // Sinks can have many thousands of sources: look before copying.
         if (std::none_of(root->src().begin(), root->src().end(), is_noop)) return nullptr;
         std::vector<UOpPtr> kept;
         std::remove_copy_if(root->src().begin(), root->src().end(), std::back_inserter(kept), is_noop);
         return UOp::New(Ops::SINK, root->dtype(), kept, root->arg());
       }},
      {UPat(Ops::BARRIER).src(UPat(OpSet{Ops::VECTORIZE, Ops::SINK}).named("sink")),
       [](const Match& m) { return UOp::New(Ops::BARRIER, dtypes::kVoid, m["sink"]->src()); }},
      {UPat(Ops::SINK).named("root"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& root = m.root();
         auto is_nested = [](const UOpPtr& s) { return s->op() == Ops::SINK || s->op() == Ops::UNROLL; };
         if (std::none_of(root->src().begin(), root->src().end(), is_nested)) return nullptr;
         std::vector<UOpPtr> flat;
         for (const UOpPtr& s : root->src()) {
           if (is_nested(s)) {
             flat.insert(flat.end(), s->src().begin(), s->src().end());
           } else {
             flat.push_back(s);
           }
         }
         return UOp::New(Ops::SINK, root->dtype(), flat, root->arg());
       }},
      {(x * x).reciprocal(), [](const Match& m) { return m["x"].reciprocal() * m["x"].reciprocal(); }},
      {(x * x * x).reciprocal(),
       [](const Match& m) { return m["x"].reciprocal() * m["x"].reciprocal() * m["x"].reciprocal(); }},
      {x * (1 + x).reciprocal().named("d"), [](const Match& m) { return 1 - m["d"]; }},
      {x * ((1 + x).reciprocal().named("d") * y), [](const Match& m) { return m["y"] * (1 - m["d"]); }},
      {x * ((1 + x).reciprocal().named("d") + y), [](const Match& m) { return (1 - m["d"]) + m["x"] * m["y"]; }},
      // Constant multiplies and reduce-independent factors move after a REDUCE.
      {(x * UPat::Cvar("c", {}, false)).reduce().arg(Arg(Ops::ADD)).allow_any_len().named("r"),
       [](const Match& m) {
         const UOpPtr& r = m["r"];
         std::vector<UOpPtr> src(r->src().begin(), r->src().end());
         src[0] = m["x"];
         UOpPtr moved = r.replace_src(src);
         return moved * moved.const_like(m["c"]->const_value());
       }},
      {UPat(Ops::MUL).reduce().allow_any_len().named("r"), [](const Match& m) { return ReduceMulChain(m["r"]); }},
  }));
  return *pm;
}

}  // namespace uopc
