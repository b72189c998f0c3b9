// The scheduler: from a lazy tensor graph to kernels (tinygrad v0.10.3's engine/grouper.py,
// engine/schedule.py and engine/memory.py).
//
// `CreateSchedule` takes the SINK of the tensors to realize. It simplifies the graph (merged views, size-0
// and stride-0 reductions, no-op CONTIGUOUS), decides which nodes become kernel outputs (the grouper:
// realized tensors, reductions that cannot fuse with their consumers, expands of reductions, CONTIGUOUS,
// ASSIGN, COPY), gives each output a BUFFER and a KERNEL, pushes movement ops to the edges of each kernel
// (view_left / view_right) and writes each kernel's AST in the form codegen takes (SINK(STORE(DEFINE_GLOBAL,
// VIEW, value))). The kernels come out in an order that respects their dependencies (BFS over the kernel
// graph, as tinygrad), with the memory planner's buffer reuse applied, and `becomes_map` says what each
// tensor node of the input is afterwards (a BUFFER, a view of one, or a constant), so a caller can update its
// tensors.
//
//   ASSIGN_OR_RETURN(Schedule s, CreateSchedule(UOp::Sink({a, b})));
//   for (const ScheduleItem& item : s.items) { ... item.ast, item.bufs ... }
//
// The driver is a list of named steps, `ScheduleSteps()`, run in order on a `ScheduleState`, so that tools
// can name them and, with SPEC=1 (uop/spec.h), each step's result is verified before the next step runs: the
// tensor graph after the steps that rewrite it, the kernel graph (tinygrad's sched_spec) and every kernel's
// AST after create_ast, the ordered kernels after order_kernels. A failure is an error naming the step.
#ifndef UOPC_SCHEDULE_SCHEDULE_H_
#define UOPC_SCHEDULE_SCHEDULE_H_

#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/uop.h"

namespace uopc {

struct ScheduleItem {
  // A kernel AST (SINK), or a COPY / BUFFER_VIEW node for the meta ops.
  UOpPtr ast;
  // The BUFFER nodes the kernel uses, in DEFINE_GLOBAL order (outputs first); after memory planning.
  std::vector<UOpPtr> bufs;
};

struct Schedule {
  std::vector<ScheduleItem> items;
  // Each node of the input graph that changed, mapped to what it becomes (tinygrad's becomes_map).
  absl::flat_hash_map<const UOp*, UOpPtr> becomes_map;
  // The values of the variables bound in the graph (BIND), by their DEFINE_VAR.
  std::vector<std::pair<UOpPtr, int64_t>> var_vals;
  // Keeps the input graph alive while becomes_map's keys point into it.
  UOpPtr input;
};

struct ScheduleOptions {
  // The memory planner (tinygrad's NO_MEMORY_PLANNER=1 turns it off): kernels reuse the buffers of
  // intermediate results no longer needed.
  bool plan_memory = true;
  // The nodes of the input graph that live tensors hold. Their buffers are never reused; when null, no buffer
  // a node of the input graph becomes is (tinygrad's behaviour, where every such buffer is still referenced).
  const absl::flat_hash_set<const UOp*>* live_nodes = nullptr;
};

absl::StatusOr<Schedule> CreateSchedule(const UOpPtr& big_sink, const ScheduleOptions& options = {});

namespace schedule_internal {
struct Context;
}

// What the steps share. Each step reads what the earlier ones left and advances it.
struct ScheduleState {
  UOpPtr input;  // the SINK given to CreateSchedule
  ScheduleOptions options;
  // The graph after the last step that rewrote it: the simplified tensor graph, then the kernel graph.
  UOpPtr graph;
  // Each node of the input graph (and of the graphs between) mapped to what it is in `graph`
  // (tinygrad's tensor_map).
  absl::flat_hash_map<const UOp*, UOpPtr> map;
  // The result, filled by the last steps.
  Schedule schedule;
  // The passes' shared context (shapes, the grouper's outputs, ...); private to //schedule.
  std::shared_ptr<schedule_internal::Context> ctx;
  // Every graph a step produced: the maps' keys borrow their nodes.
  std::vector<UOpPtr> graphs;
};

// One step of the scheduler.
struct ScheduleStep {
  absl::string_view name;  // tinygrad's name for the pass where it has one ("create_kernels", ...)
  absl::Status (*run)(ScheduleState& state);
  // What SPEC=1 checks after the step; null when the step leaves nothing new to check.
  absl::Status (*verify)(const ScheduleState& state);
};

// The steps of CreateSchedule, in order.
const std::vector<ScheduleStep>& ScheduleSteps();

// CreateSchedule with `steps` in place of ScheduleSteps(): for tests of the driver and its checks.
absl::StatusOr<Schedule> RunScheduleSteps(const UOpPtr& big_sink, absl::Span<const ScheduleStep> steps,
                                          const ScheduleOptions& options = {});

}  // namespace uopc

#endif  // UOPC_SCHEDULE_SCHEDULE_H_
