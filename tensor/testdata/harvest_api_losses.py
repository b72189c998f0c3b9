# Writes api_losses_graphs.jsonl: for the Tensor methods nll_loss, cross_entropy, scatter, scatter_reduce and
# interpolate, the tensor-level graph tinygrad v0.10.3 builds (the SINK of every output, in the form of
# extra_graphs.jsonl) and the values it computes on CPU (every output flattened, with its dtype and shape).
# tensor/api_losses_test.cc builds the same programs with the C++ API and compares both.
#   CPU=1 python3 tensor/testdata/harvest_api_losses.py /tmp/tg3 > tensor/testdata/api_losses_graphs.jsonl
import json, math, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp
from tinygrad_harvest import R, to_ir, print_program_lines

LABELS = "Tensor([0, 2, 1, 2])"
PROGRAMS = {
  "nll_loss": f"R(4, 3).log_softmax().nll_loss({LABELS})",
  "nll_loss_weight_ignore": f"R(4, 3).log_softmax().nll_loss({LABELS}, weight=R(3, seed=1).abs(), ignore_index=1)",
  "nll_loss_sum_ignore": f"R(4, 3).nll_loss({LABELS}, ignore_index=2, reduction='sum')",
  "nll_loss_none_spatial": "R(2, 3, 4).log_softmax(1).nll_loss(Tensor([[0, 1, 2, 1], [2, 2, 0, 1]]), reduction='none')",
  "cross_entropy": "R(4, 5).cross_entropy(Tensor([1, 0, 4, 2]))",
  "cross_entropy_smoothing_sum": "R(4, 5).cross_entropy(Tensor([1, 0, 4, 2]), reduction='sum', label_smoothing=0.1)",
  "cross_entropy_probabilities": "R(3, 4).cross_entropy(R(3, 4, seed=1).softmax(), reduction='none')",
  "cross_entropy_spatial": "R(2, 3, 2).cross_entropy(R(2, 3, 2, seed=1).softmax(1), label_smoothing=0.2)",
  "scatter": "R(3, 5).scatter(0, Tensor([[0, 1, 2, 0]]), R(2, 5, seed=1))",
  "scatter_dim1_repeated": "R(3, 5).scatter(1, Tensor([[0, 0, 2], [4, 1, 4]]), R(2, 5, seed=1))",
  "scatter_scalar": "R(2, 4).scatter(1, Tensor([[2], [3]]), 1.25)",
  "scatter_scalar_add": "R(2, 4).scatter(1, Tensor([[2, 2], [3, 0]]), 1.25, reduce='add')",
  "scatter_scalar_multiply": "R(2, 4).scatter(-1, Tensor([[2], [3]]), 3, reduce='multiply')",
  "scatter_int": "R(3, 4, dtype=dtypes.int32).scatter(-1, Tensor([[3, 0]]), R(1, 2, dtype=dtypes.int32, seed=1))",
  "scatter_reduce_sum": "R(3, 5).scatter_reduce(0, Tensor([[0, 1, 0, 2, 0], [1, 1, 0, 0, 2]]), R(2, 5, seed=1), 'sum')",
  "scatter_reduce_prod_exclude": "R(3, 4).scatter_reduce(1, Tensor([[0, 0], [3, 1]]), R(2, 3, seed=1), 'prod', include_self=False)",
  "scatter_reduce_mean": "R(3, 5).scatter_reduce(0, Tensor([[0, 1, 0, 2, 0], [1, 1, 0, 0, 2]]), R(2, 5, seed=1), 'mean')",
  "scatter_reduce_mean_exclude": "R(3, 5).scatter_reduce(0, Tensor([[0, 1, 0, 2, 0], [1, 1, 0, 0, 2]]), R(2, 5, seed=1), 'mean', include_self=False)",
  "scatter_reduce_amax": "R(3, 4).scatter_reduce(1, Tensor([[0, 0], [3, 1]]), R(2, 3, seed=1), 'amax')",
  "scatter_reduce_amin_exclude": "R(3, 4).scatter_reduce(1, Tensor([[0, 0], [3, 1]]), R(2, 3, seed=1), 'amin', include_self=False)",
  "scatter_reduce_amax_int": "R(2, 3, dtype=dtypes.int32).scatter_reduce(0, Tensor([[1, 1, 0]]), R(1, 3, dtype=dtypes.int32, seed=1), 'amax', include_self=False)",
  "interpolate_linear": "R(1, 3, 4).interpolate((5, 7))",
  "interpolate_align_corners": "R(2, 4, 6).interpolate((3, 4), align_corners=True)",
  "interpolate_nearest": "R(2, 3, 5).interpolate((8,), mode='nearest')",
  "interpolate_nearest_exact": "R(3, 4).interpolate((6, 3), mode='nearest-exact')",
  "interpolate_int": "R(3, 4, dtype=dtypes.int32).interpolate((5, 6))",
  "interpolate_uint8": "R(2, 3, dtype=dtypes.uint8).interpolate((4, 5))",
}

print_program_lines(PROGRAMS, dict(R=R, Tensor=Tensor, dtypes=dtypes))
