// Benchmarks of the rewrite engine: the matcher alone (nodes/s and matches/s of PatternMatcher::Rewrite over
// a fixed rule battery) and graph_rewrite (input nodes/s), on random integer index expressions.
//
// The battery has the shape of tinygrad v0.10.3's `sym` (symbolic_simple + commutative + symbolic +
// gep_pushing + symbolic_flat + the rules sym adds): the same patterns in the same order, about 150 rules
// once the per-op families are expanded. Callbacks that need the real symbolic helpers (div/mod folding, lt
// folding, ...) are stand-ins here: they do comparable work (read bounds, walk sources) and decline.
//
//   ./bazelw run -c opt //rewrite:matcher_benchmark
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "uop/exec_alu.h"
#include "uop/uop.h"
#include "uop/util.h"

namespace uopc {
namespace {

// Constant folding through exec_alu, as tinygrad's symbolic_simple does.
UOpPtr FoldAlu(const Match& m) {
  const UOpPtr& a = m["a"];
  std::vector<ConstValue> vals;
  for (const UOpPtr& s : a->src()) {
    if (s->op() != Ops::CONST) return nullptr;
    vals.push_back(s->const_value());
  }
  std::optional<DType> operand_dtype;
  if (groups::kComparison.contains(a->op())) operand_dtype = a->src()[0]->dtype();
  absl::StatusOr<ConstValue> r = ExecAlu(a->op(), a->dtype(), vals, operand_dtype);
  if (!r.ok()) return nullptr;
  return a.const_like(*r);
}

int64_t IntOf(const UOpPtr& c) { return c->const_value().AsInt64(); }

// A callback that declines: stands in for symbolic helpers this battery does not reproduce.
UOpPtr Decline(const Match&) { return nullptr; }

// tinygrad's tuplize order, approximately: by op (constants last), then by structure.
bool Before(const UOp* p, const UOp* q) {
  if (p->op() != q->op()) return p->op() < q->op();
  return p->hash() < q->hash();
}

// Stand-in for the symbolic helpers that walk an ADD chain (split_uop) and decline.
UOpPtr WalkAndDecline(const UOpPtr& x) {
  int64_t terms = 0;
  const UOp* u = x.get();
  while (u->op() == Ops::ADD && terms < 8) {
    ++terms;
    u = u->src(0);
  }
  benchmark::DoNotOptimize(terms);
  benchmark::DoNotOptimize(x->vmin());
  return nullptr;
}

PatternMatcher Battery() {
  UPat x = UPat::Var("x"), y = UPat::Var("y"), x2 = UPat::Var("x2"), x3 = UPat::Var("x3");
  UPat c = UPat::Cvar("c"), c0 = UPat::Cvar("c0"), c1 = UPat::Cvar("c1"), c2 = UPat::Cvar("c2"),
       c3 = UPat::Cvar("c3");
  UPat bx = UPat::Var("x", dtypes::kBool), by = UPat::Var("y", dtypes::kBool);
  UPat sc = UPat::Cvar("c", {}, false);
  UPat konst = UPat(OpSet{Ops::VCONST, Ops::CONST});
  UPat x64 = UPat::Var("x", dtypes::kUInt64), any64 = UPat::Var({}, dtypes::kUInt64);
  UPat y32 = UPat::Var("y", dtypes::kUInt32), any32 = UPat::Var({}, dtypes::kUInt32);
  UPat c64_hi = UPat::Const(dtypes::kUInt64, int64_t{1} << 32), c64_zero = UPat::Const(dtypes::kUInt64, 0);
  std::vector<RuleSpec> rules = {
      // ---- symbolic_simple ----
      {x + 0, [](const Match& m) { return m["x"]; }},
      {x * 1, [](const Match& m) { return m["x"]; }},
      {x.idiv(x), [](const Match& m) { return m["x"].const_like(1); }},
      {x.idiv(1), [](const Match& m) { return m["x"]; }},
      {x.idiv(-1), [](const Match& m) { return -m["x"]; }},
      {x / x, [](const Match& m) { return m["x"].const_like(1.0); }},
      {(x * x2) / x2, [](const Match& m) { return m["x"]; }},
      {(UPat() % y).named("base") % y, [](const Match& m) { return m["base"]; }},
      {x % c + x.idiv(c) * c, [](const Match& m) { return m["x"]; }},
      {x.idiv(c1) * c3 + x % c1 * c2,
       [](const Match& m) -> UOpPtr {
         for (const char* name : {"c1", "c2", "c3"}) {
           if (m[name]->op() != Ops::CONST) return nullptr;
         }
         return IntOf(m["c1"]) * IntOf(m["c2"]) == IntOf(m["c3"]) ? m["x"] * m["c2"] : nullptr;
       }},
      {bx & sc, [](const Match& m) { return m["c"]->const_value().AsBool() ? m["x"] : m["c"]; }},
      {bx | sc, [](const Match& m) { return m["c"]->const_value().AsBool() ? m["c"] : m["x"]; }},
      {UPat(groups::kIdempotent).src(x, x), [](const Match& m) { return m["x"]; }},
      {bx.logical_not().logical_not(), [](const Match& m) { return m["x"]; }},
      {bx.where(UPat::Const(dtypes::kBool, true), UPat::Const(dtypes::kBool, false)),
       [](const Match& m) { return m["x"]; }},
      {x.lt(x), [](const Match& m) { return UOp::Const(dtypes::kBool, false); }},
      {x % x, [](const Match& m) { return m["x"].const_like(0); }},
      {UPat::Var("x", dtypes::kInts).ne(UPat::Var("x", dtypes::kInts)),
       [](const Match& m) { return UOp::Const(dtypes::kBool, false); }},
      {x * 0, [](const Match& m) { return m["x"].const_like(0); }},
      {UPat(groups::kUnary).src(konst).named("a"), FoldAlu},
      {UPat(groups::kBinary - OpSet{Ops::THREEFRY}).src(konst, konst).named("a"), FoldAlu},
      {UPat(groups::kTernary).src(konst, konst, konst).named("a"), FoldAlu},
      {bx * by, [](const Match& m) { return m["x"] & m["y"]; }},
      {bx + by, [](const Match& m) { return m["x"] | m["y"]; }},
      {bx.maximum(by), [](const Match& m) { return m["x"] | m["y"]; }},
      {UPat(Ops::CAST).src(c).named("root"),
       [](const Match& m) { return m["root"].const_like(m["c"]->const_value()); }},
      {UPat(OpSet{Ops::CAST, Ops::BITCAST}).named("root"),
       [](const Match& m) -> UOpPtr {
         return m["root"]->dtype() == m["root"]->src()[0]->dtype() ? m["root"]->src()[0] : nullptr;
       }},
      {UPat(Ops::BITCAST).src(c).named("root"), Decline},
      {x.alu(Ops::POW, {sc}), Decline},
      {sc.alu(Ops::POW, {x}), Decline},
      // ---- commutative ----
      {UPat(groups::kCommutative).dtype(dtypes::kInt32).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& n = m["x"];
         if (!Before(n->src(1), n->src(0))) return nullptr;
         return n.replace_src({n->src()[1], n->src()[0]});
       }},
      // ---- symbolic ----
      {x | (x & UPat()), [](const Match& m) { return m["x"]; }},
      {x * c0 + x * c1, [](const Match& m) { return m["x"] * (m["c0"] + m["c1"]); }},
      {(y + x * c0) + x * c1, [](const Match& m) { return m["y"] + m["x"] * (m["c0"] + m["c1"]); }},
      {x + x * c, [](const Match& m) { return m["x"] * (m["c"] + 1); }},
      {(y + x) + x * c, [](const Match& m) { return m["y"] + m["x"] * (m["c"] + 1); }},
      {x + x, [](const Match& m) { return m["x"] * 2; }},
      {(y + x) + x, [](const Match& m) { return m["y"] + m["x"] * 2; }},
      {(x / x2) / x3, [](const Match& m) -> UOpPtr {
         return m["x2"] == m["x3"] ? nullptr : m["x"] / (m["x2"] * m["x3"]);
       }},
      {-1 * (x + c), [](const Match& m) { return -m["x"] + -m["c"]; }},
      {UPat().where(UPat::Var("val"), UPat::Var("val")), [](const Match& m) { return m["val"]; }},
      {UPat::Cvar("gate", {}, false).where(c0, c1),
       [](const Match& m) { return m["gate"]->const_value().AsBool() ? m["c0"] : m["c1"]; }},
      {UPat::Var("cond", dtypes::kBool).logical_not().where(UPat::Var("t"), UPat::Var("f")),
       [](const Match& m) { return m["cond"].where(m["f"], m["t"]); }},
      {UPat(groups::kBinary)
           .src(UPat::Var("c").where(UPat::Var("t"), UPat::Var("f")),
                UPat::Var("c").where(UPat::Var("tt"), UPat::Var("ff")))
           .named("alu"),
       [](const Match& m) -> UOpPtr {
         bool consts = (m["t"]->op() == Ops::CONST && m["tt"]->op() == Ops::CONST) ||
                       (m["f"]->op() == Ops::CONST && m["ff"]->op() == Ops::CONST);
         if (!consts) return nullptr;
         Ops op = m["alu"]->op();
         return m["c"].where(m["t"].alu(op, {m["tt"]}), m["f"].alu(op, {m["ff"]}));
       }},
      {UPat(groups::kALU | OpSet{Ops::DEFINE_VAR, Ops::SPECIAL, Ops::RANGE}).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& n = m["x"];
         return n->vmin() == n->vmax() ? n.const_like(n->vmin()) : nullptr;
       }},
      {x.maximum(y), [](const Match& m) -> UOpPtr {
         if (m["x"]->vmin() >= m["y"]->vmax()) return m["x"];
         if (m["x"]->vmax() <= m["y"]->vmin()) return m["y"];
         return nullptr;
       }},
  };
  // Two-stage ALU folding, one rule per associative op.
  groups::kAssociative.ForEach([&](Ops op) {
    rules.push_back({x.alu(op, {c1}).alu(op, {c2}).named("f"), [](const Match& m) {
                       Ops fop = m["f"]->op();
                       return m["x"].alu(fop, {m["c1"].alu(fop, {m["c2"]})});
                     }});
  });
  std::vector<RuleSpec> more = {
      {(c0 + x).lt(c1), [](const Match& m) { return m["x"].lt(m["c1"] - m["c0"]); }},
      {x.idiv(c1).idiv(c2), [](const Match& m) { return m["x"].idiv(m["c1"] * m["c2"]); }},
      {(UPat::Cvar("c0", {}, false) * UPat::Var("x", dtypes::kInts)).lt(UPat::Cvar("c1", {}, false)),
       [](const Match& m) -> UOpPtr {
         int64_t a = IntOf(m["c0"]), b = IntOf(m["c1"]);
         return a > 0 && b > 0 ? m["x"].lt((b + a - 1) / a) : nullptr;
       }},
      {(UPat::Cvar("c0", {}, false) * UPat::Var("x", dtypes::kInts)).lt(UPat::Cvar("c1", {}, false)),
       Decline},
      {UPat::Var("x", dtypes::kInts).idiv(UPat::Cvar("c0", {}, false)).lt(UPat::Cvar("c1", {}, false)),
       [](const Match& m) -> UOpPtr {
         return IntOf(m["c0"]) > 0 ? m["x"].lt(IntOf(m["c1"]) * IntOf(m["c0"])) : nullptr;
       }},
      {(x + c1) + y, [](const Match& m) { return (m["x"] + m["y"]) + m["c1"]; }},
      {(x * c1) * y, [](const Match& m) { return (m["x"] * m["y"]) * m["c1"]; }},
      {(UPat() + UPat().idiv(UPat::Cvar("d", {}, false))).named("divs"),
       [](const Match& m) { return WalkAndDecline(m["divs"]); }},
      {(UPat() + UPat().idiv(UPat::Cvar("d", {}, false)) * c).named("divs"),
       [](const Match& m) { return WalkAndDecline(m["divs"]); }},
      {UPat::Var("x", dtypes::kSInts).lt(sc), [](const Match& m) { return WalkAndDecline(m["x"]); }},
      {UPat::Var("x", dtypes::kSInts) * -1 < UPat::Var("y", dtypes::kSInts) * -1,
       [](const Match& m) { return m["y"].lt(m["x"]); }},
      {UPat::Var("x", dtypes::kInts).lt(1).ne(true), [](const Match& m) { return WalkAndDecline(m["x"]); }},
      {(x.idiv(c) + UPat::Cvar("a")).idiv(UPat::Cvar("d")),
       [](const Match& m) -> UOpPtr {
         if (!(m["x"]->vmin() >= ConstValue::Int(0) || m["x"]->vmax() <= ConstValue::Int(0))) return nullptr;
         return (m["x"] + m["a"] * m["c"]).idiv(m["c"] * m["d"]);
       }},
      {UPat::Var("x", dtypes::kSInts).idiv(y), [](const Match& m) { return WalkAndDecline(m["x"]); }},
      {x.idiv(UPat::Var("d")), [](const Match& m) -> UOpPtr {
         return m["d"]->vmax() <= ConstValue::Int(0) ? -(m["x"].idiv(-m["d"])) : nullptr;
       }},
      {x.idiv(UPat::Var("d")), [](const Match& m) -> UOpPtr {
         return m["x"]->vmax() <= ConstValue::Int(0) ? -((-m["x"]).idiv(m["d"])) : nullptr;
       }},
      {(UPat::Var("x", dtypes::kSInts) + sc).named("n").idiv(UPat::Cvar("d", {}, false)),
       [](const Match& m) { return WalkAndDecline(m["n"]); }},
      {x % y, [](const Match& m) { return WalkAndDecline(m["x"]); }},
      {x % UPat::Var("d"), [](const Match& m) -> UOpPtr {
         return m["d"]->vmax() <= ConstValue::Int(0) ? -(m["x"] % (-m["d"])) : nullptr;
       }},
      {x % UPat::Var("d"), [](const Match& m) -> UOpPtr {
         return m["x"]->vmax() <= ConstValue::Int(0) ? -((-m["x"]) % m["d"]) : nullptr;
       }},
      // ---- gep_pushing ----
      {UPat(Ops::GEP).src(UPat(Ops::GEP).named("g2")).named("g1"), Decline},
      {UPat(Ops::GEP).src(UPat(Ops::VECTORIZE).named("vec")).named("gep"),
       [](const Match& m) -> UOpPtr {
         const Arg& idx = m["gep"]->arg();
         return idx.size() == 1 ? m["vec"]->src()[idx[0].as_int()] : nullptr;
       }},
      {UPat(Ops::GEP).src(sc).named("gep"),
       [](const Match& m) { return m["gep"].const_like(m["c"]->const_value()); }},
      {UPat(Ops::GEP).src(UPat(Ops::VCONST).named("c")).named("gep"), Decline},
      {UPat(Ops::GEP).src(UPat::Var("x", dtypes::kVoid)), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::GEP).named("g"), [](const Match& m) -> UOpPtr {
         const UOpPtr& g = m["g"];
         bool identity = g->arg().size() == 1 && g->arg()[0].as_int() == 0 &&
                         g->src()[0]->dtype().count() == 1;
         return identity ? g->src()[0] : nullptr;
       }},
      {UPat(Ops::GEP).src(UPat(groups::kALU | OpSet{Ops::CAST, Ops::BITCAST}).named("alu")).named("gep"),
       Decline},
      {UPat(Ops::CAT).named("x"), Decline},
      {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::GEP).src(x)).named("v"), Decline},
      {UPat(Ops::GEP).src(UPat(Ops::WMMA).named("wmma")).named("gep"), Decline},
      // ---- symbolic_flat ----
      {-1 * (x + y), [](const Match& m) { return -m["x"] + -m["y"]; }},
      {(UPat::Var("x", dtypes::kInts) + y) * c,
       [](const Match& m) { return m["x"] * m["c"] + m["y"] * m["c"]; }},
      // ---- sym ----
      {UPat(Ops::ASSIGN).src(x, x), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::CONST)).named("vec"), Decline},
      {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::GEP).src(x)).named("vec"),
       Decline},
      {UPat(groups::kALU)
           .src(UPat(Ops::VECTORIZE).src_repeat(UPat().named("x")),
                UPat(Ops::VECTORIZE).src_repeat(UPat().named("y")))
           .named("alu"),
       Decline},
      {UPat(Ops::VECTORIZE).src(UPat().named("x")), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::VECTORIZE).dtype(dtypes::kVoid).src_repeat(UPat(Ops::BARRIER).named("b")),
       [](const Match& m) { return m["b"]; }},
      {UPat(Ops::VECTORIZE).dtype(dtypes::kVoid).named("x"),
       [](const Match& m) { return UOp::New(Ops::SINK, dtypes::kVoid, m["x"]->src()); }},
      {UPat(Ops::WMMA).src(UPat::Const({}, 0.0), UPat::Var(), UPat::Var("acc")),
       [](const Match& m) { return m["acc"]; }},
      {UPat(Ops::WMMA).src(UPat::Var(), UPat::Const({}, 0.0), UPat::Var("acc")),
       [](const Match& m) { return m["acc"]; }},
      {UPat(Ops::THREEFRY).dtype(dtypes::kUInt64).src(x, UPat::Var("key")), Decline},
      {UPat::Var("x", dtypes::kUInt32).cast(dtypes::kUInt64).cast(dtypes::kUInt32),
       [](const Match& m) { return m["x"]; }},
      {(UPat::Var("x", dtypes::kUInt64) & 0xFFFFFFFF).cast(dtypes::kUInt32),
       [](const Match& m) { return m["x"].cast(dtypes::kUInt32); }},
      {((any64 * (int64_t{1} << 32)) | y32.cast(dtypes::kUInt64))
           .cast(dtypes::kUInt32),
       [](const Match& m) { return m["y"]; }},
      {((x64 * (int64_t{1} << 32)) | any32.cast(dtypes::kUInt64))
           .idiv(int64_t{1} << 32),
       [](const Match& m) { return m["x"]; }},
      {UPat::Var("x", dtypes::kUInt32).cast(dtypes::kUInt64) *
           UPat::Var("y").where(c64_hi, c64_zero),
       Decline},
      {(UPat::Var("x", dtypes::kUInt64) &
        UPat::Var("y").where(UPat::Const(dtypes::kUInt64, 0xFFFFFFFF), UPat::Const(dtypes::kUInt64, 0)))
           .cast(dtypes::kUInt32),
       Decline},
      {UPat(Ops::DEFINE_ACC).src(x), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::ASSIGN).src(UPat::Cvar(), x), [](const Match& m) { return m["x"]; }},
      {x.ne(0), [](const Match& m) { return m["x"].cast(dtypes::kBool); }},
      {UPat::Var("s").where(UPat::Var("a"), UPat::Var("b")).cast().named("cast"),
       [](const Match& m) {
         DType dt = m["cast"]->dtype();
         return m["s"].where(m["a"].cast(dt), m["b"].cast(dt));
       }},
      {UPat::Var("a").where(UPat::Var("b").where(UPat::Var("c"), UPat::Var("d")), UPat::Var("d")),
       [](const Match& m) { return (m["a"] & m["b"]).where(m["c"], m["d"]); }},
      {UPat(Ops::POW).named("p"), Decline},
      {UPat(Ops::INDEX).named("index").store({UPat(Ops::INDEX).named("index").load()}),
       [](const Match& m) { return UOp::New(Ops::NOOP); }},
      {UPat(Ops::INDEX).named("index").store(
           {UPat::Var("gate").where(UPat::Var("alt"), UPat(Ops::INDEX).named("index").load())}),
       Decline},
      {UPat().index(UPat(), UPat::Const(dtypes::kBool, true)).named("idx"),
       [](const Match& m) { return m["idx"].replace_src({m["idx"]->src()[0], m["idx"]->src()[1]}); }},
      {UPat().index(UPat(), UPat::Const(dtypes::kBool, false)).named("idx"),
       [](const Match& m) { return m["idx"].const_like(0); }},
      {UPat(Ops::LOAD).src(UPat::Const({}, 0)).allow_any_len().named("x"),
       [](const Match& m) { return m["x"].const_like(0); }},
      {UPat(Ops::STORE).src(UPat::Const({}, 0)).allow_any_len(),
       [](const Match& m) { return UOp::New(Ops::NOOP); }},
      {UPat(Ops::SINK).named("root"), [](const Match& m) -> UOpPtr {
         for (const UOpPtr& s : m["root"]->src()) {
           if (s->op() == Ops::NOOP) return nullptr;  // stand-in: would drop the NOOPs
         }
         return nullptr;
       }},
      {UPat(Ops::BARRIER).src(UPat(OpSet{Ops::VECTORIZE, Ops::SINK}).named("sink")),
       [](const Match& m) { return UOp::New(Ops::BARRIER, dtypes::kVoid, m["sink"]->src()); }},
      {UPat(Ops::SINK).named("root"), Decline},
      {(x * x).reciprocal(), [](const Match& m) { return m["x"].reciprocal() * m["x"].reciprocal(); }},
      {(x * x * x).reciprocal(),
       [](const Match& m) { return m["x"].reciprocal() * m["x"].reciprocal() * m["x"].reciprocal(); }},
      {x * (1 + x).reciprocal().named("d"), [](const Match& m) { return 1 - m["d"]; }},
      {x * ((1 + x).reciprocal().named("d") * y), [](const Match& m) { return m["y"] * (1 - m["d"]); }},
      {x * ((1 + x).reciprocal().named("d") + y),
       [](const Match& m) { return (1 - m["d"]) + m["x"] * m["y"]; }},
      {(x * UPat::Cvar("c", {}, false)).reduce().arg(Ops::ADD).named("r").allow_any_len(),
       Decline},
      {UPat(Ops::MUL).reduce().named("r").allow_any_len(), Decline},
  };
  for (RuleSpec& r : more) rules.push_back(std::move(r));
  // Late per-op rules of the kind codegen passes add (decomposition of ops a backend lacks), one per binary
  // op.
  groups::kBinary.ForEach([&](Ops op) {
    rules.push_back({UPat(op).src(UPat(Ops::RANGE).named("r"), UPat::Cvar("c")).named("alu"), Decline});
    rules.push_back({UPat(op).src(UPat(Ops::SPECIAL).named("s"), x).named("alu"), Decline});
  });
  return PatternMatcher(std::move(rules));
}

