// The lowerer's rules (pm_lowerer) and the axis indices they use (get_index), after tinygrad v0.10.3's
// codegen/lowerer.py.
#include "codegen/lowerer.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "shapetracker/contraction.h"
#include "shapetracker/shapetracker.h"
#include "uop/kernel_info.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// Merges adjacent dims, leftmost first, until they fit `max_sizes` (tinygrad's _group_dims); nullopt when no
// merge helps.
std::optional<std::vector<int64_t>> GroupDims(std::vector<int64_t> dims,
                                              absl::Span<const int64_t> max_sizes) {
  auto fits = [&] {
    if (dims.size() > max_sizes.size()) return false;
    for (size_t i = 0; i < dims.size(); ++i) {
      if (dims[i] > max_sizes[i]) return false;
    }
    return true;
  };
  while (!fits()) {
    bool merged = false;
    for (size_t i = 0; i < max_sizes.size(); ++i) {
      if (i + 1 < dims.size() && dims[i] * dims[i + 1] <= max_sizes[i]) {
        dims[i] *= dims[i + 1];
        dims.erase(dims.begin() + i + 1);
        merged = true;
        break;
      }
    }
    if (!merged) return std::nullopt;
  }
  return dims;
}

// Moves factors of a dim that is too large into the next dim, cyclically over three dims (tinygrad's
// _split_dims).
absl::StatusOr<std::vector<int64_t>> SplitDims(const std::vector<int64_t>& dims,
                                               absl::Span<const int64_t> max_sizes) {
  bool fits = true;
  for (size_t i = 0; i < dims.size() && i < max_sizes.size(); ++i) fits &= dims[i] <= max_sizes[i];
  if (fits) return dims;
  if (max_sizes.size() < 3 || dims.size() > 3) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot limit dim ", TupleString(dims), " to ", TupleString(max_sizes)));
  }
  std::vector<int64_t> d = dims;
  d.resize(3, 1);
  for (size_t i = 0; i < 3; ++i) {
    while (d[i] > max_sizes[i]) {
      int64_t div = 1;
      const auto limit = static_cast<int64_t>(std::ceil(std::sqrt(static_cast<double>(d[i]))));
      for (int64_t c = 2; c <= limit; ++c) {
        if (d[i] % c == 0) {
          div = c;
          break;
        }
      }
      if (div == 1) {
        return absl::InvalidArgumentError(
            absl::StrCat("cannot limit dim ", TupleString(dims), " to ", TupleString(max_sizes)));
      }
      d[i] /= div;
      d[(i + 1) % 3] *= div;
    }
  }
  if (d[2] == 1) d.resize(2);
  return d;
}

// ---- the AST queries get_index needs ----

// The tracker of a LOAD's or STORE's VIEW source (tinygrad's st_arg), or nullptr.
const ShapeTracker* StArg(const UOp* u) {
  for (const UOpPtr& s : u->src()) {
    if (s->op() == Ops::VIEW) return ShapeTrackerOf(s.get());
  }
  return nullptr;
}

// The axes a REDUCE_AXIS reduces (its arg is (op, axes)).
absl::StatusOr<std::vector<int64_t>> AxisArg(const UOp* u) {
  const Arg& arg = u->arg();
  if (!arg.is_tuple() || arg.size() != 2 || !arg[0].is_op() || !arg[1].is_tuple()) {
    return absl::InvalidArgumentError(absl::StrCat("REDUCE_AXIS arg is not (op, axes): ", arg.ToString()));
  }
  std::vector<int64_t> axes;
  for (const Arg& a : arg[1].as_tuple()) {
    if (!a.is_int()) return absl::InvalidArgumentError(absl::StrCat("REDUCE_AXIS axis: ", a.ToString()));
    axes.push_back(a.as_int());
  }
  return axes;
}

