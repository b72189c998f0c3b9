// Tensor programs at the sizes models use (nn/testdata/scale_programs.jsonl, from harvest_scale_programs.py,
// which holds each program's Python): random numbers and aranges of millions of elements, wide reductions and
// norms, transformer matmuls, attention and blocks, convolutions (strided, grouped, dilated, transposed, 1-D
// and 3-D) and pools, vocabulary-sized embeddings and losses, half, bfloat16 and small-int kernels, views
// past 2^31 elements and layer initialisers, at round, odd and prime sizes. Inputs are Tensor::Empty and
// nothing is realized: each program is built, scheduled and compiled for the clang target, and its tensor
// graph, kernel count and order, and per kernel the AST, opts, name and C source must be tinygrad v0.10.3's.
// One test case per program; a failure names each field that differs and its first differing line. A new
// program is one line in the script's PROGRAMS and one entry in Programs() below, under the same name.
#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/numeric/int128.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/layers.h"
#include "nn/state.h"
#include "renderer/cstyle.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

constexpr char kCorpus[] = "nn/testdata/scale_programs.jsonl";
constexpr DType f = dtypes::kFloat32, h = dtypes::kFloat16, i = dtypes::kInt32, i8 = dtypes::kInt8;
constexpr DType bf = dtypes::kBFloat16, u8 = dtypes::kUInt8, i16 = dtypes::kInt16, i64 = dtypes::kInt64;
using S = Slice;
constexpr std::nullopt_t _ = std::nullopt;

// What a program returns: one tensor or several (scheduled together).
struct Outputs {
  Outputs(Tensor t) : tensors{std::move(t)} {}               // NOLINT: a program may return one tensor
  Outputs(std::vector<Tensor> t) : tensors(std::move(t)) {}  // NOLINT
  std::vector<Tensor> tensors;
};
using Program = std::function<Outputs()>;

// The harvest script's E: an input that is never allocated.
Tensor E(const Dims& shape, DType dtype = f) { return Tensor::Empty(shape, dtype); }

// nn.Embedding's forward on an empty table (the script skips the table's random init; here it is replaced).
Tensor Embedding(int64_t vocab, int64_t dim, const Tensor& idx) {
  nn::Embedding emb(vocab, dim);
  emb.weight = E({vocab, dim});
  return emb(idx);
}

// The script's gpt2_attention: qkv projection, causal attention over `heads` heads, output projection
// (tinygrad's split(d, dim=2) is these three shrinks).
Tensor Gpt2Attention(const Tensor& x, const Tensor& w_qkv, const Tensor& b_qkv, const Tensor& w_proj,
                     int64_t heads) {
  const Dims shape = x.Shape();
  const int64_t b = shape[0], s = shape[1], d = shape[2];
  Tensor qkv = x.Linear(w_qkv, &b_qkv);
  std::vector<Tensor> parts;
  for (int64_t k = 0; k < 3; ++k) {
    parts.push_back(qkv.Index({S{_, _, _}, S{_, _, _}, S{k * d, (k + 1) * d, _}})
                        .Reshape({b, s, heads, d / heads})
                        .Transpose(1, 2));
  }
  return parts[0]
      .ScaledDotProductAttention(parts[1], parts[2], nullptr, true)
      .Transpose(1, 2)
      .Reshape({b, s, d})
      .Matmul(w_proj);
}

// The script's llama_mlp: LLaMA's gated MLP, (silu(x w1) * x w3) w2.
Tensor LlamaMlp(const Tensor& x, const Tensor& w1, const Tensor& w3, const Tensor& w2) {
  return (x.Matmul(w1).Silu() * x.Matmul(w3)).Matmul(w2);
}

// The script's transformer_block: a pre-norm GPT-2 block (attention, then a gelu MLP of `hidden`, each added
// to its input), every weight an empty input.
Tensor TransformerBlock(const Tensor& x, int64_t heads, int64_t hidden) {
  const int64_t d = x.Shape().back();
  Tensor b_qkv = E({3 * d});
  Tensor a = x + Gpt2Attention(x.Layernorm() * E({d}) + E({d}), E({d, 3 * d}), b_qkv, E({d, d}), heads);
  Tensor b_up = E({hidden}), b_down = E({d});
  return a + (a.Layernorm() * E({d}) + E({d}))
                 .Linear(E({d, hidden}), &b_up)
                 .Gelu()
                 .Linear(E({hidden, d}), &b_down);
}

