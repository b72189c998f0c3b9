#include "shapetracker/view.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "uop/check.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

SintVec Canonicalize(absl::Span<const Sint> shape, absl::Span<const Sint> strides) {
  SintVec out;
  out.reserve(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) out.push_back(shape[i] == Sint(1) ? Sint(0) : strides[i]);
  return out;
}

bool HasZero(absl::Span<const Sint> shape) {
  return std::any_of(shape.begin(), shape.end(), [](const Sint& s) { return s == Sint(0); });
}

std::string PairsString(absl::Span<const SintPair> pairs) {
  return TupleString(pairs, [](std::string* out, const SintPair& p) {
    absl::StrAppend(out, "(", p.first.ToString(), ", ", p.second.ToString(), ")");
  });
}

std::string MaskString(const std::optional<PairVec>& mask) { return mask ? PairsString(*mask) : "None"; }

// tinygrad's merge_dims: (merged size, stride, merged size without the zero-stride part) per merged block.
struct MergedDim {
  Sint size, stride, real_size;
};
std::vector<MergedDim> MergeDims(absl::Span<const Sint> shape, absl::Span<const Sint> strides,
                                 const std::optional<PairVec>& mask) {
  std::vector<MergedDim> ret;
  if (shape.empty()) return ret;
  ret.push_back({shape[0], strides[0], strides[0] != Sint(0) ? shape[0] : Sint(0)});
  bool merging = mask ? ((*mask)[0].second - (*mask)[0].first) == Sint(1) : shape[0] == Sint(1);
  for (size_t i = 1; i < shape.size(); ++i) {
    const Sint& s = shape[i];
    const Sint& st = strides[i];
    if (s == Sint(1)) continue;
    MergedDim& last = ret.back();
    if (merging || last.stride == s * st) {
      last = {last.size * s, st, merging ? s : last.real_size * s};
    } else {
      ret.push_back({s, st, s});
    }
    merging = mask ? ((*mask)[i].second - (*mask)[i].first) == Sint(1) : s == Sint(1);
  }
  return ret;
}

// tinygrad's _reshape_mask: the mask of the reshaped view, or nullopt when the mask cannot be reshaped.
std::optional<PairVec> ReshapeMask(const std::optional<PairVec>& mask, absl::Span<const Sint> old_shape,
                                   absl::Span<const Sint> new_shape) {
  if (!mask) {
    PairVec out;
    for (const Sint& s : new_shape) out.emplace_back(Sint(0), s);
    return out;
  }
  for (const SintPair& m : *mask) {
    if (!m.first.is_int() || !m.second.is_int()) return std::nullopt;
  }
  // The walk below is integer arithmetic; symbolic shapes with a mask are not reshaped.
  if (!AllInt(old_shape) || !AllInt(new_shape)) return std::nullopt;

  // Reversed iterators with tinygrad's defaults when exhausted.
  size_t mask_pos = mask->size(), old_pos = old_shape.size(), new_pos = new_shape.size();
  auto next_mask = [&]() -> std::pair<int64_t, int64_t> {
    if (mask_pos == 0) return {0, 1};
    --mask_pos;
    return {(*mask)[mask_pos].first.value(), (*mask)[mask_pos].second.value()};
  };
  auto next_old = [&]() -> int64_t { return old_pos == 0 ? 1 : old_shape[--old_pos].value(); };
  auto next_new = [&]() -> int64_t { return new_pos == 0 ? 1 : new_shape[--new_pos].value(); };
  auto floordiv = [](int64_t a, int64_t b) { return FloorDiv(a, b).value(); };
  auto mod = [](int64_t a, int64_t b) { return Mod(a, b).value(); };

  std::vector<std::pair<int64_t, int64_t>> new_mask;
  int64_t curr_stride = 1, old_dim = next_old(), new_dim = next_new();
  std::pair<int64_t, int64_t> m = next_mask();
  while (new_mask.size() < new_shape.size()) {
    auto [l, r] = m;
    int64_t next_stride = new_dim * curr_stride;
    if (next_stride == 0) return std::nullopt;
    if (old_dim == next_stride) {
      new_mask.emplace_back(floordiv(l, curr_stride), floordiv(r - 1, curr_stride) + 1);
      curr_stride = 1;
      old_dim = next_old();
      new_dim = next_new();
      m = next_mask();
    } else if (old_dim > next_stride) {
      if (old_dim % next_stride != 0) return std::nullopt;
      if ((mod(l, next_stride) != 0 || mod(r, next_stride) != 0) &&
          floordiv(l, next_stride) != floordiv(r - 1, next_stride)) {
        return std::nullopt;
      }
      new_mask.emplace_back(floordiv(mod(l, next_stride), curr_stride),
                            floordiv(mod(r - 1, next_stride), curr_stride) + 1);
      curr_stride = next_stride;
      new_dim = next_new();
    } else {
      std::pair<int64_t, int64_t> nm = next_mask();
      if (m != std::make_pair(int64_t{0}, old_dim) && l != r && nm.second - nm.first != 1)
        return std::nullopt;
      m = {nm.first * old_dim + l, (nm.second - 1) * old_dim + r};
      old_dim = old_dim * next_old();
    }
  }
  PairVec out;
  for (size_t i = new_mask.size(); i-- > 0;)
    out.emplace_back(Sint(new_mask[i].first), Sint(new_mask[i].second));
  return out;
}

