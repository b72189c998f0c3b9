#include "codegen/kernel.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "rewrite/infix.h"
#include "uop/kernel_info.h"
#include "uop/ops.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// tinygrad's check(): an opt that cannot apply is an InvalidArgumentError naming the opt.
#define OPT_CHECK(cond, opt, ...)                                                                      \
  do {                                                                                                 \
    if (!(cond)) return absl::InvalidArgumentError(absl::StrCat((opt).ToString(), ": ", __VA_ARGS__)); \
  } while (0)

bool SintNe(const Sint& a, const Sint& b) { return Resolve(Ne(a, b)); }

std::string SintString(const Sint& s) {
  return s.is_int() ? absl::StrCat(s.value()) : RenderTinygrad(s.uop().get());
}

// The ShapeTracker of a node of a kernel AST (tinygrad's UOp.st), memoized over the DAG.
class StInference {
 public:
  absl::StatusOr<std::optional<ShapeTracker>> Of(const UOp* u) {
    if (auto it = memo_.find(u); it != memo_.end()) return it->second;
    std::optional<ShapeTracker> st;
    if (u->op() == Ops::VIEW) {
      const ShapeTracker* t = ShapeTrackerOf(u);
      if (t == nullptr) return absl::InvalidArgumentError("a VIEW without a ShapeTracker arg");
      st = *t;
    } else if (u->op() == Ops::ASSIGN) {
      UOPC_ASSIGN_OR_RETURN(st, Of(u->src(0)));
    } else if (groups::kBuffer.contains(u->op())) {
      for (const UOpPtr& s : u->src()) {
        if (s->op() == Ops::VIEW) {
          UOPC_ASSIGN_OR_RETURN(st, Of(s.get()));
          break;
        }
      }
    } else {
      std::vector<ShapeTracker> src_sts;
      for (const UOpPtr& s : u->src()) {
        UOPC_ASSIGN_OR_RETURN(std::optional<ShapeTracker> sst, Of(s.get()));
        if (sst) src_sts.push_back(*sst);
      }
      if (!src_sts.empty()) {
        for (const ShapeTracker& s : src_sts) {
          if (s.shape() != src_sts[0].shape()) {
            return absl::InvalidArgumentError(
                absl::StrCat("sources of ", OpName(u->op()), " differ in shape"));
          }
        }
        // Any other node has a contiguous tracker of its shape: its sources' strides do not carry over
        // (the heuristic sums the strides of a reduce's input, so they must be tinygrad's).
        SintVec shape = src_sts[0].shape();
        if (u->op() == Ops::REDUCE_AXIS) {
          std::vector<int64_t> axes;
          for (const Arg& a : u->arg()[1].as_tuple()) axes.push_back(a.as_int());
          shape = src_sts[0].Reduce(axes);
        } else if (u->op() == Ops::BITCAST && !shape.empty() &&
                   u->dtype().itemsize() != u->src(0)->dtype().itemsize()) {
          shape.back() =
              FloorDiv(shape.back() * Sint(u->src(0)->dtype().itemsize()), Sint(u->dtype().itemsize()));
        }
        UOPC_ASSIGN_OR_RETURN(st, ShapeTracker::FromShape(shape));
      }
    }
    memo_.emplace(u, st);
    return st;
  }

 private:
  absl::flat_hash_map<const UOp*, std::optional<ShapeTracker>> memo_;
};

std::vector<int64_t> ReduceAxes(const UOp* r) {
  std::vector<int64_t> axes;
  for (const Arg& a : r->arg()[1].as_tuple()) axes.push_back(a.as_int());
  return axes;
}

bool CanPad(const UOp* u) {
  for (const UOp* n : u->Toposort()) {
    if (n->op() == Ops::RECIP || n->op() == Ops::LOG2 || n->op() == Ops::EXP2 || n->op() == Ops::IDIV ||
        n->op() == Ops::POW) {
      return false;
    }
  }
  return true;
}

int64_t Log2(int64_t x) { return static_cast<int64_t>(std::llround(std::log2(static_cast<double>(x)))); }

std::vector<std::pair<int64_t, int64_t>> TcReduceAxes(const TensorCore& tc) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t i = 0; i < Log2(tc.dims[2]); ++i) out.push_back({i, 2});
  return out;
}
// tinygrad's str(TensorCore): WMMA_8_16_16_half_float.
int64_t TcCount(const TensorCore& tc, char kind) {
  return std::count_if(tc.opts.begin(), tc.opts.end(), [&](const std::string& o) { return o[0] == kind; });
}

}  // namespace

std::string KernelNameCounter::Next(const std::string& base) {
  int64_t n = counts_[base]++;
  return n == 0 ? base : absl::StrCat(base, "n", n);
}

std::string ToFunctionName(absl::string_view name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (c == '\x1b') {  // an ANSI escape: ESC [ ... m
      size_t m = name.find('m', i);
      if (m != absl::string_view::npos) {
        i = m;
        continue;
      }
    }
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      out.push_back(c);
    } else {
      absl::StrAppend(&out, absl::StrFormat("%02X", static_cast<unsigned char>(c)));
    }
  }
  return out;
}

void TensorCoreOptions::FixAxes(int64_t removed_axis) {
  for (int d = 0; d < 2; ++d) {
    if (!axes_exist[d]) continue;
    if (removed_axis < axes[d]) {
      axes[d] -= 1;
    } else if (removed_axis == axes[d]) {
      axes_exist[d] = false;
    }
  }
}

// ---------------------------------------------------------------- construction

