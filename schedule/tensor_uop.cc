#include "schedule/tensor_uop.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "shapetracker/sint.h"
#include "uop/check.h"
#include "uop/ops.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

absl::StatusOr<SintVec> SintsOf(const Arg& arg, Ops op) {
  if (!arg.is_tuple()) return absl::InvalidArgumentError(absl::StrCat(OpName(op), ": arg is not a tuple"));
  SintVec out;
  for (const Arg& a : arg.as_tuple()) {
    absl::StatusOr<Sint> s = SintFromArg(a);
    if (!s.ok()) return absl::InvalidArgumentError(absl::StrCat(OpName(op), ": ", s.status().message()));
    out.push_back(*std::move(s));
  }
  return out;
}

absl::StatusOr<std::vector<SintPair>> PairsOf(const Arg& arg, Ops op) {
  if (!arg.is_tuple()) return absl::InvalidArgumentError(absl::StrCat(OpName(op), ": arg is not a tuple"));
  std::vector<SintPair> out;
  for (const Arg& a : arg.as_tuple()) {
    absl::StatusOr<Sint> begin, end;
    if (a.is_tuple() && a.as_tuple().size() == 2) {
      begin = SintFromArg(a.as_tuple()[0]);
      end = SintFromArg(a.as_tuple()[1]);
    }
    if (!begin.ok() || !end.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(OpName(op), ": arg is not a tuple of integer pairs"));
    }
    out.emplace_back(*std::move(begin), *std::move(end));
  }
  return out;
}

// The reduce axes of a REDUCE_AXIS (arg[1]) or WMMA (arg[7]).
absl::StatusOr<std::vector<int64_t>> AxisArg(const UOp* u) {
  const Arg& arg = u->arg();
  size_t at = u->op() == Ops::REDUCE_AXIS ? 1 : 7;
  if (!arg.is_tuple() || arg.as_tuple().size() <= at || !arg.as_tuple()[at].is_tuple()) {
    return absl::InvalidArgumentError(absl::StrCat(OpName(u->op()), ": arg has no axis tuple"));
  }
  std::vector<int64_t> axes;
  for (const Arg& a : arg.as_tuple()[at].as_tuple()) axes.push_back(a.as_int());
  return axes;
}

}  // namespace

absl::StatusOr<ShapeTracker> ApplyMovementOp(const ShapeTracker& st, Ops op, const Arg& arg) {
  switch (op) {
    case Ops::RESHAPE:
    case Ops::EXPAND: {
      UOPC_ASSIGN_OR_RETURN(SintVec shape, SintsOf(arg, op));
      return op == Ops::RESHAPE ? st.Reshape(shape) : st.Expand(shape);
    }
    case Ops::PERMUTE: {
      if (!arg.is_tuple()) return absl::InvalidArgumentError("PERMUTE: arg is not a tuple");
      std::vector<int64_t> order;
      for (const Arg& a : arg.as_tuple()) order.push_back(a.as_int());
      return st.Permute(order);
    }
    case Ops::PAD:
    case Ops::SHRINK: {
      UOPC_ASSIGN_OR_RETURN(std::vector<SintPair> pairs, PairsOf(arg, op));
      return op == Ops::PAD ? st.Pad(pairs) : st.Shrink(pairs);
    }
    case Ops::FLIP: {
      if (!arg.is_tuple()) return absl::InvalidArgumentError("FLIP: arg is not a tuple");
      std::vector<bool> flips;
      for (const Arg& a : arg.as_tuple()) flips.push_back(a.is_bool() ? a.as_bool() : a.as_int() != 0);
      std::unique_ptr<bool[]> raw(new bool[flips.size()]);
      for (size_t i = 0; i < flips.size(); ++i) raw[i] = flips[i];
      return st.Flip(absl::MakeConstSpan(raw.get(), flips.size()));
    }
    default:
      return absl::InvalidArgumentError(absl::StrCat(OpName(op), " is not a movement op"));
  }
}