absl::Status RankError(absl::string_view op, size_t got, absl::Span<const Sint> shape) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": argument has ", got, " dimensions, but the shape ",
                                                 TupleString(shape), " has ", shape.size()));
}

// The DEFINE_VAR / BIND nodes under `u` (tinygrad's UOp.vars()), appended in first-seen order.
void CollectVars(const UOpPtr& u, std::vector<UOpPtr>& out, absl::flat_hash_set<const UOp*>& seen) {
  std::vector<const UOp*> topo = u->Toposort();
  absl::flat_hash_set<const UOp*> bound;
  for (const UOp* x : topo) {
    if (x->op() == Ops::BIND && x->src(0)->op() == Ops::DEFINE_VAR) bound.insert(x->src(0));
  }
  for (const UOp* x : topo) {
    bool is_var = (x->op() == Ops::BIND && x->src(0)->op() == Ops::DEFINE_VAR) ||
                  (x->op() == Ops::DEFINE_VAR && !bound.contains(x));
    if (is_var && seen.insert(x).second) out.push_back(x->ref());
  }
}

}  // namespace

SintVec StridesForShape(absl::Span<const Sint> shape) {
  SintVec strides(shape.size());
  Sint acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = acc;
    acc = acc * shape[i];
  }
  return Canonicalize(shape, strides);
}

SintVec Unravel(absl::Span<const Sint> shape, const Sint& offset) {
  SintVec idxs(shape.size());
  Sint acc = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    idxs[i] = Mod(FloorDiv(offset, acc), shape[i]);
    acc = acc * shape[i];
  }
  return idxs;
}

absl::StatusOr<View> View::Create(SintVec shape, std::optional<SintVec> strides, Sint offset,
                                  std::optional<PairVec> mask) {
  for (const Sint& s : shape) {
    if (s.vmax() < 0 || (s.is_int() && s.value() < 0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("View: negative dimension in shape ", TupleString(shape)));
    }
  }
  if (strides && strides->size() != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat("View: strides ", TupleString(*strides),
                                                   " do not match the rank of shape ", TupleString(shape)));
  }
  if (mask && mask->size() != shape.size()) {
    return absl::InvalidArgumentError(absl::StrCat("View: mask ", MaskString(mask),
                                                   " does not match the rank of shape ", TupleString(shape)));
  }
  View v;
  SintVec st = (strides && !strides->empty()) ? Canonicalize(shape, *strides) : StridesForShape(shape);
  if (HasZero(shape)) {
    v.shape_ = std::move(shape);
    v.strides_ = SintVec(v.shape_.size(), Sint(0));
    v.offset_ = 0;
    v.contiguous_ = true;
    return v;
  }
  if (mask) {
    bool noop = true;
    for (size_t i = 0; i < shape.size(); ++i) {
      if (!((*mask)[i].first == Sint(0) && (*mask)[i].second == shape[i])) noop = false;
    }
    if (noop) mask.reset();
  }
  if (mask) {
    // Axes masked down to one index read one element: stride 0, with the offset moved to that element.
    std::vector<bool> elim(shape.size());
    bool any_elim = false;
    for (size_t i = 0; i < shape.size(); ++i) {
      elim[i] = !Resolve(Lt((*mask)[i].first + 1, (*mask)[i].second));
      any_elim = any_elim || elim[i];
    }
    if (any_elim) {
      bool empty = false;
      for (const SintPair& m : *mask) empty = empty || !Resolve(Lt(m.first, m.second));
      if (empty) {
        st = SintVec(shape.size(), Sint(0));
        offset = 0;
        mask = PairVec(shape.size(), SintPair(Sint(0), Sint(0)));
      }
      for (size_t i = 0; i < shape.size(); ++i) {
        if (elim[i]) {
          offset = offset + st[i] * (*mask)[i].first;
          st[i] = 0;
        }
      }
    }
  }
  v.contiguous_ = offset == Sint(0) && !mask && st == StridesForShape(shape);
  v.shape_ = std::move(shape);
  v.strides_ = std::move(st);
  v.offset_ = std::move(offset);
  v.mask_ = std::move(mask);
  return v;
}

