# Writes estimates.jsonl: tinygrad v0.10.3's ProgramSpec.estimates (the operations, the bytes loaded and stored,
# and the unique-memory estimate behind the DEBUG=2 line's GFLOPS and GB/s) for every corpus kernel on the clang,
# opencl and cuda (sm_80) targets, and for a few more tensor-core kernels on cuda, whose ASTs it records. Each
# kernel gets the opts tinygrad gives it without BEAM (tensor cores where they apply, else
# hand_coded_optimizations), as uopc's CompileKernel does. Run from the root of this checkout, with the directory
# holding tinygrad v0.10.3's `tinygrad` package (no GPU needed):
#   python3 codegen/testdata/harvest_estimates.py /tmp/tg3 > codegen/testdata/estimates.jsonl
# Each line: {"id", "target", "opts", "ops", "lds", "mem"} and, for the kernels not in the corpus, "ast"
# (textual IR). `mem` is ProgramSpec.mem_estimate, which estimates.mem holds.
import json, math, re, sys
sys.path.insert(0, sys.argv[1])
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp, Ops
from tinygrad.dtype import DType, PtrDType
from tinygrad.shape.shapetracker import ShapeTracker
from tinygrad.shape.view import View
from tinygrad.codegen.kernel import Kernel
from tinygrad.codegen.heuristic import hand_coded_optimizations
from tinygrad.renderer.cstyle import ClangRenderer, OpenCLRenderer, CUDARenderer

NAMES = {'float16':dtypes.half,'bfloat16':dtypes.bfloat16,'float32':dtypes.float32,'float64':dtypes.float64,'int8':dtypes.int8,
  'uint8':dtypes.uint8,'int16':dtypes.int16,'uint16':dtypes.uint16,'int32':dtypes.int32,'uint32':dtypes.uint32,'int64':dtypes.int64,
  'uint64':dtypes.uint64,'bool':dtypes.bool,'void':dtypes.void}
REV = {v.name: k for k, v in NAMES.items()}
LINE = re.compile(r"(%\d+) = (\w+) : (\S+)(?: \(([^)]*)\))?(?: arg=(.*))?$")

def read_ir(text):
  nodes, scope = {}, dict(NAMES, ShapeTracker=ShapeTracker, View=View, Ops=Ops, dtypes=dtypes, inf=math.inf, nan=math.nan)
  for line in text.strip().splitlines():
    if line.startswith("return"): return nodes[line.split()[1]]
    name, op, dtype, srcs, arg = LINE.match(line.strip()).groups()
    src = tuple(nodes[s.strip()] for s in srcs.split(",")) if srcs else ()
    nodes[name] = UOp(Ops[op], eval(dtype, scope), src, eval(arg, scope) if arg is not None else None)

def ir_dt(d):
  if isinstance(d, PtrDType):
    return ir_dt(d.base) + f".ptr({d.size}" + (", local=True" if d.local else "") + ")" + (f".vec({d.v})" if d.v > 1 else "")
  return REV[d.scalar().name] + (f".vec({d.count})" if d.count > 1 else "")

def ir_arg(a):
  if isinstance(a, tuple): return "(" + ", ".join(ir_arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
  if isinstance(a, DType): return "dtypes." + ir_dt(a)
  if isinstance(a, Ops): return "Ops." + a.name
  return repr(a)

def to_ir(root):
  ids, lines = {}, []
  for u in root.toposort():
    ids[u] = f"%{len(ids)}"
    s = f"{ids[u]} = {u.op.name} : {ir_dt(u.dtype)}"
    if u.src: s += " (" + ", ".join(ids[x] for x in u.src) + ")"
    if u.arg is not None: s += " arg=" + ir_arg(u.arg)
    lines.append(s)
  return "\n".join(lines) + f"\nreturn {ids[root]}\n"

def record(kid, target, renderer, ast, with_ast=False):
  k = Kernel(ast, opts=renderer)
  if not k.apply_tensor_cores(1): k.apply_opts(hand_coded_optimizations(k))
  p = k.to_program()
  e = p.estimates
  row = {"id": kid, "target": target, "opts": [str(o) for o in k.applied_opts],
         "ops": int(e.ops), "lds": int(e.lds), "mem": int(e.mem)}
  if with_ast: row["ast"] = to_ir(ast)
  print(json.dumps(row))
  return p

renderers = {"clang": ClangRenderer(), "opencl": OpenCLRenderer(), "cuda": CUDARenderer("sm_80")}
for line in open("testdata/corpus/codegen_kernels.jsonl"):
  kernel = json.loads(line)
  for target, renderer in renderers.items(): record(kernel["id"], target, renderer, read_ir(kernel["ast"]))

# Tensor-core kernels for cuda: half in, float or half out, bfloat16 in, batched, a 1x1 convolution and a transposed weight. The ASTs come
# from the CPU scheduler; an AST does not depend on the device.
def last_kernel(t):
  return [si.ast for si in t.schedule() if si.ast.op is Ops.SINK][-1]

def empty(*shape, dtype=dtypes.half): return Tensor.empty(*shape, dtype=dtype, device="CPU")

TC_PROGRAMS = {
  "tc/matmul_half_64x128x256": lambda: empty(64, 256) @ empty(256, 128),
  "tc/matmul_half_acc_half": lambda: empty(64, 64).matmul(empty(64, 64), dtype=dtypes.half),
  "tc/matmul_bf16": lambda: empty(32, 64, dtype=dtypes.bfloat16) @ empty(64, 48, dtype=dtypes.bfloat16),
  "tc/batched_matmul_half": lambda: empty(4, 32, 64) @ empty(4, 64, 32),
  "tc/conv2d_1x1_half": lambda: empty(2, 16, 8, 8).conv2d(empty(32, 16, 1, 1)),
  "tc/linear_half_transposed": lambda: empty(32, 64) @ empty(48, 64).T,
}
for kid, program in TC_PROGRAMS.items():
  p = record(kid, "cuda", renderers["cuda"], last_kernel(program()), with_ast=True)
  assert any(u.op is Ops.WMMA for u in p.uops), f"{kid} has no WMMA"
