#include "tensor/testing/harvested_values.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "tensor/testing/graph_compare.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"
#include "uop/util.h"

namespace uopc {
namespace {

template <typename E>
absl::Status Append(const Tensor& t, std::vector<double>& out) {
  UOPC_ASSIGN_OR_RETURN(std::vector<E> v, t.ToVector<E>());
  out.insert(out.end(), v.begin(), v.end());
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<double>> RealizedValues(absl::Span<const Tensor> outputs) {
  UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(std::vector<Tensor>(outputs.begin(), outputs.end())));
  std::vector<double> out;
  for (const Tensor& t : outputs) {
    const DType d = t.dtype();
    if (d == dtypes::kFloat32) {
      UOPC_RETURN_IF_ERROR(Append<float>(t, out));
    } else if (d == dtypes::kInt32) {
      UOPC_RETURN_IF_ERROR(Append<int32_t>(t, out));
    } else if (d == dtypes::kInt64) {
      UOPC_RETURN_IF_ERROR(Append<int64_t>(t, out));
    } else if (d == dtypes::kUInt8) {
      UOPC_RETURN_IF_ERROR(Append<uint8_t>(t, out));
    } else if (d == dtypes::kBool) {
      UOPC_RETURN_IF_ERROR(Append<bool>(t, out));
    } else {
      return absl::UnimplementedError("no reader for " + d.ToString());
    }
  }
  return out;
}

double HarvestedNumber(const nlohmann::json& value) {
  if (value.is_boolean()) return value.get<bool>() ? 1.0 : 0.0;  // a bool output's values
  if (!value.is_string()) return value.get<double>();
  const std::string s = value.get<std::string>();
  return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
}

bool CloseToHarvested(double got, double expected) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  return std::abs(got - expected) <= 1e-6 + 1e-5 * std::abs(expected);
}

std::string HarvestedProgramDifference(const std::vector<Tensor>& outputs, const nlohmann::json& expected,
                                       bool compare_graph) {
  for (const Tensor& t : outputs) {
    if (!t.ok()) return absl::StrCat("error: ", t.status().ToString());
  }
  if (expected.contains("shapes")) {
    if (expected["shapes"].size() != outputs.size()) {
      return absl::StrCat(outputs.size(), " outputs, tinygrad ", expected["shapes"].size());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (outputs[i].Shape() != expected["shapes"][i].get<Dims>()) {
        return absl::StrCat("output ", i, " has shape ", TupleString(outputs[i].Shape()), ", tinygrad ",
                            expected["shapes"][i].dump());
      }
      if (DTypeToIr(outputs[i].dtype()) != expected["dtypes"][i].get<std::string>()) {
        return absl::StrCat("output ", i, " has dtype ", DTypeToIr(outputs[i].dtype()), ", tinygrad ",
                            expected["dtypes"][i].get<std::string>());
      }
    }
  }
  if (compare_graph) {
    std::string diff = GraphDifference(CanonicalSink(outputs), expected["graph"].get<std::string>());
    if (!diff.empty()) return "graph: " + diff.substr(0, 600);
  }
  absl::StatusOr<std::vector<double>> got = RealizedValues(outputs);
  if (!got.ok()) return got.status().ToString();
  const nlohmann::json& want = expected["values"];
  if (got->size() != want.size()) return absl::StrCat(got->size(), " values, tinygrad ", want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    if (!CloseToHarvested((*got)[i], HarvestedNumber(want[i]))) {
      return absl::StrCat("value ", i, ": ", (*got)[i], ", tinygrad ", want[i].dump());
    }
  }
  return "";
}

}  // namespace uopc
