// The multi rules: each op over MULTI sources becomes a MULTI of the op over each shard (tinygrad v0.10.3's
// engine/multi.py, whose graphs these are).
#include "tensor/multi.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "rewrite/pattern_matcher.h"
#include "uop/ops.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc::tensor_internal {
namespace {

using Bounds = std::vector<std::pair<int64_t, int64_t>>;
using Dims = std::vector<int64_t>;

absl::StatusOr<Dims> IntShape(const UOpPtr& u, TensorShapes& shapes) {
  UOPC_ASSIGN_OR_RETURN(const ShapeTracker* st, shapes.TrySt(u));
  if (st == nullptr) return absl::InvalidArgumentError(absl::StrCat(OpName(u->op()), " has no shape"));
  Dims out;
  for (const Sint& s : st->shape()) {
    if (!s.is_int()) {
      return absl::UnimplementedError(
          absl::StrCat("sharded tensors take integer shapes, not ", TupleString(st->shape())));
    }
    out.push_back(s.value());
  }
  return out;
}

int64_t Product(absl::Span<const int64_t> v) {
  return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>());
}

std::optional<int64_t> ArgAxis(const UOp* multi) {
  return multi->arg().is_int() ? std::optional<int64_t>(multi->arg().as_int()) : std::nullopt;
}

std::vector<int64_t> IntsOf(const Arg& arg) {
  std::vector<int64_t> out;
  for (const Arg& a : arg.as_tuple()) out.push_back(a.as_int());
  return out;
}

// UOp.axis: the axis along which a node's value is sharded, nullopt when every device holds all of it.
// Memoized per node (shared subgraphs are visited once).
using AxisMemo = absl::flat_hash_map<const UOp*, std::optional<int64_t>>;

std::optional<int64_t> AxisOf(const UOpPtr& u, TensorShapes& shapes, AxisMemo& memo);

std::optional<int64_t> ComputeAxis(const UOpPtr& u, TensorShapes& shapes, AxisMemo& memo) {
  if (u->op() == Ops::MULTI) return ArgAxis(u.get());
  if (groups::kALU.contains(u->op())) {
    // The sources share the axis; the last distinct one wins, as in tinygrad.
    std::vector<int64_t> axes;
    for (const UOpPtr& s : u->src()) {
      if (std::optional<int64_t> a = AxisOf(s, shapes, memo); a && !absl::c_linear_search(axes, *a)) {
        axes.push_back(*a);
      }
    }
    return axes.empty() ? std::nullopt : std::optional<int64_t>(axes.back());
  }
  if (u->src().empty()) return std::nullopt;
  std::optional<int64_t> src_axis = AxisOf(u->src()[0], shapes, memo);
  if (!src_axis) return std::nullopt;
  switch (u->op()) {
    case Ops::REDUCE_AXIS: {
      std::vector<int64_t> reduced = IntsOf(u->arg()[1]);
      return absl::c_linear_search(reduced, *src_axis) ? std::nullopt : src_axis;
    }
    case Ops::RESHAPE: {
      // The last axis of the new shape before which as many elements lie as before the sharded one.
      absl::StatusOr<Dims> in = IntShape(u->src()[0], shapes);
      if (!in.ok()) return std::nullopt;
      const int64_t before = Product(absl::MakeSpan(*in).subspan(0, *src_axis));
      std::vector<int64_t> out = IntsOf(u->arg());
      std::optional<int64_t> axis;
      int64_t acc = 1;
      for (size_t i = 0; i <= out.size(); ++i) {
        if (acc == before) axis = static_cast<int64_t>(i);
        if (i < out.size()) acc *= out[i];
      }
      return axis;
    }
    case Ops::PERMUTE: {
      std::vector<int64_t> order = IntsOf(u->arg());
      return std::find(order.begin(), order.end(), *src_axis) - order.begin();
    }
    default:
      return src_axis;
  }
}

std::optional<int64_t> AxisOf(const UOpPtr& u, TensorShapes& shapes, AxisMemo& memo) {
  if (auto it = memo.find(u.get()); it != memo.end()) return it->second;
  std::optional<int64_t> axis = ComputeAxis(u, shapes, memo);
  memo[u.get()] = axis;
  return axis;
}

