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
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/upat.h"
#include "schedule/tensor_uop.h"

namespace uopc {
namespace {

using Dims = std::vector<int64_t>;

constexpr double kLn2 = 0.6931471805599453;  // math.log(2)
constexpr double kPi = 3.141592653589793;

// What the rules share: the node shapes they need, and the first error a builder met (a movement op the
// shapes reject cannot happen for a well-formed forward graph, but must not crash if it does).
struct GradientContext {
  UOpPtr grad;  // the gradient flowing into the node (tinygrad's ctx)
  TensorShapes shapes;
  absl::Status error;
};

// A node with the context, so the rules read like the calculus (`-ctx * ret * ret`). A null node is
// tinygrad's None: no gradient for that source.
class V {
 public:
  V(UOpPtr u, GradientContext* c) : u_(std::move(u)), c_(c) {}
  static V None() { return V(nullptr, nullptr); }
  const UOpPtr& uop() const { return u_; }
  V src(int i) const { return Wrap(u_->src()[i]); }
  const Arg& arg() const { return u_->arg(); }
  DType dtype() const { return u_->dtype(); }
  Dims shape() const {
    Dims out;
    absl::StatusOr<const ShapeTracker*> st = c_->shapes.TrySt(u_);
    if (!st.ok() || *st == nullptr) {
      Fail(st.ok() ? absl::InvalidArgumentError(absl::StrCat(OpName(u_->op()), " has no shape"))
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
  V Like(ConstValue value) const { return Wrap(ConstLike(u_, value, c_->shapes)); }
  V Like(double value) const { return Like(ConstValue::Float(value)); }

  V Alu(Ops op, std::initializer_list<V> more) const {
    std::vector<UOpPtr> src = {u_};
    for (const V& v : more) src.push_back(v.u_);
    return Wrap(uopc::Alu(op, src));
  }
  V Cast(DType dtype) const { return Wrap(CastTo(u_, dtype)); }
  V Recip() const { return Alu(Ops::RECIP, {}); }
  V Sin() const { return Alu(Ops::SIN, {}); }
  V Log2() const { return Alu(Ops::LOG2, {}); }
  V Pow(const V& x) const { return Alu(Ops::POW, {x}); }
  V Contiguous() const { return Alu(Ops::CONTIGUOUS, {}); }
  V Ne(const V& x) const { return Alu(Ops::CMPNE, {x}); }
  V Ne(ConstValue x) const { return Ne(Like(x)); }
  V LogicalNot() const { return Ne(ConstValue::Bool(true)); }
  V Eq(double x) const { return Ne(Like(x)).LogicalNot(); }
  // self ? x : y
  V Where(const V& x, const V& y) const { return Alu(Ops::WHERE, {x, y}); }

  V Reshape(const Dims& shape) const { return Move(uopc::Reshape(u_, shape, c_->shapes)); }
  V Expand(const Dims& shape) const { return Move(uopc::Expand(u_, shape, c_->shapes)); }
  V Permute(const Dims& order) const { return Move(uopc::Permute(u_, order, c_->shapes)); }
  V Pad(const std::vector<std::pair<int64_t, int64_t>>& pads) const {
    return Move(uopc::Pad(u_, pads, c_->shapes));
  }
  V Shrink(const std::vector<std::pair<int64_t, int64_t>>& bounds) const {
    return Move(uopc::Shrink(u_, bounds, c_->shapes));
  }
  V Flip(const Arg& flips) const { return Move(MovementOp(u_, Ops::FLIP, flips, c_->shapes)); }
  // UOp.r: a reduction over the axes of size other than 1.
  V R(Ops op, const Dims& axes) const { return Wrap(ReduceAxis(u_, op, axes, c_->shapes)); }

  friend V operator+(const V& a, const V& b) { return a.Alu(Ops::ADD, {b}); }
  friend V operator*(const V& a, const V& b) { return a.Alu(Ops::MUL, {b}); }
  friend V operator*(const V& a, double b) { return a * a.Like(b); }
  // UOp.neg: x * -1, or logical not for bools.
  friend V operator-(const V& a) {
    return a.dtype().scalar() == dtypes::kBool ? a.LogicalNot() : a * a.Like(ConstValue::Int(-1));
  }
  friend V operator-(const V& a, double b) { return a + a.Like(-b); }
  friend V operator-(double a, const V& b) { return b.Like(a) + -b; }
  friend V operator/(const V& a, const V& b) { return a * b.Recip(); }
  friend V operator<(const V& a, const V& b) { return a.Alu(Ops::CMPLT, {b}); }
  friend V operator<(const V& a, double b) { return a < a.Like(b); }
  friend V operator>(const V& a, const V& b) { return b < a; }
  friend V operator!=(const V& a, const V& b) { return a.Ne(b); }
  friend V operator&(const V& a, const V& b) { return a.Alu(Ops::AND, {b}); }

 private:
  V Wrap(UOpPtr u) const { return V(std::move(u), c_); }
  V Move(absl::StatusOr<UOpPtr> u) const {
    if (!u.ok()) {
      Fail(u.status());
      return *this;
    }
    return Wrap(*std::move(u));
  }
  void Fail(absl::Status s) const {
    if (c_->error.ok()) c_->error = std::move(s);
  }
  UOpPtr u_;
  GradientContext* c_;
};

// What a rule returns: one gradient per source of the op (NOOP for none), under a SINK.
const UOpPtr& NoGradient() {
  static const UOpPtr* none = new UOpPtr(UOp::New(Ops::NOOP));
  return *none;
}
UOpPtr Grads(std::initializer_list<V> grads) {
  std::vector<UOpPtr> src;
  for (const V& g : grads) src.push_back(g.uop() ? g.uop() : NoGradient());
  return UOp::New(Ops::SINK, dtypes::kVoid, src);
}

// The gradient flowing in and the op itself.
std::pair<V, V> CtxRet(const Match& m) {
  GradientContext* c = &m.ctx<GradientContext>();
  return {V(c->grad, c), V(m.root(), c)};
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

// REDUCE_AXIS: a sum spreads the gradient back over the reduced axes; a max gives it to the maxima, split
// evenly among ties; a product gives each element the product of the others.
UOpPtr ReduceGradient(const Match& m) {
  auto [ctx, ret] = CtxRet(m);
  Ops op = ret.arg().as_tuple()[0].as_op();
  Dims axes = Ints(ret.arg().as_tuple()[1]);
  V x = ret.src(0);
  Dims shape = x.shape();
  if (op == Ops::ADD) return Grads({ctx.Expand(shape)});
  if (op == Ops::MAX) {
    V max_is_1s =
        x.Ne(ret.Expand(shape)).Ne(x.Like(ConstValue::Int(1)).Cast(dtypes::kBool)).Cast(ctx.dtype());
    V div = max_is_1s.R(Ops::ADD, axes).Expand(shape);
    return Grads({(max_is_1s / div) * ctx.Expand(shape)});
  }
  if (op == Ops::MUL) return Grads({(ctx * ret).Expand(shape) / x});
  return nullptr;
}

const PatternMatcher& GradientRules() {
  static const PatternMatcher* rules = new PatternMatcher({
      {UPat(Ops::CAST).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx.Cast(ret.src(0).dtype())});
       }},
      {UPat(Ops::RECIP).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({-ctx * ret * ret});
       }},
      {UPat(Ops::SIN).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({(kPi / 2 - ret.src(0)).Sin() * ctx});
       }},
      {UPat(Ops::LOG2).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx / (ret.src(0) * kLn2)});
       }},
      {UPat(Ops::EXP2).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ret * ctx * kLn2});
       }},
      {UPat(Ops::SQRT).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx / (ret * 2)});
       }},
      // comparisons are flat: no gradient
      {UPat({Ops::CMPLT, Ops::CMPNE}),
       [](const Match&) {
         return Grads({V::None(), V::None()});
       }},
      {UPat(Ops::ADD),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx, ctx});
       }},
      // d(x^y)/dx = y x^(y-1) (y where x = y = 0); d(x^y)/dy = x^y ln x (0 or -inf at x = 0)
      {UPat(Ops::POW).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         V x = ret.src(0), y = ret.src(1);
         V dx = (x.Eq(0) & y.Eq(0)).Where(y, y * x.Pow(y - 1));
         V dy =
             x.Eq(0).Where((y < 0).Where(ret.Like(-std::numeric_limits<double>::infinity()), ret.Like(0.0)),
                           ret * x.Log2() * kLn2);
         return Grads({ctx * dx, ctx * dy});
       }},
      // the larger source takes the gradient; equal sources share it
      {UPat(Ops::MAX).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         V a = ret.src(0), b = ret.src(1);
         return Grads({(a > b).Where(ctx, (a != b).Where(ctx.Like(0.0), ctx * 0.5)),
                       (a < b).Where(ctx, (a != b).Where(ctx.Like(0.0), ctx * 0.5))});
       }},
      {UPat(Ops::MUL).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ret.src(1) * ctx, ret.src(0) * ctx});
       }},
      {UPat(Ops::WHERE).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         V cond = ret.src(0);
         return Grads({V::None(), cond.Where(ctx, ctx.Like(0.0)), cond.Where(ctx.Like(0.0), ctx)});
       }},
      {UPat(Ops::REDUCE_AXIS).named("ret"), ReduceGradient},
      {UPat({Ops::CONTIGUOUS, Ops::FUSE}),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx});
       }},
      {UPat(Ops::CONTIGUOUS_BACKWARD),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx.Contiguous()});
       }},
      // movement ops: the inverse movement
      {UPat(Ops::RESHAPE).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx.Reshape(ret.src(0).shape())});
       }},
      {UPat(Ops::PERMUTE).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         Dims order = Ints(ret.arg()), inverse(order.size());
         std::iota(inverse.begin(), inverse.end(), 0);
         std::sort(inverse.begin(), inverse.end(), [&](int64_t a, int64_t b) { return order[a] < order[b]; });
         return Grads({ctx.Permute(inverse)});
       }},
      {UPat(Ops::PAD).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         Dims shape = ret.src(0).shape();
         std::vector<std::pair<int64_t, int64_t>> pads = Pairs(ret.arg()), bounds;
         for (size_t i = 0; i < shape.size() && i < pads.size(); ++i) {
           bounds.emplace_back(pads[i].first, shape[i] + pads[i].first);
         }
         return Grads({ctx.Shrink(bounds)});
       }},
      {UPat(Ops::SHRINK).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         Dims shape = ret.src(0).shape();
         std::vector<std::pair<int64_t, int64_t>> bounds = Pairs(ret.arg()), pads;
         for (size_t i = 0; i < shape.size() && i < bounds.size(); ++i) {
           pads.emplace_back(bounds[i].first, shape[i] - bounds[i].second);
         }
         return Grads({ctx.Pad(pads)});
       }},
      {UPat(Ops::FLIP).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         return Grads({ctx.Flip(ret.arg())});
       }},
      // an expand sums the gradient over the expanded axes (in the sum's accumulator dtype)
      {UPat(Ops::EXPAND).named("ret"),
       [](const Match& m) {
         auto [ctx, ret] = CtxRet(m);
         Dims in = ret.src(0).shape(), out = Ints(ret.arg()), axes;
         for (size_t i = 0; i < in.size() && i < out.size(); ++i) {
           if (in[i] != out[i]) axes.push_back(static_cast<int64_t>(i));
         }
         return Grads({ctx.Cast(SumAccDType(ctx.dtype())).R(Ops::ADD, axes).Cast(ctx.dtype())});
       }},
      // a bitcast has no gradient
      {UPat(Ops::BITCAST), [](const Match&) { return Grads({V::None()}); }},
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