const PatternMatcher& TheBattery() {
  static const PatternMatcher* pm = new PatternMatcher(Battery());
  return *pm;
}

// A random DAG of int32 index arithmetic over a few bounded variables, with `n` ALU nodes; operands come
// mostly from recent nodes, so subexpressions are shared. Some nodes are reducible (x*1, x+0, constants,
// ...).
UOpPtr RandomIndexGraph(int n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<UOpPtr> pool;
  const char* names[] = {"gidx0", "gidx1", "lidx0", "lidx1", "ridx0", "ridx1"};
  int64_t bounds[] = {31, 15, 7, 3, 255, 63};
  for (int i = 0; i < 6; ++i) pool.push_back(UOp::Variable(names[i], 0, bounds[i]));
  auto pick = [&]() -> const UOpPtr& {
    size_t window = std::min<size_t>(pool.size(), 64);
    return pool[pool.size() - 1 - rng() % window];
  };
  auto konst = [&](int lo, int hi) {
    return UOp::Const(dtypes::kInt32, lo + static_cast<int>(rng() % (hi - lo + 1)));
  };
  std::vector<UOpPtr> roots;
  for (int i = 0; i < n; ++i) {
    const UOpPtr& p = pick();
    UOpPtr q = pick();
    UOpPtr e;
    switch (rng() % 16) {
      case 0:
      case 1:
      case 2:
        e = p + q;
        break;
      case 3:
        e = p + konst(-4, 16);
        break;
      case 4:
      case 5:
        e = p * konst(1, 8);
        break;
      case 6:
        e = p.idiv(konst(1, 16));
        break;
      case 7:
        e = p % konst(1, 16);
        break;
      case 8:
        e = p.lt(konst(0, 64)).where(q, p);
        break;
      case 9:
        e = p.maximum(q);
        break;
      case 10:
        e = (p * konst(2, 4)) + (p * konst(1, 3));
        break;
      case 11:
        e = p + 0;
        break;
      case 12:
        e = p * 1;
        break;
      case 13:
        e = (p + konst(1, 4)) + q;
        break;
      case 14:
        e = p.idiv(konst(2, 4)).idiv(konst(2, 4));
        break;
      default:
        e = p * q;
        break;
    }
    pool.push_back(e);
    if (rng() % 64 == 0) roots.push_back(e);
  }
  roots.push_back(pool.back());
  return UOp::Sink(roots);
}

