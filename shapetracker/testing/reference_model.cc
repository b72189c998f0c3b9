#include "shapetracker/testing/reference_model.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// prod(shape), or an error when a dimension is negative or the product exceeds the model's limit.
absl::StatusOr<int64_t> CheckedSize(absl::Span<const int64_t> shape, absl::string_view op) {
  for (int64_t d : shape) {
    if (d < 0)
      return absl::InvalidArgumentError(absl::StrCat(op, ": negative dimension in ", TupleString(shape)));
  }
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t n = 1;
  for (int64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n) || n > ReferenceModel::kMaxElements) {
      return absl::ResourceExhaustedError(
          absl::StrCat(op, ": ", TupleString(shape), " is too large for the model"));
    }
  }
  return n;
}

absl::Status CheckRank(size_t got, size_t want, absl::string_view op, absl::Span<const int64_t> shape) {
  if (got == want) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(op, ": ", got, " arguments for the ", want, " axes of shape ", TupleString(shape)));
}

// Row-major strides of `shape` (plain products, no canonicalization).
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int k = static_cast<int>(shape.size()) - 2; k >= 0; --k) strides[k] = strides[k + 1] * shape[k + 1];
  return strides;
}

// An array of `new_shape` whose entry at coordinates c is source[from(c)], or -1 where `from` gives -1.
std::vector<int64_t> Gather(absl::Span<const int64_t> new_shape, int64_t size,
                            const std::vector<int64_t>& source,
                            const std::function<int64_t(const std::vector<int64_t>&)>& from) {
  std::vector<int64_t> out;
  out.reserve(size);
  std::vector<int64_t> c(new_shape.size(), 0);
  for (int64_t p = 0; p < size; ++p) {
    int64_t src = from(c);
    out.push_back(src < 0 ? -1 : source[src]);
    for (int k = static_cast<int>(c.size()) - 1; k >= 0; --k) {
      if (++c[k] < new_shape[k]) break;
      c[k] = 0;
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<ReferenceModel> ReferenceModel::FromShape(std::vector<int64_t> shape) {
  UOPC_ASSIGN_OR_RETURN(int64_t n, CheckedSize(shape, "from_shape"));
  std::vector<int64_t> index(n);
  for (int64_t i = 0; i < n; ++i) index[i] = i;
  return ReferenceModel(std::move(shape), std::move(index));
}

absl::StatusOr<ReferenceModel> ReferenceModel::Reshape(absl::Span<const int64_t> new_shape) const {
  UOPC_ASSIGN_OR_RETURN(int64_t n, CheckedSize(new_shape, "reshape"));
  if (n != static_cast<int64_t>(index_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("reshape: ", TupleString(new_shape),
                                                   " has a different size than ", TupleString(shape_)));
  }
  return ReferenceModel(std::vector<int64_t>(new_shape.begin(), new_shape.end()), index_);
}

absl::StatusOr<ReferenceModel> ReferenceModel::Permute(absl::Span<const int64_t> order) const {
  UOPC_RETURN_IF_ERROR(CheckRank(order.size(), shape_.size(), "permute", shape_));
  std::vector<bool> seen(order.size(), false);
  for (int64_t a : order) {
    if (a < 0 || a >= static_cast<int64_t>(order.size()) || seen[a]) {
      return absl::InvalidArgumentError(
          absl::StrCat("permute: ", TupleString(order), " is not a permutation"));
    }
    seen[a] = true;
  }
  std::vector<int64_t> new_shape;
  for (int64_t a : order) new_shape.push_back(shape_[a]);
  std::vector<int64_t> strides = RowMajorStrides(shape_);
  std::vector<int64_t> index = Gather(new_shape, index_.size(), index_, [&](const std::vector<int64_t>& c) {
    int64_t src = 0;
    for (size_t k = 0; k < c.size(); ++k) src += c[k] * strides[order[k]];
    return src;
  });
  return ReferenceModel(std::move(new_shape), std::move(index));
}

absl::StatusOr<ReferenceModel> ReferenceModel::Expand(absl::Span<const int64_t> new_shape) const {
  UOPC_RETURN_IF_ERROR(CheckRank(new_shape.size(), shape_.size(), "expand", shape_));
  for (size_t k = 0; k < new_shape.size(); ++k) {
    if (new_shape[k] != shape_[k] && shape_[k] != 1) {
      return absl::InvalidArgumentError(absl::StrCat("expand: cannot expand ", TupleString(shape_), " to ",
                                                     TupleString(new_shape), " (axis ", k, " is not 1)"));
    }
  }
  UOPC_ASSIGN_OR_RETURN(int64_t n, CheckedSize(new_shape, "expand"));
  std::vector<int64_t> strides = RowMajorStrides(shape_);
  std::vector<int64_t> index = Gather(new_shape, n, index_, [&](const std::vector<int64_t>& c) {
    int64_t src = 0;
    for (size_t k = 0; k < c.size(); ++k) src += shape_[k] == 1 ? 0 : c[k] * strides[k];
    return src;
  });
  return ReferenceModel(std::vector<int64_t>(new_shape.begin(), new_shape.end()), std::move(index));
}

absl::StatusOr<ReferenceModel> ReferenceModel::Pad(
    absl::Span<const std::pair<int64_t, int64_t>> before_after) const {
  UOPC_RETURN_IF_ERROR(CheckRank(before_after.size(), shape_.size(), "pad", shape_));
  std::vector<int64_t> new_shape;
  for (size_t k = 0; k < shape_.size(); ++k) {
    auto [b, e] = before_after[k];
    if (b < 0 || e < 0) {
      return absl::InvalidArgumentError(absl::StrCat("pad: negative amount (", b, ", ", e, ") on axis ", k));
    }
    new_shape.push_back(shape_[k] + b + e);
  }
  UOPC_ASSIGN_OR_RETURN(int64_t n, CheckedSize(new_shape, "pad"));
  std::vector<int64_t> strides = RowMajorStrides(shape_);
  std::vector<int64_t> index = Gather(new_shape, n, index_, [&](const std::vector<int64_t>& c) -> int64_t {
    int64_t src = 0;
    for (size_t k = 0; k < c.size(); ++k) {
      int64_t i = c[k] - before_after[k].first;
      if (i < 0 || i >= shape_[k]) return -1;
      src += i * strides[k];
    }
    return src;
  });
  return ReferenceModel(std::move(new_shape), std::move(index));
}

absl::StatusOr<ReferenceModel> ReferenceModel::Shrink(
    absl::Span<const std::pair<int64_t, int64_t>> begin_end) const {
  UOPC_RETURN_IF_ERROR(CheckRank(begin_end.size(), shape_.size(), "shrink", shape_));
  std::vector<int64_t> new_shape;
  for (size_t k = 0; k < shape_.size(); ++k) {
    auto [b, e] = begin_end[k];
    if (!(0 <= b && b <= e && e <= shape_[k])) {
      return absl::InvalidArgumentError(
          absl::StrCat("shrink: [", b, ", ", e, ") is not within axis ", k, " of ", TupleString(shape_)));
    }
    new_shape.push_back(e - b);
  }
  UOPC_ASSIGN_OR_RETURN(int64_t n, CheckedSize(new_shape, "shrink"));
  std::vector<int64_t> strides = RowMajorStrides(shape_);
  std::vector<int64_t> index = Gather(new_shape, n, index_, [&](const std::vector<int64_t>& c) {
    int64_t src = 0;
    for (size_t k = 0; k < c.size(); ++k) src += (c[k] + begin_end[k].first) * strides[k];
    return src;
  });
  return ReferenceModel(std::move(new_shape), std::move(index));
}

absl::StatusOr<ReferenceModel> ReferenceModel::Flip(absl::Span<const bool> flip_axis) const {
  UOPC_RETURN_IF_ERROR(CheckRank(flip_axis.size(), shape_.size(), "flip", shape_));
  std::vector<int64_t> strides = RowMajorStrides(shape_);
  std::vector<int64_t> index = Gather(shape_, index_.size(), index_, [&](const std::vector<int64_t>& c) {
    int64_t src = 0;
    for (size_t k = 0; k < c.size(); ++k) src += (flip_axis[k] ? shape_[k] - 1 - c[k] : c[k]) * strides[k];
    return src;
  });
  return ReferenceModel(shape_, std::move(index));
}

std::string ReferenceModel::ToString() const {
  return absl::StrCat("shape ", TupleString(shape_), ": [", absl::StrJoin(index_, ", "), "]");
}

}  // namespace uopc
