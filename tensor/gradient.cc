// The gradient rules of the tensor-level ops (tinygrad v0.10.3's pm_gradient) and the reverse walk that
// applies them (compute_gradient). A rule sees the op (`ret`) and the gradient flowing into it (`ctx`) and
// gives each source its gradient, or none. The rules build with UOp-level maths exactly as tinygrad's UOp
// methods do (a - b is a + b*-1, a / b is a * RECIP(b), a constant is CONST(VIEW(DEVICE)) expanded to the
// shape), so the gradient graph is tinygrad's node for node.
#include "tensor/gradient.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/upat.h"
#include "runtime/collective.h"
#include "schedule/tensor_uop.h"
#include "tensor/multi.h"
#include "tensor/tensor_internal.h"

namespace uopc {
namespace {

using Dims = std::vector<int64_t>;

constexpr double kLn2 = 0.6931471805599453;  // math.log(2)
constexpr double kPi = 3.141592653589793;
constexpr double kInf = std::numeric_limits<double>::infinity();

// What the rules share: the node shapes they need, and the first error a builder met (a movement op the
// shapes reject cannot happen for a well-formed forward graph, but must not crash if it does).
struct GradientContext {
  UOpPtr grad;  // the gradient flowing into the node (tinygrad's ctx)
  TensorShapes shapes;
  absl::Status error;
};

// A node of the gradient graph with the context, so that the rules read like the calculus
// (`-ctx * ret * ret`). A null node is tinygrad's None: no gradient for that source.
class GradientExpr {
 public:
  GradientExpr(UOpPtr uop, GradientContext* context) : uop_(std::move(uop)), context_(context) {}
  const UOpPtr& uop() const { return uop_; }
  GradientExpr src(int i) const { return Wrap(uop_->src()[i]); }
  const Arg& arg() const { return uop_->arg(); }
  DType dtype() const { return uop_->dtype(); }
  Dims shape() const {
    Dims out;
    absl::StatusOr<const ShapeTracker*> st = context_->shapes.TrySt(uop_);
    if (!st.ok() || *st == nullptr) {
      Fail(st.ok() ? absl::InvalidArgumentError(absl::StrCat(OpName(uop_->op()), " has no shape"))
                   : st.status());
      return out;
    }
    for (const Sint& s : (*st)->shape()) {
      if (!s.is_int()) Fail(absl::UnimplementedError("gradients of symbolic shapes are not supported"));
      out.push_back(s.is_int() ? s.value() : 1);
    }
    return out;
  }

  // x.const_like(value): a constant of this node's dtype, shape and device.
  GradientExpr ConstLike(ConstValue value) const {
    return Wrap(uopc::ConstLike(uop_, value, context_->shapes));
  }
  GradientExpr ConstLike(double value) const { return ConstLike(ConstValue::Float(value)); }

  GradientExpr Alu(Ops op, std::initializer_list<GradientExpr> more) const {
    std::vector<UOpPtr> src = {uop_};
    for (const GradientExpr& x : more) src.push_back(x.uop_);
    return Wrap(uopc::Alu(op, src));
  }
  GradientExpr Cast(DType dtype) const { return Wrap(CastTo(uop_, dtype)); }
  GradientExpr Recip() const { return Alu(Ops::RECIP, {}); }
  GradientExpr Sin() const { return Alu(Ops::SIN, {}); }
  GradientExpr Log2() const { return Alu(Ops::LOG2, {}); }
  GradientExpr Pow(const GradientExpr& x) const { return Alu(Ops::POW, {x}); }
  GradientExpr Contiguous() const { return Alu(Ops::CONTIGUOUS, {}); }
  GradientExpr Ne(const GradientExpr& x) const { return Alu(Ops::CMPNE, {x}); }
  GradientExpr Ne(ConstValue x) const { return Ne(ConstLike(x)); }
  GradientExpr LogicalNot() const { return Ne(ConstValue::Bool(true)); }
  GradientExpr Eq(double x) const { return Ne(ConstLike(x)).LogicalNot(); }
  // self ? x : y
  GradientExpr Where(const GradientExpr& x, const GradientExpr& y) const { return Alu(Ops::WHERE, {x, y}); }

