# Writes api_setitem_graphs.jsonl: writes into views of realized tensors (tinygrad v0.10.3's Tensor.__setitem__,
# and Tensor.assign on a shrunk, permuted or flipped view, as examples/gpt2.py updates its KV cache). Each program
# is Python statements: they build the inputs, call start() (which zeroes GlobalCounters), write, and leave the
# tensors to read afterwards in `outs`. A line holds the kernels (and copies) run from start() on, the graph of the
# tensors passed to G() before they were realized ("" when the program calls no G), and the values of `outs` after
# the writes (every output flattened, with its dtype and shape). tensor/api_setitem_test.cc runs the same programs
# with the C++ API and compares all three.
#   CPU=1 python3 tensor/testdata/harvest_api_setitem.py /tmp/tg3 > tensor/testdata/api_setitem_graphs.jsonl
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.helpers import GlobalCounters
from tinygrad.ops import UOp
from tinygrad_harvest import R, REV, to_ir, harvested_number

# The KV cache of examples/gpt2.py: (k/v, batch, context, heads, head size), written at start_pos.
KV = """cache = Tensor.zeros(2, 1, 6, 2, 3).contiguous().realize()
xk, xv = R(1, 2, 2, 3), R(1, 2, 2, 3, seed=1)
"""
GRID = "t = R(4, 5)\n"
INTS = "t = R(3, 4, dtype=dtypes.int32)\n"

PROGRAMS = {
  # Tensor.assign into views
  "assign_kv_cache": KV + """start()
a = cache.shrink((None, None, (3, 5), None, None)).assign(Tensor.stack(xk, xv))
G(a)
a.realize()
outs = [cache]""",
  "assign_kv_cache_steps": KV + """head = cache[0, 0, :, 1]
start()
for pos, k, v in ((0, xk, xv), (2, xv, xk)):
  cache.shrink((None, None, (pos, pos + 2), None, None)).assign(Tensor.stack(k, v)).realize()
outs = [cache, head]""",
  "assign_shrink_reads_before": GRID + """rows, v = t.sum(1), R(2, 5, seed=1)
start()
a = t.shrink(((1, 3), (0, 5))).assign(v)
G(a, rows)
Tensor.realize(a, rows)
outs = [t, rows]""",
  "assign_permuted_shrink": GRID + """v = R(2, 4, seed=1)
start()
a = t.permute(1, 0).shrink(((1, 3), None)).assign(v)
G(a)
a.realize()
outs = [t]""",
  "assign_flipped": GRID + """v = R(4, 5, seed=1)
start()
a = t.flip(0).assign(v * 2)
G(a)
a.realize()
outs = [t]""",
  "assign_overlap_contiguous": GRID + """start()
a = t.shrink(((0, 3), None)).assign(t.shrink(((1, 4), None)).contiguous())
G(a)
a.realize()
outs = [t]""",
  # Tensor.__setitem__
  "setitem_int_number": GRID + "start()\nt[1] = 3.0\nouts = [t]",
  "setitem_negative_int": GRID + "start()\nt[-1, -2] = -7.5\nouts = [t]",
  "setitem_slice_tensor": GRID + "v = R(4, 2, seed=1)\nstart()\nt[:, 1:3] = v\nouts = [t]",
  "setitem_broadcast_row": GRID + "v = R(5, seed=1)\nstart()\nt[1:3] = v\nouts = [t]",
  "setitem_strided": GRID + "v = R(2, seed=1)\nstart()\nt[::2, 1] = v\nouts = [t]",
  "setitem_stepped_slice": GRID + "v = R(2, 2, seed=1)\nstart()\nt[3:0:-2, 1:5:3] = v\nouts = [t]",
  "setitem_ellipsis_newaxis": GRID + "start()\nt[None, ..., 2] = 0.5\nouts = [t]",
  "setitem_whole": GRID + "v = R(5, seed=1)\nstart()\nt[:] = 1.0\nt[...] = v\nouts = [t]",
  "setitem_empty_slice": GRID + "start()\nt[1:1] = 5.0\nouts = [t]",
  "setitem_int_dtype": INTS + "v = R(4, seed=1)\nstart()\nt[0] = 2.7\nt[2] = v\nouts = [t]",
  "setitem_bool": "t = R(3, 4, dtype=dtypes.bool)\nstart()\nt[1] = True\nt[:, 0] = False\nouts = [t]",
  "setitem_overlap": GRID + "start()\nt[:, 1:3] = t[:, 0:2]\nouts = [t]",
  "setitem_overlap_backward": GRID + "start()\nt[:, 1:4] = t[:, 2:5]\nouts = [t]",
  "setitem_views_see_it": GRID + "row = t[1]\ndoubled = t * 2\nstart()\nt[1, ::2] = 9.0\nouts = [t, row, doubled]",
  "setitem_prefix_view": GRID + "rows = t[0:2]\nstart()\nrows[1] = 5.0\nouts = [t, rows]",
  "setitem_unrealized_target": "t = Tensor.arange(12).reshape(3, 4)\nstart()\nt[1] = 2\nouts = [t]",
  "setitem_tensor_index": GRID + "i = Tensor([0, 2]).realize()\nstart()\nt[i] = 7.0\nouts = [t]",
  "setitem_tensor_index_values": GRID + "i = Tensor([3, 0]).realize()\nv = R(2, 5, seed=1)\nstart()\nt[i] = v\nouts = [t]",
  "setitem_tensor_index_repeated": GRID + "i = Tensor([1, 1]).realize()\nv = R(2, 5, seed=1)\nstart()\nt[i] = v\nouts = [t]",
  "setitem_tensor_index_negative": GRID + "i = Tensor([-1]).realize()\nstart()\nt[i] = 5.0\nouts = [t]",
  "setitem_tensor_index_out_of_range": GRID + "i = Tensor([4, -5]).realize()\nstart()\nt[i] = 5.0\nouts = [t]",
  "setitem_two_tensor_indices": GRID + "i, j = Tensor([0, 3]).realize(), Tensor([1, 4]).realize()\nv = R(2, seed=1)\nstart()\nt[i, j] = v\nouts = [t]",
  "setitem_tensor_index_column": GRID + "i = Tensor([4, 0, 2]).realize()\nstart()\nt[:, i] = -1.0\nouts = [t]",
  "setitem_tensor_index_2d": "t = R(6)\ni = Tensor([[0, 1], [4, 5]]).realize()\nv = R(2, 2, seed=1)\nstart()\nt[i] = v\nouts = [t]",
  "setitem_tensor_index_int_dtype": INTS + "i, v = Tensor([2]).realize(), R(1, 4, seed=1)\nstart()\nt[i] = v\nouts = [t]",
}

for name, code in PROGRAMS.items():
  Tensor.manual_seed(0)
  state = {"graph": ""}
  def G(*tensors): state["graph"] = to_ir(UOp.sink(*[t.lazydata for t in tensors]))
  env = dict(R=R, Tensor=Tensor, dtypes=dtypes, G=G, start=GlobalCounters.reset)
  exec(code, env)
  kernels = GlobalCounters.kernel_count
  values, dts, shapes = [], [], []
  for t in env["outs"]:
    values += [int(v) if isinstance(v, bool) else harvested_number(v) for v in t.flatten().tolist()]
    dts.append(REV[t.dtype.name])
    shapes.append(list(t.shape))
  print(json.dumps({"program": name, "graph": state["graph"], "kernels": kernels, "dtypes": dts, "shapes": shapes,
                    "values": values}))
