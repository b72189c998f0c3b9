// The scheduler's driver (tinygrad's get_becomes_map in engine/grouper.py and create_schedule_with_vars in
// engine/schedule.py) as a list of steps: check the shapes, simplify (merge_views), group, create kernels,
// order assigns, create the kernels' ASTs, order the kernels, say what each tensor becomes, plan memory. With
// SPEC=1 each step's result is verified before the next one runs.
#include "schedule/schedule.h"

#include <deque>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/rewrite_recorder.h"
#include "schedule/internal.h"
#include "uop/spec.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using schedule_internal::BufferOf;
using schedule_internal::Context;
using schedule_internal::KernelArg;
using schedule_internal::KernelAst;

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
         // The value is the variable, its view kept (codegen reads a DEFINE_VAR's shape from it); the
         // var_vals key is the bare variable, as tinygrad's unbind_bind.
         m.ctx<UnbindContext>().var_vals->emplace_back(x->src()[0].replace_src({}),
                                                       x->src(1)->const_value().AsInt64());
         return x->src()[0];
       }},
  });
  return *pm;
}

// ---- the steps ----

// A graph whose shapes do not fit (a bad reshape, sources of different shapes, an axis out of range) is an
// error naming the node, before any pass relies on its shapes.
absl::Status CheckShapes(ScheduleState& state) {
  for (const UOp* u : state.input->Toposort()) {
    UOPC_RETURN_IF_ERROR(state.ctx->shapes.TrySt(u->ref()).status());
  }
  return absl::OkStatus();
}

// Views merged, the schedule's symbolic rules, CONTIGUOUS of views replaced.
absl::Status MergeViews(ScheduleState& state) {
  static const PatternMatcher* const simplify =
      new PatternMatcher(schedule_internal::MergeViews() + schedule_internal::ScheduleSym() +
                         schedule_internal::ReplaceContiguous());
  RewriteOptions options;
  options.ctx = state.ctx.get();
  options.name = "merge_views";
  UOPC_ASSIGN_OR_RETURN(state.map, TryGraphRewriteMap(state.input, *simplify, options));
  UOPC_RETURN_IF_ERROR(state.ctx->error);
  state.graph = state.map.at(state.input.get());
  return absl::OkStatus();
}

// Which nodes become kernel outputs (ctx.realizes).
absl::Status GroupRealizes(ScheduleState& state) {
  return schedule_internal::GroupRealizes(state.graph, *state.ctx);
}

// A BUFFER, KERNEL and ASSIGN for each output.
absl::Status CreateKernels(ScheduleState& state) {
  RewriteOptions options;
  options.ctx = state.ctx.get();
  options.bottom_up = true;
  options.name = "create_kernels";
  UOPC_ASSIGN_OR_RETURN(UOpMap kernel_map, TryGraphRewriteMap(state.graph, schedule_internal::CreateKernels(),
                                                              options, &state.map));
  UOPC_RETURN_IF_ERROR(state.ctx->error);
  state.map = std::move(kernel_map);
  state.graph = state.map.at(state.input.get());
  return absl::OkStatus();
}

