// Movement ops and indexing: reshape, expand, permute, flip, pad, shrink, Python-style indexing (slices with
// steps, None, ellipsis, int tensors), gather, cat and stack, split/chunk, roll and meshgrid, as tinygrad's
// tensor.py builds them.
#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/strings/ascii.h"
#include "shapetracker/shapetracker.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::CeilDiv;
using tensor_internal::Error;
using tensor_internal::SymbolicSizeError;

namespace tensor_internal {

Tensor Movement(const Tensor& x, Ops op, const Dims& arg) {
  UOPC_TENSOR_PROPAGATE(&x);
  return FromStatusOr(WithShapes([&](TensorShapes& shapes) -> absl::StatusOr<UOpPtr> {
    switch (op) {
      case Ops::RESHAPE:
        return uopc::Reshape(x.uop(), arg, shapes);
      case Ops::EXPAND:
        return uopc::Expand(x.uop(), arg, shapes);
      default:
        return uopc::Permute(x.uop(), arg, shapes);
    }
  }));
}

Tensor Movement(const Tensor& x, Ops op, const SintVec& arg) {
  UOPC_TENSOR_PROPAGATE(&x);
  return FromStatusOr(WithShapes([&](TensorShapes& shapes) -> absl::StatusOr<UOpPtr> {
    return op == Ops::RESHAPE ? uopc::Reshape(x.uop(), arg, shapes) : uopc::Expand(x.uop(), arg, shapes);
  }));
}

Tensor MovementPairs(const Tensor& x, Ops op, const std::vector<SintPair>& arg) {
  UOPC_TENSOR_PROPAGATE(&x);
  return FromStatusOr(WithShapes([&](TensorShapes& shapes) -> absl::StatusOr<UOpPtr> {
    return op == Ops::PAD ? uopc::Pad(x.uop(), arg, shapes) : uopc::Shrink(x.uop(), arg, shapes);
  }));
}

Tensor MovementPairs(const Tensor& x, Ops op, const std::vector<std::pair<int64_t, int64_t>>& arg) {
  UOPC_TENSOR_PROPAGATE(&x);
  return FromStatusOr(WithShapes([&](TensorShapes& shapes) -> absl::StatusOr<UOpPtr> {
    return op == Ops::PAD ? uopc::Pad(x.uop(), arg, shapes) : uopc::Shrink(x.uop(), arg, shapes);
  }));
}

}  // namespace tensor_internal

using tensor_internal::Movement;
using tensor_internal::MovementPairs;

Tensor Tensor::Reshape(const SintVec& shape) const {
  UOPC_TENSOR_PROPAGATE(this);
  const SintVec cur = SymShape();
  int64_t infer = 0;
  Sint known = 1;  // the product of the sizes given
  for (const Sint& s : shape) {
    if (s == Sint(-1)) {
      ++infer;
    } else if (s.is_int() && s.value() < 0) {
      return Error("Reshape", "negative size in " + TupleString(shape));
    } else {
      known = known * s;
    }
  }
  if (infer > 1)
    return Error("Reshape", "only one dimension can be inferred using -1, got " + TupleString(shape));
  const Sint total = uopc::Prod(cur);
  SintVec new_shape = shape;
  if (infer == 1) {
    // tinygrad's -prod(shape) // prod(new_shape): exact, or the sizes do not match below.
    if (known == Sint(0) || !Resolve(uopc::Eq(uopc::Mod(total, known), Sint(0)), false)) {
      return Error("Reshape", absl::StrCat("cannot reshape a tensor of shape ", TupleString(cur), " to ",
                                           TupleString(shape)));
    }
    for (Sint& s : new_shape)
      if (s == Sint(-1)) s = uopc::FloorDiv(total, known);
  }
  if (!Resolve(uopc::Eq(uopc::Prod(new_shape), total), false)) {
    return Error("Reshape", absl::StrCat("cannot reshape a tensor of shape ", TupleString(cur), " (",
                                         total.ToString(), " elements) to ", TupleString(shape)));
  }
  if (new_shape == cur) return *this;
  return Movement(*this, Ops::RESHAPE, new_shape);
}

Tensor Tensor::Expand(const SintVec& shape) const {
  UOPC_TENSOR_PROPAGATE(this);
  const SintVec cur = SymShape();
  if (shape.size() < cur.size()) {
    return Error("Expand", absl::StrCat("cannot expand a tensor of shape ", TupleString(cur), " to ",
                                        TupleString(shape)));
  }
  SintVec aligned(shape.size() - cur.size(), Sint(1));
  aligned.insert(aligned.end(), cur.begin(), cur.end());
  SintVec new_shape(shape.size());
  for (size_t i = 0; i < shape.size(); ++i) new_shape[i] = shape[i] == Sint(-1) ? aligned[i] : shape[i];
  Tensor r = BroadcastTo(new_shape);
  if (!r.ok()) {
    return Error("Expand", absl::StrCat("cannot expand a tensor of shape ", TupleString(cur), " to ",
                                        TupleString(shape)));
  }
  return r;
}

Tensor Tensor::Permute(const Dims& order) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::Status err;
  Dims resolved;
  for (int64_t d : order) resolved.push_back(ResolveDim(d, false, &err));
  if (!err.ok()) return FromError(err);
  Dims sorted = resolved;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i) || sorted.size() != static_cast<size_t>(ndim())) sorted.clear();
  if (sorted.size() != static_cast<size_t>(ndim())) {
    return Error("Permute", absl::StrCat(TupleString(order),
                                         " is not a valid permutation of the axes of a tensor of shape ",
                                         TupleString(Shape())));
  }
  return Movement(*this, Ops::PERMUTE, resolved);
}

Tensor Tensor::Flip(const Dims& axes) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::Status err;
  std::vector<bool> flips(ndim(), false);
  for (int64_t a : axes) {
    int64_t d = ResolveDim(a, false, &err);
    if (!err.ok()) return FromError(err);
    if (flips[d]) return Error("Flip", absl::StrCat("dim ", a, " appears more than once"));
    flips[d] = true;
  }
  std::unique_ptr<bool[]> arr(new bool[flips.size()]);
  for (size_t i = 0; i < flips.size(); ++i) arr[i] = flips[i];
  return tensor_internal::FromStatusOr(tensor_internal::WithShapes([&](TensorShapes& shapes) {
    return uopc::Flip(uop(), absl::MakeConstSpan(arr.get(), flips.size()), shapes);
  }));
}

