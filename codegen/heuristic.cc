#include "codegen/heuristic.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "codegen/gpu_heuristic.h"
#include "codegen/vector_heuristic.h"
#include "uop/ops.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// tinygrad's getenv defaults.
constexpr int64_t kMvBlockSize = 4, kMvThreadsPerRow = 8, kMvRowsPerThread = 4;

// The value of an integer dim, or nullopt for a symbolic one.
std::optional<int64_t> IntOf(const Sint& s) {
  if (!s.is_int()) return std::nullopt;
  return s.value();
}
bool Divides(const Sint& s, int64_t by) { return s.is_int() && s.value() % by == 0; }

Sint Prod(const SintVec& v, size_t begin, size_t end) {
  Sint p = 1;
  for (size_t i = begin; i < end && i < v.size(); ++i) p = p * v[i];
  return p;
}

bool StrideIs(const std::optional<Sint>& s, int64_t v) { return s.has_value() && *s == Sint(v); }

}  // namespace

absl::StatusOr<std::vector<Opt>> HandCodedOptimizations(const Kernel& input) {
  Kernel k = input;
  const Renderer& r = k.renderer();
  const UOp* red = k.reduceop();

  // Matrix-vector products.
  if (r.has_local() && red != nullptr && red->arg()[0].as_op() == Ops::ADD && k.full_shape().size() >= 2 &&
      r.has_shared() && red->src(0)->op() == Ops::MUL && red->src(0)->src(0)->op() == Ops::LOAD &&
      red->src(0)->src(1)->op() == Ops::LOAD) {
    const UOp* mul = red->src(0);
    const ShapeTracker& st0 = k.sts()[k.BufIndex(mul->src(0))];
    const ShapeTracker& st1 = k.sts()[k.BufIndex(mul->src(1))];
    auto strides0 = st0.RealStrides(), strides1 = st1.RealStrides();
    auto has_expanded_axis = [](const SintVec& shape, const std::vector<std::optional<Sint>>& strides) {
      for (size_t i = 0; i < shape.size(); ++i) {
        if (Resolve(Lt(Sint(1), shape[i])) && StrideIs(strides[i], 0)) return true;
      }
      return false;
    };
    if (StrideIs(strides0[k.first_reduce()], 1) &&
        !(has_expanded_axis(st0.shape(), strides0) && has_expanded_axis(st1.shape(), strides1))) {
      for (int64_t g = 0; g < k.global_dims(); ++g) {
        if (Divides(k.full_shape()[k.first_reduce()], kMvThreadsPerRow) &&
            Divides(k.full_shape()[g], kMvBlockSize * kMvRowsPerThread)) {
          UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kGroup, 0, kMvThreadsPerRow)));
          UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kLocal, g, kMvBlockSize)));
          UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kUpcast, g, kMvRowsPerThread)));
          return k.applied_opts();
        }
      }
    }
  }

  // Grouping for small outputs (needs local memory).
  if (r.has_local() && r.has_shared()) {
    const SintVec& out = k.sts()[0].shape();
    bool all_int = true;
    for (int64_t i = 0; i < k.first_reduce(); ++i) all_int &= out[i].is_int();
    if (all_int) {
      bool upcastable_unit_stride = false;
      for (int64_t x : k.sts()[0].UnitStrideAxes()) {
        if (x >= k.first_upcast() && Divides(out[x], 4)) upcastable_unit_stride = true;
      }
      Sint out_size = Prod(out, 0, k.first_reduce());
      if (!upcastable_unit_stride && k.first_reduce() <= 2 && k.first_reduce() < k.shape_len() &&
          out_size.value() <= 2048) {
        std::vector<int64_t> sizes =
            out_size.value() <= 32 ? std::vector<int64_t>{256, 16} : std::vector<int64_t>{16};
        for (int64_t sz : sizes) {
          bool fits = true;
          for (const ShapeTracker& st : k.sts()) {
            const Sint& d = st.shape()[k.first_reduce()];
            fits &= Divides(d, sz) || d == Sint(1);
          }
          if (fits && k.ApplyOpt(Opt(OptOps::kGroupTop, 0, sz)).ok()) break;  // may exceed shared memory
        }
      }
    }
  }
  // (Image buffers, upcast as float4 by tinygrad here, do not occur on uopc's targets.)
  if (k.group_for_reduces() != 0) return k.applied_opts();

  // Small masked axes (from stacks) are upcast.
  std::vector<int64_t> to_upcast;
  for (int64_t axis = 0; axis < k.first_reduce(); ++axis) {
    std::optional<int64_t> size = IntOf(k.full_shape()[axis]);
    if (!size || *size > 7) continue;
    bool masked = false;
    for (const ShapeTracker& st : k.sts()) masked |= st.AxisIsMasked(axis);
    if (!masked) continue;
    Sint work = Prod(k.full_shape(), k.first_upcast(), k.shape_len());
    for (int64_t j : to_upcast) work = work * k.full_shape()[j];
    work = work * Sint(*size);
    if (Resolve(Le(work, Sint(49)))) to_upcast.push_back(axis);
  }
  for (auto it = to_upcast.rbegin(); it != to_upcast.rend(); ++it) {
    UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kUpcast, *it, 0)));
  }

  // Upcast expanded (stride 0) axes while the output is large.
  std::set<int64_t> upcasted_axes;
  const bool is_dsp = r.device() == "DSP";
  while (Resolve(Le(Sint(1024), Prod(k.sts()[0].shape(), 0, k.first_reduce())))) {
    std::vector<std::tuple<int64_t, int64_t, int64_t, int64_t>> choices;
    std::vector<int64_t> amounts =
        is_dsp ? (upcasted_axes.empty() ? std::vector<int64_t>{128} : std::vector<int64_t>{})
               : std::vector<int64_t>{3, 4};
    for (int64_t axis = 0; axis < k.first_reduce(); ++axis) {
      for (int64_t amount : amounts) {
        if (upcasted_axes.count(axis) || !Divides(k.full_shape()[axis], amount)) continue;
        bool any = false;
        for (size_t b = 0; b < k.sts().size() && !any; ++b) {
          if (k.sts()[b].views().back().strides()[axis] != Sint(0)) continue;
          bool upcast_has_zero = false;
          for (const Kernel::UpcastedAxis& u : k.upcasted_axis(b)) upcast_has_zero |= StrideIs(u.stride, 0);
          any = !upcast_has_zero;
        }
        if (!any) continue;
        int64_t positive = 0, total = 0;
        for (const ShapeTracker& st : k.sts()) {
          const Sint& s = st.views().back().strides()[axis];
          positive += Resolve(Lt(Sint(0), s));
          total += s.is_int() ? s.value() : 0;
        }
        choices.emplace_back(positive, total, axis, amount);
      }
    }
    if (choices.empty()) break;
    std::sort(choices.begin(), choices.end());
    auto [p, t, axis, amount] = choices[0];
    UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kUpcast, axis, amount)));
    upcasted_axes.insert(axis);
  }

  // Unroll a small last reduce (and a second one when tiny).
  if (k.first_reduce() < k.first_upcast()) {
    Sint upcast_prod = Prod(k.full_shape(), k.first_upcast(), k.shape_len());
    bool upcast_reduces = false;
    for (int64_t i = k.first_upcast(); i < k.shape_len(); ++i) {
      upcast_reduces |= k.sts()[0].shape()[i] != k.full_shape()[i];
    }
    bool small_upcast =
        k.upcasted() == 0 ||
        Resolve(Lt(Prod(k.full_shape(), k.shape_len() - k.upcasted(), k.shape_len()), Sint(64)));
    if ((Resolve(Le(upcast_prod, Sint(4))) || !upcast_reduces) && small_upcast) {
      SintVec fus = k.full_unupcasted_shape();
      std::optional<int64_t> s = IntOf(fus.back());
      if (s && *s <= 32) {
        UOPC_RETURN_IF_ERROR(
            k.ApplyOpt(Opt(OptOps::kUnroll, static_cast<int64_t>(fus.size()) - 1 - k.first_reduce(), 0)));
        fus = k.full_unupcasted_shape();
        if (k.first_reduce() < k.first_upcast() && *s <= 3) {
          std::optional<int64_t> s2 = IntOf(fus.back());
          if (s2 && *s2 <= 3) {
            UOPC_RETURN_IF_ERROR(
                k.ApplyOpt(Opt(OptOps::kUnroll, static_cast<int64_t>(fus.size()) - 1 - k.first_reduce(), 0)));
          }
        }
      } else if (Divides(fus.back(), 4)) {
        UOPC_RETURN_IF_ERROR(
            k.ApplyOpt(Opt(OptOps::kUnroll, static_cast<int64_t>(fus.size()) - 1 - k.first_reduce(), 4)));
      }
    }
  }

  // If nothing is upcast yet and the last dim divides by 4, upcast it.
  {
    SintVec fus = k.full_unupcasted_shape();
    if (k.upcasted() == 0 && !fus.empty() && Divides(fus.back(), 4)) {
      UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kUpcast, static_cast<int64_t>(fus.size()) - 1, 4)));
    }
  }

  // Local groups: expanded axes first, then the later ones; at most three, at most 128 threads.
  if (r.has_local()) {
    std::vector<std::pair<bool, int64_t>> ranking;
    for (int64_t axis = 0; axis < k.first_reduce(); ++axis) {
      bool expanded = false;
      for (const ShapeTracker& st : k.sts()) expanded |= st.views().back().strides()[axis] == Sint(0);
      ranking.push_back({expanded, axis});
    }
    std::stable_sort(ranking.begin(), ranking.end(), [](const auto& a, const auto& b) {
      return std::make_pair(-static_cast<int>(a.first), -a.second) <
             std::make_pair(-static_cast<int>(b.first), -b.second);
    });
    std::vector<std::pair<int64_t, int64_t>> to_local;
    for (const auto& [expanded, axis] : ranking) {
      int64_t local_size = 1;
      for (const auto& [a, sz] : to_local) local_size *= sz;
      std::vector<int64_t> candidates;
      if (axis == 0) candidates.push_back(32);
      for (int64_t x : {16, 8, 4, 3, 2}) candidates.push_back(x);
      for (int64_t x : candidates) {
        if (Divides(k.full_shape()[axis], x) && local_size * x <= 128) {
          to_local.push_back({axis, x});
          break;
        }
      }
    }
    if (to_local.size() > 3) to_local.resize(3);
    std::sort(to_local.begin(), to_local.end());
    int64_t deleted = 0;
    for (auto [axis, sz] : to_local) {
      axis -= deleted;
      bool will_delete = k.full_shape()[axis] == Sint(sz);
      UOPC_RETURN_IF_ERROR(k.ApplyOpt(Opt(OptOps::kLocal, axis, sz)));
      if (will_delete) ++deleted;
    }
  }
  return k.applied_opts();
}

