// The four benchmark graphs built with the Tensor API are tinygrad's
// (schedule/testdata/benchmark_graphs.jsonl).
#include "tensor/benchmark_graphs.h"

#include <map>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensor/testing/graph_compare.h"

namespace uopc {
namespace {

TEST(BenchmarkGraphsTest, GraphsAreTinygrads) {
  std::map<std::string, std::string> expected;
  for (const auto& [name, line] : ReadJsonl("schedule/testdata/benchmark_graphs.jsonl")) {
    expected[name] = nlohmann::json::parse(line)["graph"].get<std::string>();
  }
  ASSERT_EQ(expected.size(), 4u);
  for (const auto& [name, build] : BenchmarkGraphs()) {
    Tensor t = build();
    ASSERT_TRUE(t.ok()) << name << ": " << t.status();
    ASSERT_TRUE(expected.count(name)) << name;
    EXPECT_EQ(GraphDifference(CanonicalSink({t}), expected[name]), "") << name;
  }
}

}  // namespace
}  // namespace uopc