Tensor Tensor::Shrink(const std::vector<SintPair>& bounds) const {
  UOPC_TENSOR_PROPAGATE(this);
  const SintVec cur = SymShape();
  if (bounds.size() != cur.size()) {
    return Error("Shrink", absl::StrCat(bounds.size(), " bounds for a tensor of shape ", TupleString(cur)));
  }
  bool noop = true;
  for (size_t i = 0; i < cur.size(); ++i) {
    const auto& [begin, end] = bounds[i];
    // Symbolic bounds must hold for every value of their variables: by the ranges, or by the difference
    // (start_pos <= start_pos + 1).
    auto le = [](const Sint& a, const Sint& b) {
      return Resolve(uopc::Le(a, b), false) || Resolve(uopc::Le(Sint(0), b - a), false);
    };
    if (!le(Sint(0), begin) || !le(end, cur[i]) || !le(begin, end)) {
      return Error("Shrink",
                   absl::StrCat("bounds (", begin.ToString(), ", ", end.ToString(),
                                ") out of range for axis ", i, " of a tensor of shape ", TupleString(cur)));
    }
    if (begin != Sint(0) || end != cur[i]) noop = false;
  }
  if (noop) return *this;
  return MovementPairs(*this, Ops::SHRINK, bounds);
}

Tensor Tensor::Pad(const std::vector<SintPair>& padding, Scalar value) const {
  UOPC_TENSOR_PROPAGATE(this);
  const SintVec cur = SymShape();
  if (padding.size() != cur.size()) {
    return Error("Pad", absl::StrCat(padding.size(), " pads for a tensor of shape ", TupleString(cur)));
  }
  auto constant = [&](const Tensor& x, const std::vector<SintPair>& px) {
    Tensor padded = MovementPairs(x, Ops::PAD, px);
    if (value.value == ConstValue::Int(0)) return padded;
    return padded + MovementPairs(x.OnesLike(), Ops::PAD, px).Where(0, Operand(value));
  };
  // A symbolic pad counts as positive unless its range says otherwise (tinygrad's resolve(p >= 0)).
  auto negative = [](const Sint& p) { return Resolve(uopc::Lt(p, Sint(0)), false); };
  bool all_positive = true;
  std::vector<SintPair> pads;
  for (const auto& [b, a] : padding) {
    if (negative(b) || negative(a)) all_positive = false;
    pads.push_back({negative(b) ? Sint(0) : b, negative(a) ? Sint(0) : a});
  }
  if (all_positive) return constant(*this, padding);
  // Negative pads cut first.
  std::vector<SintPair> shrink;
  for (size_t i = 0; i < cur.size(); ++i) {
    const auto& [b, a] = padding[i];
    shrink.push_back({negative(b) ? -b : Sint(0), negative(a) ? a + cur[i] : cur[i]});
  }
  return constant(Shrink(shrink), pads);
}

Tensor Tensor::Pad(const std::vector<std::pair<int64_t, int64_t>>& padding, const std::string& mode,
                   Scalar value) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (mode == "constant") return Pad(padding, value);
  if (auto symbolic = SymbolicSizeError(*this, "Pad")) return *symbolic;
  if (mode != "reflect" && mode != "replicate" && mode != "circular") {
    return Error(
        "Pad", "mode must be \"constant\", \"reflect\", \"replicate\" or \"circular\", got \"" + mode + "\"");
  }
  const Dims shape = Shape();
  if (padding.size() != shape.size()) {
    return Error("Pad", absl::StrCat(padding.size(), " pads for a tensor of shape ", TupleString(shape)));
  }
  // The added part of each pad; a negative pad cuts at the end.
  std::vector<std::pair<int64_t, int64_t>> added;
  for (const auto& [before, after] : padding)
    added.push_back({std::max<int64_t>(before, 0), std::max<int64_t>(after, 0)});
  if (mode == "circular") {
    Dims repeats;
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto [before, after] = padding[d];
      if (before > shape[d] || after > shape[d]) {
        return Error("Pad", absl::StrCat("circular padding (", before, ", ", after, ") wraps around dim ", d,
                                         " of size ", shape[d], " more than once"));
      }
      if (before < 0 || after < 0) return Error("Pad", "circular padding cannot be negative");
      repeats.push_back(1 + (before != 0) + (after != 0));
    }
    Tensor tiled = Repeat(repeats);
    UOPC_TENSOR_PROPAGATE(&tiled);
    const Dims tiled_shape = tiled.Shape();
    std::vector<std::pair<int64_t, int64_t>> window;
    for (size_t d = 0; d < shape.size(); ++d) {
      const auto [before, after] = added[d];
      window.push_back({before == 0 ? 0 : shape[d] - before,
                        after == 0 ? tiled_shape[d] : tiled_shape[d] - shape[d] + after});
    }
    return tiled.Shrink(window);
  }
  // Reflect and replicate: the pieces before and after each axis are cut from it and concatenated, one axis
  // after another.
  Tensor x = *this;
  for (int64_t d = 0; d < static_cast<int64_t>(added.size()); ++d) {
    const auto [before, after] = added[d];
    UOPC_TENSOR_PROPAGATE(&x);
    const Dims xs = x.Shape();
    const int64_t size = xs[d];
    std::optional<Tensor> head, tail;
    if (mode == "reflect") {
      if (before >= size || after >= size) {
        return Error("Pad", absl::StrCat("reflect padding (", before, ", ", after,
                                         ") must be smaller than the size ", size, " of dim ", d));
      }
      auto mirrored = [&](std::optional<int64_t> start, std::optional<int64_t> stop) {
        std::vector<IndexItem> index(xs.size(), Slice{});
        index[d] = Slice{start, stop, -1};
        return x.Index(index);
      };
      if (before > 0) head = mirrored(before, 0);
      if (after > 0) {
        tail = mirrored(size - 2 >= 0 ? std::optional<int64_t>(size - 2) : std::nullopt,
                        size - 2 - after >= 0 ? std::optional<int64_t>(size - 2 - after) : std::nullopt);
      }
    } else {
      auto edge = [&](int64_t start, int64_t width) {
        std::vector<std::pair<int64_t, int64_t>> bounds;
        Dims expanded(xs.size(), -1);
        for (size_t i = 0; i < xs.size(); ++i) bounds.push_back({0, xs[i]});
        bounds[d] = {start, start + 1};
        expanded[d] = width;
        return x.Shrink(bounds).Expand(expanded);
      };
      if (before > 0) head = edge(0, before);
      if (after > 0) tail = edge(size - 1, after);
    }
    std::vector<Tensor> pieces;
    if (head) pieces.push_back(*head);
    pieces.push_back(x);
    if (tail) pieces.push_back(*tail);
    x = pieces[0].Cat(std::vector<Tensor>(pieces.begin() + 1, pieces.end()), d);
  }
  UOPC_TENSOR_PROPAGATE(&x);
  const Dims padded = x.Shape();
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (size_t d = 0; d < padded.size(); ++d) {
    keep.push_back(
        {-std::min<int64_t>(padding[d].first, 0), std::min(padding[d].second + padded[d], padded[d])});
  }
  return x.Shrink(keep);
}

