#include "shapetracker/movement_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "shapetracker/shapetracker.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using nlohmann::json;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ShapeTracker Contiguous(std::vector<int64_t> shape) {
  return ShapeTracker::FromShape(SintVec(shape.begin(), shape.end())).value();
}

std::vector<int64_t> Index(const std::string& start_and_ops_json) {
  json j = json::parse(start_and_ops_json);
  std::vector<MovementOp> ops = ParseMovementOps(j["ops"]).value();
  std::vector<int64_t> start = j["start_shape"].get<std::vector<int64_t>>();
  ShapeTracker st = ApplyMovementOps(Contiguous(start), ops).value();
  return IndexArray(st).value();
}

TEST(MovementOpsTest, ParsesAndPrintsTheCorpusForm) {
  const std::string text = R"([["reshape",[2,3]],["permute",[1,0]],["expand",[3,2]],["pad",[[0,1],[2,0]]],)"
                           R"(["shrink",[[0,1],[1,2]]],["flip",[true,false]],["simplify",null]])";
  std::vector<MovementOp> ops = ParseMovementOps(json::parse(text)).value();
  ASSERT_EQ(ops.size(), 7u);
  EXPECT_EQ(ops[0], MovementOp::Reshape({2, 3}));
  EXPECT_EQ(ops[3], MovementOp::Pad({{0, 1}, {2, 0}}));
  EXPECT_EQ(ops[5], MovementOp::Flip({true, false}));
  EXPECT_EQ(ops[6].kind, MovementKind::kSimplify);
  EXPECT_EQ(MovementOpsToJson(ops).dump(), text);
  EXPECT_EQ(ParseMovementOp(json::parse(R"(["simplify"])")).value(), MovementOp::Simplify());
}

TEST(MovementOpsTest, RejectsMalformedOps) {
  auto error = [](const std::string& text) {
    return std::string(ParseMovementOp(json::parse(text)).status().message());
  };
  EXPECT_THAT(error(R"(["rotate", [1]])"), HasSubstr("unknown movement op 'rotate'"));
  EXPECT_THAT(error(R"("pad")"), HasSubstr("expected an op"));
  EXPECT_THAT(error(R"([])"), HasSubstr("expected an op"));
  EXPECT_THAT(error(R"([3, [1]])"), HasSubstr("expected an op"));
  EXPECT_THAT(error(R"(["pad", [1, 2]])"), HasSubstr("pad: expected a list of [a, b] pairs"));
  EXPECT_THAT(error(R"(["pad", [[1, 2, 3]]])"), HasSubstr("pairs"));
  EXPECT_THAT(error(R"(["reshape", [1.5]])"), HasSubstr("reshape: expected an integer"));
  EXPECT_THAT(error(R"(["reshape", 4])"), HasSubstr("reshape: expected a list of integers"));
  EXPECT_THAT(error(R"(["reshape", [4294967296]])"), HasSubstr("does not fit in int32"));
  EXPECT_THAT(error(R"(["reshape", [18446744073709551615]])"), HasSubstr("does not fit in int32"));
  EXPECT_EQ(ParseMovementOp(json::parse(R"(["flip", [1, 0]])")).value(), MovementOp::Flip({true, false}));
  EXPECT_THAT(error(R"(["flip", [2, 0]])"), HasSubstr("flip: expected a list of booleans"));
  EXPECT_THAT(error(R"(["flip", ["yes"]])"), HasSubstr("flip: expected a list of booleans"));
  EXPECT_THAT(error(R"(["simplify", [1]])"), HasSubstr("simplify: expected null"));
  std::vector<int64_t> many(kMaxRank + 1, 1);
  EXPECT_THAT(error(json::array({"reshape", many}).dump()), HasSubstr("more than 64 axes"));
  EXPECT_THAT(ParseMovementOps(json::parse(R"([["flip", [true]], ["pad", 1]])")).status().message(),
              HasSubstr("op 1: pad"));
  EXPECT_FALSE(ParseMovementOps(json::parse(R"({"ops": []})")).ok());
}

