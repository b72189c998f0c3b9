#include "tensor/testing/harvested_values.h"

#include <cmath>
#include <string>

#include "uop/status_macros.h"

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
  if (!value.is_string()) return value.get<double>();
  const std::string s = value.get<std::string>();
  return s == "nan" ? NAN : s == "inf" ? INFINITY : -INFINITY;
}

bool CloseToHarvested(double got, double expected) {
  if (std::isnan(expected)) return std::isnan(got);
  if (std::isinf(expected)) return got == expected;
  return std::abs(got - expected) <= 1e-6 + 1e-5 * std::abs(expected);
}

}  // namespace uopc