Tensor Tensor::Transpose(int64_t dim0, int64_t dim1) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::Status err;
  int64_t a = ResolveDim(dim0, false, &err), b = ResolveDim(dim1, false, &err);
  if (!err.ok()) return FromError(err);
  Dims order(ndim());
  for (int64_t i = 0; i < ndim(); ++i) order[i] = i;
  std::swap(order[a], order[b]);
  return Permute(order);
}

Tensor Tensor::Flatten(int64_t start_dim, int64_t end_dim) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::Status err;
  int64_t s = ResolveDim(start_dim, false, &err), e = ResolveDim(end_dim, false, &err);
  if (!err.ok()) return FromError(err);
  const SintVec cur = SymShape();
  SintVec out(cur.begin(), cur.begin() + s);
  out.push_back(uopc::Prod(absl::MakeConstSpan(cur).subspan(s, std::max<int64_t>(0, e + 1 - s))));
  out.insert(out.end(), cur.begin() + std::min<int64_t>(e + 1, cur.size()), cur.end());
  return Reshape(out);
}

Tensor Tensor::Squeeze(std::optional<int64_t> dim) const {
  UOPC_TENSOR_PROPAGATE(this);
  Dims cur = Shape(), out;
  if (!dim) {
    for (int64_t s : cur)
      if (s != 1) out.push_back(s);
    return Reshape(out);
  }
  absl::Status err;
  int64_t d = ResolveDim(*dim, false, &err);
  if (!err.ok()) return FromError(err);
  if (cur.empty() || cur[d] != 1) return *this;
  out = cur;
  out.erase(out.begin() + d);
  return Reshape(out);
}

Tensor Tensor::Unsqueeze(int64_t dim) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::Status err;
  int64_t d = ResolveDim(dim, true, &err);
  if (!err.ok()) return FromError(err);
  SintVec out = SymShape();
  out.insert(out.begin() + d, 1);
  return Reshape(out);
}

Tensor Tensor::Repeat(const Dims& repeats) const {
  UOPC_TENSOR_PROPAGATE(this);
  const SintVec cur = SymShape();
  if (repeats.size() < cur.size()) {
    return Error("Repeat", absl::StrCat(repeats.size(), " repeats for a tensor of shape ", TupleString(cur)));
  }
  SintVec base(repeats.size() - cur.size(), 1);
  base.insert(base.end(), cur.begin(), cur.end());
  SintVec unsq, expd, fin;
  for (size_t i = 0; i < base.size(); ++i) {
    unsq.insert(unsq.end(), {1, base[i]});
    expd.insert(expd.end(), {repeats[i], base[i]});
    fin.push_back(base[i] * repeats[i]);
  }
  return Reshape(unsq).Expand(expd).Reshape(fin);
}