absl::StatusOr<View> View::FromFields(SintVec shape, SintVec strides, Sint offset,
                                      std::optional<PairVec> mask, bool contiguous) {
  for (const Sint& s : shape) {
    if (s.vmax() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("View: negative dimension in shape ", TupleString(shape)));
    }
  }
  if (strides.size() != shape.size() || (mask && mask->size() != shape.size())) {
    return absl::InvalidArgumentError(absl::StrCat("View: strides ", TupleString(strides), " and mask ",
                                                   MaskString(mask), " must match the rank of shape ",
                                                   TupleString(shape)));
  }
  // tinygrad never makes a non-canonical empty view, and the view algebra divides by every dimension.
  if (HasZero(shape) &&
      (strides != SintVec(shape.size(), Sint(0)) || offset != Sint(0) || mask || !contiguous)) {
    return absl::InvalidArgumentError(
        absl::StrCat("View: a view of shape ", TupleString(shape),
                     " must have zero strides and offset, no mask, and be contiguous"));
  }
  View v;
  v.shape_ = std::move(shape);
  v.strides_ = std::move(strides);
  v.offset_ = std::move(offset);
  v.mask_ = std::move(mask);
  v.contiguous_ = contiguous;
  return v;
}

int64_t View::Size() const {
  Sint size = 1;
  for (const Sint& s : shape_) size = size * Sint(s.vmax());
  return size.value();
}

