# Writes tensor_graphs.jsonl: for every program of the reference corpus's tensor_programs.jsonl, the tensor-level
# graph tinygrad v0.10.3 hands its scheduler (the SINK of the outputs' UOps, inputs realized), and the ASTs its
# scheduler made from it, in schedule order, with the buffers each kernel reads and writes. The scheduler test checks
# uopc's schedule of `graph` against `kernels`; the Tensor API test checks the graph its C++ program builds against
# `graph`. UNIQUE args are renumbered in toposort order, so the file does not depend on what ran before.
# Run from the root of this checkout with the directory holding tinygrad v0.10.3's `tinygrad` package:
#   CPU=1 python3 schedule/testdata/harvest_tensor_programs.py DIR PROGRAMS.jsonl > schedule/testdata/tensor_graphs.jsonl
#   CPU=1 python3 schedule/testdata/harvest_tensor_programs.py DIR - benchmarks > schedule/testdata/benchmark_graphs.jsonl
# where PROGRAMS.jsonl is ../shared/reference/tinygrad-v0.10.3/corpus/tensor_programs.jsonl.
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp, Ops
import tinygrad_harvest
from tinygrad_harvest import to_ir

INPUT_ARGS = {}  # UNIQUE arg of each R input's buffer -> the formula's buffer argument (seed + 1)

def R(*shape, dtype=dtypes.float32, seed=0):
  t = tinygrad_harvest.R(*shape, dtype=dtype, seed=seed)
  INPUT_ARGS[t.lazydata.base.src[0].arg] = seed + 1
  return t

def inputs_of(root, uniques):
  # how to fill each buffer the graph reads: {"arg": a} for an R input (the corpus formula with argument a),
  # {"values": [...]} for the values of a Python list (a buffer on the PYTHON device)
  out = {}
  for u in root.toposort():
    if u.op is not Ops.BUFFER: continue
    n = str(uniques[u.src[0].arg])
    if u.src[1].arg == 'PYTHON': out[n] = {"values": u.buffer.as_buffer().cast(u.dtype.fmt).tolist()}
    elif u.src[0].arg in INPUT_ARGS: out[n] = {"arg": INPUT_ARGS[u.src[0].arg]}
  return out

class T(Tensor):  # a tensor from a Python list, realized like the program's inputs
  def __new__(cls, data, **kw): return Tensor(data, **kw).realize()

f, i, h, u8, b = dtypes.float32, dtypes.int32, dtypes.half, dtypes.uint8, dtypes.bool
ns = dict(R=R, Tensor=Tensor, dtypes=dtypes, f=f, i=i, h=h, u8=u8, b=b)

def harvest(name, python):
  Tensor.manual_seed(42)
  code = python.split('#')[0].replace('Tensor([', 'T([')
  out = eval(code, dict(ns, T=Tensor, attention=attention))
  outs = [out, out.sum()] if name == 'multi_output' else [out]
  big_sink = UOp.sink(*[t.lazydata for t in outs])
  uniques = {}
  graph = to_ir(big_sink, uniques)
  inputs = inputs_of(big_sink, uniques)
  sched = outs[0].schedule(*outs[1:])
  buf_ids, kernels = {}, []
  for si in sched:  # each kernel's buffers, numbered in order of first use (the memory planner's reuse shows)
    kernels.append({"ast": to_ir(si.ast, {}) if si.ast.op is Ops.SINK else si.ast.op.name,
                    "bufs": [buf_ids.setdefault(id(x.base), len(buf_ids)) for x in si.bufs]})
  print(json.dumps({"program": name, "graph": graph, "inputs": inputs, "kernels": kernels}))

# The four graphs tinygrad's schedule + codegen was timed on (reference README): with a third argument, they are
# written instead, in the same form (program = the graph's name).
BENCHMARKS = {
  "matmul_1024": "R(1024, 1024) @ R(1024, 1024, seed=1)",
  "mlp_784_512_512_10": "(((R(64, 784) @ R(784, 512, seed=1) + R(512, seed=2)).relu() @ R(512, 512, seed=3) + R(512, seed=4)).relu()"
                        " @ R(512, 10, seed=5) + R(10, seed=6))",
  "resnet_basic_block": "(R(8, 64, 32, 32).conv2d(R(64, 64, 3, 3, seed=1), padding=1).batchnorm(R(64, seed=2), R(64, seed=3), R(64, seed=4),"
                        " R(64, seed=5).abs().add(1e-5).rsqrt().realize()).relu().conv2d(R(64, 64, 3, 3, seed=6), padding=1)"
                        ".batchnorm(R(64, seed=7), R(64, seed=8), R(64, seed=9), R(64, seed=10).abs().add(1e-5).rsqrt().realize())"
                        " + R(8, 64, 32, 32)).relu()",
  "attention_block": "attention(R(4, 128, 256), R(256, 256, seed=1), R(256, 256, seed=2), R(256, 256, seed=3), R(256, 256, seed=4))",
}
def attention(x, wq, wk, wv, wo, heads=8):
  b, s, d = x.shape
  q, k, v = [(x @ w).reshape(b, s, heads, d // heads).transpose(1, 2) for w in (wq, wk, wv)]
  return q.scaled_dot_product_attention(k, v, is_causal=True).transpose(1, 2).reshape(b, s, d) @ wo

if len(sys.argv) > 3:
  for name, python in BENCHMARKS.items(): harvest(name, python)
else:
  for line in open(sys.argv[2] if len(sys.argv) > 2 else 'testdata/corpus/tensor_programs.jsonl'):
    prog = json.loads(line)
    harvest(prog['program'], prog['python'])