const std::vector<std::pair<std::string, Program>>& Programs() {
  static const auto* programs = new std::vector<std::pair<std::string, Program>>{
      // random numbers
      {"rand_4096x4096",
       [] {
         return Tensor::Rand({4096, 4096});
       }},
      {"rand_1024x1024",
       [] {
         return Tensor::Rand({1024, 1024});
       }},
      {"randn_1024x1024",
       [] {
         return Tensor::Randn({1024, 1024});
       }},
      {"randn_4096x4096",
       [] {
         return Tensor::Randn({4096, 4096});
       }},
      {"randint_1024x1024",
       [] {
         return Tensor::Randint({1024, 1024}, 0, 50257);
       }},
      {"rand_half_2048x2048",
       [] {
         return Tensor::Rand({2048, 2048}, h);
       }},
      // aranges and cumulative sums
      {"arange_1m", [] { return Tensor::Arange(int64_t{1} << 20); }},
      {"arange_float_4m", [] { return Tensor::Arange(0, 4.0, 1e-6); }},
      {"arange_16m_mul", [] { return Tensor::Arange(int64_t{1} << 24) * 3; }},
      {"cumsum_1m", [] { return E({1 << 20}).Cumsum(); }},
      {"cumsum_rows_4096",
       [] {
         return E({1024, 4096}).Cumsum(1);
       }},
      // reductions
      {"sum_16m",
       [] {
         return E({4096, 4096}).Sum();
       }},
      {"sum_axis0_4096",
       [] {
         return E({4096, 4096}).Sum(0);
       }},
      {"max_rows_4096",
       [] {
         return E({2048, 4096}).Max(1);
       }},
      {"argmax_vocab",
       [] {
         return E({8, 50257}).Argmax(-1);
       }},
      {"mean_global_pool",
       [] {
         return E({32, 2048, 7, 7}).Mean(Dims{2, 3});
       }},
      // normalizations
      {"layernorm_4096",
       [] {
         return E({512, 4096}).Layernorm();
       }},
      {"layernorm_affine_768",
       [] {
         return E({2048, 768}).Layernorm() * E({768}) + E({768});
       }},
      {"rmsnorm_4096",
       [] {
         return E({1024, 4096}) * (E({1024, 4096}).Square().Mean(-1, true) + 1e-6).Rsqrt();
       }},
      {"batchnorm_resnet",
       [] {
         Tensor w = E({64}), b = E({64});
         return E({32, 64, 56, 56}).Batchnorm(&w, &b, E({64}), E({64}));
       }},
      {"batch_stats_var",
       [] {
         return E({16, 256, 14, 14}).Var(Dims{0, 2, 3});
       }},
      // softmax, matmuls and linear layers
      {"softmax_vocab",
       [] {
         return E({16, 50257}).Softmax(-1);
       }},
      {"softmax_attn_scores",
       [] {
         return E({12, 1024, 1024}).Softmax(-1);
       }},
      {"log_softmax_32000",
       [] {
         return E({512, 32000}).LogSoftmax();
       }},
      {"matmul_512x768x768",
       [] {
         return E({512, 768}).Matmul(E({768, 768}));
       }},
      {"matmul_2048x4096x4096",
       [] {
         return E({2048, 4096}).Matmul(E({4096, 4096}));
       }},
      {"matvec_4096",
       [] {
         return E({4096, 4096}).Matmul(E({4096}));
       }},
      {"linear_gelu_3072",
       [] {
         Tensor b = E({3072});
         return E({1024, 768}).Linear(E({768, 3072}), &b).Gelu();
       }},
      {"linear_1024_4096_relu",
       [] {
         Tensor b = E({4096});
         return E({2048, 1024}).Linear(E({1024, 4096}), &b).Relu();
       }},
      {"cross_entropy_vocab",
       [] {
         return E({512, 50257}).SparseCategoricalCrossentropy(E({512}, i));
       }},
      // convolutions and pooling
      {"conv3x3_64_56",
       [] {
         return E({1, 64, 56, 56}).Conv2d(E({64, 64, 3, 3}), {.padding = {1}});
       }},
      {"conv_stem_7x7_s2",
       [] {
         return E({1, 3, 224, 224}).Conv2d(E({64, 3, 7, 7}), {.stride = {2}, .padding = {3}});
       }},
      {"conv1x1_256_64_batch8",
       [] {
         return E({8, 256, 56, 56}).Conv2d(E({64, 256, 1, 1}));
       }},
      {"conv3x3_bias_relu_128",
       [] {
         Tensor b = E({128});
         return E({8, 128, 28, 28}).Conv2d(E({128, 128, 3, 3}), &b, {.padding = {1}}).Relu();
       }},
      {"maxpool_3x3_s2_112",
       [] {
         return E({1, 64, 112, 112}).MaxPool2d({3, 3}, {2}, {1}, {1});
       }},
      {"avgpool_2x2_56",
       [] {
         return E({8, 64, 56, 56}).AvgPool2d();
       }},
      // embeddings
      {"embedding_gpt2",
       [] {
         return Embedding(50257, 768, E({1, 1024}, i));
       }},
      {"one_hot_vocab", [] { return E({1024}, i).OneHot(50257); }},
      // attention
      {"sdpa_1024_12x64",
       [] {
         return E({1, 12, 1024, 64}).ScaledDotProductAttention(E({1, 12, 1024, 64}), E({1, 12, 1024, 64}));
       }},
      {"sdpa_causal_1024_12x64",
       [] {
         return E({1, 12, 1024, 64})
             .ScaledDotProductAttention(E({1, 12, 1024, 64}), E({1, 12, 1024, 64}), nullptr, true);
       }},
      {"gpt2_attention_block",
       [] {
         return Gpt2Attention(E({1, 1024, 768}), E({768, 2304}), E({2304}), E({768, 768}), 12);
       }},
      // half and int8
      {"matmul_half_2048x4096",
       [] {
         return E({2048, 4096}, h).Matmul(E({4096, 4096}, h));
       }},
      {"half_elementwise_4096",
       [] {
         return (E({4096, 4096}, h) * 2 + E({4096, 4096}, h)).Relu();
       }},
      {"half_sum_rows",
       [] {
         return E({4096, 4096}, h).Sum(1);
       }},
      {"int8_add_4096",
       [] {
         return E({4096, 4096}, i8) + E({4096, 4096}, i8);
       }},
      {"int8_sum_rows",
       [] {
         return E({1024, 4096}, i8).Sum(1);
       }},
      {"int8_dequant_matmul",
       [] {
         return E({512, 4096}).Matmul(E({4096, 4096}, i8).Cast(f) * E({1, 4096}));
       }},
      // views of more than 2^31 elements
      {"broadcast_sum_2p32",
       [] {
         return (E({65536, 1}) + E({1, 65536})).Sum();
       }},
      {"big_shrink_65536",
       [] {
         return E({65536, 65536}).Index({S{_, _, _}, S{1000, 1010, _}}) * 2;
       }},
      {"big_sum_rows_65536",
       [] {
         return E({65536, 65536}).Sum(1);
       }},
      {"big_cast_half_3g",
       [] {
         return E({50000, 60000}, h).Float();
       }},
      {"big_sum_all_2p32",
       [] {
         return E({65536, 65536}).Sum();
       }},
      {"big_pad_46341",
       [] {
         return E({46341, 46341}).Pad({{1, 1}, {1, 1}}) * 2;
       }},
      {"big_flip_2p31", [] { return E({(int64_t{1} << 31) + 8}).Flip({0}) + 1; }},
      {"big_transpose_rows",
       [] {
         return E({65536, 65536}).T().Index({S{_, 8, _}}) + 1;
       }},
      {"big_last_row",
       [] {
         return E({65536, 65536}).Index({int64_t{-1}}) * 2;
       }},
      // layer initialisers
      {"linear_init_4096",
       [] {
         nn::Linear linear(4096, 4096);
         return std::vector<Tensor>{linear.weight, *linear.bias};
       }},
      {"kaiming_uniform_4096",
       [] {
         return nn::KaimingUniform({4096, 4096}, std::sqrt(5.0));
       }},
      {"glorot_uniform_4096x1024",
       [] {
         return nn::GlorotUniform({4096, 1024});
       }},
      {"normal_init_gpt2",
       [] {
         return Tensor::Normal({50257, 768}, 0.0, 0.02);
       }},
      {"scaled_uniform_1024",
       [] {
         return nn::ScaledUniform({1024, 1024});
       }},
      // ---- second set: other sizes (odd, prime, vocabulary-sized) and variants of the same families ----
      // random numbers
      {"rand_1000x3001",
       [] {
         return Tensor::Rand({1000, 3001});
       }},
      {"rand_odd_numel_3001x7",
       [] {
         return Tensor::Rand({3001, 7});
       }},
      {"randn_1023x1000",
       [] {
         return Tensor::Randn({1023, 1000});
       }},
      {"rand_4d_8x3x224x224",
       [] {
         return Tensor::Rand({8, 3, 224, 224});
       }},
      {"rand_half_odd_1001",
       [] {
         return Tensor::Rand({1001, 1001}, h);
       }},
      {"rand_bfloat16_1000",
       [] {
         return Tensor::Rand({1000, 1000}, bf);
       }},
      {"randint_int64_1000x3001",
       [] {
         return Tensor::Randint({1000, 3001}, 0, 32000, i64);
       }},
      {"randint_uint8_1023",
       [] {
         return Tensor::Randint({1023, 1023}, 0, 256, u8);
       }},
      {"randint_int16_4097x33",
       [] {
         return Tensor::Randint({4097, 33}, -100, 100, i16);
       }},
      {"uniform_qwen_vocab",
       [] {
         return Tensor::Uniform({151936, 64}, -0.5, 0.5);
       }},
      {"rand_then_randn",
       [] {
         Tensor a = Tensor::Rand({1000, 1000});
         return std::vector<Tensor>{a, Tensor::Randn({3001})};
       }},
      // aranges and cumulative ops
      {"arange_start_step", [] { return Tensor::Arange(10, 1 << 20, 3); }},
      {"arange_negative_step", [] { return Tensor::Arange(1000000, 0, -7); }},
      {"arange_float_2m", [] { return Tensor::Arange(-1.0, 1.0, std::ldexp(1.0, -20)); }},
      {"arange_1g", [] { return Tensor::Arange(int64_t{1} << 30); }},
      {"arange_prime_100000007", [] { return Tensor::Arange(100000007); }},
      {"cumsum_axis0_4096x1000",
       [] {
         return E({4096, 1000}).Cumsum(0);
       }},
      {"cumsum_4m", [] { return E({1 << 22}).Cumsum(); }},
      {"cumsum_rows_3001",
       [] {
         return E({32, 3001}).Cumsum(1);
       }},
      {"cummax_rows_1000",
       [] {
         return E({64, 1000}).Cummax(1);
       }},
      {"cumsum_int_1m", [] { return E({1 << 20}, i).Cumsum(); }},
      // reductions
      {"argmax_axis0_4096x1000",
       [] {
         return E({4096, 1000}).Argmax(0);
       }},
      {"argmin_axis0_3001x1023",
       [] {
         return E({3001, 1023}).Argmin(0);
       }},
      {"std_rows_3001",
       [] {
         return E({1000, 3001}).Std(1);
       }},
      {"var_4d_no_correction",
       [] {
         return E({8, 64, 28, 28}).Var(Dims{0, 2, 3}, false, 0);
       }},
      {"logsumexp_32000",
       [] {
         return E({64, 32000}).Logsumexp(-1);
       }},
      {"max_3d_axis1",
       [] {
         return E({16, 1023, 257}).Max(1);
       }},
      {"half_sum_axis0_3001",
       [] {
         return E({3001, 1000}, h).Sum(0);
       }},
      {"any_rows_4096x1000",
       [] {
         return (E({4096, 1000}) > 0).Any(1);
       }},
      {"prod_rows_1000x64",
       [] {
         return E({1000, 64}).Prod(1);
       }},
      // normalizations
      {"layernorm_module_gpt2_3d",
       [] {
         return nn::LayerNorm({768})(E({8, 1024, 768}));
       }},
      {"layernorm_3001",
       [] {
         return E({1023, 3001}).Layernorm();
       }},
      {"groupnorm_resnet_256",
       [] {
         return nn::GroupNorm(32, 256)(E({8, 256, 28, 28}));
       }},
      {"batchnorm_2048_7x7",
       [] {
         Tensor w = E({2048}), b = E({2048});
         return E({32, 2048, 7, 7}).Batchnorm(&w, &b, E({2048}), E({2048}));
       }},
      {"rmsnorm_module_4096",
       [] {
         return nn::RMSNorm(4096)(E({2, 2048, 4096}));
       }},
      // softmax, matmuls and linear layers
      {"softmax_axis0_3001x1000",
       [] {
         return E({3001, 1000}).Softmax(0);
       }},
      {"softmax_32_heads_512",
       [] {
         return E({1, 32, 512, 512}).Softmax(-1);
       }},
      {"matmul_1000x3001x1023",
       [] {
         return E({1000, 3001}).Matmul(E({3001, 1023}));
       }},
      {"batched_matmul_8x512x64",
       [] {
         return E({8, 512, 64}).Matmul(E({8, 64, 512}));
       }},
      {"matmul_4d_heads",
       [] {
         return E({2, 16, 512, 64}).Matmul(E({2, 16, 64, 512}));
       }},
      {"matmul_transposed_b",
       [] {
         return E({1024, 768}).Matmul(E({3072, 768}).T());
       }},
      {"matmul_transposed_a",
       [] {
         return E({768, 1024}).T().Matmul(E({768, 512}));
       }},
      {"lm_head_matvec_32000",
       [] {
         return E({32000, 4096}).Matmul(E({4096}));
       }},
      {"vecmat_4096x32000",
       [] {
         return E({4096}).Matmul(E({4096, 32000}));
       }},
      {"linear_lm_head_3d",
       [] {
         return E({1, 128, 4096}).Linear(E({4096, 32000}));
       }},
      {"matmul_bfloat16_1024",
       [] {
         return E({1024, 1024}, bf).Matmul(E({1024, 1024}, bf));
       }},
      {"matmul_half_acc_float",
       [] {
         return E({1000, 1000}, h).Matmul(E({1000, 1000}, h), f);
       }},
      {"int8_matmul_int32_acc",
       [] {
         return E({512, 1024}, i8).Matmul(E({1024, 1024}, i8), i);
       }},
      // convolutions and pooling
      {"conv3x3_s2_128_256",
       [] {
         return E({8, 128, 56, 56}).Conv2d(E({256, 128, 3, 3}), {.stride = {2}, .padding = {1}});
       }},
      {"conv1x1_s2_downsample",
       [] {
         return E({8, 256, 56, 56}).Conv2d(E({512, 256, 1, 1}), {.stride = {2}});
       }},
      {"conv_depthwise_96",
       [] {
         return E({8, 96, 112, 112}).Conv2d(E({96, 1, 3, 3}), {.groups = 96, .padding = {1}});
       }},
      {"conv_groups_32",
       [] {
         return E({4, 128, 28, 28}).Conv2d(E({128, 4, 3, 3}), {.groups = 32, .padding = {1}});
       }},
      {"conv_dilation_2",
       [] {
         return E({2, 64, 64, 64}).Conv2d(E({64, 64, 3, 3}), {.dilation = {2}, .padding = {2}});
       }},
      {"conv_alexnet_11x11_s4",
       [] {
         return E({4, 3, 227, 227}).Conv2d(E({96, 3, 11, 11}), {.stride = {4}});
       }},
      {"conv1d_3001",
       [] {
         return E({8, 64, 3001}).Conv2d(E({128, 64, 3}), {.padding = {1}});
       }},
      {"conv_transpose_28_to_56",
       [] {
         return E({1, 64, 28, 28})
             .ConvTranspose2d(E({64, 32, 4, 4}), nullptr, {.stride = {2}, .padding = {1}});
       }},
      {"maxpool_2x2_112",
       [] {
         return E({8, 64, 112, 112}).MaxPool2d();
       }},
      {"maxpool_5x5_s3_99",
       [] {
         return E({4, 32, 99, 99}).MaxPool2d({5, 5}, {3});
       }},
      {"avgpool_3x3_s1_pad1",
       [] {
         return E({8, 192, 28, 28}).AvgPool2d({3, 3}, {1}, {1}, {1});
       }},
      {"avgpool_7x7_global",
       [] {
         return E({32, 2048, 7, 7}).AvgPool2d({7, 7});
       }},
      {"avgpool_exclude_pad",
       [] {
         return E({4, 64, 56, 56}).AvgPool2d({3, 3}, {2}, {1}, {1}, false);
       }},
      // embeddings and gathers
      {"embedding_llama_32000",
       [] {
         return Embedding(32000, 4096, E({2, 512}, i));
       }},
      {"embedding_qwen_151936",
       [] {
         return Embedding(151936, 896, E({1, 128}, i));
       }},
      {"gather_rows_3001",
       [] {
         return E({1000, 3001}).Gather(1, E({1000, 7}, i));
       }},
      // attention
      {"sdpa_causal_2048_32x128",
       [] {
         return E({1, 32, 2048, 128})
             .ScaledDotProductAttention(E({1, 32, 2048, 128}), E({1, 32, 2048, 128}), nullptr, true);
       }},
      {"sdpa_mask_512_16x64",
       [] {
         Tensor mask = E({4, 1, 512, 512}, dtypes::kBool);
         return E({4, 16, 512, 64})
             .ScaledDotProductAttention(E({4, 16, 512, 64}), E({4, 16, 512, 64}), &mask);
       }},
      {"gpt2_attention_16_heads",
       [] {
         return Gpt2Attention(E({2, 512, 1024}), E({1024, 3072}), E({3072}), E({1024, 1024}), 16);
       }},
      {"transformer_block_768",
       [] {
         return TransformerBlock(E({1, 256, 768}), 12, 3072);
       }},
      // half, bfloat16 and small ints
      {"half_softmax_32000",
       [] {
         return E({32, 32000}, h).Softmax(-1);
       }},
      {"half_layernorm_3072",
       [] {
         return E({512, 3072}, h).Layernorm();
       }},
      {"bfloat16_mul_float",
       [] {
         return (E({1000, 3001}, bf) * E({1000, 3001}, bf)).Float();
       }},
      {"uint8_image_normalize",
       [] {
         return E({8, 3, 224, 224}, u8).Float() / 255 - 0.5;
       }},
      {"int16_add_const",
       [] {
         return E({3001, 1000}, i16) + 7;
       }},
      {"int8_max_axis0",
       [] {
         return E({1000, 3001}, i8).Max(0);
       }},
      {"uint8_sum_1m", [] { return E({1 << 20}, u8).Sum(); }},
      // views of more than 2^31 elements
      {"big_pad_cross_2p31",
       [] {
         return E({46340, 46340}).Pad({{5, 5}, {5, 5}}) + 1;
       }},
      {"big_outer_product",
       [] {
         return E({46341, 1}) * E({1, 46341});
       }},
      {"big_reshape_tail",
       [] {
         return E({65536, 65536}).Reshape({1 << 20, 4096}).Index({S{-3, _, _}}) + 1;
       }},
      {"big_sum_axis0_65536x40000",
       [] {
         return E({65536, 40000}).Sum(0);
       }},
      {"big_step_slice",
       [] {
         return E({65536, 65536}).Index({S{_, _, 3}, S{_, _, 1000}}) * 2;
       }},
      {"big_permute_3d",
       [] {
         return E({1024, 2048, 1025}).Permute({2, 0, 1}).Index({S{_, 2, _}}) + 1;
       }},
      {"big_max_rows_40000",
       [] {
         return E({40000, 65536}).Max(1);
       }},
      {"big_cat_past_2p31",
       [] {
         return E({32768, 65536}).Cat({E({10, 65536})});
       }},
      {"big_argmax_rows",
       [] {
         return E({65536, 40000}).Argmax(1);
       }},
      // layer initialisers and losses
      {"conv2d_init_256", [] { return nn::GetParameters(nn::Conv2d(256, 256, {3})); }},
      {"embedding_init_gpt2", [] { return nn::GetParameters(nn::Embedding(50257, 768)); }},
      {"layernorm_init_768", [] { return nn::GetParameters(nn::LayerNorm({768})); }},
      {"linear_init_3001x1000", [] { return nn::GetParameters(nn::Linear(3001, 1000)); }},
      {"one_hot_32000", [] { return E({2048}, i).OneHot(32000); }},
      {"cross_entropy_32000_3d",
       [] {
         return E({4, 512, 32000}).SparseCategoricalCrossentropy(E({4, 512}, i));
       }},
      {"cross_entropy_smoothing_1000",
       [] {
         return E({1024, 1000}).SparseCategoricalCrossentropy(E({1024}, i), -1, 0.1);
       }},
      {"bce_logits_4096x1000",
       [] {
         return E({4096, 1000}).BinaryCrossentropyLogits(E({4096, 1000}));
       }},
      {"triu_mask_2048",
       [] {
         return E({2048, 2048}).Triu(1);
       }},
      // more convolutions and pools: transposed (strides 1-3, output padding, groups, 1-D), dilated, 3-D, odd
      {"conv_transpose_s3_outpad",
       [] {
         return E({2, 32, 17, 17})
             .ConvTranspose2d(E({32, 16, 5, 5}), nullptr, {.stride = {3}, .padding = {2}}, {1});
       }},
      {"conv_transpose1d_1000",
       [] {
         return E({4, 64, 1000}).ConvTranspose2d(E({64, 32, 4}), nullptr, {.stride = {2}, .padding = {1}});
       }},
      {"conv_transpose_groups_4",
       [] {
         return E({1, 64, 28, 28}).ConvTranspose2d(E({64, 16, 3, 3}), nullptr, {.groups = 4, .stride = {2}});
       }},
      {"conv_transpose_s1_14",
       [] {
         return E({1, 128, 14, 14}).ConvTranspose2d(E({128, 64, 3, 3}), nullptr, {.padding = {1}});
       }},
      {"maxpool_3x3_s2_p1_odd_57",
       [] {
         return E({2, 64, 57, 57}).MaxPool2d({3, 3}, {2}, {1}, {1});
       }},
      {"maxpool_dilation_2",
       [] {
         return E({2, 32, 64, 64}).MaxPool2d({3, 3}, {1}, {2});
       }},
      {"avgpool1d_4_3001",
       [] {
         return E({8, 64, 3001}).AvgPool2d({4});
       }},
      {"conv_asym_pad_s2",
       [] {
         return E({1, 32, 225, 225}).Conv2d(E({64, 32, 3, 3}), {.stride = {2}, .padding = {0, 1, 0, 1}});
       }},
      {"conv3d_16_32",
       [] {
         return E({1, 16, 16, 32, 32}).Conv2d(E({32, 16, 3, 3, 3}), {.padding = {1}});
       }},
      {"conv_5x5_odd_1023",
       [] {
         return E({1, 3, 1023, 1023}).Conv2d(E({8, 3, 5, 5}), {.padding = {2}});
       }},
      // more views past 2^31 elements
      {"big_transpose_contiguous",
       [] {
         return E({65536, 65536}).T().Contiguous();
       }},
      {"big_pad_1d_cross",
       [] {
         return E({(int64_t{1} << 31) - 4}).Pad({{0, 8}}) + 1;
       }},
      {"big_expand_mul",
       [] {
         return E({8, 1, 4096}).Expand({8, 65536, 4096}) * E({65536, 4096});
       }},
      // more dtypes, matmuls and reductions
      {"int64_sum_1m", [] { return E({1 << 20}, i64).Sum(); }},
      {"where_relu_mask_4096",
       [] {
         return (E({4096, 4096}) > 0).Where(E({4096, 4096}), 0.0);
       }},
      {"softmax_middle_axis",
       [] {
         return E({16, 1000, 64}).Softmax(1);
       }},
      {"matmul_odd_k_7",
       [] {
         return E({3001, 7}).Matmul(E({7, 1023}));
       }},
      {"matmul_decode_11008",
       [] {
         return E({1, 4096}).Matmul(E({4096, 11008}));
       }},
      {"llama_mlp_4096",
       [] {
         return LlamaMlp(E({1, 32, 4096}), E({4096, 11008}), E({4096, 11008}), E({11008, 4096}));
       }},
      {"int_mean_rows",
       [] {
         return E({1000, 3001}, i).Mean(1);
       }},
      {"half_matmul_odd",
       [] {
         return E({1000, 3001}, h).Matmul(E({3001, 1023}, h));
       }},
      {"bfloat16_sum_rows",
       [] {
         return E({4096, 4096}, bf).Sum(1);
       }},
      {"float64_matmul_1000",
       [] {
         return E({1000, 1000}, dtypes::kFloat64).Matmul(E({1000, 1000}, dtypes::kFloat64));
       }},
      {"cumsum_3d_axis1",
       [] {
         return E({8, 1025, 64}).Cumsum(1);
       }},
      {"cummax_1m", [] { return E({1 << 20}).Cummax(0); }},
      {"std_all_3001",
       [] {
         return E({1000, 3001}).Std();
       }},
      {"argmax_flat_3001",
       [] {
         return E({1000, 3001}).Argmax();
       }},
      {"one_hot_151936", [] { return E({64}, i).OneHot(151936); }},
      {"layernorm_two_axes",
       [] {
         return E({8, 196, 768}).Layernorm(Dims{1, 2});
       }},
      {"randn_half_1000x3001",
       [] {
         return Tensor::Randn({1000, 3001}, h);
       }},
      {"rand_float64_3001",
       [] {
         return Tensor::Rand({3001, 1001}, dtypes::kFloat64);
       }},
      {"attention_scores_scaled",
       [] {
         return (E({1, 16, 512, 64}).Matmul(E({1, 16, 512, 64}).Transpose(-2, -1)) / 8).Softmax(-1);
       }},
      {"repeat_rows_3001",
       [] {
         return E({1, 3001}).Repeat({1000, 1});
       }},
      {"stack_dim1_4096",
       [] {
         return Tensor::Stack({E({4096, 1000}), E({4096, 1000})}, 1);
       }},
      {"flip_3d_odd",
       [] {
         return E({1023, 257, 3}).Flip({0, 2}) + 1;
       }},
      {"quantize_int8_4096",
       [] {
         return (E({4096, 4096}) * 127).Round().Clip(-128, 127).Cast(i8);
       }},
      {"gelu_half_3072",
       [] {
         return E({1024, 3072}, h).Gelu();
       }},
      {"tril_ones_2048",
       [] {
         return Tensor::Ones({2048, 2048}).Tril();
       }},
      {"eye_3001", [] { return Tensor::Eye(3001); }},
  };
  return *programs;
}