namespace {

// Python's slice.indices(size), for a slice of integers.
void SliceIndices(const Slice& s, int64_t size, int64_t* start, int64_t* stop, int64_t* step) {
  *step = s.step.value_or(1);
  auto clamp = [&](const std::optional<Sint>& v, bool is_start) {
    if (!v) return is_start ? (*step < 0 ? size - 1 : 0) : (*step < 0 ? int64_t{-1} : size);
    int64_t x = v->value();
    if (x < 0) {
      x += size;
      if (x < 0) x = *step < 0 ? -1 : 0;
    } else if (x >= size) {
      x = *step < 0 ? size - 1 : size;
    }
    return x;
  };
  *start = clamp(s.start, true);
  *stop = clamp(s.stop, false);
}

// tinygrad's _getitem: `self[indices]`. With `value`, instead the advanced setitem's result (needs a tensor
// index): the basic view (`*view`: the slices, ints and Nones applied, movement ops only) with the places the
// tensor indices name replaced by `value`. Sizes and bounds may be symbolic (tinygrad's sint cases); where
// tinygrad cannot decide a bound over the variables' ranges, that is an error here too.
Tensor GetItem(const Tensor& self, const std::vector<Tensor::IndexItem>& indices_in, const Tensor* value,
               Tensor* view) {
  UOPC_TENSOR_PROPAGATE(&self);
  const int64_t ndim = self.ndim();
  const SintVec shape = self.SymShape();
  std::vector<Tensor::IndexItem> indices = indices_in;
  int64_t ellipses = 0, nones = 0;
  size_t fill = indices.size();
  for (size_t i = 0; i < indices.size(); ++i) {
    if (std::holds_alternative<Ellipsis>(indices[i])) {
      ++ellipses;
      fill = i;
    }
    if (std::holds_alternative<NewAxis>(indices[i])) ++nones;
  }
  if (ellipses > 1) return Error("Index", "indices can only have a single ellipsis");
  int64_t num = static_cast<int64_t>(indices.size()) - ellipses - nones;
  if (num > ndim) {
    return Error("Index",
                 absl::StrCat("too many indices (", num, ") for a tensor of shape ", TupleString(shape)));
  }
  if (ellipses) indices.erase(indices.begin() + fill);
  indices.insert(indices.begin() + fill, ndim - num, Slice{});

  struct Parsed {
    int kind;  // 0 int, 1 slice, 2 none, 3 tensor
    Sint size, b0, b1;
    int64_t stride;
    std::shared_ptr<Tensor> tensor;
  };
  std::vector<Parsed> parsed;
  int64_t dim = 0;
  for (Tensor::IndexItem index : indices) {
    Parsed p{1, 1, 0, 1, 1, nullptr};
    if (std::holds_alternative<NewAxis>(index)) {
      p.kind = 2;
      p.size = 1;
      p.b1 = 1;
      parsed.push_back(p);
      continue;
    }
    const Sint size = shape[dim];
    p.size = size;
    p.b0 = 0;
    p.b1 = size;
    if (const Sint* i = std::get_if<Sint>(&index); i != nullptr && i->is_int()) index = i->value();
    if (std::holds_alternative<int64_t>(index) || std::holds_alternative<Sint>(index)) {
      const Sint i =
          std::holds_alternative<int64_t>(index) ? Sint(std::get<int64_t>(index)) : std::get<Sint>(index);
      // Python's `index >= size or index < -size`, decided over the variables' ranges.
      if (Resolve(Le(size, i), true) || Resolve(Lt(i, -size), true)) {
        return Error("Index",
                     absl::StrCat("index ", i.ToString(), " is out of bounds for axis ", dim, " with size ",
                                  size.ToString(), " (shape ", TupleString(shape), ")",
                                  i.is_int() && size.is_int() ? "" : " for some values of the variables"));
      }
      const std::optional<bool> non_negative = Le(0, i);
      if (!non_negative) {
        return Error("Index",
                     absl::StrCat("index ", i.ToString(), " is negative for some values of its variables"));
      }
      p.kind = 0;
      p.b0 = *non_negative ? i : i + size;
      p.b1 = p.b0 + 1;
    } else if (const Slice* s = std::get_if<Slice>(&index)) {
      if (s->step && *s->step == 0) return Error("Index", "a slice step cannot be 0");
      const bool int_bounds = (!s->start || s->start->is_int()) && (!s->stop || s->stop->is_int());
      if (int_bounds && size.is_int()) {
        int64_t start, stop, step;
        SliceIndices(*s, size.value(), &start, &stop, &step);
        p.stride = step;
        if (step * (stop - start) < 0) {
          p.b0 = p.b1 = 0;
        } else if (step < 0) {
          p.b0 = stop + 1;
          p.b1 = start + 1;
        } else {
          p.b0 = start;
          p.b1 = stop;
        }
        p.size = CeilDiv(p.b1.value() - p.b0.value(), std::abs(step));
      } else if (!s->start && !s->stop && !s->step) {
        // The whole of a symbolic axis (tinygrad cannot take a symbolic size's slice.indices).
      } else if (int_bounds) {
        return Error("Index",
                     absl::StrCat("axis ", dim, " has the symbolic size ", size.ToString(),
                                  ": only the whole of it, or a slice with symbolic bounds, is taken"));
      } else {
        // tinygrad's simple symbolic slice: both bounds, no step, and a positive size over the ranges.
        if (!s->start || !s->stop || s->step || !Resolve(Lt(0, *s->stop - *s->start), false)) {
          return Error("Index",
                       absl::StrCat("a slice with a symbolic bound needs both bounds, no step, and a "
                                    "stop past its start over the variables' ranges (axis ",
                                    dim, ")"));
        }
        p.b0 = *s->start;
        p.b1 = *s->stop;
        p.size = *s->stop - *s->start;
      }
    } else if (const auto* t = std::get_if<std::shared_ptr<Tensor>>(&index)) {
      const Tensor& idx = **t;
      UOPC_TENSOR_PROPAGATE(&idx);
      if (!idx.dtype().is_int())
        return Error("Index", "index dtype " + idx.dtype().ToString() + " is not supported");
      if (self.symbolic())
        return Error("Index", "a tensor index into a tensor of a symbolic shape is not supported");
      p.kind = 3;
      p.tensor = std::make_shared<Tensor>(idx.Lt(0).Where(idx + size.value(), idx));
    }
    parsed.push_back(p);
    ++dim;
  }

  Tensor x = self;
  std::vector<SintPair> shrinks;
  Dims strides, flips;
  for (const Parsed& p : parsed) {
    if (p.kind == 2) continue;
    shrinks.push_back({p.b0, p.b1});
    strides.push_back(p.stride);
  }
  if (!shrinks.empty()) {
    for (size_t i = 0; i < strides.size(); ++i)
      if (strides[i] < 0) flips.push_back(i);
    x = x.Shrink(shrinks).Flip(flips);
    bool strided = std::any_of(strides.begin(), strides.end(), [](int64_t s) { return std::abs(s) != 1; });
    if (strided && x.symbolic()) {
      return Error("Index",
                   "a slice with a step other than 1 or -1 on a tensor of a symbolic shape is not supported");
    }
    if (strided) {
      Dims xs = x.Shape();
      std::vector<std::pair<int64_t, int64_t>> pads;
      Dims split;
      for (size_t i = 0; i < xs.size(); ++i) {
        int64_t st = std::abs(strides[i]);
        int64_t rounded = CeilDiv(xs[i], st) * st;
        pads.push_back({0, rounded - xs[i]});
        split.insert(split.end(), {rounded / st, st});
      }
      x = x.Pad(pads).Reshape(split);
      std::vector<std::pair<int64_t, int64_t>> sh;
      Dims outer;
      for (size_t i = 0; i < xs.size(); ++i) {
        sh.push_back({0, split[2 * i]});
        sh.push_back({0, 1});
        outer.push_back(split[2 * i]);
      }
      x = x.Shrink(sh).Reshape(outer);
    }
  }
  SintVec final_shape;
  for (const Parsed& p : parsed)
    if (p.kind != 0) final_shape.push_back(p.size);
  x = x.Reshape(final_shape);
  const Tensor basic = x;
  if (view != nullptr) *view = basic;

  // Tensor indexing: one-hot masks summed over.
  Dims dims;
  std::vector<Tensor> tensors;
  int64_t d = 0;
  for (const Parsed& p : parsed) {
    if (p.kind == 0) continue;
    if (p.kind == 3) {
      dims.push_back(d);
      tensors.push_back(*p.tensor);
    }
    ++d;
  }
  if (tensors.empty()) {
    return value == nullptr ? x
                            : Tensor::FromError(absl::InternalError("GetItem: a value needs a tensor index"));
  }
  UOPC_TENSOR_PROPAGATE(&x);
  Dims big = tensors[0].Shape();
  for (size_t i = 1; i < tensors.size(); ++i) {
    Tensor probe = tensors[0].Add(tensors[i]);
    if (!probe.ok())
      return Error("Index", "cannot broadcast the index tensors: " + std::string(probe.status().message()));
    big = probe.Shape();
  }
  Dims xs = x.Shape();
  Dims pre(xs.begin(), xs.begin() + dims[0]);
  pre.insert(pre.end(), big.begin(), big.end());
  pre.insert(pre.end(), xs.begin() + dims[0], xs.end());
  Tensor mask;
  for (size_t k = 0; k < dims.size(); ++k) {
    Dims ts = tensors[k].Shape();
    ts.insert(ts.end(), xs.size() - dims[0], 1);
    Tensor i = tensors[k].Reshape(ts).Expand(pre);
    int64_t classes = xs[dims[k]];
    // _one_hot_along_dim(classes, dim - x.ndim)
    int64_t offset = static_cast<int64_t>(xs.size()) - dims[k] - 1;
    Dims ar = {classes};
    ar.insert(ar.end(), offset, 1);
    Tensor m = i.Eq(Tensor::Arange(0, classes, 1, std::nullopt, self.Device()).Reshape(ar));
    mask = k == 0 ? m : mask.Mul(m);
  }
  Dims reshape_arg(xs.begin(), xs.begin() + dims[0]);
  reshape_arg.insert(reshape_arg.end(), big.size(), 1);
  reshape_arg.insert(reshape_arg.end(), xs.begin() + dims[0], xs.end());
  Dims sum_axes;
  for (int64_t dd : dims) sum_axes.push_back(dd + static_cast<int64_t>(big.size()));
  x = (x.Reshape(reshape_arg) * mask).Sum(sum_axes, false, x.dtype());
  bool consecutive = true;
  for (size_t k = 1; k < dims.size(); ++k)
    if (dims[k] != dims[k - 1] + 1) consecutive = false;
  if (dims[0] != 0 && dims.size() != 1 && !consecutive) {
    Dims order;
    int64_t nb = big.size();
    for (int64_t k = dims[0]; k < dims[0] + nb; ++k) order.push_back(k);
    for (int64_t k = 0; k < dims[0]; ++k) order.push_back(k);
    for (int64_t k = dims[0] + nb; k < x.ndim(); ++k) order.push_back(k);
    x = x.Permute(order);
  }
  if (value == nullptr) return x;
  // The advanced setitem: the basic view with the indexed places replaced by `value` (tinygrad's v branch and
  // _masked_setitem; where several indices name one place the last one's value wins).
  UOPC_TENSOR_PROPAGATE(value, static_cast<const Tensor*>(&x));
  const SintVec value_shape = tensor_internal::BroadcastShape(x.SymShape(), value->SymShape());
  Tensor values = value->Cast(self.dtype()).BroadcastTo(value_shape);
  for (int64_t axis : sum_axes) values = values.Unsqueeze(axis);
  for (int64_t axis = dims[0]; axis < dims[0] + static_cast<int64_t>(big.size()); ++axis) {
    std::vector<Tensor> masks = mask.Split(1, axis), parts = values.Split(1, axis);
    if (masks.size() != parts.size()) {
      return Error("SetItem",
                   absl::StrCat("the value's shape ", TupleString(value->Shape()),
                                " does not broadcast to the indexed shape ", TupleString(x.Shape())));
    }
    mask = masks[0];
    values = parts[0];
    for (size_t k = 1; k < masks.size(); ++k) {
      values = masks[k].Where(parts[k], values);
      mask = mask | masks[k];
    }
  }
  for (int64_t axis = dims[0] + static_cast<int64_t>(big.size()) - 1; axis >= dims[0]; --axis) {
    mask = mask.Squeeze(axis);
    values = values.Squeeze(axis);
  }
  return mask.Where(values, basic);
}

}  // namespace

