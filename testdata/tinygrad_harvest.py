# What the scripts that harvest reference data from tinygrad v0.10.3 (*/testdata/harvest_*.py and their kin) share:
# uopc's textual IR (docs/ir.md) written from tinygrad UOps and read back into them, the scalar type names it uses,
# and the corpus's input formula (value, and R for a realized input tensor filled by it). One copy here keeps every
# data file in the same notation. A script puts tinygrad's directory on sys.path first, then this directory:
#   sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
#   from tinygrad_harvest import to_ir, R
import math, re
from tinygrad import Tensor, dtypes
from tinygrad.dtype import DType, PtrDType
from tinygrad.ops import UOp, Ops, KernelInfo
from tinygrad.shape.shapetracker import ShapeTracker
from tinygrad.shape.view import View

# The IR's scalar type names, and each of tinygrad's dtype names (dtype.name) back to the IR's.
NAMES = {'float16':dtypes.half,'bfloat16':dtypes.bfloat16,'float32':dtypes.float32,'float64':dtypes.float64,'int8':dtypes.int8,
  'uint8':dtypes.uint8,'int16':dtypes.int16,'uint16':dtypes.uint16,'int32':dtypes.int32,'uint32':dtypes.uint32,'int64':dtypes.int64,
  'uint64':dtypes.uint64,'bool':dtypes.bool,'void':dtypes.void}
REV = {v.name: k for k, v in NAMES.items()}

def ir_dt(d):
  if isinstance(d, PtrDType):
    return ir_dt(d.base) + f".ptr({d.size}" + (", local=True" if d.local else "") + ")" + (f".vec({d.v})" if d.v > 1 else "")
  return REV[d.scalar().name] + (f".vec({d.count})" if d.count > 1 else "")

def ir_arg(a):
  if isinstance(a, tuple): return "(" + ", ".join(ir_arg(x) for x in a) + ("," if len(a) == 1 else "") + ")"
  if isinstance(a, DType): return "dtypes." + ir_dt(a)
  if isinstance(a, Ops): return "Ops." + a.name
  if isinstance(a, float) and a != a: return "nan"
  # A symbolic int in a movement op's arg: tinygrad's repr of the UOp, on one line.
  if isinstance(a, UOp): return "".join(line.lstrip() for line in repr(a).split("\n"))
  return repr(a)

def to_ir(root, uniques=None):
  """The graph under root in the textual IR. UNIQUE args are renumbered in toposort order through `uniques` (a
  fresh dict when None), so the text does not depend on what ran before; share one dict to number several graphs
  alike. A kernel AST has no UNIQUE."""
  if uniques is None: uniques = {}
  ids, lines = {}, []
  for u in root.toposort():
    ids[u] = f"%{len(ids)}"
    arg = uniques.setdefault(u.arg, len(uniques)) if u.op is Ops.UNIQUE else u.arg
    s = f"{ids[u]} = {u.op.name} : {ir_dt(u.dtype)}"
    if u.src: s += " (" + ", ".join(ids[x] for x in u.src) + ")"
    if arg is not None: s += " arg=" + ir_arg(arg)
    lines.append(s)
  return "\n".join(lines) + f"\nreturn {ids[root]}\n"

LINE = re.compile(r"(%\d+) = (\w+) : (\S+)(?: \(([^)]*)\))?(?: arg=(.*))?$")
# What a type or an arg in the IR may name: it is Python, evaluated with these.
SCOPE = dict(NAMES, ShapeTracker=ShapeTracker, View=View, KernelInfo=KernelInfo, Ops=Ops, UOp=UOp, dtypes=dtypes, inf=math.inf,
             nan=math.nan)

def read_ir(text):
  """The UOp graph a textual IR (as to_ir writes it) describes: the node its `return` line names."""
  nodes = {}
  for line in text.splitlines():
    line = line.strip()
    if not line: continue
    if line.startswith("return"): return nodes[line.split()[1]]
    m = LINE.match(line)
    assert m, f"not an IR line: {line}"
    name, op, dtype, srcs, arg = m.groups()
    src = tuple(nodes[s.strip()] for s in srcs.split(",")) if srcs else ()
    nodes[name] = UOp(Ops[op], eval(dtype, SCOPE), src, eval(arg, SCOPE) if arg is not None else None)
  raise ValueError("IR without a return line")

def value(dt, b, j):
  """Element j of the corpus's input buffer with argument b, as a value of dtype dt (corpus README)."""
  k = ((j * 2654435761 + b * 40503 + 12345) % 2**32) >> 8
  if dtypes.is_float(dt): return (k % 2049 - 1024) / 512
  if dt == dtypes.bool: return k % 2 == 1
  if dtypes.is_unsigned(dt): return k % 201
  return k % 201 - 100

def R(*shape, dtype=dtypes.float32, seed=0, scale=None):
  """A realized input of the given shape filled by the corpus formula with argument seed + 1, times scale if given."""
  n = 1
  for s in shape: n *= s
  t = Tensor([value(dtype, seed + 1, j) for j in range(n)], dtype=dtype).reshape(shape).contiguous().realize()
  return t if scale is None else (t * scale).contiguous().realize()

def harvested_number(v):
  """A value as the harvested JSON lines write it: JSON has no NaN or infinities, so they are strings."""
  if isinstance(v, float) and not math.isfinite(v): return "nan" if v != v else ("inf" if v > 0 else "-inf")
  return v

def print_program_lines(programs, env):
  """Runs each program (name -> a Python expression evaluated in env, the seed reset first) and prints one JSON line
  for it: its graph, its outputs' dtypes and shapes, and their values one after another (a tuple or list of tensors
  is several outputs), as tensor/testing/harvested_values.h reads them."""
  import json
  for name, python in programs.items():
    Tensor.manual_seed(0)
    out = eval(python, env)
    outs = list(out) if isinstance(out, (tuple, list)) else [out]
    graph = to_ir(UOp.sink(*[t.lazydata for t in outs]))  # before realizing, which replaces the graph
    values, dts, shapes = [], [], []
    for t in outs:
      values += [harvested_number(v) for v in t.flatten().tolist()]
      dts.append(REV[t.dtype.name])
      shapes.append(list(t.shape))
    print(json.dumps({"program": name, "graph": graph, "dtypes": dts, "shapes": shapes, "values": values}))
