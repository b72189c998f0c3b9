#include "codegen/ignore.h"

#include "rewrite/graph_rewrite.h"
#include "rewrite/upat.h"

namespace uopc {

const PatternMatcher& PmStoreIgnore() {
  static const PatternMatcher* const pm = new PatternMatcher({
      {UPat().index(UPat(), UPat::Var("mask")).store({UPat()}).named("store"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& store = m["store"];
         if (store->src(1)->op() == Ops::IGNORE) return nullptr;  // already wrapped
         UOpPtr ignored = UOp::New(Ops::IGNORE, dtypes::kVoid, {store->src()[1], m["mask"]});
         return store.replace_src({store->src()[0], ignored});
       }},
  });
  return *pm;
}

const PatternMatcher& PmMoveIgnore() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // Where the value is the mask itself, every lane that is stored sees `true`.
      {UPat(Ops::IGNORE).src(UPat::Var("x"), UPat::Var("x")),
       [](const Match& m) { return m["x"].const_like(true); }},
      // A constant is the same in every lane.
      {UPat(Ops::IGNORE).src(UPat(OpSet{Ops::CONST, Ops::VCONST}).named("c"), UPat()),
       [](const Match& m) { return m["c"]; }},
      // Push the IGNORE below element-wise ops, onto each operand.
      {UPat(Ops::IGNORE)
           .src(UPat(groups::kALU | OpSet{Ops::CAST, Ops::VECTORIZE}).named("alu"), UPat::Var("mask")),
       [](const Match& m) {
         const UOpPtr& alu = m["alu"];
         UOp::SrcVector src;
         for (const UOpPtr& x : alu->src()) src.push_back(UOp::New(Ops::IGNORE, x->dtype(), {x, m["mask"]}));
         return UOp::WithSources(*alu, std::move(src));
       }},
  });
  return *pm;
}

const PatternMatcher& PmDeleteIgnore() {
  static const PatternMatcher* const pm = new PatternMatcher({
      {UPat(Ops::IGNORE).src(UPat::Var("x"), UPat()), [](const Match& m) { return m["x"]; }},
  });
  return *pm;
}

absl::StatusOr<UOpPtr> RewriteStoreIgnore(const UOpPtr& sink, const Renderer& /*renderer*/) {
  return TryGraphRewrite(sink, PmStoreIgnore(), {.name = "store_ignore"});
}

absl::StatusOr<UOpPtr> RewriteMoveIgnore(const UOpPtr& sink, const Renderer& /*renderer*/) {
  return TryGraphRewrite(sink, PmMoveIgnore(), {.name = "move_ignore"});
}

}  // namespace uopc
