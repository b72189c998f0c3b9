// The 70 tensor programs of tinygrad's corpus (tensor_programs.jsonl), written with the C++ Tensor API: the
// graph each builds must be the graph tinygrad v0.10.3 built (schedule/testdata/tensor_graphs.jsonl), and
// realized, its values must be tinygrad's results (README section 6 tolerances).
#include <functional>
#include <map>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/corpus_values.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "testdata/corpus_path.h"

namespace uopc {
namespace {

constexpr DType f = dtypes::kFloat32, i = dtypes::kInt32, h = dtypes::kFloat16, u8 = dtypes::kUInt8,
                b = dtypes::kBool;
using Outputs = std::vector<Tensor>;
using Program = std::function<Tensor()>;
using S = Slice;
constexpr std::nullopt_t _ = std::nullopt;

const std::vector<std::pair<std::string, Program>>& Programs() {
  static const auto* programs = new std::vector<std::pair<std::string, Program>>{
      {"add_int3", [] { return R({3}, i) + R({3}, i, 1); }},
      {"add_f32_1d", [] { return R({1024}) + R({1024}, f, 1); }},
      {"mul_add_2d",
       [] {
         return R({33, 65}) * R({33, 65}, f, 1) + 2.5;
       }},
      {"where_cmp",
       [] {
         return (R({16, 16}) < R({16, 16}, f, 1)).Where(R({16, 16}, f, 2), 0.0);
       }},
      {"cast_int_float",
       [] {
         return (R({7, 9}, i) * 3).Cast(f) / 2;
       }},
      {"cast_float_half", [] { return R({64}).Cast(h) * 2; }},
      {"half_add", [] { return R({64}, h) + R({64}, h, 1); }},
      {"uint8_to_float",
       [] {
         return R({5, 7}, u8).Cast(f) / 255;
       }},
      {"bool_logic", [] { return (R({40}, b) & R({40}, b, 1)) | ~R({40}, b, 2); }},
      {"int_bitops", [] { return ((R({32}, dtypes::kUInt32) << 2).Cast(i) ^ (R({32}, i, 1) & 7)) | 1; }},
      {"int_div_mod", [] { return R({50}, i).IDiv(7) + (R({50}, i, 1) % 5); }},
      {"unary_math",
       [] { return R({128}).Abs().Sqrt() + R({128}, f, 1).Exp() + (R({128}, f, 2).Abs() + 1).Log(); }},
      {"trig", [] { return R({96}).Sin() + R({96}, f, 1).Cos(); }},
      {"relu_sigmoid", [] { return R({256}).Relu() + R({256}, f, 1).Sigmoid(); }},
      {"gelu", [] { return R({300}).Gelu(); }},
      {"recip_neg", [] { return -(1 / (R({20}).Abs() + 0.5)); }},
      {"pow", [] { return R({31}).Abs().Pow(1.7); }},
      {"maximum_minimum", [] { return R({45}).Maximum(R({45}, f, 1)) - R({45}, f, 2).Minimum(0.25); }},
      {"sum_all", [] { return R({1000}).Sum(); }},
      {"sum_16x16",
       [] {
         return R({16, 16}).Sum();
       }},
      {"sum_axis0",
       [] {
         return R({37, 19}).Sum(0);
       }},
      {"sum_axis1",
       [] {
         return R({37, 19}).Sum(1);
       }},
      {"sum_int", [] { return R({300}, i).Sum(); }},
      {"max_axis",
       [] {
         return R({12, 34}).Max(1);
       }},
      {"mean_var",
       [] {
         return R({8, 64}).Var(1);
       }},
      {"argmax",
       [] {
         return R({10, 17}).Argmax(1);
       }},
      {"softmax",
       [] {
         return R({4, 50}).Softmax(1);
       }},
      {"log_softmax",
       [] {
         return R({3, 20}).LogSoftmax(1);
       }},
      {"layernorm",
       [] {
         return R({6, 48}).Layernorm(-1);
       }},
      {"matmul_64",
       [] {
         return R({64, 64}).Matmul(R({64, 64}, f, 1));
       }},
      {"matmul_odd",
       [] {
         return R({13, 27}).Matmul(R({27, 5}, f, 1));
       }},
      {"matvec",
       [] {
         return R({128, 96}).Matmul(R({96}, f, 1));
       }},
      {"matmul_half",
       [] {
         return R({32, 32}, h).Matmul(R({32, 32}, h, 1));
       }},
      {"matmul_int",
       [] {
         return R({16, 24}, i).Matmul(R({24, 8}, i, 1));
       }},
      {"batched_matmul",
       [] {
         return R({3, 16, 8}).Matmul(R({3, 8, 12}, f, 1));
       }},
      {"linear_relu",
       [] {
         return (R({8, 32}).Matmul(R({32, 16}, f, 1)) + R({16}, f, 2)).Relu();
       }},
      {"conv2d_small",
       [] {
         return R({1, 3, 8, 8}).Conv2d(R({4, 3, 3, 3}, f, 1));
       }},
      {"conv2d_pad_stride",
       [] {
         return R({2, 4, 9, 9}).Conv2d(R({6, 4, 3, 3}, f, 1), {.stride = {2}, .padding = {1}});
       }},
      {"conv2d_groups",
       [] {
         return R({1, 4, 6, 6}).Conv2d(R({4, 1, 3, 3}, f, 1), {.groups = 4});
       }},
      {"conv1d",
       [] {
         return R({2, 3, 20}).Conv2d(R({5, 3, 4}, f, 1));
       }},
      {"max_pool",
       [] {
         return R({1, 2, 8, 8}).MaxPool2d();
       }},
      {"avg_pool",
       [] {
         return R({1, 2, 9, 9}).AvgPool2d({3, 3});
       }},
      {"pad",
       [] {
         return R({5, 5}).Pad({{1, 2}, {0, 3}}) * 2;
       }},
      {"shrink_flip",
       [] {
         return R({10, 10}).Index({S{2, 8, _}, S{_, _, -1}}) + 1;
       }},
      {"permute",
       [] {
         return R({4, 5, 6}).Permute({2, 0, 1}) + 0;
       }},
      {"transpose_add",
       [] {
         return R({20, 30}).T() + R({30, 20}, f, 1);
       }},
      {"expand",
       [] {
         return R({7, 1}) + R({1, 9}, f, 1);
       }},
      {"reshape_chain",
       [] {
         return (R({24}).Reshape({2, 3, 4}).Permute({1, 2, 0}).Reshape({12, 2}) * 3).Contiguous();
       }},
      {"stride_slice",
       [] {
         return R({40}).Index({S{_, _, 3}}) * 2;
       }},
      {"cat",
       [] {
         return R({3, 4}).Cat({R({5, 4}, f, 1)}, 0) + 1;
       }},
      {"stack",
       [] {
         return Tensor::Stack({R({6}), R({6}, f, 1), R({6}, f, 2)}) * 2;
       }},
      {"cumsum", [] { return R({33}).Cumsum(); }},
      {"arange", [] { return Tensor::Arange(100) * 2; }},
      {"eye", [] { return Tensor::Eye(12) + 0; }},
      {"triu",
       [] {
         return R({9, 9}).Triu(1);
       }},
      {"gather_onehot",
       [] {
         return R({10, 6}).IndexWith(Tensor::Literal(std::vector<int64_t>{3, 1, 4, 1, 5, 9, 2}));
       }},
      {"one_hot",
       [] {
         return Tensor::Literal(std::vector<int64_t>{1, 0, 3, 2}).OneHot(5) * 1.5;
       }},
      {"multi_output", [] { return R({32}) * 2; }},
      {"attention",
       [] {
         return R({1, 2, 8, 16}).ScaledDotProductAttention(R({1, 2, 8, 16}, f, 1), R({1, 2, 8, 16}, f, 2));
       }},
      {"mlp2",
       [] {
         return R({4, 20}).Matmul(R({20, 32}, f, 1)).Relu().Matmul(R({32, 10}, f, 2)).Softmax();
       }},
      {"rand", [] { return Tensor::Rand({64}) * 2; }},
      {"bigger_sum",
       [] {
         return R({256, 256}).Sum(1);
       }},
      {"double_ops", [] { return R({19}, dtypes::kFloat64) * 1.5 + R({19}, dtypes::kFloat64, 1).Sqrt(); }},
      {"int64_ops", [] { return R({23}, dtypes::kInt64) * 100000 + 7; }},
      {"int8_sum", [] { return R({64}, dtypes::kInt8).Cast(i).Sum(); }},
      {"bitcast", [] { return R({16}).Bitcast(dtypes::kUInt32) >> 3; }},
      {"isnan_isinf", [] { return (R({25}) / R({25}, f, 1).Abs().Floor()).IsInf().Where(1.0, 0.0); }},
      {"clip_round", [] { return R({30}).Clip(-0.5, 0.5) + R({30}, f, 1).Round() + R({30}, f, 2).Trunc(); }},
      {"tril_masked_sum",
       [] {
         return R({16, 16}).Tril().Sum(0);
       }},
      {"reduce_keepdim_broadcast",
       [] {
         return R({8, 10}) - R({8, 10}).Mean(1, true);
       }},
  };
  return *programs;
}

// The harvest script's outputs: the program's tensor, and for multi_output its sum too.
Outputs Build(const std::string& name, const Program& program) {
  Tensor::ManualSeed(42);
  Tensor t = program();
  if (name == "multi_output") return {t, t.Sum()};
  return {t};
}

TEST(TensorProgramsTest, EveryCorpusProgramIsWritten) {
  std::map<std::string, nlohmann::json> corpus = ReadJsonlByProgram(CorpusPath("tensor_programs.jsonl"));
  ASSERT_EQ(corpus.size(), 70u);
  ASSERT_EQ(Programs().size(), 70u);
  for (const auto& [name, program] : Programs()) EXPECT_TRUE(corpus.count(name)) << name;
}

TEST(TensorProgramsTest, GraphsAreTinygrads) {
  std::map<std::string, nlohmann::json> expected =
      ReadJsonlByProgram("schedule/testdata/tensor_graphs.jsonl");
  ASSERT_EQ(expected.size(), 70u);
  int equal = 0;
  std::vector<std::string> failing;
  for (const auto& [name, program] : Programs()) {
    Outputs outs = Build(name, program);
    bool ok = true;
    for (const Tensor& t : outs) {
      if (!t.ok()) {
        ADD_FAILURE() << name << ": " << t.status();
        ok = false;
      }
    }
    if (!ok) {
      failing.push_back(name);
      continue;
    }
    std::string diff = GraphDifference(CanonicalSink(outs), expected[name]["graph"].get<std::string>());
    if (diff.empty()) {
      ++equal;
    } else {
      failing.push_back(name);
      if (failing.size() <= 3) ADD_FAILURE() << name << ": " << diff;
    }
  }
  std::cout << equal << "/70 graphs equal; failing: " << absl::StrJoin(failing, ", ") << "\n";
  EXPECT_EQ(equal, 70);
}

// Realized on `device`, each program's outputs are tinygrad's results. Returns the programs that differ.
std::vector<std::string> ResultDifferences(const std::string& device) {
  std::map<std::string, nlohmann::json> corpus = ReadJsonlByProgram(CorpusPath("tensor_programs.jsonl"));
  Tensor::SetDefaultDevice(device);
  std::vector<std::string> failing;
  for (const auto& [name, program] : Programs()) {
    Outputs outs = Build(name, program);
    const nlohmann::json& results = corpus[name]["results"];
    std::string problem;
    if (absl::Status s = Tensor::RealizeAll(outs); !s.ok()) problem = s.ToString();
    if (problem.empty() && results.size() != outs.size()) problem = "a different number of outputs";
    for (size_t k = 0; problem.empty() && k < outs.size(); ++k) {
      const nlohmann::json& want = results[k];
      DType dt = outs[k].dtype();
      if (CorpusDType(want["dtype"].get<std::string>()).value_or(dtypes::kVoid) != dt) {
        problem = "dtype " + dt.ToString() + ", tinygrad's is " + want["dtype"].get<std::string>();
        break;
      }
      if (nlohmann::json(outs[k].Shape()) != want["shape"]) {
        problem =
            "shape " + nlohmann::json(outs[k].Shape()).dump() + ", tinygrad's is " + want["shape"].dump();
        break;
      }
      absl::StatusOr<std::vector<uint8_t>> bytes = outs[k].ToBytes();
      if (!bytes.ok()) {
        problem = bytes.status().ToString();
        break;
      }
      problem = CorpusValuesMismatch(dt, CorpusJsonFromBytes(dt, *bytes).value(), want["values"]);
    }
    if (!problem.empty()) {
      failing.push_back(name);
      std::cout << device << " " << name << ": " << problem << "\n";
    }
  }
  Tensor::SetDefaultDevice("CPU");
  return failing;
}

TEST(TensorProgramsTest, ResultsOnCpu) {
  std::vector<std::string> failing = ResultDifferences("CPU");
  std::cout << 70 - failing.size() << "/70 results equal on CPU; failing: " << absl::StrJoin(failing, ", ")
            << "\n";
  EXPECT_EQ(failing.size(), 0u);
}

TEST(TensorProgramsTest, ResultsOnInterp) {
  std::vector<std::string> failing = ResultDifferences("INTERP");
  std::cout << 70 - failing.size() << "/70 results equal on INTERP; failing: " << absl::StrJoin(failing, ", ")
            << "\n";
  EXPECT_EQ(failing.size(), 0u);
}

}  // namespace
}  // namespace uopc
