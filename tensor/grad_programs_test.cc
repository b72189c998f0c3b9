// The 34 gradient programs of tinygrad's corpus (grad_programs.jsonl), written with the C++ Tensor API: the
// graph of the loss and its gradients must be the graph tinygrad v0.10.3 built (testdata/grad_graphs.jsonl,
// from testdata/harvest_grad_graphs.py, which holds the exact Python of each line), the schedule of loss and
// gradients together must have tinygrad's kernel count, and realized on CPU and INTERP, the loss and every
// gradient must be tinygrad's values (the corpus's tolerances).
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "schedule/schedule.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"

namespace uopc {
namespace {

constexpr DType f = dtypes::kFloat32;
using S = Slice;
constexpr std::nullopt_t _ = std::nullopt;

// A program: its inputs (differentiated, in order) and its loss.
struct Built {
  std::vector<Tensor> inputs;
  Tensor loss;
};
using Program = std::function<Built()>;

// R(..., scale=s): the corpus input times s, realized.
Tensor RScaled(const Dims& shape, int seed, float scale) {
  std::vector<float> v = *R(shape, f, seed).ToVector<float>();
  for (float& x : v) x *= scale;
  return Tensor::FromVector<float>(v, shape);
}

// A realized literal (the harvest script's T).
Tensor T(const std::vector<int64_t>& values, const Dims& shape) {
  Tensor t = Tensor::Literal(values, shape);
  EXPECT_TRUE(t.Realize().ok());
  return t;
}

// BatchNorm in training: the batch's statistics, the mean detached in the variance (the harvest's bn).
Tensor BatchNormTrain(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor::Axes axes = Dims{0, 2, 3};
  Tensor mean = x.Mean(axes);
  Tensor y = x - mean.Detach().Reshape({1, -1, 1, 1});
  Tensor var = (y * y).Mean(axes);
  return x.Batchnorm(&w, &b, mean, (var + 1e-5).Rsqrt());
}

const std::vector<std::pair<std::string, Program>>& Programs() {
  static const auto* programs = new std::vector<std::pair<std::string, Program>>{
      {"add_mul",
       [] {
         Tensor a = R({4, 5}), b = R({4, 5}, f, 1);
         return Built{{a, b}, ((a + b) * a).Sum()};
       }},
      {"sub_div",
       [] {
         Tensor a = R({6}), b = R({6}, f, 1);
         return Built{{a, b}, ((a - b) / (b.Abs() + 1)).Sum()};
       }},
      {"broadcast_add",
       [] {
         Tensor a = R({3, 1, 4}), b = R({5, 1}, f, 1);
         return Built{{a, b}, (a + b).Square().Mean()};
       }},
      {"matmul",
       [] {
         Tensor a = R({8, 16}), b = R({16, 4}, f, 1);
         return Built{{a, b}, a.Matmul(b).Sum()};
       }},
      {"matmul_relu_mean",
       [] {
         Tensor a = R({5, 7}), w = R({7, 3}, f, 1);
         return Built{{a, w}, a.Matmul(w).Relu().Mean()};
       }},
      {"unary_chain",
       [] {
         Tensor a = R({20});
         return Built{{a}, (a.Exp() + (a.Abs() + 1).Log() + (a.Abs() + 0.5).Sqrt()).Sum()};
       }},
      {"sigmoid_tanh",
       [] {
         Tensor a = R({30});
         return Built{{a}, (a.Sigmoid() * a.Tanh()).Sum()};
       }},
      {"trig",
       [] {
         Tensor a = R({25});
         return Built{{a}, (a.Sin() * a.Cos()).Sum()};
       }},
      {"pow_recip",
       [] {
         Tensor a = R({12});
         return Built{{a}, ((a.Abs() + 0.5).Pow(1.5) + 1 / (a.Abs() + 1)).Sum()};
       }},
      {"max_reduce",
       [] {
         Tensor a = R({6, 9});
         return Built{{a}, a.Max(1).Sum()};
       }},
      {"max_ties",
       [] {
         Tensor a = R({3, 1}), b = R({3, 2}, f, 1);
         return Built{{a, b}, a.Expand({3, 4}).Cat({b - 3}, 1).Max(1).Sum()};
       }},
      {"maximum_minimum",
       [] {
         Tensor a = R({15}), b = R({15}, f, 1);
         return Built{{a, b}, (a.Maximum(b) - a.Minimum(0.25)).Sum()};
       }},
      {"where_cmp",
       [] {
         Tensor a = R({16}), b = R({16}, f, 1);
         return Built{{a, b}, (a > b).Where(a * b, a - b).Sum()};
       }},
      {"softmax",
       [] {
         Tensor a = R({4, 10});
         return Built{{a}, (a.Softmax() * R({4, 10}, f, 1)).Sum()};
       }},
      {"log_softmax",
       [] {
         Tensor a = R({3, 7});
         return Built{{a}, (a.LogSoftmax() * R({3, 7}, f, 1)).Sum()};
       }},
      {"cross_entropy",
       [] {
         Tensor x = R({8, 10});
         Tensor y = T({3, 0, 9, 1, 1, 5, 7, 2}, {8});
         return Built{{x}, x.SparseCategoricalCrossentropy(y)};
       }},
      {"binary_crossentropy",
       [] {
         Tensor x = R({12});
         Tensor y = R({12}, dtypes::kBool, 1);
         return Built{{x}, x.BinaryCrossentropyLogits(y.Float())};
       }},
      {"layernorm",
       [] {
         Tensor a = R({4, 16});
         return Built{{a}, (a.Layernorm() * R({16}, f, 1)).Sum()};
       }},
      {"var_std",
       [] {
         Tensor a = R({5, 11});
         return Built{{a}, a.Var(1).Sum() + a.Std(0).Sum()};
       }},
      {"gelu_swish",
       [] {
         Tensor a = R({40});
         return Built{{a}, (a.Gelu() + a.Swish()).Sum()};
       }},
      {"movement",
       [] {
         Tensor a = R({4, 6});
         Tensor m = a.Permute({1, 0}).Reshape({3, 8}).Pad({{1, 0}, {0, 2}}).Shrink({{0, 3}, {1, 9}});
         return Built{{a}, (m * R({3, 8}, f, 1)).Sum()};
       }},
      {"expand_flip",
       [] {
         Tensor a = R({1, 5});
         return Built{{a}, (a.Expand({4, 5}).Flip({1}) * R({4, 5}, f, 1)).Sum()};
       }},
      {"cumsum",
       [] {
         Tensor a = R({3, 9});
         return Built{{a}, (a.Cumsum(1) * R({3, 9}, f, 1)).Sum()};
       }},
      {"cat_index",
       [] {
         Tensor a = R({3, 4}), b = R({2, 4}, f, 1);
         return Built{{a, b}, (a.Cat({b}).Index({S{1, 4, _}}) * 2).Sum()};
       }},
      {"gather",
       [] {
         Tensor a = R({5, 6});
         Tensor idx = T({0, 2, 5, 5, 1, 0, 3, 4, 2, 2}, {5, 2});
         return Built{{a}, a.Gather(1, idx).Sum()};
       }},
      {"conv2d",
       [] {
         Tensor x = R({2, 3, 8, 8}), w = R({4, 3, 3, 3}, f, 1), b = R({4}, f, 2);
         return Built{{x, w, b}, x.Conv2d(w, &b, {.padding = {1}}).Relu().Mean()};
       }},
      {"conv2d_stride_groups",
       [] {
         Tensor x = R({1, 4, 9, 9}), w = R({4, 2, 3, 3}, f, 1);
         return Built{{x, w}, x.Conv2d(w, {.groups = 2, .stride = {2}}).Square().Sum()};
       }},
      {"max_pool",
       [] {
         Tensor x = R({1, 2, 6, 6});
         return Built{{x}, (x.MaxPool2d() * R({1, 2, 3, 3}, f, 1)).Sum()};
       }},
      {"avg_pool",
       [] {
         Tensor x = R({1, 2, 6, 6});
         return Built{{x}, x.AvgPool2d({3, 3}, {1}).Square().Sum()};
       }},
      {"batchnorm_train",
       [] {
         Tensor x = R({4, 3, 5, 5}), w = R({3}, f, 1), b = R({3}, f, 2);
         return Built{{x, w, b}, (BatchNormTrain(x, w, b) * R({4, 3, 5, 5}, f, 3)).Sum()};
       }},
      {"attention",
       [] {
         Tensor q = R({1, 2, 6, 8}), k = R({1, 2, 6, 8}, f, 1), v = R({1, 2, 6, 8}, f, 2);
         return Built{{q, k, v}, q.ScaledDotProductAttention(k, v, nullptr, true).Sum()};
       }},
      {"embedding_onehot",
       [] {
         Tensor w = R({10, 4});
         Tensor idx = T({1, 7, 7, 0, 9}, {5});
         return Built{{w}, idx.OneHot(10).Matmul(w).Square().Sum()};
       }},
      {"shared_subexpr",
       [] {
         Tensor a = R({7});
         Tensor b = a * a;
         return Built{{a}, (b * b + b).Sum()};
       }},
      {"mlp2",
       [] {
         Tensor x = R({4, 6}), w1 = RScaled({6, 8}, 1, 0.5f), b1 = R({8}, f, 2),
                w2 = RScaled({8, 3}, 3, 0.5f);
         return Built{{x, w1, b1, w2}, (x.Matmul(w1) + b1).Relu().Matmul(w2).LogSoftmax().Mean()};
       }},
  };
  return *programs;
}

// The loss and its gradients, built (inputs realized), or the first error.
absl::StatusOr<std::vector<Tensor>> LossAndGradients(const Program& program) {
  Tensor::ManualSeed(42);
  Built b = program();
  for (const Tensor& t : b.inputs) {
    if (absl::Status s = t.Realize(); !s.ok()) return s;
  }
  if (!b.loss.ok()) return b.loss.status();
  absl::StatusOr<std::vector<Tensor>> grads = b.loss.Gradient(b.inputs);
  if (!grads.ok()) return grads.status();
  std::vector<Tensor> out = {b.loss};
  out.insert(out.end(), grads->begin(), grads->end());
  return out;
}

std::map<std::string, nlohmann::json> Load(const std::string& path, const std::string& key) {
  std::map<std::string, nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains(key)) out[j[key].get<std::string>()] = j;
  }
  return out;
}

