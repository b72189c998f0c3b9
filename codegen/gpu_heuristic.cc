#include "codegen/gpu_heuristic.h"

#include <cstdint>

#include "renderer/renderer.h"
#include "uop/ops.h"

namespace uopc {

std::optional<std::vector<Opt>> CoalescedReduceOptimizations(const Kernel& k) {
  constexpr int64_t kMaxOutputs = 65536, kMinReduce = 64, kMaxGroup = 256, kMinGroup = 8;
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

  // From the innermost reduce axis out, while the input stays contiguous: how many of each axis's elements
  // the workgroup's threads take (the whole axis, or a divisor of it that keeps the workgroup at 256).
  std::vector<int64_t> amounts;
  int64_t group = 1, contiguous_stride = 1;
  for (int64_t axis = dims - 1; axis >= first_reduce && group < kMaxGroup; --axis) {
    if (strides[axis] != Sint(contiguous_stride)) break;
    const int64_t size = shape[axis].value();
    int64_t amount = size;
    while (amount > 1 && (group * amount > kMaxGroup || size % amount != 0)) --amount;
    if (amount < 2) break;
    amounts.push_back(amount);
    group *= amount;
    if (amount != size) break;
    contiguous_stride *= size;
  }
  if (group < kMinGroup) return std::nullopt;

  // A GROUP's axis counts from the first reduce axis after the groups made so far; a whole axis grouped
  // leaves a dim of 1 that the kernel drops, so the next axis out is again the last one.
  Kernel work = k;
  for (int64_t amount : amounts) {
    const int64_t axis = work.shape_len() - 1 - (work.first_reduce() + work.group_for_reduces());
    if (!work.ApplyOpt(Opt(OptOps::kGroup, axis, amount)).ok()) return std::nullopt;
  }
  return work.applied_opts();
}

}  // namespace uopc