absl::StatusOr<const ShapeTracker*> TensorShapes::TrySt(const UOpPtr& root) {
  if (auto it = memo_.find(root.get()); it != memo_.end()) {
    if (!it->second.status.ok()) return it->second.status;
    return it->second.st ? &*it->second.st : nullptr;
  }
  // Sources first, without recursion: graphs can be long chains.
  std::vector<std::pair<const UOp*, bool>> stack{{root.get(), false}};
  while (!stack.empty()) {
    const UOp* u = stack.back().first;
    const bool expanded = stack.back().second;
    if (memo_.contains(u)) {
      stack.pop_back();
      continue;
    }
    if (!expanded) {
      stack.back().second = true;
      for (const UOpPtr& s : u->src()) {
        if (!memo_.contains(s.get())) stack.emplace_back(s.get(), false);
      }
      continue;
    }
    stack.pop_back();
    Entry entry{u->ref(), std::nullopt, absl::OkStatus()};
    auto src_st = [&](const UOp* s) -> const Entry& { return memo_.at(s); };
    auto fail = [&](std::string why) {
      entry.status =
          absl::InvalidArgumentError(absl::StrCat(OpName(u->op()), " : ", u->dtype().ToString(), ": ", why));
    };
    const Ops op = u->op();
    if (op == Ops::VIEW) {
      if (const ShapeTracker* st = ShapeTrackerOf(u))
        entry.st = *st;
      else
        fail("arg is not a ShapeTracker");
    } else if (groups::kMovement.contains(op)) {
      const Entry& s = src_st(u->src(0));
      if (!s.status.ok())
        entry.status = s.status;
      else if (!s.st)
        fail("the source has no shape");
      else if (absl::StatusOr<ShapeTracker> st = ApplyMovementOp(*s.st, op, u->arg()); st.ok())
        entry.st = *st;
      else
        fail(absl::StrCat("on shape ", TupleString(s.st->shape()), ": ", st.status().message()));
    } else if (groups::kBuffer.contains(op)) {
      for (const UOpPtr& s : u->src()) {
        if (s->op() == Ops::VIEW) {
          entry.st = src_st(s.get()).st;
          break;
        }
      }
    } else if (op == Ops::ASSIGN || op == Ops::CUSTOM_GRADIENT) {
      entry.st = src_st(u->src(0)).st;
      entry.status = src_st(u->src(0)).status;
    } else if (op == Ops::BUFFER || op == Ops::BUFFER_VIEW) {
      const Arg& a = op == Ops::BUFFER ? u->arg() : (u->arg().is_tuple() ? u->arg().as_tuple()[0] : u->arg());
      if (!a.is_int())
        fail("arg is not a size");
      else
        entry.st = *ShapeTracker::FromShape({Sint(a.as_int())});
    } else if (op == Ops::MULTI) {
      // The shards' shape, with the sharded axis (the arg; none for copies) their sizes summed.
      const Arg& axis = u->arg();
      SintVec shape;
      for (const UOpPtr& s : u->src()) {
        const Entry& e = src_st(s.get());
        if (!e.status.ok()) {
          entry.status = e.status;
          break;
        }
        if (!e.st) {
          fail("a shard has no shape");
          break;
        }
        if (&s == &u->src()[0]) {
          shape = e.st->shape();
          if (axis.is_int() && (axis.as_int() < 0 || axis.as_int() >= static_cast<int64_t>(shape.size()))) {
            fail(absl::StrCat("axis ", axis.as_int(), " out of range for shape ", TupleString(shape)));
            break;
          }
          continue;
        }
        const SintVec& other = e.st->shape();
        bool same = other.size() == shape.size();
        for (size_t a = 0; same && a < shape.size(); ++a) {
          if (axis.is_int() && static_cast<int64_t>(a) == axis.as_int()) continue;
          same = other[a] == shape[a];
        }
        if (!same) {
          fail(
              absl::StrCat("shards have different shapes ", TupleString(shape), " and ", TupleString(other)));
          break;
        }
        if (axis.is_int()) shape[axis.as_int()] = shape[axis.as_int()] + other[axis.as_int()];
      }
      if (entry.status.ok() && !u->src().empty()) entry.st = *ShapeTracker::FromShape(shape);
    } else if (op == Ops::KERNEL || op == Ops::SINK) {
      // A KERNEL's shape is its output's size, and a SINK's sources may have any shapes; nothing asks for
      // either.
    } else {
      const ShapeTracker* first = nullptr;
      for (const UOpPtr& s : u->src()) {
        const Entry& e = src_st(s.get());
        if (!e.status.ok()) {
          entry.status = e.status;
          break;
        }
        if (!e.st) continue;
        if (first == nullptr) {
          first = &*e.st;
        } else if (first->shape() != e.st->shape()) {
          fail(absl::StrCat("sources have different shapes ", TupleString(first->shape()), " and ",
                            TupleString(e.st->shape())));
          break;
        }
      }
      if (entry.status.ok() && first != nullptr) {
        SintVec shape = first->shape();
        if (op == Ops::BITCAST) {
          int64_t in = u->src(0)->dtype().itemsize(), out = u->dtype().itemsize();
          if (in != out && !shape.empty()) shape.back() = FloorDiv(shape.back() * Sint(in), Sint(out));
        } else if (op == Ops::REDUCE_AXIS || op == Ops::WMMA) {
          if (absl::StatusOr<std::vector<int64_t>> axes = AxisArg(u); !axes.ok()) {
            entry.status = axes.status();
          } else {
            for (int64_t a : *axes) {
              if (a < 0 || a >= static_cast<int64_t>(shape.size())) {
                fail(absl::StrCat("axis ", a, " out of range for shape ", TupleString(shape)));
                break;
              }
            }
            if (entry.status.ok()) shape = first->Reduce(*axes);
          }
        }
        if (entry.status.ok()) entry.st = *ShapeTracker::FromShape(shape);
      }
    }
    memo_.emplace(u, std::move(entry));
  }
  const Entry& e = memo_.at(root.get());
  if (!e.status.ok()) return e.status;
  return e.st ? &*e.st : nullptr;
}

