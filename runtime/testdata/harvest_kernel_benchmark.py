# Writes kernel_benchmark.jsonl: the kernel ASTs tinygrad v0.10.3's scheduler makes for the workloads of
# //runtime:kernel_benchmark (add and sum of 16M float32, the 1024x1024 float32 matmul), in schedule order, in
# uopc's textual IR. Run from the root of this checkout with the directory holding tinygrad v0.10.3's package:
#   CPU=1 python3 runtime/testdata/harvest_kernel_benchmark.py DIR > runtime/testdata/kernel_benchmark.jsonl
import json, sys
sys.path.insert(0, sys.argv[1])
from tinygrad import Tensor, dtypes
from tinygrad.ops import Ops
from tinygrad.dtype import DType, PtrDType

def type_text(d):
  if isinstance(d, PtrDType):
    return type_text(d.base) + f".ptr({d.size}" + (", local=True" if d.local else "") + ")" + (f".vec({d.v})" if d.v > 1 else "")
  name = {"float": "float32", "half": "float16", "double": "float64", "int": "int32", "uint": "uint32", "char": "int8",
          "uchar": "uint8", "short": "int16", "ushort": "uint16", "long": "int64", "ulong": "uint64"}.get(d.scalar().name, d.scalar().name)
  return name + (f".vec({d.count})" if d.count > 1 else "")

def arg_text(a):
  if isinstance(a, tuple): return "(" + ", ".join(arg_text(x) for x in a) + ("," if len(a) == 1 else "") + ")"
  if isinstance(a, DType): return "dtypes." + type_text(a)
  if isinstance(a, Ops): return "Ops." + a.name
  return repr(a)

def ir(root):
  names, lines = {}, []
  for u in root.toposort():
    names[u] = f"%{len(names)}"
    line = f"{names[u]} = {u.op.name} : {type_text(u.dtype)}"
    if u.src: line += " (" + ", ".join(names[x] for x in u.src) + ")"
    if u.arg is not None: line += " arg=" + arg_text(u.arg)
    lines.append(line)
  return "\n".join(lines) + f"\nreturn {names[root]}\n"

N = 16 * 1024 * 1024
WORKLOADS = {
  "add_16M_f32": lambda: Tensor.empty(N) + Tensor.empty(N),
  "sum_16M_f32": lambda: Tensor.empty(N).sum(),
  "matmul_1024_f32": lambda: Tensor.empty(1024, 1024) @ Tensor.empty(1024, 1024),
}
for name, make in WORKLOADS.items():
  kernels = [ir(si.ast) for si in make().schedule() if si.ast.op is Ops.SINK]
  print(json.dumps({"workload": name, "kernels": kernels}))
