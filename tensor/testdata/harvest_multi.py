# Writes multi_graphs.jsonl: programs on tensors sharded over tinygrad v0.10.3's CPU devices ("CPU:0" and
# "CPU:1", three for the ring all-reduce), each with the tensor-level graph tinygrad builds (the SINK of every
# output, in the form of extra_graphs.jsonl), "multi_graph": that graph after tinygrad's multi rules
# (engine/multi.py's get_multi_map of the SINK), the values it computes, the outputs' devices, and "kernels":
# the length of the schedule a fresh build of the program gives. "env" names the settings a program runs
# under (RING). tensor/multi_test.cc builds the same programs with the C++ API and compares all of them.
#   CPU=1 python3 tensor/testdata/harvest_multi.py /tmp/tg3 > tensor/testdata/multi_graphs.jsonl
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.helpers import Context
from tinygrad.ops import UOp, Ops
from tinygrad.engine.multi import get_multi_map
from tinygrad_harvest import R, to_ir, harvested_number, REV

D2 = ("CPU:0", "CPU:1")
D3 = ("CPU:0", "CPU:1", "CPU:2")

def grad(loss, *targets): return loss.gradient(*targets)

PROGRAMS = {
  # elementwise
  "replicated_add": ("R(3, 4).shard(D2) + 1", {}),
  "sharded_mul": ("R(4, 2).shard(D2, axis=0) * R(4, 2, seed=1).shard(D2, axis=0)", {}),
  "sharded_where_cast": ("(R(4, 3).shard(D2, axis=0) > 0).where(R(4, 3, seed=1).shard(D2, axis=0), 0.5).cast(dtypes.half).float()", {}),
  "sharded_and_replicated": ("R(4, 2).shard(D2, axis=0) + R(4, 2, seed=1).shard(D2)", {}),
  "resharded_axis": ("R(4, 4).shard(D2, axis=0) + R(4, 4, seed=1).shard(D2, axis=1)", {}),
  # reductions
  "sum_across_shards": ("(R(4, 2).shard(D2, axis=0) * 2).sum(0)", {}),
  "sum_within_shards": ("R(4, 6).shard(D2, axis=0).sum(1)", {}),
  "sum_all": ("R(4, 6).shard(D2, axis=1).sum()", {}),
  "max_across_shards": ("R(6, 4).shard(D2, axis=0).max(0)", {}),
  "softmax_within_shards": ("R(4, 6).shard(D2, axis=0).softmax(1)", {}),
  "softmax_sharded_axis": ("R(4, 6).shard(D2, axis=1).softmax(1)", {}),
  "ring_sum": ("R(6, 4).shard(D3, axis=0).sum(0)", {"RING": 2}),
  "ring_sum_uneven_chunks": ("R(9, 3).shard(D3, axis=0).sum(0)", {"RING": 2}),
  # movement
  "reshape_split_axis": ("R(4, 6).shard(D2, axis=0).reshape(2, 2, 6) + 1", {}),
  "reshape_merge": ("R(4, 2, 3).shard(D2, axis=1).reshape(4, 6) * 3", {}),
  "permute": ("R(4, 6).shard(D2, axis=0).permute(1, 0) + 1", {}),
  "expand": ("R(4, 1).shard(D2, axis=0).expand(4, 5) + 1", {}),
  "pad": ("R(4, 3).shard(D2, axis=0).pad(((0, 0), (1, 2))) + 1", {}),
  "shrink_other_axis": ("R(4, 6).shard(D2, axis=0).shrink(((0, 4), (1, 5))) + 1", {}),
  "shrink_to_one_shard": ("R(4, 6).shard(D2, axis=0).shrink(((2, 4), (0, 6))) + 1", {}),
  "flip": ("R(4, 6).shard(D2, axis=0).flip(1) + 1", {}),
  # copies, matmuls, gradients
  "to_one_device": ("(R(4, 3).shard(D2, axis=0) * 2).to('CPU')", {}),
  "to_tuple": ("R(2, 3).to(D2) * 2", {}),
  "matmul_batch_sharded": ("R(4, 8).shard(D2, axis=0) @ R(8, 3, seed=1).shard(D2)", {}),
  "matmul_k_sharded": ("R(4, 8).shard(D2, axis=1) @ R(8, 3, seed=1).shard(D2, axis=0)", {}),
  "rand_like_replicated": ("R(4, 2).shard(D2).rand_like()", {}),
  "rand_like_sharded": ("(R(4, 2).shard(D2, axis=0) + 1).rand_like()", {}),
  "contiguous_cast": ("R(4, 2).shard(D2, axis=0).contiguous().cast(dtypes.int32)", {}),
  "grad_replicated_weight": ("grad((R(4, 8).shard(D2, axis=0) @ R(8, 3, seed=1).shard(D2).requires_grad_()).relu().sum(), W)", {"W": True}),
  "grad_sharded_input": ("grad((X * R(4, 3).shard(D2, axis=0)).exp().sum(), X)", {"X": True}),
}

ENV = dict(R=R, Tensor=Tensor, dtypes=dtypes, D2=D2, D3=D3, grad=grad)

def outputs(out): return list(out) if isinstance(out, (tuple, list)) else [out]

def build(python, env):
  Tensor.manual_seed(0)
  if env.get("W"):
    # The weight is the tensor the gradient is taken for: build it once, then the program around it.
    w = R(8, 3, seed=1).shard(D2).requires_grad_()
    return outputs(eval(python.replace("R(8, 3, seed=1).shard(D2).requires_grad_()", "W"), dict(ENV, W=w)))
  if env.get("X"):
    x = R(4, 3, seed=1).shard(D2, axis=0).requires_grad_()
    return outputs(eval(python, dict(ENV, X=x)))
  return outputs(eval(python, ENV))

# The values in order; tolist, since flatten (a reshape) cannot merge a sharded axis with those before it.
def flat(v): return [x for e in v for x in flat(e)] if isinstance(v, list) else [v]

def sink_of(outs): return UOp.sink(*[t.lazydata for t in outs])

for name, (python, env) in PROGRAMS.items():
  ring = env.get("RING", 1)
  with Context(RING=ring):
    outs = build(python, env)
    graph = to_ir(sink_of(outs))  # before realizing, which replaces the graph
    sink = sink_of(outs)
    multi_graph = to_ir(get_multi_map(sink).get(sink, sink))
    values, dts, shapes, devices = [], [], [], []
    for t in outs:
      values += [harvested_number(v) for v in flat(t.tolist())]
      dts.append(REV[t.dtype.name])
      shapes.append(list(t.shape))
      devices.append(",".join(t.device) if isinstance(t.device, tuple) else t.device)
    fresh = build(python, env)
    kernels = len(fresh[0].schedule(*fresh[1:]))
  line = {"program": name, "graph": graph, "multi_graph": multi_graph, "dtypes": dts, "shapes": shapes,
          "devices": devices, "values": values, "kernels": kernels}
  if ring != 1: line["env"] = {"RING": ring}
  print(json.dumps(line))
