# Writes resnet50_kernels.jsonl: the unique kernels of tinygrad v0.10.3's own compile benchmark
# (test/external/external_benchmark_schedule.py: ResNet-50 forward, batch 64, 224x224, Tensor.empty weights, CPU),
# one line per kernel in the order that benchmark compiles them (first appearance in the schedule), in the format of
# the codegen corpus (shared/reference/tinygrad-v0.10.3/corpus/README.md section 6) so uopc's corpus loader reads it.
# Each kernel is optimized and named exactly as the benchmark does (Kernel, hand_coded_optimizations, names numbered
# in that order in a fresh process); `clang` holds its opts, name and C source, `n_uops` the length of its linear
# program (the benchmark prints the sum), `schedule_index` where it first appears and `uses` how often.
# Run from the root of this checkout with the directory holding tinygrad v0.10.3 (its `tinygrad` and `extra`):
#   CPU=1 python3 codegen/testdata/harvest_resnet50_kernels.py /work/tinygrad-src > codegen/testdata/resnet50_kernels.jsonl
import json, sys
sys.path.insert(0, sys.argv[1])
from tinygrad import Tensor, nn, dtypes
from tinygrad.ops import Ops
from tinygrad.dtype import DType, PtrDType
from tinygrad.codegen.kernel import Kernel
from tinygrad.codegen.heuristic import hand_coded_optimizations
from extra.models.resnet import ResNet50

NAMES = {'float16':dtypes.half,'bfloat16':dtypes.bfloat16,'float32':dtypes.float32,'float64':dtypes.float64,'int8':dtypes.int8,
  'uint8':dtypes.uint8,'int16':dtypes.int16,'uint16':dtypes.uint16,'int32':dtypes.int32,'uint32':dtypes.uint32,'int64':dtypes.int64,
  'uint64':dtypes.uint64,'bool':dtypes.bool,'void':dtypes.void}
REV = {v.name: k for k, v in NAMES.items()}

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

def to_ir(root):
  ids, lines = {}, []
  for u in root.toposort():
    ids[u] = f"%{len(ids)}"
    s = f"{ids[u]} = {u.op.name} : {ir_dt(u.dtype)}"
    if u.src: s += " (" + ", ".join(ids[x] for x in u.src) + ")"
    if u.arg is not None: s += " arg=" + ir_arg(u.arg)
    lines.append(s)
  return "\n".join(lines) + f"\nreturn {ids[root]}\n"

def buffers_of(ast):
  return [{"arg": u.arg, "dtype": REV[u.dtype.base.name], "size": u.dtype.size}
          for u in sorted((u for u in ast.toposort() if u.op is Ops.DEFINE_GLOBAL), key=lambda u: u.arg)]

mdl = ResNet50()
for p in nn.state.get_parameters(mdl): p.replace(Tensor.empty(p.shape))
out = mdl(Tensor.empty(64, 3, 224, 224))
sched = out.schedule()
first, uses = {}, {}
for i, si in enumerate(sched):
  if si.ast.op is not Ops.SINK: continue
  first.setdefault(si.ast.key, (i, si.ast))
  uses[si.ast.key] = uses.get(si.ast.key, 0) + 1
for n, (key, (index, ast)) in enumerate(first.items()):
  k = Kernel(ast)
  k.apply_opts(hand_coded_optimizations(k))
  prog = k.to_program()
  print(json.dumps({"id": f"resnet50/{n}", "program": "resnet50", "ast": to_ir(ast),
                    "targets": {"clang": {"opts": [str(o) for o in k.applied_opts], "name": prog.function_name,
                                          "global_size": None, "local_size": None, "src": prog.src}},
                    "buffers": buffers_of(ast), "outputs": {}, "n_uops": len(prog.uops),
                    "schedule_index": index, "uses": uses[key], "schedule_length": len(sched)}))
