#include "codegen/bounds_check.h"

#include <algorithm>
#include <atomic>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rewrite/rewrite_recorder.h"
#include "rewrite/valid.h"
#include "shapetracker/shapetracker.h"
#include "uop/exec_alu.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using absl::int128;

std::atomic<const IndexProver*> builtin_prover{nullptr};

std::string Str(int128 v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// One access to check: the INDEX node's parts and how many elements one access touches.
struct Access {
  const UOp* buffer;
  const UOp* index;
  const UOp* gate;  // null: always
  int64_t width = 1;
  const char* kind = "access";  // "load", "store" or both
};

std::string BufferName(const UOp* buffer) {
  const DType dt = buffer->dtype();
  std::string name =
      buffer->op() == Ops::DEFINE_LOCAL
          ? absl::StrCat("local buffer ", buffer->arg().ToString())
          : absl::StrCat("buffer ", buffer->arg().ToString(), " (data", buffer->arg().ToString(), ")");
  return absl::StrCat(name, " of ", dt.ptr_size(), " ", dt.base().scalar().ToString(), " elements");
}

// The range of the index where the gate holds; nullopt when the gate can never hold. Each clause of the gate
// (`expr < c`, `expr >= c`) narrows its expr; the index with those exprs replaced by variables of the
// narrowed ranges has a range that holds where the gate does (tinygrad's uop_given_valid substitutes them
// back; a bound needs them left in). It is intersected with the range of the index simplified under the gate.
std::optional<std::pair<int128, int128>> IndexRange(const UOp* index, const UOp* gate) {
  int128 lo = index->vmin().i(), hi = index->vmax().i();
  if (gate == nullptr) return std::make_pair(lo, hi);
  if (!gate->vmax().AsBool()) return std::nullopt;
  const UOpPtr valid(gate);
  absl::flat_hash_map<const UOp*, std::pair<int128, int128>> bounds;
  std::vector<UOpPtr> order;
  for (const UOpPtr& clause : SplitUop(valid, Ops::AND)) {
    std::optional<ValidClause> c = ParseValid(clause);
    if (!c.has_value() || !c->expr->dtype().is_int()) continue;
    auto [it, inserted] = bounds.try_emplace(c->expr.get(), c->expr->vmin().i(), c->expr->vmax().i());
    if (inserted) order.push_back(c->expr);
    if (c->is_upper) {
      it->second.second = std::min<int128>(it->second.second, c->bound);
    } else {
      it->second.first = std::max<int128>(it->second.first, c->bound);
    }
    if (it->second.first > it->second.second) return std::nullopt;
  }
  absl::flat_hash_map<const UOp*, UOpPtr> replacements;
  for (size_t i = 0; i < order.size(); ++i) {
    const auto [blo, bhi] = bounds.at(order[i].get());
    if (blo == order[i]->vmin().i() && bhi == order[i]->vmax().i()) continue;
    replacements[order[i].get()] = UOp::Variable(absl::StrCat("gate", i), static_cast<int64_t>(blo),
                                                 static_cast<int64_t>(bhi), order[i]->dtype());
  }
  if (!replacements.empty()) {
    UOpPtr narrowed = index->Substitute(replacements);
    lo = std::max(lo, narrowed->vmin().i());
    hi = std::min(hi, narrowed->vmax().i());
  }
  if (UOpPtr simplified = UopGivenValid(valid, UOpPtr(index)); simplified != nullptr) {
    lo = std::max(lo, simplified->vmin().i());
    hi = std::min(hi, simplified->vmax().i());
  } else {
    return std::nullopt;
  }
  return std::make_pair(lo, hi);
}

// Whether [lo, hi] is a range the index's dtype holds (a range beyond it wrapped, and proves nothing).
bool FitsDtype(const UOp* index, int128 lo, int128 hi) {
  const DType dt = index->dtype().scalar();
  return lo >= DTypeMin(dt).i() && hi <= DTypeMax(dt).i();
}

// Exact, for small kernels: the index and gate evaluated (exec_alu's semantics) at every point of the loop
// counters', thread ids' and variables' ranges. kUnknown when the space is more than `max_work` (points times
// nodes) or the index depends on anything else (a load, a float).
constexpr int64_t kQuickEnumeratedWork = int64_t{1} << 14;
constexpr int64_t kMaxEnumeratedWork = int64_t{1} << 22;

IndexProver::Verdict Enumerate(const UOp* index, const UOp* gate, int64_t size, int64_t width,
                               int64_t max_work, std::string* witness) {
  using Verdict = IndexProver::Verdict;
  std::vector<UOpPtr> roots = {UOpPtr(index)};
  if (gate != nullptr) roots.push_back(UOpPtr(gate));
  UOpPtr sink = UOp::Sink(roots);
  std::vector<const UOp*> nodes = sink->Toposort();
  nodes.pop_back();  // the SINK
  absl::flat_hash_map<const UOp*, size_t> slot;
  struct Leaf {
    size_t slot;
    int64_t lo, hi;
  };
  std::vector<Leaf> leaves;
  int64_t points = 1;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const UOp* u = nodes[i];
    slot[u] = i;
    if (u->dtype().count() != 1 || !(u->dtype().is_int() || u->dtype().is_bool())) return Verdict::kUnknown;
    int64_t lo = 0, hi = -1;
    if (u->op() == Ops::RANGE) {
      if (u->src(0)->op() != Ops::CONST) return Verdict::kUnknown;
      hi = u->src(0)->const_value().AsInt64() - 1;
    } else if (u->op() == Ops::SPECIAL) {
      hi = u->vmax().AsInt64();  // size - 1; a symbolic size's largest
    } else if (u->op() == Ops::DEFINE_VAR) {
      lo = u->vmin().AsInt64();
      hi = u->vmax().AsInt64();
    } else if (u->op() == Ops::CONST || u->op() == Ops::CAST || groups::kALU.contains(u->op())) {
      continue;
    } else {
      return Verdict::kUnknown;
    }
    if (hi < lo) return Verdict::kInBounds;  // an empty loop runs nothing
    if (__builtin_mul_overflow(points, hi - lo + 1, &points) ||
        points > max_work / static_cast<int64_t>(nodes.size())) {
      return Verdict::kUnknown;
    }
    leaves.push_back({i, lo, hi});
  }
  for (const UOp* u : nodes) {
    if (u->op() == Ops::CAST && !u->src(0)->dtype().is_int() && !u->src(0)->dtype().is_bool()) {
      return Verdict::kUnknown;
    }
  }
  std::vector<ConstValue> value(nodes.size());
  for (const Leaf& l : leaves) value[l.slot] = ConstValue::Int(l.lo);
  const size_t index_slot = slot.at(index);
  const size_t gate_slot = gate != nullptr ? slot.at(gate) : 0;
  // The nodes to evaluate at each point, in order, with their sources' slots resolved once: the loop below
  // runs up to max_work node evaluations and must not hash.
  struct Step {
    const UOp* node;
    size_t slot;
    std::vector<size_t> sources;
  };
  std::vector<Step> steps;
  for (size_t i = 0; i < nodes.size(); ++i) {
    const UOp* u = nodes[i];
    if (u->op() == Ops::RANGE || u->op() == Ops::SPECIAL || u->op() == Ops::DEFINE_VAR) continue;
    if (u->op() == Ops::CONST) {
      value[i] = u->const_value();  // the same at every point
      continue;
    }
    Step step{u, i, {}};
    for (const UOpPtr& s : u->src()) step.sources.push_back(slot.at(s.get()));
    steps.push_back(std::move(step));
  }
  std::vector<ConstValue> operands;
  while (true) {
    for (const Step& step : steps) {
      const UOp* u = step.node;
      absl::StatusOr<ConstValue> v;
      if (u->op() == Ops::CAST) {
        v = ExecCast(value[step.sources[0]], u->src(0)->dtype(), u->dtype());
      } else {
        operands.clear();
        for (size_t s : step.sources) operands.push_back(value[s]);
        const bool compare = u->op() == Ops::CMPLT || u->op() == Ops::CMPNE;
        v = ExecAlu(u->op(), u->dtype(), operands,
                    compare ? std::optional<DType>(u->src(0)->dtype()) : std::nullopt);
      }
      if (!v.ok()) return Verdict::kUnknown;
      value[step.slot] = *v;
    }
    if (gate == nullptr || value[gate_slot].AsBool()) {
      const int128 at = value[index_slot].i();
      if (at < 0 || at + (width - 1) >= size) {
        std::vector<std::string> parts;
        for (const Leaf& l : leaves) {
          const UOp* u = nodes[l.slot];
          parts.push_back(absl::StrCat(u->op() == Ops::RANGE     ? absl::StrCat("ridx", u->arg().ToString())
                                       : u->op() == Ops::SPECIAL ? u->arg()[0].as_string()
                                                                 : u->var_name(),
                                       "=", value[l.slot].ToString()));
        }
        parts.push_back(absl::StrCat("index=", Str(at)));
        *witness = absl::StrJoin(parts, ", ");
        return Verdict::kOutOfBounds;
      }
    }
    // The next point (an odometer over the leaves).
    size_t k = 0;
    for (; k < leaves.size(); ++k) {
      ConstValue& v = value[leaves[k].slot];
      if (v.AsInt64() < leaves[k].hi) {
        v = ConstValue::Int(v.AsInt64() + 1);
        break;
      }
      v = ConstValue::Int(leaves[k].lo);
    }
    if (k == leaves.size()) return Verdict::kInBounds;
  }
}

