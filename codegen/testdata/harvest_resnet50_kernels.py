# Writes resnet50_kernels.jsonl: the unique kernels of tinygrad v0.10.3's own compile benchmark
# (test/external/external_benchmark_schedule.py: ResNet-50 forward, batch 64, 224x224, Tensor.empty weights, CPU),
# one line per kernel in the order that benchmark compiles them (first appearance in the schedule), in the format of
# the codegen corpus (shared/reference/tinygrad-v0.10.3/corpus/README.md section 6) so uopc's corpus loader reads it.
# Each kernel is optimized and named exactly as the benchmark does (Kernel, hand_coded_optimizations, names numbered
# in that order in a fresh process); `clang` holds its opts, name and C source, `n_uops` the length of its linear
# program (the benchmark prints the sum), `schedule_index` where it first appears and `uses` how often.
# Run from the root of this checkout with the directory holding tinygrad v0.10.3 (its `tinygrad` and `extra`):
#   CPU=1 python3 codegen/testdata/harvest_resnet50_kernels.py /work/tinygrad-src > codegen/testdata/resnet50_kernels.jsonl
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, nn
from tinygrad.ops import Ops
from tinygrad.codegen.kernel import Kernel
from tinygrad.codegen.heuristic import hand_coded_optimizations
from extra.models.resnet import ResNet50
from tinygrad_harvest import REV, to_ir

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
