// Values the API tests compare with tinygrad's (tensor/testdata/api_*_graphs.jsonl, from the harvest_api_*.py
// scripts): tinygrad's numbers as the scripts write them, uopc's realized outputs widened to double, and the
// tolerance between the two.
#ifndef UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_
#define UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_

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

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_HARVESTED_VALUES_H_