std::map<std::string, nlohmann::json> Corpus() {
  return Load("tensor/testdata/grad_programs.jsonl", "program");
}

TEST(GradProgramsTest, EveryCorpusProgramIsWritten) {
  std::map<std::string, nlohmann::json> corpus = Corpus();
  ASSERT_EQ(corpus.size(), 34u);
  ASSERT_EQ(Programs().size(), 34u);
  for (const auto& [name, program] : Programs()) EXPECT_TRUE(corpus.count(name)) << name;
}

TEST(GradProgramsTest, GraphsAreTinygrads) {
  std::map<std::string, nlohmann::json> expected = Load("tensor/testdata/grad_graphs.jsonl", "program");
  ASSERT_EQ(expected.size(), 34u);
  int equal = 0;
  std::vector<std::string> failing;
  for (const auto& [name, program] : Programs()) {
    absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
    std::string diff = outs.ok()
                           ? GraphDifference(CanonicalSink(*outs), expected[name]["graph"].get<std::string>())
                           : outs.status().ToString();
    if (diff.empty()) {
      ++equal;
    } else {
      failing.push_back(name);
      if (failing.size() <= 3) ADD_FAILURE() << name << ": " << diff;
    }
  }
  std::cout << equal << "/34 gradient graphs equal; failing: " << absl::StrJoin(failing, ", ") << "\n";
  EXPECT_EQ(equal, 34);
}