absl::StatusOr<std::optional<View>> View::Reshape(absl::Span<const Sint> new_shape) const {
  if (absl::MakeConstSpan(shape_) == new_shape) return std::optional<View>(*this);
  for (const Sint& s : new_shape) {
    if (s.vmax() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("reshape: negative dimension in new shape ", TupleString(new_shape)));
    }
  }
  const bool self_all_int = AllInt(shape_);
  if (self_all_int && Resolve(Ne(Prod(shape_), Prod(new_shape)), false)) {
    return absl::InvalidArgumentError(absl::StrCat("reshape: size mismatch, can't reshape ",
                                                   TupleString(shape_), " to ", TupleString(new_shape)));
  }
  if (HasZero(shape_)) return std::optional<View>(*Create(SintVec(new_shape.begin(), new_shape.end())));
  if (new_shape.empty() && mask_) {
    for (const SintPair& m : *mask_) {
      if (m.first == m.second) return std::optional<View>();
    }
  }
  if (contiguous_) return std::optional<View>(*Create(SintVec(new_shape.begin(), new_shape.end())));

  // A non-contiguous view reshaped to a symbolic shape: only a like-for-like replacement is possible.
  if (self_all_int && !AllInt(new_shape)) {
    auto error = [&]() {
      return absl::InvalidArgumentError(absl::StrCat("reshape: cannot reshape the non-contiguous ",
                                                     ToString(), " to the symbolic shape ",
                                                     TupleString(new_shape)));
    };
    if (shape_.size() != new_shape.size()) return error();
    for (size_t i = 0; i < shape_.size(); ++i) {
      int64_t so;
      if (new_shape[i].is_int()) {
        so = new_shape[i].value();
      } else {
        absl::flat_hash_map<std::string, int64_t> values;
        for (const UOp* x : new_shape[i].uop()->Toposort()) {
          if (x->op() == Ops::BIND && x->src(0)->op() == Ops::DEFINE_VAR && x->src(1)->op() == Ops::CONST) {
            values[x->src(0)->var_name()] = x->src(1)->const_value().AsInt64();
          }
        }
        absl::StatusOr<ConstValue> v = SymInfer(new_shape[i].uop().get(), values);
        if (!v.ok()) return error();
        so = v->AsInt64();
      }
      if (shape_[i].value() != so) return error();
    }
    View v = *this;
    v.shape_ = SintVec(new_shape.begin(), new_shape.end());
    return std::optional<View>(std::move(v));
  }

  std::vector<Sint> r_strides;
  size_t r_pos = new_shape.size();
  std::vector<MergedDim> merged = MergeDims(shape_, strides_, mask_);
  for (size_t k = merged.size(); k-- > 0;) {
    const Sint& merged_size = merged[k].size;
    Sint new_stride = merged[k].stride;
    const Sint& real_size = merged[k].real_size;
    Sint acc = 1;
    while (Resolve(Le(acc, merged_size)) && Resolve(Ne(acc, merged_size))) {
      Sint new_dim = r_pos == 0 ? Sint(0) : new_shape[--r_pos];
      if (!Resolve(Lt(Sint(0), new_dim))) break;
      r_strides.push_back(new_stride * acc);
      acc = acc * new_dim;
      if (!Resolve(Lt(acc, real_size))) new_stride = 0;
    }
    if (Resolve(Ne(acc, merged_size))) return std::optional<View>();
  }
  if (r_strides.size() > new_shape.size()) return std::optional<View>();
  SintVec new_strides(new_shape.size() - r_strides.size(), Sint(0));
  for (size_t i = r_strides.size(); i-- > 0;) new_strides.push_back(r_strides[i]);

  std::optional<PairVec> new_mask = ReshapeMask(mask_, shape_, new_shape);
  if (!new_mask) return std::optional<View>();
  Sint extra_offset = 0;
  if (mask_) {
    for (size_t i = 0; i < shape_.size(); ++i) extra_offset = extra_offset + (*mask_)[i].first * strides_[i];
  }
  for (size_t i = 0; i < new_shape.size(); ++i)
    extra_offset = extra_offset - (*new_mask)[i].first * new_strides[i];
  UOPC_ASSIGN_OR_RETURN(View out, Create(SintVec(new_shape.begin(), new_shape.end()), new_strides,
                                         offset_ + extra_offset, new_mask));
  return std::optional<View>(std::move(out));
}

absl::StatusOr<View> View::Permute(absl::Span<const int64_t> order) const {
  std::vector<int64_t> sorted(order.begin(), order.end());
  std::sort(sorted.begin(), sorted.end());
  bool ok = sorted.size() == shape_.size();
  for (size_t i = 0; ok && i < sorted.size(); ++i) ok = sorted[i] == static_cast<int64_t>(i);
  if (!ok) {
    return absl::InvalidArgumentError(absl::StrCat(
        "permute: ", TupleString(order), " is not a permutation of the axes of shape ", TupleString(shape_)));
  }
  SintVec shape, strides;
  std::optional<PairVec> mask;
  if (mask_) mask.emplace();
  for (int64_t a : order) {
    shape.push_back(shape_[a]);
    strides.push_back(strides_[a]);
    if (mask_) mask->push_back((*mask_)[a]);
  }
  return Create(std::move(shape), std::move(strides), offset_, std::move(mask));
}

absl::StatusOr<View> View::Expand(absl::Span<const Sint> new_shape) const {
  if (new_shape.size() != shape_.size()) return RankError("expand", new_shape.size(), shape_);
  for (size_t i = 0; i < shape_.size(); ++i) {
    if (new_shape[i].vmax() < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("expand: negative dimension in ", TupleString(new_shape)));
    }
    if (!(Resolve(Eq(shape_[i], new_shape[i])) || shape_[i] == Sint(1))) {
      return absl::InvalidArgumentError(absl::StrCat("expand: can't expand ", TupleString(shape_), " to ",
                                                     TupleString(new_shape), " (axis ", i,
                                                     " is neither 1 nor equal)"));
    }
  }
  if (HasZero(shape_)) return Create(SintVec(new_shape.begin(), new_shape.end()));
  std::optional<PairVec> mask;
  if (mask_) {
    mask.emplace();
    for (size_t i = 0; i < shape_.size(); ++i) {
      const SintPair& m = (*mask_)[i];
      if (Resolve(Ne(shape_[i], new_shape[i]), false)) {
        bool whole = m.first == Sint(0) && m.second == Sint(1);
        mask->push_back(whole ? SintPair(Sint(0), new_shape[i]) : SintPair(Sint(0), Sint(0)));
      } else {
        mask->push_back(m);
      }
    }
  }
  return Create(SintVec(new_shape.begin(), new_shape.end()), strides_, offset_, std::move(mask));
}

