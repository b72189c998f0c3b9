# Writes api_movement_graphs.jsonl: for the Tensor methods split, chunk, unflatten, repeat_interleave, roll,
# linspace, meshgrid, cumprod, logcumsumexp, var_mean, std_mean and masked_fill, the tensor-level graph tinygrad
# v0.10.3 builds (the SINK of every output, in the form of extra_graphs.jsonl) and the values it computes on CPU
# (every output flattened, one after another, with each output's dtype and shape).
# tensor/api_movement_test.cc builds the same programs with the C++ API and compares both.
#   CPU=1 python3 tensor/testdata/harvest_api_movement.py /tmp/tg3 > tensor/testdata/api_movement_graphs.jsonl
import json, math, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp
from tinygrad_harvest import R, to_ir, print_program_lines

PROGRAMS = {
  "split_int": "R(5, 4).split(2)",
  "split_sizes_dim1": "R(3, 7).split([2, 0, 5], dim=1)",
  "split_negative_dim": "R(2, 6).split(3, dim=-1)",
  "chunk": "R(11).chunk(4)",
  "chunk_dim1": "R(2, 6, 3).chunk(3, dim=1)",
  "chunk_more_than_size": "R(3, 2).chunk(5)",
  "unflatten": "R(3, 12).unflatten(1, (2, -1, 3))",
  "unflatten_negative_dim": "R(5, 12, 3).unflatten(-2, (2, 2, 3, 1, 1))",
  "repeat_interleave_flat": "R(2, 3).repeat_interleave(2)",
  "repeat_interleave_dim": "R(2, 3).repeat_interleave(3, dim=-1)",
  "roll": "R(6).roll(2, 0)",
  "roll_two_dims": "R(3, 4).roll((1, -5), (0, 1))",
  "roll_full_turn": "R(3, 4).roll(4, -1)",
  "linspace": "Tensor.linspace(-1, 1, 5)",
  "linspace_float_int32": "Tensor.linspace(2.5, -3.0, 7, dtype=dtypes.int32)",
  "linspace_one": "Tensor.linspace(3, 10, 1)",
  "meshgrid_ij": "R(3).meshgrid(R(4, seed=1))",
  "meshgrid_xy_three": "R(3).meshgrid(R(4, seed=1), R(2, seed=2), indexing='xy')",
  "meshgrid_scalar": "R(3).meshgrid(Tensor(2.0))",
  "cumprod": "R(4, 5).cumprod(1)",
  "cumprod_split": "R(520).cumprod(0)",
  "logcumsumexp": "R(3, 5).logcumsumexp(1)",
  "logcumsumexp_axis0": "R(4, 3).logcumsumexp()",
  "var_mean": "R(4, 6).var_mean(1)",
  "var_mean_all": "R(8).var_mean()",
  "std_mean_keepdim": "R(3, 4, 5).std_mean((0, 2), keepdim=True, correction=0)",
  "masked_fill": "R(3, 4).masked_fill(R(3, 4, seed=1) > 0, 0.5)",
  "masked_fill_tensor": "R(3, 4).masked_fill(R(4, dtype=dtypes.bool, seed=2), R(3, 1, seed=3))",
}

print_program_lines(PROGRAMS, dict(R=R, Tensor=Tensor, dtypes=dtypes))
