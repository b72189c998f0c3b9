// Autograd on Tensors (tinygrad's Tensor.gradient, backward, requires_grad_, detach, contiguous_backward) and
// in-place assignment (Tensor.assign). The gradient rules and the walk are gradient.cc's.
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "tensor/gradient.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {

Tensor Tensor::RequiresGrad(bool requires_grad) const {
  node_->requires_grad = requires_grad;
  return *this;
}

std::optional<bool> Tensor::requires_grad() const { return node_->requires_grad; }

std::optional<Tensor> Tensor::Grad() const { return node_->grad; }
void Tensor::SetGrad(std::optional<Tensor> grad) const { node_->grad = std::move(grad); }

Tensor Tensor::Detach() const {
  UOPC_TENSOR_PROPAGATE(this);
  Tensor out(UOp::New(Ops::DETACH, dtype(), {uop()}));
  return out.RequiresGrad(false);
}

Tensor Tensor::ContiguousBackward() const {
  UOPC_TENSOR_PROPAGATE(this);
  return Tensor(Alu(Ops::CONTIGUOUS_BACKWARD, {uop()}));
}

absl::StatusOr<std::vector<Tensor>> Tensor::Gradient(absl::Span<const Tensor> targets,
                                                     const std::optional<Tensor>& upstream,
                                                     bool materialize_grads) const {
  UOPC_RETURN_IF_ERROR(status());
  if (!dtype().is_float()) {
    return absl::InvalidArgumentError(absl::StrCat("Gradient: the tensor has dtype ", dtype().ToString(),
                                                   "; only float tensors have gradients"));
  }
  for (size_t i = 0; i < targets.size(); ++i) {
    UOPC_RETURN_IF_ERROR(targets[i].status());
    if (!targets[i].dtype().is_float()) {
      return absl::InvalidArgumentError(absl::StrCat("Gradient: target ", i, " has dtype ",
                                                     targets[i].dtype().ToString(),
                                                     "; only float tensors have gradients"));
    }
  }
  Tensor seed;
  if (upstream.has_value()) {
    UOPC_RETURN_IF_ERROR(upstream->status());
    if (upstream->Shape() != Shape()) {
      return absl::InvalidArgumentError(absl::StrCat("Gradient: the upstream gradient has shape ",
                                                     TupleString(upstream->Shape()), ", the tensor ",
                                                     TupleString(Shape())));
    }
    seed = *upstream;
  } else {
    if (!Shape().empty()) {
      return absl::InvalidArgumentError(absl::StrCat("Gradient: the tensor has shape ", TupleString(Shape()),
                                                     "; without an upstream gradient it must be a scalar"));
    }
    seed = Const(1.0, dtype(), Device());
  }
  absl::flat_hash_set<const UOp*> target_set;
  for (const Tensor& t : targets) target_set.insert(t.uop().get());
  UOPC_ASSIGN_OR_RETURN(GradientMap grads, ComputeGradient(uop(), seed.uop(), target_set));
  std::vector<Tensor> out;
  for (size_t i = 0; i < targets.size(); ++i) {
    auto g = grads.find(targets[i].uop().get());
    if (g != grads.end()) {
      out.push_back(Tensor(g->second));
    } else if (materialize_grads) {
      out.push_back(targets[i].ZerosLike());
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("Gradient: target ", i, " (shape ", TupleString(targets[i].Shape()),
                       ") is not on a path from the tensor (it does not depend on it, or only through "
                       "DETACH or ASSIGN)"));
    }
  }
  return out;
}