// tinygrad's __unsafe_resize: the window arg[i] = [begin, end) of each axis, and `mask` (in the new
// coordinates).
static absl::StatusOr<View> UnsafeResize(const View& v, absl::Span<const SintPair> arg,
                                         std::optional<PairVec> mask) {
  Sint offset = 0;
  for (size_t i = 0; i < arg.size(); ++i) offset = offset + v.strides()[i] * arg[i].first;
  if (v.mask()) {
    PairVec nmask;
    for (size_t i = 0; i < arg.size(); ++i) {
      const auto& [mx, my] = (*v.mask())[i];
      const auto& [ax, ay] = arg[i];
      nmask.emplace_back(Max(0, Min(mx - ax, ay - ax)), Max(0, Min(my - ax, ay - ax)));
    }
    if (mask) {
      for (size_t i = 0; i < arg.size(); ++i) {
        (*mask)[i] = SintPair(Max(nmask[i].first, (*mask)[i].first), Min(nmask[i].second, (*mask)[i].second));
      }
    } else {
      mask = std::move(nmask);
    }
  }
  SintVec shape;
  for (const SintPair& a : arg) shape.push_back(a.second - a.first);
  return View::Create(std::move(shape), v.strides(), v.offset() + offset, std::move(mask));
}

absl::StatusOr<View> View::Pad(absl::Span<const SintPair> before_after) const {
  if (before_after.size() != shape_.size()) return RankError("pad", before_after.size(), shape_);
  bool any = false;
  for (const auto& [b, e] : before_after) {
    if ((b.is_int() && b.value() < 0) || (e.is_int() && e.value() < 0)) {
      return absl::InvalidArgumentError(absl::StrCat("pad: negative padding ", PairsString(before_after),
                                                     " for shape ", TupleString(shape_)));
    }
    any = any || Resolve(Ne(b, 0)) || Resolve(Ne(e, 0));
  }
  if (!any) return *this;
  std::vector<SintPair> zvarg;
  PairVec mask;
  for (size_t i = 0; i < shape_.size(); ++i) {
    const auto& [b, e] = before_after[i];
    zvarg.emplace_back(-b, shape_[i] + e);
    mask.emplace_back(b, shape_[i] + b);
  }
  return UnsafeResize(*this, zvarg, std::move(mask));
}

absl::StatusOr<View> View::Shrink(absl::Span<const SintPair> begin_end) const {
  if (begin_end.size() != shape_.size()) return RankError("shrink", begin_end.size(), shape_);
  for (size_t i = 0; i < shape_.size(); ++i) {
    const auto& [b, e] = begin_end[i];
    if (shape_[i].is_int() && b.is_int() && e.is_int() &&
        !(0 <= b.value() && b.value() <= e.value() && e.value() <= shape_[i].value())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shrink: ", PairsString(begin_end), " is outside the shape ", TupleString(shape_), " on axis ", i));
    }
  }
  return UnsafeResize(*this, begin_end, std::nullopt);
}

absl::StatusOr<View> View::Flip(absl::Span<const bool> flip_axis) const {
  // tinygrad ignores entries past the rank (its own tests flip a 1-D view with (True, False)); accept those
  // when they flip nothing, and reject any other rank mismatch.
  const bool extra_entries_flip_nothing =
      flip_axis.size() > shape_.size() &&
      std::none_of(flip_axis.begin() + shape_.size(), flip_axis.end(), [](bool f) { return f; });
  if (flip_axis.size() != shape_.size() && !extra_entries_flip_nothing) {
    return RankError("flip", flip_axis.size(), shape_);
  }
  Sint offset = 0;
  SintVec strides;
  std::optional<PairVec> mask;
  if (mask_) mask.emplace();
  for (size_t i = 0; i < shape_.size(); ++i) {
    const bool f = flip_axis[i];
    if (f) offset = offset + (shape_[i] - 1) * strides_[i];
    strides.push_back(f ? -strides_[i] : strides_[i]);
    if (mask_) {
      const auto& [mx, my] = (*mask_)[i];
      mask->push_back(f ? SintPair(shape_[i] - my, shape_[i] - mx) : SintPair(mx, my));
    }
  }
  return Create(shape_, std::move(strides), offset_ + offset, std::move(mask));
}

