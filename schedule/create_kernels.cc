// A BUFFER, a KERNEL and an ASSIGN for every node the grouper realized (tinygrad's insert_kernels and
// append_to_kernel in engine/grouper.py). A KERNEL's sources are walked back until only buffers, other
// kernels' ASSIGNs and realized nodes remain: those are the kernel's inputs.
#include <string>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/str_cat.h"
#include "schedule/internal.h"
#include "uop/check.h"

namespace uopc::schedule_internal {

size_t KernelArg::Hash() const { return absl::HashOf(ast_.get()); }

bool KernelArg::Equals(const ArgPayload& other) const {
  const auto* k = dynamic_cast<const KernelArg*>(&other);
  return k != nullptr && k->ast_ == ast_;
}

std::string KernelArg::ToString() const {
  std::string ops;
  if (ast_->op() == Ops::SINK) {
    for (const UOpPtr& s : ast_->src())
      absl::StrAppend(&ops, ops.empty() ? "" : ", ", "Ops.", OpName(s->op()));
    if (ast_->num_src() == 1) ops += ",";
    ops = absl::StrCat("SINK(", ops, ")");
  } else {
    ops = absl::StrCat("Ops.", OpName(ast_->op()));
  }
  return absl::StrCat("<Kernel ", ast_->Toposort().size(), " ", ops, " ()>");
}

const UOpPtr& KernelAst(const UOp* kernel) {
  const KernelArg* k = kernel->arg().payload_as<KernelArg>();
  UOPC_CHECK(k != nullptr, "a KERNEL's arg is a Kernel");
  return k->ast();
}

Arg MakeKernelArg(UOpPtr ast) { return Arg(std::make_shared<KernelArg>(std::move(ast))); }

namespace {

Context& Ctx(const Match& m) { return m.ctx<Context>(); }

inline constexpr OpSet kDontPlaceInKernel{Ops::KERNEL, Ops::ASSIGN, Ops::BUFFER};

// x stored into b (a new buffer when null): ASSIGN(b, KERNEL(b, x's sources)) reshaped to x's shape.
UOpPtr CreateKernel(Context& ctx, const UOpPtr& x, UOpPtr b = nullptr) {
  const ShapeTracker* st = ctx.St(x);
  if (st == nullptr) {
    ctx.Fail(
        absl::InvalidArgumentError(absl::StrCat("cannot realize ", OpName(x->op()), ": it has no shape")));
    return nullptr;
  }
  if (b == nullptr) {
    std::string device = DeviceOf(x.get());
    if (device.empty()) {
      ctx.Fail(
          absl::InvalidArgumentError(absl::StrCat("cannot realize ", OpName(x->op()), ": it has no device")));
      return nullptr;
    }
    b = NewBuffer(device, st->size(), x->dtype().scalar());
  }
  std::vector<UOpPtr> src{b};
  src.insert(src.end(), x->src().begin(), x->src().end());
  UOpPtr kernel = UOp::New(Ops::KERNEL, dtypes::kVoid, src, MakeKernelArg(x.sink()));
  UOpPtr base = BaseOf(b);
  UOpPtr assign = UOp::New(Ops::ASSIGN, x->dtype(), {base, kernel});
  UOpPtr result = assign;
  if (ctx.shapes.Size(b) != ctx.shapes.Size(base)) {
    // A store into a view of a larger buffer (an assign into a shrink of it): the result is that view of
    // the buffer. tinygrad makes it a BUFFER_VIEW, a contiguous run of the buffer's elements from the view's
    // first, which holds the view's elements only when they are contiguous (and has no symbolic offset);
    // docs/parity.md.
    result = ViewOf(assign, *ctx.St(b));
  }
  absl::StatusOr<UOpPtr> out = Reshape(result, st->shape(), ctx.shapes);
  if (!out.ok()) {
    ctx.Fail(out.status());
    return nullptr;
  }
  return *out;
}

}  // namespace

const PatternMatcher& CreateKernels() {
  static const PatternMatcher* const
      pm = new PatternMatcher(MergeViews() + PatternMatcher({
                                                 // ASSIGN and CONTIGUOUS always get a kernel
                                                 {UPat(Ops::ASSIGN)
                                                      .src(UPat::Var("b"), UPat(kAllOps - OpSet{Ops::KERNEL}))
                                                      .named("x"),
                                                  [](const Match& m) {
                                                    return CreateKernel(Ctx(m), m["x"], m["b"]);
                                                  }},
                                                 {UPat(Ops::CONTIGUOUS).named("x"),
                                                  [](const Match& m) {
                                                    return CreateKernel(Ctx(m), m["x"]);
                                                  }},
                                                 // so does a COPY, into a buffer on the new device
                                                 {UPat(Ops::COPY).src(UPat(), UPat(Ops::DEVICE)).named("x"),
                                                  [](const Match& m) {
                                                    return CreateKernel(Ctx(m), m["x"]);
                                                  }},
                                                 // the SINK keeps only what has buffers
                                                 {
                                                     UPat(Ops::SINK).named("x"),
                                                     [](const Match& m) -> UOpPtr {
                                                       const UOpPtr& x = m["x"];
                                                       std::vector<UOpPtr> src;
                                                       absl::flat_hash_set<const UOp*> seen;
                                                       for (const UOpPtr& s : x->src()) {
                                                         if (s->op() == Ops::CONST || s->op() == Ops::BIND)
                                                           continue;
                                                         UOpPtr base = BaseOf(s);
                                                         if (seen.insert(base.get()).second)
                                                           src.push_back(base);
                                                       }
                                                       UOpPtr out = x.replace_src(src);
                                                       return out == x ? nullptr : out;
                                                     }},
                                                 // a realized node gets its kernel
                                                 {UPat(kAllOps - kDontPlaceInKernel).named("x"),
                                                  [](const Match& m) -> UOpPtr {
                                                    if (!Ctx(m).realizes.contains(m["x"])) return nullptr;
                                                    return CreateKernel(Ctx(m), m["x"]);
                                                  }},
                                                 // walk the kernel's sources back to its inputs
                                                 {
                                                     UPat(Ops::KERNEL).named("x"),
                                                     [](const Match& m) -> UOpPtr {
                                                       Context& ctx = Ctx(m);
                                                       const UOpPtr& x = m["x"];
                                                       std::vector<UOpPtr> src;
                                                       absl::flat_hash_set<const UOp*> seen;
                                                       auto add = [&](const UOpPtr& s) {
                                                         if (seen.insert(s.get()).second) src.push_back(s);
                                                       };
                                                       for (const UOpPtr& s : x->src()) {
                                                         if (kDontPlaceInKernel.contains(s->op()) ||
                                                             ctx.realizes.contains(s)) {
                                                           add(s);
                                                         } else {
                                                           for (const UOpPtr& ss : s->src()) add(ss);
                                                         }
                                                       }
                                                       UOpPtr out = x.replace_src(src);
                                                       return out == x ? nullptr : out;
                                                     }},
                                             }));
  return *pm;
}

}  // namespace uopc::schedule_internal