  GradientExpr Reshape(const Dims& shape) const {
    return Built(uopc::Reshape(uop_, shape, context_->shapes));
  }
  GradientExpr Expand(const Dims& shape) const { return Built(uopc::Expand(uop_, shape, context_->shapes)); }
  GradientExpr Permute(const Dims& order) const {
    return Built(uopc::Permute(uop_, order, context_->shapes));
  }
  GradientExpr Pad(const std::vector<std::pair<int64_t, int64_t>>& pads) const {
    return Built(uopc::Pad(uop_, pads, context_->shapes));
  }
  GradientExpr Shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const {
    return Built(uopc::Shrink(uop_, bounds, context_->shapes));
  }
  GradientExpr Flip(const Arg& flips) const {
    return Built(MovementOp(uop_, Ops::FLIP, flips, context_->shapes));
  }
  // UOp.r: a reduction over the axes of size other than 1.
  GradientExpr Reduce(Ops op, const Dims& axes) const {
    return Wrap(ReduceAxis(uop_, op, axes, context_->shapes));
  }

  TensorShapes& shapes() const { return context_->shapes; }

  // A node another builder made, or this node when the builder failed (its error becomes the rule's).
  GradientExpr Built(absl::StatusOr<UOpPtr> uop) const {
    if (!uop.ok()) {
      Fail(uop.status());
      return *this;
    }
    return Wrap(*std::move(uop));
  }

  friend GradientExpr operator+(const GradientExpr& a, const GradientExpr& b) { return a.Alu(Ops::ADD, {b}); }
  friend GradientExpr operator*(const GradientExpr& a, const GradientExpr& b) { return a.Alu(Ops::MUL, {b}); }
  friend GradientExpr operator*(const GradientExpr& a, double b) { return a * a.ConstLike(b); }
  // UOp.neg: x * -1, or logical not for bools.
  friend GradientExpr operator-(const GradientExpr& a) {
    return a.dtype().scalar() == dtypes::kBool ? a.LogicalNot() : a * a.ConstLike(ConstValue::Int(-1));
  }
  friend GradientExpr operator-(const GradientExpr& a, double b) { return a + a.ConstLike(-b); }
  friend GradientExpr operator-(double a, const GradientExpr& b) { return b.ConstLike(a) + -b; }
  friend GradientExpr operator/(const GradientExpr& a, const GradientExpr& b) { return a * b.Recip(); }
  friend GradientExpr operator<(const GradientExpr& a, const GradientExpr& b) {
    return a.Alu(Ops::CMPLT, {b});
  }
  friend GradientExpr operator<(const GradientExpr& a, double b) { return a < a.ConstLike(b); }
  friend GradientExpr operator>(const GradientExpr& a, const GradientExpr& b) { return b < a; }
  friend GradientExpr operator!=(const GradientExpr& a, const GradientExpr& b) { return a.Ne(b); }
  friend GradientExpr operator&(const GradientExpr& a, const GradientExpr& b) { return a.Alu(Ops::AND, {b}); }

 private:
  GradientExpr Wrap(UOpPtr uop) const { return GradientExpr(std::move(uop), context_); }
  void Fail(absl::Status s) const {
    if (context_->error.ok()) context_->error = std::move(s);
  }
  UOpPtr uop_;
  GradientContext* context_;
};

// tinygrad's None: no gradient for a source.
GradientExpr None() { return GradientExpr(nullptr, nullptr); }

// One gradient per source of the op, None for none (tinygrad's tuple).
using GradientList = std::vector<GradientExpr>;
template <typename... Expr>
GradientList Grads(const Expr&... grads) {
  return {grads...};
}

// The gradients under a SINK, NOOP standing for None.
const UOpPtr& NoGradient() {
  static const UOpPtr* none = new UOpPtr(UOp::New(Ops::NOOP));
  return *none;
}
UOpPtr GradientSink(const GradientList& grads) {
  std::vector<UOpPtr> src;
  for (const GradientExpr& g : grads) src.push_back(g.uop() ? g.uop() : NoGradient());
  return UOp::New(Ops::SINK, dtypes::kVoid, src);
}

// A rule of pm_gradient: the ops it is for and `rule(ctx, ret)`, a capture-free lambda of the gradient
// flowing in (ctx) and the op (ret) giving the sources' gradients, as tinygrad's `lambda ctx, ret: (...)`;
// nullopt (None) when the rule does not apply. The rule keeps the line it is written on.
template <typename RuleLambda>
RuleSpec GradientRule(OpSet ops, RuleLambda /*rule*/, const char* file = __builtin_FILE(),
                      int line = __builtin_LINE()) {
  static_assert(std::is_empty_v<RuleLambda> && std::is_default_constructible_v<RuleLambda>,
                "a gradient rule captures nothing");
  auto callback = [](const Match& m) {
    GradientContext* context = &m.ctx<GradientContext>();
    std::optional<GradientList> grads =
        RuleLambda{}(GradientExpr(context->grad, context), GradientExpr(m.root(), context));
    return grads.has_value() ? GradientSink(*grads) : nullptr;
  };
  return {UPat(ops), RuleFn(callback, file, line)};
}

Dims Ints(const Arg& arg) {
  Dims out;
  for (const Arg& a : arg.as_tuple()) out.push_back(a.as_int());
  return out;
}
std::vector<std::pair<int64_t, int64_t>> Pairs(const Arg& arg) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const Arg& a : arg.as_tuple()) out.emplace_back(a.as_tuple()[0].as_int(), a.as_tuple()[1].as_int());
  return out;
}

