// Realize and read back: the SINK of the tensors goes to the scheduler, the schedule runs, and the
// becomes_map is applied to every live Tensor (tinygrad's Tensor.realize and _apply_map_to_tensors); reading
// values makes a contiguous copy first, as tinygrad's Tensor._buffer does.
#include "absl/container/flat_hash_set.h"
#include "runtime/realize.h"
#include "schedule/schedule.h"
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

// Points every live Tensor at what its UOp became.
void ApplyBecomesMap(const absl::flat_hash_map<const UOp*, UOpPtr>& becomes) {
  if (becomes.empty()) return;
  std::vector<std::shared_ptr<TensorNode>> nodes = tensor_internal::LiveNodes();
  std::vector<UOpPtr> roots;
  std::vector<TensorNode*> owners;
  for (const auto& n : nodes) {
    if (!n->status.ok() || !n->uop) continue;
    roots.push_back(n->uop);
    owners.push_back(n.get());
  }
  if (roots.empty()) return;
  UOpPtr sink = UOp::Sink(roots);
  UOpPtr replaced = sink->Substitute(becomes);
  for (size_t i = 0; i < owners.size(); ++i) owners[i]->uop = replaced->src()[i];
}

}  // namespace

absl::Status Tensor::RealizeAll(absl::Span<const Tensor> tensors) {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : tensors) {
    UOPC_RETURN_IF_ERROR(t.status());
    roots.push_back(t.uop());
  }
  UOpPtr sink = UOp::Sink(roots);
  UOPC_RETURN_IF_ERROR(tensor_internal::UploadHostDataOf(sink));
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(sink));
  UOPC_RETURN_IF_ERROR(RunSchedule(schedule, RealizeOptions::FromEnvironment()).status());
  ApplyBecomesMap(schedule.becomes_map);
  return absl::OkStatus();
}

absl::Status Tensor::Realize(absl::Span<const Tensor> others) const {
  std::vector<Tensor> all = {*this};
  all.insert(all.end(), others.begin(), others.end());
  return RealizeAll(all);
}

absl::StatusOr<std::vector<uint8_t>> Tensor::ToBytes() const {
  UOPC_RETURN_IF_ERROR(status());
  Dims shape = Shape();
  int64_t n = tensor_internal::NumElements(shape);
  int itemsize = dtype().itemsize();
  if (n == 0) return std::vector<uint8_t>{};
  Tensor c = Contiguous();
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
