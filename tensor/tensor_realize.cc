// Kernelize, schedule, realize and read back: the SINK of the tensors goes to the scheduler (all of its
// steps, or those that make the kernel graph for Kernelize), the becomes_map is applied to every live Tensor
// (tinygrad's Tensor.kernelize, schedule_with_vars, realize and _apply_map_to_tensors), and Realize runs the
// schedule; reading values makes a contiguous copy first, as tinygrad's Tensor._buffer does.
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"
#include "tensor/multi.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/status_macros.h"

namespace uopc {

absl::Status tensor_internal::UploadHostData() {
  for (auto& [buffer, bytes] : tensor_internal::TakeHostData()) {
    UOPC_RETURN_IF_ERROR(BufferStore::Global().Write(buffer, bytes));
  }
  return absl::OkStatus();
}

absl::Status tensor_internal::UploadHostDataOf(const UOpPtr& sink) {
  std::vector<std::pair<UOpPtr, std::vector<uint8_t>>> pending = tensor_internal::TakeHostData();
  if (pending.empty()) return absl::OkStatus();
  absl::flat_hash_set<const UOp*> reached;
  for (const UOp* u : sink->Toposort()) {
    if (u->op() == Ops::BUFFER) reached.insert(u);
  }
  absl::Status status;
  for (auto& [buffer, bytes] : pending) {
    if (status.ok() && reached.contains(buffer.get())) {
      status = BufferStore::Global().Write(buffer, bytes);
      if (status.ok()) continue;
    }
    // Kept while a node other than this entry holds the buffer.
    if (buffer.use_count() > 1) tensor_internal::AddHostData(buffer, std::move(bytes));
  }
  return status;
}

namespace {

// Replaces the UOp of every live Tensor with what `rewrite` makes of the SINK of them all.
template <typename F>
void RewriteLiveTensors(F rewrite) {
  std::vector<std::shared_ptr<TensorNode>> nodes = tensor_internal::LiveNodes();
  std::vector<UOpPtr> roots;
  std::vector<TensorNode*> owners;
  for (const auto& n : nodes) {
    if (!n->status.ok() || !n->uop) continue;
    roots.push_back(n->uop);
    owners.push_back(n.get());
  }
  if (roots.empty()) return;
  UOpPtr replaced = rewrite(UOp::Sink(roots));
  for (size_t i = 0; i < owners.size(); ++i) owners[i]->uop = replaced->src()[i];
}

// Points every live Tensor at what its UOp became.
void ApplyBecomesMap(const absl::flat_hash_map<const UOp*, UOpPtr>& becomes) {
  if (becomes.empty()) return;
  RewriteLiveTensors([&](const UOpPtr& sink) { return sink->Substitute(becomes); });
}

// uopc's scheduler has no fusion pass (tinygrad's do_fuse in the grouper): the FUSE marks are dropped from
// every live Tensor before scheduling, so the values are the same and the kernels those of the graph without
// them.
void DropFuseMarks() {
  static const PatternMatcher* const drop = new PatternMatcher({
      {UPat(Ops::FUSE).named("x"), [](const Match& m) -> UOpPtr { return m["x"]->src()[0]; }},
  });
  RewriteLiveTensors([](const UOpPtr& all) { return GraphRewrite(all, *drop); });
}

// The SINK of the tensors' UOps, their FUSE marks dropped first; with sharded tensors, the SINK of their
// shards after the multi rules.
absl::StatusOr<UOpPtr> SinkOf(absl::Span<const Tensor> tensors) {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : tensors) {
    UOPC_RETURN_IF_ERROR(t.status());
    roots.push_back(t.uop());
  }
  UOpPtr sink = UOp::Sink(roots);
  // One walk of the graph finds both kinds of node that need a pass before scheduling.
  bool fused = false, sharded = false;
  for (const UOp* u : sink->Toposort()) {
    fused |= u->op() == Ops::FUSE;
    sharded |= u->op() == Ops::MULTI;
  }
  if (fused) {
    DropFuseMarks();
    roots.clear();
    for (const Tensor& t : tensors) roots.push_back(t.uop());
    sink = UOp::Sink(roots);
  }
  // Sharded tensors: the multi rules give each device its own graph, and each shard is realized.
  if (sharded) {
    UOPC_ASSIGN_OR_RETURN(UOpMap multi, tensor_internal::MultiMap(sink));
    ApplyBecomesMap(multi);
    roots.clear();
    for (const Tensor& t : tensors) {
      if (t.uop()->op() == Ops::MULTI) {
        roots.insert(roots.end(), t.uop()->src().begin(), t.uop()->src().end());
      } else {
        roots.push_back(t.uop());
      }
    }
    sink = UOp::Sink(roots);
  }
  return sink;
}

// tinygrad's get_becomes_map as kernelize applies it: each node of the input that became a kernel's output
// (ASSIGN(BUFFER, KERNEL), or a view of one), a buffer, or a constant of a fixed shape, mapped to it, with
// the ASSIGNs kept (a schedule replaces them by their buffers).
absl::Status KernelizeBecomesMap(ScheduleState& state) {
  for (const UOp* u : state.input->Toposort()) {
    auto it = state.map.find(u);
    if (it == state.map.end() || it->second.get() == u) continue;
    const UOp* base = BaseOf(it->second.get());
    const bool fixed_const = base->op() == Ops::CONST && tensor_internal::ShapeOf(it->second).ok();
    if (base->op() == Ops::BUFFER || base->op() == Ops::ASSIGN || fixed_const) {
      state.schedule.becomes_map[u] = it->second;
    }
  }
  return absl::OkStatus();
}

// The scheduler's steps up to the kernels' ASTs, then KernelizeBecomesMap.
const std::vector<ScheduleStep>& KernelizeSteps() {
  static const std::vector<ScheduleStep>* const steps = [] {
    auto* out = new std::vector<ScheduleStep>;
    for (const ScheduleStep& step : ScheduleSteps()) {
      out->push_back(step);
      if (step.name == "create_ast") break;
    }
    out->push_back({"kernelize_becomes_map", &KernelizeBecomesMap, nullptr});
    return out;
  }();
  return *steps;
}

// tinygrad's schedule_with_vars of the tensors; they are updated to what they become.
absl::StatusOr<Schedule> ScheduleTensors(absl::Span<const Tensor> tensors) {
  UOPC_ASSIGN_OR_RETURN(UOpPtr sink, SinkOf(tensors));
  UOPC_RETURN_IF_ERROR(tensor_internal::UploadHostDataOf(sink));
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(sink));
  ApplyBecomesMap(schedule.becomes_map);
  return schedule;
}

