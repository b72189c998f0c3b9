// Values the API tests compare with tinygrad's (tensor/testdata/api_*_graphs.jsonl, from the harvest_api_*.py
// scripts): tinygrad's numbers as the scripts write them, uopc's realized outputs widened to double, and the
// tolerance between the two, and the whole check of one harvested program.
#ifndef UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_
#define UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "tensor/tensor.h"

namespace uopc {

// The outputs realized together, their values one after another as doubles (float32, int32, int64, uint8,
// bool). Errors: an output that fails to realize, or one of another dtype.
absl::StatusOr<std::vector<double>> RealizedValues(absl::Span<const Tensor> outputs);

// A harvested value: a JSON number, or the strings "nan", "inf" and "-inf" (JSON has no such numbers).
double HarvestedNumber(const nlohmann::json& value);

// Whether `got` is tinygrad's `expected` within 1e-6 + 1e-5 |expected|; NaN matches only NaN, an infinity
// only itself.
bool CloseToHarvested(double got, double expected);

// What differs between a program's `outputs` and tinygrad's harvested line (JSON: "graph", "values", and
// where present "shapes" and "dtypes", one per output): the shapes, the dtypes, the graph (unless
// `compare_graph` is false), then the first value that is not CloseToHarvested. Empty when they are the same.
std::string HarvestedProgramDifference(const std::vector<Tensor>& outputs, const nlohmann::json& expected,
                                       bool compare_graph = true);

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_
