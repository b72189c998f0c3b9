# Writes estimates.jsonl: tinygrad v0.10.3's ProgramSpec.estimates (the operations, the bytes loaded and stored,
# and the unique-memory estimate behind the DEBUG=2 line's GFLOPS and GB/s) for every corpus kernel on the clang,
# opencl and cuda (sm_80) targets, and for a few more tensor-core kernels on cuda, whose ASTs it records. Each
# kernel gets the opts tinygrad gives it without BEAM (tensor cores where they apply, else
# hand_coded_optimizations), as uopc's CompileKernel does. Run from the root of this checkout, with the directory
# holding tinygrad v0.10.3's `tinygrad` package (no GPU needed):
#   python3 codegen/testdata/harvest_estimates.py /tmp/tg3 > codegen/testdata/estimates.jsonl
# Each line: {"id", "target", "opts", "ops", "lds", "mem"} and, for the kernels not in the corpus, "ast"
# (textual IR). `mem` is ProgramSpec.mem_estimate, which estimates.mem holds.
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import Ops
from tinygrad.codegen.kernel import Kernel
from tinygrad.codegen.heuristic import hand_coded_optimizations
from tinygrad.renderer.cstyle import ClangRenderer, OpenCLRenderer, CUDARenderer
from tinygrad_harvest import read_ir, to_ir

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
