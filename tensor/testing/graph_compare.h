// Test helpers for the Tensor API: realized corpus inputs (`R`), and comparing the graph a Tensor program
// builds with the one tinygrad built (textual IR, UNIQUE numbers renumbered in toposort order).
#ifndef UOPC_TENSOR_TESTING_GRAPH_COMPARE_H_
#define UOPC_TENSOR_TESTING_GRAPH_COMPARE_H_

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "tensor/tensor.h"
#include "uop/uop.h"

namespace uopc {

// A realized input whose element j is the corpus formula value(dtype, seed + 1, j) (the harvest script's R).
Tensor R(const Dims& shape, DType dtype = dtypes::kFloat32, int seed = 0, const std::string& device = "");

// SINK of the tensors' UOps with UNIQUE args renumbered 0, 1, ... in toposort order.
UOpPtr CanonicalSink(const std::vector<Tensor>& outputs);

// Empty when the texts are equal; else the number of the first line where they differ and that line of each.
std::string FirstDifferentLine(absl::string_view got, absl::string_view expected);

// Empty when `got` is the graph `expected_text` describes (pointer equality after parsing); else the first
// line where the graphs' texts differ. For graphs too large to print whole.
std::string GraphFirstDifference(const UOpPtr& got, absl::string_view expected_text);

// GraphFirstDifference followed by both graphs' whole text.
std::string GraphDifference(const UOpPtr& got, absl::string_view expected_text);

// Reads a JSONL file: each line's `program` field -> the line's JSON text.
std::vector<std::pair<std::string, std::string>> ReadJsonl(const std::string& path);

// Reads a JSONL file: each line's `program` field -> the line, parsed.
std::map<std::string, nlohmann::json> ReadJsonlByProgram(const std::string& path);

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_GRAPH_COMPARE_H_