std::optional<int64_t> AxisOf(const UOpPtr& u, TensorShapes& shapes) {
  AxisMemo memo;
  return AxisOf(u, shapes, memo);
}

Bounds BoundsOf(const UOp* multi, TensorShapes& shapes) {
  Bounds bounds;
  int64_t at = 0;
  const int64_t axis = multi->arg().as_int();
  for (const UOpPtr& s : multi->src()) {
    const int64_t size = shapes.Shape(s)[axis].value();
    bounds.emplace_back(at, at + size);
    at += size;
  }
  return bounds;
}

UOpPtr Multi(absl::Span<const UOpPtr> shards, std::optional<int64_t> axis) {
  return UOp::New(Ops::MULTI, shards[0]->dtype(), shards, axis ? Arg(*axis) : Arg());
}

UOpPtr CopyTo(const UOpPtr& x, const std::string& device) {
  return UOp::New(Ops::COPY, x->dtype(), {x, UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))});
}

// Each shard shrunk to its bound of `axis` (to_sharded).
absl::StatusOr<std::vector<UOpPtr>> ToSharded(absl::Span<const UOpPtr> shards, int64_t axis,
                                              const Bounds& bounds, TensorShapes& shapes) {
  UOPC_ASSIGN_OR_RETURN(Dims shape, IntShape(shards[0], shapes));
  if (shape[axis] % static_cast<int64_t>(shards.size()) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", axis, " of ", TupleString(SintVec(shape.begin(), shape.end())),
                     " does not split evenly over ", shards.size(), " devices"));
  }
  std::vector<UOpPtr> out;
  for (size_t i = 0; i < shards.size(); ++i) {
    Bounds b;
    for (size_t a = 0; a < shape.size(); ++a) {
      b.push_back(static_cast<int64_t>(a) == axis ? bounds[i] : std::pair<int64_t, int64_t>{0, shape[a]});
    }
    UOPC_ASSIGN_OR_RETURN(UOpPtr s, Shrink(shards[i], b, shapes));
    out.push_back(std::move(s));
  }
  return out;
}

struct MultiContext {
  TensorShapes shapes;
  absl::Status error;

  // Records the first error (the rewrite then leaves the node, and MultiMap returns the error).
  UOpPtr Fail(const UOp& root, const absl::Status& status) {
    if (error.ok()) {
      error = absl::Status(status.code(),
                           absl::StrCat(OpName(root.op()), " on a sharded tensor: ", status.message()));
    }
    return nullptr;
  }
  UOpPtr Fail(const UOp& root, absl::string_view why) { return Fail(root, absl::InvalidArgumentError(why)); }
};

// An elementwise op: on each shard, after bringing every source to the op's axis and bounds.
UOpPtr AluMulti(const UOpPtr& root, MultiContext& ctx) {
  const auto is_multi = [](const UOpPtr& s) { return s->op() == Ops::MULTI; };
  if (absl::c_none_of(root->src(), is_multi)) return nullptr;
  if (!absl::c_all_of(root->src(), is_multi))
    return ctx.Fail(*root, "every source must be on the same devices");
  const std::string device = DeviceOf(root->src()[0].get());
  for (const UOpPtr& s : root->src()) {
    if (DeviceOf(s.get()) != device) {
      return ctx.Fail(*root, absl::StrCat("sources on ", device, " and on ", DeviceOf(s.get())));
    }
  }
  const std::optional<int64_t> axis = AxisOf(root, ctx.shapes);
  Bounds bounds;
  if (axis) {
    for (const UOpPtr& s : root->src()) {
      if (ArgAxis(s.get()) == axis) bounds = BoundsOf(s.get(), ctx.shapes);
    }
  }
  std::vector<std::vector<UOpPtr>> per_source;
  for (const UOpPtr& s : root->src()) {
    std::vector<UOpPtr> shards(s->src().begin(), s->src().end());
    if (ArgAxis(s.get()) == axis && (!axis || BoundsOf(s.get(), ctx.shapes) == bounds)) {
      per_source.push_back(std::move(shards));
      continue;
    }
    if (ArgAxis(s.get())) {
      // Sharded another way: every device gets the whole value first.
      for (UOpPtr& shard : shards) shard = CopyTo(s, DeviceOf(shard.get()));
    }
    absl::StatusOr<std::vector<UOpPtr>> resharded = ToSharded(shards, *axis, bounds, ctx.shapes);
    if (!resharded.ok()) return ctx.Fail(*root, resharded.status());
    per_source.push_back(*std::move(resharded));
  }
  std::vector<UOpPtr> out;
  for (size_t i = 0; i < per_source[0].size(); ++i) {
    std::vector<UOpPtr> srcs;
    for (const std::vector<UOpPtr>& shards : per_source) srcs.push_back(shards[i]);
    out.push_back(Alu(root->op(), srcs));
  }
  return Multi(out, axis);
}

