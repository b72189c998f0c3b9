# Writes gpu_asts.json: tinygrad v0.10.3's optimized ASTs for corpus matmuls on tensor-core targets, and for
# the corpus kernels OpenCL groups through local memory, which the corpus does not record (it has stages for the CPU
# targets only). Run from the root of this checkout, with the directory holding tinygrad v0.10.3's `tinygrad` package
# (git archive v0.10.3 tinygrad | tar -x) as the argument:
#   python3 codegen/testdata/generate_gpu_asts.py /path/to/that/directory
import json, re, sys
sys.path.insert(0, sys.argv[1])
from tinygrad.ops import UOp, Ops, KernelInfo
from tinygrad.dtype import dtypes, DType, PtrDType
from tinygrad.shape.shapetracker import ShapeTracker
from tinygrad.shape.view import View
from tinygrad.codegen.kernel import Kernel, Opt, OptOps
from tinygrad.renderer.cstyle import CUDARenderer, MetalRenderer, OpenCLRenderer
from tinygrad.codegen.heuristic import hand_coded_optimizations

NAMES = {'float16':dtypes.half,'bfloat16':dtypes.bfloat16,'float32':dtypes.float32,'float64':dtypes.float64,'int8':dtypes.int8,
  'uint8':dtypes.uint8,'int16':dtypes.int16,'uint16':dtypes.uint16,'int32':dtypes.int32,'uint32':dtypes.uint32,'int64':dtypes.int64,
  'uint64':dtypes.uint64,'bool':dtypes.bool,'void':dtypes.void}
REV = {v.name: k for k, v in NAMES.items()}

def parse(text):
  vals = {}
  for line in text.splitlines():
    line = line.strip()
    if not line or line.startswith('return'):
      if line.startswith('return'): return vals[line.split()[1]]
      continue
    m = re.match(r'(%\d+) = (\w+) : (\S+)(?: \(([^)]*)\))?(?: arg=(.*))?$', line)
    name, op, dt, srcs, arg = m.groups()
    ns = dict(NAMES); ns.update(ShapeTracker=ShapeTracker, View=View, Ops=Ops, dtypes=dtypes, None_=None)
    d = eval(dt, ns)
    src = tuple(vals[s.strip()] for s in srcs.split(',')) if srcs else ()
    a = eval(arg, ns) if arg is not None else None
    vals[name] = UOp(Ops[op], d, src, a)

def ir_dt(d):
  if isinstance(d, PtrDType):
    return ir_dt(d.base) + f".ptr({d.size}" + (", local=True" if d.local else "") + ")" + (f".vec({d.v})" if d.v > 1 else "")
  s = REV[d.scalar().name]
  return s + (f".vec({d.count})" if d.count > 1 else "")

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

ks = {json.loads(l)['id']: json.loads(l) for l in open('testdata/corpus/codegen_kernels.jsonl')}
out = []
for kid, rname, use in [("matmul_half/0", "cuda", 1), ("matmul_half/0", "cuda", 3), ("matmul_64/0", "metal", 1)]:
  ast = parse(ks[kid]['ast'])
  r = CUDARenderer("sm_80") if rname == "cuda" else MetalRenderer()
  if rname == "metal": r.tensor_cores = MetalRenderer.tensor_cores
  Kernel.kernel_cnt.clear()
  k = Kernel(ast, r)
  assert k.apply_tensor_cores(use)
  opt = k.get_optimized_ast()
  out.append({"id": kid, "target": rname, "use_tensor_cores": use, "opts": [repr(o) for o in k.applied_opts], "ast": to_ir(opt)})
# Grouped reduces (GROUP/GROUPTOP through local memory) on OpenCL, with the hand-coded opts.
for kid, k in ks.items():
  if not any("GROUP" in o for o in k['targets']['opencl']['opts']): continue
  Kernel.kernel_cnt.clear()
  kern = Kernel(parse(k['ast']), OpenCLRenderer())
  kern.apply_opts(hand_coded_optimizations(kern))
  out.append({"id": kid, "target": "opencl", "use_tensor_cores": 0, "opts": [repr(o) for o in kern.applied_opts],
              "ast": to_ir(kern.get_optimized_ast())})
json.dump(out, open('codegen/testdata/gpu_asts.json', 'w'), indent=1)
for o in out: print(o['id'], o['target'], o['opts'])