const ShapeTracker* TensorShapes::St(const UOpPtr& u) {
  absl::StatusOr<const ShapeTracker*> st = TrySt(u);
  return st.ok() ? *st : nullptr;
}

const SintVec& TensorShapes::Shape(const UOpPtr& u) {
  const ShapeTracker* st = St(u);
  UOPC_CHECK(st != nullptr, "tensor node without a shape");
  return st->shape();
}

int64_t TensorShapes::Size(const UOpPtr& u) {
  if (u->op() == Ops::BUFFER) return u->arg().as_int();
  if (u->op() == Ops::BUFFER_VIEW) return u->arg().as_tuple()[0].as_int();
  const ShapeTracker* st = St(u);
  UOPC_CHECK(st != nullptr, "tensor node without a shape");
  return st->size();
}

const UOp* BaseOf(const UOp* u) {
  while ((u->op() == Ops::VIEW && u->num_src() != 0) || groups::kMovement.contains(u->op())) u = u->src(0);
  return u;
}

std::string DeviceOf(const UOp* root) {
  absl::flat_hash_map<const UOp*, std::string> memo;
  std::vector<std::pair<const UOp*, bool>> stack{{root, false}};
  while (!stack.empty()) {
    const UOp* u = stack.back().first;
    const bool expanded = stack.back().second;
    if (memo.contains(u)) {
      stack.pop_back();
      continue;
    }
    if (u->op() == Ops::DEVICE) {
      memo[u] = u->arg().is_string() ? u->arg().as_string() : "";
      stack.pop_back();
      continue;
    }
    // BUFFER and COPY take their device from the second source only; MULTI's are its shards' devices.
    absl::Span<const UOpPtr> srcs = u->src();
    if ((u->op() == Ops::BUFFER || u->op() == Ops::COPY) && srcs.size() >= 2) srcs = srcs.subspan(1, 1);
    if (!expanded) {
      stack.back().second = true;
      for (const UOpPtr& s : srcs) {
        if (!memo.contains(s.get())) stack.emplace_back(s.get(), false);
      }
      continue;
    }
    stack.pop_back();
    std::string device;
    if (u->op() == Ops::MULTI) {
      std::vector<std::string> devices;
      for (const UOpPtr& s : srcs) devices.push_back(memo.at(s.get()));
      memo[u] = absl::StrJoin(devices, ",");
      continue;
    }
    for (const UOpPtr& s : srcs) {
      if (const std::string& d = memo.at(s.get()); !d.empty()) {
        device = d;
        break;
      }
    }
    memo[u] = std::move(device);
  }
  return memo.at(root);
}

