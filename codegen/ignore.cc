#include "codegen/ignore.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
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
  // Every IGNORE the rules meet pairs a node of the input graph with one of its masks (a rule builds
  // IGNORE(x, mask) only for the sources x of a node of the input), and each is rewritten once, by one rule:
  // the graph's nodes times its masks, plus the IGNOREs of the input (typed void, unlike the ones the rules
  // build), bound the rule applications. Past that the rules loop.
  const std::vector<const UOp*> nodes = sink->Toposort();
  absl::flat_hash_set<const UOp*> masks;
  for (const UOp* u : nodes) {
    if (u->op() == Ops::IGNORE && u->num_src() == 2) masks.insert(u->src(1));
  }
  // The rules build the same IGNORE(x, mask) from every node above x, so x's IGNORE must be rewritten once
  // per call, as in tinygrad: without a context, graph_rewrite drops a node a rule built once its rewrite is
  // known, and rewrites an equal node built later again, here once per path from the store to x (THREEFRY's
  // rounds under a padded store have billions). With a context it keeps them until the call returns.
  int keep_built_nodes = 0;
  return TryGraphRewrite(sink, PmMoveIgnore(),
                         {.ctx = &keep_built_nodes,
                          .max_steps = static_cast<int64_t>(nodes.size() * (masks.size() + 1)),
                          .name = "move_ignore"});
}

}  // namespace uopc