UOpPtr ReduceMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const Ops op = m.root()->arg()[0].as_op();
  const std::vector<int64_t> axes = IntsOf(m.root()->arg()[1]);
  std::vector<UOpPtr> reduced;
  for (const UOpPtr& s : multi->src()) reduced.push_back(ReduceAxis(s, op, axes, ctx.shapes));
  if (std::optional<int64_t> axis = ArgAxis(multi); axis && absl::c_linear_search(axes, *axis)) {
    // Reduced across the shards: every device combines all of the partial results.
    absl::StatusOr<std::vector<UOpPtr>> all = AllReduce(op, reduced, ctx.shapes);
    if (!all.ok()) return ctx.Fail(*m.root(), all.status());
    return Multi(*all, std::nullopt);
  }
  return Multi(reduced, ArgAxis(multi));
}

UOpPtr ReshapeMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const std::vector<int64_t> arg = IntsOf(m.root()->arg());
  std::vector<UOpPtr> out;
  const std::optional<int64_t> old_axis = ArgAxis(multi);
  if (!old_axis) {
    for (const UOpPtr& s : multi->src()) {
      absl::StatusOr<UOpPtr> r = Reshape(s, arg, ctx.shapes);
      if (!r.ok()) return ctx.Fail(*m.root(), r.status());
      out.push_back(*r);
    }
    return Multi(out, std::nullopt);
  }
  const std::optional<int64_t> axis = AxisOf(m.root(), ctx.shapes);
  const int64_t after_axis =
      axis ? Product(absl::MakeConstSpan(arg).subspan(std::min<size_t>(*axis + 1, arg.size()))) : 0;
  for (const UOpPtr& s : multi->src()) {
    absl::StatusOr<Dims> shape = IntShape(s, ctx.shapes);
    if (!shape.ok()) return ctx.Fail(*m.root(), shape.status());
    const int64_t from_axis = Product(absl::MakeConstSpan(*shape).subspan(*old_axis));
    if (!axis || *axis >= static_cast<int64_t>(arg.size()) || after_axis == 0 ||
        from_axis % after_axis != 0) {
      return ctx.Fail(*m.root(), absl::StrCat("reshape to ", TupleString(SintVec(arg.begin(), arg.end())),
                                              " would move elements between the shards of axis ", *old_axis));
    }
    std::vector<int64_t> shard_arg = arg;
    shard_arg[*axis] = from_axis / after_axis;
    absl::StatusOr<UOpPtr> r = Reshape(s, shard_arg, ctx.shapes);
    if (!r.ok()) return ctx.Fail(*m.root(), r.status());
    out.push_back(*r);
  }
  return Multi(out, axis);
}

