// Phase 2 of the symbolic rules (tinygrad's symbolic): canonical order, term combining, range-based folding
// of div/mod/lt/max/where, and GEP pushing. Guards marked "C:" differ from tinygrad to stay right for
// truncating division; see rewrite/symbolic_folding.h.
#include "rewrite/symbolic.h"

#include <vector>

#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic_folding.h"
#include "uop/exec_alu.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using int128 = absl::int128;

const UPat x = UPat::Var("x"), y = UPat::Var("y"), z = UPat::Var("z");
const UPat c = UPat::Cvar("c"), c0 = UPat::Cvar("c0"), c1 = UPat::Cvar("c1"), c2 = UPat::Cvar("c2");
const UPat a = UPat::Cvar("a"), d = UPat::Cvar("d");
const UPat sc = UPat::Cvar("c", {}, false), sc0 = UPat::Cvar("c0", {}, false),
           sc1 = UPat::Cvar("c1", {}, false);
const UPat sd = UPat::Cvar("d", {}, false);

int128 I(const UOpPtr& u) { return u->const_value().AsInt(); }
bool IsInt(const UOpPtr& u) { return u->op() == Ops::CONST && u->arg().is_int(); }
int128 Vmin(const UOpPtr& u) { return u->vmin().AsInt(); }
int128 Vmax(const UOpPtr& u) { return u->vmax().AsInt(); }
bool IntRange(const UOpPtr& u) { return u->dtype().is_int() || u->dtype().is_bool(); }
UOpPtr K(const UOpPtr& like, int128 v) { return like.const_like(ConstValue::Int(v)); }

}  // namespace

const PatternMatcher& Commutative() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // Integer commutative ops put their operands in tinygrad's tuplize order.
      {UPat(groups::kCommutative).dtype(dtypes::kInt32).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& u = m.root();
         if (u->num_src() != 2 || CompareTuplize(u->src(1), u->src(0)) >= 0) return nullptr;
         return u.replace_src({u->src()[1], u->src()[0]});
       }},
  });
  return *pm;
}

