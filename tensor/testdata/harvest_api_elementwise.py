# Writes api_elementwise_graphs.jsonl: for each call of tinygrad v0.10.3's elementwise and activation methods
# below (softplus, mish, elu, ..., copysign, lerp, isclose), the tensor-level graph tinygrad builds (inputs
# realized, UNIQUE args renumbered in toposort order, as harvest_extra_graphs.py) and the values it computes
# on CPU (flattened row-major; NaN and infinities as the strings "nan", "inf", "-inf", since JSON has no such
# numbers). tensor/api_elementwise_test.cc builds the same programs with the C++ API and compares both.
#   CPU=1 python3 tensor/testdata/harvest_api_elementwise.py /tmp/tg3 > tensor/testdata/api_elementwise_graphs.jsonl
import json, math, os, sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../testdata"))
from tinygrad import Tensor, dtypes
from tinygrad.ops import UOp
from tinygrad_harvest import R, to_ir

def V(values, shape, dtype=dtypes.float32):
  """A realized input holding `values` (what the C++ test's Tensor::FromVector builds)."""
  return Tensor(values, dtype=dtype).reshape(shape).contiguous().realize()

inf, nan = math.inf, math.nan
# Inputs around the branches of the activations: both signs, near 0, the kinks of relu6 (0, 6) and hardswish
# (-3, 3), and large magnitudes.
X = "V([-7.0, -3.0, -2.5, -1.0, -0.25, -1e-3, 0.0, 1e-3, 0.25, 1.0, 2.5, 3.0, 6.0, 7.5], (2, 7))"
# [-1, 1], the domain of asin, acos and atanh, with its ends and points near them.
UNIT = "V([-1.0, -0.999, -0.75, -0.5, -1e-3, 0.0, 1e-3, 0.5, 0.75, 0.999, 1.0], (11,))"
# acosh's domain starts at 1; 0.5 is outside it (NaN).
ACOSH = "V([0.5, 1.0, 1.001, 1.5, 2.0, 10.0, 100.0], (7,))"
SMALL_INT = "V([-3, -1, 0, 1, 2, 5], (2, 3), dtypes.int32)"
CLOSE_A = "V([1.0, 1.0, inf, inf, -inf, nan, nan, 0.0, 1e-9, 100.0, 1.0, -2.0], (12,))"
CLOSE_B = "V([1.000001, 1.1, inf, -inf, -inf, nan, 1.0, 0.0, 0.0, 100.001, nan, -2.00002], (12,))"

PROGRAMS = {
  "softplus": f"{X}.softplus()",
  "softplus_beta": f"{X}.softplus(beta=2) + {X}.softplus(beta=0.5)",
  "softplus_int": f"{SMALL_INT}.softplus()",
  "mish": f"{X}.mish()",
  "elu": f"{X}.elu()",
  "elu_alpha": f"{X}.elu(alpha=0.5)",
  "celu": f"{X}.celu()",
  "celu_alpha": f"{X}.celu(alpha=2.5)",
  "selu": f"{X}.selu()",
  "relu6": f"{X}.relu6()",
  "hardswish": f"{X}.hardswish()",
  "hardsigmoid": f"{X}.hardsigmoid()",
  "hardsigmoid_params": f"{X}.hardsigmoid(alpha=0.25, beta=0.25)",
  "hardtanh": f"{X}.hardtanh()",
  "hardtanh_bounds": f"{X}.hardtanh(min_val=-0.5, max_val=2.0)",
  "hardtanh_int": f"{SMALL_INT}.hardtanh(-2, 3)",
  "softsign": f"{X}.softsign()",
  "quick_gelu": f"{X}.quick_gelu()",
  "asin": f"{UNIT}.asin()",
  "acos": f"{UNIT}.acos()",
  "atan": f"{X}.atan()",
  "sinh": f"{X}.sinh()",
  "cosh": f"{X}.cosh()",
  "asinh": f"{X}.asinh()",
  "acosh": f"{ACOSH}.acosh()",
  "atanh": f"{UNIT}.atanh()",
  "copysign_tensor": f"{X}.copysign(R(7))",
  "copysign_float": f"{X}.copysign(-2.0)",
  "copysign_int_scalar": f"{X}.copysign(1)",
  "copysign_int": f"{SMALL_INT}.copysign(R(2, 3, seed=1))",
  "lerp_scalar": f"{X}.lerp(R(2, 7), 0.25)",
  "lerp_tensor": f"{X}.lerp(R(7), R(2, 7, seed=1))",
  "lerp_uint8": "V([0, 10, 100, 200, 255, 7], (2, 3), dtypes.uint8).lerp("
                "V([255, 0, 50, 201, 0, 7], (2, 3), dtypes.uint8), V([0.0, 0.5, 0.25, 1.0, 0.75, 0.3], (2, 3)))",
  "isclose": f"{CLOSE_A}.isclose({CLOSE_B})",
  "isclose_equal_nan": f"{CLOSE_A}.isclose({CLOSE_B}, equal_nan=True)",
  "isclose_tolerances": f"{CLOSE_A}.isclose({CLOSE_B}, rtol=0.2, atol=1e-3)",
}

def number(v):
  if math.isnan(v): return "nan"
  if math.isinf(v): return "inf" if v > 0 else "-inf"
  return v

def flatten(x): return [y for e in x for y in flatten(e)] if isinstance(x, list) else [x]

for name, python in PROGRAMS.items():
  out = eval(python, dict(R=R, V=V, Tensor=Tensor, dtypes=dtypes, inf=inf, nan=nan))
  graph = to_ir(UOp.sink(out.lazydata))
  values = [number(float(v)) for v in flatten(out.tolist())]
  print(json.dumps({"program": name, "graph": graph, "dtype": out.dtype.name, "values": values}))
