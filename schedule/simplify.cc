// The tensor graph's simplifications before grouping (tinygrad's merge_views, sym and replace_contiguous in
// engine/grouper.py): movement ops become VIEWs of their base, adjacent VIEWs merge, and reductions and
// copies that need no kernel go away.
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "rewrite/symbolic.h"
#include "schedule/internal.h"
#include "uop/check.h"
#include "uop/exec_alu.h"

namespace uopc::schedule_internal {

const ShapeTracker& ViewSt(const UOp* view) {
  const ShapeTracker* st = ShapeTrackerOf(view);
  UOPC_CHECK(st != nullptr, "a VIEW's arg is a ShapeTracker");
  return *st;
}

std::vector<int64_t> IntShape(const SintVec& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Sint& s : shape) out.push_back(s.is_int() ? s.value() : s.vmax());
  return out;
}

int64_t Prod(const SintVec& shape) {
  int64_t p = 1;
  for (const Sint& s : shape) p *= s.is_int() ? s.value() : s.vmax();
  return p;
}

namespace {

Context& Ctx(const Match& m) { return m.ctx<Context>(); }

UOpPtr WithArg(const UOpPtr& u, const ShapeTracker& st) {
  return u.replace_arg(Arg(std::make_shared<ShapeTrackerArg>(st)));
}

// tinygrad's identity_element.
ConstValue IdentityElement(Ops op, DType dtype) {
  if (op == Ops::ADD) return dtype.is_float() ? ConstValue::Float(0.0) : ConstValue::Int(0);
  if (op == Ops::MUL) return dtype.is_float() ? ConstValue::Float(1.0) : ConstValue::Int(1);
  return DTypeMin(dtype);
}

// sum/max over axes where the input has stride 0: no reduction needed.
UOpPtr SimplifyStride0Reduce(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& reduce = m["reduce"];
  const UOpPtr& x = m["x"];
  const ShapeTracker* st = ctx.St(x);
  if (st == nullptr) return nullptr;
  for (const View& v : st->views()) {
    if (v.mask()) return nullptr;
  }
  const Arg::Tuple& arg = reduce->arg().as_tuple();
  std::vector<int64_t> axes;
  for (const Arg& a : arg[1].as_tuple()) axes.push_back(a.as_int());
  const View& last = st->views().back();
  for (int64_t a : axes) {
    if (!last.strides()[a].is_int() || last.strides()[a].value() != 0) return nullptr;
  }
  for (const Sint& s : st->shape()) {
    if (!s.is_int()) return nullptr;
  }
  std::vector<std::pair<int64_t, int64_t>> bounds;
  int64_t prshape = 1;
  for (size_t i = 0; i < st->shape().size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    bounds.emplace_back(0, reduced ? 1 : st->shape()[i].value());
    if (reduced) prshape *= st->shape()[i].value();
  }
  absl::StatusOr<UOpPtr> ret = Shrink(x, bounds, ctx.shapes);
  if (!ret.ok()) return nullptr;
  switch (arg[0].as_op()) {
    case Ops::ADD:
      return Alu(Ops::MUL, {*ret, ConstLike(*ret,
                                            reduce->dtype().is_float() ? ConstValue::Float(prshape)
                                                                       : ConstValue::Int(prshape),
                                            ctx.shapes)});
    case Ops::MUL:
      return Alu(Ops::POW, {*ret, ConstLike(*ret,
                                            reduce->dtype().is_float() ? ConstValue::Float(prshape)
                                                                       : ConstValue::Int(prshape),
                                            ctx.shapes)});
    case Ops::MAX:
      return *ret;
    default:
      return nullptr;
  }
}

// A big reduction into few outputs becomes two kernels: the reduce axis is split and the part moved to the
// end reduces second (tinygrad's split_reduceop, REDUCEOP_SPLIT_THRESHOLD 32768, REDUCEOP_SPLIT_SIZE 22).
UOpPtr SplitReduceop(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& reduce = m["reduce"];
  const UOpPtr& x = m["x"];
  const ShapeTracker* xst = ctx.St(x);
  const ShapeTracker* rst = ctx.St(reduce);
  if (xst == nullptr || rst == nullptr) return nullptr;
  for (const Sint& s : xst->shape()) {
    if (!s.is_int()) return nullptr;
  }
  const int64_t in_size = Prod(xst->shape()), out_size = Prod(rst->shape());
  if (out_size == 0 || in_size / out_size < 32768) return nullptr;
  std::vector<std::optional<Sint>> strides = xst->RealStrides(/*ignore_valid=*/true);
  const Arg::Tuple& arg = reduce->arg().as_tuple();
  std::vector<int64_t> axes;
  for (const Arg& a : arg[1].as_tuple()) axes.push_back(a.as_int());
  const int64_t max_divisor = std::min<int64_t>(256, (int64_t{1} << 22) / out_size);
  std::vector<int64_t> shape = IntShape(xst->shape());
  for (int64_t axis : axes) {
    for (int64_t d = max_divisor; d >= 8; --d) {
      bool stride_zero = strides[axis].has_value() && strides[axis]->is_int() && strides[axis]->value() == 0;
      if (shape[axis] % d != 0 || stride_zero) continue;
      std::vector<int64_t> split_shape(shape.begin(), shape.begin() + axis);
      split_shape.push_back(d);
      split_shape.push_back(shape[axis] / d);
      split_shape.insert(split_shape.end(), shape.begin() + axis + 1, shape.end());
      std::vector<int64_t> order;
      for (int64_t i = 0; i < static_cast<int64_t>(split_shape.size()); ++i) {
        if (i != axis) order.push_back(i);
      }
      order.push_back(axis);
      absl::StatusOr<UOpPtr> splitted = Reshape(x, split_shape, ctx.shapes);
      if (!splitted.ok()) return nullptr;
      splitted = Permute(*splitted, order, ctx.shapes);
      if (!splitted.ok()) return nullptr;
      UOpPtr first = ReduceAxis(*splitted, arg[0].as_op(), axes, ctx.shapes);
      UOpPtr second =
          ReduceAxis(first, arg[0].as_op(), {static_cast<int64_t>(rst->shape().size())}, ctx.shapes);
      absl::StatusOr<UOpPtr> out = Reshape(second, rst->shape(), ctx.shapes);
      return out.ok() ? *out : nullptr;
    }
  }
  return nullptr;
}

// The value of a constant a symbolic rule made without a shape: a bare CONST, or a CAST of one (x < x and
// x != x fold to `x.const_like(False).cast(bool)`).
std::optional<ConstValue> BareConstValue(const UOpPtr& out) {
  if (out->op() == Ops::CONST && out->num_src() == 0) return out->const_value();
  if (out->op() != Ops::CAST || out->num_src() != 1) return std::nullopt;
  const UOpPtr& c = out->src()[0];
  if (c->op() != Ops::CONST || c->num_src() != 0) return std::nullopt;
  absl::StatusOr<ConstValue> v = ExecCast(c->const_value(), c->dtype(), out->dtype());
  if (!v.ok()) return std::nullopt;
  return *v;
}

// The constants a rule built into an elementwise expression (`x // -1` becomes `x * -1`, whose -1 comes from
// UOpPtr::const_like with no shape), made tensor constants of the shape and device of a shaped source beside
// them, as tinygrad's const_like makes them in a tensor graph. Only the rule's new nodes are walked: `bound`
// is the root and what a rule can bind, its sources three levels down.
UOpPtr ShapeNewConstants(const UOpPtr& out, const UOp* root, Context& ctx) {
  absl::flat_hash_set<const UOp*> bound;
  std::vector<std::pair<const UOp*, int>> stack = {{root, 0}};
  while (!stack.empty()) {
    auto [u, depth] = stack.back();
    stack.pop_back();
    if (!bound.insert(u).second || depth == 3) continue;
    for (const UOp* s : u->src()) stack.push_back({s, depth + 1});
  }
  absl::flat_hash_map<const UOp*, UOpPtr> memo;
  auto is_bare_const = [](const UOpPtr& u) { return u->op() == Ops::CONST && u->num_src() == 0; };
  std::function<UOpPtr(const UOpPtr&)> fix = [&](const UOpPtr& u) -> UOpPtr {
    if (bound.contains(u.get())) return u;
    if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : u->src()) src.push_back(fix(s));
    if (groups::kALU.contains(u->op()) || u->op() == Ops::CAST) {
      const UOpPtr* shaped = nullptr;
      for (const UOpPtr& s : src) {
        if (!is_bare_const(s) && !DeviceOf(s.get()).empty() && ctx.St(s) != nullptr) shaped = &s;
      }
      if (shaped != nullptr) {
        const SintVec shape = ctx.shapes.Shape(*shaped);
        for (UOpPtr& s : src) {
          if (is_bare_const(s)) s = TensorConst(s->dtype(), s->const_value(), shape, DeviceOf(shaped->get()));
        }
      }
    }
    UOpPtr fixed = u.replace_src(src);
    memo.emplace(u.get(), fixed);
    return fixed;
  };
  return fix(out);
}

