#include "codegen/vector_heuristic.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "shapetracker/sint.h"
#include "uop/ops.h"

namespace uopc {
namespace {

// Accumulator floats a tile may hold: 8 AVX-512 or 16 AVX2 registers, leaving room for the operands.
constexpr int64_t kTileFloats = 128;
constexpr int64_t kMaxRows = 8;
// Fewer lanes than this leave too little work per load to pay for the vectors (a convolution's 20-wide rows
// split in 4 ran at a quarter of tinygrad's opts' speed); such kernels keep tinygrad's opts.
constexpr int64_t kMinLanes = 8;
// A lane input of this many floats (32 MB) or more is swapped to the outer loop (a 4096² matmul's B: 18 -> 33
// GFLOPS on 2 threads, and from packed panels 30 -> 110; 1024²'s did not gain).
constexpr int64_t kSwapFromFloats = int64_t{1} << 23;

}  // namespace

std::optional<std::vector<Opt>> VectorBlockedOptimizations(const Kernel& input) {
  const int64_t width = input.renderer().vector_width();
  const UOp* red = input.reduceop();
  if (width == 1 || input.renderer().has_local() || red == nullptr || input.reduceops().size() != 1 ||
      red->arg()[0].as_op() != Ops::ADD || red->dtype() != dtypes::kFloat32 ||
      red->src(0)->op() != Ops::MUL || red->src(0)->src(0)->op() != Ops::LOAD ||
      red->src(0)->src(1)->op() != Ops::LOAD) {
    return std::nullopt;
  }
  const int64_t in0 = input.BufIndex(red->src(0)->src(0)), in1 = input.BufIndex(red->src(0)->src(1));
  if (in0 < 0 || in1 < 0) return std::nullopt;
  const auto out_strides = input.sts()[0].RealStrides();
  const auto strides0 = input.sts()[in0].RealStrides(), strides1 = input.sts()[in1].RealStrides();
  const SintVec& shape = input.full_shape();
  const int64_t globals = input.first_reduce();
  auto size_of = [&](int64_t axis) -> int64_t { return shape[axis].is_int() ? shape[axis].value() : 0; };

  // The lanes: an output axis along which one input is broadcast, so that its scalar times the other's
  // vector is one multiply-add per lane. Best when the other input (and the output) is contiguous there, as a
  // matmul's column; else a contiguous input and any output; else the other input gathered lane by lane.
  std::optional<int64_t> lane_axis;
  int64_t lanes = 0, best_rank = 0;
  for (int64_t axis = 0; axis < globals; ++axis) {
    // An unknown (symbolic or masked) stride is neither 0 nor 1.
    const std::optional<Sint>& o = out_strides[axis];
    const std::optional<Sint>& s0 = strides0[axis];
    const std::optional<Sint>& s1 = strides1[axis];
    const bool one_broadcast = (s0 == Sint(0)) != (s1 == Sint(0));
    const bool contiguous = (s0 == Sint(1) && s1 == Sint(0)) || (s0 == Sint(0) && s1 == Sint(1));
    const int64_t rank = !one_broadcast ? 0 : contiguous ? (o == Sint(1) ? 3 : 2) : 1;
    // One vector of lanes: tinygrad's UPCAST takes at most 16, and two upcasts of one axis would interleave.
    int64_t amount = std::min<int64_t>(width, 16);
    while (amount >= kMinLanes && size_of(axis) % amount != 0) amount /= 2;
    if (rank == 0 || amount < kMinLanes) continue;
    if (rank > best_rank || (rank == best_rank && amount >= lanes)) {
      lane_axis = axis;
      lanes = amount;
      best_rank = rank;
    }
  }
  if (!lane_axis) return std::nullopt;

  // The rows: an output axis along which the lanes' input is broadcast and the other one is not.
  const bool lanes_from_0 = strides0[*lane_axis] != Sint(0);
  const auto& lane_input = lanes_from_0 ? strides0 : strides1;
  const auto& row_input = lanes_from_0 ? strides1 : strides0;
  std::optional<int64_t> row_axis;
  int64_t rows = 1;
  for (int64_t axis = 0; axis < globals; ++axis) {
    if (axis == *lane_axis || lane_input[axis] != Sint(0) || row_input[axis] == Sint(0)) {
      continue;
    }
    for (int64_t amount = std::min(kMaxRows, kTileFloats / lanes); amount >= 2; amount /= 2) {
      if (size_of(axis) % amount == 0 && amount > rows) {
        row_axis = axis;
        rows = amount;
        break;
      }
    }
  }

  // Rows first, lanes last: the last upcast varies fastest, so a vector of lanes is one row's.
  Kernel k = input;
  int64_t lane = *lane_axis;
  if (row_axis) {
    if (!k.ApplyOpt(Opt(OptOps::kUpcast, *row_axis, rows)).ok()) return std::nullopt;
    if (size_of(*row_axis) == rows && *row_axis < lane) --lane;  // the row axis was used up
  }
  if (!k.ApplyOpt(Opt(OptOps::kUpcast, lane, lanes)).ok()) return std::nullopt;
  // A matmul (contiguous columns, or two output axes: B read from packed panels, tensor/tensor_nn.cc, has no
  // single column stride) whose lane input is far larger than the cache: the column blocks' loop goes outside
  // the row blocks' (tinygrad's SWAP), so one block of columns stays cached while every row block reads it.
  // Both loops must be left after their upcasts (else there is nothing to swap, and the indices would name
  // other axes).
  const UOp* lane_buffer = input.bufs()[lanes_from_0 ? in0 : in1]->src(0);
  const bool matmul = best_rank == 3 || globals == 2;
  const bool both_loops_left = row_axis && size_of(*row_axis) > rows && size_of(*lane_axis) > lanes;
  if (matmul && both_loops_left && *row_axis < lane && lane < k.first_reduce() &&
      lane_buffer->dtype().ptr_size() >= kSwapFromFloats) {
    if (!k.ApplyOpt(Opt(OptOps::kSwap, *row_axis, lane)).ok()) return std::nullopt;
  }
  if (!k.ApplyOpt(Opt(OptOps::kVector, std::nullopt, std::nullopt)).ok()) return std::nullopt;
  return k.applied_opts();
}

}  // namespace uopc
