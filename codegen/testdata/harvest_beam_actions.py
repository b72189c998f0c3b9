# Writes beam_actions.jsonl: tinygrad v0.10.3's BEAM action space on corpus kernels. For each kernel and target
# (clang, opencl, cuda sm_80), the actions get_kernel_actions(include_0=False) keeps, as (index into `actions`
# + 1, applied opts), for the kernel without opts and for the kernel after the first of them. Run from the root
# of this checkout:
#   PYTHONPATH=/work/tinygrad-src python3 codegen/testdata/harvest_beam_actions.py
import json, os, sys
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad.codegen.kernel import Kernel
from tinygrad.engine.search import get_kernel_actions
from tinygrad.renderer.cstyle import ClangRenderer, OpenCLRenderer, CUDARenderer
from tinygrad_harvest import read_ir

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
