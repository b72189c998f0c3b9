# Writes symbolic_programs.jsonl: tensor programs with a symbolic size or bound (tinygrad's Variable bound with
# .bind), as tinygrad v0.10.3 schedules and runs them on the CPU device. Per program: the tensor-level graph (the
# SINK of its outputs, in the IR of docs/ir.md; a symbolic element of a movement op's arg is tinygrad's repr of
# the UOp on one line), the C source of each kernel in schedule order, and for each value the variable is bound
# to, the outputs' values. tensor/symbolic_test.cc schedules the graph, compares the sources, runs the kernels
# with each value (the first by RunSchedule, the others by replaying the recorded runs) and compares the values.
# "gpu" holds the kernels' sources for tinygrad's CUDA (sm_90) and OpenCL renderers, which the same test
# compares and runs (OpenCL on the OPENCL device, CUDA in the interpreter): a kernel whose launch size is
# symbolic evaluates it at each launch.
#   CPU=1 python3 tensor/testdata/harvest_symbolic.py /tmp/tg3 > tensor/testdata/symbolic_programs.jsonl
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, Variable
from tinygrad.ops import UOp
from tinygrad.engine.realize import get_runner, get_kernel
from tinygrad.ops import Ops
from tinygrad.renderer.cstyle import CUDARenderer, OpenCLRenderer
from tinygrad_harvest import R, to_ir

SEEDS = {0: R(10, 4), 1: R(4, seed=1), 2: R(12, 3, seed=2)}
A, B, C = SEEDS[0], SEEDS[1], SEEDS[2]
# name: (program of the bound variable, the variable's range, values to bind; the graph holds the first)
PROGRAMS = {
  # a reduction over a symbolic number of rows
  "sum_rows": (lambda i: (A.shrink(((0, i), None)) * 2).sum(0), (1, 10), [3, 10, 1]),
  # one row at a symbolic offset (gpt2's position embedding)
  "row_at": (lambda i: A.shrink(((i, i + 1), None)) + 1, (0, 9), [5, 0, 9]),
  # a dot product with a symbolic number of rows (the attention scores of one query), padded back to 10: the
  # result is a view of the kernel's output whose mask holds the bound value, so only that value is checked
  "scores": (lambda i: (A.shrink(((0, i), None)) * B.reshape(1, 4)).sum(1).pad(((0, 10 - i),)), (1, 10), [3]),
  # the same scores, made contiguous: one more kernel, and a replay at another value rewrites them all
  "scores_contiguous": (lambda i: (A.shrink(((0, i), None)) * B.reshape(1, 4)).sum(1).pad(((0, 10 - i),)).contiguous(),
                        (1, 10), [3, 7, 10]),
  # reductions over symbolic axes whose sizes are expressions of the variable
  "sum_window": (lambda i: C.shrink(((i, i + 2), None)).sum(0) + C.shrink(((0, i + 1), None)).max(0), (1, 10),
                 [2, 9, 1]),
}

# Programs that tensor/symbolic_test.cc also builds with the C++ Tensor API, comparing its graph with this one.
CACHE = R(2, 1, 8, 2, 4, seed=3)   # gpt2's cache_kv: (k/v, batch, context, heads, head size)
XQ = R(1, 1, 2, 4, seed=4)         # one query: (batch, 1, heads, head size)
KV = R(2, 1, 1, 2, 4, seed=5)      # the step's new keys and values
def attention(sp):
  keys, values = CACHE[0].shrink((None, (0, sp + 1), None, None)), CACHE[1].shrink((None, (0, sp + 1), None, None))
  q, k, v = XQ.transpose(1, 2), keys.transpose(1, 2), values.transpose(1, 2)
  return q.scaled_dot_product_attention(k, v).transpose(1, 2).reshape(1, 1, 8)
KV_CACHE = R(2, 1, 8, 2, 4, seed=3)
def kv_update(sp):  # the step's keys and values written into the cache at sp; the values are the whole cache's
  return KV_CACHE.shrink((None, None, (sp, sp + 1), None, None)).assign(KV), KV_CACHE