// tinygrad's UOp.full_shape: a VIEW's shape, else the elementwise max of the sources' full shapes (those that
// have one), truncated to the shortest.
class FullShapes {
 public:
  absl::StatusOr<SintVec> Of(const UOp* u) {
    for (const UOp* n : u->Toposort()) {
      if (memo_.contains(n)) continue;
      SintVec shape;
      if (n->op() == Ops::VIEW) {
        const ShapeTracker* st = ShapeTrackerOf(n);
        if (st == nullptr) return absl::InvalidArgumentError("VIEW without a ShapeTracker arg");
        shape = st->shape();
      } else {
        bool first = true;
        for (const UOpPtr& s : n->src()) {
          const SintVec& ps = memo_.at(s.get());
          if (ps.empty()) continue;
          if (first) {
            shape = ps;
            first = false;
            continue;
          }
          if (ps.size() < shape.size()) shape.resize(ps.size());
          for (size_t i = 0; i < shape.size(); ++i) shape[i] = Max(shape[i], ps[i]);
        }
      }
      memo_.emplace(n, std::move(shape));
    }
    return memo_.at(u);
  }

 private:
  absl::flat_hash_map<const UOp*, SintVec> memo_;
};

// Checks what the rules assume of the AST, so that bad input is an error rather than a failed CHECK.
absl::Status ValidateAst(const UOpPtr& sink, size_t num_axes) {
  for (const UOp* u : sink->Toposort()) {
    switch (u->op()) {
      case Ops::LOAD:
      case Ops::STORE:
        if (u->num_src() >= 2 && u->src(1)->op() == Ops::VIEW) {
          const ShapeTracker* st = StArg(u);
          if (st == nullptr) return absl::InvalidArgumentError("LOAD/STORE VIEW without a ShapeTracker");
          if (st->shape().size() > num_axes) {
            return absl::InvalidArgumentError(absl::StrCat("a ", OpName(u->op()), " view has shape ",
                                                           TupleString(st->shape()),
                                                           ", more axes than the kernel's ", num_axes));
          }
          if (u->op() == Ops::STORE && u->num_src() < 3) {
            return absl::InvalidArgumentError("STORE without a value");
          }
          if (u->op() == Ops::LOAD && u->src(0)->op() == Ops::DEFINE_LOCAL && u->num_src() < 3) {
            return absl::InvalidArgumentError("LOAD of local memory without the STORE it waits for");
          }
        }
        break;
      case Ops::VALID:
      case Ops::CONST:
      case Ops::DEFINE_VAR:
        if (u->num_src() == 1 && u->src(0)->op() == Ops::VIEW) {
          const ShapeTracker* st = ShapeTrackerOf(u->src(0));
          if (st == nullptr) return absl::InvalidArgumentError("VIEW without a ShapeTracker arg");
          if (u->op() == Ops::VALID) {
            if (st->shape().size() > num_axes) {
              return absl::InvalidArgumentError("VALID view has too many axes");
            }
            break;
          }
          for (const View& v : st->views()) {
            if (v.mask()) {
              return absl::InvalidArgumentError(
                  absl::StrCat("VIEW in CONST/DEFINE_VAR source must be unmasked, got ", st->ToString()));
            }
          }
        }
        break;
      case Ops::REDUCE_AXIS: {
        if (u->num_src() != 1) return absl::InvalidArgumentError("REDUCE_AXIS needs one source");
        UOPC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxisArg(u));
        for (int64_t a : axes) {
          if (a < 0 || a >= static_cast<int64_t>(num_axes)) {
            return absl::InvalidArgumentError(absl::StrCat("REDUCE_AXIS axis ", a, " out of range"));
          }
        }
        break;
      }
      case Ops::IGNORE:
        if (u->num_src() == 0) return absl::InvalidArgumentError("IGNORE needs a source");
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

// ---- the rules ----

UOpPtr LowerReduceAxis(const IndexContext& ctx, const UOpPtr& x) {
  // Grouped-reduce axes read back local memory in loops, so the late indices are the right ones here.
  std::vector<UOpPtr> reduce_range;
  Arg::Tuple contract_axis;
  int contract_size = 1;
  for (const Arg& a : x->arg()[1].as_tuple()) {
    const UOpPtr& r = ctx.ridxs[a.as_int()];
    if (r->op() == Ops::RANGE) {
      reduce_range.push_back(r);
    } else {
      // An upcasted axis: reduced horizontally, within the vector the CONTRACT gathers.
      UOPC_CHECK(r->op() == Ops::UNROLL, "a reduced axis that is neither a loop nor upcasted");
      for (const Arg& pair : r->arg().as_tuple()) {
        contract_axis.push_back(pair);
        contract_size *= static_cast<int>(pair[1].as_int());
      }
    }
  }
  UOpPtr ret = x->src()[0];
  if (!contract_axis.empty()) {
    ret = UOp::New(Ops::CONTRACT, x->dtype().Vec(contract_size), {ret}, Arg(std::move(contract_axis)));
  }
  std::vector<UOpPtr> src = {ret};
  src.insert(src.end(), reduce_range.begin(), reduce_range.end());
  return UOp::New(Ops::REDUCE, x->dtype(), src, x->arg()[0]);
}

UOpPtr LowerLoadStore(const IndexContext& ctx, const UOpPtr& x) {
  const ShapeTracker& st = *StArg(x);
  const UOpPtr& buf = x->src()[0];
  const bool local_buffer = buf->dtype().is_local();
  const bool reads_local = x->op() == Ops::LOAD && buf->op() == Ops::DEFINE_LOCAL;
  auto [idx, valid] = st.ToIndexedUops(absl::MakeConstSpan(reads_local ? ctx.ridxs : ctx.idxs));
  if (x->op() == Ops::LOAD) {
    std::vector<UOpPtr> src = {buf.index(idx, valid)};
    // Reading local memory waits for every thread's store.
    if (reads_local) src.push_back(UOp::New(Ops::BARRIER, dtypes::kVoid, {x->src()[2]}));
    return UOp::New(Ops::LOAD, x->dtype(), src);
  }
  const UOpPtr& value = x->src()[2];
  // A local store of a reduce whose input was itself read from local memory stores the result back for every
  // thread: at position 0 of the reduced axes.
  bool store_back = false;
  if (local_buffer && value->op() == Ops::REDUCE) {
    const UOp* reduce_input = value->src(0);
    store_back = reduce_input->op() == Ops::LOAD && reduce_input->src(0)->dtype().is_local();
  }
  if (store_back) {
    std::vector<UOpPtr> zeroed;
    for (const UOpPtr& u : ctx.idxs) {
      bool reduced = std::find(value->src().begin(), value->src().end(), u) != value->src().end();
      zeroed.push_back(reduced ? u.const_like(0) : u);
    }
    idx = st.ToIndexedUops(absl::MakeConstSpan(zeroed)).first;
  }
  // Only the threads at position 0 of the grouped-reduce axes write the result.
  if (!local_buffer || store_back) {
    for (size_t i = 0; i < ctx.idxs.size(); ++i) {
      if (ctx.idxs[i] != ctx.ridxs[i]) valid = valid * ctx.idxs[i].eq(0);
    }
  }
  return UOp::New(Ops::STORE, dtypes::kVoid, {buf.index(idx, valid), value});
}

const PatternMatcher& LowererRules() {
  static const PatternMatcher* const pm = new PatternMatcher({
      {UPat(Ops::REDUCE_AXIS).named("x"),
       [](const Match& m) { return LowerReduceAxis(m.ctx<IndexContext>(), m["x"]); }},
      // A constant's view only broadcasts it (unmasked, checked up front).
      {UPat(OpSet{Ops::CONST, Ops::DEFINE_VAR}).src(UPat(Ops::VIEW)).named("x"),
       [](const Match& m) { return m["x"].replace_src({}); }},
      {UPat(Ops::VALID).src(UPat(Ops::VIEW).named("v")),
       [](const Match& m) {
         return ShapeTrackerOf(m["v"])->ToIndexedUops(absl::MakeConstSpan(m.ctx<IndexContext>().idxs)).second;
       }},
      {UPat(OpSet{Ops::LOAD, Ops::STORE}).src(UPat(), UPat(Ops::VIEW)).allow_any_len().named("x"),
       [](const Match& m) { return LowerLoadStore(m.ctx<IndexContext>(), m["x"]); }},
      {UPat(Ops::INDEX).src(UPat::Var("b"), UPat::Var("idx"), UPat::Const(dtypes::kBool, true)),
       [](const Match& m) { return m["b"].index(m["idx"]); }},
      {UPat(Ops::IGNORE).named("x"), [](const Match& m) { return m["x"]->src()[0]; }},
  });
  return *pm;
}

// The index of a CPU kernel's outermost loop (size `n`) split across cores (renderer.h's CoreSplit): chunk
// `core_id` of t runs iterations [core_id * n/t, (core_id + 1) * n/t). t divides n, so every loop keeps a
// constant trip count (a bound that depends on core_id would make the range differ between the places it is
// simplified), and is the divisor that finishes soonest on `cores` threads taking chunks in turn: fewest
// rounds ceil(t / cores) per chunk length n/t, the fewer chunks on a tie, up to 4 chunks a core. nullptr when
// the kernel stays one loop: one core, a symbolic size, no divisor, or too little work (`work`: the
// iterations of the whole loop nest, nullopt when symbolic) for two chunks of min_work_per_core.
UOpPtr OuterLoopAcrossCores(const Sint& n_sint, std::optional<int64_t> work, const CoreSplit& split) {
  if (split.cores < 2 || !n_sint.is_int() || !work.has_value()) return nullptr;
  const int64_t n = n_sint.value();
  int64_t max_chunks = std::min(n, 4 * split.cores);
  if (split.min_work_per_core > 0) max_chunks = std::min(max_chunks, *work / split.min_work_per_core);
  int64_t chunks = 1;
  double best = 1.0;  // the time of one loop, in units of the whole loop
  for (int64_t t = 2; t <= max_chunks; ++t) {
    if (n % t != 0) continue;
    const double time = static_cast<double>((t + split.cores - 1) / split.cores) / static_cast<double>(t);
    if (time < best) best = time, chunks = t;
  }
  if (chunks < 2) return nullptr;
  const UOpPtr core_id =
      UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg{Arg(std::string("gidx0")), Arg(chunks)});
  return core_id * (n / chunks) + UOp::Range(UOp::Const(dtypes::kInt32, n / chunks), 0);
}

}  // namespace

