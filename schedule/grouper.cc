// Which nodes of the simplified tensor graph become kernel outputs (tinygrad's do_realize and group_realizes
// in engine/grouper.py). Every SINK source, ASSIGN, CONTIGUOUS and COPY is realized; so is a node read
// through an expanding view or a masked view it cannot be padded through; and each reduction is fused with
// the elementwise ops after it while they read it contiguously and no other reduction comes between, else it
// (or the contiguous chain after it) is realized on its own.
#include <deque>
#include <functional>
#include <vector>

#include "schedule/internal.h"

namespace uopc::schedule_internal {
namespace {

// Children of each base, in the order the toposort meets them.
class Children {
 public:
  void Add(const UOp* parent, const UOp* child) {
    Entry& e = map_[parent];
    if (e.set.insert(child).second) e.list.push_back(child);
  }
  const std::vector<const UOp*>& Of(const UOp* u) const {
    static const std::vector<const UOp*> kNone;
    auto it = map_.find(u);
    return it == map_.end() ? kNone : it->second.list;
  }

 private:
  struct Entry {
    std::vector<const UOp*> list;
    absl::flat_hash_set<const UOp*> set;
  };
  absl::flat_hash_map<const UOp*, Entry> map_;
};

// Whether padding can be pushed through u: no unsafe-pad op before a realized node (tinygrad's can_pad).
bool CanPad(const UOp* root, const absl::flat_hash_set<UOpPtr>& realizes) {
  absl::flat_hash_set<const UOp*> seen;
  std::vector<const UOp*> stack{root};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (groups::kUnsafePad.contains(u->op())) return false;
    if (realizes.contains(u->ref()) || !seen.insert(u).second) continue;
    for (const UOpPtr& s : u->src()) stack.push_back(BaseOf(s.get()));
  }
  return true;
}

void Realize(Context& ctx, const UOp* u) { ctx.realizes.insert(u->ref()); }

void RealizeBeforeView(Context& ctx, const UOp* view, const UOp* tr) {
  const ShapeTracker& st = ViewSt(view);
  bool masked = false;
  for (const View& v : st.views()) masked = masked || v.mask().has_value();
  // a masked view of something padding cannot go through
  if (masked && !CanPad(tr, ctx.realizes)) return Realize(ctx, tr);
  const ShapeTracker* trst = ctx.St(tr->ref());
  if (trst == nullptr) return;
  // simple pads fold
  if (st.views().size() == 1 && st.views().back().mask()) {
    bool all_int = true;
    for (const Sint& s : trst->shape()) all_int = all_int && s.is_int();
    int64_t masked_size = 1;
    for (const SintPair& p : *st.views().back().mask()) masked_size *= (p.second - p.first).vmax();
    if (all_int && Prod(trst->shape()) >= masked_size) return;
  }
  // realize before an expand
  if (Prod(trst->shape()) < Prod(st.shape())) Realize(ctx, tr);
}

// The ShapeTrackers through which `tr_next` reads `tr`, deduplicated in order.
std::vector<ShapeTracker> ReadsOf(Context& ctx, const UOp* tr_next, const UOp* tr) {
  std::vector<ShapeTracker> sts;
  for (const UOpPtr& x : tr_next->src()) {
    if (BaseOf(x.get()) != tr) continue;
    const ShapeTracker* st = ctx.St(x);
    if (st == nullptr) continue;
    if (std::find(sts.begin(), sts.end(), *st) == sts.end()) sts.push_back(*st);
  }
  return sts;
}

struct GroupState {
  Context& ctx;
  const Children& children;
  absl::flat_hash_map<const UOp*, const UOp*>& reduce_for_op;
  std::vector<const UOp*> group;
  absl::flat_hash_set<const UOp*> in_group;
  absl::flat_hash_set<std::pair<const UOp*, ShapeTracker>> cache;

  void Add(const UOp* u) {
    if (in_group.insert(u).second) group.push_back(u);
  }
};

void RecursiveGroup(GroupState& g, const UOp* tr, const ShapeTracker& st, const UOp* r) {
  if (!g.cache.insert({tr, st}).second) return;
  const int64_t rsize = g.ctx.St(r->ref())->size();
  if (g.ctx.realizes.contains(tr->ref()) && tr != r) {
    // only contiguous reads fuse, and one reduction per kernel
    if (!st.contiguous() || st.size() != rsize || g.reduce_for_op.contains(tr)) g.Add(r);
    return g.Add(tr);
  }
  for (const UOp* tr_next : g.children.Of(tr)) {
    if (tr_next->op() == Ops::REDUCE_AXIS) return g.Add(r);
    std::vector<ShapeTracker> reads = ReadsOf(g.ctx, tr_next, tr);
    if (reads.size() != 1) return g.Add(r);
    RecursiveGroup(g, tr_next, st.Compose(reads[0]), r);
  }
}

}  // namespace

