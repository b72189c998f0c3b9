// The base class of layers and models: a Module lists its named tensors through `CollectState`, the C++
// stand-in for tinygrad's walk over a model's Python attributes. nn/state.h builds state dicts from it.
//
// A model made of modules lists its children by name; their tensors are named by path:
//
//   struct Net : nn::Module {
//     nn::Linear l1{784, 128}, l2{128, 10};
//     void CollectState(nn::StateCollector& state) const override {
//       state.Add("l1", l1);
//       state.Add("l2", l2);
//     }
//   };
//   nn::StateDict sd = nn::GetStateDict(net);  // l1.weight, l1.bias, l2.weight, l2.bias
#ifndef UOPC_NN_MODULE_H_
#define UOPC_NN_MODULE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "tensor/tensor.h"

namespace uopc::nn {

class Module;
class StateDict;

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

}  // namespace uopc::nn

#endif  // UOPC_NN_MODULE_H_
