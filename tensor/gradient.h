// Reverse-mode differentiation of tensor-level UOp graphs (tinygrad v0.10.3's gradient.py): the gradient rule
// of each op, and the walk that applies them from a root back to a set of targets. Tensor::Gradient and
// Tensor::Backward are built on it; docs/autograd.md describes the whole.
//
//   UOPC_ASSIGN_OR_RETURN(GradientMap grads, ComputeGradient(loss, one, {w.get(), b.get()}));
//   UOpPtr dw = grads.at(w.get());   // absent when the loss does not depend on w
#ifndef UOPC_TENSOR_GRADIENT_H_
#define UOPC_TENSOR_GRADIENT_H_

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "uop/uop.h"

namespace uopc {

// A node of the forward graph -> the gradient of the root with respect to it. Keys are nodes of the forward
// graph and stay valid while the root lives.
using GradientMap = absl::flat_hash_map<const UOp*, UOpPtr>;

// tinygrad's compute_gradient: `root_grad` (the root's shape) flows back through every op on a path from the
// root to a target, in reverse topological order, stopping at DETACH and ASSIGN; each op hands its sources
// their share by the op's rule, and shares that meet add up. The map holds every node the walk reached. An op
// on the path without a rule is an InvalidArgument naming it.
absl::StatusOr<GradientMap> ComputeGradient(const UOpPtr& root, const UOpPtr& root_grad,
                                            const absl::flat_hash_set<const UOp*>& targets);

}  // namespace uopc

#endif  // UOPC_TENSOR_GRADIENT_H_