// tinygrad's argsort of an int tuple: the order that sorts it (for a permutation, its inverse).
Dims ArgSort(const Arg& tuple) {
  const Dims values = Ints(tuple);
  Dims order(values.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return values[a] < values[b]; });
  return order;
}

// The shrink that undoes a PAD: the region of its result that holds its source.
std::vector<std::pair<int64_t, int64_t>> UnpadBounds(const GradientExpr& pad) {
  Dims shape = pad.src(0).shape();
  std::vector<std::pair<int64_t, int64_t>> pads = Pairs(pad.arg()), bounds;
  for (size_t i = 0; i < shape.size() && i < pads.size(); ++i) {
    bounds.emplace_back(pads[i].first, shape[i] + pads[i].first);
  }
  return bounds;
}

// The pad that undoes a SHRINK: its result put back in place in its source's shape.
std::vector<std::pair<int64_t, int64_t>> UnshrinkPads(const GradientExpr& shrink) {
  Dims shape = shrink.src(0).shape();
  std::vector<std::pair<int64_t, int64_t>> bounds = Pairs(shrink.arg()), pads;
  for (size_t i = 0; i < shape.size() && i < bounds.size(); ++i) {
    pads.emplace_back(bounds[i].first, shape[i] - bounds[i].second);
  }
  return pads;
}

// The axes an EXPAND grows.
Dims ExpandedAxes(const GradientExpr& expand) {
  Dims shape = expand.src(0).shape(), expanded = Ints(expand.arg()), axes;
  for (size_t i = 0; i < shape.size() && i < expanded.size(); ++i) {
    if (shape[i] != expanded[i]) axes.push_back(static_cast<int64_t>(i));
  }
  return axes;
}

// REDUCE_AXIS: a sum spreads the gradient back over the reduced axes; a max gives it to the maxima, split
// evenly among ties; a product gives each element the product of the others.
std::optional<GradientList> ReduceGradient(const GradientExpr& ctx, const GradientExpr& ret) {
  Ops op = ret.arg().as_tuple()[0].as_op();
  Dims axes = Ints(ret.arg().as_tuple()[1]);
  GradientExpr x = ret.src(0);
  Dims shape = x.shape();
  if (op == Ops::ADD) return Grads(ctx.Expand(shape));
  if (op == Ops::MAX) {
    GradientExpr max_is_1s =
        x.Ne(ret.Expand(shape)).Ne(x.ConstLike(ConstValue::Int(1)).Cast(dtypes::kBool)).Cast(ctx.dtype());
    GradientExpr div = max_is_1s.Reduce(Ops::ADD, axes).Expand(shape);
    return Grads((max_is_1s / div) * ctx.Expand(shape));
  }
  if (op == Ops::MUL) return Grads((ctx * ret).Expand(shape) / x);
  return std::nullopt;
}

// CUSTOM_GRADIENT: the value takes the gradient as it is (what in its graph is not detached gets its share
// there), and the rule the arg names gives the other sources theirs.
std::optional<GradientList> CustomGradient(const GradientExpr& ctx, const GradientExpr& ret) {
  if (ret.arg().as_tuple()[0].as_string() != tensor_internal::kConvGradientRule) return std::nullopt;
  absl::StatusOr<std::pair<UOpPtr, UOpPtr>> grads = tensor_internal::ConvGradients(ret.uop(), ctx.uop());
  if (!grads.ok()) return Grads(ctx, ctx.Built(grads.status()), None());
  auto or_none = [&](const UOpPtr& g) { return g ? ctx.Built(g) : None(); };
  return Grads(ctx, or_none(grads->first), or_none(grads->second));
}