Tensor Tensor::IndexWith(const Tensor& index) const {
  return Index(std::vector<IndexItem>{std::make_shared<Tensor>(index)});
}

Tensor Tensor::Index(const std::vector<IndexItem>& indices) const {
  return GetItem(*this, indices, nullptr, nullptr);
}

absl::Status Tensor::SetItem(const std::vector<IndexItem>& indices, const Operand& value_in) const {
  UOPC_RETURN_IF_ERROR(status());
  const bool contiguous = tensor_internal::WithShapes([&](TensorShapes& shapes) {
    absl::StatusOr<const ShapeTracker*> st = shapes.TrySt(uop());
    return st.ok() && *st != nullptr && (*st)->contiguous();
  });
  if (!contiguous) {
    return absl::InvalidArgumentError(
        "SetItem: the target must be contiguous, not a view such as t.T or a slice of another tensor (write "
        "through the tensor the view is of)");
  }
  Tensor value = value_in.is_tensor() ? value_in.tensor() : Const(value_in.scalar(), dtype(), Device());
  UOPC_RETURN_IF_ERROR(value.status());
  if (tensor_internal::RequiresGradInEffect(*this) || tensor_internal::RequiresGradInEffect(value)) {
    return absl::UnimplementedError("SetItem: a tensor or value that requires grad cannot be written");
  }
  UOPC_RETURN_IF_ERROR(Realize());
  const UOpPtr before = uop();
  const bool advanced = std::any_of(indices.begin(), indices.end(), [](const IndexItem& i) {
    return std::holds_alternative<std::shared_ptr<Tensor>>(i);
  });
  Tensor view;
  Tensor written;
  if (!advanced) {
    // The value, read in full first (so it may overlap the target), written through the view.
    UOPC_RETURN_IF_ERROR(GetItem(*this, indices, nullptr, &view).status());
    const SintVec shape = tensor_internal::BroadcastShape(view.SymShape(), value.SymShape());
    written = view.Assign(value.Cast(view.dtype()).BroadcastTo(shape).Contiguous());
  } else {
    Tensor replaced = GetItem(*this, indices, &value, &view);
    UOPC_RETURN_IF_ERROR(replaced.status());
    // With the tensor indices only, the whole tensor is assigned, as tinygrad does; past slices or ints, the
    // view it was computed from (tinygrad assigns that to the whole tensor too, which fails or writes every
    // row: docs/parity.md).
    written = view.uop() == uop() ? Assign(replaced) : view.Assign(replaced.Contiguous());
  }
  UOPC_RETURN_IF_ERROR(written.status());
  absl::Status realized = written.Realize();
  if (!realized.ok()) SetUOp(before);
  return realized;
}