UOpPtr ExpandMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const std::optional<int64_t> axis = ArgAxis(multi);
  const std::vector<int64_t> arg = IntsOf(m.root()->arg());
  if (axis && arg[*axis] != ctx.shapes.Shape(m["multi"])[*axis].value()) {
    return ctx.Fail(*m.root(), absl::StrCat("cannot expand the sharded axis ", *axis));
  }
  std::vector<UOpPtr> out;
  for (const UOpPtr& s : multi->src()) {
    std::vector<int64_t> shard_arg = arg;
    if (axis) shard_arg[*axis] = ctx.shapes.Shape(s)[*axis].value();
    absl::StatusOr<UOpPtr> e = Expand(s, shard_arg, ctx.shapes);
    if (!e.ok()) return ctx.Fail(*m.root(), e.status());
    out.push_back(*e);
  }
  return Multi(out, axis);
}

Bounds PairsOf(const Arg& arg) {
  Bounds out;
  for (const Arg& p : arg.as_tuple()) out.emplace_back(p[0].as_int(), p[1].as_int());
  return out;
}

UOpPtr PadMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const std::optional<int64_t> axis = ArgAxis(multi);
  const Bounds pads = PairsOf(m.root()->arg());
  if (axis && pads[*axis] != std::pair<int64_t, int64_t>{0, 0}) {
    return ctx.Fail(*m.root(), absl::StrCat("cannot pad the sharded axis ", *axis));
  }
  std::vector<UOpPtr> out;
  for (const UOpPtr& s : multi->src()) {
    absl::StatusOr<UOpPtr> p = Pad(s, pads, ctx.shapes);
    if (!p.ok()) return ctx.Fail(*m.root(), p.status());
    out.push_back(*p);
  }
  return Multi(out, axis);
}

UOpPtr PermuteMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  std::vector<UOpPtr> out;
  for (const UOpPtr& s : m["multi"]->src()) {
    absl::StatusOr<UOpPtr> p = Permute(s, IntsOf(m.root()->arg()), ctx.shapes);
    if (!p.ok()) return ctx.Fail(*m.root(), p.status());
    out.push_back(*p);
  }
  return Multi(out, AxisOf(m.root(), ctx.shapes));
}

UOpPtr ShrinkMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const std::optional<int64_t> axis = ArgAxis(multi);
  const Bounds arg = PairsOf(m.root()->arg());
  std::vector<UOpPtr> out;
  if (axis) {
    const int64_t size = ctx.shapes.Shape(m["multi"])[*axis].value();
    const Bounds bounds = BoundsOf(multi, ctx.shapes);
    const auto shard = std::find(bounds.begin(), bounds.end(), arg[*axis]);
    if (arg[*axis] != std::pair<int64_t, int64_t>{0, size}) {
      if (shard == bounds.end()) {
        return ctx.Fail(*m.root(),
                        absl::StrCat("a shrink of the sharded axis ", *axis, " must keep one shard"));
      }
      for (size_t a = 0; a < arg.size(); ++a) {
        if (static_cast<int64_t>(a) != *axis &&
            arg[a] != std::pair<int64_t, int64_t>{0, ctx.shapes.Shape(m["multi"])[a].value()}) {
          return ctx.Fail(*m.root(), "cannot shrink the sharded axis and another at once");
        }
      }
      // One shard, copied to every device.
      const UOpPtr& kept = multi->src()[shard - bounds.begin()];
      for (const std::string& d : SplitDevices(DeviceOf(multi))) out.push_back(CopyTo(kept, d));
      return Multi(out, std::nullopt);
    }
  }
  for (const UOpPtr& s : multi->src()) {
    Bounds shard_arg = arg;
    if (axis) shard_arg[*axis] = {0, ctx.shapes.Shape(s)[*axis].value()};
    absl::StatusOr<UOpPtr> r = Shrink(s, shard_arg, ctx.shapes);
    if (!r.ok()) return ctx.Fail(*m.root(), r.status());
    out.push_back(*r);
  }
  return Multi(out, axis);
}

UOpPtr FlipMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const std::optional<int64_t> axis = ArgAxis(multi);
  std::vector<bool> flips;
  for (const Arg& f : m.root()->arg().as_tuple()) flips.push_back(f.as_bool());
  if (axis && flips[*axis]) return ctx.Fail(*m.root(), absl::StrCat("cannot flip the sharded axis ", *axis));
  std::vector<UOpPtr> out;
  for (const UOpPtr& s : multi->src()) {
    absl::InlinedVector<bool, 8> f(flips.begin(), flips.end());
    absl::StatusOr<UOpPtr> r = Flip(s, absl::MakeConstSpan(f.data(), f.size()), ctx.shapes);
    if (!r.ok()) return ctx.Fail(*m.root(), r.status());
    out.push_back(*r);
  }
  return Multi(out, axis);
}