// symbolic_simple's rules, except that a constant they fold a tensor node into is a tensor constant (with the
// node's device and shape), as tinygrad's const_like makes it, and so are the constants of what they build.
PatternMatcher TensorSymbolicSimple() {
  std::vector<std::shared_ptr<const Rule>> rules;
  for (const std::shared_ptr<const Rule>& r : SymbolicSimple().rules()) {
    RuleFn fn = r->fn();
    auto wrapped = [fn](const Match& m) -> UOpPtr {
      UOpPtr out = fn(m);
      if (out == nullptr) return out;
      Context& ctx = Ctx(m);
      if (DeviceOf(m.root().get()).empty() || ctx.St(m.root()) == nullptr) return out;
      std::optional<ConstValue> value = BareConstValue(out);
      if (!value) return ShapeNewConstants(out, m.root().get(), ctx);
      return ConstLike(m.root(), *value, ctx.shapes);
    };
    rules.push_back(
        std::make_shared<const Rule>(RuleSpec{r->pattern(), RuleFn(wrapped, fn.file(), fn.line())}));
  }
  return PatternMatcher(std::move(rules));
}

}  // namespace

const PatternMatcher& MergeViews() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // adjacent views merge
      {UPat(Ops::VIEW).src(UPat(Ops::VIEW).named("v1")).named("v2"),
       [](const Match& m) { return WithArg(m["v1"], Compose(ViewSt(m["v1"]), ViewSt(m["v2"]))); }},
      // a view of a load, store or valid moves into its ShapeTracker
      {UPat(Ops::VIEW).src(UPat({Ops::LOAD, Ops::STORE, Ops::VALID}).named("x")).named("view"),
       [](const Match& m) {
         const UOpPtr& x = m["x"];
         std::vector<UOpPtr> src(x->src().begin(), x->src().end());
         for (UOpPtr& s : src) {
           if (s->op() == Ops::VIEW) s = Compose(ViewSt(s), ViewSt(m["view"])).ToUOp();
         }
         return x.replace_src(src);  // never x: the VIEW above it goes
       }},
      // a view of a constant merges into it when it is not masked
      {UPat({Ops::CONST, Ops::DEFINE_VAR}).named("x").view().named("view"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& x = m["x"];
         const ShapeTracker* st = Ctx(m).St(x);
         if (st == nullptr || x->num_src() == 0) return nullptr;
         ShapeTracker merged = Compose(*st, ViewSt(m["view"]));
         for (const View& v : merged.views()) {
           if (v.mask()) return nullptr;
         }
         return x.replace_src({WithArg(x->src()[0], merged)});
       }},
      // a contiguous view of the same shape is the node itself
      {UPat(kAllOps - OpSet{Ops::DEVICE}).named("x").view().named("view"),
       [](const Match& m) -> UOpPtr {
         const ShapeTracker& st = ViewSt(m["view"]);
         const ShapeTracker* xst = Ctx(m).St(m["x"]);
         if (xst == nullptr || !st.contiguous() || xst->shape() != st.shape()) return nullptr;
         return m["x"];
       }},
      // a view masked to nothing is zero
      {UPat(Ops::VIEW).src(UPat()).named("view"),
       [](const Match& m) -> UOpPtr {
         const std::optional<PairVec>& mask = ViewSt(m["view"]).views().back().mask();
         if (!mask) return nullptr;
         for (const SintPair& p : *mask) {
           if (p.second - p.first == Sint(0)) return ConstLike(m["view"], ConstValue::Int(0), Ctx(m).shapes);
         }
         return nullptr;
       }},
      // a movement op is a view of its base
      {UPat(groups::kMovement).src(UPat::Var("x")).named("mop"),
       [](const Match& m) -> UOpPtr {
         const ShapeTracker* st = Ctx(m).St(m["mop"]);
         if (st == nullptr) return nullptr;
         return ViewOf(m["x"], *st);
       }},
  });
  return *pm;
}

