# Writes api_random_graphs.jsonl: for the Tensor methods rand_like, randn_like, randperm, kaiming_normal,
# dropout (in training and in eval mode), multinomial, clone and full_like (uopc's ConstLike), the tensor-level
# graph tinygrad v0.10.3 builds (the SINK of every output, in the form of extra_graphs.jsonl) and the values it
# computes on CPU, each program run right after Tensor.manual_seed(0), so the random numbers must be equal.
# tensor/api_random_test.cc builds the same programs with the C++ API and compares both.
#   CPU=1 python3 tensor/testdata/harvest_api_random.py /tmp/tg3 > tensor/testdata/api_random_graphs.jsonl
import os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad_harvest import R, print_program_lines

def training(build):
  """What `build()` returns, built with Tensor.training set (dropout reads it when building)."""
  with Tensor.train(): return build()

PROGRAMS = {
  "rand_like": "R(2, 3).rand_like()",
  "rand_like_half": "R(3, 5).rand_like(dtype=dtypes.float16).float()",
  "rand_like_twice": "(R(2, 3).rand_like(), R(4,).rand_like())",
  "randn_like": "R(2, 3).randn_like()",
  "randn_like_int_to_float": "R(4, 3, dtype=dtypes.int32).randn_like(dtype=dtypes.float32)",
  "randperm": "Tensor.randperm(8)",
  "kaiming_normal": "Tensor.kaiming_normal(4, 3, 2)",
  "kaiming_normal_a": "Tensor.kaiming_normal(3, 5, a=0.2)",
  "dropout_eval": "R(3, 4).dropout()",
  "dropout_training": "training(lambda: R(3, 4).dropout())",
  "dropout_training_p": "training(lambda: R(4, 5).dropout(0.25))",
  "dropout_training_zero": "training(lambda: R(3, 4).dropout(0.0))",
  "dropout_training_int": "training(lambda: R(2, 5, dtype=dtypes.int32).dropout(0.3))",
  "multinomial": "R(5).abs().multinomial()",
  "multinomial_replacement": "R(6).abs().multinomial(10, replacement=True)",
  "multinomial_2d": "R(3, 4).abs().multinomial(6, replacement=True)",
  "multinomial_int": "R(2, 5, dtype=dtypes.int32).abs().multinomial(3, replacement=True)",
  "clone_unrealized": "(R(2, 3) + 1).clone()",
  "const_like": "R(2, 3).full_like(2.5)",
  "const_like_int": "R(2, 3, dtype=dtypes.int32).full_like(7)",
}

print_program_lines(PROGRAMS, dict(R=R, Tensor=Tensor, dtypes=dtypes, training=training))
