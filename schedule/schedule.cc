// The scheduler's driver (tinygrad's get_becomes_map in engine/grouper.py and create_schedule_with_vars in
// engine/schedule.py): simplify, group, create kernels and their ASTs, then order the kernels.
#include "schedule/schedule.h"

#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/rewrite_recorder.h"
#include "schedule/internal.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using schedule_internal::Context;
using schedule_internal::KernelAst;

const UOp* BufUop(const UOp* u) { return u->op() == Ops::BUFFER ? u : BaseOf(u->src(0)); }

// Views simplified and variables unbound (tinygrad's pm_unbind).
struct UnbindContext {
  std::vector<std::pair<UOpPtr, int64_t>>* var_vals;
};

const PatternMatcher& Unbind() {
  static const PatternMatcher* const pm = new PatternMatcher({
      {UPat(Ops::VIEW).named("x"),
       [](const Match& m) -> UOpPtr {
         const ShapeTracker& st = schedule_internal::ViewSt(m["x"]);
         ShapeTracker simple = st.Simplify();
         if (!simple.Vars().empty()) {
           auto [unbound, vals] = simple.Unbind();
           for (const auto& [var, val] : vals) m.ctx<UnbindContext>().var_vals->emplace_back(var, val);
           simple = unbound;
         }
         if (simple == st) return nullptr;
         return m["x"].replace_arg(Arg(std::make_shared<ShapeTrackerArg>(simple)));
       }},
      {UPat(Ops::BIND).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& x = m["x"];
         if (x->num_src() != 2 || x->src(1)->op() != Ops::CONST) return nullptr;
         UOpPtr var = x->src()[0].replace_src({});
         m.ctx<UnbindContext>().var_vals->emplace_back(var, x->src(1)->const_value().AsInt64());
         return var;
       }},
  });
  return *pm;
}

}  // namespace

