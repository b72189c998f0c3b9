// Values the API tests compare with tinygrad's (tensor/testdata/api_*_graphs.jsonl, from the harvest_api_*.py
// scripts): tinygrad's numbers as the scripts write them, uopc's realized outputs widened to double, and the
// tolerance between the two, and the whole check of one harvested program and of a file of them.
#ifndef UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_
#define UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_

#include <functional>
#include <iostream>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "uop/testing/sample.h"

namespace uopc {

// The outputs realized together, their values one after another as doubles (float32, int32, int64, uint8,
// bool). Errors: an output that fails to realize, or one of another dtype.
absl::StatusOr<std::vector<double>> RealizedValues(absl::Span<const Tensor> outputs);

// A harvested value: a JSON number or bool, or the strings "nan", "inf" and "-inf" (JSON has no such
// numbers).
double HarvestedNumber(const nlohmann::json& value);

// Whether `got` is tinygrad's `expected` within 1e-6 + 1e-5 |expected|; NaN matches only NaN, an infinity
// only itself.
bool CloseToHarvested(double got, double expected);

// What differs between a program's `outputs` and tinygrad's harvested line (JSON: "graph", "values", and
// where present "shapes" and "dtypes", one per output): the shapes, the dtypes, the graph (unless
// `compare_graph` is false), then the first value that is not CloseToHarvested. Empty when they are the same.
std::string HarvestedProgramDifference(const std::vector<Tensor>& outputs, const nlohmann::json& expected,
                                       bool compare_graph = true);

// Checks every program of the harvested file `path` (a line each, "program" naming it), built by `programs`
// (a map from the name to a function returning a Tensor or a vector of them), with
// HarvestedProgramDifference: a test failure for each that differs; `compare_graph(name)` false compares that
// one's values only. Prints how many are equal and which are not. Under the sanitizer configs only every Nth
// program runs (uop/testing/sample.h); every line must still name a program.
template <typename Programs>
void ExpectHarvestedPrograms(const std::string& path, const Programs& programs,
                             const std::function<bool(const std::string&)>& compare_graph = nullptr) {
  std::vector<std::pair<std::string, std::string>> lines = ReadJsonl(path);
  ASSERT_EQ(lines.size(), programs.size()) << path;
  std::vector<std::string> failing;
  int64_t compared = 0;
  for (size_t index = 0; index < lines.size(); ++index) {
    const auto& [name, line] = lines[index];
    auto it = programs.find(name);
    ASSERT_NE(it, programs.end()) << name;
    if (!InTestSample(static_cast<int64_t>(index))) continue;
    ++compared;
    std::vector<Tensor> outputs;
    if constexpr (std::is_same_v<decltype(it->second()), Tensor>) {
      outputs = {it->second()};
    } else {
      outputs = it->second();
    }
    std::string diff = HarvestedProgramDifference(outputs, nlohmann::json::parse(line),
                                                  compare_graph == nullptr || compare_graph(name));
    if (!diff.empty()) {
      failing.push_back(name);
      ADD_FAILURE() << name << ": " << diff;
    }
  }
  std::cout << compared - static_cast<int64_t>(failing.size()) << "/" << compared << " programs equal ("
            << lines.size() << " in the file); failing: " << absl::StrJoin(failing, ", ") << "\n";
}

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_
