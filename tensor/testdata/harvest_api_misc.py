# Writes api_misc_graphs.jsonl: for the Tensor methods binary_crossentropy, masked_select, sequential and
# rearrange, the in-place operators (__iadd__, __isub__, ...: self.assign(self.op(x))), and the elementwise
# building blocks alu and ufix (tinygrad's Tensor inherits both from SimpleMathTrait without implementing
# alu and const_like; they are recorded here as a Tensor would have them: alu applies the UOp's ALU op to the
# operands' UOps, as _apply_uop does, and ufix of a number is full_like), the tensor-level graph tinygrad
# v0.10.3 builds (the SINK of every output, in the form of extra_graphs.jsonl) and the values it computes on
# CPU (every output flattened, with its dtype and shape). tensor/api_misc_test.cc builds the same programs
# with the C++ API and compares both.
#   CPU=1 python3 tensor/testdata/harvest_api_misc.py /tmp/tg3 > tensor/testdata/api_misc_graphs.jsonl
import os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import Ops
from tinygrad_harvest import R, print_program_lines

def inplace(t, hook, x):
  """`t op= x` for the in-place hook's name, e.g. inplace(t, "__iadd__", x) is `t += x`: t, its UOp now an ASSIGN."""
  return getattr(t, hook)(x)

def alu(t, op, *src):
  return t._apply_uop(lambda *u: u[0].alu(op, *u[1:]), *src)

I32 = dict(dtype=dtypes.int32)
PROGRAMS = {
  "binary_crossentropy": "R(4, 3).sigmoid().binary_crossentropy(R(4, 3, seed=1).sigmoid())",
  "binary_crossentropy_sum": "R(2, 5).sigmoid().binary_crossentropy(R(2, 5, seed=1).sigmoid(), reduction='sum')",
  "binary_crossentropy_int_none": "R(5).sigmoid().binary_crossentropy(Tensor([0, 1, 1, 0, 1]), reduction='none')",
  "masked_select": "R(3, 4).masked_select(R(3, 4, seed=1) > 0)",
  "masked_select_broadcast": "R(2, 3).masked_select(Tensor([True, False, True]))",
  "masked_select_int": "R(6, **I32).masked_select(R(6, dtype=dtypes.bool, seed=1))",
  "sequential": "R(2, 3).sequential([lambda x: x * 2, lambda x: x + 1, Tensor.relu])",
  "rearrange_permute": "R(2, 3, 4, 5).rearrange('b c h w -> b h w c')",
  "rearrange_split_with_size": "R(3, 8).rearrange('b (h w) -> b h w', h=2)",
  "rearrange_merge": "R(2, 3, 4).rearrange('a b c -> (a c) b')",
  "rearrange_ellipsis": "R(2, 3, 4).rearrange('... c -> c ...')",
  "rearrange_ellipsis_merged": "R(2, 3, 4).rearrange('a ... -> (a ...)')",
  "rearrange_new_axes": "R(3, 4).rearrange('a b -> b 1 a ()')",
  "rearrange_drop_axis": "R(3, 1, 4).rearrange('a 1 b -> b a')",
  "rearrange_split_merge": "R(6, 4).rearrange('(a b) c -> a (c b)', a=2)",
  "rearrange_ellipsis_split": "R(2, 12).rearrange('... (h w) -> ... w h', w=3)",
  "iadd": "inplace(R(3, 4), '__iadd__', R(3, 4, seed=1))",
  "iadd_number": "inplace(R(3, 4), '__iadd__', 2)",
  "isub_broadcast": "inplace(R(3, 4), '__isub__', R(4, seed=1))",
  "imul": "inplace(R(3, 4), '__imul__', 0.5)",
  "itruediv": "inplace(R(3, 4), '__itruediv__', 4)",
  "ifloordiv_int": "inplace(R(3, 4, **I32), '__ifloordiv__', 3)",
  "imatmul": "inplace(R(3, 3), '__imatmul__', R(3, 3, seed=1))",
  "ipow": "inplace(R(3, 4), '__ipow__', 2)",
  "iand": "inplace(R(3, 4, **I32), '__iand__', R(3, 4, **I32, seed=1))",
  "ior": "inplace(R(3, 4, **I32), '__ior__', 5)",
  "ixor": "inplace(R(3, 4, **I32), '__ixor__', R(3, 4, **I32, seed=1))",
  "ilshift": "inplace(R(3, 4, dtype=dtypes.uint8), '__ilshift__', 2)",
  "irshift": "inplace(R(3, 4, dtype=dtypes.uint8), '__irshift__', 1)",
  "alu_max": "alu(R(3, 4), Ops.MAX, R(3, 4, seed=1))",
  "alu_exp2": "alu(R(3, 4), Ops.EXP2)",
  "alu_cmplt": "alu(R(3, 4), Ops.CMPLT, R(3, 4, seed=1))",
  "alu_where": "alu(R(3, 4, dtype=dtypes.bool), Ops.WHERE, R(3, 4, seed=1), R(3, 4, seed=2))",
  "ufix_number": "R(2, 3, **I32).full_like(2.5)",
}

print_program_lines(PROGRAMS, dict(R=R, Tensor=Tensor, dtypes=dtypes, Ops=Ops, I32=I32, inplace=inplace, alu=alu))
