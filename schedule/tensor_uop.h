// The tensor-level UOp: the graph a Tensor program builds and the scheduler cuts into kernels (tinygrad
// v0.10.3's UOp methods for shapes, devices and movement: `st`, `shape`, `base`, `device`, `_mop`, `r`,
// `const_like`, `metaop`, `new_buffer`).
//
// A tensor-level node has a ShapeTracker when its shape is known: a VIEW's is its arg, a movement op applies
// itself to its source's, BUFFER and KERNEL have a flat shape of their size, and every other node takes the
// shape of its sources (a reduction reduces it, a BITCAST to another width rescales the last axis). tinygrad
// caches this on the node; here a `TensorShapes` memo holds it for one pass over a graph.
//
//   TensorShapes shapes;
//   UOPC_ASSIGN_OR_RETURN(UOpPtr r, Reshape(x, {2, 3}, shapes));   // x itself when the shape does not change
//   const ShapeTracker* st = shapes.St(r);
#ifndef UOPC_SCHEDULE_TENSOR_UOP_H_
#define UOPC_SCHEDULE_TENSOR_UOP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/node_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "shapetracker/shapetracker.h"
#include "uop/uop.h"

namespace uopc {

// Shapes of tensor-level nodes, computed once per node and kept while the memo lives (it holds the nodes).
class TensorShapes {
 public:
  // The node's ShapeTracker, or nullptr when it has none (DEVICE, UNIQUE, SINK, a bare CONST...). A node
  // whose sources disagree on the shape, or a movement op its source's shape rejects, is an InvalidArgument
  // naming the node; St then returns nullptr for it and `TrySt` gives the error.
  const ShapeTracker* St(const UOpPtr& u);
  absl::StatusOr<const ShapeTracker*> TrySt(const UOpPtr& u);
  // St(u)->shape(); UOPC_CHECKs that u has a shape.
  const SintVec& Shape(const UOpPtr& u);
  // The number of elements: BUFFER's arg, BUFFER_VIEW's arg[0], else the ShapeTracker's size.
  int64_t Size(const UOpPtr& u);
  void Clear() { memo_.clear(); }

 private:
  struct Entry {
    UOpPtr node;  // keeps the key alive
    std::optional<ShapeTracker> st;
    absl::Status status;
  };
  // Node-based: St hands out pointers into entries that must survive later insertions.
  absl::node_hash_map<const UOp*, Entry> memo_;
};

// A movement op's ShapeTracker from its source's (ShapeTracker.mop).
absl::StatusOr<ShapeTracker> ApplyMovementOp(const ShapeTracker& st, Ops op, const Arg& arg);

// The node below any VIEW-with-source and movement ops.
const UOp* BaseOf(const UOp* u);
inline UOpPtr BaseOf(const UOpPtr& u) { return BaseOf(u.get())->ref(); }

// The device a node lives on: DEVICE's arg, a BUFFER's or COPY's second source's, else the first source that
// has one; "" when none does. A MULTI lives on its shards' devices, written joined by commas ("CPU,CPU:1";
// tinygrad's tuple), and so does every node above it.
std::string DeviceOf(const UOp* u);

// VIEW(base(x)) with `st` (UOp.view).
UOpPtr ViewOf(const UOpPtr& x, const ShapeTracker& st);

// Movement ops (UOp._mop): the new node, or `x` itself when its ShapeTracker would not change. Args are
// tinygrad's: RESHAPE/EXPAND a shape, PERMUTE an axis order, PAD/SHRINK (begin, end) pairs, FLIP bools.
absl::StatusOr<UOpPtr> Reshape(const UOpPtr& x, absl::Span<const int64_t> shape, TensorShapes& shapes);
absl::StatusOr<UOpPtr> Expand(const UOpPtr& x, absl::Span<const int64_t> shape, TensorShapes& shapes);
absl::StatusOr<UOpPtr> Permute(const UOpPtr& x, absl::Span<const int64_t> order, TensorShapes& shapes);
absl::StatusOr<UOpPtr> Pad(const UOpPtr& x, absl::Span<const std::pair<int64_t, int64_t>> pads,
                           TensorShapes& shapes);
absl::StatusOr<UOpPtr> Shrink(const UOpPtr& x, absl::Span<const std::pair<int64_t, int64_t>> bounds,
                              TensorShapes& shapes);
absl::StatusOr<UOpPtr> Flip(const UOpPtr& x, absl::Span<const bool> flips, TensorShapes& shapes);
// The same with symbolic sizes and bounds (tinygrad's sint): a symbolic element of the arg is a UOpArg.
absl::StatusOr<UOpPtr> Reshape(const UOpPtr& x, absl::Span<const Sint> shape, TensorShapes& shapes);
absl::StatusOr<UOpPtr> Expand(const UOpPtr& x, absl::Span<const Sint> shape, TensorShapes& shapes);
absl::StatusOr<UOpPtr> Pad(const UOpPtr& x, absl::Span<const SintPair> pads, TensorShapes& shapes);
absl::StatusOr<UOpPtr> Shrink(const UOpPtr& x, absl::Span<const SintPair> bounds, TensorShapes& shapes);
// Any movement op from its op and tinygrad arg.
absl::StatusOr<UOpPtr> MovementOp(const UOpPtr& x, Ops op, const Arg& arg, TensorShapes& shapes);

// REDUCE_AXIS over the axes of size != 1 (UOp.r), sorted; `x` itself when there are none.
UOpPtr ReduceAxis(const UOpPtr& x, Ops op, absl::Span<const int64_t> axes, TensorShapes& shapes);

// UOp.alu: `op` over `src`, with the last source's dtype (bool for comparisons).
UOpPtr Alu(Ops op, absl::Span<const UOpPtr> src);
// UOp.cast: x itself when it already has the dtype.
UOpPtr CastTo(const UOpPtr& x, DType dtype);

// A tensor constant of `shape` on `device`: CONST(VIEW(DEVICE)) reshaped to ones and expanded (UOp.metaop);
// on several devices ("CPU,CPU:1") a MULTI of one such constant per device, not sharded.
UOpPtr TensorConst(DType dtype, ConstValue value, absl::Span<const int64_t> shape, const std::string& device);
UOpPtr TensorConst(DType dtype, ConstValue value, absl::Span<const Sint> shape, const std::string& device);
// x.const_like(value): TensorConst with x's dtype, shape and device, or a bare CONST when x has no device.
UOpPtr ConstLike(const UOpPtr& x, ConstValue value, TensorShapes& shapes);

// UNIQUE with the next number of a process-wide counter.
UOpPtr NewUnique();
// BUFFER(UNIQUE, DEVICE) of `size` elements.
UOpPtr NewBuffer(const std::string& device, int64_t size, DType dtype);

}  // namespace uopc

#endif  // UOPC_SCHEDULE_TENSOR_UOP_H_
