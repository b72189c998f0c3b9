// Tensor methods for splitting, rolling, grids, cumulative products and paired statistics (Split, Chunk,
// Unflatten, RepeatInterleave, Roll, Linspace, Meshgrid, Cumprod, Logcumsumexp, VarMean, StdMean, MaskedFill)
// build the graphs tinygrad v0.10.3 builds and compute its values on CPU
// (tensor/testdata/api_movement_graphs.jsonl, from harvest_api_movement.py); bad input is an error.
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

std::vector<Tensor> Pair(const std::pair<Tensor, Tensor>& p) { return {p.first, p.second}; }

const std::map<std::string, std::function<std::vector<Tensor>()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<std::vector<Tensor>()>>{
      {"split_int",
       [] {
         return R({5, 4}).Split(2);
       }},
      {"split_sizes_dim1",
       [] {
         return R({3, 7}).Split(Dims{2, 0, 5}, 1);
       }},
      {"split_negative_dim",
       [] {
         return R({2, 6}).Split(3, -1);
       }},
      {"chunk", [] { return R({11}).Chunk(4); }},
      {"chunk_dim1",
       [] {
         return R({2, 6, 3}).Chunk(3, 1);
       }},
      {"chunk_more_than_size",
       [] {
         return R({3, 2}).Chunk(5);
       }},
      {"unflatten",
       [] {
         return std::vector<Tensor>{R({3, 12}).Unflatten(1, {2, -1, 3})};
       }},
      {"unflatten_negative_dim",
       [] {
         return std::vector<Tensor>{R({5, 12, 3}).Unflatten(-2, {2, 2, 3, 1, 1})};
       }},
      {"repeat_interleave_flat",
       [] {
         return std::vector<Tensor>{R({2, 3}).RepeatInterleave(2)};
       }},
      {"repeat_interleave_dim",
       [] {
         return std::vector<Tensor>{R({2, 3}).RepeatInterleave(3, -1)};
       }},
      {"roll", [] { return std::vector<Tensor>{R({6}).Roll(2, 0)}; }},
      {"roll_two_dims",
       [] {
         return std::vector<Tensor>{R({3, 4}).Roll({1, -5}, {0, 1})};
       }},
      {"roll_full_turn",
       [] {
         return std::vector<Tensor>{R({3, 4}).Roll(4, -1)};
       }},
      {"linspace", [] { return std::vector<Tensor>{Tensor::Linspace(-1, 1, 5)}; }},
      {"linspace_float_int32",
       [] { return std::vector<Tensor>{Tensor::Linspace(2.5, -3.0, 7, dtypes::kInt32)}; }},
      {"linspace_one", [] { return std::vector<Tensor>{Tensor::Linspace(3, 10, 1)}; }},
      {"meshgrid_ij",
       [] {
         return Tensor::Meshgrid({R({3}), R({4}, f, 1)});
       }},
      {"meshgrid_xy_three",
       [] {
         return Tensor::Meshgrid({R({3}), R({4}, f, 1), R({2}, f, 2)}, "xy");
       }},
      {"meshgrid_scalar",
       [] {
         return Tensor::Meshgrid({R({3}), Tensor::Const(2.0)});
       }},
      {"cumprod",
       [] {
         return std::vector<Tensor>{R({4, 5}).Cumprod(1)};
       }},
      {"cumprod_split", [] { return std::vector<Tensor>{R({520}).Cumprod(0)}; }},
      {"logcumsumexp",
       [] {
         return std::vector<Tensor>{R({3, 5}).Logcumsumexp(1)};
       }},
      {"logcumsumexp_axis0",
       [] {
         return std::vector<Tensor>{R({4, 3}).Logcumsumexp()};
       }},
      {"var_mean",
       [] {
         return Pair(R({4, 6}).VarMean(1));
       }},
      {"var_mean_all", [] { return Pair(R({8}).VarMean()); }},
      {"std_mean_keepdim",
       [] {
         return Pair(R({3, 4, 5}).StdMean({0, 2}, true, 0));
       }},
      {"masked_fill",
       [] {
         return std::vector<Tensor>{R({3, 4}).MaskedFill(R({3, 4}, f, 1) > 0, 0.5)};
       }},
      {"masked_fill_tensor",
       [] {
         return std::vector<Tensor>{R({3, 4}).MaskedFill(R({4}, dtypes::kBool, 2), R({3, 1}, f, 3))};
       }},
  };
  return *programs;
}

TEST(ApiMovementTest, GraphsAndValuesAreTinygrads) {
  ExpectHarvestedPrograms("tensor/testdata/api_movement_graphs.jsonl", Programs());
}

// The first output's error (a failed call returns one errored Tensor).
std::string FirstError(const std::vector<Tensor>& outputs) {
  if (outputs.empty()) return "no outputs";
  return std::string(outputs[0].status().message());
}