// tinygrad's C source with uopc's documented departure applied (docs/parity.md, "Integer constant folding
// wraps"): tinygrad folds unsigned int constants with Python's unbounded integers and prints literals such as
// `68719476736u` (2^36, in threefry's key schedule at these sizes), which uopc wraps to the dtype: a literal
// that wraps to 0 disappears with the `+` before it, any other becomes its value mod 2^32.
std::string WrapUnsignedLiterals(absl::string_view src) {
  std::string out;
  size_t k = 0;
  while (k < src.size()) {
    const bool starts_literal =
        absl::ascii_isdigit(src[k]) &&
        (k == 0 || !(absl::ascii_isalnum(src[k - 1]) || src[k - 1] == '_' || src[k - 1] == '.'));
    if (!starts_literal) {
      out += src[k++];
      continue;
    }
    size_t end = k;
    while (end < src.size() && absl::ascii_isdigit(src[end])) ++end;
    const bool unsigned_int =
        end < src.size() && src[end] == 'u' && (end + 1 == src.size() || !absl::ascii_isalnum(src[end + 1]));
    absl::uint128 value = 0;
    bool wide = false;
    for (size_t d = k; d < end && unsigned_int; ++d) {
      value = value * 10 + (src[d] - '0');
      if (value > std::numeric_limits<uint64_t>::max()) break;
      wide = value > std::numeric_limits<uint32_t>::max();
    }
    if (!unsigned_int || !wide) {
      absl::StrAppend(&out, src.substr(k, end - k));
      k = end;
      continue;
    }
    const uint64_t wrapped = static_cast<uint64_t>(value) & 0xffffffffu;
    if (wrapped == 0 && !out.empty() && out.back() == '+') {
      out.pop_back();
    } else {
      absl::StrAppend(&out, wrapped);
      out += 'u';
    }
    k = end + 1;
  }
  return out;
}