UOpPtr ViewOf(const UOpPtr& x, const ShapeTracker& st) {
  return UOp::New(Ops::VIEW, x->dtype(), {BaseOf(x)}, Arg(std::make_shared<ShapeTrackerArg>(st)));
}

absl::StatusOr<UOpPtr> MovementOp(const UOpPtr& x, Ops op, const Arg& arg, TensorShapes& shapes) {
  UOPC_ASSIGN_OR_RETURN(const ShapeTracker* before, shapes.TrySt(x));
  if (before == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpName(op), " of a node without a shape (", OpName(x->op()), ")"));
  }
  UOpPtr ret = UOp::New(op, x->dtype(), {x}, arg);
  UOPC_ASSIGN_OR_RETURN(const ShapeTracker* after, shapes.TrySt(ret));
  if (*before == *after) return x;
  return ret;
}

namespace {
Arg PairsArg(absl::Span<const std::pair<int64_t, int64_t>> pairs) {
  Arg::Tuple t;
  for (const auto& [a, b] : pairs) t.push_back(Arg(Arg::Tuple{Arg(a), Arg(b)}));
  return Arg(std::move(t));
}
Arg PairsArg(absl::Span<const SintPair> pairs) {
  Arg::Tuple t;
  for (const auto& [a, b] : pairs) t.push_back(Arg(Arg::Tuple{SintToArg(a), SintToArg(b)}));
  return Arg(std::move(t));
}
Arg SintsArg(absl::Span<const Sint> sints) {
  Arg::Tuple t;
  for (const Sint& s : sints) t.push_back(SintToArg(s));
  return Arg(std::move(t));
}
}  // namespace

absl::StatusOr<UOpPtr> Reshape(const UOpPtr& x, absl::Span<const int64_t> shape, TensorShapes& shapes) {
  return MovementOp(x, Ops::RESHAPE, Arg::IntTuple(shape), shapes);
}
absl::StatusOr<UOpPtr> Reshape(const UOpPtr& x, absl::Span<const Sint> shape, TensorShapes& shapes) {
  return MovementOp(x, Ops::RESHAPE, SintsArg(shape), shapes);
}
absl::StatusOr<UOpPtr> Expand(const UOpPtr& x, absl::Span<const int64_t> shape, TensorShapes& shapes) {
  return MovementOp(x, Ops::EXPAND, Arg::IntTuple(shape), shapes);
}
absl::StatusOr<UOpPtr> Expand(const UOpPtr& x, absl::Span<const Sint> shape, TensorShapes& shapes) {
  return MovementOp(x, Ops::EXPAND, SintsArg(shape), shapes);
}
absl::StatusOr<UOpPtr> Permute(const UOpPtr& x, absl::Span<const int64_t> order, TensorShapes& shapes) {
  return MovementOp(x, Ops::PERMUTE, Arg::IntTuple(order), shapes);
}
absl::StatusOr<UOpPtr> Pad(const UOpPtr& x, absl::Span<const std::pair<int64_t, int64_t>> pads,
                           TensorShapes& shapes) {
  return MovementOp(x, Ops::PAD, PairsArg(pads), shapes);
}
absl::StatusOr<UOpPtr> Shrink(const UOpPtr& x, absl::Span<const std::pair<int64_t, int64_t>> bounds,
                              TensorShapes& shapes) {
  return MovementOp(x, Ops::SHRINK, PairsArg(bounds), shapes);
}
absl::StatusOr<UOpPtr> Pad(const UOpPtr& x, absl::Span<const SintPair> pads, TensorShapes& shapes) {
  return MovementOp(x, Ops::PAD, PairsArg(pads), shapes);
}
absl::StatusOr<UOpPtr> Shrink(const UOpPtr& x, absl::Span<const SintPair> bounds, TensorShapes& shapes) {
  return MovementOp(x, Ops::SHRINK, PairsArg(bounds), shapes);
}
absl::StatusOr<UOpPtr> Flip(const UOpPtr& x, absl::Span<const bool> flips, TensorShapes& shapes) {
  Arg::Tuple t;
  for (bool f : flips) t.push_back(Arg(f));
  return MovementOp(x, Ops::FLIP, Arg(std::move(t)), shapes);
}

