// Named tensors of a model: tinygrad's nn.state (get_state_dict, get_parameters, load_state_dict).
//
// A StateDict maps dotted names ("conv.weight", "layers.0.bias") to Tensors, in the order the model lists
// them. A Tensor is a shared handle, so the entries of a state dict are the model's own tensors: loading into
// one replaces what the model holds. The names of a model's tensors come from its modules (nn/module.h):
//
//   nn::StateDict sd = nn::GetStateDict(net);  // nn/module.h's Net: l1.weight, l1.bias, l2.weight, l2.bias
#ifndef UOPC_NN_STATE_H_
#define UOPC_NN_STATE_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "nn/module.h"
#include "tensor/tensor.h"

namespace uopc::nn {

// Dotted names to tensors, in insertion order (a Python dict).
class StateDict {
 public:
  using Entry = std::pair<std::string, Tensor>;
  // Adds `name`, or replaces the tensor of an existing name in place (keeping its position), as dict[k] = v.
  void Set(std::string name, Tensor tensor);
  // The tensor of `name`, or nullptr.
  const Tensor* Find(absl::string_view name) const;
  bool Contains(absl::string_view name) const { return Find(name) != nullptr; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  std::vector<Entry>::const_iterator begin() const { return entries_.begin(); }
  std::vector<Entry>::const_iterator end() const { return entries_.end(); }
  const std::vector<Entry>& entries() const { return entries_; }

 private:
  std::vector<Entry> entries_;
  absl::flat_hash_map<std::string, size_t> index_;
};

// tinygrad's get_state_dict: every tensor of `model`, named by its path, with `prefix` in front.
StateDict GetStateDict(const Module& model, const std::string& prefix = "");
// tinygrad's get_parameters: the tensors of the state dict (every tensor, trainable or not; the optimizers
// pick the ones that want gradients).
std::vector<Tensor> GetParameters(const Module& model);
std::vector<Tensor> GetParameters(const StateDict& state);

struct LoadOptions {
  // A name of the model missing from `state`, or a name of `state` the model does not have, is an error
  // (tinygrad's strict errors only on missing names). When false, missing names keep their tensors and
  // unexpected ones are ignored.
  bool strict = true;
  // Realize each loaded tensor on its device (tinygrad's realize=True).
  bool realize = true;
};

// tinygrad's load_state_dict: each tensor of `model` takes the value of the entry of the same name in
// `state` (copied to the model tensor's device). Shapes must match. The check is done for every name before
// anything is replaced, so an error leaves the model as it was; the message names every missing and
// unexpected key and every shape mismatch.
absl::Status LoadStateDict(const Module& model, const StateDict& state, const LoadOptions& options = {});
absl::Status LoadStateDict(const StateDict& model_state, const StateDict& state,
                           const LoadOptions& options = {});

}  // namespace uopc::nn

#endif  // UOPC_NN_STATE_H_