Tensor Tensor::Gather(int64_t dim_in, const Tensor& index) const {
  UOPC_TENSOR_PROPAGATE(this, &index);
  for (const Tensor* t : {this, &index}) {
    if (auto symbolic = SymbolicSizeError(*t, "Gather")) return *symbolic;
  }
  if (index.ndim() != ndim()) {
    return Error("Gather",
                 absl::StrCat("the index shape ", TupleString(index.Shape()),
                              " must have as many dimensions as the tensor's ", TupleString(Shape())));
  }
  absl::Status err;
  int64_t dim = ResolveDim(dim_in, false, &err);
  if (!err.ok()) return FromError(err);
  Dims s = Shape(), is = index.Shape();
  std::vector<std::pair<int64_t, int64_t>> sh;
  for (int64_t d = 0; d < ndim(); ++d) {
    if (d != dim && s[d] < is[d]) {
      return Error("Gather", absl::StrCat("the index shape ", TupleString(is), " exceeds the tensor's ",
                                          TupleString(s), " on axis ", d));
    }
    sh.push_back(d != dim ? std::pair<int64_t, int64_t>{0, is[d]} : std::pair<int64_t, int64_t>{0, s[d]});
  }
  Tensor x = Shrink(sh).Unsqueeze(-1).Transpose(-1, dim);
  Tensor oh = index.Unsqueeze(-1);
  Tensor m = oh.Eq(Arange(0, s[dim], 1, std::nullopt, Device()));
  return (x * m).Sum(-1, false, dtype());
}

Tensor Tensor::Cat(const std::vector<Tensor>& others, int64_t dim_in) const {
  UOPC_TENSOR_PROPAGATE(this);
  for (const Tensor& t : others) UOPC_TENSOR_PROPAGATE(&t);
  absl::Status err;
  int64_t dim = ResolveDim(dim_in, false, &err);
  if (!err.ok()) return FromError(err);
  std::vector<Tensor> tensors = {*this};
  tensors.insert(tensors.end(), others.begin(), others.end());
  const SintVec s0 = SymShape();
  SintVec cum = {0};
  for (const Tensor& t : tensors) {
    const SintVec s = t.SymShape();
    bool same = s.size() == s0.size();
    for (size_t i = 0; same && i < s.size(); ++i)
      if (static_cast<int64_t>(i) != dim && s[i] != s0[i]) same = false;
    if (!same) {
      return Error("Cat", absl::StrCat("cannot concatenate shapes ", TupleString(s0), " and ", TupleString(s),
                                       " along dim ", dim));
    }
    cum.push_back(cum.back() + s[dim]);
  }
  Tensor out;
  for (size_t i = 0; i < tensors.size(); ++i) {
    std::vector<SintPair> pads(s0.size(), {0, 0});
    pads[dim] = {cum[i], cum.back() - cum[i + 1]};
    Tensor p = tensors[i].Pad(pads);
    out = i == 0 ? p : out + p;
  }
  return out;
}

Tensor Tensor::Stack(const std::vector<Tensor>& tensors, int64_t dim) {
  if (tensors.empty()) return Error("Stack", "needs at least one tensor");
  std::vector<Tensor> rest;
  for (size_t i = 1; i < tensors.size(); ++i) rest.push_back(tensors[i].Unsqueeze(dim));
  return tensors[0].Unsqueeze(dim).Cat(rest, dim);
}

namespace {

// The slice [start, stop) of axis `dim` (tinygrad's `t[(slice(None),) * dim + (slice(start, stop),)]`).
Tensor SliceAxis(const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> stop) {
  std::vector<Tensor::IndexItem> index(dim, Slice{});
  index.push_back(Slice{start, stop, std::nullopt});
  return t.Index(index);
}

std::vector<Tensor> Failed(Tensor error) { return {std::move(error)}; }

// The axis `dim` names: an error when out of range, or for a 0-d tensor, which has no axis (tinygrad's
// _resolve_dim accepts dim 0 there and fails indexing the shape).
absl::StatusOr<int64_t> ResolveAxis(const Tensor& t, absl::string_view op, int64_t dim) {
  absl::Status err;
  int64_t axis = t.ResolveDim(dim, false, &err);
  UOPC_RETURN_IF_ERROR(err);
  if (t.ndim() == 0) return absl::InvalidArgumentError(absl::StrCat(op, ": a 0-d tensor has no dim ", dim));
  return axis;
}

}  // namespace

std::vector<Tensor> Tensor::Split(int64_t size, int64_t dim_in) const {
  if (!ok()) return Failed(*this);
  absl::StatusOr<int64_t> dim = ResolveAxis(*this, "Split", dim_in);
  if (!dim.ok()) return Failed(FromError(dim.status()));
  if (auto symbolic = SymbolicSizeError(*this, "Split", {*dim})) return Failed(*symbolic);
  if (size <= 0) return Failed(Error("Split", absl::StrCat("the split size must be positive, got ", size)));
  int64_t n = Shape()[*dim];
  Dims sizes;
  for (int64_t i = 0; i < std::max<int64_t>(1, n); i += size) sizes.push_back(std::min(size, n - i));
  return Split(sizes, *dim);
}

std::vector<Tensor> Tensor::Split(const Dims& sizes, int64_t dim_in) const {
  if (!ok()) return Failed(*this);
  absl::StatusOr<int64_t> dim = ResolveAxis(*this, "Split", dim_in);
  if (!dim.ok()) return Failed(FromError(dim.status()));
  if (auto symbolic = SymbolicSizeError(*this, "Split", {*dim})) return Failed(*symbolic);
  int64_t n = Shape()[*dim], total = 0;
  for (int64_t s : sizes) {
    if (s < 0) return Failed(Error("Split", "negative size in " + TupleString(sizes)));
    total += s;
  }
  if (total != n) {
    return Failed(
        Error("Split", absl::StrCat("the sizes ", TupleString(sizes), " sum to ", total, ", not to ", n,
                                    ", the size of dim ", *dim, " of shape ", TupleString(Shape()))));
  }
  std::vector<Tensor> parts;
  int64_t start = 0;
  for (int64_t s : sizes) {
    parts.push_back(SliceAxis(*this, *dim, start, start + s));
    start += s;
  }
  return parts;
}

std::vector<Tensor> Tensor::Chunk(int64_t chunks, int64_t dim_in) const {
  if (!ok()) return Failed(*this);
  if (chunks <= 0) return Failed(Error("Chunk", absl::StrCat("chunks must be positive, got ", chunks)));
  absl::StatusOr<int64_t> dim = ResolveAxis(*this, "Chunk", dim_in);
  if (!dim.ok()) return Failed(FromError(dim.status()));
  if (auto symbolic = SymbolicSizeError(*this, "Chunk", {*dim})) return Failed(*symbolic);
  int64_t n = Shape()[*dim];
  if (n == 0) return Split(Dims(chunks, 0), *dim);
  return Split(CeilDiv(n, chunks), *dim);
}