TEST(MovementOpsTest, AppliesOpsToTheTracker) {
  ShapeTracker st = ApplyMovementOp(Contiguous({2, 3}), MovementOp::Permute({1, 0})).value();
  EXPECT_EQ(st.shape(), (SintVec{3, 2}));
  EXPECT_EQ(ApplyMovementOp(st, MovementOp::Simplify()).value(), st.Simplify());
  absl::Status bad = ApplyMovementOp(st, MovementOp::Expand({4, 2})).status();
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  absl::Status named =
      ApplyMovementOps(st, {MovementOp::Flip({true, true}), MovementOp::Reshape({7})}).status();
  EXPECT_THAT(named.message(), HasSubstr("op 1 [\"reshape\",[7]]"));
  // Results too large to index with int32 are refused before the tracker builds them.
  absl::Status huge = ApplyMovementOp(Contiguous({1, 1}), MovementOp::Expand({1 << 20, 1 << 20})).status();
  EXPECT_EQ(huge.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(huge.message(), HasSubstr("more than 2147483647 positions"));
  EXPECT_FALSE(ApplyMovementOp(Contiguous({1 << 20}), MovementOp::Pad({{1 << 30, 1 << 30}})).ok());
  EXPECT_FALSE(ApplyMovementOp(Contiguous({2}), MovementOp::Reshape({int64_t{1} << 40})).ok());
}

TEST(MovementOpsTest, IndexArrayEvaluatesIndexAndValid) {
  EXPECT_THAT(Index(R"({"start_shape": [2, 3], "ops": []})"), ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(Index(R"({"start_shape": [2, 3], "ops": [["permute", [1, 0]]]})"),
              ElementsAre(0, 3, 1, 4, 2, 5));
  EXPECT_THAT(Index(R"({"start_shape": [3], "ops": [["pad", [[1, 1]]], ["flip", [true]]]})"),
              ElementsAre(-1, 2, 1, 0, -1));
  EXPECT_THAT(Index(R"({"start_shape": [2, 1], "ops": [["expand", [2, 2]], ["reshape", [4]]]})"),
              ElementsAre(0, 0, 1, 1));
  // Two views: a padded transpose flattened.
  EXPECT_THAT(Index(R"({"start_shape": [2, 2], "ops": [["permute", [1, 0]], ["pad", [[0, 0], [0, 1]]],
                        ["reshape", [6]], ["shrink", [[1, 5]]]]})"),
              ElementsAre(2, -1, 1, 3));
  EXPECT_THAT(Index(R"({"start_shape": [3, 0], "ops": []})"), IsEmpty());
  EXPECT_THAT(Index(R"({"start_shape": [], "ops": []})"), ElementsAre(0));
}

TEST(MovementOpsTest, IndexArrayBindsVariables) {
  UOpPtr i = UOp::Variable("i", 1, 8);
  ShapeTracker bound = Contiguous({3, 4}).Reshape({Sint::FromUOp(i.bind(3)), 4}).value();
  EXPECT_THAT(IndexArray(bound).value(), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
  ShapeTracker unbound = ShapeTracker::FromShape({Sint::FromUOp(i), 2}).value().Permute({1, 0}).value();
  EXPECT_THAT(IndexArray(unbound, {{"i", 2}}).value(), ElementsAre(0, 2, 1, 3));
  absl::Status missing = IndexArray(unbound).status();
  EXPECT_EQ(missing.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(missing.message(), HasSubstr("no value for variable 'i'"));
  EXPECT_EQ(EvaluateInt(i * 3 + 1, {{"i", 4}}).value(), 13);
}

TEST(MovementOpsTest, IndexArrayRefusesHugeShapes) {
  absl::Status s = IndexArray(Contiguous({1 << 15, 1 << 15}), {}, /*max_positions=*/1 << 20).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
}

}  // namespace
}  // namespace uopc