absl::StatusOr<Kernel> Kernel::Create(const UOpPtr& ast, const Renderer& renderer) {
  if (ast == nullptr || ast->op() != Ops::SINK)
    return absl::InvalidArgumentError("a kernel AST must be a SINK");
  Kernel k;
  k.renderer_ = &renderer;
  k.ast_ = ast;
  std::vector<const UOp*> topo = ast->Toposort();
  absl::flat_hash_set<const UOp*> seen_vars;
  for (const UOp* u : topo) {
    if (u->op() == Ops::REDUCE_AXIS) k.reduceops_.push_back(u->ref());
    if (groups::kBuffer.contains(u->op())) k.bufs_.push_back(u->ref());
    if (u->op() == Ops::DEFINE_VAR && seen_vars.insert(u).second) k.vars_.push_back(u->ref());
  }
  std::reverse(k.bufs_.begin(), k.bufs_.end());
  StInference infer;
  for (const UOpPtr& b : k.bufs_) {
    UOPC_ASSIGN_OR_RETURN(std::optional<ShapeTracker> st, infer.Of(b.get()));
    if (!st) return absl::InvalidArgumentError(absl::StrCat("buffer op ", OpName(b->op()), " has no VIEW"));
    for (const UOpPtr& v : st->Vars()) {
      if (seen_vars.insert(v.get()).second) k.vars_.push_back(v);
    }
    k.sts_.push_back(*st);
  }
  for (const UOpPtr& r : k.reduceops_) {
    UOPC_ASSIGN_OR_RETURN(std::optional<ShapeTracker> out, infer.Of(r.get()));
    UOPC_ASSIGN_OR_RETURN(std::optional<ShapeTracker> in, infer.Of(r->src(0)));
    if (!out || !in) return absl::InvalidArgumentError("a REDUCE_AXIS without a shape");
    k.sts_.push_back(*out);
    k.sts_.push_back(*in);
  }
  if (k.sts_.empty()) return absl::InvalidArgumentError("a kernel without buffer ops");
  size_t rank = k.sts_[0].shape().size();
  SintVec full(rank, Sint(0));
  for (size_t i = 0; i < k.sts_.size(); ++i) {
    if (k.sts_[i].shape().size() != rank) {
      return absl::InvalidArgumentError("the shapes of a kernel's buffer ops differ in rank");
    }
    for (size_t d = 0; d < rank; ++d)
      full[d] = i == 0 ? k.sts_[i].shape()[d] : Max(full[d], k.sts_[i].shape()[d]);
  }
  UOPC_ASSIGN_OR_RETURN(ShapeTracker full_st, ShapeTracker::FromShape(full, SintVec(rank, Sint(0))));
  k.sts_.push_back(std::move(full_st));

  // Reduce axes last.
  std::vector<int64_t> permute;
  for (size_t i = 0; i < rank; ++i) {
    if (!SintNe(k.full_shape()[i], k.output_shape()[i])) permute.push_back(i);
  }
  for (size_t i = 0; i < rank; ++i) {
    if (SintNe(k.full_shape()[i], k.output_shape()[i])) permute.push_back(i);
  }
  UOPC_RETURN_IF_ERROR(k.ReshapeAndPermute(nullptr, permute));
  UOPC_RETURN_IF_ERROR(k.SimplifyOnes().status());
  UOPC_RETURN_IF_ERROR(k.SimplifyMergeAdjacent());
  return k;
}

// ---------------------------------------------------------------- shape analysis

SintVec Kernel::full_unupcasted_shape() const {
  const SintVec& f = full_shape();
  return SintVec(f.begin(), f.begin() + first_upcast());
}

int64_t Kernel::first_reduce() const {
  const SintVec &out = output_shape(), &full = full_shape();
  for (int64_t i = 0; i < first_upcast(); ++i) {
    if (SintNe(out[i], full[i])) return i;
  }
  return first_upcast();
}

std::vector<Kernel::UpcastedAxis> Kernel::upcasted_axis(int64_t i) const {
  std::vector<UpcastedAxis> out;
  std::vector<std::optional<Sint>> strides = sts_[i].RealStrides();
  for (int64_t a = first_upcast(); a < shape_len(); ++a) {
    out.push_back({sts_[i].shape()[a], strides[a], SintNe(output_shape()[a], full_shape()[a])});
  }
  return out;
}

std::vector<AxisType> Kernel::axis_types() const {
  std::vector<AxisType> t(global_dims(), AxisType::kGlobal);
  t.insert(t.end(), local_dims_, AxisType::kLocal);
  t.insert(t.end(), group_for_reduces_, AxisType::kGroupReduce);
  t.insert(t.end(), first_upcast() - (first_reduce() + group_for_reduces_), AxisType::kReduce);
  for (int64_t i = first_upcast(); i < shape_len(); ++i) {
    t.push_back(SintNe(full_shape()[i], output_shape()[i]) ? AxisType::kUnroll : AxisType::kUpcast);
  }
  return t;
}

std::vector<std::string> Kernel::colors() const {
  // Indexed by AxisType.
  static constexpr const char* kColors[] = {"blue", "cyan", "green", "red", "yellow", "magenta"};
  std::vector<std::string> c;
  for (AxisType t : axis_types()) {
    c.push_back(t == AxisType::kGlobal && dont_use_locals_ ? "BLUE" : kColors[static_cast<int>(t)]);
  }
  return c;
}

namespace {
// tinygrad's colored(): ANSI foreground, upper-case names bright.
std::string Colored(const std::string& s, const std::string& color) {
  static const char* kNames[] = {"black", "red", "green", "yellow", "blue", "magenta", "cyan", "white"};
  for (int i = 0; i < 8; ++i) {
    std::string lower = color;
    for (char& ch : lower) ch = static_cast<char>(std::tolower(ch));
    if (lower == kNames[i]) {
      int code = 30 + i + (color != lower ? 60 : 0);
      return absl::StrCat("\x1b[", code, "m", s, "\x1b[0m");
    }
  }
  return s;
}
}  // namespace

std::string Kernel::ColoredShape() const {
  std::vector<std::string> c = colors(), parts;
  for (int64_t i = 0; i < shape_len(); ++i) {
    std::string s = SintString(full_shape()[i]);
    if (s.size() < 4 && full_shape()[i].is_int()) s = std::string(4 - s.size(), ' ') + s;
    parts.push_back(Colored(s, c[i]));
  }
  return absl::StrJoin(parts, " ");
}

int64_t Kernel::BufIndex(const UOp* u) const {
  for (size_t i = 0; i < bufs_.size(); ++i) {
    if (bufs_[i].get() == u) return static_cast<int64_t>(i);
  }
  return -1;
}