std::vector<Tensor> WithOthers(const Tensor& first, absl::Span<const Tensor> others) {
  std::vector<Tensor> all = {first};
  all.insert(all.end(), others.begin(), others.end());
  return all;
}

}  // namespace

absl::Status Tensor::RealizeAll(absl::Span<const Tensor> tensors) {
  UOPC_ASSIGN_OR_RETURN(uopc::Schedule schedule, ScheduleTensors(tensors));
  return RunSchedule(schedule, RealizeOptions::FromEnvironment()).status();
}

absl::Status Tensor::Realize(absl::Span<const Tensor> others) const {
  return RealizeAll(WithOthers(*this, others));
}

absl::StatusOr<uopc::Schedule> Tensor::ScheduleWithVars(absl::Span<const Tensor> others) const {
  return ScheduleTensors(WithOthers(*this, others));
}

absl::StatusOr<std::vector<ScheduleItem>> Tensor::Schedule(absl::Span<const Tensor> others) const {
  UOPC_ASSIGN_OR_RETURN(uopc::Schedule schedule, ScheduleWithVars(others));
  if (!schedule.var_vals.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("Schedule: the graph binds ", schedule.var_vals.size(),
                                                   " variable(s); use ScheduleWithVars"));
  }
  return std::move(schedule.items);
}

Tensor Tensor::Kernelize(absl::Span<const Tensor> others) const {
  absl::StatusOr<UOpPtr> sink = SinkOf(WithOthers(*this, others));
  if (!sink.ok()) return FromError(sink.status());
  absl::StatusOr<uopc::Schedule> kernels = RunScheduleSteps(*sink, KernelizeSteps());
  if (!kernels.ok()) return FromError(kernels.status());
  ApplyBecomesMap(kernels->becomes_map);
  return *this;
}

absl::StatusOr<std::vector<uint8_t>> Tensor::ToBytes() const {
  UOPC_RETURN_IF_ERROR(status());
  if (symbolic()) {
    // As tinygrad's data(): the number of elements is not known.
    return absl::FailedPreconditionError(
        absl::StrCat("a tensor of the symbolic shape ", TupleString(SymShape()),
                     " has no data to read; shrink it to integer sizes first"));
  }
  Dims shape = Shape();
  int64_t n = tensor_internal::NumElements(shape);
  int itemsize = dtype().itemsize();
  if (n == 0) return std::vector<uint8_t>{};
  Tensor c = Contiguous();
  // A tensor on several devices is read whole from the first (tinygrad's copy to CPU).
  if (std::vector<std::string> devices = Devices(); devices.size() > 1) c = c.To(devices[0]);
  UOPC_RETURN_IF_ERROR(c.Realize());
  UOpPtr u = c.uop();
  UOpPtr base = BaseOf(u);
  if (base->op() == Ops::CONST) {
    // The scheduler folded it to a constant: every element is the value.
    std::vector<ConstValue> values(n, base->const_value());
    return tensor_internal::PackValues(values, dtype());
  }
  if (base->op() != Ops::BUFFER) {
    return absl::InternalError("after realize the tensor is not a buffer but " +
                               std::string(OpName(base->op())));
  }
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, BufferStore::Global().Read(base));
  if (static_cast<int64_t>(bytes.size()) < n * itemsize) {
    return absl::InternalError("the realized buffer is smaller than the tensor");
  }
  bytes.resize(n * itemsize);
  return bytes;
}

}  // namespace uopc
