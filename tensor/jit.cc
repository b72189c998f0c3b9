#include "tensor/jit.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schedule/tensor_uop.h"
#include "tensor/tensor_internal.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// The BUFFER a tensor reads as a whole, in order, when it is one (a realized BUFFER, or a contiguous VIEW of
// all of one); else null.
const UOp* WholeBufferOf(const Tensor& t) {
  const UOpPtr& u = t.uop();
  const UOp* base = BaseOf(u.get());
  if (base->op() != Ops::BUFFER || !BufferStore::Global().IsAllocated(base)) return nullptr;
  if (u.get() == base) return base;
  if (u->op() != Ops::VIEW || u->src(0) != base) return nullptr;
  const bool contiguous = tensor_internal::WithShapes([&](TensorShapes& shapes) {
    const ShapeTracker* st = shapes.St(u);
    return st != nullptr && st->contiguous();
  });
  return contiguous && t.numel() == base->arg().as_int() ? base : nullptr;
}

// The whole buffers of a tensor: WholeBufferOf it, or of each shard of a tensor on several devices; null
// where one is not.
std::vector<const UOp*> WholeBuffersOf(const Tensor& t) {
  if (t.uop()->op() != Ops::MULTI) return {WholeBufferOf(t)};
  std::vector<const UOp*> out;
  for (const UOpPtr& shard : t.uop()->src()) out.push_back(WholeBufferOf(Tensor(shard)));
  return out;
}

// The bound variables' DEFINE_VARs and values (by name); an error naming the one that is not a Bind result.
absl::Status ReadBoundVariables(absl::Span<const Sint> vars, std::vector<UOpPtr>* defines,
                                absl::flat_hash_map<std::string, int64_t>* values) {
  for (size_t i = 0; i < vars.size(); ++i) {
    absl::StatusOr<std::pair<std::string, int64_t>> bound = BoundValue(vars[i]);
    if (!bound.ok())
      return absl::InvalidArgumentError(
          absl::StrCat("TinyJit: variable ", i, ": ", bound.status().message()));
    defines->push_back(vars[i].uop()->src(0)->ref());
    (*values)[bound->first] = bound->second;
  }
  return absl::OkStatus();
}

}  // namespace

TinyJit::TinyJit(Function function)
    : function_([function = std::move(function)](absl::Span<const Tensor> inputs, absl::Span<const Sint>) {
        return function(inputs);
      }),
      enabled_(EnvFlag("JIT", true)) {}

TinyJit::TinyJit(SymbolicFunction function)
    : function_(std::move(function)), enabled_(EnvFlag("JIT", true)) {}

void TinyJit::Reset() {
  calls_ = 0;
  captured_ = false;
  runs_ = CapturedRuns();
  signatures_.clear();
  captured_inputs_.clear();
  captured_vars_.clear();
  outputs_.clear();
  last_kernel_seconds_ = 0;
}

absl::StatusOr<TinyJit::StagedInputs> TinyJit::StageInputs(absl::Span<const Tensor> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].ok()) {
      return absl::Status(inputs[i].status().code(),
                          absl::StrCat("TinyJit: input ", i, ": ", inputs[i].status().message()));
    }
  }
  UOPC_RETURN_IF_ERROR(tensor_internal::UploadHostData());
  // Inputs that are not whole realized buffers are realized as contiguous copies, together.
  std::vector<Tensor> staged(inputs.begin(), inputs.end());
  std::vector<Tensor> to_realize;
  for (Tensor& t : staged) {
    if (absl::c_linear_search(WholeBuffersOf(t), nullptr)) {
      t = t.Contiguous();
      to_realize.push_back(t);
    }
  }
  if (!to_realize.empty()) UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(to_realize));
  std::vector<UOpPtr> buffers;
  buffers.reserve(staged.size());
  for (size_t i = 0; i < staged.size(); ++i) {
    // A tensor on several devices is a buffer per device, in order.
    for (const UOp* b : WholeBuffersOf(staged[i])) {
      if (b == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat("TinyJit: input ", i, " of shape ",
                                                       TupleString(staged[i].Shape()),
                                                       " did not realize to a buffer (a constant?)"));
      }
      buffers.push_back(b->ref());
    }
  }
  return StagedInputs{std::move(staged), std::move(buffers)};
}

