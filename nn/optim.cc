// tinygrad's optimizers (nn/optim.py): each update is the graph tinygrad builds, written with Assign.
#include "nn/optim.h"

#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "uop/status_macros.h"

namespace uopc::nn {
namespace {

// Appends `t` unless the same tensor (handle) is already there (tinygrad's dedup).
void AddUnique(std::vector<Tensor>& list, const Tensor& t) {
  for (const Tensor& o : list) {
    if (o.Is(t)) return;
  }
  list.push_back(t);
}

// `t.Assign(x)`, as a Status.
absl::Status AssignTo(const Tensor& t, const Tensor& x, absl::string_view what) {
  Tensor assigned = t.Assign(x);
  if (!assigned.ok()) {
    return absl::Status(assigned.status().code(),
                        absl::StrCat("optimizer step: ", what, ": ", assigned.status().message()));
  }
  return absl::OkStatus();
}

// A trust ratio: a tensor, or the Python float 1.0 tinygrad multiplies by when there is none.
using Ratio = std::variant<Tensor, double>;
Tensor MulRatio(const Tensor& x, const Ratio& r) {
  return std::holds_alternative<Tensor>(r) ? x * std::get<Tensor>(r) : x * std::get<double>(r);
}

}  // namespace

// ---- Optimizer ----

Optimizer::Optimizer(const std::vector<Tensor>& params, double lr) {
  for (const Tensor& p : params) {
    if (!p.requires_grad().has_value()) p.RequiresGrad(true);
  }
  for (const Tensor& p : params) {
    if (p.requires_grad().value_or(false)) {
      AddUnique(params_, p);
    } else {
      AddUnique(buffers_, p);
    }
  }
  if (params_.empty()) {
    status_ = absl::InvalidArgumentError("optimizer: no parameter wants a gradient");
    lr_ = Tensor::FromError(status_);
    return;
  }
  lr_ = Tensor::Literal(std::vector<double>{lr}, dtypes::kFloat32, params_[0].Device()).RequiresGrad(false);
}

void Optimizer::ZeroGrad() {
  for (const Tensor& p : params_) p.SetGrad(std::nullopt);
}

absl::StatusOr<std::vector<Tensor>> Optimizer::ScheduleStep() {
  UOPC_RETURN_IF_ERROR(status_);
  if (!Tensor::Training()) {
    return absl::FailedPreconditionError(
        "optimizer step: Tensor::Training() is false; step inside a Tensor::Train scope");
  }
  std::vector<Tensor> grads;
  for (size_t i = 0; i < params_.size(); ++i) {
    std::optional<Tensor> g = params_[i].Grad();
    if (!g.has_value()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "optimizer step: parameter ", i, " of shape (", absl::StrJoin(params_[i].Shape(), ", "),
          ") has no gradient (call Backward on a loss that uses it)"));
    }
    grads.push_back(*g);
  }
  UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> out, ScheduleStepWithGrads(grads));
  out.insert(out.end(), params_.begin(), params_.end());
  out.insert(out.end(), buffers_.begin(), buffers_.end());
  return out;
}

absl::Status Optimizer::Step() {
  UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> tensors, ScheduleStep());
  return Tensor::RealizeAll(tensors);
}

// ---- LARS and SGD ----

LARS::LARS(const std::vector<Tensor>& params, const LARSOptions& options)
    : Optimizer(params, options.lr), options_(options) {
  if (!status_.ok() || options_.momentum == 0) return;
  for (const Tensor& t : params_) {
    momentum_buffers_.push_back(Tensor::Zeros(t.Shape(), t.dtype(), t.Device()).RequiresGrad(false));
  }
}

absl::StatusOr<std::vector<Tensor>> LARS::ScheduleStepWithGrads(const std::vector<Tensor>& grads) {
  const LARSOptions& o = options_;
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& t = params_[i];
    Tensor g = grads[i];
    Ratio r = 1.0;
    if (o.tcoef != 0) {
      Tensor r1 = t.Detach().Square().Sum().Sqrt();
      Tensor r2 = g.Square().Sum().Sqrt();
      r = (r1 > 0).Where((r2 > 0).Where(o.tcoef * r1 / (r2 + o.weight_decay * r1), 1.0), 1.0);
    }
    g = g + o.weight_decay * t.Detach();
    if (o.classic) g = MulRatio(g, r) * lr_;
    if (o.momentum != 0) {
      // The buffer is zero before the first step, so no first-step case is needed.
      const Tensor& b = momentum_buffers_[i];
      UOPC_RETURN_IF_ERROR(AssignTo(b, o.momentum * b.Contiguous() + g, "momentum buffer"));
      g = o.nesterov ? g + o.momentum * b : b;
    }
    if (!o.classic) g = MulRatio(g, r) * lr_;
    UOPC_RETURN_IF_ERROR(AssignTo(t, (t.Detach() - g).Cast(t.dtype()), "parameter"));
  }
  return momentum_buffers_;
}

SGD::SGD(const std::vector<Tensor>& params, const SGDOptions& options)
    : LARS(params, LARSOptions{.lr = options.lr,
                               .momentum = options.momentum,
                               .weight_decay = options.weight_decay,
                               .nesterov = options.nesterov,
                               .classic = options.classic,
                               .tcoef = 0.0}) {}

// ---- LAMB, Adam and AdamW ----

