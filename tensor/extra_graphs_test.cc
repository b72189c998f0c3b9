// Tensor API calls beyond the 70 corpus programs (conv with bias and dilation, pooling options, gather,
// cummax, bitcasts to other widths, indexing with ints/None/negative starts, negative pads, randn/randint...)
// build the graphs tinygrad v0.10.3 builds for them (tensor/testdata/extra_graphs.jsonl, from
// harvest_extra_graphs.py).
#include <functional>
#include <map>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"

namespace uopc {
namespace {

constexpr DType f = dtypes::kFloat32;
constexpr std::nullopt_t _ = std::nullopt;

const std::map<std::string, std::function<Tensor()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<Tensor()>>{
      {"conv2d_bias_dilation",
       [] {
         Tensor bias = R({4}, f, 2);
         return R({1, 2, 9, 9}).Conv2d(R({4, 2, 3, 3}, f, 1), &bias, {.dilation = {2}, .padding = {1, 2}});
       }},
      {"max_pool_stride_pad",
       [] {
         return R({1, 1, 7, 7}).MaxPool2d({3, 3}, {2}, {1}, {1});
       }},
      {"avg_pool_no_pad_count",
       [] {
         return R({1, 1, 6, 6}).AvgPool2d({2, 2}, {}, {1}, {1}, false);
       }},
      {"gather_dim1",
       [] {
         return R({4, 5}).Gather(1, Tensor::Literal({0, 1, 2, 3, 4, 0, 1, 1}, {4, 2}));
       }},
      {"stack_dim1",
       [] {
         return Tensor::Stack({R({3, 2}), R({3, 2}, f, 1)}, 1);
       }},
      {"cummax", [] { return R({20}).Cummax(0); }},
      {"cumsum_long", [] { return R({600}).Cumsum(); }},
      {"bitcast_wider", [] { return R({8}, dtypes::kUInt8).Bitcast(dtypes::kUInt32); }},
      {"bitcast_narrower", [] { return R({2}, dtypes::kUInt32).Bitcast(dtypes::kUInt8); }},
      {"tanh_swish_erf", [] { return R({10}).Tanh() + R({10}, f, 1).Swish() + R({10}, f, 2).Erf(); }},
      {"logsumexp",
       [] {
         return R({3, 7}).Logsumexp(1);
       }},
      {"min_argmin",
       [] {
         return R({5, 6}).Min(1) + R({5, 6}, f, 1).Argmin(1);
       }},
      {"std_keepdim",
       [] {
         return R({4, 9}).Std(1, true);
       }},
      {"batchnorm",
       [] {
         Tensor w = R({3}, f, 1), b = R({3}, f, 2);
         return R({2, 3, 4, 4}).Batchnorm(&w, &b, R({3}, f, 3), R({3}, f, 4));
       }},
      {"sdpa_causal",
       [] {
         return R({1, 2, 6, 8})
             .ScaledDotProductAttention(R({1, 2, 6, 8}, f, 1), R({1, 2, 6, 8}, f, 2), nullptr, true);
       }},
      {"index_mixed",
       [] {
         return R({4, 5, 6}).Index({int64_t{1}, Slice{_, _, 2}, NewAxis{}, Slice{-3, _, _}});
       }},
      {"pad_negative_value",
       [] {
         return R({5, 5}).Pad({{-1, 2}, {1, -2}}, 1.5);
       }},
      {"randn",
       [] {
         return Tensor::Randn({3, 4});
       }},
      {"randint", [] { return Tensor::Randint({10}, 3, 9); }},
      {"eye_rect", [] { return Tensor::Eye(3, 5) + Tensor::Eye(3, 5); }},
      {"arange_float", [] { return Tensor::Arange(0.5, 3.0, 0.75); }},
      {"squeeze_flatten",
       [] {
         return R({2, 1, 3, 1}).Squeeze().Flatten() * R({6}, f, 1).Unsqueeze(0).Flatten();
       }},
      {"repeat",
       [] {
         return R({2, 3}).Repeat({2, 1, 2});
       }},
      {"mod_neg", [] { return R({12}, dtypes::kInt32) % -5 + R({12}, f, 1) % 0.75; }},
  };
  return *programs;
}

TEST(ExtraGraphsTest, GraphsAreTinygrads) {
  std::vector<std::pair<std::string, std::string>> lines = ReadJsonl("tensor/testdata/extra_graphs.jsonl");
  ASSERT_EQ(lines.size(), Programs().size());
  int equal = 0;
  std::vector<std::string> failing;
  for (const auto& [name, line] : lines) {
    auto it = Programs().find(name);
    ASSERT_NE(it, Programs().end()) << name;
    Tensor::ManualSeed(0);
    Tensor t = it->second();
    if (!t.ok()) {
      failing.push_back(name);
      ADD_FAILURE() << name << ": " << t.status();
      continue;
    }
    std::string diff =
        GraphDifference(CanonicalSink({t}), nlohmann::json::parse(line)["graph"].get<std::string>());
    if (diff.empty()) {
      ++equal;
    } else {
      failing.push_back(name);
      ADD_FAILURE() << name << ": " << diff.substr(0, 400);
    }
  }
  std::cout << equal << "/" << lines.size()
            << " extra graphs equal; failing: " << absl::StrJoin(failing, ", ") << "\n";
}

}  // namespace
}  // namespace uopc