// What this program makes that differs from tinygrad's, one entry per field ("graph: ...", "kernel 3
// (r_512_1024_4) ast: ..."); empty when everything is equal. Kernels whose source equals tinygrad's only
// after WrapUnsignedLiterals are listed in `departures`.
std::vector<std::string> Differences(const Program& program, const nlohmann::json& want,
                                     std::vector<std::string>* departures) {
  Tensor::ManualSeed(0);
  Outputs outs = program();
  for (const Tensor& t : outs.tensors) {
    if (!t.ok()) return {"building the program: " + t.status().ToString()};
  }
  std::vector<std::string> diffs;
  if (std::string d = GraphFirstDifference(CanonicalSink(outs.tensors), want["graph"].get<std::string>());
      !d.empty()) {
    diffs.push_back("graph: " + d);
  }
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outs.tensors) roots.push_back(t.uop());
  absl::StatusOr<Schedule> schedule = CreateSchedule(UOp::Sink(roots));
  if (!schedule.ok()) {
    diffs.push_back("schedule: " + schedule.status().ToString());
    return diffs;
  }
  const nlohmann::json& kernels = want["kernels"];
  if (schedule->items.size() != kernels.size()) {
    diffs.push_back(
        absl::StrCat("kernel count: uopc ", schedule->items.size(), ", tinygrad ", kernels.size()));
  }
  ClangRenderer clang;
  KernelNameCounter names;
  absl::flat_hash_map<const UOp*, absl::StatusOr<ProgramSpec>> compiled;  // a repeated AST compiles once
  for (size_t k = 0; k < schedule->items.size() && k < kernels.size(); ++k) {
    const UOpPtr& ast = schedule->items[k].ast;
    const nlohmann::json& w = kernels[k];
    const std::string want_ast = w["ast"].get<std::string>();
    std::string label =
        absl::StrCat("kernel ", k, w.contains("name") ? " (" + w["name"].get<std::string>() + ")" : "");
    if (ast->op() != Ops::SINK || !w.contains("name")) {
      std::string got_op(OpName(ast->op()));
      if (ast->op() == Ops::SINK || got_op != want_ast) {
        diffs.push_back(absl::StrCat(label, ": uopc has ", got_op, ", tinygrad ",
                                     w.contains("name") ? "a kernel" : want_ast));
      }
      continue;
    }
    if (std::string d = GraphFirstDifference(ast, want_ast); !d.empty())
      diffs.push_back(label + " ast: " + d);
    auto it = compiled.find(ast.get());
    if (it == compiled.end()) {
      it = compiled.emplace(ast.get(), CompileKernel(ast, clang, CompileOptions{}, &names)).first;
    }
    if (!it->second.ok()) {
      diffs.push_back(label + " compile: " + it->second.status().ToString());
      continue;
    }
    const ProgramSpec& p = *it->second;
    std::vector<std::string> opts;
    for (const Opt& o : p.applied_opts) opts.push_back(o.ToString());
    std::string got_opts = absl::StrJoin(opts, "\n");
    std::string want_opts = absl::StrJoin(w["opts"].get<std::vector<std::string>>(), "\n");
    if (std::string d = FirstDifferentLine(got_opts, want_opts); !d.empty())
      diffs.push_back(label + " opts: " + d);
    if (p.name != w["name"].get<std::string>()) diffs.push_back(label + " name: uopc " + p.name);
    const std::string want_src = w["src"].get<std::string>();
    if (p.src == want_src) continue;
    if (p.src == WrapUnsignedLiterals(want_src)) {
      departures->push_back(label + ": unsigned literals wrapped");
    } else {
      diffs.push_back(label + " src: " + FirstDifferentLine(p.src, want_src));
    }
  }
  return diffs;
}

