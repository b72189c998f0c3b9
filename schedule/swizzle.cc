// Movement ops pushed to the edges of a kernel (tinygrad's view_left and view_right in engine/grouper.py): a
// kernel AST may hold VIEWs only right above its loads and constants, so views move towards the inputs
// through elementwise ops (view_left), and through reductions, by rewriting the reduction over a swizzled
// input (view_right).
#include <algorithm>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "schedule/internal.h"
#include "shapetracker/contraction.h"

namespace uopc::schedule_internal {
namespace {

Context& Ctx(const Match& m) { return m.ctx<Context>(); }

std::vector<int64_t> AxisArg(const UOp* r) {
  std::vector<int64_t> axes;
  for (const Arg& a : r->arg()[1].as_tuple()) axes.push_back(a.as_int());
  return axes;
}

bool Contains(absl::Span<const int64_t> v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

Arg ReduceArg(const UOp* r, absl::Span<const int64_t> axes) {
  Arg::Tuple t = r->arg().as_tuple();
  t[1] = Arg::IntTuple(axes);
  return Arg(std::move(t));
}

UOpPtr ApplySwizzle(Context& ctx, const UOpPtr& u) {
  RewriteOptions options;
  options.ctx = &ctx;
  options.name = "Sub View Left";
  absl::StatusOr<UOpPtr> out = TryGraphRewrite(u, ViewLeft(), options);
  if (!out.ok()) {
    ctx.Fail(out.status());
    return u;
  }
  return *out;
}

// Ones added after a reduction go before it.
UOpPtr ReducePushAddOnes(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& src = m["src"];
  const UOpPtr& r = m["r"];
  const ShapeTracker& vst = ViewSt(m["view"]);
  const ShapeTracker* rst = ctx.St(r);
  const ShapeTracker* sst = ctx.St(src);
  if (rst == nullptr || sst == nullptr || !vst.contiguous()) return nullptr;
  // Symbolic sizes compare as expressions (tinygrad's interned UOps).
  const SintVec& rshape = rst->shape();
  const SintVec& vshape = vst.shape();
  if (rshape.size() >= vshape.size()) return nullptr;
  SintVec r_non1, v_non1;
  for (const Sint& d : rshape) {
    if (d != Sint(1)) r_non1.push_back(d);
  }
  for (const Sint& d : vshape) {
    if (d != Sint(1)) v_non1.push_back(d);
  }
  if (r_non1 != v_non1) return nullptr;
  std::vector<int64_t> axes = AxisArg(r);
  std::optional<std::vector<std::vector<int64_t>>> contraction =
      GetContractionWithReduce(vshape, rshape, axes);
  if (!contraction) return nullptr;
  const SintVec& sshape = sst->shape();
  SintVec new_shape;
  std::vector<int64_t> new_axes;
  for (size_t i = 0; i < contraction->size(); ++i) {
    const std::vector<int64_t>& pairs = (*contraction)[i];
    if (Contains(axes, static_cast<int64_t>(i))) {
      for (size_t k = 0; k + 1 < pairs.size(); ++k) new_shape.push_back(Sint(1));
      new_shape.push_back(sshape[i]);
      new_axes.push_back(static_cast<int64_t>(new_shape.size()) - 1);
    } else {
      for (int64_t p : pairs) new_shape.push_back(vshape[p]);
    }
  }
  absl::StatusOr<UOpPtr> reshaped = Reshape(src, new_shape, ctx.shapes);
  if (!reshaped.ok()) return nullptr;
  return UOp::New(Ops::REDUCE_AXIS, r->dtype(), {*reshaped}, ReduceArg(r, new_axes));
}

// A non-contiguous view of a reduction: the reduction over the input viewed so that the view applies to its
// output (tinygrad's swizzle_reduceop).
UOpPtr SwizzleReduceop(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& r = m["r"];
  const UOpPtr& src = m["src"];
  const ShapeTracker& st = ViewSt(m["view"]);
  const ShapeTracker* sst = ctx.St(src);
  if (sst == nullptr) return nullptr;
  if (st.contiguous() && st.size() == ctx.shapes.Size(r)) return nullptr;
  std::vector<int64_t> axes = AxisArg(r);
  const int64_t n = static_cast<int64_t>(sst->shape().size());
  absl::StatusOr<ShapeTracker> input_st = ShapeTracker::FromShape(sst->shape());
  std::vector<int64_t> order;
  for (int64_t i = 0; i < n; ++i) {
    if (!Contains(axes, i)) order.push_back(i);
  }
  order.insert(order.end(), axes.begin(), axes.end());
  absl::StatusOr<ShapeTracker> tmp = input_st->Permute(order);
  if (!tmp.ok()) return nullptr;
  SintVec rshape(tmp->shape().end() - axes.size(), tmp->shape().end());
  Sint prshape = 1;
  for (const Sint& s : rshape) prshape *= s;
  SintVec rstrides = StridesForShape(rshape);
  std::vector<View> nv;
  for (const View& v : st.views()) {
    SintVec shape = v.shape(), strides;
    shape.insert(shape.end(), rshape.begin(), rshape.end());
    for (const Sint& s : v.strides()) strides.push_back(s * prshape);
    strides.insert(strides.end(), rstrides.begin(), rstrides.end());
    std::optional<PairVec> mask;
    if (v.mask()) {
      mask = *v.mask();
      for (const Sint& s : rshape) mask->push_back({Sint(0), s});
    }
    absl::StatusOr<View> view = View::Create(shape, strides, v.offset() * prshape, mask);
    if (!view.ok()) return nullptr;
    nv.push_back(*view);
  }
  ShapeTracker new_input_st = tmp->Compose(ShapeTracker(nv));
  std::vector<int64_t> new_axes;
  for (size_t i = 0; i < axes.size(); ++i) new_axes.push_back(static_cast<int64_t>(st.shape().size() + i));
  UOpPtr viewed =
      src->op() == Ops::VIEW ? ViewOf(src, ViewSt(src).Compose(new_input_st)) : ViewOf(src, new_input_st);
  UOpPtr swizzled = ApplySwizzle(ctx, viewed);
  Arg::Tuple arg{r->arg()[0], Arg::IntTuple(new_axes)};
  UOpPtr red = UOp::New(Ops::REDUCE_AXIS, r->dtype(), {swizzled}, Arg(std::move(arg)));
  return ViewOf(red, *ShapeTracker::FromShape(st.shape()));
}

// A reduction of a reshape: the reshape after the reduction.
UOpPtr ReduceopViewRight(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& src = m["src"];
  const UOpPtr& v = m["v"];
  const UOpPtr& r = m["r"];
  const ShapeTracker& vst = ViewSt(v);
  const ShapeTracker* sst = ctx.St(src);
  const ShapeTracker* rst = ctx.St(r);
  if (sst == nullptr || rst == nullptr) return nullptr;
  if (!vst.contiguous() || vst.size() != sst->size()) {
    ctx.Fail(absl::InternalError(absl::StrCat("can't compute the new reduce axes for a view of shape ",
                                              vst.ToString(), " of ", sst->ToString())));
    return nullptr;
  }
  std::optional<std::vector<std::vector<int64_t>>> contraction =
      GetContraction(absl::MakeConstSpan(vst.shape()), absl::MakeConstSpan(sst->shape()));
  if (!contraction) return nullptr;
  std::vector<int64_t> axes = AxisArg(r), new_axes;
  for (size_t i = 0; i < contraction->size(); ++i) {
    for (int64_t p : (*contraction)[i]) {
      if (Contains(axes, p)) {
        new_axes.push_back(static_cast<int64_t>(i));
        break;
      }
    }
  }
  UOpPtr reduced = ReduceAxis(src, r->arg()[0].as_op(), new_axes, ctx.shapes);
  absl::StatusOr<UOpPtr> out = Reshape(reduced, rst->shape(), ctx.shapes);
  return out.ok() ? *out : nullptr;
}

// Views of an elementwise op's sources move after it.
UOpPtr ElementwiseViewRight(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& root = m["root"];
  std::vector<const UOp*> swizzles;
  for (const UOpPtr& x : root->src()) {
    if (x->op() == Ops::VIEW && !kAlwaysContiguous.contains(BaseOf(x.get())->op()))
      swizzles.push_back(x.get());
  }
  if (swizzles.empty()) return nullptr;
  const UOpPtr base0 = BaseOf(swizzles[0]->ref());
  const int64_t size0 = ctx.shapes.Size(base0);
  for (const UOp* x : swizzles) {
    if (ctx.shapes.Size(BaseOf(x->ref())) != size0) {
      ctx.Fail(absl::InternalError("swizzle inputs must have the same size"));
      return nullptr;
    }
  }
  const ShapeTracker* rst = ctx.St(root);
  if (rst == nullptr) return nullptr;
  ShapeTracker new_st = *ShapeTracker::FromShape(ctx.St(base0)->shape());
  std::vector<UOpPtr> new_src;
  for (const UOpPtr& x : root->src()) {
    UOpPtr base = BaseOf(x);
    const ShapeTracker* bst = ctx.St(base);
    if (bst != nullptr && bst->shape() == new_st.shape()) {
      new_src.push_back(base);
    } else if (x->op() == Ops::VIEW) {
      new_src.push_back(ApplySwizzle(ctx, ViewOf(x, ViewSt(x).Compose(new_st))));
    } else {
      new_src.push_back(ApplySwizzle(ctx, ViewOf(x, new_st)));
    }
  }
  UOpPtr replaced = root.replace_src(new_src);
  absl::StatusOr<UOpPtr> out = Reshape(replaced, rst->shape(), ctx.shapes);
  if (!out.ok()) {
    ctx.Fail(out.status());
    return nullptr;
  }
  return *out == root ? nullptr : *out;
}

}  // namespace

const PatternMatcher& ViewLeft() {
  static const PatternMatcher* const pm = new PatternMatcher(
      MergeViews() +
      PatternMatcher({
          // a masked view does not go above an op padding cannot pass
          {UPat(Ops::VIEW).src(UPat(groups::kUnsafePad).named("e")).named("view"),
           [](const Match& m) -> UOpPtr {
             const ShapeTracker& st = ViewSt(m["view"]);
             for (const View& v : st.views()) {
               if (v.mask()) return ViewOf(Alu(Ops::CONTIGUOUS, {m["e"]}), st);
             }
             return nullptr;
           }},
          // a view of an elementwise op is the op of its sources' views
          {UPat(groups::kALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::BIND}).named("e").view().named("view"),
           [](const Match& m) {
             const UOpPtr& e = m["e"];
             const ShapeTracker& vst = ViewSt(m["view"]);
             std::vector<UOpPtr> src;
             for (const UOpPtr& s : e->src()) {
               src.push_back(s->op() == Ops::VIEW ? ViewOf(s, ViewSt(s).Compose(vst)) : ViewOf(s, vst));
             }
             return e.replace_src(src);
           }},
          {UPat(Ops::VIEW).src(UPat(Ops::REDUCE_AXIS).src(UPat::Var("src")).named("r")).named("view"),
           ReducePushAddOnes},
      }));
  return *pm;
}

const PatternMatcher& ViewRight() {
  static const PatternMatcher* const pm = new PatternMatcher(
      MergeViews() +
      PatternMatcher({
          {UPat(Ops::VIEW).src(UPat(Ops::REDUCE_AXIS).src(UPat::Var("src")).named("r")).named("view"),
           SwizzleReduceop},
          {UPat(Ops::REDUCE_AXIS)
               .src(UPat(Ops::VIEW).src(UPat(kAllOps - kAlwaysContiguous).named("src")).named("v"))
               .named("r"),
           ReduceopViewRight},
          {UPat(kAllOps - OpSet{Ops::SINK}).named("root"), ElementwiseViewRight},
          // two reductions of one op are one (the inverse of the split reduction)
          {UPat(Ops::REDUCE_AXIS).src(UPat(Ops::REDUCE_AXIS).named("r1")).named("r2"),
           [](const Match& m) -> UOpPtr {
             const UOpPtr& r1 = m["r1"];
             const UOpPtr& r2 = m["r2"];
             if (r1->arg()[0].as_op() != r2->arg()[0].as_op()) return nullptr;
             std::vector<int64_t> axes = AxisArg(r2), a1 = AxisArg(r1);
             axes.insert(axes.end(), a1.begin(), a1.end());
             return r1.replace_arg(ReduceArg(r1, axes));
           }},
      }));
  return *pm;
}

}  // namespace uopc::schedule_internal
