#include "tensor/testing/grad_programs.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "runtime/corpus_values.h"
#include "tensor/testing/graph_compare.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

constexpr DType f = dtypes::kFloat32;
using S = Slice;
constexpr std::nullopt_t _ = std::nullopt;

// R(..., scale=s): the corpus input times s (in float32, as tinygrad multiplies it), a buffer like R's.
Tensor RScaled(const Dims& shape, int seed, float scale) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  std::vector<uint8_t> bytes = CorpusInputBytes(f, seed + 1, n);
  std::vector<float> v(n);
  std::memcpy(v.data(), bytes.data(), bytes.size());
  for (float& x : v) x *= scale;
  return Tensor::FromVector<float>(v, shape);
}

// A literal the harvest realized (its T): an int32 buffer of `values`, the graph tinygrad has after
// `Tensor(data).realize()`, built without running the copy.
Tensor T(const std::vector<int32_t>& values, const Dims& shape) {
  return Tensor::FromVector<int32_t>(values, shape, dtypes::kInt32);
}

// BatchNorm in training: the batch's statistics, the mean detached in the variance (the harvest's bn).
Tensor BatchNormTrain(const Tensor& x, const Tensor& w, const Tensor& b) {
  Tensor::Axes axes = Dims{0, 2, 3};
  Tensor mean = x.Mean(axes);
  Tensor y = x - mean.Detach().Reshape({1, -1, 1, 1});
  Tensor var = (y * y).Mean(axes);
  return x.Batchnorm(&w, &b, mean, (var + 1e-5).Rsqrt());
}

}  // namespace