std::string Kernel::ColoredName() const {
  bool copy_only = true;
  for (const UOp* u : ast_->Toposort()) {
    if (u->op() != Ops::SINK && !groups::kBuffer.contains(u->op())) copy_only = false;
  }
  std::string type = reduceop() != nullptr ? "r" : (copy_only ? "C" : "E");
  std::vector<std::string> c = colors(), parts;
  for (int64_t i = 0; i < shape_len(); ++i) parts.push_back(Colored(SintString(full_shape()[i]), c[i]));
  return absl::StrCat(type, ast_->num_src() > 1 ? absl::StrCat(ast_->num_src()) : "", "_",
                      absl::StrJoin(parts, Colored("_", "BLACK")));
}

std::string Kernel::BaseName() const { return ToFunctionName(ColoredName()); }

// ---------------------------------------------------------------- shape operations

absl::Status Kernel::ReshapeAndPermute(const std::function<SintVec(const SintVec&)>& new_shape,
                                       const std::optional<std::vector<int64_t>>& axis) {
  std::vector<ShapeTracker> out;
  out.reserve(sts_.size());
  for (const ShapeTracker& st : sts_) {
    ShapeTracker cur = st;
    if (new_shape) {
      UOPC_ASSIGN_OR_RETURN(cur, cur.Reshape(new_shape(cur.shape())));
    }
    if (axis) {
      UOPC_ASSIGN_OR_RETURN(cur, cur.Permute(*axis));
    }
    out.push_back(std::move(cur));
  }
  sts_ = std::move(out);
  return absl::OkStatus();
}

absl::Status Kernel::ShiftTo(int64_t axis, int64_t amount, bool top, std::optional<int64_t> insert_before) {
  int64_t len = shape_len();
  int64_t before = insert_before.value_or(len);
  int64_t move_axis = top ? axis : axis + 1;
  if (move_axis < before) ++before;
  std::vector<int64_t> perm;
  for (int64_t i = 0; i < before; ++i) {
    if (i != move_axis) perm.push_back(i);
  }
  perm.push_back(move_axis);
  for (int64_t i = before; i < len + 1; ++i) {
    if (i != move_axis) perm.push_back(i);
  }
  auto reshape = [&](const SintVec& x) {
    SintVec r(x.begin(), x.begin() + axis);
    if (Resolve(Lt(Sint(1), x[axis]))) {
      Sint rest = FloorDiv(x[axis], Sint(amount));
      if (top) {
        r.push_back(amount);
        r.push_back(rest);
      } else {
        r.push_back(rest);
        r.push_back(amount);
      }
    } else {
      r.push_back(1);
      r.push_back(1);
    }
    r.insert(r.end(), x.begin() + axis + 1, x.end());
    return r;
  };
  return ReshapeAndPermute(reshape, perm);
}

absl::StatusOr<bool> Kernel::SimplifyOnes() {
  if (shape_len() == 0) return false;
  std::vector<bool> ones;
  for (const Sint& s : full_shape()) ones.push_back(s == Sint(1));
  int64_t fr = first_reduce(), fu = first_upcast();
  for (int64_t i = std::max<int64_t>(fr - local_dims_, 0); i < fr; ++i) local_dims_ -= ones[i];
  for (int64_t i = fu; i < shape_len(); ++i) upcasted_ -= ones[i];
  UOPC_RETURN_IF_ERROR(ReshapeAndPermute(
      [&](const SintVec& shape) {
        SintVec r;
        for (size_t i = 0; i < shape.size(); ++i) {
          if (!ones[i]) r.push_back(shape[i]);
        }
        return r;
      },
      std::nullopt));
  return std::find(ones.begin(), ones.end(), true) != ones.end();
}

absl::Status Kernel::SimplifyMergeAdjacent() {
  if (shape_len() == 0) return absl::OkStatus();
  // Image dtypes (which add fake strides here) do not occur on the targets uopc supports.
  using Entry = std::pair<Sint, std::optional<Sint>>;
  std::vector<SintVec> shapes;
  std::vector<std::vector<std::optional<Sint>>> strides;
  for (const ShapeTracker& st : sts_) {
    shapes.push_back(st.shape());
    strides.push_back(st.RealStrides());
  }
  std::vector<std::vector<Entry>> rets;
  for (size_t j = 0; j < sts_.size(); ++j) rets.push_back({{shapes[j][0], strides[j][0]}});
  int64_t fr = first_reduce();
  for (size_t i = 1; i < shapes[0].size(); ++i) {
    bool mergeable = static_cast<int64_t>(i) != fr;
    for (size_t j = 0; j < sts_.size() && mergeable; ++j) {
      const std::optional<Sint>& sti = strides[j][i];
      const std::optional<Sint>& last = rets[j].back().second;
      bool can = sti.has_value() && ((*sti != Sint(0) && last.has_value() && *last == shapes[j][i] * *sti) ||
                                     (*sti == Sint(0) && last.has_value() && *last == Sint(0)));
      mergeable = can;
    }
    for (size_t j = 0; j < sts_.size(); ++j) {
      if (mergeable) {
        rets[j].back() = {rets[j].back().first * shapes[j][i], strides[j][i]};
      } else {
        rets[j].push_back({shapes[j][i], strides[j][i]});
      }
    }
  }
  for (size_t j = 0; j < sts_.size(); ++j) {
    SintVec shape;
    for (const Entry& e : rets[j]) shape.push_back(e.first);
    UOPC_ASSIGN_OR_RETURN(sts_[j], sts_[j].Reshape(shape));
  }
  return absl::OkStatus();
}

absl::Status Kernel::Upcast() {
  if (full_shape().back() == Sint(1))
    return absl::InvalidArgumentError("can't upcast a dimension with size 1");
  ++upcasted_;
  return absl::OkStatus();
}

// ---------------------------------------------------------------- opts

int64_t Kernel::RealAxis(const Opt& opt) const {
  if (!opt.axis) return -1;
  if (opt.op == OptOps::kUnroll) return first_reduce() + *opt.axis;
  if (opt.op == OptOps::kGroup || opt.op == OptOps::kGroupTop)
    return first_reduce() + group_for_reduces_ + *opt.axis;
  return *opt.axis;
}

absl::Status Kernel::ApplyOpt(const Opt& opt) {
  Kernel copy = *this;
  UOPC_RETURN_IF_ERROR(copy.ApplyOptInPlace(opt, /*append=*/true));
  *this = std::move(copy);
  return absl::OkStatus();
}