absl::StatusOr<std::vector<UOpPtr>> GetGroupedDims(absl::string_view prefix, absl::Span<const Sint> dims_in,
                                                   const std::optional<std::vector<int64_t>>& max_sizes,
                                                   bool reverse) {
  SintVec dims(dims_in.begin(), dims_in.end());
  if (reverse) std::reverse(dims.begin(), dims.end());
  if (!AllInt(dims)) {
    // As tinygrad: symbolic launch dims are neither merged nor split, so they must fit as they are (by their
    // largest values); a SPECIAL's size is then the symbolic UOp, which each launch evaluates.
    if (max_sizes) {
      bool fits = dims.size() <= max_sizes->size();
      for (size_t i = 0; fits && i < dims.size(); ++i) fits = dims[i].vmax() <= (*max_sizes)[i];
      if (!fits) {
        return absl::UnimplementedError(absl::StrCat("symbolic launch dims ", TupleString(dims),
                                                     " that do not fit ", TupleString(*max_sizes)));
      }
    }
    std::vector<UOpPtr> ret;
    for (size_t i = 0; i < dims.size(); ++i) {
      const Arg size =
          dims[i].is_int() ? Arg(dims[i].value()) : Arg(std::make_shared<const UOpArg>(dims[i].uop()));
      ret.push_back(UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg{Arg(absl::StrCat(prefix, i)), size}));
    }
    if (reverse) std::reverse(ret.begin(), ret.end());
    return ret;
  }
  std::vector<int64_t> ints;
  for (const Sint& d : dims) ints.push_back(d.value());
  std::vector<int64_t> limited = ints;
  if (max_sizes) {
    std::optional<std::vector<int64_t>> grouped = GroupDims(ints, *max_sizes);
    if (grouped && !grouped->empty()) limited = *grouped;
    if (limited.size() > max_sizes->size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot limit dim ", TupleString(ints), " to ", TupleString(*max_sizes)));
    }
    if (limited == ints) {
      UOPC_ASSIGN_OR_RETURN(limited, SplitDims(ints, *max_sizes));
    }
  }
  std::vector<UOpPtr> raw;
  for (size_t i = 0; i < limited.size(); ++i) {
    raw.push_back(
        UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg{Arg(absl::StrCat(prefix, i)), Arg(limited[i])}));
  }
  std::vector<UOpPtr> ret = raw;
  if (limited.size() < ints.size()) {
    // Merged dims: each original dim is recovered from its group's index by mod and div.
    std::optional<std::vector<std::vector<int64_t>>> contraction = GetContraction(ints, limited);
    UOPC_CHECK(contraction.has_value(), "merged launch dims are not a contraction");
    ret.clear();
    for (size_t g = 0; g < raw.size(); ++g) {
      UOpPtr idx = raw[g];
      const std::vector<int64_t>& group = (*contraction)[g];
      for (size_t j = 0; j + 1 < group.size(); ++j) {
        ret.push_back(idx % ints[group[j]]);
        idx = idx.idiv(ints[group[j]]);
      }
      ret.push_back(idx);
    }
  } else if (limited.size() > ints.size()) {
    // A split dim: its index is recombined from the pieces.
    const size_t a = limited.size(), b = ints.size();
    if (a == 2 && b == 1) ret = {raw[0] * limited[1] + raw[1]};
    if (a == 3 && b == 1) ret = {raw[0] * (limited[1] * limited[2]) + raw[1] * limited[2] + raw[2]};
    if (a == 3 && b == 2) ret = {raw[0] * limited[1] + raw[1], raw[2]};
  }
  if (reverse) std::reverse(ret.begin(), ret.end());
  return ret;
}