absl::Status CheckAccess(const Access& a, absl::string_view kernel, const IndexProver* prover) {
  const int64_t size = a.buffer->dtype().ptr_size();
  std::optional<std::pair<int128, int128>> range = IndexRange(a.index, a.gate);
  if (!range.has_value()) return absl::OkStatus();  // never executed
  const auto [lo, hi] = *range;
  const bool fits = FitsDtype(a.index, lo, hi);
  if (fits && lo >= 0 && hi + (a.width - 1) < size) return absl::OkStatus();
  std::string witness;
  IndexProver::Verdict verdict = IndexProver::Verdict::kUnknown;
  absl::string_view decided_by = "enumerating the loops";
  // Small spaces are enumerated at once; a larger one goes to the prover first and is enumerated only when
  // the prover cannot decide it: up to 2^22 evaluations an access cost more than z3 (the gated loads of
  // padded convolutions: //tensor:conv_gradient_test's compiles took 60 s enumerated first, 27 s this way).
  verdict = Enumerate(a.index, a.gate, size, a.width, kQuickEnumeratedWork, &witness);
  if (verdict == IndexProver::Verdict::kUnknown && prover != nullptr) {
    verdict = prover->Prove(a.index, a.gate, size, a.width, &witness);
    decided_by = prover->name();
  }
  if (verdict == IndexProver::Verdict::kUnknown) {
    verdict = Enumerate(a.index, a.gate, size, a.width, kMaxEnumeratedWork, &witness);
    decided_by = "enumerating the loops";
  }
  if (verdict == IndexProver::Verdict::kInBounds) return absl::OkStatus();
  std::string range_text = fits ? absl::StrCat("[", Str(lo), ", ", Str(hi + (a.width - 1)), "]")
                                : absl::StrCat("[", Str(lo), ", ", Str(hi), "], beyond its ",
                                               a.index->dtype().scalar().ToString());
  std::string why =
      verdict == IndexProver::Verdict::kOutOfBounds
          ? absl::StrCat(decided_by, " found an access outside it", witness.empty() ? "" : ": ", witness)
          : absl::StrCat("range analysis cannot prove it in bounds",
                         prover == nullptr ? " and no prover is built in (this build has --define=uopc_z3=0)"
                                           : absl::StrCat(" and neither can ", prover->name()));
  return absl::InvalidArgumentError(absl::StrCat(
      "kernel ", kernel, ": ", a.kind, " of ", BufferName(a.buffer), " at index ", range_text,
      a.gate != nullptr ? " (gated)" : "", ", outside [0, ", size, "): ", why, "; refusing to run it"));
}