absl::Status Kernel::ApplyOpts(const std::vector<Opt>& opts) {
  for (const Opt& opt : opts) UOPC_RETURN_IF_ERROR(ApplyOpt(opt));
  return absl::OkStatus();
}

absl::Status Kernel::ApplyOptInPlace(const Opt& opt, bool append) {
  if (dont_use_locals_) {
    OPT_CHECK(opt.op != OptOps::kLocal && opt.op != OptOps::kGroup && opt.op != OptOps::kGroupTop, opt,
              "not using locals");
  }
  if (opt.op == OptOps::kTC) {
    OPT_CHECK(applied_opts_.empty(), opt, "tensor core opts must be first");
    OPT_CHECK(!renderer_->tensor_cores().empty(), opt, "must have tensor cores");
    OPT_CHECK(opt.axis.has_value(), opt, "tensor core opts must have an axis");
    OPT_CHECK(std::holds_alternative<Opt::TcArg>(opt.arg), opt, "tensor core opts must have valid arg");
    const Opt::TcArg& a = std::get<Opt::TcArg>(opt.arg);
    OPT_CHECK(-1 <= a[0] && a[0] < static_cast<int64_t>(renderer_->tensor_cores().size()), opt,
              "tensor core opts must have valid tc_select");
    OPT_CHECK(0 <= a[1] && a[1] <= 2, opt, "tensor core opts must have valid tc_opt");
    OPT_CHECK(0 < a[2] && a[2] <= 3, opt, "use_tensor_cores value is not valid");
    UOPC_ASSIGN_OR_RETURN(bool applied, ApplyTcOpt(a[2], *opt.axis, a[0], a[1]));
    OPT_CHECK(applied, opt, "no tensor core available");
    applied_opts_.push_back(opt);
    return absl::OkStatus();
  }

  // tinygrad indexes with a negative axis; uopc refuses it (only NOLOCALS and VECTOR have no axis).
  const bool axisless = opt.op == OptOps::kNoLocals || opt.op == OptOps::kVector;
  OPT_CHECK(axisless || (opt.axis.has_value() && *opt.axis >= 0), opt, "invalid axis");
  int64_t axis = RealAxis(opt);
  OPT_CHECK(axis < static_cast<int64_t>(full_shape().size()), opt, "invalid axis");

  // Every op but NOLOCALS and VECTOR takes an amount (0 for UPCAST/UNROLL/LOCAL means the whole axis):
  // without one, -1 would reach the reshape below.
  OPT_CHECK(axisless || !std::holds_alternative<std::monostate>(opt.arg), opt, "needs an amount, as in ",
            OptOpsName(opt.op), ":", *opt.axis, ":4");
  int64_t amt = -1;
  if (opt.op == OptOps::kSwap) {
    OPT_CHECK(opt.has_int_arg(), opt, "arg should be int");
    amt = opt.int_arg();
  } else if (!std::holds_alternative<std::monostate>(opt.arg)) {
    OPT_CHECK(opt.has_int_arg(), opt, "arg should be int");
    Sint a = opt.int_arg() != 0 ? Sint(opt.int_arg()) : full_shape()[axis];
    OPT_CHECK(a.is_int() && a.value() != 1, opt, "shift/padto of amt=", SintString(a),
              ", 1 or symbolic amount is meaningless");
    amt = a.value();
    OPT_CHECK(amt > 0, opt, "the amount must be positive, got amt=", amt);
    if (opt.op != OptOps::kPadTo) {
      const Sint& s = full_shape()[axis];
      OPT_CHECK(s.is_int() && s.value() % amt == 0, opt,
                "no longer valid shift self.full_shape[axis]=", SintString(s), ", amt=", amt);
    }
  }

  const UOp* r = reduceop();
  if (r != nullptr && (opt.op == OptOps::kGroup || opt.op == OptOps::kGroupTop ||
                       (group_for_reduces_ != 0 && !axisless && opt.op != OptOps::kPadTo))) {
    int64_t acc_sz = r->dtype().itemsize();
    Sint upcast_sz = 1;
    for (int64_t i = first_upcast(); i < shape_len(); ++i) {
      if (full_shape()[i] == output_shape()[i]) upcast_sz = upcast_sz * full_shape()[i];
    }
    Sint local_sz = 1;
    for (int64_t i = first_reduce() - local_dims_; i < first_reduce() + group_for_reduces_; ++i) {
      local_sz = local_sz * full_shape()[i];
    }
    Sint smem = Sint(amt * acc_sz) * upcast_sz * local_sz;
    OPT_CHECK(Resolve(Le(smem, Sint(renderer_->shared_max()))), opt,
              "exceeds maximum shared memory size: needs ", SintString(smem), ", max ",
              renderer_->shared_max());
  }

  switch (opt.op) {
    case OptOps::kLocal:
      OPT_CHECK(renderer_->has_local(), opt, "target does not support local");
      OPT_CHECK(axis < global_dims(), opt, "local is for globals");
      UOPC_RETURN_IF_ERROR(ShiftTo(axis, amt, false, first_reduce()));
      ++local_dims_;
      break;
    case OptOps::kGroup:
    case OptOps::kGroupTop: {
      OPT_CHECK(renderer_->has_local() && renderer_->has_shared(), opt,
                "target does not support local or shared mem");
      OPT_CHECK(first_reduce() + group_for_reduces_ <= axis && axis < first_upcast(), opt,
                "must be reduce axis to group");
      OPT_CHECK(tensor_core_ == nullptr, opt, "can't group with tensor cores");
      std::vector<int64_t> all_axes;
      for (const UOpPtr& ro : reduceops_) {
        for (int64_t a : ReduceAxes(ro.get())) all_axes.push_back(a);
      }
      absl::flat_hash_set<int64_t> unique(all_axes.begin(), all_axes.end());
      OPT_CHECK(unique.size() == all_axes.size(), opt, "can't group with parallel reduces");
      UOPC_RETURN_IF_ERROR(
          ShiftTo(axis, amt, opt.op == OptOps::kGroupTop, first_reduce() + group_for_reduces_));
      ++group_for_reduces_;
      break;
    }
    case OptOps::kUnroll:
      OPT_CHECK(axis < first_upcast(), opt, "can't upcasted already upcasted");
      OPT_CHECK(amt <= 32, opt, "don't unroll more than 32");
      if (full_shape()[axis] == Sint(amt) && axis == first_reduce()) ++local_dims_;  // first_reduce will move
      if (full_shape()[axis] == Sint(amt) && axis < first_reduce() + group_for_reduces_) --group_for_reduces_;
      UOPC_RETURN_IF_ERROR(ShiftTo(axis, amt));
      if (absl::Status s = Upcast(); !s.ok()) OPT_CHECK(false, opt, s.message());
      break;
    case OptOps::kUpcast:
      OPT_CHECK(axis < first_reduce(), opt, "upcast is for non-reduce");
      if (tensor_core_ != nullptr) {
        OPT_CHECK(!(global_dims() <= axis && axis < global_dims() + TcCount(*tensor_core_, 'l')), opt,
                  "can't upcast TC locals");
      }
      OPT_CHECK(renderer_->device() == "DSP" || amt <= 16, opt, "don't upcast more than 16");
      UOPC_RETURN_IF_ERROR(ShiftTo(axis, amt));
      if (absl::Status s = Upcast(); !s.ok()) OPT_CHECK(false, opt, s.message());
      break;
    case OptOps::kNoLocals:
      OPT_CHECK(renderer_->has_local() && !dont_use_locals_, opt,
                "NOLOCALS is meaningless if target does not support local or already not using locals");
      OPT_CHECK(local_dims_ == 0 && group_for_reduces_ == 0, opt, "can't have no locals with locals");
      dont_use_locals_ = true;
      break;
    case OptOps::kVector:
      OPT_CHECK(renderer_->vector_width() > 1, opt, "target does not keep vectors");
      OPT_CHECK(!opt.axis.has_value() && std::holds_alternative<std::monostate>(opt.arg), opt,
                "VECTOR takes no axis and no amount");
      OPT_CHECK(vector_width_ == 1, opt, "vectors are already kept");
      vector_width_ = renderer_->vector_width();
      break;
    case OptOps::kSwap: {
      OPT_CHECK(axis < amt && amt < global_dims(), opt,
                "swap is only for globals with axis < amt, getting amt=", amt, ", axis=", axis,
                ", self.global_dims=", global_dims());
      std::vector<int64_t> perm(shape_len());
      for (int64_t i = 0; i < shape_len(); ++i) perm[i] = i;
      std::swap(perm[axis], perm[amt]);
      UOPC_RETURN_IF_ERROR(ReshapeAndPermute(nullptr, perm));
      break;
    }
    case OptOps::kPadTo: {
      OPT_CHECK(vars_.empty(), opt, "does not work with symbolic shape");
      OPT_CHECK(axis < first_upcast(), opt, "cannot pad upcasted");
      OPT_CHECK(amt > 0, opt, "padto needs an amount");
      if (r != nullptr && first_reduce() <= axis) {
        OPT_CHECK(r->arg()[0].as_op() == Ops::ADD && CanPad(r), opt, "cannot pad ", OpName(r->op()));
      }
      bool padded = false;
      for (ShapeTracker& st : sts_) {
        const Sint& s = st.shape()[axis];
        if (s == Sint(1)) continue;
        OPT_CHECK(s.is_int() && s.value() > amt / 4, opt,
                  "pad adds more than quadruple the work st.shape[axis]=", SintString(s),
                  " > amt//4=", amt / 4);
        int64_t ru = (s.value() + amt - 1) / amt * amt - s.value();
        if (ru != 0) {
          PairVec pads(st.shape().size(), SintPair(0, 0));
          pads[axis] = SintPair(0, ru);
          UOPC_ASSIGN_OR_RETURN(st, st.Pad(pads));
          padded = true;
        }
      }
      OPT_CHECK(padded, opt, "nothing was padded");
      break;
    }
    case OptOps::kTC:
      break;
  }
  if (append) applied_opts_.push_back(opt);
  UOPC_ASSIGN_OR_RETURN(bool simplified, SimplifyOnes());
  if (simplified && tensor_core_opts_) tensor_core_opts_->FixAxes(axis);
  return absl::OkStatus();
}