absl::Status GroupRealizes(const UOpPtr& sink, Context& ctx) {
  const std::vector<const UOp*> toposort = sink->Toposort();
  // do_realize
  for (const UOp* u : toposort) {
    switch (u->op()) {
      case Ops::SINK:
        for (const UOpPtr& x : u->src()) {
          const UOp* base = BaseOf(x.get());
          if (!kAlwaysContiguous.contains(base->op())) Realize(ctx, base);
        }
        break;
      case Ops::ASSIGN:
      case Ops::CONTIGUOUS:
      case Ops::BUFFER_VIEW:
        Realize(ctx, u);
        break;
      case Ops::COPY:
        Realize(ctx, u);
        if (u->num_src() >= 1 && !kAlwaysContiguous.contains(u->src(0)->op())) Realize(ctx, u->src(0));
        break;
      case Ops::VIEW:
        if (u->num_src() == 1 && !kAlwaysContiguous.contains(u->src(0)->op())) {
          RealizeBeforeView(ctx, u, u->src(0));
        }
        break;
      default:
        break;
    }
  }

  // children of bases
  Children children;
  absl::flat_hash_set<const UOp*> assigns;
  for (const UOp* u : toposort) {
    if (u->op() == Ops::VIEW || u->op() == Ops::SINK) continue;
    if (u->op() == Ops::ASSIGN) assigns.insert(BufferOf(u));
    for (const UOpPtr& s : u->src()) children.Add(BaseOf(s.get()), u);
  }

  // pair each reduction with the elementwise ops after it; realize what cannot be paired
  absl::flat_hash_map<const UOp*, const UOp*> reduce_for_op;
  for (const UOp* r : toposort) {
    if (r->op() != Ops::REDUCE_AXIS) continue;
    if (r->arg().as_tuple().size() == 3 && r->arg()[2].is_bool() && r->arg()[2].as_bool()) continue;
    if (ctx.realizes.contains(r->ref())) continue;
    const ShapeTracker* rst = ctx.St(r->ref());
    if (rst == nullptr) return absl::InvalidArgumentError("a REDUCE_AXIS without a shape");
    GroupState g{ctx, children, reduce_for_op, {}, {}, {}};
    RecursiveGroup(g, r, *rst, r);
    bool can_chase = true;
    for (const UOp* tr : g.group) can_chase = can_chase && !reduce_for_op.contains(tr);
    bool forced_realize = g.in_group.contains(r);
    // one output per kernel
    if (!forced_realize && g.group.size() > 1) forced_realize = true;
    // an ASSIGN fuses only when no other assigned buffer is read in the kernel
    if (!forced_realize) {
      absl::flat_hash_set<const UOp*> assign_targets;
      for (const UOp* x : g.group) {
        if (x->op() == Ops::ASSIGN) assign_targets.insert(BufferOf(x));
      }
      if (!assign_targets.empty()) {
        std::deque<const UOp*> parents{r};
        parents.insert(parents.end(), g.group.begin(), g.group.end());
        while (!parents.empty() && !forced_realize) {
          const UOp* p = BaseOf(parents.back());
          parents.pop_back();
          if (p->op() == Ops::BUFFER && assigns.contains(p) && !assign_targets.contains(p)) {
            forced_realize = true;
            can_chase = false;
          }
          if (ctx.realizes.contains(p->ref())) continue;
          for (const UOpPtr& s : p->src()) parents.push_back(s.get());
        }
      }
    }
    if (forced_realize || g.group.empty()) {
      const UOp* tr = r;
      if (can_chase) {
        // chase down to a contiguous child
        ShapeTracker st = *rst;
        while (children.Of(tr).size() == 1) {
          const UOp* tr_next = children.Of(tr)[0];
          std::vector<ShapeTracker> reads = ReadsOf(ctx, tr_next, tr);
          if (reads.size() != 1) break;
          if (st.size() != reads[0].size()) break;
          st = st.Compose(reads[0]);
          if (!st.contiguous() || tr_next->op() == Ops::REDUCE_AXIS) break;
          tr = tr_next;
        }
        // don't widen before the store
        if (tr->op() == Ops::CAST && tr->dtype().itemsize() > tr->src(0)->dtype().itemsize()) {
          tr = BaseOf(tr->src(0));
        }
      }
      g.group = {tr};
      Realize(ctx, tr);
    }
    for (const UOp* tr : g.group) reduce_for_op[tr] = r;
  }
  return absl::OkStatus();
}

}  // namespace uopc::schedule_internal
