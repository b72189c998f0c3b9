// Tensor methods for einsum, sorting and padding modes (Einsum, Sort, Topk, Pad's "reflect", "replicate" and
// "circular" modes, MaxPool2d/AvgPool2d's ceil_mode, MaxPool2dWithIndices, MaxUnpool2d) build the graphs
// tinygrad v0.10.3 builds and compute its values on CPU (tensor/testdata/api_sort_graphs.jsonl, from
// harvest_api_sort.py); bad input is an error.
#include <cmath>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
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

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr DType f = dtypes::kFloat32;
constexpr DType i32 = dtypes::kInt32;

std::vector<Tensor> Pair(const std::pair<Tensor, Tensor>& p) { return {p.first, p.second}; }
std::vector<Tensor> One(const Tensor& t) { return {t}; }

Tensor Unpool(const Tensor& x) {
  auto [pooled, indices] = x.MaxPool2dWithIndices();
  return pooled.MaxUnpool2d(indices);
}

const std::map<std::string, std::function<std::vector<Tensor>()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<std::vector<Tensor>()>>{
      {"einsum_matmul",
       [] {
         return One(Tensor::Einsum("ij,jk->ik", {R({3, 4}), R({4, 5}, f, 1)}));
       }},
      {"einsum_implicit_output",
       [] {
         return One(Tensor::Einsum("jk,ij", {R({4, 5}), R({3, 4}, f, 1)}));
       }},
      {"einsum_transpose",
       [] {
         return One(Tensor::Einsum("ij->ji", {R({3, 4})}));
       }},
      {"einsum_sum_all",
       [] {
         return One(Tensor::Einsum("ij->", {R({3, 4})}));
       }},
      {"einsum_batched_permuted",
       [] {
         return One(Tensor::Einsum("bij,bjk->kbi", {R({2, 3, 4}), R({2, 4, 2}, f, 1)}));
       }},
      {"einsum_outer",
       [] {
         return One(Tensor::Einsum("i,j->ij", {R({3}), R({4}, f, 1)}));
       }},
      {"einsum_three_spaces",
       [] {
         return One(Tensor::Einsum("ij, jk ,kl -> il", {R({2, 3}), R({3, 4}, f, 1), R({4, 2}, f, 2)}));
       }},
      {"einsum_int_dtype",
       [] {
         return One(Tensor::Einsum("ij,ij->i", {R({3, 4}, i32), R({3, 4}, i32, 1)}, f));
       }},
      {"einsum_ellipsis_values",
       [] {
         return One(Tensor::Einsum("...ij,...jk->...ik", {R({2, 3, 4}), R({2, 4, 5}, f, 1)}));
       }},
      {"einsum_ellipsis_implicit_values",
       [] {
         return One(Tensor::Einsum("b...,b...", {R({3, 2, 2}), R({3, 2, 2}, f, 1)}));
       }},
      {"sort",
       [] {
         return Pair(R({2, 5}).Sort());
       }},
      {"sort_dim0_descending",
       [] {
         return Pair(R({3, 2}).Sort(0, true));
       }},
      {"sort_ties_int",
       [] {
         return Pair((R({2, 4}, i32) % 3).Sort(1));
       }},
      {"sort_power_of_two",
       [] {
         return Pair(R({3, 4}).Sort(-1, true));
       }},
      {"topk",
       [] {
         return Pair(R({3, 4}).Topk(2));
       }},
      {"topk_smallest_dim0",
       [] {
         return Pair(R({3, 4}).Topk(2, 0, false));
       }},
      {"pad_constant_mode",
       [] {
         return One(R({2, 3}).Pad({{1, 0}, {2, -1}}, "constant", 2.5));
       }},
      {"pad_reflect",
       [] {
         return One(R({2, 3, 4}).Pad({{0, 0}, {1, 2}, {2, 3}}, "reflect"));
       }},
      {"pad_reflect_negative",
       [] {
         return One(R({3, 4}).Pad({{-1, 2}, {2, 0}}, "reflect"));
       }},
      {"pad_replicate",
       [] {
         return One(R({3, 4}).Pad({{1, -1}, {-2, 3}}, "replicate"));
       }},
      {"pad_circular",
       [] {
         return One(R({3, 4}).Pad({{1, 2}, {3, 0}}, "circular"));
       }},
      {"pad_circular_full",
       [] {
         return One(R({2, 3}).Pad({{2, 2}, {0, 3}}, std::string("circular")));
       }},
      {"max_pool_ceil",
       [] {
         return One(R({1, 1, 5, 5}).MaxPool2d({2, 2}, {}, {1}, {0}, true));
       }},
      {"max_pool_ceil_stride_pad",
       [] {
         return One(R({1, 2, 6, 6}).MaxPool2d({3, 3}, {2}, {1}, {1}, true));
       }},
      {"avg_pool_ceil",
       [] {
         return One(R({1, 1, 5, 5}).AvgPool2d({2, 2}, {}, {1}, {0}, true, true));
       }},
      {"avg_pool_ceil_exclude_pad",
       [] {
         return One(R({1, 2, 6, 6}).AvgPool2d({3, 3}, {2}, {1}, {1}, false, true));
       }},
      {"avg_pool_ceil_include_pad",
       [] {
         return One(R({1, 2, 6, 6}).AvgPool2d({3, 3}, {2}, {1}, {1}, true, true));
       }},
      {"max_pool_indices",
       [] {
         return Pair(R({1, 2, 4, 4}).MaxPool2dWithIndices());
       }},
      {"max_pool_indices_overlap",
       [] {
         return Pair(R({1, 1, 5, 5}).MaxPool2dWithIndices({3, 3}, {1}, {1}, {1}));
       }},
      {"max_unpool",
       [] {
         return One(Unpool(R({1, 2, 4, 4})));
       }},
      {"max_unpool_output_size",
       [] {
         auto [pooled, indices] = R({1, 1, 5, 5}).MaxPool2dWithIndices();
         return One(pooled.MaxUnpool2d(indices, {2, 2}, {}, {1}, {0}, Dims{5, 5}));
       }},
  };
  return *programs;
}