TEST(ScaleProgramsTest, EveryCorpusProgramIsWritten) {
  std::map<std::string, nlohmann::json> corpus = ReadJsonlByProgram(kCorpus);
  ASSERT_EQ(corpus.size(), Programs().size());
  for (const auto& [name, program] : Programs()) EXPECT_TRUE(corpus.count(name)) << name;
}

TEST(ScaleProgramsTest, WrapUnsignedLiteralsWrapsOnlyWideUnsignedLiterals) {
  EXPECT_EQ(WrapUnsignedLiterals("((a>>19u)+68719476736u)"), "((a>>19u))");
  EXPECT_EQ(WrapUnsignedLiterals("(a+316189704192u)"), "(a+2657091584u)");
  EXPECT_EQ(WrapUnsignedLiterals("(a+4294967295u+4294967296ull+4294967296+x4294967296u)"),
            "(a+4294967295u+4294967296ull+4294967296+x4294967296u)");
}

// Every program's outcome, for the summary printed after the last test.
struct Outcome {
  std::vector<std::string> equal, departing, failing;
};
Outcome& Outcomes() {
  static Outcome* outcome = new Outcome;
  return *outcome;
}

class SummaryPrinter : public ::testing::Environment {
 public:
  void TearDown() override {
    const Outcome& o = Outcomes();
    if (o.equal.empty() && o.departing.empty() && o.failing.empty()) return;
    std::cout << o.equal.size() << " programs equal to tinygrad byte for byte, " << o.departing.size()
              << " with documented departures (" << absl::StrJoin(o.departing, ", ") << "), "
              << o.failing.size() << " differ (" << absl::StrJoin(o.failing, ", ") << ")\n";
  }
};
::testing::Environment* const kSummary = ::testing::AddGlobalTestEnvironment(new SummaryPrinter);