TEST(GradProgramsTest, KernelCountsAreTinygrads) {
  std::map<std::string, nlohmann::json> corpus = Corpus();
  std::vector<std::string> failing;
  for (const auto& [name, program] : Programs()) {
    absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
    ASSERT_TRUE(outs.ok()) << name << ": " << outs.status();
    std::vector<UOpPtr> roots;
    for (const Tensor& t : *outs) roots.push_back(t.uop());
    absl::StatusOr<Schedule> schedule = CreateSchedule(UOp::Sink(roots));
    ASSERT_TRUE(schedule.ok()) << name << ": " << schedule.status();
    int64_t want = corpus[name]["n_kernels"].get<int64_t>();
    if (static_cast<int64_t>(schedule->items.size()) != want) {
      failing.push_back(absl::StrCat(name, " (", schedule->items.size(), " kernels, tinygrad ", want, ")"));
    }
  }
  std::cout << 34 - failing.size() << "/34 kernel counts equal; failing: " << absl::StrJoin(failing, ", ")
            << "\n";
  EXPECT_TRUE(failing.empty());
}

// |got - want| <= 1e-3 + 1e-3 |want| for each value; the first that is not, or "".
std::string Mismatch(const std::vector<float>& got, const nlohmann::json& want) {
  if (got.size() != want.size()) return absl::StrCat(got.size(), " values, tinygrad has ", want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double w = want[i].get<double>();
    if (!(std::abs(got[i] - w) <= 1e-3 + 1e-3 * std::abs(w)))
      return absl::StrCat("[", i, "] ", got[i], " vs ", w);
  }
  return "";
}

