// Each KERNEL's AST in the form codegen takes (tinygrad's fix_kernel_ast, add_buffer_ops and fix_kernel_ops
// in engine/grouper.py): the other kernels' outputs it reads become views of their buffers, views move to the
// edges, buffers become loads of DEFINE_GLOBALs numbered as the KERNEL's sources, the outputs stores, masked
// constants VALID gates.
#include <vector>

#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "schedule/internal.h"

namespace uopc::schedule_internal {
namespace {

Context& Ctx(const Match& m) { return m.ctx<Context>(); }

int64_t BufIndex(const Context& ctx, const UOp* buf) {
  for (size_t i = 0; i < ctx.bufs.size(); ++i) {
    if (ctx.bufs[i] == buf) return static_cast<int64_t>(i);
  }
  return -1;
}

// x.valid(st): where the view is masked the constant is 0.
UOpPtr Valid(const UOpPtr& x, const ShapeTracker& st) {
  std::vector<Sint> ones(st.shape().size(), Sint(1));
  ShapeTracker unmasked = *ShapeTracker::FromShape({});
  unmasked = *unmasked.Reshape(ones);
  unmasked = *unmasked.Expand(st.shape());
  UOpPtr unmasked_uop = unmasked.ToUOp();
  UOpPtr valid = UOp::New(Ops::VALID, dtypes::kBool, {st.ToUOp()});
  UOpPtr zero = UOp::New(Ops::CONST, x->dtype(), {unmasked_uop}, UOp::Const(x->dtype(), 0)->arg());
  return UOp::New(Ops::WHERE, x->dtype(), {valid, x.replace_src({unmasked_uop}), zero});
}

// The augmented-assign check: a kernel that stores to buffer 0 may read it only through a view that indexes
// it like the store.
UOpPtr CheckLoadSt(const Match& m) {
  const UOpPtr& glbl = m["glbl"];
  if (glbl->op() != Ops::DEFINE_GLOBAL || !glbl->arg().is_int() || glbl->arg().as_int() != 0) return nullptr;
  const UOpPtr& view = m["view"];
  if (view->op() != Ops::VIEW) return nullptr;
  const ShapeTracker& st = ViewSt(view);
  if (st.contiguous()) return nullptr;
  if (st.views().size() == 1) {
    std::vector<SintPair> bounds;
    const View& v = st.views()[0];
    for (size_t i = 0; i < v.shape().size(); ++i) {
      bool zero_stride = v.strides()[i].is_int() && v.strides()[i].value() == 0;
      bounds.push_back({Sint(0), zero_stride ? Sint(1) : v.shape()[i]});
    }
    absl::StatusOr<ShapeTracker> shrunk = st.Shrink(bounds);
    if (shrunk.ok() && shrunk->contiguous()) return nullptr;
    if (v.mask()) {
      std::vector<SintPair> mask(v.mask()->begin(), v.mask()->end());
      absl::StatusOr<ShapeTracker> a = ShapeTracker::FromShape(st.shape())->Shrink(mask);
      absl::StatusOr<ShapeTracker> b = st.Shrink(mask);
      if (a.ok() && b.ok() && *a == *b) return nullptr;
    }
  }
  Ctx(m).Fail(absl::InvalidArgumentError(
      "self operand of augmented assign must be contiguous; consider using .contiguous(): a += a.T -> "
      "a += a.T.contiguous()"));
  return nullptr;
}

const PatternMatcher& AddBufferOps() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // a buffer is a load
      {UPat(Ops::BUFFER).named("x"),
       [](const Match& m) -> UOpPtr {
         Context& ctx = Ctx(m);
         const UOpPtr& x = m["x"];
         int64_t i = BufIndex(ctx, x.get());
         if (i < 0) {
           ctx.Fail(absl::InternalError("a kernel reads a buffer that is not among its sources"));
           return nullptr;
         }
         int64_t size = x->arg().as_int();
         UOpPtr glbl = UOp::New(Ops::DEFINE_GLOBAL, x->dtype().Ptr(size), {}, Arg(i));
         return UOp::New(Ops::LOAD, x->dtype(), {glbl, ShapeTracker::FromShape({Sint(size)})->ToUOp()});
       }},
      // a meta op is its own AST
      {UPat(Ops::SINK).src(UPat(groups::kMeta).named("x")), [](const Match& m) { return m["x"]; }},
      // the outputs are stores
      {UPat(Ops::SINK).src_repeat(UPat(kAllOps - OpSet{Ops::STORE})).named("sink"),
       [](const Match& m) -> UOpPtr {
         Context& ctx = Ctx(m);
         const UOpPtr& sink = m["sink"];
         std::vector<UOpPtr> stores;
         for (size_t i = 0; i < sink->num_src(); ++i) {
           UOpPtr s = BaseOf(sink->src()[i]);
           const ShapeTracker* st = ctx.St(s);
           if (st == nullptr || i >= ctx.bufs.size()) {
             ctx.Fail(absl::InternalError("a kernel output without a shape or a buffer"));
             return nullptr;
           }
           UOpPtr glbl = UOp::New(Ops::DEFINE_GLOBAL, s->dtype().Ptr(ctx.shapes.Size(ctx.bufs[i])), {},
                                  Arg(static_cast<int64_t>(i)));
           stores.push_back(UOp::New(Ops::STORE, dtypes::kVoid, {glbl, st->ToUOp(), s}));
         }
         return UOp::Sink(stores);
       }},
      // an ASSIGN is its value
      {UPat(Ops::ASSIGN).named("x"), [](const Match& m) { return m["x"]->src()[1]; }},
      // a masked constant is a VALID gate
      {UPat({Ops::CONST, Ops::DEFINE_VAR}).named("x").view().named("view"),
       [](const Match& m) { return Valid(m["x"], ViewSt(m["view"])); }},
  });
  return *pm;
}