const PatternMatcher& GepPushing() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // GEP(GEP) composes.
      {UPat(Ops::GEP).src(UPat(Ops::GEP).named("g2")).named("g1"),
       [](const Match& m) -> UOpPtr {
         const Arg& outer = m["g1"]->arg();
         const Arg& inner = m["g2"]->arg();
         std::vector<int64_t> idx;
         for (const Arg& i : outer.as_tuple()) {
           if (i.as_int() < 0 || static_cast<size_t>(i.as_int()) >= inner.size()) return nullptr;
           idx.push_back(inner[i.as_int()].as_int());
         }
         return m["g2"]->src()[0].gep(idx);
       }},
      {UPat(Ops::GEP).src(UPat(Ops::VECTORIZE).named("vec")).named("gep"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& gep = m["gep"];
         const UOpPtr& vec = m["vec"];
         std::vector<UOpPtr> picked;
         for (const Arg& i : gep->arg().as_tuple()) {
           if (i.as_int() < 0 || static_cast<size_t>(i.as_int()) >= vec->num_src()) return nullptr;
           picked.push_back(vec->src()[i.as_int()]);
         }
         if (picked.size() == 1) return picked[0];
         return UOp::New(Ops::VECTORIZE, gep->dtype(), picked);
       }},
      {UPat(Ops::GEP).src(sc).named("gep"),
       [](const Match& m) { return m["gep"].const_like(m["c"]->const_value()); }},
      {UPat(Ops::GEP).src(UPat(Ops::VCONST).named("c")).named("gep"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& gep = m["gep"];
         const Arg& values = m["c"]->arg();
         std::vector<ConstValue> picked;
         for (const Arg& i : gep->arg().as_tuple()) {
           if (i.as_int() < 0 || static_cast<size_t>(i.as_int()) >= values.size()) return nullptr;
           picked.push_back(ConstFromArg(values[i.as_int()], gep->dtype().scalar()));
         }
         return picked.size() == 1 ? UOp::Const(gep->dtype(), picked[0]) : UOp::VConst(gep->dtype(), picked);
       }},
      {UPat(Ops::GEP).src(UPat().dtype(dtypes::kVoid).named("x")), [](const Match& m) { return m["x"]; }},
      // A GEP taking every element in order is its source.
      {UPat(Ops::GEP).named("g"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& g = m["g"];
         if (g->dtype().is_ptr()) return nullptr;
         const Arg::Tuple& idx = g->arg().as_tuple();
         if (static_cast<int>(idx.size()) != g->src(0)->dtype().count()) return nullptr;
         for (size_t i = 0; i < idx.size(); ++i) {
           if (idx[i].as_int() != static_cast<int64_t>(i)) return nullptr;
         }
         return g->src()[0];
       }},
      // GEPs go through ALUs and casts.
      {UPat(Ops::GEP).src(UPat(groups::kALU | OpSet{Ops::CAST, Ops::BITCAST}).named("alu")).named("gep"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& gep = m["gep"];
         const UOpPtr& alu = m["alu"];
         if (gep->dtype().is_ptr()) return nullptr;
         std::vector<int64_t> idx;
         for (const Arg& i : gep->arg().as_tuple()) idx.push_back(i.as_int());
         std::vector<UOpPtr> src;
         for (const UOpPtr& s : alu->src()) src.push_back(s.gep(idx));
         return UOp::New(alu->op(), alu->dtype().scalar().Vec(gep->dtype().count()), src, alu->arg());
       }},
      // CAT becomes one VECTORIZE of GEPs.
      {UPat(Ops::CAT).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& cat = m["x"];
         if (cat->dtype().is_ptr()) return nullptr;
         std::vector<UOpPtr> src;
         for (const UOpPtr& s : cat->src()) {
           for (int i = 0; i < s->dtype().count(); ++i) src.push_back(s.gep(i));
         }
         return UOp::New(Ops::VECTORIZE, cat->dtype(), src);
       }},
      // VECTORIZE of single-element GEPs of one source is one GEP.
      {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::GEP).src(x)).named("v"),
       [](const Match& m) -> UOpPtr {
         std::vector<int64_t> idx;
         for (const UOpPtr& g : m["v"]->src()) {
           if (g->arg().size() != 1) return nullptr;
           idx.push_back(g->arg()[0].as_int());
         }
         return m["x"].gep(idx);
       }},
  });
  return *pm;
}

