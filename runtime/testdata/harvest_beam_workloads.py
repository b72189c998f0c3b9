# Writes beam_workloads.jsonl: the kernel ASTs tinygrad v0.10.3 schedules for the workloads BEAM search is
# measured on (the 1024x1024 float32 matmul and the 16M-element float32 sum), in uopc's textual IR, with the
# FLOPs and bytes tinygrad counts for each. Run from the root of this checkout:
#   CPU=1 PYTHONPATH=/work/tinygrad-src python3 runtime/testdata/harvest_beam_workloads.py
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, Device
from tinygrad.engine.realize import get_kernel
from tinygrad_harvest import to_ir

workloads = [("matmul_1024", Tensor.empty(1024, 1024) @ Tensor.empty(1024, 1024)),
             ("sum_16M", Tensor.empty(16 * 1024 * 1024).sum())]
with open("runtime/testdata/beam_workloads.jsonl", "w") as out:
  for name, t in workloads:
    for i, si in enumerate(t.schedule()):
      p = get_kernel(Device[Device.DEFAULT].renderer, si.ast).to_program()
      out.write(json.dumps({"id": f"{name}/{i}", "ast": to_ir(si.ast), "flops": int(p.estimates.ops),
                            "bytes": int(p.estimates.mem), "default_name": p.function_name}) + "\n")
      print(name, i, p.function_name, p.estimates.ops, p.estimates.mem)
