// How modules list their tensors: the collector adds each under the path of the module being visited.
#include "nn/module.h"

#include <optional>

#include "absl/strings/str_cat.h"
#include "nn/state.h"

namespace uopc::nn {

void StateCollector::Add(absl::string_view name, const Tensor& tensor) {
  out_->Set(absl::StrCat(prefix_, name), tensor);
}

void StateCollector::Add(absl::string_view name, const std::optional<Tensor>& tensor) {
  if (tensor.has_value()) Add(name, *tensor);
}

void StateCollector::Add(absl::string_view name, const Module& child) {
  StateCollector nested(out_, absl::StrCat(prefix_, name, "."));
  child.CollectState(nested);
}

}  // namespace uopc::nn