// ---------------------------------------------------------------- tensor cores

std::optional<TensorCoreOptions> Kernel::CreateTcOpts(const UOp* reduceop, const TensorCore& tc, int64_t axis,
                                                      int64_t opt_level) const {
  bool has_cast = tc.dtype_in != tc.dtype_out;
  const UOp* src = reduceop->src(0);
  if (has_cast && !(src->op() == Ops::CAST && src->dtype() == tc.dtype_out)) return std::nullopt;
  const UOp* mul = has_cast ? src->src(0) : src;
  if (mul->op() != Ops::MUL) return std::nullopt;
  auto buf_index = [&](const UOp* s) -> int64_t {
    if (s->op() == Ops::LOAD && s->dtype() == tc.dtype_in) return BufIndex(s);
    if (opt_level >= 1 && s->op() == Ops::CAST && s->dtype() == tc.dtype_in) return BufIndex(s->src(0));
    return -1;
  };
  int64_t buf0 = buf_index(mul->src(0)), buf1 = buf_index(mul->src(1));
  if (buf0 < 0 || buf1 < 0) return std::nullopt;
  std::vector<std::optional<Sint>> s0 = sts_[buf0].RealStrides(), s1 = sts_[buf1].RealStrides();
  std::vector<int64_t> axis_buf0, axis_buf1;
  for (int64_t i = 0; i < first_reduce(); ++i) {
    if (s0[i].has_value() && *s0[i] == Sint(0)) axis_buf0.push_back(i);
    if (s1[i].has_value() && *s1[i] == Sint(0)) axis_buf1.push_back(i);
  }
  if (axis_buf0.empty() || axis_buf1.empty() || !((shape_len() - first_reduce()) == 1 || opt_level >= 1)) {
    return std::nullopt;
  }
  // itertools.product(axis_buf0, axis_buf1, range(first_reduce, shape_len)), taken from the end.
  int64_t nk = shape_len() - first_reduce();
  int64_t total = static_cast<int64_t>(axis_buf0.size() * axis_buf1.size()) * nk;
  if (!(axis < total)) return std::nullopt;
  int64_t idx = total - (axis + 1);
  int64_t k = first_reduce() + idx % nk;
  int64_t m = axis_buf1[(idx / nk) % axis_buf1.size()];
  int64_t n = axis_buf0[idx / nk / axis_buf1.size()];
  TensorCoreOptions o;
  o.axes = {n, m, k};
  for (int i = 0; i < 3; ++i) {
    const Sint& s = full_shape()[o.axes[i]];
    if (Resolve(Ne(Mod(s, Sint(tc.dims[i])), Sint(0)))) o.axis_pads.push_back({o.axes[i], tc.dims[i]});
  }
  if (!o.axis_pads.empty() && opt_level < 2) return std::nullopt;
  return o;
}

