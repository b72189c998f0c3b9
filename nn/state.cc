// tinygrad's nn.state for C++ modules: state dicts, parameters and strict loading.
#include "nn/state.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "uop/util.h"

namespace uopc::nn {

void StateDict::Set(std::string name, Tensor tensor) {
  auto [it, inserted] = index_.try_emplace(name, entries_.size());
  if (inserted) {
    entries_.emplace_back(std::move(name), std::move(tensor));
  } else {
    entries_[it->second].second = std::move(tensor);
  }
}

const Tensor* StateDict::Find(absl::string_view name) const {
  auto it = index_.find(name);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

StateDict GetStateDict(const Module& model, const std::string& prefix) {
  StateDict out;
  std::string p = prefix;
  if (!p.empty() && p.back() != '.') p += '.';
  StateCollector collector(&out, p);
  model.CollectState(collector);
  return out;
}

std::vector<Tensor> GetParameters(const StateDict& state) {
  std::vector<Tensor> out;
  out.reserve(state.size());
  for (const auto& [name, tensor] : state) out.push_back(tensor);
  return out;
}

std::vector<Tensor> GetParameters(const Module& model) { return GetParameters(GetStateDict(model)); }

absl::Status LoadStateDict(const Module& model, const StateDict& state, const LoadOptions& options) {
  return LoadStateDict(GetStateDict(model), state, options);
}

absl::Status LoadStateDict(const StateDict& model_state, const StateDict& state, const LoadOptions& options) {
  std::vector<std::string> missing, unexpected, mismatched;
  for (const auto& [name, tensor] : model_state) {
    const Tensor* source = state.Find(name);
    if (source == nullptr) {
      missing.push_back(name);
      continue;
    }
    if (!source->ok()) {
      return absl::InvalidArgumentError(absl::StrCat("LoadStateDict: the tensor for \"", name,
                                                     "\" has an error: ", source->status().message()));
    }
    if (source->Shape() != tensor.Shape()) {
      mismatched.push_back(absl::StrCat("\"", name, "\" is ", TupleString(source->Shape()),
                                        " in the state dict but ", TupleString(tensor.Shape()),
                                        " in the model"));
    }
  }
  for (const auto& [name, tensor] : state) {
    if (!model_state.Contains(name)) unexpected.push_back(name);
  }
  std::vector<std::string> problems;
  if (!mismatched.empty())
    problems.push_back(absl::StrCat("shape mismatch: ", absl::StrJoin(mismatched, "; ")));
  if (options.strict && !missing.empty()) {
    problems.push_back(absl::StrCat("missing keys: ", absl::StrJoin(missing, ", ")));
  }
  if (options.strict && !unexpected.empty()) {
    problems.push_back(absl::StrCat("unexpected keys: ", absl::StrJoin(unexpected, ", ")));
  }
  if (!problems.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("LoadStateDict: ", absl::StrJoin(problems, "; ")));
  }
  std::vector<Tensor> loaded;
  for (const auto& [name, tensor] : model_state) {
    const Tensor* source = state.Find(name);
    if (source == nullptr) continue;
    // tinygrad's Tensor.replace: the model's handle takes the source's graph.
    tensor.SetUOp(source->To(tensor.Device()).uop());
    loaded.push_back(tensor);
  }
  if (options.realize && !loaded.empty()) return Tensor::RealizeAll(loaded);
  return absl::OkStatus();
}

}  // namespace uopc::nn
