# Writes kernel_benchmark.jsonl: the kernel ASTs tinygrad v0.10.3's scheduler makes for the workloads of
# //runtime:kernel_benchmark (add and sum of 16M float32, the 1024x1024 float32 matmul), in schedule order, in
# uopc's textual IR. Run from the root of this checkout with the directory holding tinygrad v0.10.3's package:
#   CPU=1 python3 runtime/testdata/harvest_kernel_benchmark.py DIR > runtime/testdata/kernel_benchmark.jsonl
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor
from tinygrad.ops import Ops
from tinygrad_harvest import to_ir

N = 16 * 1024 * 1024
WORKLOADS = {
  "add_16M_f32": lambda: Tensor.empty(N) + Tensor.empty(N),
  "sum_16M_f32": lambda: Tensor.empty(N).sum(),
  "matmul_1024_f32": lambda: Tensor.empty(1024, 1024) @ Tensor.empty(1024, 1024),
}
for name, make in WORKLOADS.items():
  kernels = [to_ir(si.ast) for si in make().schedule() if si.ast.op is Ops.SINK]
  print(json.dumps({"workload": name, "kernels": kernels}))
