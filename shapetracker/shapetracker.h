// ShapeTracker: a stack of Views describing how a tensor's positions map onto its buffer (tinygrad v0.10.3).
//
// The first view reads the buffer; each later view reads the output of the one before it. Movement ops change
// only the last view, except a reshape the last view cannot express, which pushes a new view. `Simplify`
// merges adjacent views where one view can do the job. `ToIndexedUops` gives the (index, valid) pair the
// lowerer turns into a load: the buffer index of each position, and whether the position is real (not
// padding), simplified with the symbolic rules and the valid rules (rewrite/valid.h).
//
//   ASSIGN_OR_RETURN(ShapeTracker st, ShapeTracker::FromShape({4, 3}));
//   ASSIGN_OR_RETURN(st, st.Permute({1, 0}));
//   auto [idx, valid] = st.ToIndexedUops();
//
// A ShapeTracker is the arg of a VIEW UOp (ShapeTrackerArg below); its printed form is tinygrad's repr and
// parses back (the parser is registered with the textual IR when this library is linked).
#ifndef UOPC_SHAPETRACKER_SHAPETRACKER_H_
#define UOPC_SHAPETRACKER_SHAPETRACKER_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/hash/hash.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "shapetracker/sint.h"
#include "shapetracker/view.h"
#include "uop/arg.h"
#include "uop/uop.h"

namespace uopc {

class ShapeTracker {
 public:
  // UOPC_CHECKs that `views` is not empty.
  explicit ShapeTracker(std::vector<View> views);
  static absl::StatusOr<ShapeTracker> FromShape(absl::Span<const Sint> shape,
                                                std::optional<SintVec> strides = std::nullopt);

  const std::vector<View>& views() const { return views_; }
  const SintVec& shape() const { return views_.back().shape(); }
  int64_t size() const { return views_.back().Size(); }
  // One view, and that view is the identity.
  bool contiguous() const;
  // One unmasked view with row-major strides (any offset).
  bool consecutive() const;

  absl::StatusOr<ShapeTracker> Reshape(absl::Span<const Sint> new_shape) const;
  absl::StatusOr<ShapeTracker> Permute(absl::Span<const int64_t> order) const;
  absl::StatusOr<ShapeTracker> Expand(absl::Span<const Sint> new_shape) const;
  absl::StatusOr<ShapeTracker> Pad(absl::Span<const SintPair> before_after) const;
  absl::StatusOr<ShapeTracker> Shrink(absl::Span<const SintPair> begin_end) const;
  absl::StatusOr<ShapeTracker> Flip(absl::Span<const bool> flip_axis) const;

  // Merges the last two views while they merge.
  ShapeTracker Simplify() const;
  // `top` applied after this tracker, one view at a time, simplifying as it goes (tinygrad's `self + st`).
  ShapeTracker Compose(const ShapeTracker& top) const;
  std::optional<ShapeTracker> Invert(absl::Span<const Sint> out_shape) const;

  // (index, valid) for positions `idxs` (default: one RANGE per axis).
  std::pair<UOpPtr, UOpPtr> ToIndexedUops(std::optional<absl::Span<const UOpPtr>> idxs = std::nullopt) const;
  // An upper bound on the buffer elements the first view can read (0 for an empty shape).
  int64_t RealSize() const;
  // Per axis: the fixed stride of that axis in the index, or nullopt when it has none (or, unless
  // ignore_valid, when the axis is masked).
  std::vector<std::optional<Sint>> RealStrides(bool ignore_valid = false) const;
  std::vector<int64_t> UnitStrideAxes(bool ignore_valid = false) const;
  bool AxisIsMasked(int64_t axis) const;
  // The shape with the given axes reduced to 1.
  SintVec Reduce(absl::Span<const int64_t> axes) const;

  std::vector<UOpPtr> Vars() const;
  std::pair<ShapeTracker, absl::flat_hash_map<UOpPtr, int64_t>> Unbind() const;

  // `ShapeTracker(views=(View(...),))`
  std::string ToString() const;
  // Parses ToString's form; errors name the column.
  static absl::StatusOr<ShapeTracker> Parse(absl::string_view text);
  // A VIEW UOp whose arg is this tracker.
  UOpPtr ToUOp() const;

  friend bool operator==(const ShapeTracker& a, const ShapeTracker& b) { return a.views_ == b.views_; }
  friend bool operator!=(const ShapeTracker& a, const ShapeTracker& b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, const ShapeTracker& st) {
    return H::combine(std::move(h), st.views_);
  }

 private:
  std::vector<View> views_;
};

// The ArgPayload that carries a ShapeTracker as a UOp arg.
class ShapeTrackerArg : public ArgPayload {
 public:
  static constexpr absl::string_view kTypeName = "ShapeTracker";  // for Arg::payload_as
  explicit ShapeTrackerArg(ShapeTracker st) : st_(std::move(st)) {}
  const ShapeTracker& tracker() const { return st_; }
  absl::string_view type_name() const override { return "ShapeTracker"; }
  size_t Hash() const override;
  bool Equals(const ArgPayload& other) const override;
  std::string ToString() const override { return st_.ToString(); }

 private:
  ShapeTracker st_;
};

// A Sint as one element of a movement op's arg: an int, or a UOpArg payload.
Arg SintToArg(const Sint& s);
// The Sint an element of a movement op's arg holds; an error for anything but an int or a UOpArg.
absl::StatusOr<Sint> SintFromArg(const Arg& a);

// Empties the memo of ToIndexedUops results (tinygrad memoizes views_to_indexed_uops too): for benchmarks
// that time the computation rather than the lookup.
void ClearToIndexedUopsCache();

// The tracker held by a UOp's arg (a VIEW node's), or nullptr.
const ShapeTracker* ShapeTrackerOf(const UOp* u);

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_SHAPETRACKER_H_