std::optional<View> View::Merge(const View& vm1) const {
  const View& vm2 = *this;
  if (vm2.contiguous_) return vm1;
  // A view with no positions reads nothing: every empty view of that shape is the same (tinygrad recurses
  // without end here).
  if (std::any_of(vm1.shape_.begin(), vm1.shape_.end(), [](const Sint& s) { return s == Sint(0); })) {
    absl::StatusOr<View> empty = Create(vm1.shape_);
    if (empty.ok()) return *empty;
    return std::nullopt;
  }
  if (vm1.contiguous_ && vm1.shape_ == vm2.shape_) return vm2;
  if (vm1.contiguous_ && vm1.Size() == vm2.Size()) {
    absl::StatusOr<std::optional<View>> r = vm2.Reshape(vm1.shape_);
    if (r.ok() && r->has_value()) return **r;
  }
  if (vm1.mask_) {
    absl::StatusOr<View> new_vm1 = vm1.Shrink(*vm1.mask_);
    if (!new_vm1.ok() || *new_vm1 == vm1) return std::nullopt;
    std::optional<View> merged = vm2.Merge(*new_vm1);
    if (!merged) return std::nullopt;
    std::vector<SintPair> pads;
    for (size_t i = 0; i < vm1.shape_.size(); ++i) {
      pads.emplace_back((*vm1.mask_)[i].first, vm1.shape_[i] - (*vm1.mask_)[i].second);
    }
    absl::StatusOr<View> padded = merged->Pad(pads);
    if (!padded.ok()) return std::nullopt;
    return *padded;
  }
  if (!AllInt(vm1.shape_)) return std::nullopt;

  // Project vm1's offset and strides onto vm2's axes.
  SintVec origin = Unravel(vm2.shape_, vm1.offset_);
  std::vector<std::vector<std::pair<size_t, Sint>>> terms(vm2.shape_.size());
  SintVec strides(vm1.shape_.size(), Sint(0));
  for (size_t d1 = 0; d1 < vm1.strides_.size(); ++d1) {
    const Sint& st = vm1.strides_[d1];
    if (st == Sint(0)) continue;
    SintVec moved = Unravel(vm2.shape_, vm1.offset_ + st);
    for (size_t d2 = 0; d2 < origin.size(); ++d2) {
      Sint s1 = moved[d2] - origin[d2];
      if (s1 == Sint(0)) continue;
      terms[d2].emplace_back(d1, s1);
      strides[d1] = strides[d1] + s1 * vm2.strides_[d2];
    }
  }

  // Merge vm2's axes where vm1's access pattern crosses them (only as far as needed, to keep the mask
  // projectable).
  std::vector<UOpPtr> idxs;
  for (size_t i = 0; i < vm1.shape_.size(); ++i) {
    idxs.push_back(UOp::Variable(absl::StrCat("idx", i), 0, vm1.shape_[i].value() - 1));
  }
  Sint merged_size = 1;
  UOpPtr merged_term = UOp::Const(dtypes::kInt32, 0);
  std::vector<std::pair<Sint, UOpPtr>> extents;
  for (size_t k = terms.size(); k-- > 0;) {
    UOpPtr term_sum = UOp::Const(dtypes::kInt32, 0);
    for (const auto& [d1, s1] : terms[k]) term_sum = term_sum + idxs[d1] * s1.ToUOp();
    merged_term = merged_term + (term_sum + origin[k].ToUOp()) * merged_size.ToUOp();
    merged_size = merged_size * vm2.shape_[k];
    UOpPtr lt = Simplify(merged_term.lt(merged_size.ToUOp()));
    UOpPtr ge0 = Simplify(merged_term.ge(0));
    bool below = lt->vmin() == lt->vmax() && lt->vmin().AsBool();
    bool nonneg = ge0->vmin() == ge0->vmax() && ge0->vmin().AsBool();
    if (below && nonneg) {
      extents.emplace_back(merged_size, merged_term);
      merged_size = 1;
      merged_term = UOp::Const(dtypes::kInt32, 0);
    }
  }
  {
    UOpPtr ne = Simplify(merged_term.ne(0));
    if (!(ne->vmin() == ne->vmax() && !ne->vmin().AsBool())) return std::nullopt;
  }
  SintVec vm2_shape;
  for (size_t i = extents.size(); i-- > 0;) vm2_shape.push_back(extents[i].first);
  if (vm2_shape != vm2.shape_) {
    absl::StatusOr<std::optional<View>> reshaped = vm2.Reshape(vm2_shape);
    if (!reshaped.ok() || !reshaped->has_value()) return std::nullopt;
    // Only when the shape really changed, or this would not terminate.
    if ((*reshaped)->shape_ != vm2.shape_) return (*reshaped)->Merge(vm1);
  }

  if (vm2.mask_) {
    // Project vm2's mask onto vm1.
    std::vector<Sint> newb(vm1.shape_.size(), Sint(0));
    std::vector<Sint> newe(vm1.shape_.begin(), vm1.shape_.end());
    bool bad = false;
    for (size_t i = 0; i < vm2.mask_->size() && i < extents.size(); ++i) {
      const auto& [b, e] = (*vm2.mask_)[i];
      const Sint& o = origin[i];
      const UOpPtr& t = extents[extents.size() - 1 - i].second;
      Sint tmin = t->vmin().AsInt64(), tmax = t->vmax().AsInt64();
      std::optional<bool> above_begin = Le(b, tmin), below_end = Lt(tmax, e);
      if (above_begin == true && below_end == true) continue;
      // Everything below assumes the axis is partly masked; with a symbolic mask that may not be known.
      if (above_begin != false && below_end != false) return std::nullopt;
      if (terms[i].size() != 1) {
        if (terms[i].empty() && !newe.empty()) {
          newe[0] = 0;
        } else {
          bad = true;
        }
        continue;
      }
      const auto& [d1, s1] = terms[i][0];
      if (!s1.is_int()) return std::nullopt;
      bool positive = s1.value() > 0;
      newb[d1] = Max(newb[d1], CeilDiv(positive ? b - o : e - o - 1, s1));
      newe[d1] = Min(newe[d1], FloorDiv(positive ? e - o - 1 : b - o, s1) + 1);
    }
    bool masked_off = false;
    for (size_t i = 0; i < vm1.shape_.size(); ++i) {
      if (!(newb[i] == Sint(0) && newe[i] == vm1.shape_[i])) masked_off = true;
    }
    if (masked_off) {
      PairVec mask;
      for (size_t i = 0; i < vm1.shape_.size(); ++i) mask.emplace_back(newb[i], newe[i]);
      absl::StatusOr<View> masked = Create(vm1.shape_, vm1.strides_, vm1.offset_, std::move(mask));
      // No progress (Create can drop the mask, e.g. of an empty view): stop rather than recurse forever.
      if (!masked.ok() || *masked == vm1) return std::nullopt;
      return vm2.Merge(*masked);
    }
    if (bad) return std::nullopt;
  }

  Sint offset = vm2.offset_;
  Sint projected = 0;
  for (size_t i = 0; i < origin.size(); ++i) projected = projected + origin[i] * vm2.strides_[i];
  offset = projected + vm2.offset_;
  absl::StatusOr<View> out = Create(vm1.shape_, strides, offset);
  if (!out.ok()) return std::nullopt;
  return *out;
}

