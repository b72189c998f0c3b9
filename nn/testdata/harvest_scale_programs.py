# Writes scale_programs.jsonl: tensor programs at the sizes models use (random numbers and aranges of millions of
# elements, reductions and norms over 4096-wide rows, transformer matmuls and attention, ResNet convolutions,
# vocabulary-sized embeddings and softmaxes, half and int8 kernels, views of more than 2^31 elements, layer
# initialisers; then the same families at odd and prime sizes and in other variants: strided, grouped, dilated,
# transposed, 1-D and 3-D convolutions, other pools, bfloat16 and small ints, whole transformer blocks), as tinygrad
# v0.10.3 schedules and compiles them for the CPU (clang) target. Inputs are Tensor.empty, so nothing is
# allocated or run: a line holds the program's tensor graph (the SINK of its outputs,
# UNIQUE args renumbered in toposort order) and, for each schedule item in order, the kernel AST in textual IR (or
# the op of a non-kernel item, "COPY"), its opts (tensor cores if any apply, else the hand-coded ones, as
# tinygrad's get_kernel), its name and its C source. Kernel names are numbered afresh for each program, and a
# kernel whose AST appeared earlier in the program reuses that compile, as tinygrad's runner cache does.
# //nn:scale_programs_test builds the same programs with the C++ API and compares every field.
# Adding a program: one line in PROGRAMS (a Python expression: a Tensor or a tuple of Tensors, after
# Tensor.manual_seed(0)), one entry in the test's table. Run from the root of this checkout:
#   CPU=1 python3 nn/testdata/harvest_scale_programs.py /tmp/tg3 > nn/testdata/scale_programs.jsonl
import json, math, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, Device, dtypes, nn
from tinygrad.ops import UOp, Ops
from tinygrad.codegen.kernel import Kernel
from tinygrad.engine.realize import get_kernel
from tinygrad_harvest import to_ir

f, h, i, i8 = dtypes.float32, dtypes.half, dtypes.int32, dtypes.int8
bf, u8, i16, i64 = dtypes.bfloat16, dtypes.uint8, dtypes.int16, dtypes.int64

def E(*shape, dtype=f): return Tensor.empty(*shape, dtype=dtype)

def embedding(vocab, dim, idx):  # nn.Embedding's forward with an empty (not drawn) table
  emb = nn.Embedding.__new__(nn.Embedding)
  emb.vocab_sz, emb.embed_sz, emb.weight = vocab, dim, E(vocab, dim)
  return emb(idx)