absl::StatusOr<Schedule> CreateSchedule(const UOpPtr& big_sink, const ScheduleOptions& options) {
  RewriteGroupScope viz_group("schedule");  // VIZ: the scheduler's rewrites as one group
  if (big_sink == nullptr || big_sink->op() != Ops::SINK) {
    return absl::InvalidArgumentError("CreateSchedule takes the SINK of the tensors to realize");
  }
  Context ctx;
  // A graph whose shapes do not fit (a bad reshape, sources of different shapes, an axis out of range) is an
  // error naming the node, before any pass relies on its shapes.
  for (const UOp* u : big_sink->Toposort()) {
    if (absl::StatusOr<const ShapeTracker*> st = ctx.shapes.TrySt(u->ref()); !st.ok()) return st.status();
  }
  RewriteOptions rw;
  rw.ctx = &ctx;
  rw.name = "merge_views";
  static const PatternMatcher* const simplify =
      new PatternMatcher(schedule_internal::MergeViews() + schedule_internal::ScheduleSym() +
                         schedule_internal::ReplaceContiguous());
  UOPC_ASSIGN_OR_RETURN(UOpMap tensor_map, TryGraphRewriteMap(big_sink, *simplify, rw));
  UOPC_RETURN_IF_ERROR(ctx.error);
  // The input map keeps the simplified graph's nodes alive only through its values; hold them.
  UOpPtr simplified = tensor_map.at(big_sink.get());

  UOPC_RETURN_IF_ERROR(schedule_internal::GroupRealizes(simplified, ctx));

  rw.bottom_up = true;
  rw.name = "create_kernels";
  UOPC_ASSIGN_OR_RETURN(UOpMap kernel_map,
                        TryGraphRewriteMap(simplified, schedule_internal::CreateKernels(), rw, &tensor_map));
  UOPC_RETURN_IF_ERROR(ctx.error);
  UOpPtr kernel_graph = kernel_map.at(big_sink.get());

  // A kernel that reads a buffer later assigned to runs before that assign.
  absl::flat_hash_map<const UOp*, UOpPtr> kernel_assign;
  UOpMap assign_rep;
  for (const UOp* u : kernel_graph->Toposort()) {
    if (u->op() != Ops::ASSIGN) continue;
    kernel_assign[BufUop(u)] = u->ref();
    for (const UOpPtr& s : u->src(1)->src()) {
      if (s->op() != Ops::BUFFER || s.get() == BufUop(u)) continue;
      auto it = kernel_assign.find(s.get());
      if (it == kernel_assign.end()) continue;
      for (const UOp* x : u->Toposort()) {
        if (x->op() == Ops::ASSIGN && BufUop(x) == s.get()) {
          return absl::InvalidArgumentError(
              "cycle detected in graph: a kernel must depend on either the ASSIGN "
              "or the BUFFER of one buffer");
        }
      }
      UOpPtr a = it->second;
      std::vector<UOpPtr> src(a->src().begin(), a->src().end());
      src.push_back(u->ref());
      UOpPtr replaced = a.replace_src(src);
      assign_rep[a.get()] = replaced;
      it->second = replaced;
    }
  }
  if (!assign_rep.empty()) {
    UOpPtr fixed = Substitute(kernel_graph, assign_rep);
    // Every node maps through the substitution.
    for (auto& [k, v] : kernel_map) v = Substitute(v, assign_rep);
    kernel_graph = fixed;
  }

  rw.name = "create_ast";
  UOPC_ASSIGN_OR_RETURN(UOpMap ast_map,
                        TryGraphRewriteMap(kernel_graph, schedule_internal::CreateAst(), rw, &kernel_map));
  UOPC_RETURN_IF_ERROR(ctx.error);
  UOpPtr sched_sink = ast_map.at(big_sink.get());

  // The kernels in BFS order of the kernel graph.
  std::vector<const UOp*> kernels;
  absl::flat_hash_map<const UOp*, int> in_degree;
  absl::flat_hash_map<const UOp*, std::vector<const UOp*>> children;
  std::vector<const UOp*> sched_topo = sched_sink->Toposort();
  for (const UOp* u : sched_topo) {
    if (u->op() != Ops::ASSIGN) continue;
    const UOp* k = u->src(1);
    if (k->op() != Ops::KERNEL) return absl::InternalError("an ASSIGN without a KERNEL after scheduling");
    if (in_degree.emplace(k, 0).second) kernels.push_back(k);
    for (const UOpPtr& s : k->src()) {
      if (s->op() != Ops::ASSIGN) continue;
      children[s->src(1)].push_back(k);
      in_degree[k] += 1;
    }
  }
  std::deque<const UOp*> queue;
  for (const UOp* k : kernels) {
    if (in_degree[k] == 0) queue.push_back(k);
  }
  Schedule schedule;
  schedule.input = big_sink;
  while (!queue.empty()) {
    const UOp* k = queue.front();
    queue.pop_front();
    UnbindContext unbind{&schedule.var_vals};
    RewriteOptions uo;
    uo.ctx = &unbind;
    UOPC_ASSIGN_OR_RETURN(UOpPtr ast, TryGraphRewrite(KernelAst(k), Unbind(), uo));
    ScheduleItem item;
    item.ast = ast;
    for (const UOpPtr& s : k->src()) item.bufs.push_back(BufUop(s.get())->ref());
    schedule.items.push_back(std::move(item));
    for (const UOp* x : children[k]) {
      if (--in_degree[x] == 0) queue.push_back(x);
    }
  }
  if (schedule.items.size() != kernels.size()) {
    return absl::InternalError(absl::StrCat("schedule length mismatch: ", schedule.items.size(), " of ",
                                            kernels.size(), " kernels ordered (a cycle)"));
  }

  // What each tensor node becomes: its buffer (or a view of it) or a constant. As tinygrad applies its two
  // becomes maps to the tensors, every node that changed into a kernel's output (or a constant) is replaced,
  // then every ASSIGN by its buffer.
  UOpMap replacements;
  auto becomes = [&](const UOpPtr& v) {
    const UOp* base = BaseOf(v.get());
    if (base->op() == Ops::BUFFER || base->op() == Ops::ASSIGN) return true;
    if (base->op() != Ops::CONST) return false;
    const ShapeTracker* st = ctx.St(v);
    if (st == nullptr) return false;
    for (const Sint& s : st->shape()) {
      if (!s.is_int()) return false;
    }
    return true;
  };
  for (const auto& [k, v] : ast_map) {
    if (k != v.get() && becomes(v)) replacements[k] = v;
  }
  for (const UOp* u : sched_topo) {
    if (u->op() == Ops::ASSIGN) replacements[u] = BufUop(u)->ref();
  }
  std::vector<const UOp*> changed;
  std::vector<UOpPtr> values;
  absl::flat_hash_set<const UOp*> protected_bufs;
  for (const UOp* u : big_sink->Toposort()) {
    if (u->op() == Ops::BUFFER) protected_bufs.insert(u);
    auto it = ast_map.find(u);
    if (it == ast_map.end() || it->second.get() == u || !becomes(it->second)) continue;
    changed.push_back(u);
    values.push_back(it->second);
  }
  if (!values.empty()) {
    UOpPtr substituted = Substitute(UOp::Sink(values), replacements);
    for (size_t i = 0; i < changed.size(); ++i) schedule.becomes_map[changed[i]] = substituted->src()[i];
  }
  if (options.plan_memory) {
    // A buffer a tensor can reach after the schedule keeps its own memory; so do inputs and copies' buffers.
    for (const auto& [k, v] : schedule.becomes_map) {
      if (options.live_nodes != nullptr && !options.live_nodes->contains(k)) continue;
      for (const UOp* x : v->Toposort()) {
        if (x->op() == Ops::BUFFER) protected_bufs.insert(x);
      }
    }
    for (const UOpPtr& s : big_sink->src()) {
      auto it = schedule.becomes_map.find(s.get());
      if (it == schedule.becomes_map.end()) continue;
      for (const UOp* x : it->second->Toposort()) {
        if (x->op() == Ops::BUFFER) protected_bufs.insert(x);
      }
    }
    for (const ScheduleItem& item : schedule.items) {
      if (item.ast->op() == Ops::SINK) continue;
      for (const UOpPtr& b : item.bufs) protected_bufs.insert(b.get());
    }
    absl::flat_hash_map<const UOp*, UOpPtr> replace =
        schedule_internal::PlanMemory(schedule.items, protected_bufs);
    for (ScheduleItem& item : schedule.items) {
      for (UOpPtr& b : item.bufs) {
        if (auto it = replace.find(b.get()); it != replace.end()) b = it->second;
      }
    }
  }
  return schedule;
}

}  // namespace uopc
