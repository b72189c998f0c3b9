// ReferenceModel: the obviously-correct model that ShapeTracker is tested against.
//
// It materializes what a tracker only describes: for every position of the current shape (row-major), the
// flat index of the element it reads from the original contiguous buffer, or -1 for padding. Each movement
// op moves the entries of that array (a reshape keeps their order, a permute transposes, an expand repeats,
// a pad inserts -1, a shrink slices, a flip reverses) and validates its own arguments the way tinygrad
// does. It shares no code with View or ShapeTracker, so the two can be compared position by position.
//
//   ReferenceModel m = ReferenceModel::FromShape({2, 3}).value();
//   m = m.Permute({1, 0}).value();   // m.index() == {0, 3, 1, 4, 2, 5}
#ifndef UOPC_SHAPETRACKER_TESTING_REFERENCE_MODEL_H_
#define UOPC_SHAPETRACKER_TESTING_REFERENCE_MODEL_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace uopc {

class ReferenceModel {
 public:
  // Models larger than this are refused with ResourceExhausted (the model is for small shapes).
  static constexpr int64_t kMaxElements = int64_t{1} << 24;

  // A contiguous buffer of `shape`: index() is 0, 1, ..., prod(shape) - 1. Errors on negative dimensions.
  static absl::StatusOr<ReferenceModel> FromShape(std::vector<int64_t> shape);

  const std::vector<int64_t>& shape() const { return shape_; }
  // The source index of each position in row-major order, -1 for padding.
  const std::vector<int64_t>& index() const { return index_; }

  // The movement ops; each gives InvalidArgument for arguments tinygrad rejects.
  absl::StatusOr<ReferenceModel> Reshape(absl::Span<const int64_t> new_shape) const;
  absl::StatusOr<ReferenceModel> Permute(absl::Span<const int64_t> order) const;
  absl::StatusOr<ReferenceModel> Expand(absl::Span<const int64_t> new_shape) const;
  absl::StatusOr<ReferenceModel> Pad(absl::Span<const std::pair<int64_t, int64_t>> before_after) const;
  absl::StatusOr<ReferenceModel> Shrink(absl::Span<const std::pair<int64_t, int64_t>> begin_end) const;
  absl::StatusOr<ReferenceModel> Flip(absl::Span<const bool> flip_axis) const;

  // "shape (2, 3): [0, 3, 1, 4, 2, 5]"
  std::string ToString() const;

 private:
  ReferenceModel(std::vector<int64_t> shape, std::vector<int64_t> index)
      : shape_(std::move(shape)), index_(std::move(index)) {}
  std::vector<int64_t> shape_;
  std::vector<int64_t> index_;
};

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_TESTING_REFERENCE_MODEL_H_
