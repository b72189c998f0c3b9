# Writes extra_graphs.jsonl: tensor-level graphs tinygrad v0.10.3 builds for Tensor API calls the 70 corpus
# programs do not cover (conv with bias, pooling options, gather, cummax, bitcast to other widths, ...), in the
# form of schedule/testdata/tensor_graphs.jsonl (inputs realized, UNIQUE args renumbered in toposort order).
# tensor/extra_graphs_test.cc builds the same programs with the C++ API and compares.
#   CPU=1 python3 tensor/testdata/harvest_extra_graphs.py /tmp/tg3 > tensor/testdata/extra_graphs.jsonl
import json, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp
from tinygrad_harvest import R, to_ir

PROGRAMS = {
  "conv2d_bias_dilation": "R(1, 2, 9, 9).conv2d(R(4, 2, 3, 3, seed=1), R(4, seed=2), dilation=2, padding=(1, 2))",
  "max_pool_stride_pad": "R(1, 1, 7, 7).max_pool2d(kernel_size=(3, 3), stride=2, padding=1)",
  "avg_pool_no_pad_count": "R(1, 1, 6, 6).avg_pool2d(kernel_size=(2, 2), padding=1, count_include_pad=False)",
  "gather_dim1": "R(4, 5).gather(1, Tensor([[0, 1], [2, 3], [4, 0], [1, 1]]))",
  "stack_dim1": "Tensor.stack(R(3, 2), R(3, 2, seed=1), dim=1)",
  "cummax": "R(20).cummax(0)",
  "cumsum_long": "R(600).cumsum()",
  "bitcast_wider": "R(8, dtype=dtypes.uint8).bitcast(dtypes.uint32)",
  "bitcast_narrower": "R(2, dtype=dtypes.uint32).bitcast(dtypes.uint8)",
  "tanh_swish_erf": "R(10).tanh() + R(10, seed=1).swish() + R(10, seed=2).erf()",
  "logsumexp": "R(3, 7).logsumexp(1)",
  "min_argmin": "R(5, 6).min(1) + R(5, 6, seed=1).argmin(1)",
  "std_keepdim": "R(4, 9).std(axis=1, keepdim=True)",
  "batchnorm": "R(2, 3, 4, 4).batchnorm(R(3, seed=1), R(3, seed=2), R(3, seed=3), R(3, seed=4))",
  "sdpa_causal": "R(1, 2, 6, 8).scaled_dot_product_attention(R(1, 2, 6, 8, seed=1), R(1, 2, 6, 8, seed=2), is_causal=True)",
  "index_mixed": "R(4, 5, 6)[1, ::2, None, -3:]",
  "pad_negative_value": "R(5, 5).pad(((-1, 2), (1, -2)), value=1.5)",
  "randn": "Tensor.randn(3, 4)",
  "randint": "Tensor.randint(10, low=3, high=9)",
  "eye_rect": "Tensor.eye(3, 5) + Tensor.eye(3, 5)",
  "arange_float": "Tensor.arange(0.5, 3.0, 0.75)",
  "squeeze_flatten": "R(2, 1, 3, 1).squeeze().flatten() * R(6, seed=1).unsqueeze(0).flatten()",
  "repeat": "R(2, 3).repeat(2, 1, 2)",
  "mod_neg": "R(12, dtype=dtypes.int32) % -5 + R(12, seed=1) % 0.75",
}

for name, python in PROGRAMS.items():
  Tensor.manual_seed(0)
  out = eval(python, dict(R=R, Tensor=Tensor, dtypes=dtypes))
  print(json.dumps({"program": name, "graph": to_ir(UOp.sink(out.lazydata))}))
