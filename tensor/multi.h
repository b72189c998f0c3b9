// Tensors on several devices (tinygrad v0.10.3's MULTI, UOp.shard and engine/multi.py).
//
// A sharded tensor is MULTI(shard_0, ..., shard_n-1): one tensor-level graph per device, and an axis (the
// arg) along which the shards are consecutive slices of the whole, or none when every device holds all of it.
// Ops are built on the MULTI as on any tensor; at realize the multi rules push every op below the MULTIs, so
// that each device gets its own graph (a reduction across the shards becomes an all-reduce of copies), and
// the scheduler sees one ordinary graph per device.
#ifndef UOPC_TENSOR_MULTI_H_
#define UOPC_TENSOR_MULTI_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "rewrite/graph_rewrite.h"
#include "schedule/tensor_uop.h"
#include "uop/uop.h"

namespace uopc::tensor_internal {

// The device names of a DeviceOf string: "CPU,CPU:1" is {"CPU", "CPU:1"}.
std::vector<std::string> SplitDevices(const std::string& device);

// UOp.shard: `x` (on one device) copied to each of `devices` (canonical names; the copy is x itself on its
// own device), then, with `axis`, each copy shrunk to its consecutive slice of that axis, whose size must
// divide evenly; MULTI of them.
absl::StatusOr<UOpPtr> ShardUOp(const UOpPtr& x, absl::Span<const std::string> devices,
                                std::optional<int64_t> axis, TensorShapes& shapes);

// The axis a node's value is split along over its devices (tinygrad's UOp.axis): a MULTI's arg, carried
// through the ops above it; nullopt when every device holds all of it.
std::optional<int64_t> ShardAxisOf(const UOpPtr& u, TensorShapes& shapes);

// tinygrad's all_reduce: each shard's `op` (ADD, MAX, ...) with every other shard's, one result per shard on
// its device. Naive (every shard copied to every device) unless RING >= 2, or RING >= 1 with more than two
// shards of more than RING_ALLREDUCE_THRESHOLD (256,000) elements: then the ring's scatter-reduce and
// all-gather over chunks of the flattened shards.
absl::StatusOr<std::vector<UOpPtr>> AllReduce(Ops op, absl::Span<const UOpPtr> shards, TensorShapes& shapes);

// tinygrad's get_multi_map: each node of `sink`'s graph that the multi rules change, mapped to what it
// becomes (MULTIs only above every op). An op the rules cannot place on the shards (an expand or pad of the
// sharded axis, a reshape that moves elements between shards, ...) is an InvalidArgument naming it.
absl::StatusOr<UOpMap> MultiMap(const UOpPtr& sink);

}  // namespace uopc::tensor_internal

#endif  // UOPC_TENSOR_MULTI_H_