const PatternMatcher& FixKernelOps() {
  static const PatternMatcher* const pm = new PatternMatcher({
      {UPat(Ops::CONTIGUOUS).src(UPat::Var("x")), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::VIEW).src(UPat(Ops::DEVICE)).named("view"),
       [](const Match& m) { return m["view"].replace_src({}); }},
      {UPat(Ops::LOAD).src(UPat::Var("glbl"), UPat::Var("view")), CheckLoadSt},
  });
  return *pm;
}

UOpPtr FixKernelAst(const Match& m) {
  Context& ctx = Ctx(m);
  const UOpPtr& k = m["k"];
  const UOpPtr& ast = KernelAst(k.get());
  if (groups::kMeta.contains(ast->op())) return nullptr;
  bool all_stores = true;
  for (const UOpPtr& s : ast->src()) all_stores = all_stores && s->op() == Ops::STORE;
  if (all_stores) return nullptr;
  // the outputs of other kernels this one reads are views of their buffers
  UOpMap parents_rep;
  std::vector<UOpPtr> bufs;
  for (const UOpPtr& s : k->src()) {
    if (s->op() == Ops::ASSIGN) {
      UOpPtr buf = BaseOf(s->src()[0]);
      for (const UOpPtr& out : KernelAst(s->src(1))->src()) {
        const ShapeTracker* st = ctx.St(out);
        if (st == nullptr) continue;
        parents_rep[out.get()] = ViewOf(buf, *st);
      }
      parents_rep[s.get()] = buf;
      bufs.push_back(buf);
    } else {
      bufs.push_back(s->op() == Ops::BUFFER ? s : BaseOf(s));
    }
  }
  UOpPtr out = Substitute(ast, parents_rep, "replace realized");
  RewriteOptions options;
  options.ctx = &ctx;
  options.name = "Main View Left";
  absl::StatusOr<UOpPtr> step = TryGraphRewrite(out, ViewLeft(), options);
  options.name = "Main View Right";
  if (step.ok()) step = TryGraphRewrite(*step, ViewRight(), options);
  std::vector<UOpPtr> saved_bufs = std::move(ctx.bufs);
  ctx.bufs = bufs;
  if (step.ok()) {
    RewriteOptions bottom_up = options;
    bottom_up.bottom_up = true;
    bottom_up.name = "replace buffer";
    static const PatternMatcher* const pm =
        new PatternMatcher(MergeViews() + AddBufferOps() + FixKernelOps());
    step = TryGraphRewrite(*step, *pm, bottom_up);
  }
  ctx.bufs = std::move(saved_bufs);
  if (!step.ok()) {
    ctx.Fail(step.status());
    return nullptr;
  }
  if ((*step)->op() == Ops::SINK) {
    std::string device;
    for (const UOpPtr& b : bufs) {
      std::string d = DeviceOf(b.get());
      if (device.empty()) device = d;
      if (d != device) {
        ctx.Fail(absl::InvalidArgumentError(
            absl::StrCat("all buffers of a kernel must be on the same device: ", device, " and ", d)));
        return nullptr;
      }
    }
  }
  return k.replace_arg(MakeKernelArg(*step));
}

}  // namespace

const PatternMatcher& CreateAst() {
  static const PatternMatcher* const pm = new PatternMatcher({{UPat(Ops::KERNEL).named("k"), FixKernelAst}});
  return *pm;
}

}  // namespace uopc::schedule_internal
