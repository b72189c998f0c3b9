// pm_reduce (REDUCE -> DEFINE_ACC + ASSIGN, unparented ranges, the closed-form collapse) and the rules of the
// collapse (pm_reduce_collapse), after tinygrad v0.10.3's codegen/devectorizer.py.
#include "codegen/remove_reduce.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/symbolic.h"

namespace uopc {
namespace {

// tinygrad's ReduceContext: the next accumulator's number.
struct ReduceContext {
  int64_t acc_num = 0;
};

const UPat x = UPat::Var("x"), y = UPat::Var("y"), c = UPat::Var("c");

bool Reaches(const UOp* from, const UOp* target) {
  for (const UOp* u : from->Toposort()) {
    if (u == target) return true;
  }
  return false;
}

// tinygrad's no_range: nothing at or below u is a RANGE.
bool NoRange(const UOp* u) {
  for (const UOp* n : u->Toposort()) {
    if (n->op() == Ops::RANGE) return false;
  }
  return true;
}

// tinygrad's identity_element: what an accumulator of `op` starts from.
ConstValue IdentityElement(Ops op, DType scalar) {
  switch (op) {
    case Ops::ADD:
      return ConstValue::Int(0);
    case Ops::MUL:
      return ConstValue::Int(1);
    default:
      return DTypeMin(scalar);
  }
}

// A left fold of `terms` with the binary op `op`.
UOpPtr FoldAlu(Ops op, const std::vector<UOpPtr>& terms) {
  UOpPtr acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = acc.alu(op, {terms[i]});
  return acc;
}

// The slices of a vector input wider than the reduce's dtype whose elementwise op makes the horizontal part
// of the reduce: [0 1 2 3 4 5 6 7] into a 2-vector gives [0 4], [1 5], [2 6], [3 7].
std::vector<UOpPtr> HorizontalReduce(const UOpPtr& inp, DType out_dtype) {
  if (inp->dtype() == out_dtype) return {inp};
  const int amount = inp->dtype().count() / out_dtype.count();
  std::vector<UOpPtr> ret;
  for (int i = 0; i < amount; ++i) {
    std::vector<int64_t> idx;
    for (int j = i; j < inp->dtype().count(); j += amount) idx.push_back(j);
    ret.push_back(inp.gep(idx));
  }
  return ret;
}

std::vector<UOpPtr> Tail(const UOp* u) { return std::vector<UOpPtr>(u->src().begin() + 1, u->src().end()); }

UOpPtr ReduceOf(const UOpPtr& src, const std::vector<UOpPtr>& ranges, const Arg& op) {
  std::vector<UOpPtr> s = {src};
  s.insert(s.end(), ranges.begin(), ranges.end());
  return UOp::New(Ops::REDUCE, src->dtype(), s, op);
}

// ---- pm_reduce_collapse's callbacks ----

// A REDUCE whose input no longer depends on a range: an ADD multiplies by the ranges' sizes.
UOpPtr ReduceRangeless(const UOpPtr& red) {
  if (!red->arg().is_op()) return nullptr;
  const Ops op = red->arg().as_op();
  if (op != Ops::ADD && op != Ops::MAX) return nullptr;
  if (red->src(0)->dtype() != red->dtype()) return nullptr;
  if (!NoRange(red->src(0))) return nullptr;
  UOpPtr ret = red->src()[0];
  if (op == Ops::ADD) {
    for (size_t i = 1; i < red->num_src(); ++i) {
      ret = ret * red->src(i)->src()[0].cast(ret->dtype().scalar()).broadcast(ret->dtype().count());
    }
  }
  return ret;
}

UOpPtr NoVectorizedReduce(const UOpPtr& inp, UOpPtr red) {
  const Ops op = red->arg().as_op();
  if (inp->dtype() != red->dtype()) {
    std::vector<UOpPtr> src = {FoldAlu(op, HorizontalReduce(inp, red->dtype()))};
    for (size_t i = 1; i < red->num_src(); ++i) src.push_back(red->src()[i]);
    red = red.replace_src(src);
    if (red->dtype().vcount() == 1) return red;
  }
  if (red->dtype().vcount() == 1) return nullptr;
  std::vector<UOpPtr> alus;
  for (int i = 0; i < red->dtype().vcount(); ++i) {
    std::vector<UOpPtr> src = {red->src()[0].gep(i)};
    for (size_t j = 1; j < red->num_src(); ++j) src.push_back(red->src()[j]);
    alus.push_back(UOp::New(Ops::REDUCE, red->dtype().scalar(), src, red->arg()));
  }
  return UOp::New(Ops::VECTORIZE, red->dtype(), alus);
}

// A REDUCE(ADD) pattern over `inner` with any ranges.
UPat SumOf(const UPat& inner) { return inner.reduce().allow_any_len().arg(Arg(Ops::ADD)); }

// The rules that solve a range-reducing REDUCE in closed form (tinygrad's pm_reduce_collapse, with sym).
PatternMatcher BuildReduceCollapseRules() {
  const UPat r = UPat(Ops::RANGE).named("r");
  const UPat cut = UPat::Var("cut"), val = UPat::Cvar("val"), gate = UPat::Var("gate");
  const UPat load = UPat(Ops::INDEX).src(UPat::Var("buf"), UPat::Var("idx")).load();
  const UPat casted_gate = UPat::Var("gate", dtypes::kBool).cast();
  const UPat dvar = UPat::Any(UPat(Ops::DEFINE_VAR).named("x"), UPat(Ops::DEFINE_VAR).gep().named("x"));
  PatternMatcher rules({
      // Lift what does not depend on the range out of comparisons.
      {(x + y).lt(c),
       [](const Match& m) -> UOpPtr {
         if (!NoRange(m["y"]) || !NoRange(m["c"])) return nullptr;
         return m["x"].lt(m["c"] - m["y"]);
       }},
      {(x * y).lt(c),
       [](const Match& m) -> UOpPtr {
         if (!NoRange(m["y"]) || !NoRange(m["c"]) || m["y"]->vmin() <= ConstValue::Int(0)) return nullptr;
         return m["x"].lt((m["c"] + m["y"] - 1).idiv(m["y"]));
       }},
      {(x + y).ne(c),
       [](const Match& m) -> UOpPtr {
         if (!NoRange(m["y"]) || !NoRange(m["c"])) return nullptr;
         return m["x"].ne(m["c"] - m["y"]);
       }},
      // Counting the range values below a cut.
      {SumOf(r.lt(cut).where(0, val)),
       [](const Match& m) {
         const UOpPtr& end = m["r"]->src()[0];
         return (end - m["cut"]).maximum(end.const_like(0)).minimum(end).cast(m["val"]->dtype()) * m["val"];
       }},
      {SumOf(r.lt(cut).where(val, 0)),
       [](const Match& m) {
         const UOpPtr& end = m["r"]->src()[0];
         return m["cut"].maximum(m["cut"].const_like(0)).minimum(end).cast(m["val"]->dtype()) * m["val"];
       }},
      // A sum of sums.
      {SumOf(x + y).named("red"),
       [](const Match& m) {
         std::vector<UOpPtr> ranges = Tail(m["red"]);
         return ReduceOf(m["x"], ranges, Arg(Ops::ADD)) + ReduceOf(m["y"], ranges, Arg(Ops::ADD));
       }},
      // A product with a casted bool is a select.
      {x * UPat::Any(casted_gate, UPat(Ops::VECTORIZE).src_repeat(casted_gate).named("b")),
       [](const Match& m) {
         if (m.has("b") && m["b"] != nullptr) {
           return m["gate"].broadcast(m["x"]->dtype().count()).where(m["x"], ConstValue::Int(0));
         }
         return m["gate"].where(m["x"], ConstValue::Int(0));
       }},
      // A gated load summed over the range that selects one element is a gated load.
      {SumOf(gate.where(load, 0)), [](const Match& m) { return m["buf"].index(m["idx"], m["gate"]).load(); }},
      {SumOf(gate.where(0, load)),
       [](const Match& m) { return m["buf"].index(m["idx"], m["gate"].logical_not()).load(); }},
      // An index gated on `idx == r` reads at r = idx, when idx is in the range.
      {UPat::Var("buf").index(UPat::Var("expr"), UPat::Var("idx").eq(r.or_casted())),
       [](const Match& m) {
         const UOpPtr& range = m["r"];
         UOpPtr at = m["idx"].cast(range->dtype());
         UOpPtr expr = Substitute(m["expr"], UOpMap{{range.get(), at}}, "gated load at r");
         return m["buf"].index(expr, at.ge(0) & at.lt(range->src()[0]));
       }},
      // A constant selected by a variable and a condition: the variable factors out of the sum.
      {SumOf((dvar & y).where(UPat::Cvar("c"), 0)).named("red"),
       [](const Match& m) {
         UOpPtr inner = m["y"].where(m["c"], m["c"].const_like(0));
         return ReduceOf(inner, Tail(m["red"]), Arg(Ops::ADD)) * m["x"].cast(m["c"]->dtype());
       }},
      {UPat(Ops::REDUCE).named("red"), [](const Match& m) { return ReduceRangeless(m["red"]); }},
      {UPat(Ops::VECTORIZE).named("inp").reduce().allow_any_len().named("red"),
       [](const Match& m) { return NoVectorizedReduce(m["inp"], m["red"]); }},
      // More than strictly needed, but it leaves only scalars for the rules above.
      {UPat(OpSet{Ops::INDEX, Ops::LOAD, Ops::WHERE}).named("alu"),
       [](const Match& m) { return NoVectorizedAlu(m["alu"]); }},
  });
  return rules + Sym();
}

const PatternMatcher& ReduceCollapseRules() {
  static const PatternMatcher* const pm = new PatternMatcher(BuildReduceCollapseRules());
  return *pm;
}

// ---- pm_reduce's callbacks ----

// Ranges the reduced value does not depend on leave the REDUCE; for ADD the result is scaled by their sizes.
UOpPtr ReduceUnparented(const UOpPtr& red) {
  if (!red->arg().is_op()) return nullptr;
  const Ops op = red->arg().as_op();
  if (op != Ops::ADD && op != Ops::MAX) return nullptr;
  std::vector<UOpPtr> parented, unparented;
  for (size_t i = 1; i < red->num_src(); ++i) {
    (Reaches(red->src(0), red->src(i)) ? parented : unparented).push_back(red->src()[i]);
  }
  if (unparented.empty()) return nullptr;
  UOpPtr ret = red->src()[0];
  if (!parented.empty() || red->dtype() != red->src(0)->dtype()) {
    std::vector<UOpPtr> src = {red->src()[0]};
    src.insert(src.end(), parented.begin(), parented.end());
    ret = red.replace_src(src);
  }
  if (op == Ops::ADD) {
    for (const UOpPtr& r : unparented) {
      ret = ret * r->src()[0].cast(ret->dtype().scalar()).broadcast(ret->dtype().count());
    }
  }
  return ret;
}

// tinygrad's UOp.parents, in its order: the sources, then each source's parents.
class ParentOrder {
 public:
  const std::vector<const UOp*>& Of(const UOp* u) {
    if (auto it = memo_.find(u); it != memo_.end()) return it->second;
    std::vector<const UOp*> ret;
    absl::flat_hash_set<const UOp*> seen;
    auto add = [&](const UOp* n) {
      if (seen.insert(n).second) ret.push_back(n);
    };
    for (const UOpPtr& s : u->src()) add(s.get());
    for (const UOpPtr& s : u->src()) {
      for (const UOp* p : Of(s.get())) add(p);
    }
    return memo_.emplace(u, std::move(ret)).first->second;
  }