// Each INDEX of a sized buffer among `nodes`, with its access width and whether it is loaded or stored.
std::vector<Access> Accesses(absl::Span<const UOp* const> nodes) {
  absl::flat_hash_map<const UOp*, size_t> at;
  std::vector<Access> out;
  for (const UOp* u : nodes) {
    if (u->op() != Ops::INDEX || u->num_src() < 2) continue;
    const UOp* buf = u->src(0);
    if ((buf->op() != Ops::DEFINE_GLOBAL && buf->op() != Ops::DEFINE_LOCAL) || !buf->dtype().is_ptr() ||
        buf->dtype().ptr_size() < 0 || !u->src(1)->dtype().is_int()) {
      continue;
    }
    at[u] = out.size();
    out.push_back({buf, u->src(1), u->num_src() > 2 ? u->src(2) : nullptr,
                   std::max(1, u->dtype().is_ptr() ? u->dtype().base().count() : 1)});
  }
  auto mark = [&](const UOp* ptr, const char* kind) {
    auto it = at.find(ptr);
    if (it == at.end()) return;
    Access& a = out[it->second];
    a.kind =
        a.kind == std::string_view("access") || a.kind == std::string_view(kind) ? kind : "load and store";
  };
  for (const UOp* u : nodes) {
    if (u->num_src() == 0) continue;
    const UOp* ptr = u->src(0);
    // A vector access reads through a CAST of the INDEX to a pointer of vectors.
    if (u->op() == Ops::CAST && ptr->op() == Ops::INDEX && u->dtype().is_ptr()) {
      if (auto it = at.find(ptr); it != at.end()) {
        out[it->second].width = std::max<int64_t>(out[it->second].width, u->dtype().base().count());
      }
    }
    if (ptr->op() == Ops::CAST && ptr->num_src() > 0) ptr = ptr->src(0);
    if (u->op() == Ops::LOAD) mark(ptr, "load");
    if (u->op() == Ops::STORE) mark(ptr, "store");
  }
  return out;
}