class ScaleProgramTest : public ::testing::TestWithParam<int> {};

TEST_P(ScaleProgramTest, KernelsAreTinygrads) {
  static const auto* corpus = new std::map<std::string, nlohmann::json>(ReadJsonlByProgram(kCorpus));
  const auto& [name, program] = Programs()[GetParam()];
  auto it = corpus->find(name);
  ASSERT_NE(it, corpus->end()) << name << " is not in " << kCorpus;
  std::vector<std::string> departures;
  std::vector<std::string> diffs = Differences(program, it->second, &departures);
  if (!diffs.empty()) {
    Outcomes().failing.push_back(name);
  } else if (!departures.empty()) {
    Outcomes().departing.push_back(name);
  } else {
    Outcomes().equal.push_back(name);
  }
  if (!departures.empty()) {
    std::cout << name << ": documented departures in " << absl::StrJoin(departures, "; ") << "\n";
  }
  EXPECT_TRUE(diffs.empty()) << name << " differs from tinygrad in " << diffs.size() << " field(s):\n  "
                             << absl::StrJoin(diffs, "\n  ");
}

INSTANTIATE_TEST_SUITE_P(EveryProgram, ScaleProgramTest,
                         ::testing::ValuesIn(TestSampleOf(static_cast<int>(Programs().size()))),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return Programs()[info.param].first;
                         });

}  // namespace
}  // namespace uopc