API = {
  "attention": (attention, (1, 7), [3, 7, 1]),
  "kv_update": (kv_update, (1, 7), [3, 5, 7]),
  # creation with a symbolic shape, and pads of symbolic tensors and by symbolic amounts
  "full_sum": (lambda i: Tensor.full((2, i), 1.5).sum(1), (1, 10), [3, 10]),
  "ones_times_rows": (lambda i: (Tensor.ones(i, 4).contiguous() * A.shrink(((0, i), None))).sum(0), (1, 10), [4, 1]),
  "pad_value": (lambda i: A.shrink(((0, i), None)).pad(((1, 1), None), value=2.0).sum(0), (1, 10), [3, 6]),
  "pad_symbolic": (lambda i: A.shrink(((0, i), None)).pad(((0, 10 - i), None)).contiguous(), (1, 10), [3, 8]),
  "expand_rows": (lambda i: A.shrink(((0, 1), None)).expand(i, 4).sum(0), (1, 10), [5, 2]),
  # a mean and variance over a symbolic axis: the count is a tensor of the bound variable (Tensor.from_uop)
  "mean_rows": (lambda i: A.shrink(((0, i), None)).mean(0), (1, 10), [3, 10, 1]),
  "var_rows": (lambda i: A.shrink(((0, i), None)).var(0), (2, 10), [3, 10, 2]),
  "std_all": (lambda i: A.shrink(((0, i), None)).std(), (2, 10), [4, 9]),
  "mean_window": (lambda i: C.shrink(((i, i + 2), None)).mean(0, keepdim=True) + C.shrink(((0, i + 1), None)).mean(),
                  (1, 10), [2, 9]),
  # indexing with a bound variable and slicing with symbolic bounds
  "index_row": (lambda i: A[i] + 1, (1, 8), [3, 1, 8]),
  "slice_rows": (lambda i: A[i:i + 2] * 2, (1, 8), [3, 8]),
  "slice_prefix_sum": (lambda i: A[0:i].sum(0), (1, 8), [3, 8]),
  "slice_of_slice": (lambda i: C[:, 0:1][i - 1:i + 1].contiguous(), (1, 8), [3, 1]),
  "index_and_slice": (lambda i: A[i, 1:3] * 2, (1, 8), [5, 2]),
  # other operations on a symbolic shape
  "cat_rows": (lambda i: A.shrink(((0, i), None)).cat(B.reshape(1, 4)).sum(0), (1, 10), [3, 10]),
  "flatten_sum": (lambda i: A.shrink(((0, i), None)).flatten().max(), (1, 10), [4, 9]),
  "gelu_rows": (lambda i: A.shrink(((0, i), None)).gelu().sum(0), (1, 10), [3, 7]),
  "layernorm_rows": (lambda i: A.shrink(((0, i), None)).layernorm(axis=0).max(0), (2, 10), [3, 10]),
  "repeat_rows": (lambda i: A.shrink(((0, i), None)).repeat(2, 3).sum(0), (1, 10), [3, 10]),
  "cumsum_cols": (lambda i: A.shrink(((0, i), None)).cumsum(1).sum(0), (1, 10), [3, 10]),
  "argmax_cols": (lambda i: A.shrink(((0, i), None)).argmax(1).sum(), (1, 10), [3, 10]),
}
PROGRAMS.update(API)
SEEDS.update({3: CACHE, 4: XQ, 5: KV})

for name, (program, (lo, hi), values) in PROGRAMS.items():
  var = Variable("i", lo, hi)
  # A program gives its result, or the result and the tensor whose values to read after realizing it.
  outs = lambda t: t if isinstance(t, tuple) else (t, t)
  out = outs(program(var.bind(values[0])))[0]
  uniques = {}
  graph = to_ir(UOp.sink(out.lazydata), uniques)
  # The graph's input buffers, by their UNIQUE number in the IR: the seed of R that fills them.
  inputs = {uniques[t.lazydata.base.src[0].arg]: seed for seed, t in list(SEEDS.items()) + [(3, KV_CACHE)]
            if t.lazydata.base.src[0].arg in uniques}
  schedule, var_vals = out.schedule_with_vars()
  sources = [get_runner("CPU", si.ast).p.src for si in schedule]
  gpu = {target: [get_kernel(renderer, si.ast).to_program().src for si in schedule if si.ast.op is Ops.SINK]
         for target, renderer in (("cuda", CUDARenderer("sm_90")), ("opencl", OpenCLRenderer()))}
  results = []
  for v in values:
    result, t = outs(program(var.bind(v)))
    result.realize()
    results.append({"value": v, "shape": [int(s) for s in t.shape], "values": t.tolist()})
  print(json.dumps({"program": name, "var": ["i", lo, hi], "graph": graph, "inputs": {str(k): v for k, v in inputs.items()}, "sources": sources, "gpu": gpu, "results": results, "api": name in API}))