const PatternMatcher& ScheduleSym() {
  static const PatternMatcher* const
      pm =
          new PatternMatcher(
              TensorSymbolicSimple() +
              PatternMatcher(
                  {
                      // a node of size 0 is zero
                      {UPat(kAllOps - OpSet{Ops::SINK}).named("root"),
                       [](const Match& m) -> UOpPtr {
                         Context& ctx = Ctx(m);
                         const UOpPtr& root = m["root"];
                         UOpPtr base = BaseOf(root);
                         if (ctx.St(base) == nullptr || ctx.St(root) == nullptr) return nullptr;
                         if (ctx.shapes.Size(root) != 0) return nullptr;
                         if (base->op() == Ops::CONST && base->const_value() == ConstValue::Int(0))
                           return nullptr;
                         return ConstLike(root, ConstValue::Int(0), ctx.shapes);
                       }},
                      // DETACH, CONTIGUOUS_BACKWARD and CUSTOM_GRADIENT do nothing here
                      {UPat({Ops::DETACH, Ops::CONTIGUOUS_BACKWARD, Ops::CUSTOM_GRADIENT}).named("x"),
                       [](const Match& m) { return m["x"]->src()[0]; }},
                      // a reduction of nothing is the identity
                      {UPat(Ops::REDUCE_AXIS).src(UPat::Var("x")).named("reduce"),
                       [](const Match& m) -> UOpPtr {
                         Context& ctx = Ctx(m);
                         const UOpPtr& reduce = m["reduce"];
                         if (ctx.St(m["x"]) == nullptr || ctx.St(reduce) == nullptr) return nullptr;
                         if (ctx.shapes.Size(m["x"]) != 0 || ctx.shapes.Size(reduce) == 0) return nullptr;
                         return ConstLike(reduce, IdentityElement(reduce->arg()[0].as_op(), reduce->dtype()),
                                          ctx.shapes);
                       }},
                      {UPat(Ops::REDUCE_AXIS).src(UPat::Var("x")).named("reduce"), SimplifyStride0Reduce},
                      {UPat(Ops::REDUCE_AXIS).src(UPat::Var("x")).named("reduce"), SplitReduceop},
                      // COPY of a constant is the constant on the other device (not an all-reduce's COPY,
                      // whose arg names its communicator: a sum over processes is not the constant)
                      {UPat(Ops::COPY).src(UPat::Cvar("x"), UPat(Ops::DEVICE)).named("root"),
                       [](const Match& m) -> UOpPtr {
                         if (m["x"]->op() != Ops::CONST || !m["root"]->arg().is_none() ||
                             Ctx(m).St(m["root"]) == nullptr) {
                           return nullptr;
                         }
                         return ConstLike(m["root"], m["x"]->const_value(), Ctx(m).shapes);
                       }},
                      // a shrink is stored before the COPY, any other view applied after it
                      {UPat(Ops::COPY).src(UPat(Ops::VIEW).named("v"), UPat(Ops::DEVICE)).named("copy"),
                       [](const Match& m) -> UOpPtr {
                         Context& ctx = Ctx(m);
                         const UOpPtr& v = m["v"];
                         const UOpPtr& copy = m["copy"];
                         UOpPtr base = BaseOf(v);
                         const ShapeTracker* vst = ctx.St(v);
                         const ShapeTracker* bst = ctx.St(base);
                         if (vst == nullptr || bst == nullptr) return nullptr;
                         if (Prod(vst->shape()) < Prod(bst->shape())) {
                           return UOp::New(Ops::COPY, copy->dtype(),
                                           {Alu(Ops::CONTIGUOUS, {v}), copy->src()[1]}, copy->arg());
                         }
                         return ViewOf(
                             UOp::New(Ops::COPY, copy->dtype(), {base, copy->src()[1]}, copy->arg()), *vst);
                       }},
                      // CONTIGUOUS of a contiguous view of a whole buffer is that view
                      {UPat(Ops::CONTIGUOUS)
                           .src(UPat(Ops::VIEW).src(UPat(Ops::BUFFER).named("buf")).named("view"))
                           .named("root"),
                       [](const Match& m) -> UOpPtr {
                         const ShapeTracker& st = ViewSt(m["view"]);
                         if (!st.contiguous() || st.size() != m["buf"]->arg().as_int()) return nullptr;
                         return m["view"];
                       }},
                      // these are contiguous already
                      {UPat(Ops::CONTIGUOUS)
                           .src(UPat({Ops::CONTIGUOUS, Ops::BUFFER, Ops::COPY, Ops::ASSIGN}))
                           .named("root"),
                       [](const Match& m) { return m["root"]->src()[0]; }},
                      // two ASSIGNs to one target are one
                      {UPat(Ops::ASSIGN)
                           .src(UPat::Var("t"), UPat(Ops::ASSIGN).src(UPat::Var("t"), UPat::Var("x"))),
                       [](const Match& m) {
                         return UOp::New(Ops::ASSIGN, m["t"]->dtype(),
                                         {m["t"], Alu(Ops::CONTIGUOUS, {m["x"]})});
                       }},
                      // ASSIGN to something not yet a buffer is the value itself
                      {
                          UPat(Ops::ASSIGN).src(UPat::Var("t"), UPat::Var("x")),
                          [](const Match& m) -> UOpPtr {
                            Ops base = BaseOf(m["t"].get())->op();
                            if (base == Ops::BUFFER || base == Ops::BUFFER_VIEW) return nullptr;
                            return Alu(Ops::CONTIGUOUS, {m["x"]});
                          }},
                      // a CAST to a narrower dtype goes before an expand
                      {UPat(Ops::CAST).src(UPat(Ops::VIEW).named("vm")).named("cast"),
                       [](const Match& m) -> UOpPtr {
                         const UOpPtr& vm = m["vm"];
                         const UOpPtr& cast = m["cast"];
                         const ShapeTracker& st = ViewSt(vm);
                         if (cast->dtype().itemsize() > vm->dtype().itemsize()) return nullptr;
                         if (!(Prod(st.shape()) > st.RealSize())) return nullptr;
                         return ViewOf(CastTo(BaseOf(vm), cast->dtype()), st);
                       }},
                      // so does a unary op that can fuse with its input
                      {UPat(groups::kUnary)
                           .src(
                               UPat(Ops::VIEW).src(UPat(kAllOps - kAlwaysContiguous).named("inp")).named("v"))
                           .named("alu"),
                       [](const Match& m) -> UOpPtr {
                         const ShapeTracker& st = ViewSt(m["v"]);
                         const ShapeTracker* ast = Ctx(m).St(m["alu"]);
                         if (ast == nullptr || !(Prod(ast->shape()) > st.RealSize())) return nullptr;
                         return ViewOf(Alu(m["alu"]->op(), {m["inp"]}), st);
                       }},
                  }));
  return *pm;
}

