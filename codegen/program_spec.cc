#include "codegen/program_spec.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "rewrite/symbolic.h"
#include "uop/kernel_info.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// Counts saturate rather than overflow: an absurd kernel's estimate is wrong, not undefined behaviour.
int64_t SaturatingMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) {
    return (a < 0) != (b < 0) ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  return r;
}
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) {
    return a < 0 ? std::numeric_limits<int64_t>::min() : std::numeric_limits<int64_t>::max();
  }
  return r;
}

// The product of the trip counts of the loops (and launch dims) around a uop: an integer times symbolic
// trip counts.
struct LoopNest {
  int64_t constant = 1;
  std::vector<UOpPtr> factors;

  // A RANGE's trip count is its end (RANGEs start at 0). A symbolic end is taken with the launch indices at
  // 0, as tinygrad does: the launch dims are counted by their SPECIALs.
  LoopNest Times(const UOp& range) const {
    LoopNest out = *this;
    const UOp* end = range.src(0);
    if (end->op() == Ops::CONST) {
      out.constant = SaturatingMul(constant, end->const_value().AsInt64());
      return out;
    }
    absl::flat_hash_map<const UOp*, UOpPtr> specials_at_zero;
    for (const UOp* u : end->Toposort()) {
      if (u->op() == Ops::SPECIAL) specials_at_zero[u] = UOp::Const(u->dtype(), ConstValue::Int(0));
    }
    out.factors.push_back(specials_at_zero.empty() ? end->ref() : end->Substitute(specials_at_zero));
    return out;
  }
};

}  // namespace

// ---- SymbolicCount ----

void SymbolicCount::Add(absl::Span<const UOpPtr> factors, int64_t multiple) {
  if (multiple == 0) return;
  if (factors.empty()) {
    constant_ = SaturatingAdd(constant_, multiple);
    return;
  }
  for (auto& [f, m] : terms_) {
    if (absl::MakeConstSpan(f) == factors) {
      m = SaturatingAdd(m, multiple);
      return;
    }
  }
  terms_.emplace_back(std::vector<UOpPtr>(factors.begin(), factors.end()), multiple);
}

absl::StatusOr<int64_t> SymbolicCount::Evaluate(
    const absl::flat_hash_map<std::string, int64_t>& values) const {
  int64_t total = constant_;
  for (const auto& [factors, multiple] : terms_) {
    int64_t term = multiple;
    for (const UOpPtr& f : factors) {
      UOPC_ASSIGN_OR_RETURN(ConstValue v, SymInfer(f.get(), values));
      term = SaturatingMul(term, v.AsInt64());
    }
    total = SaturatingAdd(total, term);
  }
  return total;
}

// ---- Estimates ----