const PatternMatcher& Symbolic() {
  static const PatternMatcher* const pm = new PatternMatcher(SymbolicSimple() + Commutative() + PatternMatcher({
      // ** boolean algebra **
      {x | (x & UPat::Var()), [](const Match& m) { return m["x"]; }},
      // ** combine terms **
      {x * c0 + x * c1, [](const Match& m) { return FoldedMul(m["x"], FoldedAdd(m["c0"], m["c1"])); }},
      {(y + x * c0) + x * c1,
       [](const Match& m) { return FoldedAdd(m["y"], FoldedMul(m["x"], FoldedAdd(m["c0"], m["c1"]))); }},
      {x + x * c, [](const Match& m) { return FoldedMul(m["x"], FoldedAdd(m["c"], m["c"].const_like(1))); }},
      {(y + x) + x * c,
       [](const Match& m) { return FoldedAdd(m["y"], FoldedMul(m["x"], FoldedAdd(m["c"], m["c"].const_like(1)))); }},
      {x + x, [](const Match& m) { return m["x"] * 2; }},
      {(y + x) + x, [](const Match& m) { return m["y"] + m["x"] * 2; }},
      {(x / UPat::Var("x2")) / UPat::Var("x3"),
       [](const Match& m) -> UOpPtr {
         if (m["x2"] == m["x3"]) return nullptr;
         return m["x"] / (m["x2"] * m["x3"]);
       }},
      {-1 * (x + c), [](const Match& m) { return FoldedAdd(FoldedNeg(m["x"]), FoldedNeg(m["c"])); }},
      // ** where **
      {UPat::Var().where(UPat::Var("val"), UPat::Var("val")), [](const Match& m) { return m["val"]; }},
      {UPat::Cvar("gate", {}, false).where(UPat::Var("c0"), UPat::Var("c1")),
       [](const Match& m) { return m["gate"]->const_value().AsBool() ? m["c0"] : m["c1"]; }},
      {UPat::Var("cond", dtypes::kBool).logical_not().where(UPat::Var("t"), UPat::Var("f")),
       [](const Match& m) { return m["cond"].where(m["f"], m["t"]); }},
      {UPat(groups::kBinary)
           .src(UPat::Var("c").where(UPat::Var("t"), UPat::Var("f")),
                UPat::Var("c").where(UPat::Var("tt"), UPat::Var("ff")))
           .named("alu"),
       [](const Match& m) -> UOpPtr {
         bool consts_t = m["t"]->op() == Ops::CONST && m["tt"]->op() == Ops::CONST;
         bool consts_f = m["f"]->op() == Ops::CONST && m["ff"]->op() == Ops::CONST;
         if (!consts_t && !consts_f) return nullptr;
         Ops op = m["alu"]->op();
         return m["c"].where(m["t"].alu(op, {m["tt"]}), m["f"].alu(op, {m["ff"]}));
       }},
      // A node whose range is one value is that constant.
      {UPat(groups::kALU | OpSet{Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE}).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& u = m["x"];
         if (u->vmin() != u->vmax()) return nullptr;
         return u.const_like(u->vmin());
       }},
      // ** max folding **
      {x.maximum(y),
       [](const Match& m) -> UOpPtr {
         if (m["x"]->vmin() >= m["y"]->vmax()) return m["x"];
         if (m["x"]->vmax() <= m["y"]->vmin()) return m["y"];
         return nullptr;
       }},
      // ** two-stage ALU folding for associative ops **
      {x.alu(Ops::ADD, {c1}).alu(Ops::ADD, {c2}),
       [](const Match& m) { return FoldedAdd(m["x"], FoldedAdd(m["c1"], m["c2"])); }},
      {x.alu(Ops::MUL, {c1}).alu(Ops::MUL, {c2}),
       [](const Match& m) { return FoldedMul(m["x"], FoldedMul(m["c1"], m["c2"])); }},
      {x.alu(Ops::AND, {c1}).alu(Ops::AND, {c2}),
       [](const Match& m) { return m["x"] & FoldedAlu(Ops::AND, m["c1"], m["c2"]); }},
      {x.alu(Ops::OR, {c1}).alu(Ops::OR, {c2}),
       [](const Match& m) { return m["x"] | FoldedAlu(Ops::OR, m["c1"], m["c2"]); }},
      {x.alu(Ops::MAX, {c1}).alu(Ops::MAX, {c2}),
       [](const Match& m) { return m["x"].maximum(FoldedAlu(Ops::MAX, m["c1"], m["c2"])); }},
      {(c0 + x) < c1, [](const Match& m) { return m["x"].lt(FoldedAdd(m["c1"], FoldedNeg(m["c0"]))); }},
      {x.idiv(c1).idiv(c2), [](const Match& m) { return m["x"].idiv(FoldedMul(m["c1"], m["c2"])); }},
      // ** lt **
      {(sc0 * UPat::Var("x", dtypes::kInts)) < sc1,
       [](const Match& m) -> UOpPtr {
         if (!IsInt(m["c0"]) || !IsInt(m["c1"])) return nullptr;
         int128 k = I(m["c0"]), b = I(m["c1"]);
         if (k <= 0 || b <= 0) return nullptr;
         return m["x"].lt(K(m["x"], -FloorDiv(-b, k)));  // ceil(b / k)
       }},
      {(sc0 * UPat::Var("x", dtypes::kInts)) < sc1,
       [](const Match& m) -> UOpPtr {
         if (!IsInt(m["c0"]) || !IsInt(m["c1"])) return nullptr;
         int128 k = I(m["c0"]), b = I(m["c1"]);
         if (!(k < 0 && k != -1 && b <= 0)) return nullptr;
         UOpPtr neg_x = m["x"].neg();
         return neg_x.lt(K(neg_x, -FloorDiv(-b, -k)));
       }},
      {UPat::Var("x", dtypes::kInts).idiv(sc0) < sc1,
       [](const Match& m) -> UOpPtr {
         if (!IsInt(m["c0"]) || !IsInt(m["c1"])) return nullptr;
         int128 k = I(m["c0"]), b = I(m["c1"]);
         if (k <= 0) return nullptr;
         // C: for b <= 0 the quotient truncates toward zero, so x//k < b means x <= k*(b-1).
         return m["x"].lt(K(m["x"], b > 0 ? b * k : k * (b - 1) + 1));
       }},
      // ** move add/mul constants to the end **
      {(x + c1) + y, [](const Match& m) { return (m["x"] + m["y"]) + m["c1"]; }},
      {(x * c1) * y, [](const Match& m) { return (m["x"] * m["y"]) * m["c1"]; }},
      // ** unrolled arange div folding **
      {(UPat() + UPat().idiv(sd)).named("divs"),
       [](const Match& m) -> UOpPtr { return IsInt(m["d"]) ? FoldUnrolledDivs(m["divs"], I(m["d"])) : nullptr; }},
      {(UPat() + UPat().idiv(sd) * c).named("divs"),
       [](const Match& m) -> UOpPtr {
         if (!IsInt(m["d"]) || !IsInt(m["c"])) return nullptr;
         return FoldUnrolledDivs(m["divs"], I(m["d"]), I(m["c"]));
       }},
      // ** generic lt folding **
      {UPat::Var("x", dtypes::kSInts) < sc,
       [](const Match& m) -> UOpPtr { return IsInt(m["c"]) && I(m["c"]) > 0 ? LtFolding(m["x"], I(m["c"])) : nullptr; }},
      {UPat::Var("x", dtypes::kSInts) * -1 < UPat::Var("y", dtypes::kSInts) * -1,
       [](const Match& m) { return m["y"].lt(m["x"]); }},
      {(UPat::Var("x", dtypes::kInts) < 1).ne(true),
       [](const Match& m) -> UOpPtr {
         UOpPtr simplex = CanonicalizeSimplex(m["x"]);
         if (!simplex) return nullptr;
         return simplex.lt(1).ne(simplex.lt(1).const_like(true));
       }},
      // ** div **
      // (x//c + a)//d -> (x + a*c)//(c*d). C: only when both dividends keep x's sign.
      {(x.idiv(c) + a).idiv(d),
       [](const Match& m) -> UOpPtr {
         if (!IsInt(m["c"]) || !IsInt(m["d"]) || !IntRange(m["x"])) return nullptr;
         if (I(m["c"]) <= 0 || I(m["d"]) <= 0) return nullptr;
         UOpPtr shifted = m["x"] + m["a"] * m["c"];
         bool nonneg = Vmin(m["x"]) >= 0 && Vmin(m["x"]) + I(m["a"]) * I(m["c"]) >= 0;
         bool nonpos = Vmax(m["x"]) <= 0 && Vmax(m["x"]) + I(m["a"]) * I(m["c"]) <= 0;
         if (!nonneg && !nonpos) return nullptr;
         return shifted.idiv(m["c"] * m["d"]);
       }},
      {UPat::Var("x", dtypes::kSInts).idiv(y),
       [](const Match& m) { return DivAndModFolding(m["x"], m["y"], Ops::IDIV); }},
      // x // d == -(x // -d) in C. Not for d == 0 alone, which would rewrite forever.
      {x.idiv(UPat::Var("d")),
       [](const Match& m) -> UOpPtr {
         if (!IntRange(m["d"]) || Vmax(m["d"]) > 0 || Vmin(m["d"]) == 0) return nullptr;
         return m["x"].idiv(m["d"].neg()).neg();
       }},
      {x.idiv(UPat::Var("d")),
       [](const Match& m) -> UOpPtr {
         if (!IntRange(m["x"]) || Vmax(m["x"]) > 0 || Vmin(m["x"]) == 0) return nullptr;
         return m["x"].neg().idiv(m["d"]).neg();
       }},
      {(UPat::Var("x", dtypes::kSInts) + sc).named("n").idiv(sd),
       [](const Match& m) -> UOpPtr {
         if (!IsInt(m["c"]) || !IsInt(m["d"])) return nullptr;
         int128 cv = I(m["c"]), dv = I(m["d"]);
         if (!(Vmax(m["x"]) <= 0 && Vmin(m["n"]) >= 0 && dv > 0)) return nullptr;
         int128 cm = cv - FloorDiv(cv, dv) * dv;
         UOpPtr inner = (K(m["x"], cm) + m["x"]) + K(m["x"], -(dv - 1));
         return inner.neg().idiv(m["d"]).neg() + K(m["x"], FloorDiv(cv, dv));
       }},
      // ** mod **
      {x % y, [](const Match& m) { return DivAndModFolding(m["x"], m["y"], Ops::MOD); }},
      // C: x % d == x % -d (the remainder takes the dividend's sign; tinygrad negates it here, which is wrong).
      {x % UPat::Var("d"),
       [](const Match& m) -> UOpPtr {
         if (!IntRange(m["d"]) || Vmax(m["d"]) > 0 || Vmin(m["d"]) == 0) return nullptr;
         return m["x"] % m["d"].neg();
       }},
      {x % UPat::Var("d"),
       [](const Match& m) -> UOpPtr {
         if (!IntRange(m["x"]) || Vmax(m["x"]) > 0 || Vmin(m["x"]) == 0) return nullptr;
         return (m["x"].neg() % m["d"]).neg();
       }},
  }) + GepPushing());
  return *pm;
}

