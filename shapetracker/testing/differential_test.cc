// The differential test: thousands of seeded random movement-op sequences (plain and symbolic), each
// applied to a ShapeTracker and to the ReferenceModel and compared after every op (differential.h).
#include "shapetracker/testing/differential.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "shapetracker/movement_ops.h"
#include "shapetracker/shapetracker.h"
#include "shapetracker/testing/reference_model.h"

namespace uopc {
namespace {

constexpr int kPlainSequences = 2000;
constexpr int kEmptySequences = 500;
constexpr int kSymbolicCases = 500;
constexpr int kMaxReportedFailures = 5;

// Checks sequences for seeds [first, first + count); returns the number of failures (each reported).
int CheckSequences(uint64_t first, int count, const OpSequenceOptions& options) {
  int failures = 0;
  for (int i = 0; i < count && failures < kMaxReportedFailures; ++i) {
    ChoiceSource choices(first + i);
    OpSequence seq = RandomOpSequence(choices, options);
    if (std::optional<std::string> f = CheckOpSequence(seq)) {
      ADD_FAILURE() << "seed " << first + i << ": " << *f;
      ++failures;
    }
  }
  return failures;
}

TEST(DifferentialTest, RandomSequencesAgreeWithTheModel) {
  OpSequenceOptions options;
  options.allow_empty = false;
  CheckSequences(0, kPlainSequences, options);
}

// Shapes with a 0 dimension, in a child process: a crash (the stack overflow this found in View::Merge)
// fails this test, with the replay line on stderr, instead of ending the whole binary.
TEST(DifferentialTest, SequencesWithEmptyShapesAgreeWithTheModel) {
  auto run = [] {
    OpSequenceOptions options;
    options.allow_empty = true;
    std::exit(CheckSequences(5000000, kEmptySequences, options) == 0 ? 0 : 1);
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "");
}

TEST(DifferentialTest, InvalidOpsAreRejectedByBoth) {
  OpSequenceOptions options;
  options.invalid_percent = 50;
  int rejected = 0, failures = 0;
  for (int seed = 0; seed < 500 && failures < kMaxReportedFailures; ++seed) {
    ChoiceSource choices(1000000 + seed);
    OpSequence seq = RandomOpSequence(choices, options);
    ReferenceModel model = ReferenceModel::FromShape(seq.start_shape).value();
    for (const MovementOp& op : seq.ops) {
      absl::StatusOr<ReferenceModel> next = ApplyToModel(model, op);
      if (next.ok()) {
        model = *std::move(next);
      } else {
        ++rejected;
      }
    }
    if (std::optional<std::string> f = CheckOpSequence(seq)) {
      ADD_FAILURE() << "seed " << seed << ": " << *f;
      ++failures;
    }
  }
  // The generator must actually produce ops that are rejected, or the comparison above proves nothing.
  EXPECT_GT(rejected, 500);
}

TEST(DifferentialTest, SymbolicCasesAgreeWithTheModel) {
  int failures = 0, shrinks = 0;
  for (int seed = 0; seed < kSymbolicCases && failures < kMaxReportedFailures; ++seed) {
    ChoiceSource choices(2000000 + seed);
    SymbolicCase c = RandomSymbolicCase(choices);
    shrinks += c.shrink_axis >= 0;
    if (std::optional<std::string> f = CheckSymbolicCase(c)) {
      ADD_FAILURE() << "seed " << seed << ": " << *f;
      ++failures;
    }
  }
  EXPECT_GT(shrinks, kSymbolicCases / 5);
  EXPECT_LT(shrinks, kSymbolicCases / 2);
}

// The generated sequences reach what the tracker finds hard: several views after simplify, masks, every op.
TEST(DifferentialTest, GeneratorCoversTheOpsAndMultiViewTrackers) {
  absl::flat_hash_set<MovementKind> kinds;
  int multi_view = 0, masked = 0;
  for (int seed = 0; seed < 300; ++seed) {
    ChoiceSource choices(seed);
    OpSequence seq = RandomOpSequence(choices);
    for (const MovementOp& op : seq.ops) kinds.insert(op.kind);
    absl::StatusOr<ShapeTracker> st =
        ShapeTracker::FromShape(SintVec(seq.start_shape.begin(), seq.start_shape.end()));
    ASSERT_TRUE(st.ok());
    ShapeTracker cur = *st;
    for (const MovementOp& op : seq.ops) {
      if (absl::StatusOr<ShapeTracker> next = ApplyMovementOp(cur, op); next.ok()) cur = *next;
    }
    cur = cur.Simplify();
    multi_view += cur.views().size() > 1;
    masked += cur.views().back().mask().has_value();
  }
  EXPECT_EQ(kinds.size(), 7u);
  EXPECT_GT(multi_view, 10);
  EXPECT_GT(masked, 30);
}

TEST(DifferentialTest, SameSeedSameSequence) {
  ChoiceSource a(77), b(77);
  EXPECT_EQ(RandomOpSequence(a).ToJson(), RandomOpSequence(b).ToJson());
  const uint8_t bytes[] = {9, 200, 3, 17, 250, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  ChoiceSource c(bytes, sizeof(bytes)), d(bytes, sizeof(bytes));
  EXPECT_EQ(RandomOpSequence(c).ToJson(), RandomOpSequence(d).ToJson());
  // Exhausted input reads as zeros: still a valid, finite case.
  EXPECT_EQ(FuzzOneInput(nullptr, 0), std::nullopt);
}

// The comparison can fail: a tracker for another sequence, or a wrong op, is reported with the replay line.
TEST(DifferentialTest, ComparisonReportsDisagreement) {
  ShapeTracker transposed = ShapeTracker::FromShape({2, 3}).value().Permute({1, 0}).value();
  ReferenceModel reshaped = ReferenceModel::FromShape({2, 3}).value().Reshape({3, 2}).value();
  std::optional<std::string> f = CompareWithModel(transposed, reshaped);
  ASSERT_TRUE(f.has_value());
  EXPECT_NE(f->find("position 1 reads 3, the model says 1"), std::string::npos) << *f;
  ReferenceModel padded = ReferenceModel::FromShape({3}).value().Pad({{1, 0}}).value();
  EXPECT_TRUE(CompareWithModel(ShapeTracker::FromShape({4}).value(), padded).has_value());
  EXPECT_EQ(CompareWithModel(ShapeTracker::FromShape({3}).value().Pad({{1, 0}}).value(), padded),
            std::nullopt);

  OpSequence seq{{2, 3}, {MovementOp::Permute({1, 0}), MovementOp::Pad({{0, 1}, {1, 0}})}};
  EXPECT_EQ(CheckOpSequence(seq), std::nullopt);
  EXPECT_EQ(seq.ToJson().dump(), R"({"ops":[["permute",[1,0]],["pad",[[0,1],[1,0]]]],"start_shape":[2,3]})");
}

// Cases the random tests found, kept so they stay fixed. Each runs in a child process where it can crash.

// tinygrad itself recurses without end on this one (RecursionError in View.__add__): simplify() on a
// zero-size view above a masked, permuted view reshaped back and forth. uopc must not overflow its stack.
TEST(DifferentialRegressionTest, ZeroSizeViewOverMaskedViewSimplifies) {
  auto run = [] {
    OpSequence seq{{6, 6, 2},
                   {MovementOp::Pad({{1, 0}, {0, 0}, {0, 0}}), MovementOp::Permute({1, 2, 0}),
                    MovementOp::Reshape({3, 28}), MovementOp::Reshape({1, 3, 2, 14}),
                    MovementOp::Shrink({{0, 1}, {2, 2}, {0, 2}, {4, 6}}), MovementOp::Simplify()}};
    std::optional<std::string> f = CheckOpSequence(seq);
    if (f) std::fprintf(stderr, "%s\n", f->c_str());
    std::exit(f ? 1 : 0);
  };
  EXPECT_EXIT(run(), ::testing::ExitedWithCode(0), "");
}

// A shrink by a bound variable j=6 over a padded axis, then a reshape: Simplify() merges the two views into
// one whose mask is ((0, 0), (0, 0), (0, 0)), so the position that reads element 4 reads padding. tinygrad
// raises ValueError at that reshape (it cannot resolve the symbolic mask); merging must not give a wrong
// view.
TEST(DifferentialRegressionTest, SymbolicShrinkOfPaddedAxis) {
  SymbolicCase c;
  c.start_shape = {5};
  c.before = {MovementOp::Pad({{2, 2}})};
  c.shrink_axis = 0;
  c.shrink_start = 6;
  c.after = {MovementOp::Reshape({1, 1, 1})};
  std::optional<std::string> f = CheckSymbolicCase(c);
  EXPECT_EQ(f, std::nullopt) << *f;
}

}  // namespace
}  // namespace uopc
