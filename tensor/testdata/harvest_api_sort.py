# Writes api_sort_graphs.jsonl: for the Tensor methods einsum, sort, topk, pad's modes (constant, reflect,
# replicate, circular), max_pool2d and avg_pool2d with ceil_mode, max_pool2d with return_indices and
# max_unpool2d, the tensor-level graph tinygrad v0.10.3 builds (the SINK of every output, in the form of
# extra_graphs.jsonl) and the values it computes on CPU (every output flattened, one after another, with each
# output's dtype and shape). tensor/api_sort_test.cc builds the same programs with the C++ API and compares both.
# A program whose name ends in "_values" is compared by values only: einsum picks the letters an ellipsis
# stands for from a Python set, so its graph depends on the string hash seed.
#   CPU=1 python3 tensor/testdata/harvest_api_sort.py /tmp/tg3 > tensor/testdata/api_sort_graphs.jsonl
import json, math, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp
from tinygrad_harvest import R, to_ir, print_program_lines

def unpool(x, **kw):
  out, idx = x.max_pool2d(return_indices=True, **kw)
  return Tensor.max_unpool2d(out, idx, **kw)

PROGRAMS = {
  "einsum_matmul": "Tensor.einsum('ij,jk->ik', R(3, 4), R(4, 5, seed=1))",
  "einsum_implicit_output": "Tensor.einsum('jk,ij', R(4, 5), R(3, 4, seed=1))",
  "einsum_transpose": "Tensor.einsum('ij->ji', R(3, 4))",
  "einsum_sum_all": "Tensor.einsum('ij->', R(3, 4))",
  "einsum_batched_permuted": "Tensor.einsum('bij,bjk->kbi', R(2, 3, 4), R(2, 4, 2, seed=1))",
  "einsum_outer": "Tensor.einsum('i,j->ij', R(3), R(4, seed=1))",
  "einsum_three_spaces": "Tensor.einsum('ij, jk ,kl -> il', R(2, 3), R(3, 4, seed=1), R(4, 2, seed=2))",
  "einsum_int_dtype": "Tensor.einsum('ij,ij->i', R(3, 4, dtype=dtypes.int32), R(3, 4, dtype=dtypes.int32, seed=1), dtype=dtypes.float32)",
  "einsum_ellipsis_values": "Tensor.einsum('...ij,...jk->...ik', R(2, 3, 4), R(2, 4, 5, seed=1))",
  "einsum_ellipsis_implicit_values": "Tensor.einsum('b...,b...', R(3, 2, 2), R(3, 2, 2, seed=1))",
  "sort": "R(2, 5).sort()",
  "sort_dim0_descending": "R(3, 2).sort(dim=0, descending=True)",
  "sort_ties_int": "(R(2, 4, dtype=dtypes.int32) % 3).sort(1)",
  "sort_power_of_two": "R(3, 4).sort(-1, descending=True)",
  "topk": "R(3, 4).topk(2)",
  "topk_smallest_dim0": "R(3, 4).topk(2, dim=0, largest=False)",
  "pad_constant_mode": "R(2, 3).pad(((1, 0), (2, -1)), mode='constant', value=2.5)",
  "pad_reflect": "R(2, 3, 4).pad(((0, 0), (1, 2), (2, 3)), mode='reflect')",
  "pad_reflect_negative": "R(3, 4).pad(((-1, 2), (2, 0)), mode='reflect')",
  "pad_replicate": "R(3, 4).pad(((1, -1), (-2, 3)), mode='replicate')",
  "pad_circular": "R(3, 4).pad(((1, 2), (3, 0)), mode='circular')",
  "pad_circular_full": "R(2, 3).pad(((2, 2), (0, 3)), mode='circular')",
  "max_pool_ceil": "R(1, 1, 5, 5).max_pool2d(ceil_mode=True)",
  "max_pool_ceil_stride_pad": "R(1, 2, 6, 6).max_pool2d((3, 3), stride=2, padding=1, ceil_mode=True)",
  "avg_pool_ceil": "R(1, 1, 5, 5).avg_pool2d(ceil_mode=True)",
  "avg_pool_ceil_exclude_pad": "R(1, 2, 6, 6).avg_pool2d((3, 3), stride=2, padding=1, ceil_mode=True, count_include_pad=False)",
  "avg_pool_ceil_include_pad": "R(1, 2, 6, 6).avg_pool2d((3, 3), stride=2, padding=1, ceil_mode=True)",
  "max_pool_indices": "R(1, 2, 4, 4).max_pool2d(return_indices=True)",
  "max_pool_indices_overlap": "R(1, 1, 5, 5).max_pool2d((3, 3), stride=1, padding=1, return_indices=True)",
  "max_unpool": "unpool(R(1, 2, 4, 4))",
  "max_unpool_output_size": "Tensor.max_unpool2d(*R(1, 1, 5, 5).max_pool2d(return_indices=True), output_size=(5, 5))",
}

print_program_lines(PROGRAMS, dict(R=R, Tensor=Tensor, dtypes=dtypes, unpool=unpool))
