#include "shapetracker/contraction.h"

#include <algorithm>

namespace uopc {
namespace {

// Dim is int64_t or Sint: symbolic sizes and their running products compare structurally, as tinygrad's
// interned UOps do.
template <typename Dim>
std::optional<std::vector<std::vector<int64_t>>> Contraction(absl::Span<const Dim> old_shape,
                                                             absl::Span<const Dim> new_shape) {
  std::vector<Dim> acc_old, acc_new;
  Dim p = 1;
  for (const Dim& d : old_shape) acc_old.push_back(p *= d);
  p = 1;
  for (const Dim& d : new_shape) acc_new.push_back(p *= d);
  std::vector<int64_t> split;
  for (const Dim& acc : acc_new) {
    if (acc == Dim(1)) {
      split.push_back(0);
      continue;
    }
    auto it = std::find(acc_old.begin(), acc_old.end(), acc);
    if (it == acc_old.end()) return std::nullopt;
    split.push_back(it - acc_old.begin() + 1);
  }
  std::vector<std::vector<int64_t>> ret;
  for (size_t i = 0; i < split.size(); ++i) {
    int64_t start = i == 0 ? 0 : split[i - 1];
    int64_t end = i + 1 < split.size() ? split[i] : static_cast<int64_t>(old_shape.size());
    std::vector<int64_t> axes;
    for (int64_t a = start; a < end; ++a) axes.push_back(a);
    ret.push_back(std::move(axes));
  }
  return ret;
}

template <typename Dim>
std::optional<std::vector<std::vector<int64_t>>> ContractionWithReduce(
    absl::Span<const Dim> old_shape, absl::Span<const Dim> new_shape, absl::Span<const int64_t> reduce_axes) {
  std::optional<std::vector<std::vector<int64_t>>> contraction = Contraction(old_shape, new_shape);
  if (!contraction) return std::nullopt;
  std::vector<std::vector<int64_t>>& c = *contraction;
  const size_t n = c.size();
  for (size_t i = 0; i < n; ++i) {
    bool is_reduce =
        std::find(reduce_axes.begin(), reduce_axes.end(), static_cast<int64_t>(i)) != reduce_axes.end();
    if (!is_reduce || !c[i].empty()) continue;
    size_t take_from = i + 1;
    while (take_from < n && c[take_from].empty()) {
      if (new_shape[take_from] != Dim(1)) return std::nullopt;
      ++take_from;
    }
    if (take_from == n || new_shape[take_from] != Dim(1)) return std::nullopt;
    for (size_t j = take_from; j > i; --j) {
      if (c[j].empty()) return std::nullopt;
      c[j - 1] = std::vector<int64_t>(c[j].begin(), c[j].end() - 1);
      c[j] = std::vector<int64_t>(c[j].end() - 1, c[j].end());
    }
  }
  return contraction;
}

}  // namespace

std::optional<std::vector<std::vector<int64_t>>> GetContraction(absl::Span<const int64_t> old_shape,
                                                                absl::Span<const int64_t> new_shape) {
  return Contraction(old_shape, new_shape);
}
std::optional<std::vector<std::vector<int64_t>>> GetContraction(absl::Span<const Sint> old_shape,
                                                                absl::Span<const Sint> new_shape) {
  return Contraction(old_shape, new_shape);
}

std::optional<std::vector<std::vector<int64_t>>> GetContractionWithReduce(
    absl::Span<const int64_t> old_shape, absl::Span<const int64_t> new_shape,
    absl::Span<const int64_t> reduce_axes) {
  return ContractionWithReduce(old_shape, new_shape, reduce_axes);
}
std::optional<std::vector<std::vector<int64_t>>> GetContractionWithReduce(
    absl::Span<const Sint> old_shape, absl::Span<const Sint> new_shape,
    absl::Span<const int64_t> reduce_axes) {
  return ContractionWithReduce(old_shape, new_shape, reduce_axes);
}

}  // namespace uopc