absl::StatusOr<std::vector<Tensor>> TinyJit::RunFunction(absl::Span<const Tensor> inputs,
                                                         absl::Span<const Sint> vars) {
  std::vector<UOpPtr> defines;
  absl::flat_hash_map<std::string, int64_t> values;
  UOPC_RETURN_IF_ERROR(ReadBoundVariables(vars, &defines, &values));
  UOPC_ASSIGN_OR_RETURN(StagedInputs staged, StageInputs(inputs));
  UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> outputs, function_(staged.tensors, vars));
  UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(outputs));
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> TinyJit::Capture(absl::Span<const Tensor> inputs,
                                                     absl::Span<const Sint> vars) {
  std::vector<UOpPtr> defines;
  absl::flat_hash_map<std::string, int64_t> values;
  UOPC_RETURN_IF_ERROR(ReadBoundVariables(vars, &defines, &values));
  UOPC_ASSIGN_OR_RETURN(StagedInputs staged, StageInputs(inputs));
  std::vector<UOpPtr>& buffers = staged.buffers;
  absl::flat_hash_map<const UOp*, size_t> input_of;
  for (size_t i = 0; i < buffers.size(); ++i) {
    auto [it, inserted] = input_of.emplace(buffers[i].get(), i);
    if (!inserted) {
      return absl::InvalidArgumentError(
          absl::StrCat("TinyJit: inputs ", it->second, " and ", i, " are the same buffer"));
    }
  }
  CapturedRuns runs;
  std::vector<Tensor> outputs;
  {
    ScopedRunCapture capture(&runs);
    UOPC_ASSIGN_OR_RETURN(outputs, function_(staged.tensors, vars));
    UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(outputs));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    const UOp* base = BaseOf(outputs[i].uop().get());
    if (auto it = input_of.find(base); it != input_of.end()) {
      return absl::InvalidArgumentError(
          absl::StrCat("TinyJit: output ", i, " is input ", it->second,
                       " or a view of it; return a copy (Contiguous()) instead"));
    }
  }
  signatures_.clear();
  for (const Tensor& t : inputs) signatures_.push_back(Signature{t.Shape(), t.dtype(), t.Device()});
  captured_inputs_ = std::move(buffers);
  captured_vars_ = std::move(defines);
  runs_ = std::move(runs);
  outputs_ = outputs;
  captured_ = true;
  return outputs;
}

absl::StatusOr<std::vector<Tensor>> TinyJit::Replay(absl::Span<const Tensor> inputs,
                                                    absl::Span<const Sint> vars) {
  if (inputs.size() != signatures_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("TinyJit: captured with ", signatures_.size(), " inputs, called with ", inputs.size()));
  }
  std::vector<UOpPtr> defines;
  absl::flat_hash_map<std::string, int64_t> values;
  UOPC_RETURN_IF_ERROR(ReadBoundVariables(vars, &defines, &values));
  if (defines != captured_vars_) {
    std::vector<std::string> got, want;
    for (const UOpPtr& d : defines) got.push_back(d->arg().ToString());
    for (const UOpPtr& d : captured_vars_) want.push_back(d->arg().ToString());
    return absl::InvalidArgumentError(absl::StrCat("TinyJit: called with variables [",
                                                   absl::StrJoin(got, ", "), "], captured with [",
                                                   absl::StrJoin(want, ", "), "] (Reset() captures again)"));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].ok()) continue;  // StageInputs names the error
    const Signature got{inputs[i].Shape(), inputs[i].dtype(), inputs[i].Device()};
    const Signature& want = signatures_[i];
    if (!(got == want)) {
      return absl::InvalidArgumentError(
          absl::StrCat("TinyJit: input ", i, " is ", got.dtype.ToString(), TupleString(got.shape), " on ",
                       got.device, ", captured as ", want.dtype.ToString(), TupleString(want.shape), " on ",
                       want.device, " (Reset() captures again)"));
    }
  }
  // Buffers of tensors freed since the last call (earlier inputs) go now: replays never reach a realize.
  BufferStore::Global().Collect();
  UOPC_ASSIGN_OR_RETURN(StagedInputs staged, StageInputs(inputs));
  const std::vector<UOpPtr>& buffers = staged.buffers;
  absl::flat_hash_map<const UOp*, UOpPtr> replace;
  for (size_t i = 0; i < buffers.size(); ++i) {
    if (buffers[i] != captured_inputs_[i]) replace.emplace(captured_inputs_[i].get(), buffers[i]);
  }
  UOPC_RETURN_IF_ERROR(runs_.Replay(replace, &last_kernel_seconds_, values));
  return outputs_;
}

absl::StatusOr<std::vector<Tensor>> TinyJit::operator()(absl::Span<const Tensor> inputs) {
  return (*this)(inputs, {});
}

absl::StatusOr<std::vector<Tensor>> TinyJit::operator()(absl::Span<const Tensor> inputs,
                                                        absl::Span<const Sint> vars) {
  const int64_t call = calls_++;
  if (!enabled_ || call == 0) return RunFunction(inputs, vars);
  if (!captured_) return Capture(inputs, vars);
  return Replay(inputs, vars);
}

}  // namespace uopc
