#include "codegen/gpu_heuristic.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "renderer/renderer.h"
#include "uop/ops.h"

namespace uopc {

std::optional<std::vector<Opt>> CoalescedReduceOptimizations(const Kernel& k) {
  constexpr int64_t kMaxOutputs = 65536, kMinReduce = 64, kMaxGroup = 256, kMinGroup = 8;
  // Where the outputs are the contiguous ones: 8 to 64 of them a workgroup, as many as leave 128 workgroups
  // (an H200 has 132 SMs), each summed by up to 32 threads, at most 1024 threads in all (CUDA's limit).
  constexpr int64_t kMaxLocalRun = 64, kMinWorkgroups = 128, kMaxStridedGroup = 32, kMaxThreads = 1024;
  const Renderer& renderer = k.renderer();
  const UOp* red = k.reduceop();
  if (!renderer.has_local() || !renderer.has_shared() || red == nullptr || k.reduceops().size() != 1 ||
      !k.applied_opts().empty() || k.first_upcast() != k.shape_len()) {
    return std::nullopt;
  }
  const Ops op = red->arg()[0].as_op();
  if (op != Ops::ADD && op != Ops::MAX) return std::nullopt;
  const SintVec& shape = k.full_shape();
  const int64_t first_reduce = k.first_reduce(), dims = k.shape_len();
  int64_t outputs = 1, reduced = 1;
  for (int64_t axis = 0; axis < dims; ++axis) {
    if (!shape[axis].is_int()) return std::nullopt;
    (axis < first_reduce ? outputs : reduced) *= shape[axis].value();
  }
  if (outputs > kMaxOutputs || reduced < kMinReduce) return std::nullopt;

  // The input that moves the most memory decides which reduce axes are contiguous.
  int64_t input = -1, largest = 0;
  for (size_t i = 0; i < k.bufs().size(); ++i) {
    const UOpPtr& buf = k.bufs()[i];
    if (buf->op() != Ops::LOAD || buf->num_src() == 0) continue;
    const int64_t size = buf->src()[0]->dtype().ptr_size();
    if (size > largest) {
      largest = size;
      input = static_cast<int64_t>(i);
    }
  }
  if (input < 0) return std::nullopt;
  const std::vector<std::optional<Sint>> strides = k.sts()[input].RealStrides();

  // From axis `last` down to `first`, while the input stays contiguous: how many of each axis's elements the
  // workgroup's threads take (the whole axis, or a divisor of it that keeps them at `most`).
  auto contiguous_run = [&](int64_t last, int64_t first, int64_t most) {
    std::vector<int64_t> amounts;
    int64_t threads = 1, contiguous_stride = 1;
    for (int64_t axis = last; axis >= first && threads < most; --axis) {
      if (strides[axis] != Sint(contiguous_stride)) break;
      const int64_t size = shape[axis].value();
      int64_t amount = size;
      while (amount > 1 && (threads * amount > most || size % amount != 0)) --amount;
      if (amount < 2) break;
      amounts.push_back(amount);
      threads *= amount;
      if (amount != size) break;
      contiguous_stride *= size;
    }
    return std::make_pair(amounts, threads);
  };
  // A GROUP's axis counts from the first reduce axis after the groups made so far, a LOCAL's from the first
  // axis; a whole axis taken leaves a dim of 1 that the kernel drops, so the next axis out is again the last
  // reduce axis, or the last global one.
  Kernel work = k;
  auto group_innermost = [&](int64_t amount) {
    const int64_t axis = work.shape_len() - 1 - (work.first_reduce() + work.group_for_reduces());
    return work.ApplyOpt(Opt(OptOps::kGroup, axis, amount)).ok();
  };

  // Neighbouring threads on neighbouring elements of one reduction.
  if (auto [amounts, threads] = contiguous_run(dims - 1, first_reduce, kMaxGroup); threads >= kMinGroup) {
    for (int64_t amount : amounts) {
      if (!group_innermost(amount)) return std::nullopt;
    }
    return work.applied_opts();
  }
  // Else, where the input is contiguous along the outputs instead, neighbouring threads on neighbouring
  // outputs (LOCAL: the first local dim is a warp's fastest), and a GROUP of the innermost reduce axis for
  // the rest of the workgroup.
  auto [amounts, threads] =
      contiguous_run(first_reduce - 1, 0, std::clamp(outputs / kMinWorkgroups, kMinGroup, kMaxLocalRun));
  if (threads < kMinGroup) return std::nullopt;
  for (int64_t amount : amounts) {
    if (!work.ApplyOpt(Opt(OptOps::kLocal, work.global_dims() - 1, amount)).ok()) return std::nullopt;
  }
  const int64_t innermost = shape[dims - 1].value();
  int64_t amount = std::min({kMaxThreads / threads, kMaxStridedGroup, innermost});
  while (amount > 1 && innermost % amount != 0) --amount;
  if (amount >= 2 && !group_innermost(amount)) return std::nullopt;
  return work.applied_opts();
}

}  // namespace uopc
