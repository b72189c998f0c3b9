// Phase 1 of the symbolic rules (tinygrad's symbolic_simple): folds that look at one or two levels of a node.
#include <cmath>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "rewrite/symbolic.h"
#include "rewrite/symbolic_folding.h"
#include "uop/exec_alu.h"

namespace uopc {
namespace {

const UPat x = UPat::Var("x"), y = UPat::Var("y"), x2 = UPat::Var("x2");
const UPat c = UPat::Cvar("c"), c1 = UPat::Cvar("c1"), c2 = UPat::Cvar("c2"), c3 = UPat::Cvar("c3");
const UPat bx = UPat::Var("x", dtypes::kBool), by = UPat::Var("y", dtypes::kBool);
const UPat scalar_c = UPat::Cvar("c", {}, /*vec=*/false);

bool MayBeZero(const UOpPtr& u) {
  return !(u->vmin() > ConstValue::Int(0) || u->vmax() < ConstValue::Int(0));
}

// The number of elements of a CONST (broadcast to its dtype's count) or VCONST, and element i.
int NumElements(const UOp* u) {
  return u->op() == Ops::CONST ? u->dtype().count() : static_cast<int>(u->arg().as_tuple().size());
}
ConstValue Element(const UOp* u, int i) {
  if (u->op() == Ops::CONST) return u->const_value();
  return ConstFromArg(u->arg()[i], u->dtype().scalar());
}

// Constant folding with exec_alu lane by lane, results truncated to the dtype as a compiled kernel would
// compute them. (Small inline buffers: nearly every fold is one lane of scalar CONSTs.)
UOpPtr FoldConstants(const Match& m) {
  const UOpPtr& a = m.root();
  DType operand_dtype = a->src(0)->dtype();
  if (a->op() == Ops::WHERE) operand_dtype = a->src(1)->dtype();
  const int n = a->dtype().count();
  for (const UOpPtr& s : a->src()) {
    if (NumElements(s.get()) != n) return nullptr;
  }
  absl::InlinedVector<ConstValue, 4> out;
  for (int i = 0; i < n; ++i) {
    absl::InlinedVector<ConstValue, 3> lane;
    for (const UOpPtr& s : a->src()) lane.push_back(Element(s.get(), i));
    absl::StatusOr<ConstValue> v = FoldConstantOp(a->op(), a->dtype().scalar(), lane, operand_dtype.scalar());
    if (!v.ok()) return nullptr;
    if (n == 1) return UOp::Const(a->dtype(), *v);
    out.push_back(*v);
  }
  return UOp::VConst(a->dtype(), out);
}

UOpPtr SimplifyPow(const UOpPtr& base, const UOpPtr& exponent) {
  double e = exponent->const_value().AsFloat();
  // An integer has no reciprocal: its negative powers are IntPow's (rewrite/symbolic_folding.h).
  if (e < 0 && !base->dtype().is_float()) return nullptr;
  if (e < 0) return base.reciprocal().pow(exponent.neg());
  if (e == 0) return base.const_like(1);
  if (std::trunc(e - 0.5) + 0.5 == e) return base.pow(exponent.const_like(e - 0.5)) * base.sqrt();
  if (std::trunc(e) == e) {
    UOpPtr half = base.pow(exponent.const_like(std::floor(e / 2)));
    UOpPtr sq = half * half;
    return std::fmod(e, 2) == 1 ? sq * base : sq * 1;
  }
  return nullptr;
}

}  // namespace

const PatternMatcher& SymbolicSimple() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // ** self folding **
      {x + 0, [](const Match& m) { return m["x"]; }},
      {x * 1, [](const Match& m) { return m["x"]; }},
      // x // x is 1 only where x != 0 (x // 0 is 0).
      {x.idiv(x), [](const Match& m) -> UOpPtr { return MayBeZero(m["x"]) ? nullptr : m["x"].const_like(1); }},
      {x.idiv(1), [](const Match& m) { return m["x"]; }},
      {x.idiv(-1), [](const Match& m) { return m["x"].neg(); }},
      {x / x, [](const Match& m) { return m["x"].const_like(1); }},
      {(x * x2) / x2, [](const Match& m) { return m["x"]; }},
      {(UPat::Var() % y).named("base") % y, [](const Match& m) { return m["base"]; }},
      {x % c + x.idiv(c) * c, [](const Match& m) { return m["x"]; }},
      {x.idiv(c1) * c3 + x % c1 * c2,
       [](const Match& m) -> UOpPtr {
         ConstValue a = m["c1"]->const_value(), b = m["c2"]->const_value(), d = m["c3"]->const_value();
         if (a.is_float() || b.is_float() || d.is_float() || a.AsInt() * b.AsInt() != d.AsInt()) return nullptr;
         return m["x"] * m["c2"];
       }},
      {bx & scalar_c, [](const Match& m) { return m["c"]->const_value().AsBool() ? m["x"] : m["c"]; }},
      {bx | scalar_c, [](const Match& m) { return m["c"]->const_value().AsBool() ? m["c"] : m["x"]; }},
      {UPat(groups::kIdempotent).src(x, x), [](const Match& m) { return m["x"]; }},
      {bx.logical_not().logical_not(), [](const Match& m) { return m["x"]; }},
      {bx.where(UPat::Const(dtypes::kBool, true), UPat::Const(dtypes::kBool, false)),
       [](const Match& m) { return m["x"]; }},
      // ** zero folding **
      {x < x, [](const Match& m) { return m["x"].const_like(false).cast(dtypes::kBool.Vec(m["x"]->dtype().count())); }},
      {x % x, [](const Match& m) { return m["x"].const_like(0); }},
      {UPat::Var("x", dtypes::kInts).ne(UPat::Var("x", dtypes::kInts)),
       [](const Match& m) { return m["x"].const_like(false).cast(dtypes::kBool.Vec(m["x"]->dtype().count())); }},
      // x * 0 is 0, except that a NaN or infinite constant stays NaN.
      {x * 0,
       [](const Match& m) {
         const UOpPtr& v = m["x"];
         if (v->op() == Ops::CONST && v->arg().is_float() && !std::isfinite(v->arg().as_float())) {
           return v.const_like(std::nan(""));
         }
         return v.const_like(0);
       }},
      // ** constant folding **
      {UPat(groups::kUnary).src(UPat(OpSet{Ops::VCONST, Ops::CONST})).named("a"), FoldConstants},
      {UPat(groups::kBinary - OpSet{Ops::THREEFRY})
           .src(UPat(OpSet{Ops::VCONST, Ops::CONST}), UPat(OpSet{Ops::VCONST, Ops::CONST}))
           .named("a"),
       FoldConstants},
      {UPat(groups::kTernary)
           .src(UPat(OpSet{Ops::VCONST, Ops::CONST}), UPat(OpSet{Ops::VCONST, Ops::CONST}),
                UPat(OpSet{Ops::VCONST, Ops::CONST}))
           .named("a"),
       FoldConstants},
      // bool MUL is AND, ADD and MAX are OR.
      {bx * by, [](const Match& m) { return m["x"] & m["y"]; }},
      {bx + by, [](const Match& m) { return m["x"] | m["y"]; }},
      {bx.maximum(by), [](const Match& m) { return m["x"] | m["y"]; }},
      // ** cast / bitcast **
      // A CONST casts to a CONST, a VCONST lane by lane to a VCONST (as tinygrad's const_like of its tuple).
      {UPat(Ops::CAST).src(c).named("root"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& cst = m["c"];
         const DType to = m.root()->dtype().scalar();
         if (cst->op() == Ops::CONST) {
           // A null pointer cast to another pointer type (a gated-off INDEX in codegen) stays a null pointer, as
           // tinygrad's const_like does it; there is no value to convert.
           if (m.root()->dtype().is_ptr()) return UOp::New(Ops::CONST, m.root()->dtype(), {}, cst->arg());
           absl::StatusOr<ConstValue> v = ExecCast(cst->const_value(), cst->dtype(), to);
           if (!v.ok()) return nullptr;
           return UOp::Const(m.root()->dtype(), *v);
         }
         const int n = NumElements(cst.get());
         if (n != m.root()->dtype().count()) return nullptr;
         absl::InlinedVector<ConstValue, 4> lanes;
         for (int i = 0; i < n; ++i) {
           absl::StatusOr<ConstValue> v = ExecCast(Element(cst.get(), i), cst->dtype().scalar(), to);
           if (!v.ok()) return nullptr;
           lanes.push_back(*v);
         }
         return UOp::VConst(m.root()->dtype(), lanes);
       }},
      {UPat(OpSet{Ops::CAST, Ops::BITCAST}).named("root"),
       [](const Match& m) -> UOpPtr {
         return m.root()->dtype() == m.root()->src(0)->dtype() ? m.root()->src()[0] : nullptr;
       }},
      {UPat(Ops::BITCAST).src(c).named("root"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& root = m.root();
         if (m["c"]->op() != Ops::CONST || root->dtype().count() != 1) return nullptr;
         // tinygrad converts through Python's struct formats, and bfloat16 has none: it stays a bitcast.
         if (root->dtype().scalar() == dtypes::kBFloat16 || m["c"]->dtype().scalar() == dtypes::kBFloat16) {
           return nullptr;
         }
         absl::StatusOr<ConstValue> v = ExecBitcast(m["c"]->const_value(), m["c"]->dtype(), root->dtype());
         if (!v.ok()) return nullptr;
         return UOp::Const(root->dtype(), *v);
       }},
      // ** pow **
      {x.alu(Ops::POW, {scalar_c}), [](const Match& m) { return SimplifyPow(m["x"], m["c"]); }},
      {scalar_c.alu(Ops::POW, {x}),
       [](const Match& m) -> UOpPtr {
         double base = m["c"]->const_value().AsFloat();
         if (base == 1) return m["c"];
         // (exp2 is float-only: an integer power of a constant is IntPow's.)
         if (base > 0 && m["x"]->dtype().is_float()) return (m["x"] * std::log2(base)).exp2();
         return nullptr;
       }},
  });
  return *pm;
}

}  // namespace uopc
