// Every case of tinygrad v0.10.3's test_shapetracker.py, from testdata/corpus/shapetracker_tests.jsonl
// (format: ../shared/reference/tinygrad-v0.10.3/corpus/README.md §4). For each: the ops (mid-sequence
// simplify included) are applied to ShapeTracker::FromShape(start_shape), then Simplify(); the index array
// must equal tinygrad's exactly, the tracker needs no more views than tinygrad did, and contiguous and
// real_strides must match. How many cases also have tinygrad's exact views and idx/valid renders is counted
// and printed (uopc may simplify differently and still be right).
#include <cstdint>
#include <fstream>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rewrite/infix.h"
#include "shapetracker/movement_ops.h"
#include "shapetracker/shapetracker.h"

namespace uopc {
namespace {

using nlohmann::json;

std::vector<json> LoadCorpus() {
  std::ifstream in("testdata/corpus/shapetracker_tests.jsonl");
  std::vector<json> cases;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) cases.push_back(json::parse(line));
  }
  return cases;
}

TEST(ShapeTrackerCorpusTest, MatchesTinygrad) {
  std::vector<json> cases = LoadCorpus();
  ASSERT_EQ(cases.size(), 65u) << "testdata/corpus/shapetracker_tests.jsonl missing or truncated";
  int same_views = 0, same_views_raw = 0, same_idx = 0, same_valid = 0, same_infix = 0, fewer_views = 0;
  for (const json& c : cases) {
    const std::string id = c["id"].get<std::string>();
    SCOPED_TRACE(absl::StrCat(id, " ", c.value("source", ""), "\n  ops: ", c["ops"].dump()));
    absl::StatusOr<std::vector<MovementOp>> ops = ParseMovementOps(c["ops"]);
    ASSERT_TRUE(ops.ok()) << ops.status();
    std::vector<int64_t> start = c["start_shape"].get<std::vector<int64_t>>();
    absl::StatusOr<ShapeTracker> raw =
        ApplyMovementOps(ShapeTracker::FromShape(SintVec(start.begin(), start.end())).value(), *ops);
    ASSERT_TRUE(raw.ok()) << raw.status();
    ShapeTracker st = raw->Simplify();

    const std::vector<int64_t> want_index = c["index"].get<std::vector<int64_t>>();
    absl::StatusOr<std::vector<int64_t>> index = IndexArray(st);
    ASSERT_TRUE(index.ok()) << index.status();
    EXPECT_EQ(*index, want_index) << "simplified: " << st.ToString();
    absl::StatusOr<std::vector<int64_t>> raw_index = IndexArray(*raw);
    ASSERT_TRUE(raw_index.ok()) << raw_index.status();
    EXPECT_EQ(*raw_index, want_index) << "before simplify: " << raw->ToString();

    std::vector<int64_t> shape;
    for (const Sint& s : st.shape()) shape.push_back(s.value());
    EXPECT_EQ(shape, c["shape"].get<std::vector<int64_t>>());
    EXPECT_LE(st.views().size(), c["n_views"].get<size_t>()) << st.ToString();
    fewer_views += st.views().size() < c["n_views"].get<size_t>();
    EXPECT_EQ(st.contiguous(), c["contiguous"].get<bool>()) << st.ToString();
    EXPECT_EQ(RealStridesToJson(st.RealStrides()), c["real_strides"]) << st.ToString();

    json views = json::array(), views_raw = json::array();
    for (const View& v : st.views()) views.push_back(ViewToJson(v));
    for (const View& v : raw->views()) views_raw.push_back(ViewToJson(v));
    same_views += views == c["views"];
    same_views_raw += views_raw == c["views_raw"];
    auto [idx, valid] = st.ToIndexedUops();
    same_idx += RenderTinygrad(idx.get()) == c["idx_render"].get<std::string>();
    same_valid += RenderTinygrad(valid.get()) == c["valid_render"].get<std::string>();
    same_infix += RenderInfix(idx.get()) == c["idx_infix"].get<std::string>() &&
                  RenderInfix(valid.get()) == c["valid_infix"].get<std::string>();
  }
  std::cout << "shapetracker corpus: " << cases.size() << " cases; identical to tinygrad: views "
            << same_views << " (before simplify " << same_views_raw << "), idx render " << same_idx
            << ", valid render " << same_valid << ", both infix " << same_infix
            << "; fewer views than tinygrad: " << fewer_views << "\n";
  RecordProperty("same_views", same_views);
  RecordProperty("same_idx_render", same_idx);
  RecordProperty("same_valid_render", same_valid);
}

}  // namespace
}  // namespace uopc