absl::StatusOr<bool> Kernel::ApplyTcOpt(int64_t use_tensor_cores, int64_t axis, int64_t tc_select,
                                        int64_t opt_level) {
  const UOp* r = reduceop();
  if (use_tensor_cores == 0 || r == nullptr || r->arg()[0].as_op() != Ops::ADD) return false;
  std::vector<const TensorCore*> cores;
  for (size_t i = 0; i < renderer_->tensor_cores().size(); ++i) {
    if (tc_select == -1 || static_cast<int64_t>(i) == tc_select)
      cores.push_back(&renderer_->tensor_cores()[i]);
  }
  for (const TensorCore* tc : cores) {
    std::vector<std::optional<TensorCoreOptions>> per_reduce;
    for (const UOpPtr& ro : reduceops_) per_reduce.push_back(CreateTcOpts(ro.get(), *tc, axis, opt_level));
    for (const auto& o : per_reduce) {
      if (o != per_reduce[0]) return absl::InvalidArgumentError("reduces with different tensor core options");
    }
    if (!per_reduce[0]) continue;
    tensor_core_opts_ = per_reduce[0];
    // Padding may fail; then the next tensor core is tried (from the state before the pads).
    Kernel saved = *this;
    bool pad_ok = true;
    for (const auto& [pad_axis, dim] : tensor_core_opts_->axis_pads) {
      if (!ApplyOptInPlace(Opt(OptOps::kPadTo, pad_axis, dim), false).ok()) {
        pad_ok = false;
        break;
      }
    }
    if (!pad_ok) {
      *this = std::move(saved);
      continue;
    }
    for (const auto& [dim, amt] : TcReduceAxes(*tc)) {
      UOPC_RETURN_IF_ERROR(
          ApplyOptInPlace(Opt(OptOps::kUnroll, tensor_core_opts_->axes[2] - first_reduce(), amt), false));
    }
    for (const std::string& o : tc->opts) {
      OptOps op = o[0] == 'u' ? OptOps::kUpcast : OptOps::kLocal;
      UOPC_RETURN_IF_ERROR(ApplyOptInPlace(Opt(op, tensor_core_opts_->axes[o[1] - '0'], 2), false));
    }
    tensor_core_ = tc;
    use_tensor_cores_ = use_tensor_cores;
    return true;
  }
  return false;
}

bool Kernel::ApplyTensorCores(int64_t use_tensor_cores, int64_t axis, int64_t tc_select, int64_t tc_opt) {
  if (renderer_->tensor_cores().empty()) return false;
  Kernel work = *this;
  if (!work.ApplyOptInPlace(Opt(OptOps::kTC, axis, Opt::TcArg{tc_select, tc_opt, use_tensor_cores}), true)
           .ok()) {
    return false;
  }
  // tc_opts follows the kernel's (FixAxes moves it as the upcasts drop dims), like tinygrad's shared object.
  if (const std::optional<TensorCoreOptions>& tc_opts = work.tensor_core_opts_; tc_opts) {
    for (int dim : {1, 0}) {
      if (!tc_opts->axes_exist[dim]) continue;
      const Sint& s = work.full_shape()[tc_opts->axes[dim]];
      for (int64_t sz : {5, 4, 3, 2}) {
        if (s.is_int() && s.value() % sz == 0) {
          if (!work.ApplyOptInPlace(Opt(OptOps::kUpcast, tc_opts->axes[dim], sz), true).ok()) return false;
          break;
        }
      }
    }
    if (tc_opts->axes_exist[0]) {
      const Sint& s = work.full_shape()[tc_opts->axes[0]];
      for (int64_t sz : {4, 2}) {
        if (s.is_int() && s.value() % sz == 0) {
          if (!work.ApplyOptInPlace(Opt(OptOps::kLocal, tc_opts->axes[0], sz), true).ok()) return false;
          break;
        }
      }
    }
  }
  *this = std::move(work);
  return true;
}

// ---------------------------------------------------------------- the optimized AST

namespace {

// `src` seen through `st` (tinygrad's src.view(st) followed by view_left): the view is pushed through CASTs
// and ALU ops and merged into the VIEW of each buffer op below.
absl::StatusOr<UOpPtr> PushView(const UOpPtr& src, const ShapeTracker& st) {
  if (groups::kBuffer.contains(src->op())) {
    UOp::SrcVector srcs(src->src().begin(), src->src().end());
    for (UOpPtr& s : srcs) {
      if (s->op() == Ops::VIEW) s = ShapeTrackerOf(s.get())->Compose(st).ToUOp();
    }
    return UOp::WithSources(*src, std::move(srcs));
  }
  if (src->op() == Ops::CAST || groups::kALU.contains(src->op())) {
    UOp::SrcVector srcs;
    for (const UOpPtr& s : src->src()) {
      UOPC_ASSIGN_OR_RETURN(UOpPtr pushed, PushView(s, st));
      srcs.push_back(pushed);
    }
    return UOp::WithSources(*src, std::move(srcs));
  }
  return absl::UnimplementedError(absl::StrCat("pushing a view through ", OpName(src->op())));
}

Arg PairsArg(const std::vector<std::pair<int64_t, int64_t>>& pairs) {
  Arg::Tuple t;
  for (const auto& [a, b] : pairs) t.push_back(Arg::Tuple{Arg(a), Arg(b)});
  return Arg(t);
}

}  // namespace

