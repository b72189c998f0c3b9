# Writes beam_workloads.jsonl: the kernel ASTs tinygrad v0.10.3 schedules for the workloads BEAM search is
# measured on (the 1024x1024 float32 matmul and the 16M-element float32 sum), in uopc's textual IR, with the
# FLOPs and bytes tinygrad counts for each. Run from the root of this checkout:
#   CPU=1 PYTHONPATH=/work/tinygrad-src python3 runtime/testdata/harvest_beam_workloads.py
import json
from tinygrad import Tensor, Device
from tinygrad.dtype import PtrDType
from tinygrad.engine.realize import get_kernel

def ir_dtype(d):
  if isinstance(d, PtrDType): return ir_dtype(d.base) + f".ptr({d.size})"
  return {"float": "float32", "int": "int32", "bool": "bool", "void": "void"}[d.scalar().name] + (f".vec({d.count})" if d.count > 1 else "")

def ir_arg(a):
  if isinstance(a, tuple): return "(" + ", ".join(ir_arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
  if hasattr(a, "name") and type(a).__name__ == "Ops": return "Ops." + a.name
  return repr(a)

def to_ir(root):
  names, lines = {}, []
  for u in root.toposort():
    names[u] = f"%{len(names)}"
    line = f"{names[u]} = {u.op.name} : {ir_dtype(u.dtype)}"
    if u.src: line += " (" + ", ".join(names[s] for s in u.src) + ")"
    if u.arg is not None: line += " arg=" + ir_arg(u.arg)
    lines.append(line)
  return "\n".join(lines) + f"\nreturn {names[root]}\n"

workloads = [("matmul_1024", Tensor.empty(1024, 1024) @ Tensor.empty(1024, 1024)),
             ("sum_16M", Tensor.empty(16 * 1024 * 1024).sum())]
with open("runtime/testdata/beam_workloads.jsonl", "w") as out:
  for name, t in workloads:
    for i, si in enumerate(t.schedule()):
      p = get_kernel(Device[Device.DEFAULT].renderer, si.ast).to_program()
      out.write(json.dumps({"id": f"{name}/{i}", "ast": to_ir(si.ast), "flops": int(p.estimates.ops),
                            "bytes": int(p.estimates.mem), "default_name": p.function_name}) + "\n")
      print(name, i, p.function_name, p.estimates.ops, p.estimates.mem)