// The choices of tensor-core axes uopc's GPU opts try, in tinygrad's order (TC's axis argument).
constexpr int64_t kMaxTensorCoreAxisChoices = 16;

absl::Status ApplyDefaultOptimizations(Kernel& k) {
  // tinygrad's knobs: TC (0 turns tensor cores off, 2 emulates them with locals), TC_SELECT (which core, -1
  // the first that fits) and TC_OPT (1 also takes several reduce axes and cast inputs, 2 also pads).
  // tinygrad tries one choice of the core's N, M and K axes (axis 0: the last output axes broadcast in
  // each input and the last reduce axis); uopc's GPU opts go on to the next choices where that one does not
  // fit (a convolution's weight gradient, whose last such axes are the kernel's 3 x 3 window).
  const int64_t use_tensor_cores = EnvInt("TC", 1);
  const UOp* reduce = k.reduceop();
  const UOp* summed = reduce == nullptr ? nullptr : reduce->src(0);
  if (summed != nullptr && summed->op() == Ops::CAST) summed = summed->src(0);
  const bool products = summed != nullptr && summed->op() == Ops::MUL && reduce->arg()[0].as_op() == Ops::ADD;
  const int64_t tc_axes = k.renderer().uopc_gpu_opts() && products ? kMaxTensorCoreAxisChoices : 1;
  const int64_t tc_select = EnvInt("TC_SELECT", -1), tc_opt = EnvInt("TC_OPT", 0);
  for (int64_t axis = 0; use_tensor_cores > 0 && axis < tc_axes; ++axis) {
    if (k.ApplyTensorCores(use_tensor_cores, axis, tc_select, tc_opt)) {
      return absl::OkStatus();
    }
  }
  if (std::optional<std::vector<Opt>> blocked = VectorBlockedOptimizations(k)) return k.ApplyOpts(*blocked);
  if (k.renderer().uopc_gpu_opts()) {
    if (std::optional<std::vector<Opt>> grouped = CoalescedReduceOptimizations(k))
      return k.ApplyOpts(*grouped);
  }
  UOPC_ASSIGN_OR_RETURN(std::vector<Opt> opts, HandCodedOptimizations(k));
  return k.ApplyOpts(opts);
}

absl::StatusOr<UOpPtr> OptimizeKernelAst(const UOpPtr& ast, const Renderer& renderer,
                                         KernelNameCounter* names,
                                         const std::optional<std::vector<Opt>>& opts) {
  UOPC_ASSIGN_OR_RETURN(Kernel k, Kernel::Create(ast, renderer));
  UOPC_RETURN_IF_ERROR(opts ? k.ApplyOpts(*opts) : ApplyDefaultOptimizations(k));
  return k.GetOptimizedAst(names);
}

}  // namespace uopc