const std::vector<GradProgram>& GradPrograms() {
  static const auto* programs = new std::vector<GradProgram>{

      {"add_mul",
       [] {
         Tensor a = R({4, 5}), b = R({4, 5}, f, 1);
         return GradProgramTensors{{a, b}, ((a + b) * a).Sum()};
       }},
      {"sub_div",
       [] {
         Tensor a = R({6}), b = R({6}, f, 1);
         return GradProgramTensors{{a, b}, ((a - b) / (b.Abs() + 1)).Sum()};
       }},
      {"broadcast_add",
       [] {
         Tensor a = R({3, 1, 4}), b = R({5, 1}, f, 1);
         return GradProgramTensors{{a, b}, (a + b).Square().Mean()};
       }},
      {"matmul",
       [] {
         Tensor a = R({8, 16}), b = R({16, 4}, f, 1);
         return GradProgramTensors{{a, b}, a.Matmul(b).Sum()};
       }},
      {"matmul_relu_mean",
       [] {
         Tensor a = R({5, 7}), w = R({7, 3}, f, 1);
         return GradProgramTensors{{a, w}, a.Matmul(w).Relu().Mean()};
       }},
      {"unary_chain",
       [] {
         Tensor a = R({20});
         return GradProgramTensors{{a}, (a.Exp() + (a.Abs() + 1).Log() + (a.Abs() + 0.5).Sqrt()).Sum()};
       }},
      {"sigmoid_tanh",
       [] {
         Tensor a = R({30});
         return GradProgramTensors{{a}, (a.Sigmoid() * a.Tanh()).Sum()};
       }},
      {"trig",
       [] {
         Tensor a = R({25});
         return GradProgramTensors{{a}, (a.Sin() * a.Cos()).Sum()};
       }},
      {"pow_recip",
       [] {
         Tensor a = R({12});
         return GradProgramTensors{{a}, ((a.Abs() + 0.5).Pow(1.5) + 1 / (a.Abs() + 1)).Sum()};
       }},
      {"max_reduce",
       [] {
         Tensor a = R({6, 9});
         return GradProgramTensors{{a}, a.Max(1).Sum()};
       }},
      {"max_ties",
       [] {
         Tensor a = R({3, 1}), b = R({3, 2}, f, 1);
         return GradProgramTensors{{a, b}, a.Expand({3, 4}).Cat({b - 3}, 1).Max(1).Sum()};
       }},
      {"maximum_minimum",
       [] {
         Tensor a = R({15}), b = R({15}, f, 1);
         return GradProgramTensors{{a, b}, (a.Maximum(b) - a.Minimum(0.25)).Sum()};
       }},
      {"where_cmp",
       [] {
         Tensor a = R({16}), b = R({16}, f, 1);
         return GradProgramTensors{{a, b}, (a > b).Where(a * b, a - b).Sum()};
       }},
      {"softmax",
       [] {
         Tensor a = R({4, 10});
         return GradProgramTensors{{a}, (a.Softmax() * R({4, 10}, f, 1)).Sum()};
       }},
      {"log_softmax",
       [] {
         Tensor a = R({3, 7});
         return GradProgramTensors{{a}, (a.LogSoftmax() * R({3, 7}, f, 1)).Sum()};
       }},
      {"cross_entropy",
       [] {
         Tensor x = R({8, 10});
         Tensor y = T({3, 0, 9, 1, 1, 5, 7, 2}, {8});
         return GradProgramTensors{{x}, x.SparseCategoricalCrossentropy(y)};
       }},
      {"binary_crossentropy",
       [] {
         Tensor x = R({12});
         Tensor y = R({12}, dtypes::kBool, 1);
         return GradProgramTensors{{x}, x.BinaryCrossentropyLogits(y.Float())};
       }},
      {"layernorm",
       [] {
         Tensor a = R({4, 16});
         return GradProgramTensors{{a}, (a.Layernorm() * R({16}, f, 1)).Sum()};
       }},
      {"var_std",
       [] {
         Tensor a = R({5, 11});
         return GradProgramTensors{{a}, a.Var(1).Sum() + a.Std(0).Sum()};
       }},
      {"gelu_swish",
       [] {
         Tensor a = R({40});
         return GradProgramTensors{{a}, (a.Gelu() + a.Swish()).Sum()};
       }},
      {"movement",
       [] {
         Tensor a = R({4, 6});
         Tensor m = a.Permute({1, 0}).Reshape({3, 8}).Pad({{1, 0}, {0, 2}}).Shrink({{0, 3}, {1, 9}});
         return GradProgramTensors{{a}, (m * R({3, 8}, f, 1)).Sum()};
       }},
      {"expand_flip",
       [] {
         Tensor a = R({1, 5});
         return GradProgramTensors{{a}, (a.Expand({4, 5}).Flip({1}) * R({4, 5}, f, 1)).Sum()};
       }},
      {"cumsum",
       [] {
         Tensor a = R({3, 9});
         return GradProgramTensors{{a}, (a.Cumsum(1) * R({3, 9}, f, 1)).Sum()};
       }},
      {"cat_index",
       [] {
         Tensor a = R({3, 4}), b = R({2, 4}, f, 1);
         return GradProgramTensors{{a, b}, (a.Cat({b}).Index({S{1, 4, _}}) * 2).Sum()};
       }},
      {"gather",
       [] {
         Tensor a = R({5, 6});
         Tensor idx = T({0, 2, 5, 5, 1, 0, 3, 4, 2, 2}, {5, 2});
         return GradProgramTensors{{a}, a.Gather(1, idx).Sum()};
       }},
      {"conv2d",
       [] {
         Tensor x = R({2, 3, 8, 8}), w = R({4, 3, 3, 3}, f, 1), b = R({4}, f, 2);
         return GradProgramTensors{{x, w, b}, x.Conv2d(w, &b, {.padding = {1}}).Relu().Mean()};
       }},
      {"conv2d_stride_groups",
       [] {
         Tensor x = R({1, 4, 9, 9}), w = R({4, 2, 3, 3}, f, 1);
         return GradProgramTensors{{x, w}, x.Conv2d(w, {.groups = 2, .stride = {2}}).Square().Sum()};
       }},
      {"max_pool",
       [] {
         Tensor x = R({1, 2, 6, 6});
         return GradProgramTensors{{x}, (x.MaxPool2d() * R({1, 2, 3, 3}, f, 1)).Sum()};
       }},
      {"avg_pool",
       [] {
         Tensor x = R({1, 2, 6, 6});
         return GradProgramTensors{{x}, x.AvgPool2d({3, 3}, {1}).Square().Sum()};
       }},
      {"batchnorm_train",
       [] {
         Tensor x = R({4, 3, 5, 5}), w = R({3}, f, 1), b = R({3}, f, 2);
         return GradProgramTensors{{x, w, b}, (BatchNormTrain(x, w, b) * R({4, 3, 5, 5}, f, 3)).Sum()};
       }},
      {"attention",
       [] {
         Tensor q = R({1, 2, 6, 8}), k = R({1, 2, 6, 8}, f, 1), v = R({1, 2, 6, 8}, f, 2);
         return GradProgramTensors{{q, k, v}, q.ScaledDotProductAttention(k, v, nullptr, true).Sum()};
       }},
      {"embedding_onehot",
       [] {
         Tensor w = R({10, 4});
         Tensor idx = T({1, 7, 7, 0, 9}, {5});
         return GradProgramTensors{{w}, idx.OneHot(10).Matmul(w).Square().Sum()};
       }},
      {"shared_subexpr",
       [] {
         Tensor a = R({7});
         Tensor b = a * a;
         return GradProgramTensors{{a}, (b * b + b).Sum()};
       }},
      {"mlp2",
       [] {
         Tensor x = R({4, 6}), w1 = RScaled({6, 8}, 1, 0.5f), b1 = R({8}, f, 2),
                w2 = RScaled({8, 3}, 3, 0.5f);
         return GradProgramTensors{{x, w1, b1, w2},
                                   (x.Matmul(w1) + b1).Relu().Matmul(w2).LogSoftmax().Mean()};
       }},
      // Ours: a small convolutional classifier's loss (issue 36: 17 kernels on every device, as tinygrad).
      {"conv_pool_logsumexp",
       [] {
         Tensor x = R({2, 1, 8, 8}), w = R({4, 1, 3, 3}, f, 1), m = R({36, 10}, f, 2);
         return GradProgramTensors{{x, w, m},
                                   x.Conv2d(w).Relu().MaxPool2d().Flatten(1).Matmul(m).Logsumexp(1).Mean()};
       }},
  };
  return *programs;
}

absl::StatusOr<std::vector<Tensor>> LossAndGradients(const GradProgram& program) {
  Tensor::ManualSeed(42);
  GradProgramTensors p = program.build();
  for (const Tensor& t : p.inputs) UOPC_RETURN_IF_ERROR(t.status());
  UOPC_RETURN_IF_ERROR(p.loss.status());
  UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> grads, p.loss.Gradient(p.inputs));
  std::vector<Tensor> out = {p.loss};
  out.insert(out.end(), grads.begin(), grads.end());
  return out;
}

}  // namespace uopc
