// Movement ops as values: the op sequences of the ShapeTracker corpus, tools and fuzzers.
//
// A MovementOp is one step of a sequence like the corpus's `[["permute", [1, 0]], ["pad", [[0, 0], [1, 0]]]]`
// (../shared/reference/tinygrad-v0.10.3/corpus/README.md, section 4) with integer arguments. ApplyMovementOp
// runs one on a ShapeTracker; IndexArray evaluates a tracker's (index, valid) UOps at every position, which
// is how the tests compare trackers with tinygrad's `index` arrays and with the naive reference model.
//
//   ASSIGN_OR_RETURN(std::vector<MovementOp> ops, ParseMovementOps(json::parse(R"([["flip", [true]]])")));
//   ASSIGN_OR_RETURN(ShapeTracker st, ApplyMovementOps(start, ops));
//   ASSIGN_OR_RETURN(std::vector<int64_t> index, IndexArray(st));   // -1 where the position is padding
#ifndef UOPC_SHAPETRACKER_MOVEMENT_OPS_H_
#define UOPC_SHAPETRACKER_MOVEMENT_OPS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "shapetracker/shapetracker.h"

namespace uopc {

enum class MovementKind { kReshape, kPermute, kExpand, kPad, kShrink, kFlip, kSimplify };

// The corpus's name of the op: "reshape", "permute", ...
const char* MovementKindName(MovementKind kind);

struct MovementOp {
  MovementKind kind = MovementKind::kSimplify;
  // reshape, expand: the new shape; permute: the axis order.
  std::vector<int64_t> axes;
  // pad: (before, after) per axis; shrink: [begin, end) per axis.
  std::vector<std::pair<int64_t, int64_t>> pairs;
  // flip: whether each axis is reversed.
  std::vector<bool> flips;

  static MovementOp Reshape(std::vector<int64_t> shape) {
    return WithAxes(MovementKind::kReshape, std::move(shape));
  }
  static MovementOp Permute(std::vector<int64_t> order) {
    return WithAxes(MovementKind::kPermute, std::move(order));
  }
  static MovementOp Expand(std::vector<int64_t> shape) {
    return WithAxes(MovementKind::kExpand, std::move(shape));
  }
  static MovementOp Pad(std::vector<std::pair<int64_t, int64_t>> p) {
    return WithPairs(MovementKind::kPad, std::move(p));
  }
  static MovementOp Shrink(std::vector<std::pair<int64_t, int64_t>> p) {
    return WithPairs(MovementKind::kShrink, std::move(p));
  }
  static MovementOp Flip(std::vector<bool> f) {
    MovementOp op;
    op.kind = MovementKind::kFlip;
    op.flips = std::move(f);
    return op;
  }
  static MovementOp Simplify() { return MovementOp(); }

  // The corpus form, e.g. ["pad", [[0, 0], [1, 0]]] or ["simplify", null].
  nlohmann::json ToJson() const;
  std::string ToString() const { return ToJson().dump(); }

  friend bool operator==(const MovementOp& a, const MovementOp& b) {
    return a.kind == b.kind && a.axes == b.axes && a.pairs == b.pairs && a.flips == b.flips;
  }

 private:
  static MovementOp WithAxes(MovementKind kind, std::vector<int64_t> axes) {
    MovementOp op;
    op.kind = kind;
    op.axes = std::move(axes);
    return op;
  }
  static MovementOp WithPairs(MovementKind kind, std::vector<std::pair<int64_t, int64_t>> pairs) {
    MovementOp op;
    op.kind = kind;
    op.pairs = std::move(pairs);
    return op;
  }
};

// Argument values must fit in int32 (tinygrad's indices are int32), and argument lists may have at most
// kMaxRank entries; anything else is an InvalidArgument error naming the op.
inline constexpr int kMaxRank = 64;
// Parses one op in the corpus form. Errors say what is wrong, e.g. `pad: expected [before, after] pairs`.
absl::StatusOr<MovementOp> ParseMovementOp(const nlohmann::json& j);
// Parses a list of ops; errors name the op's position ("op 2: ...").
absl::StatusOr<std::vector<MovementOp>> ParseMovementOps(const nlohmann::json& j);
// A list of ops in the corpus form.
nlohmann::json MovementOpsToJson(absl::Span<const MovementOp> ops);

// A view in the corpus's form: {"shape", "strides", "offset", "mask" ([lo, hi] pairs or null), "contiguous"}.
// Symbolic values are strings in the infix syntax.
nlohmann::json ViewToJson(const View& v);
// real_strides in the corpus's form: integers, null for nullopt (symbolic strides as infix strings).
nlohmann::json RealStridesToJson(const std::vector<std::optional<Sint>>& strides);

// An op's result would have more positions than this: rejected before the tracker sees it, so that shapes,
// strides and offsets stay far from int64 overflow and index arrays stay materializable.
inline constexpr int64_t kMaxMovementElements = (int64_t{1} << 31) - 1;

// Applies one op (simplify: ShapeTracker::Simplify). Invalid arguments give the tracker's InvalidArgument
// error; a result of more than kMaxMovementElements positions gives InvalidArgument too.
absl::StatusOr<ShapeTracker> ApplyMovementOp(const ShapeTracker& st, const MovementOp& op);
// Applies ops in order; errors name the op's position.
absl::StatusOr<ShapeTracker> ApplyMovementOps(const ShapeTracker& st, absl::Span<const MovementOp> ops);

// Values of symbolic variables by name, for trackers whose views hold unbound DEFINE_VARs.
using VarValues = absl::flat_hash_map<std::string, int64_t>;

// For each position of `st` in row-major order: the buffer index its (index, valid) UOps give, or -1 where
// valid is false. The UOps of ShapeTracker::ToIndexedUops are evaluated with exec_alu (C semantics); RANGE
// axis k is the position's k-th coordinate, a BIND is its bound value and a DEFINE_VAR takes its value from
// `vars` (an error when missing). Symbolic shape dimensions are evaluated the same way. Errors: an unknown
// variable, a node that cannot be evaluated, or more than `max_positions` positions.
absl::StatusOr<std::vector<int64_t>> IndexArray(const ShapeTracker& st, const VarValues& vars = {},
                                                int64_t max_positions = int64_t{1} << 24);

// The value of an int/bool UOp built from CONST, DEFINE_VAR, BIND and ALU ops (no RANGE), with DEFINE_VARs
// from `vars`. Used for symbolic shape dimensions.
absl::StatusOr<int64_t> EvaluateInt(const UOpPtr& u, const VarValues& vars = {});

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_MOVEMENT_OPS_H_
