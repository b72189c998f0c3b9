#!/usr/bin/env python3
"""Writes codegen/testdata/{lowerer,remove_reduce}_gpu_cases.jsonl: tinygrad v0.10.3's lowerer (and remove_reduce) on
the corpus ASTs for GPU-like targets.

The codegen corpus has lowerer stages for the CPU only (every axis a RANGE). This runs tinygrad's own get_index and
pm_lowerer on each kernel's `clang` optimized AST for targets with local memory, so that the SPECIAL launch dims
(get_grouped_dims: reversing, merging and splitting dims to fit the limits) are checked against tinygrad too.

  # tinygrad's sources at v0.10.3 (pure Python; the runtime autogen files are not needed)
  G="git --git-dir=/work/.mirror/tinygrad+tinygrad/repo"
  for f in $($G ls-tree -r --name-only v0.10.3 tinygrad | grep -v runtime/autogen); do
    mkdir -p /tmp/tg/$(dirname $f); $G show v0.10.3:$f > /tmp/tg/$f; done
  PYTHONPATH=/tmp/tg python3 codegen/testdata/make_lowerer_gpu_cases.py testdata/corpus/codegen_kernels.jsonl \\
      codegen/testdata

Each line: {"id", "config", "local_dims", "ast" (text IR), "lowerer" (text IR) or "error"}. Configs name the
target's (global_max, local_max); `local_dims` replaces the KernelInfo's (0 keeps the corpus's; -1: the AST was
optimized for the target here with the opts named by "opts"). remove_reduce_gpu_cases.jsonl has, for the ASTs
optimized for "gpu", the graph after tinygrad's expander step and after its remove_reduce step:
{"id", "config", "opts", "expander", "remove_reduce"}.
"""
import json
import os
import sys

from tinygrad.codegen import get_rewrites_for_renderer
from tinygrad.codegen.heuristic import hand_coded_optimizations
from tinygrad.codegen.kernel import Kernel, KernelOptError, Opt, OptOps
from tinygrad.codegen.lowerer import get_index, pm_lowerer
from tinygrad.ops import KernelInfo, Ops, graph_rewrite
from tinygrad.renderer import Renderer

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad_harvest import read_ir, to_ir  # pylint: disable=wrong-import-position

CONFIGS = {
    # tinygrad's Renderer defaults: nothing is limited.
    "gpu": ((0x8FFFFFFF,) * 3, (0x8FFFFFFF,) * 3),
    # Small limits: dims merge and split.
    "gpu_small": ((16, 16, 16), (8, 8, 8)),
    "gpu_tiny": ((4, 4, 4), (2, 2, 2)),
}

def global_axes(ast):
  ki = ast.arg
  first_upcasted = len(ast.full_shape) - ki.upcasted
  axes = [a for x in ast.toposort() if x.op is Ops.REDUCE_AXIS for a in x.axis_arg]
  return min([first_upcasted] + axes)


# Optimizations that use local memory or local dims, applied to the corpus's unoptimized ASTs (those that fail
# on a kernel are skipped); "heuristic" is tinygrad's hand_coded_optimizations for the target.
OPT_LISTS = {
    "grouptop4": [Opt(OptOps.GROUPTOP, 0, 4)],
    "group2": [Opt(OptOps.GROUP, 0, 2)],
    "grouptop4_local2": [Opt(OptOps.GROUPTOP, 0, 4), Opt(OptOps.LOCAL, 0, 2)],
    "group2_upcast2": [Opt(OptOps.GROUP, 0, 2), Opt(OptOps.UPCAST, 0, 2)],
    "local2_upcast2": [Opt(OptOps.LOCAL, 0, 2), Opt(OptOps.UPCAST, 0, 2)],
    "heuristic": None,
}


def lower(ast, renderer):
  try:
    return {"lowerer": to_ir(graph_rewrite(ast, pm_lowerer, ctx=get_index(ast, renderer)))}
  except (RuntimeError, AssertionError) as e:
    return {"error": str(e)}


def expand_and_remove_reduce(ast, renderer):
  """The expander's output and remove_reduce's, from tinygrad's own pipeline."""
  steps = {step.name: step for step in get_rewrites_for_renderer(renderer)}
  sink = ast
  for name in ("lowerer", "initial symbolic", "store_ignore", "move_ignore", "expander"): sink = steps[name](sink)
  return {"expander": to_ir(sink), "remove_reduce": to_ir(steps["remove_reduce"](sink))}


def main():
  lowerer_out = open(sys.argv[2] + "/lowerer_gpu_cases.jsonl", "w")
  remove_reduce_out = open(sys.argv[2] + "/remove_reduce_gpu_cases.jsonl", "w")
  for line in open(sys.argv[1]):
    k = json.loads(line)
    stages = dict(k["targets"]["clang"]["stages"])
    ast = read_ir(stages["optimized_ast"])
    for config, (gmax, lmax) in CONFIGS.items():
      for local_dims in (0, 1):
        if local_dims and global_axes(ast) < 2: continue
        a = ast.replace(arg=KernelInfo(ast.arg.name, local_dims, ast.arg.upcasted, ast.arg.dont_use_locals))
        renderer = Renderer()
        renderer.global_max, renderer.local_max = gmax, lmax
        case = {"id": k["id"], "config": config, "local_dims": local_dims, "ast": to_ir(a)}
        print(json.dumps({**case, **lower(a, renderer)}), file=lowerer_out)
    # Optimized on a GPU target: grouped reduces through local memory, local dims.
    for config in ("gpu", "gpu_small"):
      gmax, lmax = CONFIGS[config]
      renderer = Renderer()
      renderer.device, renderer.has_shared, renderer.global_max, renderer.local_max = "GPU", True, gmax, lmax
      for name, opts in OPT_LISTS.items():
        kernel = Kernel(read_ir(k["ast"]), opts=renderer)
        try:
          for opt in (hand_coded_optimizations(kernel) if opts is None else opts): kernel.apply_opt(opt)
        except KernelOptError:
          continue
        a = kernel.get_optimized_ast()
        case = {"id": k["id"], "config": config, "local_dims": -1, "opts": name, "ast": to_ir(a)}
        lowered = lower(a, renderer)
        print(json.dumps({**case, **lowered}), file=lowerer_out)
        if "lowerer" in lowered and config == "gpu":
          print(json.dumps({"id": k["id"], "config": config, "opts": name, **expand_and_remove_reduce(a, renderer)}),
                file=remove_reduce_out)


if __name__ == "__main__":
  main()
