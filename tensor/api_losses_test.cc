// The losses, scatters and resizing of tinygrad's Tensor API (NllLoss, CrossEntropy, Scatter, ScatterReduce,
// Interpolate) build the graphs tinygrad v0.10.3 builds and compute its values on CPU
// (tensor/testdata/api_losses_graphs.jsonl, from harvest_api_losses.py); bad input is an error.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

constexpr DType f = dtypes::kFloat32;
constexpr DType i32 = dtypes::kInt32;

Tensor Labels() { return Tensor::Literal(std::vector<int64_t>{0, 2, 1, 2}); }
Tensor Index(const std::vector<int64_t>& values, const Dims& shape) { return Tensor::Literal(values, shape); }
// The index and src of the scatter_reduce programs over axis 0 of a (3, 5) tensor.
Tensor RowIndex() { return Index({0, 1, 0, 2, 0, 1, 1, 0, 0, 2}, {2, 5}); }
Tensor ColumnIndex() { return Index({0, 0, 3, 1}, {2, 2}); }

const std::map<std::string, std::function<Tensor()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<Tensor()>>{
      {"nll_loss",
       [] {
         return R({4, 3}).LogSoftmax().NllLoss(Labels());
       }},
      {"nll_loss_weight_ignore",
       [] {
         Tensor weight = R({3}, f, 1).Abs();
         return R({4, 3}).LogSoftmax().NllLoss(Labels(), &weight, 1);
       }},
      {"nll_loss_sum_ignore",
       [] {
         return R({4, 3}).NllLoss(Labels(), nullptr, 2, "sum");
       }},
      {"nll_loss_none_spatial",
       [] {
         return R({2, 3, 4}).LogSoftmax(1).NllLoss(Index({0, 1, 2, 1, 2, 2, 0, 1}, {2, 4}), nullptr,
                                                   std::nullopt, "none");
       }},
      {"cross_entropy",
       [] {
         return R({4, 5}).CrossEntropy(Tensor::Literal(std::vector<int64_t>{1, 0, 4, 2}));
       }},
      {"cross_entropy_smoothing_sum",
       [] {
         return R({4, 5}).CrossEntropy(Tensor::Literal(std::vector<int64_t>{1, 0, 4, 2}), "sum", 0.1);
       }},
      {"cross_entropy_probabilities",
       [] {
         return R({3, 4}).CrossEntropy(R({3, 4}, f, 1).Softmax(), "none");
       }},
      {"cross_entropy_spatial",
       [] {
         return R({2, 3, 2}).CrossEntropy(R({2, 3, 2}, f, 1).Softmax(1), "mean", 0.2);
       }},
      {"scatter",
       [] {
         return R({3, 5}).Scatter(0, Index({0, 1, 2, 0}, {1, 4}), R({2, 5}, f, 1));
       }},
      {"scatter_dim1_repeated",
       [] {
         return R({3, 5}).Scatter(1, Index({0, 0, 2, 4, 1, 4}, {2, 3}), R({2, 5}, f, 1));
       }},
      {"scatter_scalar",
       [] {
         return R({2, 4}).Scatter(1, Index({2, 3}, {2, 1}), 1.25);
       }},
      {"scatter_scalar_add",
       [] {
         return R({2, 4}).Scatter(1, Index({2, 2, 3, 0}, {2, 2}), 1.25, "add");
       }},
      {"scatter_scalar_multiply",
       [] {
         return R({2, 4}).Scatter(-1, Index({2, 3}, {2, 1}), 3, "multiply");
       }},
      {"scatter_int",
       [] {
         return R({3, 4}, i32).Scatter(-1, Index({3, 0}, {1, 2}), R({1, 2}, i32, 1));
       }},
      {"scatter_reduce_sum",
       [] {
         return R({3, 5}).ScatterReduce(0, RowIndex(), R({2, 5}, f, 1), "sum");
       }},
      {"scatter_reduce_prod_exclude",
       [] {
         return R({3, 4}).ScatterReduce(1, ColumnIndex(), R({2, 3}, f, 1), "prod", false);
       }},
      {"scatter_reduce_mean",
       [] {
         return R({3, 5}).ScatterReduce(0, RowIndex(), R({2, 5}, f, 1), "mean");
       }},
      {"scatter_reduce_mean_exclude",
       [] {
         return R({3, 5}).ScatterReduce(0, RowIndex(), R({2, 5}, f, 1), "mean", false);
       }},
      {"scatter_reduce_amax",
       [] {
         return R({3, 4}).ScatterReduce(1, ColumnIndex(), R({2, 3}, f, 1), "amax");
       }},
      {"scatter_reduce_amin_exclude",
       [] {
         return R({3, 4}).ScatterReduce(1, ColumnIndex(), R({2, 3}, f, 1), "amin", false);
       }},
      {"scatter_reduce_amax_int",
       [] {
         return R({2, 3}, i32).ScatterReduce(0, Index({1, 1, 0}, {1, 3}), R({1, 3}, i32, 1), "amax", false);
       }},
      {"interpolate_linear",
       [] {
         return R({1, 3, 4}).Interpolate({5, 7});
       }},
      {"interpolate_align_corners",
       [] {
         return R({2, 4, 6}).Interpolate({3, 4}, "linear", true);
       }},
      {"interpolate_nearest",
       [] {
         return R({2, 3, 5}).Interpolate({8}, "nearest");
       }},
      {"interpolate_nearest_exact",
       [] {
         return R({3, 4}).Interpolate({6, 3}, "nearest-exact");
       }},
      {"interpolate_int",
       [] {
         return R({3, 4}, i32).Interpolate({5, 6});
       }},
      {"interpolate_uint8",
       [] {
         return R({2, 3}, dtypes::kUInt8).Interpolate({4, 5});
       }},
  };
  return *programs;
}