// PatternMatcher::Rewrite on every node of a graph: the matcher alone.
void BM_MatcherBattery(benchmark::State& state) {
  const PatternMatcher& pm = TheBattery();
  UOpPtr g = RandomIndexGraph(static_cast<int>(state.range(0)), 1);
  std::vector<UOpPtr> nodes;
  for (const UOp* u : g->Toposort()) nodes.push_back(u->ref());
  int64_t matches = 0;
  for (auto _ : state) {
    for (const UOpPtr& n : nodes) {
      UOpPtr r = pm.Rewrite(n);
      matches += r != nullptr;
    }
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(nodes.size()));
  state.counters["rules"] = static_cast<double>(pm.size());
  state.counters["nodes"] = static_cast<double>(nodes.size());
  state.counters["matches/s"] = benchmark::Counter(static_cast<double>(matches), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_MatcherBattery)->Arg(10000);

// Matching cost of one rule that matches and one that is rejected after matching started.
void BM_SingleRuleMatch(benchmark::State& state) {
  UPat x = UPat::Var("x"), c1 = UPat::Cvar("c1"), c2 = UPat::Cvar("c2");
  PatternMatcher pm({{(x * c1) * c2, [](const Match& m) { return m["x"]; }}});
  UOpPtr v = UOp::Variable("v", 0, 10);
  UOpPtr hit = (v * 3) * 4, miss = (v * 3) * v;
  for (auto _ : state) {
    benchmark::DoNotOptimize(pm.Rewrite(hit));
    benchmark::DoNotOptimize(pm.Rewrite(miss));
  }
  state.SetItemsProcessed(state.iterations() * 2);
}
BENCHMARK(BM_SingleRuleMatch);

// graph_rewrite with the battery: input nodes per second. The graph is built once; only the rewrite is timed.
void BM_GraphRewrite(benchmark::State& state) {
  const PatternMatcher& pm = TheBattery();
  UOpPtr g = RandomIndexGraph(static_cast<int>(state.range(0)), 2);
  int64_t input_nodes = static_cast<int64_t>(g->Toposort().size());
  bool bottom_up = state.range(1) != 0;
  UOpPtr out;
  for (auto _ : state) {
    out = GraphRewrite(g, pm, {.bottom_up = bottom_up});
    benchmark::DoNotOptimize(out.get());
    state.PauseTiming();
    out = nullptr;  // freeing the result is not part of the rewrite
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * input_nodes);
  RewriteStats stats;
  state.counters["input_nodes"] = static_cast<double>(input_nodes);
  state.counters["output_nodes"] =
      static_cast<double>(GraphRewrite(g, pm, {.bottom_up = bottom_up, .stats = &stats})->Toposort().size());
  state.counters["rewrites"] = static_cast<double>(stats.Total().matches);
  state.counters["attempts"] = static_cast<double>(stats.Total().attempts);
}
// Top-down only: like tinygrad's, these rules are written for sources that are already simplified (bottom-up,
// (x*c1)*c2 -> x*(c1*c2) and (x*c1)*y -> (x*y)*c1 chase each other before c1*c2 folds, a cycle graph_rewrite
// reports).
BENCHMARK(BM_GraphRewrite)->Args({10000, 0})->Args({100000, 0})->Unit(benchmark::kMillisecond);

// graph_rewrite over a graph the battery already simplified: every node is matched and nothing fires, the
// common case of the later passes that re-run symbolic.
void BM_GraphRewriteFixpoint(benchmark::State& state) {
  const PatternMatcher& pm = TheBattery();
  UOpPtr g = GraphRewrite(RandomIndexGraph(static_cast<int>(state.range(0)), 2), pm);
  int64_t input_nodes = static_cast<int64_t>(g->Toposort().size());
  for (auto _ : state) {
    UOpPtr out = GraphRewrite(g, pm);
    if (out != g) state.SkipWithError("not a fixpoint");
  }
  state.SetItemsProcessed(state.iterations() * input_nodes);
  state.counters["input_nodes"] = static_cast<double>(input_nodes);
  RewriteStats stats;
  GraphRewrite(g, pm, {.stats = &stats});
  state.counters["attempts"] = static_cast<double>(stats.Total().attempts);
  if (EnvFlag("UOPC_MATCH_STATS")) std::fprintf(stderr, "%s", stats.Report().c_str());
}
BENCHMARK(BM_GraphRewriteFixpoint)->Arg(100000)->Unit(benchmark::kMillisecond);

// The engine alone: a matcher with no rule for any op in the graph.
void BM_GraphRewriteNoRules(benchmark::State& state) {
  PatternMatcher pm({{UPat(Ops::WMMA), Decline}});
  UOpPtr g = RandomIndexGraph(static_cast<int>(state.range(0)), 2);
  int64_t input_nodes = static_cast<int64_t>(g->Toposort().size());
  for (auto _ : state) benchmark::DoNotOptimize(GraphRewrite(g, pm).get());
  state.SetItemsProcessed(state.iterations() * input_nodes);
}
BENCHMARK(BM_GraphRewriteNoRules)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uopc