absl::StatusOr<UOpPtr> Kernel::GetOptimizedAst(KernelNameCounter* names,
                                               std::optional<std::string> name_override) const {
  std::string name;
  if (name_override) {
    name = *name_override;
  } else {
    name = names != nullptr ? names->Next(BaseName()) : BaseName();
  }
  absl::flat_hash_map<const UOp*, UOpPtr> done;
  auto fixed_src = [&](const UOp* op) {
    UOp::SrcVector srcs;
    for (const UOpPtr& s : op->src()) srcs.push_back(done.at(s.get()));
    return UOp::WithSources(*op, std::move(srcs));
  };
  const int64_t nbufs = static_cast<int64_t>(bufs_.size());
  for (const UOp* op : ast_->Toposort()) {
    UOpPtr ret = fixed_src(op);
    int64_t bi = groups::kBuffer.contains(op->op()) ? BufIndex(op) : -1;
    if (bi >= 0) {
      const ShapeTracker& st = sts_[bi];
      UOpPtr st_uop = st.ToUOp();
      bool masked = false;
      for (const View& v : st.views()) masked |= v.mask().has_value();
      if (op->op() == Ops::CONST && masked) {
        // A CONST that got masked becomes VALID.where(CONST, 0) over unmasked views.
        UOPC_ASSIGN_OR_RETURN(ShapeTracker unit, ShapeTracker::FromShape({}));
        UOPC_ASSIGN_OR_RETURN(unit, unit.Reshape(SintVec(st.shape().size(), Sint(1))));
        UOPC_ASSIGN_OR_RETURN(unit, unit.Expand(st.shape()));
        UOpPtr unmasked = unit.ToUOp();
        UOpPtr valid = UOp::New(Ops::VALID, dtypes::kBool, {st_uop});
        UOpPtr value = op->ref().replace_src({unmasked});
        UOpPtr zero = UOp::Const(op->dtype(), ConstValue::Int(0)).replace_src({unmasked});
        ret = valid.where(value, zero);
      } else {
        UOp::SrcVector srcs(ret->src().begin(), ret->src().end());
        srcs[ret->num_src() == 1 ? 0 : 1] = st_uop;
        ret = UOp::WithSources(*ret, std::move(srcs));
      }
    } else if (op->op() == Ops::SINK) {
      ret = ret.replace_arg(
          KernelInfoAsArg(KernelInfo{name, local_dims_, upcasted_, dont_use_locals_, vector_width_}));
    } else if (op->op() == Ops::REDUCE_AXIS) {
      int64_t ri = 0;
      while (reduceops_[ri].get() != op) ++ri;
      const ShapeTracker &out_st = sts_[nbufs + ri * 2], &in_st = sts_[nbufs + ri * 2 + 1];
      auto reduced = [&](int64_t start, int64_t stop) {
        std::vector<int64_t> axes;
        for (int64_t i = start; i < stop; ++i) {
          if (SintNe(out_st.shape()[i], in_st.shape()[i])) axes.push_back(i);
        }
        return axes;
      };
      std::vector<int64_t> axes = reduced(first_reduce() + group_for_reduces_, shape_len());
      std::vector<int64_t> grouped_axes = reduced(first_reduce(), first_reduce() + group_for_reduces_);
      Ops reduce_op = op->arg()[0].as_op();

      if (tensor_core_ != nullptr && (use_tensor_cores_ == 1 || use_tensor_cores_ == 3)) {
        const TensorCore& tc = *tensor_core_;
        int64_t wd = global_dims(), tcd = first_upcast();
        int64_t n_reduce = Log2(tc.dims[2]), n_upcast = TcCount(tc, 'u');
        auto upcast_axes = [&](int i) {
          std::vector<std::pair<int64_t, int64_t>> out;
          int64_t n = Log2(tc.elements_per_thread[i]);
          for (int64_t j = 0; j < n; ++j) out.push_back({tcd + n_reduce + n_upcast - (j + 1), 2});
          return out;
        };
        auto swizzle_st = [&](const SintVec& shape, const std::vector<int64_t>& local_perm,
                              const std::vector<int64_t>& upcast_perm) -> absl::StatusOr<ShapeTracker> {
          int64_t nl = static_cast<int64_t>(local_perm.size());
          int64_t offset = tcd - (wd + nl);
          std::vector<int64_t> perm;
          for (int64_t i = 0; i < wd; ++i) perm.push_back(i);
          for (int64_t x : local_perm) perm.push_back(wd + x + (x >= nl ? offset : 0));
          for (int64_t i = wd + nl; i < tcd; ++i) perm.push_back(i);
          for (int64_t x : upcast_perm) perm.push_back(wd + x + (x >= nl ? offset : 0));
          for (int64_t i = tcd + static_cast<int64_t>(upcast_perm.size());
               i < static_cast<int64_t>(shape.size()); ++i) {
            perm.push_back(i);
          }
          UOPC_ASSIGN_OR_RETURN(ShapeTracker base, ShapeTracker::FromShape(shape));
          return base.Permute(perm);
        };
        const UOp* mul = ret->src(0)->op() == Ops::CAST ? ret->src(0)->src(0) : ret->src(0);
        std::vector<UOpPtr> srcs(mul->src().begin(), mul->src().end());
        const TensorCore::Swizzle* swizzles[2] = {&tc.swizzle.first, &tc.swizzle.second};
        for (int i = 0; i < 2; ++i) {
          const UOp* load = srcs[i]->op() == Ops::LOAD ? srcs[i].get() : srcs[i]->src(0);
          UOPC_ASSIGN_OR_RETURN(std::optional<ShapeTracker> src_st, StInference().Of(load));
          if (const TensorCore::Swizzle& sw = *swizzles[i]; sw) {
            UOPC_ASSIGN_OR_RETURN(ShapeTracker sst, swizzle_st(src_st->shape(), sw->first, sw->second));
            UOPC_ASSIGN_OR_RETURN(srcs[i], PushView(srcs[i], sst));
          }
          if (use_tensor_cores_ == 3) {  // emulate the warp's addressing with a local buffer
            std::vector<std::optional<Sint>> rs = src_st->RealStrides();
            SintVec local_shape;
            for (int64_t a = 0; a < static_cast<int64_t>(rs.size()); ++a) {
              bool one =
                  (rs[a].has_value() && *rs[a] == Sint(0)) || a < wd || (a >= first_reduce() && a < tcd);
              local_shape.push_back(one ? Sint(1) : src_st->shape()[a]);
            }
            UOPC_ASSIGN_OR_RETURN(ShapeTracker lst, ShapeTracker::FromShape(local_shape));
            ShapeTracker store_st = lst;
            if (const TensorCore::Swizzle& sw = *swizzles[i]; sw) {
              UOPC_ASSIGN_OR_RETURN(store_st, swizzle_st(local_shape, sw->first, sw->second));
            }
            UOpPtr local = UOp::New(Ops::DEFINE_LOCAL, tc.dtype_in.Ptr(lst.RealSize(), /*local=*/true), {},
                                    Arg(absl::StrCat("temp", i)));
            UOpPtr store = local.store({store_st.ToUOp(), srcs[i]});
            srcs[i] = UOp::New(Ops::LOAD, tc.dtype_in, {local, lst.ToUOp(), store});
          }
        }
        std::vector<int64_t> tc_reduce_axes;
        for (int64_t j = 0; j < n_reduce; ++j) tc_reduce_axes.push_back(tcd + j);
        UOpPtr tc_uop;
        if (use_tensor_cores_ == 1) {  // a real WMMA; CONTRACT/UNROLL give the vectorization
          std::vector<std::pair<int64_t, int64_t>> ua[3] = {upcast_axes(0), upcast_axes(1), upcast_axes(2)};
          Arg wmma_arg = Arg::Tuple{Arg(tc.ToString()),
                                    Arg::IntTuple(tc.dims),
                                    Arg(tc.dtype_in),
                                    Arg(tc.dtype_out),
                                    Arg(renderer_->device()),
                                    Arg(tc.threads),
                                    Arg::Tuple{PairsArg(ua[0]), PairsArg(ua[1]), PairsArg(ua[2])},
                                    Arg::IntTuple(tc_reduce_axes)};
          DType out_vec = tc.dtype_out.Vec(static_cast<int>(tc.elements_per_thread[2]));
          UOpPtr wmma = UOp::New(
              Ops::WMMA, out_vec,
              {UOp::New(Ops::CONTRACT, srcs[0]->dtype().Vec(static_cast<int>(tc.elements_per_thread[0])),
                        {srcs[0]}, PairsArg(ua[0])),
               UOp::New(Ops::CONTRACT, srcs[1]->dtype().Vec(static_cast<int>(tc.elements_per_thread[1])),
                        {srcs[1]}, PairsArg(ua[1])),
               UOp::Const(out_vec, ConstValue::Float(0.0))},
              wmma_arg);
          tc_uop = UOp::New(Ops::UNROLL, tc.dtype_out, {wmma}, PairsArg(ua[2]));
        } else {  // TC=3: MUL and a REDUCE_AXIS instead of the WMMA
          tc_uop = UOp::New(Ops::REDUCE_AXIS, tc.dtype_out, {srcs[0].mul(srcs[1]).cast(tc.dtype_out)},
                            Arg::Tuple{Arg(Ops::ADD), Arg::IntTuple(tc_reduce_axes)});
        }
        std::vector<int64_t> new_axes;
        for (int64_t a : axes) {
          if (std::find(tc_reduce_axes.begin(), tc_reduce_axes.end(), a) == tc_reduce_axes.end())
            new_axes.push_back(a);
        }
        ret = new_axes.empty() ? tc_uop
                               : UOp::New(Ops::REDUCE_AXIS, ret->dtype(), {tc_uop},
                                          Arg::Tuple{Arg(Ops::ADD), Arg::IntTuple(new_axes)});
      } else {
        ret = ret.replace_arg(Arg::Tuple{Arg(reduce_op), Arg::IntTuple(axes)});
        if (group_for_reduces_ != 0 && !grouped_axes.empty()) {
          // The grouped part of the reduce goes through a local buffer.
          SintVec local_shape(global_dims(), Sint(1));
          for (int64_t i = global_dims(); i < global_dims() + local_dims_; ++i)
            local_shape.push_back(full_shape()[i]);
          for (int64_t i = first_reduce(); i < first_reduce() + group_for_reduces_; ++i) {
            local_shape.push_back(SintNe(out_st.shape()[i], in_st.shape()[i]) ? full_shape()[i] : Sint(1));
          }
          for (int64_t i = 0; i < shape_len() - upcasted_ - group_for_reduces_ - first_reduce(); ++i) {
            local_shape.push_back(1);
          }
          for (const UpcastedAxis& u : upcasted_axis(0)) local_shape.push_back(u.size);
          UOPC_ASSIGN_OR_RETURN(ShapeTracker lst, ShapeTracker::FromShape(local_shape));
          UOpPtr st_uop = lst.ToUOp();
          UOpPtr local = UOp::New(Ops::DEFINE_LOCAL, op->dtype().Ptr(lst.RealSize(), /*local=*/true), {},
                                  Arg(absl::StrCat("temp", ri)));
          UOpPtr local_load = UOp::New(Ops::LOAD, op->dtype(), {local, st_uop, local.store({st_uop, ret})});
          UOpPtr grouped = UOp::New(Ops::REDUCE_AXIS, op->dtype(), {local_load},
                                    Arg::Tuple{Arg(reduce_op), Arg::IntTuple(grouped_axes)});
          if (ri == static_cast<int64_t>(reduceops_.size()) - 1) {
            ret = grouped;
          } else {
            SintVec shape2;
            for (int64_t i = 0; i < static_cast<int64_t>(local_shape.size()); ++i) {
              bool g = std::find(grouped_axes.begin(), grouped_axes.end(), i) != grouped_axes.end();
              shape2.push_back(g ? Sint(1) : local_shape[i]);
            }
            UOPC_ASSIGN_OR_RETURN(ShapeTracker st2, ShapeTracker::FromShape(shape2));
            UOpPtr st2_uop = st2.ToUOp();
            ret = UOp::New(Ops::LOAD, op->dtype(), {local, st2_uop, local.store({st2_uop, grouped})});
          }
        }
      }
    }
    done.emplace(op, ret);
  }
  return done.at(ast_.get());
}

}  // namespace uopc