// VIZ: the rewrites a kernel's bounds proof makes (UopGivenValid's) as a group of their own; the label is
// built only while recording.
std::string BoundsGroupLabel(absl::string_view kernel) {
  return RewriteRecorder::Enabled() ? absl::StrCat("bounds check ", kernel) : std::string();
}

}  // namespace

const IndexProver* BuiltinIndexProver() { return builtin_prover.load(std::memory_order_acquire); }

void RegisterBuiltinIndexProver(const IndexProver* prover) {
  builtin_prover.store(prover, std::memory_order_release);
}

absl::Status CheckProgramBounds(absl::Span<const UOpPtr> uops, absl::string_view kernel,
                                const IndexProver* prover) {
  RewriteGroupScope viz_group(BoundsGroupLabel(kernel), /*join_open_group=*/true);
  std::vector<const UOp*> nodes(uops.size());
  std::transform(uops.begin(), uops.end(), nodes.begin(), [](const UOpPtr& u) { return u.get(); });
  for (const Access& a : Accesses(nodes)) {
    UOPC_RETURN_IF_ERROR(CheckAccess(a, kernel, prover));
  }
  return absl::OkStatus();
}

absl::Status CheckProgramBounds(const UOp* sink, absl::string_view kernel, const IndexProver* prover) {
  RewriteGroupScope viz_group(BoundsGroupLabel(kernel), /*join_open_group=*/true);
  std::vector<const UOp*> nodes = sink->Toposort();
  for (const Access& a : Accesses(nodes)) {
    UOPC_RETURN_IF_ERROR(CheckAccess(a, kernel, prover));
  }
  return absl::OkStatus();
}

absl::Status CheckKernelAstBounds(const UOp* ast, const IndexProver* prover) {
  for (const UOp* u : ast->Toposort()) {
    if ((u->op() != Ops::LOAD && u->op() != Ops::STORE) || u->num_src() < 2) continue;
    const UOp* buf = u->src(0);
    if (buf->op() != Ops::DEFINE_GLOBAL || !buf->dtype().is_ptr() || buf->dtype().ptr_size() < 0) continue;
    const ShapeTracker* st = ShapeTrackerOf(u->src(1));
    if (st == nullptr) continue;
    auto [idx, valid] = st->ToIndexedUops();
    const bool gated = !(valid->op() == Ops::CONST && valid->const_value().AsBool());
    Access a{buf, idx.get(), gated ? valid.get() : nullptr, 1, u->op() == Ops::LOAD ? "load" : "store"};
    if (absl::Status s = CheckAccess(a, "AST", prover); !s.ok()) {
      return absl::Status(s.code(), absl::StrCat(s.message(), " (view ", st->ToString(), ")"));
    }
  }
  return absl::OkStatus();
}

}  // namespace uopc