UOpPtr ReduceAxis(const UOpPtr& x, Ops op, absl::Span<const int64_t> axes, TensorShapes& shapes) {
  const SintVec& shape = shapes.Shape(x);
  std::vector<int64_t> kept;
  for (int64_t a : axes) {
    if (Resolve(Ne(shape[a], Sint(1)))) kept.push_back(a);
  }
  std::sort(kept.begin(), kept.end());
  if (kept.empty()) return x;
  return UOp::New(Ops::REDUCE_AXIS, x->dtype(), {x}, Arg(Arg::Tuple{Arg(op), Arg::IntTuple(kept)}));
}

UOpPtr Alu(Ops op, absl::Span<const UOpPtr> src) {
  DType dtype = src.back()->dtype();
  if (op == Ops::CMPLT || op == Ops::CMPNE)
    dtype = dtype.count() > 1 ? dtypes::kBool.Vec(dtype.count()) : dtypes::kBool;
  return UOp::New(op, dtype, src);
}

UOpPtr CastTo(const UOpPtr& x, DType dtype) {
  if (x->dtype() == dtype) return x;
  return UOp::New(Ops::CAST, dtype, {x});
}

UOpPtr TensorConst(DType dtype, ConstValue value, absl::Span<const int64_t> shape,
                   const std::string& device) {
  return TensorConst(dtype, value, SintVec(shape.begin(), shape.end()), device);
}

UOpPtr TensorConst(DType dtype, ConstValue value, absl::Span<const Sint> shape, const std::string& device) {
  if (absl::StrContains(device, ',')) {
    std::vector<UOpPtr> copies;
    for (absl::string_view d : absl::StrSplit(device, ',')) {
      copies.push_back(TensorConst(dtype, value, shape, std::string(d)));
    }
    return UOp::New(Ops::MULTI, dtype, copies);
  }
  UOpPtr view = UOp::New(Ops::VIEW, dtypes::kVoid, {UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))},
                         Arg(std::make_shared<ShapeTrackerArg>(*ShapeTracker::FromShape({}))));
  UOpPtr bare = UOp::Const(dtype, value);
  UOpPtr c = UOp::New(Ops::CONST, dtype, {view}, bare->arg());
  TensorShapes shapes;
  std::vector<int64_t> ones(shape.size(), 1);
  UOpPtr r = *Reshape(c, absl::Span<const int64_t>(ones), shapes);
  absl::StatusOr<UOpPtr> e = Expand(r, shape, shapes);
  UOPC_CHECK(e.ok(), "a constant expands to any shape");
  return *e;
}

UOpPtr ConstLike(const UOpPtr& x, ConstValue value, TensorShapes& shapes) {
  std::string device = DeviceOf(x.get());
  if (device.empty()) return UOp::Const(x->dtype(), value);
  return TensorConst(x->dtype(), value, shapes.Shape(x), device);
}

UOpPtr NewUnique() { return UOp::New(Ops::UNIQUE, dtypes::kVoid, {}, Arg(internal::NextUniqueNumber())); }

UOpPtr NewBuffer(const std::string& device, int64_t size, DType dtype) {
  return UOp::New(Ops::BUFFER, dtype, {NewUnique(), UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))},
                  Arg(size));
}

}  // namespace uopc