UOpPtr AssignMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* dest = m["dest"].get();
  const UOp* src = m["src"].get();
  if (ArgAxis(dest) != ArgAxis(src) || dest->num_src() != src->num_src()) {
    return ctx.Fail(*m.root(), "the target and the value are sharded differently");
  }
  std::vector<UOpPtr> out;
  for (size_t i = 0; i < dest->num_src(); ++i) {
    out.push_back(UOp::New(Ops::ASSIGN, dest->src()[i]->dtype(), {dest->src()[i], src->src()[i]}));
  }
  return Multi(out, ArgAxis(src));
}

// A copy to one device: the copy it holds already, or the shards copied there, each padded to its place in
// the whole, summed.
UOpPtr CopyMulti(const Match& m) {
  MultiContext& ctx = m.ctx<MultiContext>();
  const UOp* multi = m["multi"].get();
  const std::string& device = m["device"]->arg().as_string();
  const std::optional<int64_t> axis = ArgAxis(multi);
  if (!axis) {
    for (const UOpPtr& s : multi->src()) {
      if (DeviceOf(s.get()) == device) return s;
    }
    return UOp::New(Ops::COPY, multi->dtype(), {multi->src()[0], m["device"]});
  }
  const Bounds bounds = BoundsOf(multi, ctx.shapes);
  UOpPtr sum;
  for (size_t i = 0; i < multi->num_src(); ++i) {
    const UOpPtr& s = multi->src()[i];
    Bounds pads(ctx.shapes.Shape(s).size(), {0, 0});
    pads[*axis] = {bounds[i].first, bounds.back().second - bounds[i].second};
    absl::StatusOr<UOpPtr> placed = Pad(UOp::New(Ops::COPY, s->dtype(), {s, m["device"]}), pads, ctx.shapes);
    if (!placed.ok()) return ctx.Fail(*m.root(), placed.status());
    sum = sum == nullptr ? *placed : UOp::New(Ops::ADD, sum->dtype(), {sum, *placed});
  }
  return sum;
}

UOpPtr PassthroughMulti(const Match& m) {
  std::vector<UOpPtr> out;
  for (const UOpPtr& s : m["multi"]->src()) {
    out.push_back(UOp::New(m.root()->op(), m.root()->dtype(), {s}, m.root()->arg()));
  }
  return Multi(out, ArgAxis(m["multi"].get()));
}

// uopc's convolution node, whose value is its first source: its gradients were built before the multi rules
// ran (on the graph with MULTIs), so here it is the value, as the scheduler would make it.
UOpPtr CustomGradientMulti(const Match& m) { return m["multi"]; }

const PatternMatcher& MultiRules() {
  static const PatternMatcher* const rules = [] {
    const UPat multi = UPat(Ops::MULTI).named("multi");
    return new PatternMatcher({
        {UPat(groups::kALU).named("root"),
         [](const Match& m) { return AluMulti(m.root(), m.ctx<MultiContext>()); }},
        {UPat(Ops::REDUCE_AXIS).src(multi).named("root"), ReduceMulti},
        {UPat(Ops::RESHAPE).src(multi).named("root"), ReshapeMulti},
        {UPat(Ops::EXPAND).src(multi).named("root"), ExpandMulti},
        {UPat(Ops::PAD).src(multi).named("root"), PadMulti},
        {UPat(Ops::PERMUTE).src(multi).named("root"), PermuteMulti},
        {UPat(Ops::SHRINK).src(multi).named("root"), ShrinkMulti},
        {UPat(Ops::FLIP).src(multi).named("root"), FlipMulti},
        {UPat(Ops::ASSIGN).src(UPat(Ops::MULTI).named("dest"), UPat(Ops::MULTI).named("src")).named("root"),
         AssignMulti},
        {UPat(Ops::COPY).src(multi, UPat(Ops::DEVICE).named("device")).named("root"), CopyMulti},
        {UPat(OpSet{Ops::CAST, Ops::BITCAST, Ops::CONTIGUOUS, Ops::DETACH, Ops::CONTIGUOUS_BACKWARD,
                    Ops::FUSE})
             .src(multi)
             .named("root"),
         PassthroughMulti},
        {UPat(Ops::CUSTOM_GRADIENT).src(multi, UPat(), UPat()).named("root"), CustomGradientMulti},
    });
  }();
  return *rules;
}

}  // namespace