LAMB::LAMB(const std::vector<Tensor>& params, const LAMBOptions& options)
    : Optimizer(params, options.lr), options_(options) {
  if (!status_.ok()) return;
  const std::string device = params_[0].Device();
  b1_t_ = Tensor::Ones({1}, dtypes::kFloat32, device).RequiresGrad(false).Contiguous();
  b2_t_ = Tensor::Ones({1}, dtypes::kFloat32, device).RequiresGrad(false).Contiguous();
  for (const Tensor& t : params_) {
    m_.push_back(Tensor::Zeros(t.Shape(), dtypes::kFloat32, t.Device()).RequiresGrad(false).Contiguous());
    v_.push_back(Tensor::Zeros(t.Shape(), dtypes::kFloat32, t.Device()).RequiresGrad(false).Contiguous());
  }
}

absl::StatusOr<std::vector<Tensor>> LAMB::ScheduleStepWithGrads(const std::vector<Tensor>& grads) {
  const LAMBOptions& o = options_;
  UOPC_RETURN_IF_ERROR(AssignTo(b1_t_, b1_t_ * o.b1, "b1^t"));
  UOPC_RETURN_IF_ERROR(AssignTo(b2_t_, b2_t_ * o.b2, "b2^t"));
  for (size_t i = 0; i < params_.size(); ++i) {
    const Tensor& t = params_[i];
    const Tensor& g = grads[i];
    UOPC_RETURN_IF_ERROR(AssignTo(m_[i], o.b1 * m_[i] + (1.0 - o.b1) * g, "first moment"));
    UOPC_RETURN_IF_ERROR(AssignTo(v_[i], o.b2 * v_[i] + (1.0 - o.b2) * (g * g), "second moment"));
    Tensor m_hat = m_[i] / (1.0 - b1_t_);
    Tensor v_hat = v_[i] / (1.0 - b2_t_);
    Tensor up = (m_hat / (v_hat.Sqrt() + o.eps)) + o.weight_decay * t.Detach();
    Ratio r = 1.0;
    if (!o.adam) {
      Tensor r1 = t.Detach().Square().Sum().Sqrt();
      Tensor r2 = up.Square().Sum().Sqrt();
      r = (r1 > 0).Where((r2 > 0).Where(r1 / r2, 1.0), 1.0);
    }
    UOPC_RETURN_IF_ERROR(AssignTo(t, (t.Detach() - MulRatio(lr_, r) * up).Cast(t.dtype()), "parameter"));
  }
  std::vector<Tensor> state = {b1_t_, b2_t_};
  state.insert(state.end(), m_.begin(), m_.end());
  state.insert(state.end(), v_.begin(), v_.end());
  return state;
}

Adam::Adam(const std::vector<Tensor>& params, const AdamOptions& options)
    : LAMB(params, LAMBOptions{.lr = options.lr,
                               .b1 = options.b1,
                               .b2 = options.b2,
                               .eps = options.eps,
                               .weight_decay = 0.0,
                               .adam = true}) {}

AdamW::AdamW(const std::vector<Tensor>& params, const AdamWOptions& options)
    : LAMB(params, LAMBOptions{.lr = options.lr,
                               .b1 = options.b1,
                               .b2 = options.b2,
                               .eps = options.eps,
                               .weight_decay = options.weight_decay,
                               .adam = true}) {}

// ---- OptimizerGroup ----

OptimizerGroup::OptimizerGroup(std::vector<Optimizer*> optimizers) : optimizers_(std::move(optimizers)) {
  lr_ = Tensor::FromError(absl::InvalidArgumentError(
      "OptimizerGroup has no single learning rate; use the lr() of one of its optimizers"));
  for (size_t i = 0; i < optimizers_.size(); ++i) {
    if (optimizers_[i] == nullptr) {
      status_ = absl::InvalidArgumentError(absl::StrCat("OptimizerGroup: optimizer ", i, " is null"));
      return;
    }
    if (!optimizers_[i]->status().ok()) {
      status_ = absl::Status(
          optimizers_[i]->status().code(),
          absl::StrCat("OptimizerGroup: optimizer ", i, ": ", optimizers_[i]->status().message()));
      return;
    }
    params_.insert(params_.end(), optimizers_[i]->params().begin(), optimizers_[i]->params().end());
    buffers_.insert(buffers_.end(), optimizers_[i]->buffers().begin(), optimizers_[i]->buffers().end());
  }
}

void OptimizerGroup::ZeroGrad() {
  if (!status_.ok()) return;
  for (Optimizer* o : optimizers_) o->ZeroGrad();
}

absl::StatusOr<std::vector<Tensor>> OptimizerGroup::ScheduleStep() {
  UOPC_RETURN_IF_ERROR(status_);
  std::vector<Tensor> out;
  for (size_t i = 0; i < optimizers_.size(); ++i) {
    absl::StatusOr<std::vector<Tensor>> step = optimizers_[i]->ScheduleStep();
    if (!step.ok()) {
      return absl::Status(step.status().code(),
                          absl::StrCat("OptimizerGroup: optimizer ", i, ": ", step.status().message()));
    }
    out.insert(out.end(), step->begin(), step->end());
  }
  return out;
}

absl::StatusOr<std::vector<Tensor>> OptimizerGroup::ScheduleStepWithGrads(const std::vector<Tensor>& grads) {
  return absl::InternalError("OptimizerGroup::ScheduleStepWithGrads is not used");
}

}  // namespace uopc::nn