def gpt2_attention(x, w_qkv, b_qkv, w_proj, heads):  # a GPT-2 attention block: qkv, causal SDPA, projection
  b, s, d = x.shape
  q, k, v = x.linear(w_qkv, b_qkv).split(d, dim=2)
  q, k, v = [t.reshape(b, s, heads, d // heads).transpose(1, 2) for t in (q, k, v)]
  return q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(b, s, d) @ w_proj

def transformer_block(x, heads, hidden):  # a pre-norm GPT-2 block: attention and a gelu MLP, both residual
  d = x.shape[-1]
  a = x + gpt2_attention(x.layernorm() * E(d) + E(d), E(d, 3 * d), E(3 * d), E(d, d), heads)
  return a + (a.layernorm() * E(d) + E(d)).linear(E(d, hidden), E(hidden)).gelu().linear(E(hidden, d), E(d))

def llama_mlp(x, w1, w3, w2): return ((x @ w1).silu() * (x @ w3)) @ w2  # LLaMA's gated MLP, weights empty

def params(layer): return tuple(nn.state.get_parameters(layer))

PROGRAMS = {
  # random numbers
  "rand_4096x4096": "Tensor.rand(4096, 4096)",
  "rand_1024x1024": "Tensor.rand(1024, 1024)",
  "randn_1024x1024": "Tensor.randn(1024, 1024)",
  "randn_4096x4096": "Tensor.randn(4096, 4096)",
  "randint_1024x1024": "Tensor.randint(1024, 1024, low=0, high=50257)",
  "rand_half_2048x2048": "Tensor.rand(2048, 2048, dtype=h)",
  # aranges and cumulative sums
  "arange_1m": "Tensor.arange(1 << 20)",
  "arange_float_4m": "Tensor.arange(0, 4.0, 1e-6)",
  "arange_16m_mul": "Tensor.arange(1 << 24) * 3",
  "cumsum_1m": "E(1 << 20).cumsum()",
  "cumsum_rows_4096": "E(1024, 4096).cumsum(1)",
  # reductions
  "sum_16m": "E(4096, 4096).sum()",
  "sum_axis0_4096": "E(4096, 4096).sum(0)",
  "max_rows_4096": "E(2048, 4096).max(1)",
  "argmax_vocab": "E(8, 50257).argmax(-1)",
  "mean_global_pool": "E(32, 2048, 7, 7).mean((2, 3))",
  # normalizations
  "layernorm_4096": "E(512, 4096).layernorm()",
  "layernorm_affine_768": "E(2048, 768).layernorm() * E(768) + E(768)",
  "rmsnorm_4096": "E(1024, 4096) * (E(1024, 4096).square().mean(-1, keepdim=True) + 1e-6).rsqrt()",
  "batchnorm_resnet": "E(32, 64, 56, 56).batchnorm(E(64), E(64), E(64), E(64))",
  "batch_stats_var": "E(16, 256, 14, 14).var((0, 2, 3))",
  # softmax, matmuls and linear layers
  "softmax_vocab": "E(16, 50257).softmax(-1)",
  "softmax_attn_scores": "E(12, 1024, 1024).softmax(-1)",
  "log_softmax_32000": "E(512, 32000).log_softmax()",
  "matmul_512x768x768": "E(512, 768) @ E(768, 768)",
  "matmul_2048x4096x4096": "E(2048, 4096) @ E(4096, 4096)",
  "matvec_4096": "E(4096, 4096) @ E(4096)",
  "linear_gelu_3072": "E(1024, 768).linear(E(768, 3072), E(3072)).gelu()",
  "linear_1024_4096_relu": "E(2048, 1024).linear(E(1024, 4096), E(4096)).relu()",
  "cross_entropy_vocab": "E(512, 50257).sparse_categorical_crossentropy(E(512, dtype=i))",
  # convolutions and pooling
  "conv3x3_64_56": "E(1, 64, 56, 56).conv2d(E(64, 64, 3, 3), padding=1)",
  "conv_stem_7x7_s2": "E(1, 3, 224, 224).conv2d(E(64, 3, 7, 7), stride=2, padding=3)",
  "conv1x1_256_64_batch8": "E(8, 256, 56, 56).conv2d(E(64, 256, 1, 1))",
  "conv3x3_bias_relu_128": "E(8, 128, 28, 28).conv2d(E(128, 128, 3, 3), E(128), padding=1).relu()",
  "maxpool_3x3_s2_112": "E(1, 64, 112, 112).max_pool2d(kernel_size=(3, 3), stride=2, padding=1)",
  "avgpool_2x2_56": "E(8, 64, 56, 56).avg_pool2d()",
  # embeddings
  "embedding_gpt2": "embedding(50257, 768, E(1, 1024, dtype=i))",
  "one_hot_vocab": "E(1024, dtype=i).one_hot(50257)",
  # attention
  "sdpa_1024_12x64": "E(1, 12, 1024, 64).scaled_dot_product_attention(E(1, 12, 1024, 64), E(1, 12, 1024, 64))",
  "sdpa_causal_1024_12x64": "E(1, 12, 1024, 64).scaled_dot_product_attention(E(1, 12, 1024, 64), E(1, 12, 1024, 64), is_causal=True)",
  "gpt2_attention_block": "gpt2_attention(E(1, 1024, 768), E(768, 2304), E(2304), E(768, 768), 12)",
  # half and int8
  "matmul_half_2048x4096": "E(2048, 4096, dtype=h) @ E(4096, 4096, dtype=h)",
  "half_elementwise_4096": "(E(4096, 4096, dtype=h) * 2 + E(4096, 4096, dtype=h)).relu()",
  "half_sum_rows": "E(4096, 4096, dtype=h).sum(1)",
  "int8_add_4096": "E(4096, 4096, dtype=i8) + E(4096, 4096, dtype=i8)",
  "int8_sum_rows": "E(1024, 4096, dtype=i8).sum(1)",
  "int8_dequant_matmul": "E(512, 4096) @ (E(4096, 4096, dtype=i8).cast(f) * E(1, 4096))",
  # views of more than 2^31 elements
  "broadcast_sum_2p32": "(E(65536, 1) + E(1, 65536)).sum()",
  "big_shrink_65536": "E(65536, 65536)[:, 1000:1010] * 2",
  "big_sum_rows_65536": "E(65536, 65536).sum(1)",
  "big_cast_half_3g": "E(50000, 60000, dtype=h).float()",
  "big_sum_all_2p32": "E(65536, 65536).sum()",
  "big_pad_46341": "E(46341, 46341).pad(((1, 1), (1, 1))) * 2",
  "big_flip_2p31": "E((1 << 31) + 8).flip(0) + 1",
  "big_transpose_rows": "E(65536, 65536).T[:8] + 1",
  "big_last_row": "E(65536, 65536)[-1] * 2",
  # layer initialisers
  "linear_init_4096": "tuple(nn.state.get_parameters(nn.Linear(4096, 4096)))",
  "kaiming_uniform_4096": "Tensor.kaiming_uniform(4096, 4096, a=math.sqrt(5))",
  "glorot_uniform_4096x1024": "Tensor.glorot_uniform(4096, 1024)",
  "normal_init_gpt2": "Tensor.normal(50257, 768, mean=0.0, std=0.02)",
  "scaled_uniform_1024": "Tensor.scaled_uniform(1024, 1024)",
  # ---- second set: other sizes (odd, prime, vocabulary-sized) and variants of the same families ----
  # random numbers
  "rand_1000x3001": "Tensor.rand(1000, 3001)",
  "rand_odd_numel_3001x7": "Tensor.rand(3001, 7)",
  "randn_1023x1000": "Tensor.randn(1023, 1000)",
  "rand_4d_8x3x224x224": "Tensor.rand(8, 3, 224, 224)",
  "rand_half_odd_1001": "Tensor.rand(1001, 1001, dtype=h)",
  "rand_bfloat16_1000": "Tensor.rand(1000, 1000, dtype=bf)",
  "randint_int64_1000x3001": "Tensor.randint(1000, 3001, low=0, high=32000, dtype=i64)",
  "randint_uint8_1023": "Tensor.randint(1023, 1023, low=0, high=256, dtype=u8)",
  "randint_int16_4097x33": "Tensor.randint(4097, 33, low=-100, high=100, dtype=i16)",
  "uniform_qwen_vocab": "Tensor.uniform(151936, 64, low=-0.5, high=0.5)",
  "rand_then_randn": "(Tensor.rand(1000, 1000), Tensor.randn(3001))",
  # aranges and cumulative ops
  "arange_start_step": "Tensor.arange(10, 2**20, 3)",
  "arange_negative_step": "Tensor.arange(1000000, 0, -7)",
  "arange_float_2m": "Tensor.arange(-1.0, 1.0, 2**-20)",
  "arange_1g": "Tensor.arange(1 << 30)",
  "arange_prime_100000007": "Tensor.arange(100000007)",
  "cumsum_axis0_4096x1000": "E(4096, 1000).cumsum(0)",
  "cumsum_4m": "E(1 << 22).cumsum()",
  "cumsum_rows_3001": "E(32, 3001).cumsum(1)",
  "cummax_rows_1000": "E(64, 1000).cummax(1)",
  "cumsum_int_1m": "E(1 << 20, dtype=i).cumsum()",
  # reductions
  "argmax_axis0_4096x1000": "E(4096, 1000).argmax(0)",
  "argmin_axis0_3001x1023": "E(3001, 1023).argmin(0)",
  "std_rows_3001": "E(1000, 3001).std(1)",
  "var_4d_no_correction": "E(8, 64, 28, 28).var((0, 2, 3), correction=0)",
  "logsumexp_32000": "E(64, 32000).logsumexp(-1)",
  "max_3d_axis1": "E(16, 1023, 257).max(1)",
  "half_sum_axis0_3001": "E(3001, 1000, dtype=h).sum(0)",
  "any_rows_4096x1000": "(E(4096, 1000) > 0).any(1)",
  "prod_rows_1000x64": "E(1000, 64).prod(1)",
  # normalizations
  "layernorm_module_gpt2_3d": "nn.LayerNorm(768)(E(8, 1024, 768))",
  "layernorm_3001": "E(1023, 3001).layernorm()",
  "groupnorm_resnet_256": "nn.GroupNorm(32, 256)(E(8, 256, 28, 28))",
  "batchnorm_2048_7x7": "E(32, 2048, 7, 7).batchnorm(E(2048), E(2048), E(2048), E(2048))",
  "rmsnorm_module_4096": "nn.RMSNorm(4096)(E(2, 2048, 4096))",
  # softmax, matmuls and linear layers
  "softmax_axis0_3001x1000": "E(3001, 1000).softmax(0)",
  "softmax_32_heads_512": "E(1, 32, 512, 512).softmax(-1)",
  "matmul_1000x3001x1023": "E(1000, 3001) @ E(3001, 1023)",
  "batched_matmul_8x512x64": "E(8, 512, 64) @ E(8, 64, 512)",
  "matmul_4d_heads": "E(2, 16, 512, 64) @ E(2, 16, 64, 512)",
  "matmul_transposed_b": "E(1024, 768) @ E(3072, 768).T",
  "matmul_transposed_a": "E(768, 1024).T @ E(768, 512)",
  "lm_head_matvec_32000": "E(32000, 4096) @ E(4096)",
  "vecmat_4096x32000": "E(4096) @ E(4096, 32000)",
  "linear_lm_head_3d": "E(1, 128, 4096).linear(E(4096, 32000))",
  "matmul_bfloat16_1024": "E(1024, 1024, dtype=bf) @ E(1024, 1024, dtype=bf)",
  "matmul_half_acc_float": "E(1000, 1000, dtype=h).matmul(E(1000, 1000, dtype=h), dtype=f)",
  "int8_matmul_int32_acc": "E(512, 1024, dtype=i8).matmul(E(1024, 1024, dtype=i8), dtype=i)",
  # convolutions and pooling
  "conv3x3_s2_128_256": "E(8, 128, 56, 56).conv2d(E(256, 128, 3, 3), stride=2, padding=1)",
  "conv1x1_s2_downsample": "E(8, 256, 56, 56).conv2d(E(512, 256, 1, 1), stride=2)",
  "conv_depthwise_96": "E(8, 96, 112, 112).conv2d(E(96, 1, 3, 3), groups=96, padding=1)",
  "conv_groups_32": "E(4, 128, 28, 28).conv2d(E(128, 4, 3, 3), groups=32, padding=1)",
  "conv_dilation_2": "E(2, 64, 64, 64).conv2d(E(64, 64, 3, 3), dilation=2, padding=2)",
  "conv_alexnet_11x11_s4": "E(4, 3, 227, 227).conv2d(E(96, 3, 11, 11), stride=4)",
  "conv1d_3001": "E(8, 64, 3001).conv2d(E(128, 64, 3), padding=1)",
  "conv_transpose_28_to_56": "E(1, 64, 28, 28).conv_transpose2d(E(64, 32, 4, 4), stride=2, padding=1)",
  "maxpool_2x2_112": "E(8, 64, 112, 112).max_pool2d()",
  "maxpool_5x5_s3_99": "E(4, 32, 99, 99).max_pool2d(kernel_size=(5, 5), stride=3)",
  "avgpool_3x3_s1_pad1": "E(8, 192, 28, 28).avg_pool2d(kernel_size=(3, 3), stride=1, padding=1)",
  "avgpool_7x7_global": "E(32, 2048, 7, 7).avg_pool2d(kernel_size=(7, 7))",
  "avgpool_exclude_pad": "E(4, 64, 56, 56).avg_pool2d(kernel_size=(3, 3), stride=2, padding=1, count_include_pad=False)",
  # embeddings and gathers
  "embedding_llama_32000": "embedding(32000, 4096, E(2, 512, dtype=i))",
  "embedding_qwen_151936": "embedding(151936, 896, E(1, 128, dtype=i))",
  "gather_rows_3001": "E(1000, 3001).gather(1, E(1000, 7, dtype=i))",
  # attention
  "sdpa_causal_2048_32x128": "E(1, 32, 2048, 128).scaled_dot_product_attention(E(1, 32, 2048, 128), E(1, 32, 2048, 128), is_causal=True)",
  "sdpa_mask_512_16x64": "E(4, 16, 512, 64).scaled_dot_product_attention(E(4, 16, 512, 64), E(4, 16, 512, 64), attn_mask=E(4, 1, 512, 512, dtype=dtypes.bool))",
  "gpt2_attention_16_heads": "gpt2_attention(E(2, 512, 1024), E(1024, 3072), E(3072), E(1024, 1024), 16)",
  "transformer_block_768": "transformer_block(E(1, 256, 768), 12, 3072)",
  # half, bfloat16 and small ints
  "half_softmax_32000": "E(32, 32000, dtype=h).softmax(-1)",
  "half_layernorm_3072": "E(512, 3072, dtype=h).layernorm()",
  "bfloat16_mul_float": "(E(1000, 3001, dtype=bf) * E(1000, 3001, dtype=bf)).float()",
  "uint8_image_normalize": "E(8, 3, 224, 224, dtype=u8).float() / 255 - 0.5",
  "int16_add_const": "E(3001, 1000, dtype=i16) + 7",
  "int8_max_axis0": "E(1000, 3001, dtype=i8).max(0)",
  "uint8_sum_1m": "E(1 << 20, dtype=u8).sum()",
  # views of more than 2^31 elements
  "big_pad_cross_2p31": "E(46340, 46340).pad(((5, 5), (5, 5))) + 1",
  "big_outer_product": "E(46341, 1) * E(1, 46341)",
  "big_reshape_tail": "E(65536, 65536).reshape(1 << 20, 4096)[-3:] + 1",
  "big_sum_axis0_65536x40000": "E(65536, 40000).sum(0)",
  "big_step_slice": "E(65536, 65536)[::3, ::1000] * 2",
  "big_permute_3d": "E(1024, 2048, 1025).permute(2, 0, 1)[:2] + 1",
  "big_max_rows_40000": "E(40000, 65536).max(1)",
  "big_cat_past_2p31": "E(32768, 65536).cat(E(10, 65536))",
  "big_argmax_rows": "E(65536, 40000).argmax(1)",
  # layer initialisers and losses
  "conv2d_init_256": "params(nn.Conv2d(256, 256, 3))",
  "embedding_init_gpt2": "params(nn.Embedding(50257, 768))",
  "layernorm_init_768": "params(nn.LayerNorm(768))",
  "linear_init_3001x1000": "params(nn.Linear(3001, 1000))",
  "one_hot_32000": "E(2048, dtype=i).one_hot(32000)",
  "cross_entropy_32000_3d": "E(4, 512, 32000).sparse_categorical_crossentropy(E(4, 512, dtype=i))",
  "cross_entropy_smoothing_1000": "E(1024, 1000).sparse_categorical_crossentropy(E(1024, dtype=i), label_smoothing=0.1)",
  "bce_logits_4096x1000": "E(4096, 1000).binary_crossentropy_logits(E(4096, 1000))",
  "triu_mask_2048": "E(2048, 2048).triu(1)",
  # more convolutions and pools: transposed (strides 1-3, output padding, groups, 1-D), dilated, 3-D, odd
  "conv_transpose_s3_outpad": "E(2, 32, 17, 17).conv_transpose2d(E(32, 16, 5, 5), stride=3, padding=2, output_padding=1)",
  "conv_transpose1d_1000": "E(4, 64, 1000).conv_transpose2d(E(64, 32, 4), stride=2, padding=1)",
  "conv_transpose_groups_4": "E(1, 64, 28, 28).conv_transpose2d(E(64, 16, 3, 3), groups=4, stride=2)",
  "conv_transpose_s1_14": "E(1, 128, 14, 14).conv_transpose2d(E(128, 64, 3, 3), padding=1)",
  "maxpool_3x3_s2_p1_odd_57": "E(2, 64, 57, 57).max_pool2d(kernel_size=(3, 3), stride=2, padding=1)",
  "maxpool_dilation_2": "E(2, 32, 64, 64).max_pool2d(kernel_size=(3, 3), stride=1, dilation=2)",
  "avgpool1d_4_3001": "E(8, 64, 3001).avg_pool2d(kernel_size=(4,))",
  "conv_asym_pad_s2": "E(1, 32, 225, 225).conv2d(E(64, 32, 3, 3), stride=2, padding=(0, 1, 0, 1))",
  "conv3d_16_32": "E(1, 16, 16, 32, 32).conv2d(E(32, 16, 3, 3, 3), padding=1)",
  "conv_5x5_odd_1023": "E(1, 3, 1023, 1023).conv2d(E(8, 3, 5, 5), padding=2)",
  # more views past 2^31 elements
  "big_transpose_contiguous": "E(65536, 65536).T.contiguous()",
  "big_pad_1d_cross": "E((1 << 31) - 4).pad(((0, 8),)) + 1",
  "big_expand_mul": "E(8, 1, 4096).expand(8, 65536, 4096) * E(65536, 4096)",
  # more dtypes, matmuls and reductions
  "int64_sum_1m": "E(1 << 20, dtype=i64).sum()",
  "where_relu_mask_4096": "(E(4096, 4096) > 0).where(E(4096, 4096), 0.0)",
  "softmax_middle_axis": "E(16, 1000, 64).softmax(1)",
  "matmul_odd_k_7": "E(3001, 7) @ E(7, 1023)",
  "matmul_decode_11008": "E(1, 4096) @ E(4096, 11008)",
  "llama_mlp_4096": "llama_mlp(E(1, 32, 4096), E(4096, 11008), E(4096, 11008), E(11008, 4096))",
  "int_mean_rows": "E(1000, 3001, dtype=i).mean(1)",
  "half_matmul_odd": "E(1000, 3001, dtype=h) @ E(3001, 1023, dtype=h)",
  "bfloat16_sum_rows": "E(4096, 4096, dtype=bf).sum(1)",
  "float64_matmul_1000": "E(1000, 1000, dtype=dtypes.float64) @ E(1000, 1000, dtype=dtypes.float64)",
  "cumsum_3d_axis1": "E(8, 1025, 64).cumsum(1)",
  "cummax_1m": "E(1 << 20).cummax(0)",
  "std_all_3001": "E(1000, 3001).std()",
  "argmax_flat_3001": "E(1000, 3001).argmax()",
  "one_hot_151936": "E(64, dtype=i).one_hot(151936)",
  "layernorm_two_axes": "E(8, 196, 768).layernorm(axis=(1, 2))",
  "randn_half_1000x3001": "Tensor.randn(1000, 3001, dtype=h)",
  "rand_float64_3001": "Tensor.rand(3001, 1001, dtype=dtypes.float64)",
  "attention_scores_scaled": "(E(1, 16, 512, 64) @ E(1, 16, 512, 64).transpose(-2, -1) / 8).softmax(-1)",
  "repeat_rows_3001": "E(1, 3001).repeat(1000, 1)",
  "stack_dim1_4096": "E(4096, 1000).stack(E(4096, 1000), dim=1)",
  "flip_3d_odd": "E(1023, 257, 3).flip(0, 2) + 1",
  "quantize_int8_4096": "(E(4096, 4096) * 127).round().clip(-128, 127).cast(i8)",
  "gelu_half_3072": "E(1024, 3072, dtype=h).gelu()",
  "tril_ones_2048": "Tensor.ones(2048, 2048).tril()",
  "eye_3001": "Tensor.eye(3001)",
}

renderer = Device["CPU"].renderer
ns = dict(E=E, Tensor=Tensor, dtypes=dtypes, nn=nn, math=math, f=f, h=h, i=i, i8=i8, bf=bf, u8=u8, i16=i16, i64=i64,
          embedding=embedding, gpt2_attention=gpt2_attention, transformer_block=transformer_block, params=params,
          llama_mlp=llama_mlp)
only = set(sys.argv[2:])
for name, python in PROGRAMS.items():
  if only and name not in only: continue
  Tensor.manual_seed(0)
  Kernel.kernel_cnt.clear()
  out = eval(python, ns)
  outs = list(out) if isinstance(out, tuple) else [out]
  graph = to_ir(UOp.sink(*[t.lazydata for t in outs]), {})
  compiled, kernels = {}, []
  for si in outs[0].schedule(*outs[1:]):
    if si.ast.op is not Ops.SINK:
      kernels.append({"ast": si.ast.op.name})
      continue
    if si.ast.key not in compiled:
      k = get_kernel(renderer, si.ast)
      prog = k.to_program()
      compiled[si.ast.key] = {"opts": [str(o) for o in k.applied_opts], "name": prog.function_name, "src": prog.src}
    kernels.append({"ast": to_ir(si.ast, {}), **compiled[si.ast.key]})
  print(json.dumps({"program": name, "python": python, "graph": graph, "kernels": kernels}), flush=True)