Estimates Estimates::FromUops(absl::Span<const UOpPtr> uops) {
  // What addresses and gates are computed from is indexing, not work: everything under a LOAD's or STORE's
  // address or gate, or an IF's condition. (Each toposort stops at nodes already marked, so this is linear.)
  absl::flat_hash_set<const UOp*> indexing;
  auto mark = [&indexing](const UOp* root) {
    for (const UOp* u : root->Toposort([&indexing](const UOp* x) { return !indexing.contains(x); })) {
      indexing.insert(u);
    }
  };
  for (const UOpPtr& u : uops) {
    if (u->op() == Ops::LOAD || u->op() == Ops::STORE) {
      mark(u->src(0));
      if (u->num_src() > 2) mark(u->src(2));
    } else if (u->op() == Ops::IF) {
      mark(u->src(0));
    }
  }
  // The uops between two changes of the loop nest are summed as plain integers, then added once times the
  // nest's trip counts, so a symbolic kernel gets one term per loop, not one per uop.
  Estimates e;
  LoopNest nest;
  std::vector<LoopNest> outer;
  int64_t ops = 0, lds = 0;
  auto flush = [&] {
    e.ops.Add(nest.factors, SaturatingMul(nest.constant, ops));
    e.lds.Add(nest.factors, SaturatingMul(nest.constant, lds));
    ops = lds = 0;
  };
  for (const UOpPtr& u : uops) {
    switch (u->op()) {
      case Ops::RANGE:
        flush();
        outer.push_back(nest);
        nest = nest.Times(*u);
        break;
      case Ops::ENDRANGE:
        flush();
        if (!outer.empty()) {
          nest = std::move(outer.back());
          outer.pop_back();
        }
        break;
      case Ops::SPECIAL:  // a launch dim: it multiplies the rest of the program
        flush();
        if (u->arg().is_tuple() && u->arg().size() > 1 && u->arg()[1].is_int()) {
          nest.constant = SaturatingMul(nest.constant, u->arg()[1].as_int());
        } else if (const UOpArg* size = u->arg().is_tuple() && u->arg().size() > 1
                                            ? u->arg()[1].payload_as<UOpArg>()
                                            : nullptr) {
          nest.factors.push_back(size->uop());
        }
        break;
      case Ops::LOAD:
        lds = SaturatingAdd(lds, u->dtype().itemsize());
        break;
      case Ops::STORE:
        lds = SaturatingAdd(lds, u->src(1)->dtype().itemsize());
        break;
      case Ops::WMMA: {
        // arg: (name, (N, M, K), dtype in, dtype out, device, threads, ...): one warp's N*M*K multiply-adds,
        // counted per thread as the launch dims multiply them back.
        const Arg& arg = u->arg();
        if (indexing.contains(u.get()) || !arg.is_tuple() || arg.size() < 6 || !arg[1].is_tuple() ||
            !arg[5].is_int() || arg[5].as_int() <= 0) {
          break;
        }
        int64_t nmk = 1;
        for (size_t i = 0; i < arg[1].size(); ++i) {
          nmk = SaturatingMul(nmk, arg[1][i].is_int() ? arg[1][i].as_int() : 0);
        }
        ops = SaturatingAdd(ops, SaturatingMul(2, nmk) / arg[5].as_int());
        break;
      }
      default:
        if (groups::kALU.contains(u->op()) && !indexing.contains(u.get())) {
          ops = SaturatingAdd(ops, (u->op() == Ops::MULACC ? 2 : 1) * u->dtype().count());
        }
    }
  }
  flush();
  e.mem = e.lds;
  return e;
}

int64_t Estimates::MemOfAst(const UOp& ast) {
  int64_t bytes = 0;
  Ops last_op = Ops::NOOP;
  int64_t last_buffer = -1;
  for (const UOp* u : ast.Toposort()) {
    if (!groups::kBuffer.contains(u->op()) || u->num_src() == 0 || u->src(0)->op() != Ops::DEFINE_GLOBAL)
      continue;
    const UOp& global = *u->src(0);
    const int64_t buffer = global.arg().is_int() ? global.arg().as_int() : -1;
    if (u->op() == last_op && buffer == last_buffer) continue;  // the same group: its bytes are counted
    last_op = u->op();
    last_buffer = buffer;
    // A pointer of unknown size counts 0 bytes, as tinygrad's nbytes().
    const int64_t size = global.dtype().ptr_size();
    if (size > 0) bytes = SaturatingAdd(bytes, SaturatingMul(size, global.dtype().base().itemsize()));
  }
  return bytes;
}