std::vector<std::string> SplitDevices(const std::string& device) { return absl::StrSplit(device, ','); }

std::optional<int64_t> ShardAxisOf(const UOpPtr& u, TensorShapes& shapes) { return AxisOf(u, shapes); }

absl::StatusOr<UOpPtr> ShardUOp(const UOpPtr& x, absl::Span<const std::string> devices,
                                std::optional<int64_t> axis, TensorShapes& shapes) {
  if (devices.empty()) return absl::InvalidArgumentError("shard: no devices");
  const std::string own = DeviceOf(x.get());
  std::vector<UOpPtr> shards;
  for (const std::string& d : devices) shards.push_back(d == own ? x : CopyTo(x, d));
  if (axis) {
    UOPC_ASSIGN_OR_RETURN(Dims shape, IntShape(x, shapes));
    const int64_t n = static_cast<int64_t>(devices.size());
    if (shape[*axis] % n != 0) {
      return absl::InvalidArgumentError(absl::StrCat("shard: axis ", *axis, " of size ", shape[*axis],
                                                     " does not split evenly over ", n, " devices"));
    }
    const int64_t size = shape[*axis] / n;
    for (int64_t i = 0; i < n; ++i) {
      Bounds b;
      for (size_t a = 0; a < shape.size(); ++a) {
        b.push_back(static_cast<int64_t>(a) == *axis ? std::pair<int64_t, int64_t>{i * size, (i + 1) * size}
                                                     : std::pair<int64_t, int64_t>{0, shape[a]});
      }
      UOPC_ASSIGN_OR_RETURN(shards[i], Shrink(shards[i], b, shapes));
    }
  }
  return Multi(shards, axis);
}

