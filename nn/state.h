// Named tensors of a model: tinygrad's nn.state (get_state_dict, get_parameters, load_state_dict).
//
// A StateDict maps dotted names ("conv.weight", "layers.0.bias") to Tensors, in the order the model lists
// them. A Tensor is a shared handle, so the entries of a state dict are the model's own tensors: loading into
// one replaces what the model holds. Modules list their tensors through `Module::CollectState`, the C++
// stand-in for tinygrad's walk over Python attributes; a model made of modules lists its children by name:
//
//   struct Net : nn::Module {
//     nn::Linear l1{784, 128}, l2{128, 10};
//     void CollectState(nn::StateCollector& state) const override {
//       state.Add("l1", l1);
//       state.Add("l2", l2);
//     }
//   };
//   nn::StateDict sd = nn::GetStateDict(net);  // l1.weight, l1.bias, l2.weight, l2.bias
#ifndef UOPC_NN_STATE_H_
#define UOPC_NN_STATE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
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

class Module;

// What a module's CollectState writes into: it prefixes names with the path of the module being visited.
class StateCollector {
 public:
  explicit StateCollector(StateDict* out, std::string prefix = "") : out_(out), prefix_(std::move(prefix)) {}
  // A tensor of this module; an absent optional tensor (a bias turned off) is skipped, as tinygrad skips
  // None.
  void Add(absl::string_view name, const Tensor& tensor);
  void Add(absl::string_view name, const std::optional<Tensor>& tensor);
  // A child module: its tensors are listed as "name.<its names>".
  void Add(absl::string_view name, const Module& child);
  // A list of child modules or tensors: "name.0.<...>", "name.1.<...>" (tinygrad's walk over lists).
  template <typename T>
  void AddList(absl::string_view name, const std::vector<T>& items) {
    for (size_t i = 0; i < items.size(); ++i) Add(std::string(name) + "." + std::to_string(i), items[i]);
  }

 private:
  StateDict* out_;
  std::string prefix_;
};

// A layer or a model: anything that lists named tensors.
class Module {
 public:
  virtual ~Module() = default;
  virtual void CollectState(StateCollector& state) const = 0;
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