absl::StatusOr<IndexContext> GetIndex(const UOpPtr& sink, const Renderer& renderer) {
  const KernelInfo default_info;
  const KernelInfo* ki = KernelInfoOf(sink.get());
  if (ki == nullptr) ki = &default_info;
  FullShapes full_shapes;
  UOPC_ASSIGN_OR_RETURN(SintVec full_shape, full_shapes.Of(sink.get()));
  const int64_t n = static_cast<int64_t>(full_shape.size());
  if (ki->upcasted < 0 || ki->upcasted > n || ki->local_dims < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("KernelInfo ", ki->ToString(), " does not fit shape ", TupleString(full_shape)));
  }
  // Axis order: globals, locals, grouped reduces, reduces, upcasts.
  const int64_t first_upcasted = n - ki->upcasted;
  int64_t first_reduce = first_upcasted;
  std::vector<const UOp*> local_loads;
  for (const UOp* u : sink->Toposort()) {
    if (u->op() == Ops::REDUCE_AXIS) {
      UOPC_ASSIGN_OR_RETURN(std::vector<int64_t> axes, AxisArg(u));
      for (int64_t a : axes) first_reduce = std::min(first_reduce, a);
    }
    if (u->op() == Ops::LOAD && u->num_src() > 0 && u->src(0)->op() == Ops::DEFINE_LOCAL) {
      local_loads.push_back(u);
    }
  }
  // A reduce axis is grouped (reduced across threads through local memory) when some local load's view
  // differs from the output's there.
  int64_t group_for_reduces = 0;
  if (!local_loads.empty()) {
    if (sink->num_src() == 0 || StArg(sink->src(0)) == nullptr) {
      return absl::InvalidArgumentError("the kernel's first output has no view");
    }
    const SintVec& out_shape = StArg(sink->src(0))->shape();
    for (int64_t i = first_reduce; i < first_upcasted; ++i) {
      bool differs = false;
      for (const UOp* l : local_loads) {
        const ShapeTracker* st = StArg(l);
        if (st == nullptr) return absl::InvalidArgumentError("a local LOAD has no view");
        if (i >= static_cast<int64_t>(st->shape().size()) || i >= static_cast<int64_t>(out_shape.size())) {
          return absl::InvalidArgumentError("a local LOAD's view has too few axes");
        }
        differs |= st->shape()[i] != out_shape[i];
      }
      group_for_reduces += differs;
    }
  }
  const int64_t global_dims = first_reduce - ki->local_dims;
  if (global_dims < 0) return absl::InvalidArgumentError("more local dims than axes before the first reduce");

  // Loop counters are int32 as in tinygrad, unless an axis leaves int32: then every counter is int64, so that
  // neither a counter nor the index arithmetic built on the counters overflows (tinygrad's later versions
  // promote the same way; indexes beyond int32 from int32 counters ShapeTracker already widens). uopc
  // addition.
  const bool wide = std::any_of(full_shape.begin(), full_shape.end(),
                                [](const Sint& d) { return d.is_int() && d.value() > INT32_MAX; });
  auto loop_end = [&](const Sint& d) {
    return wide && d.is_int() ? UOp::Const(dtypes::kInt64, d.value()) : d.ToUOp();
  };
  std::vector<UOpPtr> idxs;
  if (renderer.has_local()) {
    auto span = [&](int64_t begin, int64_t end) {
      return absl::MakeConstSpan(full_shape.data() + begin, full_shape.data() + end);
    };
    if (ki->dont_use_locals) {
      if (ki->local_dims != 0) return absl::InvalidArgumentError("can't use locals if there's no local dims");
      UOPC_ASSIGN_OR_RETURN(idxs, GetGroupedDims("idx", span(0, global_dims), renderer.global_max(), true));
    } else {
      UOPC_ASSIGN_OR_RETURN(std::vector<UOpPtr> g,
                            GetGroupedDims("gidx", span(0, global_dims), renderer.global_max(), true));
      if (first_reduce + group_for_reduces > n) {
        return absl::InvalidArgumentError("grouped reduces past the shape");
      }
      UOPC_ASSIGN_OR_RETURN(
          std::vector<UOpPtr> l,
          GetGroupedDims("lidx", span(global_dims, first_reduce + group_for_reduces), renderer.local_max()));
      idxs = std::move(g);
      idxs.insert(idxs.end(), l.begin(), l.end());
    }
  } else {
    // No launch dims: every axis before the reduces is a loop, the outermost one split across cores when
    // the target has several.
    for (int64_t i = 0; i < first_reduce; ++i) idxs.push_back(UOp::Range(loop_end(full_shape[i]), i));
    // A wide kernel stays on one core: the split's `core_id * chunk` is int32 arithmetic.
    if (first_reduce > 0 && !wide) {
      std::optional<int64_t> work = 1;  // saturates at 2^62: only compared with a threshold
      for (const Sint& s : full_shape) {
        if (!s.is_int() || !work.has_value()) {
          work = std::nullopt;
        } else if (s.value() > 0 && *work > (int64_t{1} << 62) / s.value()) {
          work = int64_t{1} << 62;
        } else {
          work = *work * s.value();
        }
      }
      if (UOpPtr split = OuterLoopAcrossCores(full_shape[0], work, renderer.core_split())) idxs[0] = split;
    }
  }
  for (int64_t i = first_reduce + group_for_reduces; i < first_upcasted; ++i) {
    idxs.push_back(UOp::Range(loop_end(full_shape[i]), i));
  }
  for (int64_t i = first_upcasted; i < n; ++i) {
    if (!full_shape[i].is_int()) {
      return absl::InvalidArgumentError("an upcasted axis must have an integer size");
    }
    const int64_t g = full_shape[i].value();
    std::vector<ConstValue> values;
    for (int64_t v = 0; v < g; ++v) values.push_back(ConstValue::Int(v));
    const DType counter = wide ? dtypes::kInt64 : dtypes::kInt32;
    UOpPtr vconst = UOp::VConst(counter.Vec(static_cast<int>(g)), values);
    idxs.push_back(UOp::New(Ops::UNROLL, counter, {vconst}, Arg(Arg::Tuple{Arg{Arg(i), Arg(g)}})));
  }
  std::vector<UOpPtr> ridxs = idxs;
  for (int64_t a = first_reduce; a < first_reduce + group_for_reduces; ++a) {
    ridxs[a] = UOp::Range(loop_end(full_shape[a]), 1000 + a);
  }
  if (static_cast<int64_t>(idxs.size()) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat("the launch dims do not cover shape ", TupleString(full_shape)));
  }
  return IndexContext{std::move(idxs), std::move(ridxs)};
}

absl::StatusOr<UOpPtr> RewriteLowerer(const UOpPtr& sink, const Renderer& renderer) {
  if (sink == nullptr || sink->op() != Ops::SINK) {
    return absl::InvalidArgumentError("the lowerer needs a SINK");
  }
  UOPC_ASSIGN_OR_RETURN(IndexContext ctx, GetIndex(sink, renderer));
  UOPC_RETURN_IF_ERROR(ValidateAst(sink, ctx.idxs.size()));
  return TryGraphRewrite(sink, LowererRules(), {.ctx = &ctx, .name = "lowerer"});
}

}  // namespace uopc
