#include "codegen/expander.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "codegen/ignore.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "rewrite/upat.h"

namespace uopc {

namespace expander_internal {

std::vector<LaneChoice> LaneChoices(const AxisSizes& axes) {
  std::vector<LaneChoice> out = {{}};
  for (const auto& [axis, size] : axes) {
    std::vector<LaneChoice> next;
    next.reserve(out.size() * std::max<int64_t>(size, 0));
    for (const LaneChoice& prefix : out) {
      for (int64_t lane = 0; lane < size; ++lane) {
        next.push_back(prefix);
        next.back().emplace_back(axis, lane);
      }
    }
    out = std::move(next);
  }
  return out;
}

namespace {
// The lane `choice` gives `axis` (its last entry for that axis), or nullopt.
std::optional<int64_t> LaneOf(const LaneChoice& choice, int64_t axis) {
  for (auto it = choice.rbegin(); it != choice.rend(); ++it) {
    if (it->first == axis) return it->second;
  }
  return std::nullopt;
}
}  // namespace

int64_t LaneIndex(const AxisSizes& axes, const LaneChoice& choice) {
  int64_t idx = 0, stride = 1;
  for (auto it = axes.rbegin(); it != axes.rend(); ++it) {
    std::optional<int64_t> lane = LaneOf(choice, it->first);
    if (!lane) return -1;
    idx += *lane * stride;
    stride *= it->second;
  }
  return idx;
}

std::vector<int64_t> SwizzleLanes(const AxisSizes& to, const AxisSizes& from,
                                  const std::vector<int64_t>& zeroed) {
  std::vector<int64_t> lanes;
  for (LaneChoice choice : LaneChoices(to)) {
    for (int64_t axis : zeroed) choice.emplace_back(axis, 0);
    lanes.push_back(LaneIndex(from, choice));
  }
  return lanes;
}

}  // namespace expander_internal

namespace {

using expander_internal::AxisSizes;
using expander_internal::LaneChoice;
using expander_internal::LaneChoices;
using expander_internal::LaneIndex;
using expander_internal::SwizzleLanes;

// Lanes an expansion may have: a vector dtype's widest count.
constexpr int64_t kMaxLanes = 65535;

// The axes of an UNROLL/CONTRACT arg, or nullopt when it is not a tuple of (axis, size) int pairs with sizes
// in [1, kMaxLanes].
std::optional<AxisSizes> ParseAxes(const Arg& arg) {
  if (!arg.is_tuple()) return std::nullopt;
  AxisSizes axes;
  for (const Arg& pair : arg.as_tuple()) {
    if (!pair.is_tuple() || pair.size() != 2 || !pair[0].is_int() || !pair[1].is_int()) return std::nullopt;
    if (pair[1].as_int() < 1 || pair[1].as_int() > kMaxLanes) return std::nullopt;
    axes.emplace_back(pair[0].as_int(), pair[1].as_int());
  }
  return axes;
}

Arg AxesArg(const AxisSizes& axes) {
  Arg::Tuple t;
  for (const auto& [axis, size] : axes) t.push_back(Arg{Arg(axis), Arg(size)});
  return Arg(std::move(t));
}

// The number of lanes of `axes`, or -1 when it exceeds kMaxLanes.
int64_t Lanes(const AxisSizes& axes) {
  int64_t n = 1;
  for (const auto& axis_size : axes) {
    n *= axis_size.second;  // sizes are at most kMaxLanes, so this cannot overflow before the check
    if (n > kMaxLanes) return -1;
  }
  return n;
}

// tinygrad's DType.scalar(): for a (vector of) pointer(s), the single pointer; else the element type.
DType TinygradScalar(DType dt) {
  if (!dt.is_ptr()) return dt.scalar();
  return dt.vcount() > 1 ? dt.base().Ptr(dt.ptr_size(), dt.is_local()) : dt;
}

// tinygrad's UOp.gep, pointer vectors included: one lane of a VECTORIZE, VCONST or CONST folds at once.
UOpPtr Gep(const UOpPtr& x, const std::vector<int64_t>& lanes) {
  if (!x->dtype().is_ptr()) return x.gep(lanes);
  if (lanes.size() == 1 && x->op() == Ops::VECTORIZE && lanes[0] >= 0 &&
      static_cast<size_t>(lanes[0]) < x->num_src()) {
    return x->src()[lanes[0]];
  }
  DType scalar = TinygradScalar(x->dtype());
  DType out = lanes.size() > 1 ? scalar.Vec(static_cast<int>(lanes.size())) : scalar;
  return UOp::New(Ops::GEP, out, {x}, Arg::IntTuple(lanes));
}

// The axes a WMMA does not unroll over: its reduce axes and the axes of its operands' upcasts.
std::optional<std::vector<int64_t>> WmmaExcludedAxes(const UOp& wmma) {
  const Arg& arg = wmma.arg();
  if (!arg.is_tuple() || arg.size() < 2) return std::nullopt;
  std::vector<int64_t> axes;
  auto add = [&](const Arg& a) {
    if (!a.is_int()) return false;
    if (std::find(axes.begin(), axes.end(), a.as_int()) == axes.end()) axes.push_back(a.as_int());
    return true;
  };
  const Arg& reduce_axes = arg[arg.size() - 1];
  const Arg& upcast_axes = arg[arg.size() - 2];
  if (!reduce_axes.is_tuple() || !upcast_axes.is_tuple()) return std::nullopt;
  for (const Arg& a : reduce_axes.as_tuple()) {
    if (!add(a)) return std::nullopt;
  }
  for (const Arg& operand : upcast_axes.as_tuple()) {
    if (!operand.is_tuple()) return std::nullopt;
    for (const Arg& pair : operand.as_tuple()) {
      if (!pair.is_tuple() || pair.size() < 1 || !add(pair[0])) return std::nullopt;
    }
  }
  return axes;
}

// An op with UNROLL sources becomes one vector op over the lanes of every axis they unroll, under an UNROLL
// of those axes (tinygrad's do_expand).
UOpPtr DoExpand(const UOpPtr& root) {
  std::vector<const UOp*> unrolls;
  for (const UOpPtr& s : root->src()) {
    if (s->op() == Ops::UNROLL) unrolls.push_back(s.get());
  }
  if (unrolls.empty()) return nullptr;
  std::vector<int64_t> excluded;
  if (root->op() == Ops::WMMA) {
    std::optional<std::vector<int64_t>> axes = WmmaExcludedAxes(*root);
    if (!axes) return nullptr;
    excluded = std::move(*axes);
  }
  bool all_same = std::all_of(unrolls.begin(), unrolls.end(),
                              [&](const UOp* u) { return u->arg() == unrolls[0]->arg(); });
  std::optional<AxisSizes> axes;
  if (all_same && excluded.empty()) {
    axes = ParseAxes(unrolls[0]->arg());
    if (!axes) return nullptr;
  } else {
    // Every axis of any source, deduplicated and sorted, less the excluded ones.
    AxisSizes all;
    for (const UOp* u : unrolls) {
      std::optional<AxisSizes> a = ParseAxes(u->arg());
      if (!a) return nullptr;
      for (const auto& p : *a) {
        if (std::find(all.begin(), all.end(), p) == all.end()) all.push_back(p);
      }
    }
    std::sort(all.begin(), all.end());
    axes.emplace();
    for (const auto& p : all) {
      if (std::find(excluded.begin(), excluded.end(), p.first) == excluded.end()) axes->push_back(p);
    }
  }
  const int64_t lanes = Lanes(*axes);
  if (lanes < 1) return nullptr;
  const int n = static_cast<int>(lanes);

  UOp::SrcVector src;
  for (size_t i = 0; i < root->num_src(); ++i) {
    const UOpPtr& s = root->src()[i];
    if (s->op() == Ops::UNROLL) {
      if (root->op() == Ops::IF && i == 0) {
        // An IF's condition holds when any lane's does.
        UOpPtr any = Gep(s->src()[0], {0});
        for (int64_t lane = 1; lane < lanes; ++lane) any = any | Gep(s->src()[0], {lane});
        src.push_back(std::move(any));
        continue;
      }
      std::optional<AxisSizes> from = ParseAxes(s->arg());
      if (!from) return nullptr;
      if (*from == *axes) {
        src.push_back(s->src()[0]);
        continue;
      }
      std::vector<int64_t> picked = SwizzleLanes(*axes, *from, excluded);
      if (std::find(picked.begin(), picked.end(), -1) != picked.end()) return nullptr;
      // Each lane of a vector-typed source is a group of count elements.
      if (const int count = s->dtype().count(); count > 1) {
        std::vector<int64_t> elements;
        for (int64_t lane : picked) {
          for (int j = 0; j < count; ++j) elements.push_back(lane * count + j);
        }
        picked = std::move(elements);
      }
      src.push_back(Gep(s->src()[0], picked));
    } else if (root->op() == Ops::IF || (root->op() == Ops::REDUCE && s->op() == Ops::RANGE)) {
      // An IF's barrier and a REDUCE's ranges are not per lane.
      src.push_back(s);
    } else if (const int count = s->dtype().count(); count > 1) {
      if (lanes * count > kMaxLanes) return nullptr;
      std::optional<DType> dt = TinygradScalar(s->dtype()).vec(n * count);
      if (!dt) return nullptr;
      src.push_back(UOp::New(Ops::CAT, *dt, std::vector<UOpPtr>(n, s)));
    } else {
      if (s->dtype().vcount() != 1)
        return nullptr;  // a vector of pointers: tinygrad cannot broadcast it either
      src.push_back(s.broadcast(n));
    }
  }

  Arg arg = root->arg();
  if (root->op() == Ops::GEP) {
    // A GEP of one element picks that element in each lane.
    if (root->dtype().count() != 1 || !arg.is_tuple() || arg.size() < 1 || !arg[0].is_int()) return nullptr;
    const int64_t total = src[0]->dtype().count(), step = total / lanes;
    if (step < 1) return nullptr;
    std::vector<int64_t> picked;
    for (int64_t j = arg[0].as_int(); j < total; j += step) picked.push_back(j);
    arg = Arg::IntTuple(picked);
  }
  if (root->dtype().count() * lanes > kMaxLanes) return nullptr;
  std::optional<DType> dt = TinygradScalar(root->dtype()).vec(root->dtype().count() * n);
  if (!dt) return nullptr;
  UOpPtr expanded = UOp::New(root->op(), *dt, std::move(src), std::move(arg));
  return UOp::New(Ops::UNROLL, root->dtype(), {expanded}, AxesArg(*axes));
}

// CONTRACT folds some of an UNROLL's axes into the vector dtype, leaving an UNROLL of the rest (tinygrad's
// do_contract).
UOpPtr DoContract(const UOpPtr& con) {
  const UOpPtr& ex = con->src()[0];
  const int count = con->dtype().count();
  // Nothing unrolled: every lane is the same value.
  if (ex->op() != Ops::UNROLL) return UOp::New(Ops::VECTORIZE, con->dtype(), std::vector<UOpPtr>(count, ex));
  std::optional<AxisSizes> contracted = ParseAxes(con->arg()), unrolled = ParseAxes(ex->arg());
  if (!contracted || !unrolled || Lanes(*contracted) != count || Lanes(*unrolled) < 1) return nullptr;
  AxisSizes kept;
  for (const auto& p : *unrolled) {
    if (std::find(contracted->begin(), contracted->end(), p) == contracted->end()) kept.push_back(p);
  }
  std::vector<int64_t> picked;
  const std::vector<LaneChoice> inner = LaneChoices(*contracted);
  for (const LaneChoice& outer : LaneChoices(kept)) {
    for (const LaneChoice& in : inner) {
      LaneChoice choice = outer;
      choice.insert(choice.end(), in.begin(), in.end());
      const int64_t idx = LaneIndex(*unrolled, choice);
      if (idx < 0) return nullptr;
      picked.push_back(idx);
    }
  }
  return UOp::New(Ops::UNROLL, con->dtype(), {Gep(ex->src()[0], picked)}, AxesArg(kept));
}

// `root` with every LOAD that waits on a BARRIER waiting on IF(gate, barrier) instead, so that the
// lane loads only where the store is made (nodes below a barrier are left as they are).
UOpPtr GateLoadsBehindBarriers(const UOpPtr& root, const UOpPtr& gate) {
  absl::flat_hash_map<const UOp*, UOpPtr> gated;
  for (const UOp* u : root->Toposort()) {
    UOpPtr out;
    if (u->op() == Ops::BARRIER) {
      out = u->ref();
    } else if (u->op() == Ops::LOAD && u->num_src() > 0 && u->src()[u->num_src() - 1]->op() == Ops::BARRIER) {
      UOp::SrcVector src(u->src().begin(), u->src().end() - 1);
      src.push_back(UOp::New(Ops::IF, dtypes::kVoid, {gate, u->src()[u->num_src() - 1]}));
      out = UOp::New(u->op(), u->dtype(), std::move(src), u->arg());
    } else {
      UOp::SrcVector src;
      for (const UOpPtr& s : u->src()) src.push_back(gated.at(s.get()));
      out = UOp::WithSources(*u, std::move(src));
    }
    gated.emplace(u, std::move(out));
  }
  return gated.at(root.get());
}

UOpPtr CreateGate(const UOpPtr& root) {
  const UOp* idx = root->src(0);
  if (idx->op() == Ops::CAST) idx = idx->src(0);
  if (idx->op() != Ops::INDEX || idx->num_src() == 2) return nullptr;
  UOpPtr gated = GateLoadsBehindBarriers(root, idx->src()[2]);
  return gated == root ? nullptr : gated;
}

}  // namespace

const PatternMatcher& Expander() {
  static const PatternMatcher* const pm = [] {
    const OpSet expandable =
        groups::kALU | OpSet{Ops::CAST,  Ops::BITCAST, Ops::GEP,       Ops::WMMA, Ops::LOAD,  Ops::STORE,
                             Ops::INDEX, Ops::ASSIGN,  Ops::VECTORIZE, Ops::IF,   Ops::REDUCE};
    // UNROLL(ADD(GEP(x, i), GEP(y, i)) for i in 0..7): what WMMA's output leaves behind.
    std::vector<UPat> lane_adds;
    for (int64_t i = 0; i < 8; ++i) lane_adds.push_back(UPat::Var("x").gep(i) + UPat::Var("y").gep(i));
    return new PatternMatcher({
        // Nested UNROLLs: the inner axes vary slower.
        {UPat(Ops::UNROLL).src(UPat(Ops::UNROLL).named("inner")).named("outer"),
         [](const Match& m) -> UOpPtr {
           const UOpPtr& inner = m["inner"];
           const Arg& outer_arg = m["outer"]->arg();
           if (!inner->arg().is_tuple() || !outer_arg.is_tuple()) return nullptr;
           Arg::Tuple axes = inner->arg().as_tuple();
           axes.insert(axes.end(), outer_arg.as_tuple().begin(), outer_arg.as_tuple().end());
           return UOp::New(Ops::UNROLL, m["outer"]->dtype(), {inner->src()[0]}, Arg(std::move(axes)));
         }},
        {UPat(expandable).named("root").custom_early_reject(OpSet{Ops::UNROLL}),
         [](const Match& m) { return DoExpand(m.root()); }},
        {UPat(Ops::CONTRACT).named("con"), [](const Match& m) { return DoContract(m["con"]); }},
        // A vector of one accumulator is a vector accumulator.
        {UPat(Ops::VECTORIZE).src_repeat(UPat(Ops::DEFINE_ACC).named("acc")).named("v"),
         [](const Match& m) -> UOpPtr {
           const UOpPtr& acc = m["acc"];
           const DType dt = m["v"]->dtype();
           if (acc->num_src() < 1 || acc->src(0)->dtype().vcount() != 1) return nullptr;
           UOp::SrcVector src(acc->src().begin(), acc->src().end());
           src[0] = src[0].broadcast(dt.count());
           return UOp::New(Ops::DEFINE_ACC, dt, std::move(src), acc->arg());
         }},
        // A BARRIER is not expanded: each lane waits on the same barrier.
        {UPat(Ops::BARRIER).src(UPat(Ops::UNROLL).named("ex")),
         [](const Match& m) {
           const UOpPtr& ex = m["ex"];
           UOpPtr barrier = UOp::New(Ops::BARRIER, dtypes::kVoid, ex->src());
           return UOp::New(Ops::UNROLL, dtypes::kVoid, std::vector<UOpPtr>(ex->num_src(), barrier),
                           ex->arg());
         }},
        // An UNROLL of no axes is its source.
        {UPat(Ops::UNROLL).src(UPat::Var("x")).arg(Arg(Arg::Tuple{})), [](const Match& m) { return m["x"]; }},
        // Lane-wise adds of two vectors are one vector add.
        {UPat(Ops::UNROLL).src(lane_adds).named("ex"),
         [](const Match& m) {
           const UOpPtr sum = m["x"] + m["y"];
           std::vector<UOpPtr> src;
           for (int64_t i = 0; i < 8; ++i) src.push_back(sum.gep(i));
           return UOp::New(Ops::UNROLL, m["ex"]->dtype(), src, m["ex"]->arg());
         }},
    });
  }();
  return *pm;
}

const PatternMatcher& MigrateIndexing() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // Must run before the expander.
      {UPat(Ops::STORE).named("root"), [](const Match& m) { return CreateGate(m.root()); }},
  });
  return *pm;
}

absl::StatusOr<UOpPtr> RewriteInitialSymbolic(const UOpPtr& sink, const Renderer& /*renderer*/) {
  static const PatternMatcher* const pm = new PatternMatcher(Sym() + MigrateIndexing());
  return TryGraphRewrite(sink, *pm, {.name = "initial symbolic"});
}

absl::StatusOr<UOpPtr> RewriteExpander(const UOpPtr& sink, const Renderer& /*renderer*/) {
  // One matcher compiled from the three lists: `a + b + c` would also compile `a + b`, Sym()'s rules
  // included.
  static const PatternMatcher* const pm = [] {
    std::vector<std::shared_ptr<const Rule>> rules = PmDeleteIgnore().rules();
    for (const PatternMatcher* more : {&Sym(), &Expander()}) {
      rules.insert(rules.end(), more->rules().begin(), more->rules().end());
    }
    return new PatternMatcher(std::move(rules));
  }();
  return TryGraphRewrite(sink, *pm, {.name = "expander"});
}

}  // namespace uopc
