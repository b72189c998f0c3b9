# Writes scale_programs.jsonl: tensor programs at the sizes models use (random numbers and aranges of millions of
# elements, reductions and norms over 4096-wide rows, transformer matmuls and attention, ResNet convolutions,
# vocabulary-sized embeddings and softmaxes, half and int8 kernels, views of more than 2^31 elements, layer
# initialisers), as tinygrad v0.10.3 schedules and compiles them for the CPU (clang) target. Inputs are
# Tensor.empty, so nothing is allocated or run: a line holds the program's tensor graph (the SINK of its outputs,
# UNIQUE args renumbered in toposort order) and, for each schedule item in order, the kernel AST in textual IR (or
# the op of a non-kernel item, "COPY"), its opts (tensor cores if any apply, else the hand-coded ones, as
# tinygrad's get_kernel), its name and its C source. Kernel names are numbered afresh for each program, and a
# kernel whose AST appeared earlier in the program reuses that compile, as tinygrad's runner cache does.
# //nn:scale_programs_test builds the same programs with the C++ API and compares every field.
# Adding a program: one line in PROGRAMS (a Python expression: a Tensor or a tuple of Tensors, after
# Tensor.manual_seed(0)), one entry in the test's table. Run from the root of this checkout:
#   CPU=1 python3 nn/testdata/harvest_scale_programs.py /tmp/tg3 > nn/testdata/scale_programs.jsonl
import json, math, sys
sys.path.insert(0, sys.argv[1])
from tinygrad import Tensor, Device, dtypes, nn
from tinygrad.ops import UOp, Ops
from tinygrad.dtype import DType, PtrDType
from tinygrad.codegen.kernel import Kernel
from tinygrad.engine.realize import get_kernel

NAMES = {'float16':dtypes.half,'bfloat16':dtypes.bfloat16,'float32':dtypes.float32,'float64':dtypes.float64,'int8':dtypes.int8,
  'uint8':dtypes.uint8,'int16':dtypes.int16,'uint16':dtypes.uint16,'int32':dtypes.int32,'uint32':dtypes.uint32,'int64':dtypes.int64,
  'uint64':dtypes.uint64,'bool':dtypes.bool,'void':dtypes.void}
REV = {v.name: k for k, v in NAMES.items()}

# the textual IR of docs/ir.md, as schedule/testdata/harvest_tensor_programs.py writes it
def ir_dt(d):
  if isinstance(d, PtrDType):
    return ir_dt(d.base) + f".ptr({d.size}" + (", local=True" if d.local else "") + ")" + (f".vec({d.v})" if d.v > 1 else "")
  return REV[d.scalar().name] + (f".vec({d.count})" if d.count > 1 else "")

def ir_arg(a):
  if isinstance(a, tuple): return "(" + ", ".join(ir_arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
  if isinstance(a, DType): return "dtypes." + ir_dt(a)
  if isinstance(a, Ops): return "Ops." + a.name
  if isinstance(a, float) and a != a: return "nan"
  return repr(a)

def to_ir(root, uniques):
  ids, lines = {}, []
  for u in root.toposort():
    ids[u] = f"%{len(ids)}"
    arg = uniques.setdefault(u.arg, len(uniques)) if u.op is Ops.UNIQUE else u.arg
    s = f"{ids[u]} = {u.op.name} : {ir_dt(u.dtype)}"
    if u.src: s += " (" + ", ".join(ids[x] for x in u.src) + ")"
    if arg is not None: s += " arg=" + ir_arg(arg)
    lines.append(s)
  return "\n".join(lines) + f"\nreturn {ids[root]}\n"

f, h, i, i8 = dtypes.float32, dtypes.half, dtypes.int32, dtypes.int8

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
}

renderer = Device["CPU"].renderer
ns = dict(E=E, Tensor=Tensor, dtypes=dtypes, nn=nn, math=math, f=f, h=h, i=i, i8=i8, embedding=embedding,
          gpt2_attention=gpt2_attention)
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
