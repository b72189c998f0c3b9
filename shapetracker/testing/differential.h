// Differential testing of ShapeTracker against ReferenceModel on random movement-op sequences.
//
// One generator serves the gtest (choices from a seeded PRNG) and the libFuzzer target (choices read from
// the fuzz input), so a sequence either finds can be replayed by the other. A sequence starts from a
// contiguous shape and applies mostly valid ops (reshape, permute, expand, pad, shrink, flip, a mid-sequence
// simplify) and now and then an invalid one. CheckOpSequence applies each op to a tracker and to the model
// and, after every op, compares:
//   - whether the op was accepted (both reject invalid ops; the tracker with InvalidArgument);
//   - the shape, and the index array (IndexArray of the tracker vs the model's entries), also after
//     Simplify(), which must not add views;
//   - ToString/Parse round trips, contiguous() (implies the identity index) and real_strides (a non-null
//     stride on an axis must be the index step along that axis, and valid must not change along it).
// Symbolic cases reshape to a shape holding a bound variable (`Variable("i", 1, 8).bind(3)`), or shrink with
// a bound start, then apply more ops, comparing with the model at the bound value, before and after Unbind().
// A failure message holds the sequence in the corpus's JSON form, to replay with `uopc shape`.
//
//   ChoiceSource choices(/*seed=*/42);
//   OpSequence seq = RandomOpSequence(choices);
//   if (std::optional<std::string> failure = CheckOpSequence(seq)) FAIL() << *failure;
#ifndef UOPC_SHAPETRACKER_TESTING_DIFFERENTIAL_H_
#define UOPC_SHAPETRACKER_TESTING_DIFFERENTIAL_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "shapetracker/movement_ops.h"
#include "shapetracker/shapetracker.h"
#include "shapetracker/testing/reference_model.h"

namespace uopc {

// Where the generator's choices come from: a seeded PRNG, or fuzz input bytes (all zero once used up).
class ChoiceSource {
 public:
  explicit ChoiceSource(uint64_t seed) : rng_(seed) {}
  ChoiceSource(const uint8_t* data, size_t size) : data_(data), size_(size), from_bytes_(true) {}

  // Uniform in [0, n); 0 when n <= 1.
  uint64_t Below(uint64_t n);
  // Uniform in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(Below(hi - lo + 1)); }
  bool Percent(int p) { return static_cast<int>(Below(100)) < p; }

 private:
  std::mt19937_64 rng_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool from_bytes_ = false;
};

struct OpSequenceOptions {
  int max_start_rank = 4;
  int max_rank = 5;
  int64_t max_dim = 6;
  int max_ops = 7;
  // Every intermediate shape has at most this many positions.
  int64_t max_elements = 512;
  int invalid_percent = 6;
  int simplify_percent = 6;
  // Whether ops may produce shapes with a 0 dimension (an empty shrink window, an expand to 0).
  bool allow_empty = true;
};

struct OpSequence {
  std::vector<int64_t> start_shape;
  std::vector<MovementOp> ops;
  // {"start_shape": [...], "ops": [...]}: a line for `uopc shape --jsonl`.
  nlohmann::json ToJson() const;
};

// A random start shape and op sequence. Ops are drawn for the shape the previous ops left (the reference
// model's), so most are valid; `invalid_percent` of them get arguments tinygrad rejects.
OpSequence RandomOpSequence(ChoiceSource& choices, const OpSequenceOptions& options = {});
// One random op for `shape` (valid unless `invalid`), keeping the result within options.max_elements.
MovementOp RandomMovementOp(ChoiceSource& choices, absl::Span<const int64_t> shape, bool invalid,
                            const OpSequenceOptions& options = {});

// The op applied to the model (simplify leaves it as it is).
absl::StatusOr<ReferenceModel> ApplyToModel(const ReferenceModel& model, const MovementOp& op);
// nullopt when a tracker (integer shape) and the model agree on everything listed above; else what differs.
std::optional<std::string> CompareWithModel(const ShapeTracker& st, const ReferenceModel& model);

// nullopt when tracker and model agree on everything above; else what differs, at which op, and the sequence.
std::optional<std::string> CheckOpSequence(const OpSequence& seq);

// A symbolic case: start shape, ops before the symbolic step, the step, and ops after it. The step is a
// reshape to `symbolic_shape` with axis `symbolic_axis` replaced by a variable bound to its value (on a
// contiguous tracker any factorization; otherwise the same shape), or, when `shrink_axis` >= 0, a shrink of
// that axis to [j, j+1) with j a variable bound to `shrink_start`. Ops after it leave the symbolic axes
// whole.
struct SymbolicCase {
  std::vector<int64_t> start_shape;
  std::vector<MovementOp> before;
  std::vector<int64_t> symbolic_shape;
  int symbolic_axis = 0;
  int shrink_axis = -1;
  int64_t shrink_start = 0;
  std::vector<MovementOp> after;
  nlohmann::json ToJson() const;
};

SymbolicCase RandomSymbolicCase(ChoiceSource& choices, const OpSequenceOptions& options = {});
// Compares the bound tracker, its Unbind() (evaluated with the returned values) and both simplified with
// the model at the bound values, after the symbolic step and after every later op.
std::optional<std::string> CheckSymbolicCase(const SymbolicCase& c);

// The fuzz entry point: a plain or symbolic case derived from `data`, checked; the failure message or
// nullopt.
std::optional<std::string> FuzzOneInput(const uint8_t* data, size_t size);

}  // namespace uopc

#endif  // UOPC_SHAPETRACKER_TESTING_DIFFERENTIAL_H_
