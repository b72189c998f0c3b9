// How one shape groups the axes of another (tinygrad's get_contraction and get_contraction_with_reduce): the
// lowerer uses it to split or merge launch dims, the scheduler to move views across reductions.
#ifndef UOPC_SHAPETRACKER_CONTRACTION_H_
#define UOPC_SHAPETRACKER_CONTRACTION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "shapetracker/sint.h"

namespace uopc {

// For each dim of `new_shape`, the axes of `old_shape` whose product it is (ones right-justified), or nullopt
// when `new_shape` is not such a grouping. Symbolic sizes, and products of them, match when they are the
// same expression.
std::optional<std::vector<std::vector<int64_t>>> GetContraction(absl::Span<const int64_t> old_shape,
                                                                absl::Span<const int64_t> new_shape);
std::optional<std::vector<std::vector<int64_t>>> GetContraction(absl::Span<const Sint> old_shape,
                                                                absl::Span<const Sint> new_shape);

// GetContraction where every axis of `reduce_axes` (axes of new_shape) gets at least one old axis, borrowing
// a 1 from the following dims; nullopt when there is none to borrow.
std::optional<std::vector<std::vector<int64_t>>> GetContractionWithReduce(
    absl::Span<const int64_t> old_shape, absl::Span<const int64_t> new_shape,
    absl::Span<const int64_t> reduce_axes);
std::optional<std::vector<std::vector<int64_t>>> GetContractionWithReduce(
    absl::Span<const Sint> old_shape, absl::Span<const Sint> new_shape,
    absl::Span<const int64_t> reduce_axes);

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_CONTRACTION_H_