std::optional<View> View::Invert(absl::Span<const Sint> out_shape) const {
  if (!AllInt(strides_)) return std::nullopt;
  absl::StatusOr<View> ret = Create(shape_);
  if (!ret.ok()) return std::nullopt;
  if (mask_) ret = ret->Shrink(*mask_);
  if (!ret.ok()) return std::nullopt;
  absl::InlinedVector<bool, 6> flips;
  std::vector<int64_t> keys;
  for (const Sint& s : strides_) {
    flips.push_back(s.value() < 0);
    keys.push_back(s.value() > 0 ? -s.value() : s.value());
  }
  ret = ret->Flip(flips);
  if (!ret.ok()) return std::nullopt;
  std::vector<int64_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return keys[a] < keys[b]; });
  ret = ret->Permute(order);
  if (!ret.ok()) return std::nullopt;
  if (Prod(ret->shape_) != Prod(out_shape)) return std::nullopt;
  return *ret;
}

View View::Minify() const {
  SintVec min_shape;
  for (const MergedDim& d : MergeDims(shape_, strides_, mask_)) min_shape.push_back(d.size);
  absl::StatusOr<std::optional<View>> nv = Reshape(min_shape);
  if (nv.ok() && nv->has_value()) return **nv;
  return *this;
}

std::pair<UOpPtr, UOpPtr> View::ToIndexedUops(std::optional<absl::Span<const UOpPtr>> idxs,
                                              UOpPtr valid_in) const {
  std::vector<UOpPtr> ranges;
  if (!idxs) {
    for (size_t i = 0; i < shape_.size(); ++i) {
      ranges.push_back(UOp::Range(shape_[i].ToUOp(), static_cast<int64_t>(i)));
    }
    idxs = absl::MakeConstSpan(ranges);
  }
  UOPC_CHECK(idxs->size() >= shape_.size(), "ToIndexedUops: fewer indices than axes");
  UOpPtr iexpr = offset_.ToUOp();
  UOpPtr vexpr = valid_in ? valid_in : UOp::Const(dtypes::kBool, true);
  for (size_t i = 0; i < shape_.size(); ++i) {
    const UOpPtr& idx = (*idxs)[i];
    const Sint& sh = shape_[i];
    const Sint& st = strides_[i];
    if (Resolve(Ne(sh, 1)) && Resolve(Ne(st, 0))) iexpr = iexpr + idx * st.ToUOp();
    if (mask_) {
      const auto& [b, e] = (*mask_)[i];
      if (Resolve(Ne(b, 0))) vexpr = vexpr * idx.ge(b.ToUOp());
      if (Resolve(Ne(e, sh))) vexpr = vexpr * idx.lt(e.ToUOp());
    }
  }
  return {iexpr, vexpr};
}