// MULTI: the gradient sharded as the op is, each shard's to its source (UOp.shard).
std::optional<GradientList> MultiGradient(const GradientExpr& ctx, const GradientExpr& ret) {
  std::optional<int64_t> axis;
  if (ret.arg().is_int()) axis = ret.arg().as_int();
  std::vector<std::string> devices;
  for (const UOpPtr& s : ret.uop()->src()) devices.push_back(DeviceOf(s.get()));
  absl::StatusOr<UOpPtr> sharded = tensor_internal::ShardUOp(ctx.uop(), devices, axis, ctx.shapes());
  GradientList grads;
  for (size_t i = 0; i < devices.size(); ++i) {
    grads.push_back(sharded.ok() ? ctx.Built((*sharded)->src()[i]) : ctx.Built(sharded.status()));
  }
  return grads;
}

// An all-reduce's COPY: each process's output sums every process's input, so each input's gradient sums
// every process's output gradient. A plain copy has no rule (as in tinygrad).
std::optional<GradientList> AllReduceGradient(const GradientExpr& ctx, const GradientExpr& ret) {
  std::optional<AllReduceSpec> spec = AllReduceOf(ret.arg());
  if (!spec || spec->op != Ops::ADD) return std::nullopt;
  return Grads(ctx.Built(UOp::New(Ops::COPY, ctx.dtype(), {ctx.uop(), ret.uop()->src()[1]}, ret.arg())),
               None());
}

// ctx is the gradient flowing into the op, ret the op.
const PatternMatcher& GradientRules() {
  static const PatternMatcher* rules = new PatternMatcher({
      GradientRule({Ops::CAST}, [](auto ctx, auto ret) { return Grads(ctx.Cast(ret.src(0).dtype())); }),
      GradientRule({Ops::RECIP}, [](auto ctx, auto ret) { return Grads(-ctx * ret * ret); }),
      GradientRule({Ops::SIN}, [](auto ctx, auto ret) { return Grads((kPi / 2 - ret.src(0)).Sin() * ctx); }),
      GradientRule({Ops::LOG2}, [](auto ctx, auto ret) { return Grads(ctx / (ret.src(0) * kLn2)); }),
      GradientRule({Ops::EXP2}, [](auto ctx, auto ret) { return Grads(ret * ctx * kLn2); }),
      GradientRule({Ops::SQRT}, [](auto ctx, auto ret) { return Grads(ctx / (ret * 2)); }),
      // comparisons are flat: no gradient
      GradientRule({Ops::CMPLT, Ops::CMPNE}, [](auto, auto) { return Grads(None(), None()); }),
      GradientRule({Ops::ADD}, [](auto ctx, auto) { return Grads(ctx, ctx); }),
      // d(x^y)/dx = y x^(y-1) (y where x = y = 0); d(x^y)/dy = x^y ln x (0 or -inf at x = 0)
      GradientRule({Ops::POW},
                   [](auto ctx, auto ret) {
                     auto x = ret.src(0), y = ret.src(1);
                     return Grads(ctx * (x.Eq(0) & y.Eq(0)).Where(y, y * x.Pow(y - 1)),
                                  ctx * x.Eq(0).Where((y < 0).Where(ret.ConstLike(-kInf), ret.ConstLike(0.0)),
                                                      ret * x.Log2() * kLn2));
                   }),
      // the larger source takes the gradient; equal sources share it
      GradientRule({Ops::MAX},
                   [](auto ctx, auto ret) {
                     auto a = ret.src(0), b = ret.src(1);
                     return Grads((a > b).Where(ctx, (a != b).Where(ctx.ConstLike(0.0), ctx * 0.5)),
                                  (a < b).Where(ctx, (a != b).Where(ctx.ConstLike(0.0), ctx * 0.5)));
                   }),
      GradientRule({Ops::MUL}, [](auto ctx, auto ret) { return Grads(ret.src(1) * ctx, ret.src(0) * ctx); }),
      GradientRule({Ops::WHERE},
                   [](auto ctx, auto ret) {
                     return Grads(None(), ret.src(0).Where(ctx, ctx.ConstLike(0.0)),
                                  ret.src(0).Where(ctx.ConstLike(0.0), ctx));
                   }),
      GradientRule({Ops::REDUCE_AXIS}, [](auto ctx, auto ret) { return ReduceGradient(ctx, ret); }),
      GradientRule({Ops::CONTIGUOUS, Ops::FUSE}, [](auto ctx, auto) { return Grads(ctx); }),
      GradientRule({Ops::CONTIGUOUS_BACKWARD}, [](auto ctx, auto) { return Grads(ctx.Contiguous()); }),
      GradientRule({Ops::CUSTOM_GRADIENT}, [](auto ctx, auto ret) { return CustomGradient(ctx, ret); }),
      // movement ops: the inverse movement
      GradientRule({Ops::RESHAPE}, [](auto ctx, auto ret) { return Grads(ctx.Reshape(ret.src(0).shape())); }),
      GradientRule({Ops::PERMUTE}, [](auto ctx, auto ret) { return Grads(ctx.Permute(ArgSort(ret.arg()))); }),
      GradientRule({Ops::PAD}, [](auto ctx, auto ret) { return Grads(ctx.Shrink(UnpadBounds(ret))); }),
      GradientRule({Ops::SHRINK}, [](auto ctx, auto ret) { return Grads(ctx.Pad(UnshrinkPads(ret))); }),
      GradientRule({Ops::FLIP}, [](auto ctx, auto ret) { return Grads(ctx.Flip(ret.arg())); }),
      // an expand sums the gradient over the expanded axes (in the sum's accumulator dtype)
      GradientRule(
          {Ops::EXPAND},
          [](auto ctx, auto ret) {
            return Grads(
                ctx.Cast(SumAccDType(ctx.dtype())).Reduce(Ops::ADD, ExpandedAxes(ret)).Cast(ctx.dtype()));
          }),
      GradientRule({Ops::MULTI}, [](auto ctx, auto ret) { return MultiGradient(ctx, ret); }),
      GradientRule({Ops::COPY}, [](auto ctx, auto ret) { return AllReduceGradient(ctx, ret); }),
      // a bitcast has no gradient
      GradientRule({Ops::BITCAST}, [](auto, auto) { return Grads(None()); }),
  });
  return *rules;
}

}  // namespace