TEST(ApiSortTest, GraphsAndValuesAreTinygrads) {
  // tinygrad picks the letters of an einsum ellipsis from a Python set: only the values are compared.
  ExpectHarvestedPrograms("tensor/testdata/api_sort_graphs.jsonl", Programs(),
                          [](const std::string& name) { return !absl::EndsWith(name, "_values"); });
}

std::string Message(const Tensor& t) { return std::string(t.status().message()); }

TEST(ApiSortTest, SortOfAnAxisOfSizeOneKeepsTheAxis) {
  // tinygrad v0.10.3 fails here (or drops the other axes); uopc returns the tensor and zero indices.
  auto [values, indices] = R({3, 1}).Sort(1);
  ASSERT_TRUE(values.ok()) << values.status();
  EXPECT_EQ(values.Shape(), (Dims{3, 1}));
  EXPECT_EQ(*values.ToVector<float>(), *R({3, 1}).ToVector<float>());
  EXPECT_THAT(*indices.ToVector<int32_t>(), ElementsAre(0, 0, 0));
  auto [top, top_indices] = R({1, 3}).Topk(1, 0);
  EXPECT_EQ(top.Shape(), (Dims{1, 3}));
  EXPECT_THAT(*top_indices.ToVector<int32_t>(), ElementsAre(0, 0, 0));
}

TEST(ApiSortErrorTest, EinsumRefusesBadFormulas) {
  Tensor a = R({3, 4}), b = R({4, 5});
  EXPECT_THAT(Message(Tensor::Einsum("ij,jk->ik", {a})), HasSubstr("has 2 inputs, got 1 operands"));
  EXPECT_THAT(Message(Tensor::Einsum("ij->ik->k", {a})), HasSubstr("more than one \"->\""));
  EXPECT_THAT(Message(Tensor::Einsum("ijk->i", {a})), HasSubstr("names 3 axes"));
  EXPECT_THAT(Message(Tensor::Einsum("ij,ik->jk", {a, b})), HasSubstr("'i' has size 3 and 4"));
  EXPECT_THAT(Message(Tensor::Einsum("ii->i", {R({3, 3})})), HasSubstr("appears twice"));
  EXPECT_THAT(Message(Tensor::Einsum("i1->i", {a})), HasSubstr("is not a letter"));
  EXPECT_THAT(Message(Tensor::Einsum("ij->iz", {a})), HasSubstr("distinct letters of the inputs"));
  EXPECT_THAT(Message(Tensor::Einsum("ij->ii", {a})), HasSubstr("distinct letters of the inputs"));
  EXPECT_THAT(Message(Tensor::Einsum("...ijk->i", {a})), HasSubstr("too few axes"));
  EXPECT_THAT(Message(Tensor::Einsum("", {})), HasSubstr("at least one operand"));
  Tensor bad = a.Reshape({5});
  EXPECT_EQ(Tensor::Einsum("ij,j->i", {a, bad}).status(), bad.status());
  // An ellipsis over no axes stands for none.
  EXPECT_EQ(Tensor::Einsum("...ij->...ji", {a}).Shape(), (Dims{4, 3}));
}

