# Writes beam_actions.jsonl: tinygrad v0.10.3's BEAM action space on corpus kernels. For each kernel and target
# (clang, opencl, cuda sm_80), the actions get_kernel_actions(include_0=False) keeps, as (index into `actions`
# + 1, applied opts), for the kernel without opts and for the kernel after the first of them. Run from the root
# of this checkout:
#   PYTHONPATH=/work/tinygrad-src python3 codegen/testdata/harvest_beam_actions.py
import json, re
from tinygrad.ops import UOp, Ops
from tinygrad.dtype import dtypes
from tinygrad.shape.shapetracker import ShapeTracker
from tinygrad.shape.view import View
from tinygrad.codegen.kernel import Kernel
from tinygrad.engine.search import get_kernel_actions
from tinygrad.renderer.cstyle import ClangRenderer, OpenCLRenderer, CUDARenderer

DTYPES = {"float16": dtypes.half, "bfloat16": dtypes.bfloat16, "float32": dtypes.float32, "float64": dtypes.float64,
          "int8": dtypes.int8, "uint8": dtypes.uint8, "int16": dtypes.int16, "uint16": dtypes.uint16,
          "int32": dtypes.int32, "uint32": dtypes.uint32, "int64": dtypes.int64, "uint64": dtypes.uint64,
          "bool": dtypes.bool, "void": dtypes.void}
LINE = re.compile(r"(%\d+) = (\w+) : (\S+)(?: \(([^)]*)\))?(?: arg=(.*))?$")

def read_ir(text):
  nodes, scope = {}, dict(DTYPES, ShapeTracker=ShapeTracker, View=View, Ops=Ops, dtypes=dtypes)
  for line in text.strip().splitlines():
    if line.startswith("return"): return nodes[line.split()[1]]
    name, op, dtype, srcs, arg = LINE.match(line.strip()).groups()
    src = tuple(nodes[s.strip()] for s in srcs.split(",")) if srcs else ()
    nodes[name] = UOp(Ops[op], eval(dtype, scope), src, eval(arg, scope) if arg is not None else None)

def actions_of(k):
  return [[i, [repr(o) for o in k2.applied_opts]] for i, k2 in get_kernel_actions(k, include_0=False).items()]

WANTED = ["add_f32_1d/0", "sum_all/0", "bigger_sum/0", "matmul_64/0", "matmul_half/0", "matmul_odd/0", "conv2d_small/0",
          "max_axis/0", "softmax/1", "pad/0", "cumsum/0", "batched_matmul/0", "attention/2"]
renderers = {"clang": ClangRenderer(), "opencl": OpenCLRenderer(), "cuda": CUDARenderer("sm_80")}
corpus = {json.loads(l)["id"]: json.loads(l) for l in open("testdata/corpus/codegen_kernels.jsonl")}
with open("codegen/testdata/beam_actions.jsonl", "w") as out:
  for kid in WANTED:
    if kid not in corpus: print("missing", kid); continue
    for target, renderer in renderers.items():
      k = Kernel(read_ir(corpus[kid]["ast"]), opts=renderer)
      first = actions_of(k)
      rows = [{"id": kid, "target": target, "prefix": [], "actions": first}]
      if first:
        k2 = get_kernel_actions(k, include_0=False)[first[0][0]]
        rows.append({"id": kid, "target": target, "prefix": [repr(o) for o in k2.applied_opts], "actions": actions_of(k2)})
      for r in rows: out.write(json.dumps(r) + "\n")
      print(kid, target, len(first))
