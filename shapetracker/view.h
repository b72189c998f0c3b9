// View: one strided, offset, optionally masked window onto a flat buffer (tinygrad v0.10.3's View).
//
// Position (i0, ..., in-1) of a view reads element `offset + sum(ik * strides[k])` of the buffer when every
// ik lies in [mask[k].first, mask[k].second), and reads padding (zero) otherwise. Movement ops (reshape,
// permute, expand, pad, shrink, flip) return new views without touching data; `Merge` composes two views into
// one when it can. Views are values: created only through `Create`, which canonicalizes (stride 0 on size-1
// axes, no-op masks dropped, axes masked to a single index get stride 0), so equal views compare equal.
//
// Invalid arguments (wrong rank, a size change in reshape, a non-permutation, expanding an axis that is not
// 1, a shrink outside the shape, negative sizes or pads) give an InvalidArgument Status naming the op, the
// argument and the shape. A reshape that is valid but cannot be expressed by one view gives nullopt; the
// ShapeTracker then pushes a new view.
#ifndef UOPC_SHAPETRACKER_VIEW_H_
#define UOPC_SHAPETRACKER_VIEW_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "shapetracker/sint.h"
#include "uop/uop.h"

namespace uopc {

// [begin, end) per axis: a pad's (before, after) amounts, a shrink's window, or a view's valid region.
using PairVec = absl::InlinedVector<SintPair, 6>;

// Row-major strides for `shape`, canonicalized (tinygrad's strides_for_shape).
SintVec StridesForShape(absl::Span<const Sint> shape);
// The position of flat `offset` on each axis of `shape` (tinygrad's unravel).
SintVec Unravel(absl::Span<const Sint> shape, const Sint& offset);

class View {
 public:
  // tinygrad's View.create. Errors on negative sizes or mismatched ranks.
  static absl::StatusOr<View> Create(SintVec shape, std::optional<SintVec> strides = std::nullopt,
                                     Sint offset = 0, std::optional<PairVec> mask = std::nullopt);

  // A view with exactly these fields, not canonicalized (for parsing tinygrad's printed views, which need not
  // be canonical). Errors on negative sizes or mismatched ranks.
  static absl::StatusOr<View> FromFields(SintVec shape, SintVec strides, Sint offset,
                                         std::optional<PairVec> mask, bool contiguous);

  const SintVec& shape() const { return shape_; }
  const SintVec& strides() const { return strides_; }
  const Sint& offset() const { return offset_; }
  const std::optional<PairVec>& mask() const { return mask_; }
  bool contiguous() const { return contiguous_; }
  // The number of positions (symbolic dimensions count at their maximum).
  int64_t Size() const;

  // nullopt: valid, but not expressible as one view.
  absl::StatusOr<std::optional<View>> Reshape(absl::Span<const Sint> new_shape) const;
  absl::StatusOr<View> Permute(absl::Span<const int64_t> order) const;
  absl::StatusOr<View> Expand(absl::Span<const Sint> new_shape) const;
  absl::StatusOr<View> Pad(absl::Span<const SintPair> before_after) const;
  absl::StatusOr<View> Shrink(absl::Span<const SintPair> begin_end) const;
  // Extra entries past the rank are accepted when they are all false (tinygrad ignores them).
  absl::StatusOr<View> Flip(absl::Span<const bool> flip_axis) const;

  // The single view equivalent to applying `*this` (the view underneath) and then `top` on its output
  // (tinygrad's `self + top`); nullopt when no single view is.
  std::optional<View> Merge(const View& top) const;
  // The view that undoes this one, for views made of permutes, flips, reshapes and shrinks; nullopt
  // otherwise.
  std::optional<View> Invert(absl::Span<const Sint> out_shape) const;
  // The same view with mergeable axes merged (fewest dimensions).
  View Minify() const;

  // (index, valid) as int/bool UOps of the positions `idxs` (default: RANGE UOps, one per axis, axis k
  // ranging over shape[k]); `valid` is and-ed with `valid_in` (default: true).
  std::pair<UOpPtr, UOpPtr> ToIndexedUops(std::optional<absl::Span<const UOpPtr>> idxs = std::nullopt,
                                          UOpPtr valid_in = nullptr) const;

  // The DEFINE_VAR / BIND nodes used anywhere in the view, in first-seen order.
  std::vector<UOpPtr> Vars() const;
  // The view with every BIND replaced by its DEFINE_VAR, and the bound values by variable.
  std::pair<View, absl::flat_hash_map<UOpPtr, int64_t>> Unbind() const;

  // `View(shape=(3,), strides=(1,), offset=0, mask=None, contiguous=True)`, as tinygrad prints it.
  std::string ToString() const;

  friend bool operator==(const View& a, const View& b);
  friend bool operator!=(const View& a, const View& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const View& v) {
    h = H::combine(std::move(h), v.shape_, v.strides_, v.offset_, v.contiguous_, v.mask_.has_value());
    if (v.mask_) h = H::combine(std::move(h), *v.mask_);
    return h;
  }

 private:
  View() = default;
  SintVec shape_;
  SintVec strides_;
  Sint offset_;
  std::optional<PairVec> mask_;
  bool contiguous_ = true;
};

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_VIEW_H_