absl::StatusOr<GradientMap> ComputeGradient(const UOpPtr& root, const UOpPtr& root_grad,
                                            const absl::flat_hash_set<const UOp*>& targets) {
  // The nodes with a target below them; the walk stays on them and does not pass DETACH or ASSIGN.
  absl::flat_hash_map<const UOp*, bool> on_path;
  for (const UOp* u : root->Toposort()) {
    bool p = false;
    for (const UOpPtr& s : u->src()) p = p || targets.contains(s.get()) || on_path[s.get()];
    on_path[u] = p;
  }
  std::vector<const UOp*> walk = root->Toposort(
      [&](const UOp* u) { return u->op() != Ops::DETACH && u->op() != Ops::ASSIGN && on_path.at(u); });
  GradientMap grads;
  grads[root.get()] = root_grad;
  GradientContext context;
  for (auto it = walk.rbegin(); it != walk.rend(); ++it) {
    const UOp* node = *it;
    auto g = grads.find(node);
    if (g == grads.end()) continue;
    context.grad = g->second;
    UOpPtr result = GradientRules().Rewrite(node->ref(), &context);
    if (!context.error.ok()) {
      return absl::Status(context.error.code(),
                          absl::StrCat("the gradient of ", OpName(node->op()), " ", node->dtype().ToString(),
                                       ": ", context.error.message()));
    }
    if (result == nullptr) {
      std::string what(OpName(node->op()));
      if (node->op() == Ops::REDUCE_AXIS)
        absl::StrAppend(&what, " of ", OpName(node->arg().as_tuple()[0].as_op()));
      return absl::InvalidArgumentError(absl::StrCat(
          "no gradient rule for ", what, " (", node->dtype().ToString(), ") on the path to the targets"));
    }
    UOPC_CHECK(result->src().size() == node->src().size(),
               "a gradient rule gave the wrong number of gradients");
    for (size_t i = 0; i < node->src().size(); ++i) {
      const UOpPtr& v = result->src()[i];
      if (v == NoGradient()) continue;
      const UOp* k = node->src()[i].get();
      auto [entry, inserted] = grads.try_emplace(k, v);
      if (!inserted) entry->second = Alu(Ops::ADD, {entry->second, v});
    }
  }
  return grads;
}

}  // namespace uopc
