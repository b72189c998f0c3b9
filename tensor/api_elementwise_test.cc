// tinygrad's elementwise and activation methods beyond the basic ones (Softplus, Mish, Elu, Celu, Selu,
// Relu6, Hardswish, Hardsigmoid, Hardtanh, Softsign, QuickGelu, the inverse and hyperbolic trigonometric
// functions, Copysign, Lerp, IsClose) build the graphs tinygrad v0.10.3 builds for them and compute its
// values on CPU (tensor/testdata/api_elementwise_graphs.jsonl, from harvest_api_elementwise.py). The inputs
// cover each function's branches and domain edges: both signs, values near 0, the kinks of relu6 and
// hardswish, +-1 for asin and atanh, 1 and below for acosh, infinities and NaN for IsClose.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"

namespace uopc {
namespace {

constexpr float kInf = INFINITY;
constexpr float kNan = NAN;

// The harvest script's inputs (see its comments), realized as its V(...) realizes them.
Tensor X() {
  return Tensor::FromVector<float>(
      {-7.0f, -3.0f, -2.5f, -1.0f, -0.25f, -1e-3f, 0.0f, 1e-3f, 0.25f, 1.0f, 2.5f, 3.0f, 6.0f, 7.5f}, {2, 7});
}
Tensor Unit() {
  return Tensor::FromVector<float>(
      {-1.0f, -0.999f, -0.75f, -0.5f, -1e-3f, 0.0f, 1e-3f, 0.5f, 0.75f, 0.999f, 1.0f}, {11});
}
Tensor AcoshInput() {
  return Tensor::FromVector<float>({0.5f, 1.0f, 1.001f, 1.5f, 2.0f, 10.0f, 100.0f}, {7});
}
Tensor SmallInt() { return Tensor::FromVector<int32_t>({-3, -1, 0, 1, 2, 5}, {2, 3}); }
Tensor CloseA() {
  return Tensor::FromVector<float>(
      {1.0f, 1.0f, kInf, kInf, -kInf, kNan, kNan, 0.0f, 1e-9f, 100.0f, 1.0f, -2.0f}, {12});
}
Tensor CloseB() {
  return Tensor::FromVector<float>(
      {1.000001f, 1.1f, kInf, -kInf, -kInf, kNan, 1.0f, 0.0f, 0.0f, 100.001f, kNan, -2.00002f}, {12});
}

const std::map<std::string, std::function<Tensor()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<Tensor()>>{
      {"softplus", [] { return X().Softplus(); }},
      {"softplus_beta", [] { return X().Softplus(2) + X().Softplus(0.5); }},
      {"softplus_int", [] { return SmallInt().Softplus(); }},
      {"mish", [] { return X().Mish(); }},
      {"elu", [] { return X().Elu(); }},
      {"elu_alpha", [] { return X().Elu(0.5); }},
      {"celu", [] { return X().Celu(); }},
      {"celu_alpha", [] { return X().Celu(2.5); }},
      {"selu", [] { return X().Selu(); }},
      {"relu6", [] { return X().Relu6(); }},
      {"hardswish", [] { return X().Hardswish(); }},
      {"hardsigmoid", [] { return X().Hardsigmoid(); }},
      {"hardsigmoid_params", [] { return X().Hardsigmoid(0.25, 0.25); }},
      {"hardtanh", [] { return X().Hardtanh(); }},
      {"hardtanh_bounds", [] { return X().Hardtanh(-0.5, 2.0); }},
      {"hardtanh_int", [] { return SmallInt().Hardtanh(-2, 3); }},
      {"softsign", [] { return X().Softsign(); }},
      {"quick_gelu", [] { return X().QuickGelu(); }},
      {"asin", [] { return Unit().Asin(); }},
      {"acos", [] { return Unit().Acos(); }},
      {"atan", [] { return X().Atan(); }},
      {"sinh", [] { return X().Sinh(); }},
      {"cosh", [] { return X().Cosh(); }},
      {"asinh", [] { return X().Asinh(); }},
      {"acosh", [] { return AcoshInput().Acosh(); }},
      {"atanh", [] { return Unit().Atanh(); }},
      {"copysign_tensor", [] { return X().Copysign(R({7})); }},
      {"copysign_float", [] { return X().Copysign(-2.0); }},
      {"copysign_int_scalar", [] { return X().Copysign(1); }},
      {"copysign_int",
       [] {
         return SmallInt().Copysign(R({2, 3}, dtypes::kFloat32, 1));
       }},
      {"lerp_scalar",
       [] {
         return X().Lerp(R({2, 7}), 0.25);
       }},
      {"lerp_tensor",
       [] {
         return X().Lerp(R({7}), R({2, 7}, dtypes::kFloat32, 1));
       }},
      {"lerp_uint8",
       [] {
         Tensor start = Tensor::FromVector<uint8_t>({0, 10, 100, 200, 255, 7}, {2, 3});
         Tensor end = Tensor::FromVector<uint8_t>({255, 0, 50, 201, 0, 7}, {2, 3});
         return start.Lerp(end, Tensor::FromVector<float>({0.0f, 0.5f, 0.25f, 1.0f, 0.75f, 0.3f}, {2, 3}));
       }},
      {"isclose", [] { return CloseA().IsClose(CloseB()); }},
      {"isclose_equal_nan", [] { return CloseA().IsClose(CloseB(), 1e-05, 1e-08, true); }},
      {"isclose_tolerances", [] { return CloseA().IsClose(CloseB(), 0.2, 1e-3); }},
  };
  return *programs;
}

TEST(ApiElementwiseTest, GraphsAndValuesAreTinygrads) {
  ExpectHarvestedPrograms("tensor/testdata/api_elementwise_graphs.jsonl", Programs());
}

TEST(ApiElementwiseTest, SoftplusBetaZeroIsAnError) {
  Tensor t = X().Softplus(0);
  EXPECT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("Softplus"), std::string::npos) << t.status();
}

TEST(ApiElementwiseTest, ErrorsPropagate) {
  Tensor bad = X().Reshape({5, 5});
  ASSERT_FALSE(bad.ok());
  for (const Tensor& t : {bad.Mish(), bad.Asin(), bad.Lerp(X(), 0.5), X().Lerp(bad, 0.5), bad.Copysign(X()),
                          X().Copysign(bad), bad.IsClose(X()), X().IsClose(bad), bad.Hardtanh()}) {
    EXPECT_FALSE(t.ok());
    EXPECT_EQ(t.status(), bad.status());
  }
}

}  // namespace
}  // namespace uopc