TEST(ApiSortErrorTest, SortAndTopkRefuseBadInput) {
  Tensor x = R({3, 4});
  EXPECT_THAT(Message(x.Sort(2).first), HasSubstr("dim=2 out of range"));
  EXPECT_THAT(Message(x.Sort(-3).second), HasSubstr("dim=-3 out of range"));
  EXPECT_THAT(Message(Tensor::Const(1.0).Sort().first), HasSubstr("0-d tensor has no dim"));
  EXPECT_THAT(Message(Tensor::Zeros({2, 0}).Sort().first), HasSubstr("size 0"));
  EXPECT_THAT(Message(x.Topk(5).first), HasSubstr("k=5 is out of range"));
  EXPECT_THAT(Message(x.Topk(-1).second), HasSubstr("k=-1 is out of range"));
  EXPECT_THAT(Message(x.Topk(2, 3).first), HasSubstr("dim=3 out of range"));
  EXPECT_THAT(Message(x.Topk(2, -1, true, false).first), HasSubstr("sorted=false is not supported"));
  Tensor bad = x.Reshape({5});
  EXPECT_EQ(bad.Sort().first.status(), bad.status());
  EXPECT_EQ(bad.Topk(1).second.status(), bad.status());
}

TEST(ApiSortErrorTest, PadModesRefuseBadInput) {
  Tensor x = R({3, 4});
  EXPECT_THAT(Message(x.Pad({{1, 1}, {1, 1}}, "wrap")), HasSubstr("mode must be"));
  EXPECT_THAT(Message(x.Pad({{1, 1}}, "reflect")), HasSubstr("1 pads for a tensor of shape (3, 4)"));
  EXPECT_THAT(Message(x.Pad({{3, 0}, {0, 0}}, "reflect")),
              HasSubstr("must be smaller than the size 3 of dim 0"));
  EXPECT_THAT(Message(x.Pad({{0, 0}, {0, 4}}, "reflect")),
              HasSubstr("must be smaller than the size 4 of dim 1"));
  EXPECT_THAT(Message(x.Pad({{4, 0}, {0, 0}}, "circular")), HasSubstr("more than once"));
  EXPECT_THAT(Message(x.Pad({{-1, 0}, {0, 0}}, "circular")), HasSubstr("cannot be negative"));
  EXPECT_THAT(Message(Tensor::Zeros({0, 2}).Pad({{1, 0}, {0, 0}}, "replicate")), HasSubstr("Shrink"));
  // "constant" is the plain pad.
  EXPECT_EQ(x.Pad({{1, 2}, {0, 1}}, "constant").uop(), x.Pad({{1, 2}, {0, 1}}).uop());
  Tensor bad = x.Reshape({5});
  EXPECT_EQ(bad.Pad({{1, 1}}, "reflect").status(), bad.status());
}

TEST(ApiSortErrorTest, PoolingRefusesBadInput) {
  Tensor x = R({1, 1, 4, 4});
  EXPECT_THAT(Message(x.MaxPool2d({2, 2}, {0}, {1}, {0}, true)),
              HasSubstr("stride and dilation must be >= 1"));
  EXPECT_THAT(Message(x.AvgPool2d({2, 2}, {1, 1, 1}, {1}, {0}, true, true)), HasSubstr("cannot pool"));
  EXPECT_THAT(Message(x.MaxPool2d({2, 2}, {0})), HasSubstr("stride and dilation must be >= 1"));
  EXPECT_THAT(Message(x.AvgPool2d({2, 2}, {1}, {0})), HasSubstr("stride and dilation must be >= 1"));
  EXPECT_THAT(Message(x.MaxPool2dWithIndices({2, 2}, {}, {1}, {0, 0, 0}).first),
              HasSubstr("padding must be"));
  EXPECT_THAT(Message(x.MaxPool2dWithIndices({5, 5}).second), HasSubstr("larger than the input"));
  auto [pooled, indices] = x.MaxPool2dWithIndices();
  EXPECT_THAT(Message(R({4, 4}).MaxUnpool2d(indices)), HasSubstr("needs (batch, channels, *spatial)"));
  EXPECT_THAT(Message(pooled.MaxUnpool2d(pooled)), HasSubstr("must be integers"));
  EXPECT_THAT(Message(pooled.MaxUnpool2d(indices, {2, 2}, {}, {1}, {0}, Dims{4})), HasSubstr("fewer than 2"));
  EXPECT_THAT(Message(pooled.MaxUnpool2d(indices, {2, 2}, {}, {1}, {5})), HasSubstr("is negative"));
  EXPECT_THAT(Message(pooled.MaxUnpool2d(R({1, 1, 3}, i32))), HasSubstr("broadcast"));
}

}  // namespace
}  // namespace uopc
