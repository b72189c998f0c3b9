#include "tensor/benchmark_graphs.h"

#include "runtime/corpus_values.h"

namespace uopc {

Tensor CorpusInput(const Dims& shape, DType dtype, int seed, const std::string& device) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return Tensor::FromBytes(CorpusInputBytes(dtype, seed + 1, n), shape, dtype, device);
}

Tensor MatmulGraph(const std::string& device) {
  constexpr DType f = dtypes::kFloat32;
  return CorpusInput({1024, 1024}, f, 0, device).Matmul(CorpusInput({1024, 1024}, f, 1, device));
}

Tensor MlpGraph(const std::string& device) {
  auto R = [&](const Dims& shape, int seed) { return CorpusInput(shape, dtypes::kFloat32, seed, device); };
  Tensor h1 = (R({64, 784}, 0).Matmul(R({784, 512}, 1)) + R({512}, 2)).Relu();
  Tensor h2 = (h1.Matmul(R({512, 512}, 3)) + R({512}, 4)).Relu();
  return h2.Matmul(R({512, 10}, 5)) + R({10}, 6);
}

Tensor ResnetBasicBlockGraph(const std::string& device) {
  auto R = [&](const Dims& shape, int seed) { return CorpusInput(shape, dtypes::kFloat32, seed, device); };
  auto invstd = [&](int seed) {
    Tensor t = R({64}, seed).Abs().Add(1e-5).Rsqrt();
    absl::Status s = t.Realize();
    return s.ok() ? t : Tensor::FromError(s);
  };
  ConvOptions pad1{.padding = {1}};
  Tensor w2 = R({64}, 2), b3 = R({64}, 3), m4 = R({64}, 4);
  Tensor x = R({8, 64, 32, 32}, 0).Conv2d(R({64, 64, 3, 3}, 1), pad1).Batchnorm(&w2, &b3, m4, invstd(5));
  Tensor w7 = R({64}, 7), b8 = R({64}, 8), m9 = R({64}, 9);
  x = x.Relu().Conv2d(R({64, 64, 3, 3}, 6), pad1).Batchnorm(&w7, &b8, m9, invstd(10));
  return (x + R({8, 64, 32, 32}, 0)).Relu();
}

Tensor AttentionBlockGraph(const std::string& device) {
  auto R = [&](const Dims& shape, int seed) { return CorpusInput(shape, dtypes::kFloat32, seed, device); };
  Tensor x = R({4, 128, 256}, 0);
  constexpr int64_t b = 4, s = 128, d = 256, heads = 8;
  auto project = [&](const Tensor& w) {
    return x.Matmul(w).Reshape({b, s, heads, d / heads}).Transpose(1, 2);
  };
  Tensor q = project(R({256, 256}, 1)), k = project(R({256, 256}, 2)), v = project(R({256, 256}, 3));
  Tensor wo = R({256, 256}, 4);
  return q.ScaledDotProductAttention(k, v, nullptr, /*is_causal=*/true)
      .Transpose(1, 2)
      .Reshape({b, s, d})
      .Matmul(wo);
}

const std::vector<std::pair<std::string, std::function<Tensor()>>>& BenchmarkGraphs() {
  static const auto* graphs = new std::vector<std::pair<std::string, std::function<Tensor()>>>{
      {"matmul_1024", [] { return MatmulGraph(); }},
      {"mlp_784_512_512_10", [] { return MlpGraph(); }},
      {"resnet_basic_block", [] { return ResnetBasicBlockGraph(); }},
      {"attention_block", [] { return AttentionBlockGraph(); }},
  };
  return *graphs;
}

}  // namespace uopc