std::vector<UOpPtr> View::Vars() const {
  std::vector<UOpPtr> out;
  absl::flat_hash_set<const UOp*> seen;
  auto visit = [&](const Sint& s) {
    if (!s.is_int()) CollectVars(s.uop(), out, seen);
  };
  for (const Sint& s : shape_) visit(s);
  for (const Sint& s : strides_) visit(s);
  visit(offset_);
  if (mask_) {
    for (const SintPair& m : *mask_) {
      visit(m.first);
      visit(m.second);
    }
  }
  return out;
}

std::pair<View, absl::flat_hash_map<UOpPtr, int64_t>> View::Unbind() const {
  absl::flat_hash_map<UOpPtr, int64_t> values;
  UOpMap unbound;
  for (const UOpPtr& v : Vars()) {
    if (v->op() != Ops::BIND || v->src(1)->op() != Ops::CONST) continue;
    unbound.emplace(v.get(), v->src(0)->ref());
    values[v->src(0)->ref()] = v->src(1)->const_value().AsInt64();
  }
  if (unbound.empty()) return {*this, values};
  auto sub = [&](const Sint& s) {
    return s.is_int() ? s : Sint::FromUOp(Substitute(s.uop(), unbound, "unbind"));
  };
  SintVec shape, strides;
  for (const Sint& s : shape_) shape.push_back(sub(s));
  for (const Sint& s : strides_) strides.push_back(sub(s));
  std::optional<PairVec> mask;
  if (mask_) {
    mask.emplace();
    for (const SintPair& m : *mask_) mask->emplace_back(sub(m.first), sub(m.second));
  }
  absl::StatusOr<View> v = Create(std::move(shape), std::move(strides), sub(offset_), std::move(mask));
  UOPC_CHECK(v.ok(), "unbinding a valid view gave an invalid one");
  return {*std::move(v), values};
}

std::string View::ToString() const {
  return absl::StrCat("View(shape=", TupleString(shape_), ", strides=", TupleString(strides_),
                      ", offset=", offset_.ToString(), ", mask=", MaskString(mask_),
                      ", contiguous=", contiguous_ ? "True" : "False", ")");
}

bool operator==(const View& a, const View& b) {
  return a.shape_ == b.shape_ && a.strides_ == b.strides_ && a.offset_ == b.offset_ && a.mask_ == b.mask_ &&
         a.contiguous_ == b.contiguous_;
}

}  // namespace uopc