UOpPtr Simplify(const UOpPtr& u) { return GraphRewrite(u, Symbolic(), {.name = "simplify"}); }

absl::StatusOr<ConstValue> SymInfer(const UOp* root,
                                    const absl::flat_hash_map<std::string, int64_t>& values) {
  absl::flat_hash_map<const UOp*, ConstValue> value_of;
  for (const UOp* u : root->Toposort()) {
    ConstValue v;
    switch (u->op()) {
      case Ops::CONST:
        v = u->const_value();
        break;
      case Ops::DEFINE_VAR: {
        auto it = values.find(u->var_name());
        if (it == values.end()) {
          return absl::InvalidArgumentError(absl::StrCat("no value for variable '", u->var_name(), "'"));
        }
        v = ConstValue::Int(it->second);
        break;
      }
      case Ops::BIND:
        v = value_of[u->src(0)];
        break;
      case Ops::CAST: {
        UOPC_ASSIGN_OR_RETURN(v, ExecCast(value_of[u->src(0)], u->src(0)->dtype(), u->dtype()));
        break;
      }
      default: {
        if (!groups::kALU.contains(u->op())) {
          return absl::InvalidArgumentError(absl::StrCat("cannot evaluate ", OpName(u->op())));
        }
        std::vector<ConstValue> operands;
        for (const UOpPtr& s : u->src()) operands.push_back(value_of[s.get()]);
        DType operand_dtype = u->src(u->op() == Ops::WHERE ? 1 : 0)->dtype();
        UOPC_ASSIGN_OR_RETURN(v, ExecAlu(u->op(), u->dtype(), operands, operand_dtype));
      }
    }
    value_of[u] = v;
  }
  return value_of[root];
}

}  // namespace uopc