const PatternMatcher& ReplaceContiguous() {
  static const PatternMatcher* const pm = new PatternMatcher({
      {UPat(Ops::CONTIGUOUS).src(UPat(Ops::VIEW).named("src")).named("contig"),
       [](const Match& m) -> UOpPtr {
         Context& ctx = Ctx(m);
         const UOpPtr& src = m["src"];
         UOpPtr base = BaseOf(src);
         const ShapeTracker* bst = ctx.St(base);
         if (bst == nullptr) return nullptr;
         if (std::optional<ShapeTracker> inv = ViewSt(src).Invert(bst->shape())) {
           ctx.contiguous[base] = ViewOf(m["contig"], *inv);
         }
         return nullptr;
       }},
      {UPat(groups::kALU).named("alu"),
       [](const Match& m) -> UOpPtr {
         Context& ctx = Ctx(m);
         if (ctx.contiguous.empty()) return nullptr;
         const UOpPtr& alu = m["alu"];
         std::vector<UOpPtr> src(alu->src().begin(), alu->src().end());
         bool changed = false;
         for (UOpPtr& s : src) {
           if (auto it = ctx.contiguous.find(s); it != ctx.contiguous.end()) {
             s = it->second;
             changed = true;
           }
         }
         if (!changed) return nullptr;
         UOpPtr out = alu.replace_src(src);
         return out == alu ? nullptr : out;
       }},
  });
  return *pm;
}

}  // namespace uopc::schedule_internal