Tensor Tensor::Unflatten(int64_t dim_in, const Dims& sizes) const {
  UOPC_TENSOR_PROPAGATE(this);
  absl::StatusOr<int64_t> dim = ResolveAxis(*this, "Unflatten", dim_in);
  if (!dim.ok()) return FromError(dim.status());
  Dims cur = Shape(), out(cur.begin(), cur.begin() + *dim);
  out.insert(out.end(), sizes.begin(), sizes.end());
  out.insert(out.end(), cur.begin() + *dim + 1, cur.end());
  return Reshape(out);
}

Tensor Tensor::RepeatInterleave(int64_t repeats, std::optional<int64_t> dim_in) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (repeats < 0)
    return Error("RepeatInterleave", absl::StrCat("repeats must not be negative, got ", repeats));
  Tensor x = dim_in ? *this : Flatten();
  absl::StatusOr<int64_t> dim = dim_in ? ResolveAxis(*this, "RepeatInterleave", *dim_in) : int64_t{0};
  if (!dim.ok()) return FromError(dim.status());
  if (auto symbolic = SymbolicSizeError(x, "RepeatInterleave", {*dim})) return *symbolic;
  Dims shape = x.Shape();
  Dims unsqueezed = shape, expanded = shape, merged = shape;
  unsqueezed.insert(unsqueezed.begin() + *dim + 1, 1);
  expanded.insert(expanded.begin() + *dim + 1, repeats);
  merged[*dim] *= repeats;
  return x.Reshape(unsqueezed).Expand(expanded).Reshape(merged);
}

Tensor Tensor::Roll(const Dims& shifts, const Dims& dims) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (shifts.size() != dims.size()) {
    return Error("Roll", absl::StrCat(shifts.size(), " shifts for ", dims.size(), " dims"));
  }
  Dims resolved;
  for (int64_t d : dims) {
    absl::StatusOr<int64_t> dim = ResolveAxis(*this, "Roll", d);
    if (!dim.ok()) return FromError(dim.status());
    resolved.push_back(*dim);
  }
  if (auto symbolic = SymbolicSizeError(*this, "Roll", resolved)) return *symbolic;
  Dims shape = Shape();
  Tensor rolled = *this;
  for (size_t i = 0; i < resolved.size(); ++i) {
    int64_t dim = resolved[i], size = shape[dim];
    if (size == 0) {
      return Error("Roll",
                   absl::StrCat("cannot roll dim ", dim, " of size 0 (shape ", TupleString(shape), ")"));
    }
    int64_t shift = ((shifts[i] % size) + size) % size;  // Python's modulo
    rolled =
        SliceAxis(rolled, dim, -shift, std::nullopt).Cat({SliceAxis(rolled, dim, std::nullopt, -shift)}, dim);
  }
  return rolled;
}

std::vector<Tensor> Tensor::Meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing) {
  if (indexing != "ij" && indexing != "xy") {
    return Failed(Error("Meshgrid", "indexing must be \"ij\" or \"xy\", got \"" + indexing + "\""));
  }
  if (tensors.empty()) return Failed(Error("Meshgrid", "needs at least one tensor"));
  for (const Tensor& t : tensors)
    if (!t.ok()) return Failed(t);
  if (tensors.size() == 1) return tensors;
  int64_t n = static_cast<int64_t>(tensors.size());
  // Tensor k lies along output axis basis[k]: its own axis, but for "xy" the first two swap.
  Dims basis(n);
  for (int64_t k = 0; k < n; ++k) basis[k] = k;
  if (indexing == "xy") std::swap(basis[0], basis[1]);
  // Each axis of the output has one tensor along it and size 1 in the others, so it has that tensor's size.
  Dims output(n);
  std::vector<Tensor> along;
  for (int64_t k = 0; k < n; ++k) {
    Dims shape(n - basis[k], 1);
    shape[0] = -1;
    along.push_back(tensors[k].Reshape(shape));
    if (!along.back().ok()) return Failed(along.back());
    output[basis[k]] = along.back().Shape()[0];
  }
  std::vector<Tensor> grids;
  for (const Tensor& t : along) grids.push_back(t.BroadcastTo(output));
  return grids;
}

Tensor Tensor::MaskedFill(const Tensor& mask, const Operand& value) const { return mask.Where(value, *this); }

Tensor Tensor::MaskedSelect(const Tensor& mask) const {
  UOPC_TENSOR_PROPAGATE(this, &mask);
  for (const Tensor* t : {this, &mask}) {
    if (auto symbolic = SymbolicSizeError(*t, "MaskedSelect")) return *symbolic;
  }
  if (!mask.dtype().is_bool()) {
    return Error("MaskedSelect", "the mask must be bool, got " + mask.dtype().ToString());
  }
  Tensor x = Flatten(), flat_mask = mask.BroadcastTo(Shape()).Flatten();
  UOPC_TENSOR_PROPAGATE(&x, &flat_mask);
  // The running count of true values: the last is the output's size (read back now), and scattering a 1 at
  // each count then summing again gives, for output i, the index of the (i+1)-th true value.
  Tensor running = flat_mask.Cumsum();
  Tensor total = running.Index({int64_t{-1}});
  absl::StatusOr<int64_t> count =
      absl::InternalError("MaskedSelect: the running count is not int32 or int64");
  if (total.dtype() == dtypes::kInt32) {
    count = total.Item<int32_t>();
  } else if (total.dtype() == dtypes::kInt64) {
    count = total.Item<int64_t>();
  }
  if (!count.ok()) return FromError(count.status());
  if (*count == 0) return x.Shrink({{0, 0}});
  Tensor positions = Zeros({*count}, dtypes::kInt32, Device()).Scatter(0, running, 1, "add").Cumsum();
  return x.IndexWith(positions);
}