TEST(ApiLossesTest, GraphsAndValuesAreTinygrads) {
  ExpectHarvestedPrograms("tensor/testdata/api_losses_graphs.jsonl", Programs());
}

std::string Message(const Tensor& t) {
  EXPECT_FALSE(t.ok());
  return std::string(t.status().message());
}

TEST(ApiLossesErrorTest, LossesRefuseBadInput) {
  Tensor logits = R({4, 3});
  EXPECT_THAT(Message(logits.NllLoss(Labels(), nullptr, std::nullopt, "avg")),
              HasSubstr("reduction must be"));
  EXPECT_THAT(Message(R({3}).NllLoss(Tensor::Literal(std::vector<int64_t>{1}))), HasSubstr("(N, C, ...)"));
  EXPECT_THAT(Message(logits.NllLoss(R({4}))), HasSubstr("labels must be integers"));
  EXPECT_THAT(Message(logits.NllLoss(Tensor::Literal(std::vector<int64_t>{0, 1}))),
              HasSubstr("labels' shape (2,) must be (4,)"));
  Tensor weight = R({4});
  EXPECT_THAT(Message(logits.NllLoss(Labels(), &weight)), HasSubstr("one per class"));
  EXPECT_THAT(Message(logits.CrossEntropy(Labels(), "mean", 1.5)), HasSubstr("label_smoothing"));
  EXPECT_THAT(Message(logits.CrossEntropy(Labels(), "max")), HasSubstr("reduction must be"));
  EXPECT_THAT(Message(R({3}).CrossEntropy(Labels())), HasSubstr("(N, C, ...)"));
  EXPECT_THAT(Message(logits.CrossEntropy(R({4}))), HasSubstr("integer dtype"));
  EXPECT_THAT(Message(logits.CrossEntropy(R({4, 5}))), HasSubstr("broadcast"));
  // An errored operand's error is passed on.
  Tensor bad = logits.Reshape({5});
  EXPECT_EQ(logits.NllLoss(bad).status(), bad.status());
  EXPECT_EQ(bad.CrossEntropy(Labels()).status(), bad.status());
  EXPECT_EQ(logits.NllLoss(Labels(), &bad).status(), bad.status());
}

TEST(ApiLossesErrorTest, ScattersRefuseBadInput) {
  Tensor x = R({3, 5}), src = R({2, 5}, f, 1), index = RowIndex();
  EXPECT_THAT(Message(x.Scatter(2, index, src)), HasSubstr("dim=2 out of range"));
  EXPECT_THAT(Message(x.ScatterReduce(-3, index, src, "sum")), HasSubstr("dim=-3 out of range"));
  EXPECT_THAT(Message(x.Scatter(0, Index({0, 1}, {2}), src)), HasSubstr("as many dimensions"));
  EXPECT_THAT(Message(x.Scatter(0, index, R({2, 4}, f, 1))), HasSubstr("exceeds"));
  EXPECT_THAT(Message(x.Scatter(1, Index({0, 1, 2, 3}, {4, 1}), R({4, 1}, f, 1))), HasSubstr("exceeds"));
  EXPECT_THAT(Message(x.Scatter(0, index, R({2, 5}, i32))),
              HasSubstr("src's dtype dtypes.int must be the tensor's dtypes.float"));
  EXPECT_THAT(Message(x.Scatter(0, R({2, 5}), src)), HasSubstr("index must be integers"));
  EXPECT_THAT(Message(x.Scatter(0, index, 1.0, "max")), HasSubstr("reduce must be"));
  EXPECT_THAT(Message(x.Scatter(0, index, src, "add")), HasSubstr("tensor src takes no reduce"));
  EXPECT_THAT(Message(x.ScatterReduce(0, index, src, "max")), HasSubstr("reduce must be"));
  EXPECT_THAT(Message(Tensor::Zeros({0, 2}).Scatter(0, Tensor::Zeros({0, 2}, i32), Tensor::Zeros({0, 2}))),
              HasSubstr("size 0"));
  Tensor bad = x.Reshape({7});
  EXPECT_EQ(x.Scatter(0, index, bad).status(), bad.status());
  EXPECT_EQ(x.ScatterReduce(0, bad, src, "sum").status(), bad.status());
  EXPECT_EQ(bad.Scatter(0, index, 1.0).status(), bad.status());
}

TEST(ApiLossesErrorTest, InterpolateRefusesBadInput) {
  Tensor x = R({2, 3, 4});
  EXPECT_THAT(Message(x.Interpolate({})), HasSubstr("must name 1 to 3 axes"));
  EXPECT_THAT(Message(x.Interpolate({1, 2, 3, 4})), HasSubstr("must name 1 to 3 axes"));
  EXPECT_THAT(Message(x.Interpolate({5}, "bicubic")), HasSubstr("mode must be"));
  EXPECT_THAT(Message(x.Interpolate({5}, "nearest", true)), HasSubstr("align_corners needs mode"));
  EXPECT_THAT(Message(x.Interpolate({0, 3})), HasSubstr("at least 1"));
  EXPECT_THAT(Message(x.Interpolate({1, 3}, "linear", true)), HasSubstr("at least 2 with align_corners"));
  Tensor bad = x.Reshape({5});
  EXPECT_EQ(bad.Interpolate({3}).status(), bad.status());
}

}  // namespace
}  // namespace uopc