absl::Status Tensor::Backward(const std::optional<Tensor>& upstream) const {
  UOPC_RETURN_IF_ERROR(status());
  // Which nodes of the graph require grad: those of tensors marked so, and (tinygrad's None propagating
  // True through each op) every node above one of them, short of DETACH.
  std::vector<const UOp*> order = uop()->Toposort();
  absl::flat_hash_set<const UOp*> in_graph(order.begin(), order.end());
  std::vector<std::shared_ptr<TensorNode>> live;
  absl::flat_hash_set<const UOp*> marked;
  for (const std::shared_ptr<TensorNode>& n : tensor_internal::LiveNodes()) {
    if (!n->status.ok() || !n->uop || !in_graph.contains(n->uop.get())) continue;
    live.push_back(n);
    if (n->requires_grad == true) marked.insert(n->uop.get());
  }
  absl::flat_hash_map<const UOp*, bool> derived;
  for (const UOp* u : order) {
    bool r = marked.contains(u);
    if (u->op() != Ops::DETACH) {
      for (const UOpPtr& s : u->src()) r = r || derived[s.get()];
    }
    derived[u] = r;
  }
  // Under NoGrad() no tensor gets a gradient; the loss and upstream are still checked, as tinygrad's.
  const bool no_grad = NoGrad();
  std::vector<Tensor> targets;
  std::vector<std::shared_ptr<TensorNode>> owners;
  for (const std::shared_ptr<TensorNode>& n : live) {
    bool wants = n->requires_grad.has_value() ? *n->requires_grad : derived[n->uop.get()];
    if (!wants || no_grad) continue;
    if (!n->uop->dtype().is_float()) {
      if (n->requires_grad == true) {
        return absl::InvalidArgumentError(absl::StrCat("Backward: a tensor that requires grad has dtype ",
                                                       n->uop->dtype().ToString(),
                                                       "; only float tensors have gradients"));
      }
      continue;
    }
    targets.push_back(Tensor(n));
    owners.push_back(n);
  }
  UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> grads, Gradient(targets, upstream, /*materialize_grads=*/true));
  for (size_t i = 0; i < owners.size(); ++i) {
    if (grads[i].Shape() != targets[i].Shape()) {
      return absl::InternalError(absl::StrCat("Backward: a gradient has shape ",
                                              TupleString(grads[i].Shape()), ", its tensor ",
                                              TupleString(targets[i].Shape())));
    }
    TensorNode& n = *owners[i];
    n.grad = n.grad.has_value() ? *n.grad + grads[i] : grads[i];
  }
  return absl::OkStatus();
}

bool tensor_internal::RequiresGradInEffect(const Tensor& t) {
  if (!t.ok()) return false;
  if (t.requires_grad().has_value()) return *t.requires_grad();
  // The flags set on live tensors, by UOp: a set flag decides for the graph above it (true wins a tie).
  absl::flat_hash_map<const UOp*, bool> flags;
  for (const std::shared_ptr<TensorNode>& n : LiveNodes()) {
    if (!n->status.ok() || !n->uop || !n->requires_grad.has_value()) continue;
    bool& flag = flags[n->uop.get()];
    flag = flag || *n->requires_grad;
  }
  if (flags.empty()) return false;
  std::vector<const UOp*> stack = {t.uop().get()};
  absl::flat_hash_set<const UOp*> seen = {t.uop().get()};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (auto it = flags.find(u); it != flags.end()) {
      if (it->second) return true;
      continue;
    }
    if (u->op() == Ops::DETACH) continue;
    for (const UOpPtr& s : u->src()) {
      if (seen.insert(s.get()).second) stack.push_back(s.get());
    }
  }
  return false;
}

Tensor Tensor::Assign(const Operand& x) const {
  UOPC_TENSOR_PROPAGATE(this);
  Tensor value = x.is_tensor() ? x.tensor() : Full(Shape(), x.scalar(), dtype(), Device());
  UOPC_TENSOR_PROPAGATE(&value);
  if (value.uop() == uop()) return *this;  // assigning a tensor to itself does nothing
  auto mismatch = [](absl::string_view what, const std::string& a, const std::string& b) {
    return tensor_internal::Error("Assign",
                                  absl::StrCat(what, " mismatch: the tensor's is ", a, ", the value's ", b));
  };
  if (value.SymShape() != SymShape()) {
    return mismatch("shape", TupleString(SymShape()), TupleString(value.SymShape()));
  }
  if (value.Device() != Device()) return mismatch("device", Device(), value.Device());
  if (value.dtype() != dtype()) return mismatch("dtype", dtype().ToString(), value.dtype().ToString());
  if (value.requires_grad() == true) {
    return tensor_internal::Error("Assign", "the value requires grad (assign its Detach())");
  }
  SetUOp(UOp::New(Ops::ASSIGN, dtype(), {uop(), value.uop()}));
  return *this;
}

}  // namespace uopc