absl::StatusOr<ProgramSpec> ProgramSpec::FromUops(std::vector<UOpPtr> uops, std::string src,
                                                  std::optional<std::vector<int64_t>> global_size,
                                                  std::optional<std::vector<int64_t>> local_size) {
  const KernelInfo* info =
      uops.empty() || uops.back()->op() != Ops::SINK ? nullptr : KernelInfoOf(uops.back().get());
  if (info == nullptr)
    return absl::InvalidArgumentError("a linear program ends with a SINK holding a KernelInfo");
  ProgramSpec spec;
  spec.name = info->name;
  spec.src = std::move(src);
  bool dims_given = global_size.has_value() || local_size.has_value();
  std::optional<std::vector<int64_t>> special_global, special_local;
  bool has_thread_index = false;  // an `i` SPECIAL: a flat thread index, no separate local dims
  absl::flat_hash_set<std::string> launch_vars;  // the variables of symbolic launch dims
  for (const UOpPtr& u : uops) {
    if (u->op() == Ops::DEFINE_GLOBAL) spec.globals.push_back(u->arg().as_int());
    if (u->op() == Ops::DEFINE_VAR) spec.vars.push_back(u->var_name());
    if (u->op() != Ops::SPECIAL || dims_given) continue;
    const Arg& arg = u->arg();
    if (!arg.is_tuple() || arg.size() != 2 || !arg[0].is_string() || arg[0].as_string().empty()) {
      return absl::InvalidArgumentError("a SPECIAL's arg must be (name, size)");
    }
    const UOpArg* symbolic = arg[1].payload_as<UOpArg>();
    if (!arg[1].is_int() && symbolic == nullptr) {
      return absl::InvalidArgumentError("a SPECIAL's size must be an int or a symbolic int");
    }
    const std::string& name = arg[0].as_string();
    char kind = name[0];
    int axis = name.back() - '0';
    if (kind == 'i') has_thread_index = true;
    if (axis < 0 || axis > 2 || (kind != 'g' && kind != 'l' && kind != 'i')) {
      return absl::InvalidArgumentError(absl::StrCat("unknown SPECIAL ", name));
    }
    std::optional<std::vector<int64_t>>& dims = kind == 'l' ? special_local : special_global;
    if (!dims) dims = std::vector<int64_t>{1, 1, 1};
    if (symbolic == nullptr) {
      (*dims)[axis] = arg[1].as_int();
      continue;
    }
    (*dims)[axis] = symbolic->uop()->vmax().AsInt64();
    spec.symbolic_launch_dims.push_back({kind == 'l' ? 3 + axis : axis, symbolic->uop()});
    for (const UOp* x : symbolic->uop()->Toposort()) {
      if (x->op() == Ops::DEFINE_VAR) launch_vars.insert(std::string(x->var_name()));
    }
  }
  // A variable only the launch dims read is no parameter (tinygrad passes it to no kernel).
  for (const std::string& v : spec.vars) launch_vars.erase(v);
  spec.launch_vars.assign(launch_vars.begin(), launch_vars.end());
  std::sort(spec.launch_vars.begin(), spec.launch_vars.end());
  if (dims_given) {
    spec.global_size = std::move(global_size);
    spec.local_size = std::move(local_size);
  } else {
    // As tinygrad: a program with SPECIALs has global and local dims (all 1 unless set), except that a flat
    // thread index leaves no local dims.
    if (special_global || special_local) {
      spec.global_size = special_global ? std::move(special_global) : std::vector<int64_t>{1, 1, 1};
      if (!has_thread_index) {
        spec.local_size = special_local ? std::move(special_local) : std::vector<int64_t>{1, 1, 1};
      }
    }
  }
  for (const UOpPtr& u : uops) {
    if (u->op() != Ops::STORE && u->op() != Ops::LOAD) continue;
    std::vector<int64_t>& buffers = u->op() == Ops::STORE ? spec.outs : spec.ins;
    for (const UOp* x : u->src(0)->Toposort()) {
      if (x->op() == Ops::DEFINE_GLOBAL) buffers.push_back(x->arg().as_int());
    }
  }
  for (std::vector<int64_t>* v : {&spec.outs, &spec.ins}) {
    std::sort(v->begin(), v->end());
    v->erase(std::unique(v->begin(), v->end()), v->end());
  }
  spec.estimates = Estimates::FromUops(uops);
  spec.estimates.mem = 0;
  spec.uops = std::move(uops);
  return spec;
}

}  // namespace uopc