// A kernel that reads a buffer assigned to in the same schedule (its BUFFER: the values before the assign)
// runs before the assign. tinygrad links only the readers that come after the assign in toposort order, so a
// reader that comes first (`b = ~a; a.assign(...); realize(b, a)` with b's kernel waiting on another one)
// could run after the assign and read the new values; every reader is linked here, to the buffer's first
// assign (a later one depends on it).
absl::Status FixAssign(ScheduleState& state) {
  absl::flat_hash_map<const UOp*, UOpPtr> kernel_assign;
  UOpMap assign_rep;
  const std::vector<const UOp*> topo = state.graph->Toposort();
  for (const UOp* u : topo) {
    if (u->op() == Ops::ASSIGN) kernel_assign.emplace(BufferOf(u), u->ref());
  }
  for (const UOp* u : topo) {
    if (u->op() != Ops::ASSIGN) continue;
    for (const UOpPtr& s : u->src(1)->src()) {
      if (s->op() != Ops::BUFFER || s.get() == BufferOf(u)) continue;
      auto it = kernel_assign.find(s.get());
      if (it == kernel_assign.end()) continue;
      for (const UOp* x : u->Toposort()) {
        if (x->op() == Ops::ASSIGN && BufferOf(x) == s.get()) {
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
    UOpPtr fixed = Substitute(state.graph, assign_rep, "fix_assign");
    // Every node maps through the substitution.
    for (auto& [k, v] : state.map) v = Substitute(v, assign_rep, "fix_assign");
    state.graph = fixed;
  }
  return absl::OkStatus();
}

// Each kernel's AST (fix_kernel_ast).
absl::Status CreateAst(ScheduleState& state) {
  RewriteOptions options;
  options.ctx = state.ctx.get();
  options.bottom_up = true;
  options.name = "create_ast";
  UOPC_ASSIGN_OR_RETURN(UOpMap ast_map,
                        TryGraphRewriteMap(state.graph, schedule_internal::CreateAst(), options, &state.map));
  UOPC_RETURN_IF_ERROR(state.ctx->error);
  state.map = std::move(ast_map);
  state.graph = state.map.at(state.input.get());
  return absl::OkStatus();
}

// The kernels in BFS order of the kernel graph, their variables unbound.
absl::Status OrderKernels(ScheduleState& state) {
  std::vector<const UOp*> kernels;
  absl::flat_hash_map<const UOp*, int> in_degree;
  absl::flat_hash_map<const UOp*, std::vector<const UOp*>> children;
  for (const UOp* u : state.graph->Toposort()) {
    if (u->op() != Ops::ASSIGN) continue;
    const UOp* k = u->src(1);
    if (k->op() != Ops::KERNEL) return absl::InternalError("an ASSIGN without a KERNEL after scheduling");
    if (in_degree.emplace(k, 0).second) kernels.push_back(k);
    for (const UOpPtr& s : k->src()) {
      if (s->op() != Ops::ASSIGN) continue;
      children[s->src(1)].push_back(k);
      in_degree[k] += 1;
    }
    // The assigns fix_assign made this one wait for (kernels that read the buffer's old values). tinygrad
    // v0.10.3 orders by the kernel's sources only, so those edges did not order anything there.
    for (size_t i = 2; i < u->num_src(); ++i) {
      const UOp* s = u->src(i);
      if (s->op() != Ops::ASSIGN) continue;
      children[s->src(1)].push_back(k);
      in_degree[k] += 1;
    }
  }
  std::deque<const UOp*> queue;
  for (const UOp* k : kernels) {
    if (in_degree[k] == 0) queue.push_back(k);
  }
  Schedule& schedule = state.schedule;
  while (!queue.empty()) {
    const UOp* k = queue.front();
    queue.pop_front();
    UnbindContext unbind{&schedule.var_vals};
    RewriteOptions unbind_options;
    unbind_options.ctx = &unbind;
    unbind_options.name = "unbind vars";
    UOPC_ASSIGN_OR_RETURN(UOpPtr ast, TryGraphRewrite(KernelAst(k), Unbind(), unbind_options));
    ScheduleItem item;
    item.ast = ast;
    for (const UOpPtr& s : k->src()) item.bufs.push_back(BufferOf(s.get())->ref());
    schedule.items.push_back(std::move(item));
    for (const UOp* x : children[k]) {
      if (--in_degree[x] == 0) queue.push_back(x);
    }
  }
  if (schedule.items.size() != kernels.size()) {
    return absl::InternalError(absl::StrCat("schedule length mismatch: ", schedule.items.size(), " of ",
                                            kernels.size(), " kernels ordered (a cycle)"));
  }
  return absl::OkStatus();
}

// What each tensor node becomes: its buffer (or a view of it) or a constant. As tinygrad applies its two
// becomes maps to the tensors, every node that changed into a kernel's output (or a constant) is replaced,
// then every ASSIGN by its buffer.
absl::Status BecomesMap(ScheduleState& state) {
  Context& ctx = *state.ctx;
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
  for (const auto& [k, v] : state.map) {
    if (k != v.get() && becomes(v)) replacements[k] = v;
  }
  for (const UOp* u : state.graph->Toposort()) {
    if (u->op() == Ops::ASSIGN) replacements[u] = BufferOf(u)->ref();
  }
  std::vector<const UOp*> changed;
  std::vector<UOpPtr> values;
  for (const UOp* u : state.input->Toposort()) {
    auto it = state.map.find(u);
    if (it == state.map.end() || it->second.get() == u || !becomes(it->second)) continue;
    changed.push_back(u);
    values.push_back(it->second);
  }
  if (!values.empty()) {
    UOpPtr substituted = Substitute(UOp::Sink(values), replacements, "becomes_map");
    for (size_t i = 0; i < changed.size(); ++i)
      state.schedule.becomes_map[changed[i]] = substituted->src()[i];
  }
  return absl::OkStatus();
}

// Kernels reuse the buffers of intermediate results no longer needed (unless options.plan_memory is off).
absl::Status PlanMemory(ScheduleState& state) {
  if (!state.options.plan_memory) return absl::OkStatus();
  Schedule& schedule = state.schedule;
  // The input's buffers keep their memory; so does a buffer a tensor can reach after the schedule, and a
  // copy's.
  absl::flat_hash_set<const UOp*> protected_bufs;
  for (const UOp* u : state.input->Toposort()) {
    if (u->op() == Ops::BUFFER) protected_bufs.insert(u);
  }
  for (const auto& [k, v] : schedule.becomes_map) {
    if (state.options.live_nodes != nullptr && !state.options.live_nodes->contains(k)) continue;
    for (const UOp* x : v->Toposort()) {
      if (x->op() == Ops::BUFFER) protected_bufs.insert(x);
    }
  }
  for (const UOpPtr& s : state.input->src()) {
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
  return absl::OkStatus();
}

// ---- what SPEC=1 checks after them ----

absl::Status VerifyTensor(const ScheduleState& state) { return VerifySchedulerGraph(state.graph.get()); }

// tinygrad's validate_kernel: a kernel's AST is a SINK of STOREs (checked against the kernel spec), a COPY or
// a BUFFER_VIEW.
absl::Status VerifyScheduledAst(const UOp* ast, absl::string_view what) {
  if (ast->op() == Ops::SINK) {
    absl::Status s = VerifyKernelAst(ast);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(what, ": ", s.message()));
    return absl::OkStatus();
  }
  if (ast->op() == Ops::COPY || ast->op() == Ops::BUFFER_VIEW) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, " must be a SINK, COPY or BUFFER_VIEW, not ", OpName(ast->op())));
}

// The kernel graph holds only buffers, kernels and assigns, and every kernel's AST is one.
absl::Status VerifyKernels(const ScheduleState& state) {
  UOPC_RETURN_IF_ERROR(VerifyKernelGraph(state.graph.get()));
  int n = 0;
  for (const UOp* u : state.graph->Toposort()) {
    if (u->op() != Ops::KERNEL) continue;
    if (!u->arg().is_payload() || u->arg().as_payload().type_name() != KernelArg::kTypeName) {
      return absl::InvalidArgumentError(absl::StrCat("kernel ", n, " has no Kernel arg"));
    }
    UOPC_RETURN_IF_ERROR(VerifyScheduledAst(KernelAst(u).get(), absl::StrCat("kernel ", n, "'s AST")));
    ++n;
  }
  return absl::OkStatus();
}

// Every item is a kernel AST (or a copy) on buffers.
absl::Status VerifyItems(const ScheduleState& state) {
  const std::vector<ScheduleItem>& items = state.schedule.items;
  for (size_t i = 0; i < items.size(); ++i) {
    UOPC_RETURN_IF_ERROR(VerifyScheduledAst(items[i].ast.get(), absl::StrCat("schedule item ", i)));
    for (size_t j = 0; j < items[i].bufs.size(); ++j) {
      if (items[i].bufs[j]->op() != Ops::BUFFER) {
        return absl::InvalidArgumentError(absl::StrCat("schedule item ", i, "'s buffer ", j, " is a ",
                                                       OpName(items[i].bufs[j]->op()), ", not a BUFFER"));
      }
    }
  }
  return absl::OkStatus();
}

// What the tensors become: buffers, views of them and constants, or, for a node that stays lazy (the first of
// two chained assigns, which merge_views folds away), the simplified graph, whose VIEWs may be of any value.
absl::Status VerifyBecomes(const ScheduleState& state) {
  for (const auto& [k, v] : state.schedule.becomes_map) {
    UOPC_RETURN_IF_ERROR(VerifySchedulerGraph(v.get()));
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<ScheduleStep>& ScheduleSteps() {
  static const std::vector<ScheduleStep>* const steps = new std::vector<ScheduleStep>{
      {"check_shapes", &CheckShapes, nullptr},        {"merge_views", &MergeViews, &VerifyTensor},
      {"group_realizes", &GroupRealizes, nullptr},    {"create_kernels", &CreateKernels, &VerifyTensor},
      {"fix_assign", &FixAssign, &VerifyTensor},      {"create_ast", &CreateAst, &VerifyKernels},
      {"order_kernels", &OrderKernels, &VerifyItems}, {"becomes_map", &BecomesMap, &VerifyBecomes},
      {"memory_planner", &PlanMemory, &VerifyItems},
  };
  return *steps;
}

absl::StatusOr<Schedule> RunScheduleSteps(const UOpPtr& big_sink, absl::Span<const ScheduleStep> steps,
                                          const ScheduleOptions& options) {
  RewriteGroupScope viz_group("schedule");  // VIZ: the scheduler's rewrites as one group
  if (big_sink == nullptr || big_sink->op() != Ops::SINK) {
    return absl::InvalidArgumentError("CreateSchedule takes the SINK of the tensors to realize");
  }
  const bool spec = SpecChecksEnabled();
  // tinygrad verifies the tensor graph against tensor_uop_spec before scheduling it.
  if (spec) {
    if (absl::Status s = VerifyTensorGraph(big_sink.get()); !s.ok()) {
      return absl::Status(
          s.code(), absl::StrCat("SPEC: the tensor graph given to the scheduler is invalid: ", s.message()));
    }
  }
  ScheduleState state;
  state.input = big_sink;
  state.options = options;
  state.graph = big_sink;
  state.ctx = std::make_shared<Context>();
  state.schedule.input = big_sink;
  for (const ScheduleStep& step : steps) {
    UOPC_RETURN_IF_ERROR(step.run(state));
    // The maps borrow the nodes of every graph so far.
    if (state.graphs.empty() || state.graphs.back() != state.graph) state.graphs.push_back(state.graph);
    if (spec && step.verify != nullptr) {
      if (absl::Status s = step.verify(state); !s.ok()) return SpecStepError("schedule", step.name, s);
    }
  }
  return std::move(state.schedule);
}

absl::StatusOr<Schedule> CreateSchedule(const UOpPtr& big_sink, const ScheduleOptions& options) {
  return RunScheduleSteps(big_sink, ScheduleSteps(), options);
}

}  // namespace uopc
