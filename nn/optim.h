// Optimizers: tinygrad v0.10.3's nn/optim.py (SGD, LARS, Adam, AdamW, LAMB, OptimizerGroup).
//
// An optimizer holds the parameters that want gradients (a parameter whose requires_grad is unset is marked,
// as tinygrad does; one set to false is a buffer, realized with each step but not updated) and its own state
// (momentum buffers, moment estimates). A training step is
//
//   Tensor::Train train;        // optimizers step only in training mode, as tinygrad's
//   opt.ZeroGrad();
//   Tensor loss = ...;
//   loss.Backward();
//   opt.Step();                 // one realize: the parameter updates are Assigns, as in tinygrad
//
// `ScheduleStep()` gives the tensors a step realizes without realizing them, so a caller can realize them
// with the loss in one schedule. Every update builds tinygrad's graph, so the kernels are tinygrad's.
#ifndef UOPC_NN_OPTIM_H_
#define UOPC_NN_OPTIM_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace uopc::nn {

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  // Clears the gradient of every parameter.
  virtual void ZeroGrad();
  // Realizes ScheduleStep().
  absl::Status Step();
  // The updated parameters, the optimizer's state and the buffers, unrealized. An error outside training
  // mode, or when a parameter has no gradient (Backward not called, or the loss does not depend on it).
  virtual absl::StatusOr<std::vector<Tensor>> ScheduleStep();
  // An error in the constructor's arguments (no parameter that wants gradients), or OK.
  const absl::Status& status() const { return status_; }

  const std::vector<Tensor>& params() const { return params_; }
  const std::vector<Tensor>& buffers() const { return buffers_; }
  // The learning rate: a (1,) float32 tensor on the parameters' device; assign to it to change it.
  const Tensor& lr() const { return lr_; }

 protected:
  Optimizer(const std::vector<Tensor>& params, double lr);
  // For OptimizerGroup, which holds no parameters of its own.
  Optimizer() = default;
  // Assigns the updates for `grads` (one per parameter) and returns the optimizer's state tensors.
  virtual absl::StatusOr<std::vector<Tensor>> ScheduleStepWithGrads(const std::vector<Tensor>& grads) = 0;

  std::vector<Tensor> params_, buffers_;
  Tensor lr_;
  absl::Status status_;
};

struct LARSOptions {
  double lr = 0.001;
  double momentum = 0.9;
  double weight_decay = 1e-4;
  bool nesterov = false;
  // Classic momentum scales the gradient by the learning rate before the momentum; otherwise after it.
  bool classic = true;
  // The trust coefficient of the layer-wise rate; 0 turns it off (plain SGD).
  double tcoef = 0.001;
};

// Layer-wise Adaptive Rate Scaling with momentum and weight decay (tinygrad's LARS).
class LARS : public Optimizer {
 public:
  LARS(const std::vector<Tensor>& params, const LARSOptions& options = {});
  const LARSOptions& options() const { return options_; }

 protected:
  absl::StatusOr<std::vector<Tensor>> ScheduleStepWithGrads(const std::vector<Tensor>& grads) override;

 private:
  LARSOptions options_;
  std::vector<Tensor> momentum_buffers_;
};

struct SGDOptions {
  double lr = 0.001;
  double momentum = 0.0;
  double weight_decay = 0.0;
  bool nesterov = false;
  bool classic = false;
};

// Stochastic gradient descent with optional momentum, Nesterov momentum and weight decay: tinygrad's SGD,
// which is LARS without the trust ratio.
class SGD : public LARS {
 public:
  SGD(const std::vector<Tensor>& params, const SGDOptions& options = {});
};

struct LAMBOptions {
  double lr = 0.001;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-6;
  double weight_decay = 0.0;
  // Adam's update (no trust ratio).
  bool adam = false;
};

// LAMB (tinygrad's LAMB; Adam and AdamW are LAMB with adam set).
class LAMB : public Optimizer {
 public:
  LAMB(const std::vector<Tensor>& params, const LAMBOptions& options = {});
  const LAMBOptions& options() const { return options_; }

 protected:
  absl::StatusOr<std::vector<Tensor>> ScheduleStepWithGrads(const std::vector<Tensor>& grads) override;

 private:
  LAMBOptions options_;
  Tensor b1_t_, b2_t_;  // b1^t and b2^t, for the bias corrections
  std::vector<Tensor> m_, v_;
};

struct AdamOptions {
  double lr = 0.001;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
};

class Adam : public LAMB {
 public:
  Adam(const std::vector<Tensor>& params, const AdamOptions& options = {});
};

struct AdamWOptions {
  double lr = 0.001;
  double b1 = 0.9;
  double b2 = 0.999;
  double eps = 1e-8;
  double weight_decay = 0.01;
};

// Adam with decoupled weight decay.
class AdamW : public LAMB {
 public:
  AdamW(const std::vector<Tensor>& params, const AdamWOptions& options = {});
};

// Several optimizers stepped as one (tinygrad's OptimizerGroup), e.g. different learning rates or algorithms
// for different parts of a model:
//
//   nn::SGD body(body_params, {.lr = 0.01});
//   nn::Adam head(head_params, {.lr = 1e-3});
//   nn::OptimizerGroup opt({&body, &head});
//   opt.ZeroGrad(); loss.Backward(); opt.Step();  // one realize for both
//
// The group does not own its optimizers: they must outlive it. params() and buffers() are theirs in order
// (not deduplicated, as tinygrad's), ScheduleStep() is their ScheduleSteps one after another. The group has
// no single learning rate: lr() is an error tensor; use group[i].lr().
class OptimizerGroup : public Optimizer {
 public:
  explicit OptimizerGroup(std::vector<Optimizer*> optimizers);

  Optimizer& operator[](size_t i) const { return *optimizers_[i]; }
  size_t size() const { return optimizers_.size(); }

  void ZeroGrad() override;
  absl::StatusOr<std::vector<Tensor>> ScheduleStep() override;

 protected:
  // Not used: ScheduleStep asks each optimizer.
  absl::StatusOr<std::vector<Tensor>> ScheduleStepWithGrads(const std::vector<Tensor>& grads) override;

 private:
  std::vector<Optimizer*> optimizers_;
};

}  // namespace uopc::nn

#endif  // UOPC_NN_OPTIM_H_