absl::StatusOr<std::vector<UOpPtr>> AllReduce(Ops op, absl::Span<const UOpPtr> shards, TensorShapes& shapes) {
  const int64_t n = static_cast<int64_t>(shards.size());
  UOPC_ASSIGN_OR_RETURN(Dims shape, IntShape(shards[0], shapes));
  for (const UOpPtr& s : shards) {
    UOPC_ASSIGN_OR_RETURN(Dims other, IntShape(s, shapes));
    if (other != shape) return absl::InvalidArgumentError("all-reduce of shards of different shapes");
  }
  const int64_t numel = Product(shape);
  const int64_t ring = EnvInt("RING", 1);
  const bool use_ring =
      ring >= 2 || (n > 2 && numel > EnvInt("RING_ALLREDUCE_THRESHOLD", 256'000) && ring >= 1);
  if (EnvInt("DEBUG", 0) >= 2) {
    std::printf("%s ALLREDUCE %lldx%lld | %s\n", use_ring ? "RING" : "NAIVE", static_cast<long long>(n),
                static_cast<long long>(numel), shards[0]->dtype().ToString().c_str());
  }
  std::vector<UOpPtr> out;
  if (!use_ring) {
    for (const UOpPtr& target : shards) {
      const std::string device = DeviceOf(target.get());
      UOpPtr acc;
      for (const UOpPtr& s : shards) {
        UOpPtr here = CopyTo(s, device);
        acc = acc == nullptr ? here : Alu(op, {acc, here});
      }
      out.push_back(acc);
    }
    return out;
  }
  // Chunks of the flattened shards, as even as a factor of up to 32 elements allows.
  int64_t factor = 1;
  for (int64_t f : {32, 16, 8, 4, 2}) {
    if (numel % f == 0) {
      factor = f;
      break;
    }
  }
  const int64_t base = numel / factor / n, left = numel / factor % n;
  Bounds chunks;
  for (int64_t i = 0, at = 0; i < n; ++i) {
    const int64_t size = (i < left ? base + 1 : base) * factor;
    chunks.emplace_back(at, at + size);
    at += size;
  }
  std::vector<std::vector<UOpPtr>> chunked(n);
  for (int64_t d = 0; d < n; ++d) {
    UOPC_ASSIGN_OR_RETURN(UOpPtr flat, Reshape(shards[d], std::vector<int64_t>{numel}, shapes));
    for (const auto& c : chunks) {
      UOPC_ASSIGN_OR_RETURN(UOpPtr part, Shrink(flat, Bounds{c}, shapes));
      chunked[d].push_back(part);
    }
  }
  // Scatter-reduce: after n-1 steps device (i+n-1)%n holds chunk i combined over all devices.
  for (int64_t step = 0; step < n - 1; ++step) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t src = (i + step) % n, dest = (i + step + 1) % n;
      chunked[dest][i] =
          Alu(op, {chunked[dest][i], CopyTo(chunked[src][i], DeviceOf(chunked[dest][i].get()))});
    }
  }
  // All-gather: each combined chunk travels on around the ring.
  for (int64_t step = 0; step < n - 1; ++step) {
    for (int64_t i = 0; i < n; ++i) {
      const int64_t src = ((i + step - 1) % n + n) % n, dest = (i + step) % n;
      chunked[dest][i] = CopyTo(chunked[src][i], DeviceOf(chunked[dest][i].get()));
    }
  }
  for (int64_t d = 0; d < n; ++d) {
    UOpPtr whole;
    for (int64_t i = 0; i < n; ++i) {
      UOPC_ASSIGN_OR_RETURN(UOpPtr placed,
                            Pad(chunked[d][i], Bounds{{chunks[i].first, numel - chunks[i].second}}, shapes));
      whole = whole == nullptr ? placed : UOp::New(Ops::ADD, placed->dtype(), {whole, placed});
    }
    UOPC_ASSIGN_OR_RETURN(UOpPtr r, Reshape(whole, shape, shapes));
    out.push_back(std::move(r));
  }
  return out;
}

// Whether an arg holds only integers and bools (no symbolic size).
bool IntegerArg(const Arg& arg) {
  if (arg.is_int() || arg.is_bool()) return true;
  return arg.is_tuple() && absl::c_all_of(arg.as_tuple(), IntegerArg);
}

absl::StatusOr<UOpMap> MultiMap(const UOpPtr& sink) {
  // The rules take integer shapes, as tinygrad's (it asserts all_int).
  for (const UOp* u : sink->Toposort()) {
    if (groups::kMovement.contains(u->op()) && !IntegerArg(u->arg())) {
      return absl::UnimplementedError(
          absl::StrCat(OpName(u->op()), " with a symbolic size in a graph with sharded tensors"));
    }
  }
  MultiContext ctx;
  RewriteOptions options;
  options.ctx = &ctx;
  options.name = "multi";
  UOPC_ASSIGN_OR_RETURN(UOpMap map, TryGraphRewriteMap(sink, MultiRules(), options));
  UOPC_RETURN_IF_ERROR(ctx.error);
  // Anything left above a MULTI is an op the rules do not place on shards.
  auto it = map.find(sink.get());
  if (it != map.end()) {
    for (const UOp* u : it->second->Toposort()) {
      if (u->op() == Ops::SINK || u->op() == Ops::MULTI) continue;
      for (const UOpPtr& s : u->src()) {
        if (s->op() == Ops::MULTI) {
          return absl::UnimplementedError(
              absl::StrCat(OpName(u->op()), " is not supported on sharded tensors"));
        }
      }
    }
  }
  absl::erase_if(map, [](const auto& kv) { return kv.first == kv.second.get(); });
  return map;
}

}  // namespace uopc::tensor_internal
