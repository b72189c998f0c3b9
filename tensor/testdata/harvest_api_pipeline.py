# Writes api_pipeline_graphs.jsonl: for the Tensor methods fuse, kernelize, to_, from_blob, image_conv2d and
# image_dot (and schedule, through every program's kernel count), the tensor-level graph tinygrad v0.10.3 builds
# (the SINK of every output, in the form of extra_graphs.jsonl), the values it computes on CPU, and "kernels": the
# length of the schedule a fresh build of the program gives (Tensor.schedule). A kernelize program's graph is the
# kernel graph after kernelize, each KERNEL's arg (its AST) left out; a schedule_with_vars program also records
# "var_vals", the bound variables' values by name. tensor/api_pipeline_test.cc builds the same programs with the
# C++ API and compares all of them.
#   CPU=1 python3 tensor/testdata/harvest_api_pipeline.py /tmp/tg3 > tensor/testdata/api_pipeline_graphs.jsonl
import ctypes, json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp, Ops
from tinygrad_harvest import R, to_ir, harvested_number, REV

def moved(t, device):
  t.to_(device)
  return t

def kernelized(t):
  return t.kernelize()

# from_blob's host memory, which tinygrad reads through the pointer.
BLOB_F32 = (ctypes.c_float * 6)(1.5, -2.0, 0.25, 3.0, -0.5, 4.0)
BLOB_I32 = (ctypes.c_int32 * 4)(7, -3, 12, 0)

PROGRAMS = {
  "fuse_softmax": "(R(4, 4) + 1).softmax().fuse()",
  "fuse_elementwise": "(R(3, 4) * 2).fuse() + R(3, 4, seed=1)",
  "kernelize_sum": "kernelized((R(4, 4) + 1).sum(0))",
  "kernelize_two_kernels": "kernelized((R(3, 4) * 2).contiguous().sum(1) + 1)",
  "to_same_device": "moved(R(2, 3), 'CPU') * 2",
  "from_blob": "Tensor.from_blob(ctypes.addressof(BLOB_F32), (2, 3), dtype=dtypes.float32) * 2",
  "from_blob_int_1d": "Tensor.from_blob(ctypes.addressof(BLOB_I32), (4,), dtype=dtypes.int32) + 1",
  "image_conv2d": "R(1, 4, 5, 5).image_conv2d(R(8, 4, 3, 3, seed=1))",
  "image_conv2d_padded_channels": "R(2, 3, 5, 4).image_conv2d(R(6, 3, 3, 3, seed=1), R(6, seed=2), padding=1, stride=2)",
  "image_conv2d_depthwise": "R(1, 8, 4, 4).image_conv2d(R(8, 1, 3, 3, seed=1), groups=8, padding=1)",
  "image_conv2d_cin_last": "R(2, 8, 1, 1).image_conv2d(R(4, 8, 1, 1, seed=1))",
  "image_conv2d_dilation_groups": "R(1, 8, 6, 6).image_conv2d(R(8, 4, 2, 2, seed=1), groups=2, dilation=2, padding=(1, 0))",
  "image_dot": "R(3, 4).image_dot(R(4, 5, seed=1))",
  "image_dot_batched": "R(2, 3, 4).image_dot(R(2, 4, 8, seed=1))",
  "image_dot_vector": "R(4).image_dot(R(4, 8, seed=1))",
  "image_dot_half": "R(3, 4).image_dot(R(4, 4, seed=1), dtype=dtypes.half).float()",
  "schedule_with_vars": "Tensor(UOp.variable('i', 1, 10).bind(3)) * R(3)",
}

ENV = dict(ctypes=ctypes, R=R, Tensor=Tensor, dtypes=dtypes, UOp=UOp, moved=moved, kernelized=kernelized,
           BLOB_F32=BLOB_F32, BLOB_I32=BLOB_I32)

def graph_text(outs):
  sink = UOp.sink(*[t.lazydata for t in outs])
  kernels = {u: u.replace(arg=None) for u in sink.toposort() if u.op is Ops.KERNEL}
  return to_ir(sink.substitute(kernels) if kernels else sink)

def outputs(out): return list(out) if isinstance(out, (tuple, list)) else [out]

for name, python in PROGRAMS.items():
  Tensor.manual_seed(0)
  outs = outputs(eval(python, ENV))
  graph = graph_text(outs)  # before realizing, which replaces the graph
  values, dts, shapes = [], [], []
  for t in outs:
    values += [harvested_number(v) for v in t.flatten().tolist()]
    dts.append(REV[t.dtype.name])
    shapes.append(list(t.shape))
  fresh = outputs(eval(python, ENV))
  schedule, var_vals = fresh[0].schedule_with_vars(*fresh[1:])
  line = {"program": name, "graph": graph, "dtypes": dts, "shapes": shapes, "values": values, "kernels": len(schedule)}
  if var_vals: line["var_vals"] = {v.arg[0]: val for v, val in var_vals.items()}
  print(json.dumps(line))
