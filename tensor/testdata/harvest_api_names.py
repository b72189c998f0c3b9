# Writes tinygrad_tensor_names.txt: every public name of tinygrad v0.10.3's Tensor class, one a line, sorted.
# nn/api_names_test.cc checks that tensor/testdata/api_names.txt maps each of them to its uopc counterpart
# (or marks it missing), so that list cannot go stale.
# A name is public when
#   - it does not start with '_' (methods, properties, class attributes such as `training`, slots such as
#     `grad`), or
#   - it is a Python operator hook that Tensor (or a tinygrad base class) defines: the arithmetic, bitwise,
#     comparison, reflected and in-place operators, indexing, len and bool. Object plumbing (__init__,
#     __del__, __repr__, __hash__, __getstate__, ...) and class data (__slots__, __annotations__, ...) are not.
#   cd /tmp && CPU=1 python3 /path/to/tensor/testdata/harvest_api_names.py /tmp/tg3 \
#     > tensor/testdata/tinygrad_tensor_names.txt
import sys
sys.path.insert(0, sys.argv[1])
from tinygrad import Tensor

OPERATOR_STEMS = {"add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
                  "lshift", "rshift"}
OPERATOR_HOOKS = ({f"__{s}__" for s in OPERATOR_STEMS} | {f"__r{s}__" for s in OPERATOR_STEMS} |
                  {f"__i{s}__" for s in OPERATOR_STEMS} |
                  {"__neg__", "__invert__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__",
                   "__getitem__", "__setitem__", "__len__", "__bool__"})

def defined_by_tinygrad(name):
  # The class in the MRO that provides `name` must be a tinygrad one, not `object`.
  for klass in Tensor.__mro__:
    if name in vars(klass): return klass.__module__.startswith("tinygrad")
  return False

names = [n for n in dir(Tensor) if not n.startswith("_") or (n in OPERATOR_HOOKS and defined_by_tinygrad(n))]
sys.stdout.write("".join(f"{n}\n" for n in sorted(names)))