TEST(ApiMovementErrorTest, SplitAndChunkRefuseBadInput) {
  Tensor x = R({5, 4});
  EXPECT_THAT(FirstError(x.Split(Dims{2, 2})), HasSubstr("sum to 4, not to 5"));
  EXPECT_THAT(FirstError(x.Split(Dims{6, -1})), HasSubstr("negative size"));
  EXPECT_THAT(FirstError(x.Split(0)), HasSubstr("must be positive"));
  EXPECT_THAT(FirstError(x.Split(2, 2)), HasSubstr("dim=2 out of range"));
  EXPECT_THAT(FirstError(x.Chunk(0)), HasSubstr("chunks must be positive"));
  EXPECT_THAT(FirstError(x.Chunk(2, -3)), HasSubstr("dim=-3 out of range"));
  EXPECT_THAT(FirstError(Tensor::Const(1.0).Split(1)), HasSubstr("0-d tensor has no dim 0"));
  EXPECT_THAT(FirstError(Tensor::Const(1.0).Chunk(1)), HasSubstr("0-d tensor has no dim 0"));
  // An errored tensor's error is passed on.
  Tensor bad = x.Reshape({3, 3});
  EXPECT_EQ(x.Split(2)[0].ok(), true);
  EXPECT_EQ(bad.Split(2)[0].status(), bad.status());
  EXPECT_EQ(bad.Chunk(2)[0].status(), bad.status());
}

TEST(ApiMovementErrorTest, MovementRefusesBadInput) {
  Tensor x = R({3, 12});
  EXPECT_THAT(x.Unflatten(1, {5, -1}).status().message(), HasSubstr("cannot reshape"));
  EXPECT_THAT(x.Unflatten(2, {2, 6}).status().message(), HasSubstr("dim=2 out of range"));
  EXPECT_THAT(x.RepeatInterleave(-1).status().message(), HasSubstr("must not be negative"));
  EXPECT_THAT(x.RepeatInterleave(2, 3).status().message(), HasSubstr("dim=3 out of range"));
  EXPECT_THAT(x.Roll({1, 2}, {0}).status().message(), HasSubstr("2 shifts for 1 dims"));
  EXPECT_THAT(x.Roll(1, -3).status().message(), HasSubstr("dim=-3 out of range"));
  EXPECT_THAT(Tensor::Zeros({0, 2}).Roll(1, 0).status().message(), HasSubstr("of size 0"));
  Tensor scalar = Tensor::Const(1.0);
  EXPECT_THAT(scalar.Unflatten(0, {1}).status().message(), HasSubstr("0-d tensor has no dim 0"));
  EXPECT_THAT(scalar.RepeatInterleave(2, -1).status().message(), HasSubstr("0-d tensor has no dim -1"));
  EXPECT_THAT(scalar.Roll(1, 0).status().message(), HasSubstr("0-d tensor has no dim 0"));
  EXPECT_EQ(scalar.RepeatInterleave(3).Shape(), Dims{3});
  EXPECT_THAT(x.MaskedFill(R({4}, dtypes::kBool), 0.0).status().message(), HasSubstr("broadcast"));
}

TEST(ApiMovementErrorTest, CreationAndGridsRefuseBadInput) {
  EXPECT_THAT(Tensor::Linspace(0, 1, -1).status().message(), HasSubstr("must not be negative"));
  EXPECT_THAT(Tensor::Linspace(0, 1, 3, dtypes::kBool).status().message(), HasSubstr("bool"));
  EXPECT_THAT(FirstError(Tensor::Meshgrid({})), HasSubstr("at least one tensor"));
  EXPECT_THAT(FirstError(Tensor::Meshgrid({R({2}), R({3})}, "yx")), HasSubstr("\"ij\" or \"xy\""));
  Tensor bad = R({2}).Reshape({3});
  EXPECT_EQ(Tensor::Meshgrid({R({2}), bad})[0].status(), bad.status());
}

TEST(ApiMovementErrorTest, ReductionsRefuseBadAxes) {
  Tensor x = R({3, 4});
  EXPECT_THAT(x.Cumprod(2).status().message(), HasSubstr("dim=2 out of range"));
  EXPECT_THAT(x.Logcumsumexp(-3).status().message(), HasSubstr("dim=-3 out of range"));
  auto [var, mean] = x.VarMean(5);
  EXPECT_FALSE(var.ok());
  EXPECT_FALSE(mean.ok());
  auto [deviation, mean2] = x.StdMean({0, 7});
  EXPECT_FALSE(deviation.ok());
  EXPECT_FALSE(mean2.ok());
  // A 0-d tensor's logcumsumexp is itself.
  Tensor scalar = Tensor::Const(1.5);
  EXPECT_TRUE(scalar.Logcumsumexp().Is(scalar));
}

}  // namespace
}  // namespace uopc
