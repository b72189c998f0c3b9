# Writes gpu_asts.json: tinygrad v0.10.3's optimized ASTs for corpus matmuls on tensor-core targets, and for
# the corpus kernels OpenCL groups through local memory, which the corpus does not record (it has stages for the CPU
# targets only). Run from the root of this checkout, with the directory holding tinygrad v0.10.3's `tinygrad` package
# (git archive v0.10.3 tinygrad | tar -x) as the argument:
#   python3 codegen/testdata/generate_gpu_asts.py /path/to/that/directory
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad.codegen.kernel import Kernel
from tinygrad.renderer.cstyle import CUDARenderer, MetalRenderer, OpenCLRenderer
from tinygrad.codegen.heuristic import hand_coded_optimizations
from tinygrad_harvest import read_ir, to_ir

ks = {json.loads(l)['id']: json.loads(l) for l in open('testdata/corpus/codegen_kernels.jsonl')}
out = []
for kid, rname, use in [("matmul_half/0", "cuda", 1), ("matmul_half/0", "cuda", 3), ("matmul_64/0", "metal", 1)]:
  ast = read_ir(ks[kid]['ast'])
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
  kern = Kernel(read_ir(k['ast']), OpenCLRenderer())
  kern.apply_opts(hand_coded_optimizations(kern))
  out.append({"id": kid, "target": "opencl", "use_tensor_cores": 0, "opts": [repr(o) for o in kern.applied_opts],
              "ast": to_ir(kern.get_optimized_ast())})
json.dump(out, open('codegen/testdata/gpu_asts.json', 'w'), indent=1)
for o in out: print(o['id'], o['target'], o['opts'])
