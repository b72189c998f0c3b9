// Every Tensor operation on a tensor of symbolic shape gives the values it gives on the same tensor at the
// bound size, or an error: never a wrong value, a crash or a hang. The oracle needs no harvest: `x` is the
// first `i` rows of a (10, 4) input with `i` bound, `x3` the same rows as a tensor of integer shape, and the
// two results, padded along their symbolic axes to those axes' largest size, must hold the same values.
// tinygrad refuses several of these too (Triu, and Cumsum or Argmax along the symbolic axis); docs/support.md
// lists what takes symbolic shapes.
#include <cmath>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "shapetracker/sint.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"

namespace uopc {
namespace {

using Op = std::function<Tensor(const Tensor&)>;

// Per row of x, an int32 index in [0, classes) computed from its values (shape (rows, 1)).
Tensor Labels(const Tensor& x, int64_t classes) {
  return ((x.Sum(1, true) * 10).Abs().Cast(dtypes::kInt32) % classes).Cast(dtypes::kInt32);
}
// x as an image: (1, 1, rows, 4).
Tensor Image(const Tensor& x) { return x.Unsqueeze(0).Unsqueeze(0); }

const std::vector<std::pair<std::string, Op>>& Ops() {
  static const auto* ops = new std::vector<std::pair<std::string, Op>>{
      // elementwise
      {"Relu", [](const Tensor& x) { return x.Relu(); }},
      {"Gelu", [](const Tensor& x) { return x.Gelu(); }},
      {"Softplus", [](const Tensor& x) { return x.Softplus(); }},
      {"Clip", [](const Tensor& x) { return x.Clip(-0.5, 0.5); }},
      {"Where", [](const Tensor& x) { return (x > 0).Where(x, x * 2); }},
      {"IsClose", [](const Tensor& x) { return x.IsClose(x * 1.0001); }},
      // reductions along the symbolic axis (0) and the integer one (1)
      {"Sum0", [](const Tensor& x) { return x.Sum(0); }},
      {"Sum1", [](const Tensor& x) { return x.Sum(1); }},
      {"SumAll", [](const Tensor& x) { return x.Sum(); }},
      {"Prod0", [](const Tensor& x) { return x.Prod(0); }},
      {"Max0", [](const Tensor& x) { return x.Max(0); }},
      {"Min1", [](const Tensor& x) { return x.Min(1); }},
      {"Mean0", [](const Tensor& x) { return x.Mean(0); }},
      {"Mean1", [](const Tensor& x) { return x.Mean(1); }},
      {"Var0", [](const Tensor& x) { return x.Var(0); }},
      {"Std1", [](const Tensor& x) { return x.Std(1); }},
      {"Any0", [](const Tensor& x) { return (x > 1).Any(0); }},
      {"Argmax0", [](const Tensor& x) { return x.Argmax(0); }},
      {"Argmax1", [](const Tensor& x) { return x.Argmax(1); }},
      {"Argmin1", [](const Tensor& x) { return x.Argmin(1); }},
      {"Logsumexp0", [](const Tensor& x) { return x.Logsumexp(0); }},
      {"Logsumexp1", [](const Tensor& x) { return x.Logsumexp(1); }},
      {"Softmax0", [](const Tensor& x) { return x.Softmax(0); }},
      {"Softmax1", [](const Tensor& x) { return x.Softmax(1); }},
      {"LogSoftmax1", [](const Tensor& x) { return x.LogSoftmax(1); }},
      {"Cumsum0", [](const Tensor& x) { return x.Cumsum(0); }},
      {"Cumsum1", [](const Tensor& x) { return x.Cumsum(1); }},
      {"Cummax1", [](const Tensor& x) { return x.Cummax(1); }},
      {"Cummax0", [](const Tensor& x) { return x.Cummax(0); }},
      {"Cumprod0", [](const Tensor& x) { return x.Cumprod(0); }},
      {"Logcumsumexp0", [](const Tensor& x) { return x.Logcumsumexp(0); }},
      {"Argmin0", [](const Tensor& x) { return x.Argmin(0); }},
      {"ArgmaxAll", [](const Tensor& x) { return x.Argmax(); }},
      {"Cumprod1", [](const Tensor& x) { return x.Cumprod(1); }},
      {"Logcumsumexp1", [](const Tensor& x) { return x.Logcumsumexp(1); }},
      {"Layernorm1", [](const Tensor& x) { return x.Layernorm(-1); }},
      {"Layernorm0", [](const Tensor& x) { return x.Layernorm(0); }},
      // movement
      {"Flip0", [](const Tensor& x) { return x.Flip({0}); }},
      {"Flip1", [](const Tensor& x) { return x.Flip({1}); }},
      {"Transpose", [](const Tensor& x) { return x.Transpose(); }},
      {"Flatten", [](const Tensor& x) { return x.Flatten(); }},
      {"Unsqueeze", [](const Tensor& x) { return x.Unsqueeze(1); }},
      {"Repeat",
       [](const Tensor& x) {
         return x.Repeat({2, 3});
       }},
      {"RepeatInterleave1", [](const Tensor& x) { return x.RepeatInterleave(2, 1); }},
      {"RepeatInterleave0", [](const Tensor& x) { return x.RepeatInterleave(2, 0); }},
      {"Roll1", [](const Tensor& x) { return x.Roll(1, 1); }},
      {"Roll0", [](const Tensor& x) { return x.Roll(1, 0); }},
      {"Pad",
       [](const Tensor& x) {
         return x.Pad(std::vector<std::pair<int64_t, int64_t>>{{1, 2}, {0, 1}}, 3.0);
       }},
      {"PadReflect",
       [](const Tensor& x) {
         return x.Pad({{0, 0}, {1, 1}}, "reflect");
       }},
      {"PadCircular",
       [](const Tensor& x) {
         return x.Pad({{1, 1}, {0, 0}}, "circular");
       }},
      {"Cat0", [](const Tensor& x) { return x.Cat({x * 2}, 0); }},
      {"Cat1", [](const Tensor& x) { return x.Cat({x * 2}, 1); }},
      {"Unflatten1",
       [](const Tensor& x) {
         return x.Unflatten(1, {2, 2});
       }},
      {"Squeeze", [](const Tensor& x) { return x.Unsqueeze(0).Squeeze(0); }},
      // matrices and layers
      {"Triu", [](const Tensor& x) { return x.Triu(); }},
      {"Tril", [](const Tensor& x) { return x.Tril(1); }},
      {"Matmul",
       [](const Tensor& x) {
         return x.Matmul(R({4, 5}, dtypes::kFloat32, 1));
       }},
      {"MatmulLeft",
       [](const Tensor& x) {
         return R({5, 10}, dtypes::kFloat32, 1).Shrink({{0, 5}, {0, x.SymShape()[0]}}).Matmul(x);
       }},
      {"MaskedFill", [](const Tensor& x) { return x.MaskedFill(x < 0, -1.0); }},
      {"Interpolate",
       [](const Tensor& x) {
         return x.Unsqueeze(0).Interpolate({1, 4, 8}).Squeeze(0);
       }},
      {"Linear", [](const Tensor& x) { return x.Linear(R({4, 5}, dtypes::kFloat32, 2)); }},
      {"Einsum", [](const Tensor& x) { return Tensor::Einsum("ij,jk->ik", {x, R({4, 3}, dtypes::kFloat32, 2)}); }},
      {"EinsumTranspose", [](const Tensor& x) { return Tensor::Einsum("ij->ji", {x}); }},
      {"Rearrange", [](const Tensor& x) { return x.Rearrange("a b -> b a"); }},
      {"Stack", [](const Tensor& x) { return Tensor::Stack({x, x * 2}, 1); }},
      {"Split1", [](const Tensor& x) { return x.Split(int64_t{2}, 1)[1]; }},
      {"Chunk0", [](const Tensor& x) { return x.Chunk(2, 0)[0]; }},
      {"Sort1", [](const Tensor& x) { return x.Sort(1).first; }},
      {"Sort0", [](const Tensor& x) { return x.Sort(0).first; }},
      {"Topk1", [](const Tensor& x) { return x.Topk(2, 1).second; }},
      {"Topk0", [](const Tensor& x) { return x.Topk(1, 0).first; }},
      {"Gather1", [](const Tensor& x) { return x.Gather(1, Labels(x, 4)); }},
      {"Scatter1", [](const Tensor& x) { return x.Scatter(1, Labels(x, 4), 9.0); }},
      {"OneHot", [](const Tensor& x) { return Labels(x, 3).OneHot(3); }},
      {"CrossEntropy", [](const Tensor& x) { return x.CrossEntropy(Labels(x, 4).Squeeze(1)); }},
      {"SparseCrossentropy", [](const Tensor& x) { return x.SparseCategoricalCrossentropy(Labels(x, 4).Squeeze(1)); }},
      {"NllLoss", [](const Tensor& x) { return x.LogSoftmax(1).NllLoss(Labels(x, 4).Squeeze(1)); }},
      {"BinaryCrossentropy", [](const Tensor& x) { return x.BinaryCrossentropyLogits(x.Sigmoid()); }},
      {"Batchnorm",
       [](const Tensor& x) { return x.Batchnorm(nullptr, nullptr, R({4}, dtypes::kFloat32, 2), R({4}) + 2); }},
      {"MaxPool", [](const Tensor& x) { return Image(x).MaxPool2d({1, 2}); }},
      {"AvgPool", [](const Tensor& x) { return Image(x).AvgPool2d({2, 1}); }},
      {"Conv2d",
       [](const Tensor& x) { return Image(x).Conv2d(R({2, 1, 3, 3}, dtypes::kFloat32, 2), {.padding = {1}}); }},
      {"Attention",
       [](const Tensor& x) { return x.Unsqueeze(0).ScaledDotProductAttention(x.Unsqueeze(0), x.Unsqueeze(0)); }},
      {"AttentionCausal", [](const Tensor& x) {
         return x.Unsqueeze(0).ScaledDotProductAttention(x.Unsqueeze(0), x.Unsqueeze(0), nullptr, true);
       }},
      {"MaskedSelect", [](const Tensor& x) { return x.MaskedSelect(x > 0); }},
  };
  return *ops;
}

// `t` padded at the end of each axis where `sym` (the symbolic result's shape) is symbolic, to that size's
// largest value: the symbolic result itself, or the integer one (whose size there is the bound value's).
Tensor PadSymbolicAxes(const Tensor& t, const SintVec& sym) {
  std::vector<SintPair> padding;
  bool any = false;
  const SintVec shape = t.SymShape();
  for (size_t k = 0; k < sym.size(); ++k) {
    padding.push_back({Sint(0), sym[k].is_int() ? Sint(0) : Sint(sym[k].vmax()) - shape[k]});
    any = any || !sym[k].is_int();
  }
  return any ? t.Pad(padding) : t;
}

class SymbolicOpTest : public testing::TestWithParam<int64_t> {};

TEST_P(SymbolicOpTest, EveryOpGivesTheBoundSizesValuesOrAnError) {
  const int64_t value = GetParam();
  const Tensor a = R({10, 4});
  absl::StatusOr<Sint> i = Bind(Variable("i", 1, 10), value);
  ASSERT_TRUE(i.ok()) << i.status();
  const Tensor x = a.Shrink({{Sint(0), *i}, {Sint(0), Sint(4)}});
  const Tensor x_int = a.Shrink({{0, value}, {0, 4}});
  std::string refused;  // the ops that are errors on symbolic shapes, recorded in the test's XML
  for (const auto& [name, op] : Ops()) {
    SCOPED_TRACE(name);
    const Tensor want = op(x_int);
    const Tensor got = op(x);
    if (!want.ok()) {
      // Not defined at this size (a pool window larger than one row): not on the symbolic tensor either.
      EXPECT_FALSE(got.ok());
      continue;
    }
    if (!got.ok()) {
      // A refusal says why.
      EXPECT_TRUE(absl::StrContains(got.status().message(), "symbolic size")) << got.status();
      absl::StrAppend(&refused, refused.empty() ? "" : " ", name);
      continue;
    }
    // Padded to integer sizes: the symbolic result's pad holds zeros where the integer one's does.
    const SintVec got_shape = got.SymShape();
    ASSERT_EQ(got_shape.size(), want.SymShape().size());
    const Tensor got_padded = PadSymbolicAxes(got, got_shape);
    const Tensor want_padded = PadSymbolicAxes(want, got_shape);
    absl::StatusOr<std::vector<double>> got_values = RealizedValues({got_padded});
    if (!got_values.ok()) {
      // Refused when realized (for a reason that is not a crash): counted as refused.
      EXPECT_FALSE(absl::IsInternal(got_values.status())) << got_values.status();
      absl::StrAppend(&refused, refused.empty() ? "" : " ", name, "(realize)");
      continue;
    }
    absl::StatusOr<std::vector<double>> want_values = RealizedValues({want_padded});
    ASSERT_TRUE(want_values.ok()) << want_values.status();
    ASSERT_EQ(got_values->size(), want_values->size());
    for (size_t k = 0; k < got_values->size(); ++k) {
      const double g = (*got_values)[k], w = (*want_values)[k];
      ASSERT_TRUE((std::isnan(g) && std::isnan(w)) || CloseToHarvested(g, w))
          << "value " << k << ": " << g << ", want " << w;
    }
  }
  RecordProperty("refused", refused);
}

INSTANTIATE_TEST_SUITE_P(BoundValues, SymbolicOpTest, testing::Values(3, 1));

}  // namespace
}  // namespace uopc