// On `device`, the program's loss and every gradient are tinygrad's values: "" or what differs.
std::string ValueDifference(const std::string& device, const std::string& name, const Program& program) {
  static const auto* corpus = new std::map<std::string, nlohmann::json>(Corpus());
  const nlohmann::json& want = corpus->at(name);
  Tensor::SetDefaultDevice(device);
  absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
  Tensor::SetDefaultDevice("CPU");
  if (!outs.ok()) return outs.status().ToString();
  if (absl::Status s = Tensor::RealizeAll(*outs); !s.ok()) return s.ToString();
  for (size_t k = 0; k < outs->size(); ++k) {
    absl::StatusOr<std::vector<float>> got = (*outs)[k].ToVector<float>();
    if (!got.ok()) return got.status().ToString();
    if (k == 0) {
      std::string problem = Mismatch(*got, nlohmann::json::array({want["loss"]}));
      if (!problem.empty()) return "loss " + problem;
      continue;
    }
    const nlohmann::json& g = want["grads"][k - 1];
    if (nlohmann::json((*outs)[k].Shape()) != g["shape"]) {
      return absl::StrCat("gradient ", k - 1, " has shape ", nlohmann::json((*outs)[k].Shape()).dump());
    }
    std::string problem = Mismatch(*got, g["values"]);
    if (!problem.empty()) return absl::StrCat("gradient ", k - 1, " ", problem);
  }
  return "";
}

// One case per device and program, so the test shards (CPU compiles every kernel).
class GradValuesTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(GradValuesTest, LossAndGradientsAreTinygrads) {
  const auto& [device, index] = GetParam();
  const auto& [name, program] = Programs()[index];
  EXPECT_EQ(ValueDifference(device, name, program), "") << device << " " << name;
}

INSTANTIATE_TEST_SUITE_P(EveryProgram, GradValuesTest,
                         ::testing::Combine(::testing::Values("CPU", "INTERP"), ::testing::Range(0, 34)),
                         [](const ::testing::TestParamInfo<GradValuesTest::ParamType>& info) {
                           return std::get<0>(info.param) + "_" + Programs()[std::get<1>(info.param)].first;
                         });

}  // namespace
}  // namespace uopc