 private:
  absl::flat_hash_map<const UOp*, std::vector<const UOp*>> memo_;
};

// A REDUCE over one range with no loads or stores depending on it: the range-independent inputs become
// variables, the collapse rules solve the sum, and the inputs are put back.
UOpPtr ReduceCollapse(const UOpPtr& red) {
  // Which nodes depend on the reduce's ranges.
  absl::flat_hash_set<const UOp*> ranges;
  for (size_t i = 1; i < red->num_src(); ++i) ranges.insert(red->src(i));
  absl::flat_hash_set<const UOp*> depends;
  for (const UOp* n : red->Toposort()) {
    bool d = ranges.contains(n);
    for (const UOpPtr& s : n->src()) d = d || depends.contains(s.get());
    if (d) depends.insert(n);
  }
  ParentOrder order;
  const std::vector<const UOp*>& parents = order.Of(red.get());
  for (const UOp* u : parents) {
    if (depends.contains(u) && (u->op() == Ops::STORE || u->op() == Ops::REDUCE)) return nullptr;
  }
  const absl::flat_hash_set<const UOp*> parent_set(parents.begin(), parents.end());
  UOpMap replaces;
  std::vector<std::pair<UOpPtr, UOpPtr>> back;
  for (const UOp* u : parents) {
    if (!depends.contains(u)) continue;
    for (const UOpPtr& s : u->src()) {
      if (!parent_set.contains(s.get()) || depends.contains(s.get()) || replaces.contains(s.get())) continue;
      switch (s->op()) {
        case Ops::CONST:
        case Ops::VCONST:
        case Ops::DEFINE_GLOBAL:
        case Ops::DEFINE_LOCAL:
        case Ops::DEFINE_VAR:
          continue;
        default:
          break;
      }
      const DType scalar = s->dtype().scalar();
      UOpPtr var = UOp::New(Ops::DEFINE_VAR, s->dtype(), {},
                            Arg{Arg(absl::StrCat("in", replaces.size())), ArgFromConst(s->vmin(), scalar),
                                ArgFromConst(s->vmax(), scalar)});
      replaces.emplace(s.get(), var);
      back.emplace_back(var, s);
    }
  }
  UOpPtr collapse = Substitute(red, replaces, "reduce_collapse inputs");
  absl::StatusOr<UOpPtr> solved =
      TryGraphRewrite(collapse, ReduceCollapseRules(), {.name = "reduce_collapse"});
  if (!solved.ok()) return nullptr;
  for (const UOp* n : (*solved)->Toposort()) {
    if (n->op() == Ops::REDUCE || n->op() == Ops::RANGE) return nullptr;
  }
  UOpMap restore;
  for (const auto& [var, original] : back) restore.emplace(var.get(), original);
  return Substitute(*solved, restore, "reduce_collapse restore");
}

// REDUCE -> DEFINE_ACC + ASSIGN: the accumulator starts at the op's identity and folds in the horizontal
// slices.
UOpPtr ReduceToAcc(ReduceContext& ctx, const UOpPtr& red) {
  const Ops op = red->arg().as_op();
  std::vector<UOpPtr> lst = HorizontalReduce(red->src()[0], red->dtype());
  for (const UOpPtr& l : lst) {
    if (l->dtype() != red->dtype()) return nullptr;  // a horizontal width that does not divide: leave it
  }
  std::vector<UOpPtr> reduce_range = Tail(red);
  if (reduce_range.empty()) return FoldAlu(op, lst);
  std::vector<UOpPtr> acc_src = {red.const_like(IdentityElement(op, red->dtype().scalar()))};
  acc_src.insert(acc_src.end(), reduce_range.begin(), reduce_range.end());
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, red->dtype(), acc_src, Arg(Arg::Tuple{Arg(ctx.acc_num)}));
  ++ctx.acc_num;
  lst.insert(lst.begin(), acc);
  return acc.assign(FoldAlu(op, lst));
}

const PatternMatcher& RemoveReduceRules() {
  static const PatternMatcher* const pm = new PatternMatcher(
      PatternMatcher({
          {UPat(Ops::REDUCE).named("red"), [](const Match& m) { return ReduceUnparented(m["red"]); }},
          {UPat(Ops::REDUCE).src(UPat(), UPat()).named("red"),
           [](const Match& m) { return ReduceCollapse(m["red"]); }},
          {UPat(Ops::REDUCE).named("red"),
           [](const Match& m) { return ReduceToAcc(m.ctx<ReduceContext>(), m["red"]); }},
          // A tensor core accumulates an addend itself.
          {UPat(Ops::WMMA).named("wmma") + UPat::Var("add"),
           [](const Match& m) {
             const UOpPtr& w = m["wmma"];
             return UOp::New(Ops::WMMA, w->dtype(), {w->src()[0], w->src()[1], w->src()[2] + m["add"]},
                             w->arg());
           }},
      }) +
      Sym());  // Sym() ends with gep_pushing: a copy of it after Sym() could never fire
  return *pm;
}

}  // namespace

absl::StatusOr<UOpPtr> RewriteRemoveReduce(const UOpPtr& sink, const Renderer& renderer) {
  if (sink == nullptr || sink->op() != Ops::SINK) {
    return absl::InvalidArgumentError("remove_reduce needs a SINK");
  }
  for (const UOp* u : sink->Toposort()) {
    if (u->op() == Ops::REDUCE && (!u->arg().is_op() || u->num_src() == 0)) {
      return absl::InvalidArgumentError(absl::StrCat("a REDUCE without a reduce op: ", u->arg().ToString()));
    }
  }
  ReduceContext ctx;
  return TryGraphRewrite(sink, RemoveReduceRules(), {.ctx = &ctx, .name = "remove_reduce"});
}

}  // namespace uopc