namespace {

// One side of a rearrange formula: its axis names in order, and each parenthesized group as the [begin, end)
// range of the names in it.
struct RearrangeSide {
  std::vector<std::string> names;
  std::vector<std::pair<size_t, size_t>> groups;
};

absl::StatusOr<RearrangeSide> ParseRearrangeSide(std::string text, const std::string& formula) {
  // "…" is an ellipsis; parentheses are tokens of their own; a lone "1" is an empty group (an axis of size
  // 1).
  for (size_t at; (at = text.find("\xE2\x80\xA6")) != std::string::npos;) text.replace(at, 3, "...");
  std::vector<std::string> tokens;
  std::string token;
  auto end_token = [&] {
    if (token.empty()) return;
    if (token == "1") {
      tokens.push_back("(");
      tokens.push_back(")");
    } else {
      tokens.push_back(token);
    }
    token.clear();
  };
  for (char c : text) {
    if (c == '(' || c == ')') {
      end_token();
      tokens.push_back(std::string(1, c));
    } else if (absl::ascii_isspace(static_cast<unsigned char>(c))) {
      end_token();
    } else {
      token += c;
    }
  }
  end_token();
  RearrangeSide side;
  std::optional<size_t> open;
  for (const std::string& t : tokens) {
    if (t == "(") {
      if (open) return absl::InvalidArgumentError("Rearrange: nested parentheses in \"" + formula + "\"");
      open = side.names.size();
    } else if (t == ")") {
      if (!open)
        return absl::InvalidArgumentError("Rearrange: unbalanced parentheses in \"" + formula + "\"");
      side.groups.emplace_back(*open, side.names.size());
      open.reset();
    } else {
      side.names.push_back(t);
    }
  }
  if (open) return absl::InvalidArgumentError("Rearrange: unbalanced parentheses in \"" + formula + "\"");
  return side;
}

bool ValidAxisName(const std::string& name) {
  if (name == "...") return true;
  if (name.empty() || name.front() == '_' || name.back() == '_' || absl::ascii_isdigit(name.front()))
    return false;
  return std::all_of(name.begin(), name.end(), [](char c) { return absl::ascii_isalnum(c) || c == '_'; });
}

// Replaces the side's "..." by `count` names "...0", "...1", ... and moves the groups' bounds after it.
void ExpandEllipsis(RearrangeSide& side, size_t count) {
  auto it = std::find(side.names.begin(), side.names.end(), "...");
  if (it == side.names.end()) return;
  size_t at = static_cast<size_t>(it - side.names.begin());
  side.names.erase(it);
  for (size_t i = 0; i < count; ++i) side.names.insert(side.names.begin() + at + i, absl::StrCat("...", i));
  for (auto& [begin, end] : side.groups) {
    if (begin > at) begin = begin + count - 1;
    if (end > at) end = end + count - 1;
  }
}

}  // namespace

Tensor Tensor::Rearrange(const std::string& formula, const std::map<std::string, int64_t>& sizes) const {
  UOPC_TENSOR_PROPAGATE(this);
  size_t arrow = formula.find("->");
  if (arrow == std::string::npos || formula.find("->", arrow + 2) != std::string::npos) {
    return Error("Rearrange", "the formula needs exactly one \"->\", got \"" + formula + "\"");
  }
  absl::StatusOr<RearrangeSide> lhs = ParseRearrangeSide(formula.substr(0, arrow), formula);
  if (!lhs.ok()) return FromError(lhs.status());
  absl::StatusOr<RearrangeSide> rhs = ParseRearrangeSide(formula.substr(arrow + 2), formula);
  if (!rhs.ok()) return FromError(rhs.status());
  for (const auto& [name, size] : sizes) {
    if (size < 0)
      return Error("Rearrange", absl::StrCat("the size of axis \"", name, "\" is negative: ", size));
    if (std::find(lhs->names.begin(), lhs->names.end(), name) == lhs->names.end()) {
      return Error("Rearrange",
                   "a size is given for axis \"" + name + "\", which the left side does not name");
    }
  }
  std::vector<std::string> left = lhs->names, right = rhs->names;
  std::sort(left.begin(), left.end());
  std::sort(right.begin(), right.end());
  if (left != right || std::adjacent_find(left.begin(), left.end()) != left.end()) {
    return Error("Rearrange", "both sides must name the same axes, each once, in \"" + formula + "\"");
  }
  for (const std::string& name : lhs->names) {
    if (!ValidAxisName(name)) return Error("Rearrange", "invalid axis name \"" + name + "\"");
  }
  for (const auto& [begin, end] : lhs->groups) {
    for (size_t i = begin; i < end; ++i) {
      if (lhs->names[i] == "...") {
        return Error("Rearrange", "an ellipsis cannot be in a group on the left side of \"" + formula + "\"");
      }
    }
  }
  // The axes the left side names (a group is one axis); an ellipsis stands for the rest.
  int64_t named = static_cast<int64_t>(lhs->names.size());
  for (const auto& [begin, end] : lhs->groups) named -= static_cast<int64_t>(end - begin) - 1;
  bool ellipsis = std::find(lhs->names.begin(), lhs->names.end(), "...") != lhs->names.end();
  if (ellipsis) --named;
  if (ellipsis ? named > ndim() : named != ndim()) {
    return Error("Rearrange", absl::StrCat("the left side of \"", formula, "\" names ", named,
                                           ellipsis ? " or more" : "", " axes, the tensor has ", ndim()));
  }
  size_t ellipsis_axes = static_cast<size_t>(ndim() - named);
  ExpandEllipsis(*lhs, ellipsis_axes);
  ExpandEllipsis(*rhs, ellipsis_axes);

  // Split the left side's groups, permute to the right side's order, then merge its groups (last first) and
  // add its empty groups as axes of size 1.
  Tensor t = *this;
  for (const auto& [begin, end] : lhs->groups) {
    Dims split;
    for (size_t i = begin; i < end; ++i) {
      auto size = sizes.find(lhs->names[i]);
      split.push_back(size == sizes.end() ? -1 : size->second);
    }
    if (std::count(split.begin(), split.end(), -1) > 1) {
      return Error("Rearrange", "a group on the left side of \"" + formula +
                                    "\" has more than one axis of unknown size (give their sizes)");
    }
    t = t.Unflatten(static_cast<int64_t>(begin), split);
    UOPC_TENSOR_PROPAGATE(&t);
  }
  Dims shape = t.Shape();
  for (size_t i = 0; i < lhs->names.size(); ++i) {
    auto size = sizes.find(lhs->names[i]);
    if (size != sizes.end() && size->second != shape[i]) {
      return Error("Rearrange",
                   absl::StrCat("axis \"", lhs->names[i], "\" has size ", shape[i], ", not ", size->second));
    }
  }
  Dims order;
  for (const std::string& name : rhs->names) {
    order.push_back(std::find(lhs->names.begin(), lhs->names.end(), name) - lhs->names.begin());
  }
  t = t.Permute(order);
  for (auto it = rhs->groups.rbegin(); it != rhs->groups.rend(); ++it) {
    auto [begin, end] = *it;
    t = begin < end ? t.Flatten(static_cast<int64_t>(begin), static_cast<int64_t>(end) - 1)
                    : t.Unsqueeze(static_cast<int64_t>(begin));
  }
  return t;
}

}  // namespace uopc
