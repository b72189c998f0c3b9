// The C++ Tensor API: tinygrad v0.10.3's Tensor (tensor.py), lazily evaluated.
//
// A Tensor holds a shared handle to its current tensor-level UOp (tinygrad's `lazydata`); every operation
// builds exactly the UOp graph tinygrad's tensor.py builds for it, and nothing runs until `Realize()` (or a
// read such as `ToVector`) hands the SINK of the tensors to the scheduler and runs the kernels. After a
// realize every live Tensor whose graph changed points at what its UOp became (tinygrad's
// `_apply_map_to_tensors`): copies of a Tensor share one handle, and a process-wide registry of weak handles
// finds them all.
//
// Errors. A shape error (a bad reshape, mismatched matmul, an axis out of range, ...) is found where the user
// makes it, and the Tensor that operation returns carries it: `t.status()` is the error, naming the operation
// and the shapes, and every operation on an errored Tensor returns a Tensor with the same error (the first
// error wins). So chains such as `(a.Matmul(b) + c).Relu()` stay readable, and a caller checks once, at the
// end, with `status()`, `Ok()` (a StatusOr<Tensor>), or at the boundary that produces values (`Realize`,
// `ToVector`, `Item` return Status / StatusOr). Nothing crashes on bad input.
//
// Numbers mix with tensors as Python's do: a C++ `int`/`int64_t` behaves like a Python int, a `double` like a
// Python float, a `bool` like a Python bool (tinygrad's promotion rules: `int_tensor * 2.5` is float32,
// `bool_tensor + 1` is int32, `half_tensor * 2.0` stays half).
//
//   Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
//   Tensor b = (a * 2 + 1).Relu().Sum(1);
//   absl::StatusOr<std::vector<float>> v = b.ToVector<float>();
#ifndef UOPC_TENSOR_TENSOR_H_
#define UOPC_TENSOR_TENSOR_H_

#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "schedule/schedule.h"
#include "shapetracker/sint.h"
#include "uop/dtype.h"
#include "uop/status_macros.h"
#include "uop/uop.h"

namespace uopc {

using Dims = std::vector<int64_t>;

// ---- symbolic sizes (tinygrad's Variable and sint) ----
// A size or bound is a Sint (shapetracker/sint.h): an int, or a symbolic int built from a Variable. A
// Variable is a DEFINE_VAR with a name and an inclusive range; bound to a value (BIND), it can size or place
// a view:
//   ASSIGN_OR_RETURN(Sint start_pos, Bind(Variable("start_pos", 1, 127), pos));
//   Tensor keys = cache.Shrink({{0, start_pos + 1}, {0, 64}});   // shape (start_pos+1, 64)
// The kernels take the variable as a parameter, so a TinyJit capture replays for every value. Movement
// (Reshape, Expand, Shrink, Permute, Cat, Flatten, Repeat), indexing (Index with a bound variable or a Slice
// of symbolic bounds), elementwise ops with broadcasting, Sum/Max/Softmax, Mean/Var/Std/Layernorm,
// Cumsum/Argmax along an axis of integer size and Dot/Matmul take symbolic shapes; other operations see a
// symbolic size as -1 in Shape() and are not supported on them (docs/support.md). A symbolic tensor has no
// data to read (ToVector is an error).
Sint Variable(const std::string& name, int64_t min, int64_t max);
// `variable` (a DEFINE_VAR) bound to `value`; an error outside its range or for anything but a Variable.
absl::StatusOr<Sint> Bind(const Sint& variable, int64_t value);
// The variable a bound Sint holds and its value, or an error when it is not a bound Variable.
absl::StatusOr<std::pair<std::string, int64_t>> BoundValue(const Sint& bound);

// A Python number: int, float or bool.
struct Scalar {
  Scalar(int v) : value(ConstValue::Int(v)) {}       // NOLINT: numbers convert implicitly
  Scalar(int64_t v) : value(ConstValue::Int(v)) {}   // NOLINT
  Scalar(double v) : value(ConstValue::Float(v)) {}  // NOLINT
  Scalar(float v) : value(ConstValue::Float(v)) {}   // NOLINT
  Scalar(bool v) : value(ConstValue::Bool(v)) {}     // NOLINT
  explicit Scalar(ConstValue v) : value(v) {}
  // dtypes.from_py: bool, the default int, or the default float.
  DType PyDType() const;
  ConstValue value;
};

class Tensor;

// One index of `Tensor::Index` (Python's `t[...]`): an int or a bound variable, a slice, None (a new axis of
// size 1), or an int tensor. A slice's start and stop may be symbolic (tinygrad's `t[v:v+2]`): then both are
// given, with no step, and stop - start is positive over the variables' ranges.
struct Slice {
  std::optional<Sint> start, stop;
  std::optional<int64_t> step;
};
struct NewAxis {};
struct Ellipsis {};

struct TensorNode;

// Tensor::Conv2d's options (tinygrad's conv2d keywords).
struct ConvOptions {
  int64_t groups = 1;
  Dims stride = {1};  // one value for every spatial axis, or one per axis
  Dims dilation = {1};
  Dims padding = {
      0};  // one value, one per axis, or (before, after) pairs flat, last axis first, as PyTorch's
};

class Tensor {
 public:
  using IndexItem = std::variant<int64_t, Sint, Slice, NewAxis, Ellipsis, std::shared_ptr<Tensor>>;

  // An empty Tensor: errored ("uninitialized Tensor").
  Tensor();
  // A Tensor of an existing tensor-level UOp (Tensor(uop) in tinygrad).
  explicit Tensor(UOpPtr uop);
  static Tensor FromError(absl::Status status);

  // ---- state ----
  const UOpPtr& uop() const;
  const absl::Status& status() const;
  bool ok() const { return status().ok(); }
  // This Tensor, or its error.
  absl::StatusOr<Tensor> Ok() const;
  Dims Shape() const;  // {} for an errored Tensor; a symbolic size reads as -1 (see SymShape)
  // The shape with symbolic sizes (tinygrad's shape: ints and bound-variable expressions).
  SintVec SymShape() const;
  bool symbolic() const;
  int64_t ndim() const { return static_cast<int64_t>(SymShape().size()); }
  int64_t numel() const;
  DType dtype() const;
  std::string Device() const;
  // True when both are the same Tensor object (share a handle).
  bool Is(const Tensor& o) const { return node_ == o.node_; }

  // ---- creation (tensor_creation.cc). A `device` of "" is the default device (tinygrad's Device.DEFAULT).
  // ----
  static void SetDefaultDevice(std::string device);
  // The device set, else the registry's pick from the devices linked in (DefaultDeviceName in
  // runtime/registry.h): CPU, unless the environment names another (LLVM=1) or CPU is not linked.
  static std::string DefaultDevice();
  // A realized contiguous buffer on `device` with `values` (count must equal the shape's product), as
  // tinygrad has after `Tensor(list).reshape(shape).contiguous().realize()`: BUFFER for 1-D, else
  // VIEW(BUFFER).
  template <typename E>
  static Tensor FromVector(const std::vector<E>& values, const Dims& shape, DType dtype,
                           const std::string& device = "");
  template <typename E>
  static Tensor FromVector(const std::vector<E>& values, const Dims& shape) {
    return FromVector<E>(values, shape, DTypeOf<E>());
  }
  static Tensor FromBytes(std::vector<uint8_t> bytes, const Dims& shape, DType dtype,
                          const std::string& device = "");
  // A Python list literal, unrealized: `Tensor([3, 1, 4])` is COPY(BUFFER on "PYTHON", DEVICE). Ints default
  // to int32, floats to float32.
  static Tensor Literal(const std::vector<int64_t>& values, std::optional<DType> dtype = std::nullopt,
                        const std::string& device = "");
  static Tensor Literal(const std::vector<double>& values, std::optional<DType> dtype = std::nullopt,
                        const std::string& device = "");
  // A nested list literal of `shape` (values row-major): BUFFER on "PYTHON", reshaped, then copied.
  static Tensor Literal(const std::vector<int64_t>& values, const Dims& shape,
                        std::optional<DType> dtype = std::nullopt, const std::string& device = "");
  static Tensor LiteralBytes(std::vector<uint8_t> bytes, const Dims& shape, DType dtype,
                             const std::string& device);
  // A scalar tensor (Tensor(3.0)).
  static Tensor Const(Scalar value, std::optional<DType> dtype = std::nullopt,
                      const std::string& device = "");
  // A 0-d int32 tensor of a size (tinygrad's Tensor.from_uop): a bound variable is BIND(DEFINE_VAR, CONST) on
  // the device, an integer a constant, and a sum or product the sum or product of its operands' tensors. What
  // a mean over a symbolic axis divides by. Errors: any other expression (tinygrad's "unhandled UOp").
  static Tensor FromSint(const Sint& value, const std::string& device = "");
  // The shape may be symbolic (tinygrad's Tensor.full of a sint shape); the int overloads give the same
  // graph.
  static Tensor Full(const SintVec& shape, Scalar value, std::optional<DType> dtype = std::nullopt,
                     const std::string& device = "");
  static Tensor Zeros(const SintVec& shape, DType dtype = dtypes::kFloat32, const std::string& device = "");
  static Tensor Ones(const SintVec& shape, DType dtype = dtypes::kFloat32, const std::string& device = "");
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  static Tensor Full(const std::vector<I>& shape, Scalar value, std::optional<DType> dtype = std::nullopt,
                     const std::string& device = "") {
    return Full(SintVec(shape.begin(), shape.end()), value, dtype, device);
  }
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  static Tensor Zeros(const std::vector<I>& shape, DType dtype = dtypes::kFloat32,
                      const std::string& device = "") {
    return Zeros(SintVec(shape.begin(), shape.end()), dtype, device);
  }
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  static Tensor Ones(const std::vector<I>& shape, DType dtype = dtypes::kFloat32,
                     const std::string& device = "") {
    return Ones(SintVec(shape.begin(), shape.end()), dtype, device);
  }
  static Tensor Empty(const Dims& shape, DType dtype = dtypes::kFloat32, const std::string& device = "");
  // Tensor.arange(start, stop, step): int32 unless a bound is a float.
  static Tensor Arange(Scalar stop);
  static Tensor Arange(Scalar start, Scalar stop, Scalar step = 1, std::optional<DType> dtype = std::nullopt,
                       const std::string& device = "");
  // `steps` evenly spaced values from `start` to `stop`, both included (Tensor.linspace); not for bool.
  static Tensor Linspace(Scalar start, Scalar stop, int64_t steps, DType dtype = dtypes::kFloat32,
                         const std::string& device = "");
  static Tensor Eye(int64_t n, std::optional<int64_t> m = std::nullopt, DType dtype = dtypes::kFloat32,
                    const std::string& device = "");
  Tensor FullLike(Scalar value, std::optional<DType> dtype = std::nullopt) const;
  Tensor ZerosLike() const { return FullLike(0); }
  Tensor OnesLike() const { return FullLike(1); }
  // `value` in this tensor's shape, dtype and device (what tinygrad's UOp.const_like builds; its
  // Tensor.const_like is not implemented): FullLike(value).
  Tensor ConstLike(Scalar value) const;
  // Random numbers with tinygrad's threefry, its per-device seeds and counters: the same seed gives
  // tinygrad's numbers.
  static void ManualSeed(int64_t seed = 0);
  static Tensor Rand(const Dims& shape, DType dtype = dtypes::kFloat32, const std::string& device = "",
                     bool contiguous = true);
  static Tensor Randn(const Dims& shape, DType dtype = dtypes::kFloat32, const std::string& device = "");
  static Tensor Randint(const Dims& shape, int64_t low = 0, int64_t high = 10, DType dtype = dtypes::kInt32,
                        const std::string& device = "");
  static Tensor Uniform(const Dims& shape, double low = 0.0, double high = 1.0,
                        DType dtype = dtypes::kFloat32, const std::string& device = "");
  // std * Randn + mean (tinygrad's Tensor.normal).
  static Tensor Normal(const Dims& shape, double mean = 0.0, double std = 1.0, DType dtype = dtypes::kFloat32,
                       const std::string& device = "");
  // ---- more random numbers (tensor_random.cc), tinygrad's, from the same generator ----
  // Rand of this tensor's shape on its device, in `dtype` (this tensor's unless given; a float dtype).
  Tensor RandLike(std::optional<DType> dtype = std::nullopt, bool contiguous = true) const;
  // Randn of this tensor's shape on its device, cast to `dtype` (this tensor's unless given).
  Tensor RandnLike(std::optional<DType> dtype = std::nullopt) const;
  // A random permutation of 0 .. n-1 (the order that sorts n Rand numbers), cast to `dtype`.
  static Tensor Randperm(int64_t n, DType dtype = dtypes::kInt32, const std::string& device = "");
  // Normal(0, std), std = sqrt(2 / (1 + a^2)) / sqrt(prod(shape[1:])) (tinygrad's kaiming_normal).
  static Tensor KaimingNormal(const Dims& shape, double a = 0.01, DType dtype = dtypes::kFloat32,
                              const std::string& device = "");
  // While Training(): each element zeroed with probability `p` (in [0, 1)), the others divided by 1 - p,
  // in the default float dtype. Otherwise, or for p = 0, this tensor.
  Tensor Dropout(double p = 0.5) const;
  // `num_samples` int32 class indices drawn with Rand from the non-negative weights of each row of this
  // tensor ((C,) gives (num_samples,), (N, C) gives (N, num_samples)). Without `replacement` only one sample
  // can be drawn, as in tinygrad.
  Tensor Multinomial(int64_t num_samples = 1, bool replacement = false) const;

  // ---- dtypes (tensor_elementwise.cc) ----
  Tensor Cast(DType dtype) const;
  Tensor Bitcast(DType dtype) const;
  Tensor Float() const { return Cast(dtypes::kFloat32); }
  Tensor Half() const { return Cast(dtypes::kFloat16); }
  Tensor Int() const { return Cast(dtypes::kInt32); }
  Tensor Bool() const { return Cast(dtypes::kBool); }

  // ---- elementwise (tensor_elementwise.cc). `reverse` puts the operand on the left. ----
  class Operand;
  Tensor Add(const Operand& x, bool reverse = false) const;
  Tensor Sub(const Operand& x, bool reverse = false) const;
  Tensor Mul(const Operand& x, bool reverse = false) const;
  Tensor Div(const Operand& x, bool reverse = false) const;   // true division (a float result)
  Tensor IDiv(const Operand& x, bool reverse = false) const;  // truncating (tinygrad's `//`)
  Tensor Mod(const Operand& x, bool reverse = false) const;   // Python's floor modulo
  Tensor BitwiseAnd(const Operand& x, bool reverse = false) const;
  Tensor BitwiseOr(const Operand& x, bool reverse = false) const;
  Tensor BitwiseXor(const Operand& x, bool reverse = false) const;
  Tensor BitwiseNot() const;
  Tensor LShift(int64_t bits) const;
  Tensor RShift(int64_t bits) const;
  Tensor Pow(const Operand& x, bool reverse = false) const;
  Tensor Maximum(const Operand& x) const;
  Tensor Minimum(const Operand& x) const;
  Tensor Lt(const Operand& x) const;
  Tensor Gt(const Operand& x) const;
  Tensor Le(const Operand& x) const;
  Tensor Ge(const Operand& x) const;
  Tensor Eq(const Operand& x) const;
  Tensor Ne(const Operand& x) const;
  // this ? x : y (this is cast to bool).
  Tensor Where(const Operand& x, const Operand& y) const;
  Tensor LogicalNot() const;
  Tensor Neg() const;
  Tensor Exp() const;
  Tensor Exp2() const;
  Tensor Log() const;
  Tensor Log2() const;
  Tensor Sqrt() const;
  Tensor Rsqrt() const;
  Tensor Sin() const;
  Tensor Cos() const;
  Tensor Tan() const;
  Tensor Reciprocal() const;
  Tensor Abs() const;
  Tensor Sign() const;
  Tensor Square() const;
  Tensor Trunc() const;
  Tensor Floor() const;
  Tensor Ceil() const;
  Tensor Round() const;
  Tensor IsInf(bool detect_positive = true, bool detect_negative = true) const;
  Tensor IsNan() const;
  Tensor IsFinite() const;
  Tensor Clip(std::optional<Scalar> min, std::optional<Scalar> max) const;
  Tensor Relu() const;
  Tensor Sigmoid() const;
  Tensor Tanh() const;
  Tensor Gelu() const;
  Tensor Swish() const;
  Tensor Silu() const { return Swish(); }
  Tensor LeakyRelu(double neg_slope = 0.01) const;
  Tensor Erf() const;
  // More activations and math, as tinygrad's (their defaults too). The inverse trigonometric functions use
  // tinygrad's polynomial approximation of asin (Abramowitz and Stegun 4.4.46).
  Tensor Softplus(Scalar beta = 1) const;  // (1/beta) * log(1 + exp(beta * x)); beta must not be 0
  Tensor Mish() const;
  Tensor Elu(double alpha = 1.0) const;
  Tensor Celu(double alpha = 1.0) const;
  Tensor Selu(double alpha = 1.67326, double gamma = 1.0507) const;
  Tensor Relu6() const;
  Tensor Hardswish() const;
  Tensor Hardsigmoid(double alpha = 1.0 / 6, double beta = 0.5) const;
  Tensor Hardtanh(Scalar min_val = -1, Scalar max_val = 1) const;
  Tensor Softsign() const;
  Tensor QuickGelu() const;
  Tensor Asin() const;
  Tensor Acos() const;
  Tensor Atan() const;
  Tensor Sinh() const;
  Tensor Cosh() const;
  Tensor Asinh() const;
  Tensor Acosh() const;
  Tensor Atanh() const;
  // |this| with the sign of `other` (broadcast); the dtype follows the broadcasting rules, as tinygrad's.
  Tensor Copysign(const Operand& other) const;
  // this + (end - this) * weight; a uint8 tensor with a tensor weight interpolates in 7-bit fixed point.
  Tensor Lerp(const Tensor& end, const Operand& weight) const;
  // |this - other| <= atol + rtol * |other| for finite values; infinities close when equal; NaNs when
  // `equal_nan`.
  Tensor IsClose(const Tensor& other, double rtol = 1e-05, double atol = 1e-08, bool equal_nan = false) const;
  Tensor Contiguous() const;
  // A copy on another device (COPY), or this tensor when it is already there. Several devices joined by
  // commas ("CPU,CPU:1") are Shard(them) (tinygrad's to with a tuple).
  Tensor To(const std::string& device) const;

  // ---- several devices (tensor/multi.h): tinygrad's shard and MULTI ----
  // A tensor on several devices reads Device() as their names joined by commas, "CPU,CPU:1" (tinygrad's
  // tuple); "CPU:1" is a second instance of CPU with its own memory (runtime/registry.h). Ops on it run on
  // every device, and a reduction across the sharded axis all-reduces the partial results (RING,
  // RING_ALLREDUCE_THRESHOLD); reading its values reads the whole tensor.
  //
  // This tensor (on one device) on each of `devices` (tinygrad's shard): all of it on each, or with `axis`
  // consecutive equal slices of that axis, one per device in order. An axis whose size the number of devices
  // does not divide, or a tensor already on several devices, is an error.
  Tensor Shard(const std::vector<std::string>& devices, std::optional<int64_t> axis = std::nullopt) const;
  // Shard in place (tinygrad's shard_). Returns this tensor, or the error (this tensor is then unchanged).
  Tensor Shard_(const std::vector<std::string>& devices, std::optional<int64_t> axis = std::nullopt) const;
  // ---- across processes (runtime/collective.h) ----
  // `op` (ADD, MUL or MAX) of this tensor over every process of `communicator` ("MPI": the processes of an
  // `mpirun` job, with //runtime:mpi linked), element by element, on each process: its host copy reduced in
  // place by the communicator when the kernels before it have run (an item of the schedule, replayed by
  // TinyJit). Every process must realize the same all-reduces in the same order. The gradient of an ADD is
  // the ADD all-reduce of the gradient (each process's sum reads every process's input). A tensor on several
  // devices, or another op, is an error; a communicator that is not linked is one at realize.
  Tensor AllReduce(Ops op = Ops::ADD, const std::string& communicator = "MPI") const;

  // The devices this tensor is on: one, or each shard's in order.
  std::vector<std::string> Devices() const;
  // The axis a tensor on several devices is split along (tinygrad's lazydata.axis); nullopt when every
  // device holds all of it or the tensor is on one device.
  std::optional<int64_t> ShardAxis() const;
  // A copy in a buffer of its own (COPY to its own device), with this tensor's requires_grad and a clone of
  // its Grad() (tinygrad's clone).
  Tensor Clone() const;

  // ---- movement (tensor_movement.cc). Negative axes count from the end. ----
  // Sizes and bounds may be symbolic; the overloads for int vectors (Dims) give the same graphs.
  Tensor Reshape(const SintVec& shape) const;  // one -1 is inferred
  Tensor Expand(const SintVec& shape) const;   // -1 keeps a size
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  Tensor Reshape(const std::vector<I>& shape) const {
    return Reshape(SintVec(shape.begin(), shape.end()));
  }
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  Tensor Expand(const std::vector<I>& shape) const {
    return Expand(SintVec(shape.begin(), shape.end()));
  }
  Tensor Permute(const Dims& order) const;
  Tensor Flip(const Dims& axes) const;
  // (before, after) per axis; a pad of `value` other than 0 adds a masked constant, as tinygrad.
  Tensor Pad(const std::vector<SintPair>& padding, Scalar value = 0.0) const;
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  Tensor Pad(const std::vector<std::pair<I, I>>& padding, Scalar value = 0.0) const {
    return Pad(std::vector<SintPair>(padding.begin(), padding.end()), value);
  }
  // ---- pad modes (tensor_movement.cc) ----
  // tinygrad's pad(padding, mode, value): `mode` is "constant" (the overload above), "reflect" (mirrored
  // without the edge; a pad must be smaller than its axis), "replicate" (the edge repeated) or "circular"
  // (wrapped around, at most once; no negative pads). `value` is for "constant" only. A negative pad cuts, as
  // in the constant mode. (A literal 0 as the second argument is ambiguous here: write 0.0.)
  Tensor Pad(const std::vector<std::pair<int64_t, int64_t>>& padding, const std::string& mode,
             Scalar value = 0.0) const;
  template <size_t N>
  Tensor Pad(const std::vector<std::pair<int64_t, int64_t>>& padding, const char (&mode)[N],
             Scalar value = 0.0) const {
    return Pad(padding, std::string(mode), value);
  }
  Tensor Shrink(const std::vector<SintPair>& bounds) const;
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  Tensor Shrink(const std::vector<std::pair<I, I>>& bounds) const {
    return Shrink(std::vector<SintPair>(bounds.begin(), bounds.end()));
  }
  Tensor Transpose(int64_t dim0 = 1, int64_t dim1 = 0) const;
  Tensor T() const { return Transpose(); }
  Tensor Flatten(int64_t start_dim = 0, int64_t end_dim = -1) const;
  Tensor Squeeze(std::optional<int64_t> dim = std::nullopt) const;
  Tensor Unsqueeze(int64_t dim) const;
  Tensor Repeat(const Dims& repeats) const;
  // Python indexing: t[2:8, ::-1], t[idx_tensor], t[..., None].
  Tensor Index(const std::vector<IndexItem>& indices) const;
  // Python's `t[indices] = value` (tinygrad's __setitem__): writes `value` (a number, or a tensor cast to
  // this dtype and broadcast) into the places `indices` select, in this tensor's buffer, then realizes it, so
  // every tensor and view reading that buffer sees the new values. The value is computed in full before the
  // write, so it may overlap the target (t[:, 1:3] = t[:, 0:2] shifts as NumPy does). Int tensor indices
  // replace through a mask: the last of repeated indices wins, and out-of-range ones write nothing, as
  // tinygrad's. Errors, leaving the tensor as it was: a target that is itself a view (t.T, a slice of another
  // tensor), a tensor or value that requires grad, an index out of range, a value whose shape does not
  // broadcast.
  absl::Status SetItem(const std::vector<IndexItem>& indices, const Operand& value) const;
  // t[index] for an int tensor index on the first axis (Python's t[Tensor([...])]).
  Tensor IndexWith(const Tensor& index) const;
  // Tensor.gather(dim, index).
  Tensor Gather(int64_t dim, const Tensor& index) const;
  Tensor Cat(const std::vector<Tensor>& others, int64_t dim = 0) const;
  static Tensor Stack(const std::vector<Tensor>& tensors, int64_t dim = 0);
  Tensor BroadcastTo(const SintVec& shape) const;
  template <typename I, typename = std::enable_if_t<std::is_integral_v<I>>>
  Tensor BroadcastTo(const std::vector<I>& shape) const {
    return BroadcastTo(SintVec(shape.begin(), shape.end()));
  }

  // ---- splitting, rolling and grids (tensor_movement.cc) ----
  // The functions that return several tensors return, on bad input or an errored operand, one errored Tensor
  // carrying the error (so `parts[0].status()` or `parts[0].Ok()` tells).
  // Pieces of `size` along `dim`, the last one smaller when `size` does not divide it (tinygrad's
  // split(int)). Note that `Split({5})` calls this overload; a one-element list of sizes needs `Dims{5}`.
  std::vector<Tensor> Split(int64_t size, int64_t dim = 0) const;
  // Pieces of the given sizes along `dim`; they must be non-negative and sum to the axis' size.
  std::vector<Tensor> Split(const Dims& sizes, int64_t dim = 0) const;
  // At most `chunks` pieces of equal size along `dim`, the last one smaller (tinygrad's chunk).
  std::vector<Tensor> Chunk(int64_t chunks, int64_t dim = 0) const;
  // Axis `dim` reshaped to `sizes` (one -1 is inferred); the inverse of Flatten.
  Tensor Unflatten(int64_t dim, const Dims& sizes) const;
  // Every element repeated `repeats` times along `dim`, or along the flattened tensor when `dim` is unset.
  Tensor RepeatInterleave(int64_t repeats, std::optional<int64_t> dim = std::nullopt) const;
  // Rolls axis dims[i] by shifts[i] places, circularly (one shift per axis).
  Tensor Roll(const Dims& shifts, const Dims& dims) const;
  Tensor Roll(int64_t shift, int64_t dim) const { return Roll(Dims{shift}, Dims{dim}); }
  // Coordinate grids of scalars or 1-D tensors: "ij" (matrix) or "xy" (Cartesian: the first two axes swap).
  static std::vector<Tensor> Meshgrid(const std::vector<Tensor>& tensors, const std::string& indexing = "ij");
  // `value` where `mask` is true, else this tensor (mask.Where(value, this)).
  Tensor MaskedFill(const Tensor& mask, const Operand& value) const;

  // ---- reductions (tensor_reduce.cc). An empty `axes` with `all` reduces every axis. ----
  struct Axes {
    Axes() : all(true) {}                                            // every axis
    Axes(int64_t a) : axes({a}), all(false) {}                       // NOLINT
    Axes(int a) : axes({a}), all(false) {}                           // NOLINT
    Axes(std::initializer_list<int64_t> a) : axes(a), all(false) {}  // NOLINT
    Axes(Dims a) : axes(std::move(a)), all(false) {}                 // NOLINT
    Dims axes;
    bool all;
  };
  Tensor Sum(Axes axis = {}, bool keepdim = false, std::optional<DType> acc_dtype = std::nullopt) const;
  Tensor Prod(Axes axis = {}, bool keepdim = false) const;
  Tensor Max(Axes axis = {}, bool keepdim = false) const;
  Tensor Min(Axes axis = {}, bool keepdim = false) const;
  Tensor Mean(Axes axis = {}, bool keepdim = false) const;
  Tensor Var(Axes axis = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor Std(Axes axis = {}, bool keepdim = false, int64_t correction = 1) const;
  Tensor Argmax(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor Argmin(std::optional<int64_t> axis = std::nullopt, bool keepdim = false) const;
  Tensor Any(Axes axis = {}, bool keepdim = false) const;
  Tensor All(Axes axis = {}, bool keepdim = false) const;
  Tensor Softmax(int64_t axis = -1) const;
  Tensor LogSoftmax(int64_t axis = -1) const;
  Tensor Logsumexp(Axes axis = {}, bool keepdim = false) const;
  Tensor Cumsum(int64_t axis = 0) const;
  Tensor Cummax(int64_t axis = 0) const;

  // ---- more reductions (tensor_reduce.cc) ----
  Tensor Cumprod(int64_t axis) const;
  // log(cumsum(exp(x))) along `axis`, computed stably.
  Tensor Logcumsumexp(int64_t axis = 0) const;
  // (Var, Mean) and (Std, Mean) of the same axes, as torch.var_mean / torch.std_mean.
  std::pair<Tensor, Tensor> VarMean(Axes axis = {}, bool keepdim = false, int64_t correction = 1) const;
  std::pair<Tensor, Tensor> StdMean(Axes axis = {}, bool keepdim = false, int64_t correction = 1) const;

  // ---- einsum, sort and top-k (tensor_reduce.cc) ----
  // Einstein summation (tinygrad's einsum): "ij,jk->ik"; without "->" the output is the letters that appear
  // once, sorted; "..." stands for the leading axes an operand has beyond its letters. Spaces are ignored. A
  // letter names one size in every operand (no broadcasting) and appears at most once per operand.
  // `dtype` is the sum's accumulation dtype.
  static Tensor Einsum(const std::string& formula, const std::vector<Tensor>& operands,
                       std::optional<DType> dtype = std::nullopt);
  // (values, int32 indices) sorted along `dim` by tinygrad's bitonic network; equal values keep their order.
  std::pair<Tensor, Tensor> Sort(int64_t dim = -1, bool descending = false) const;
  // The `k` largest (or smallest) along `dim`, sorted, with their int32 indices; `sorted` false is refused as
  // tinygrad does.
  std::pair<Tensor, Tensor> Topk(int64_t k, int64_t dim = -1, bool largest = true, bool sorted = true) const;

  // ---- nn (tensor_nn.cc) ----
  Tensor Dot(const Tensor& w, std::optional<DType> acc_dtype = std::nullopt) const;
  Tensor Matmul(const Tensor& w, std::optional<DType> acc_dtype = std::nullopt) const {
    return Dot(w, acc_dtype);
  }
  Tensor Linear(const Tensor& weight, const Tensor* bias = nullptr) const;
  Tensor Conv2d(const Tensor& weight, const Tensor* bias = nullptr, const ConvOptions& options = {}) const;
  Tensor Conv2d(const Tensor& weight, const ConvOptions& options) const {
    return Conv2d(weight, nullptr, options);
  }
  // tinygrad's conv_transpose2d (any number of spatial axes): the transposed convolution with `weight` (in,
  // out/groups, *kernel); options as Conv2d's; `output_padding` one value or one per spatial axis.
  Tensor ConvTranspose2d(const Tensor& weight, const Tensor* bias = nullptr, const ConvOptions& options = {},
                         Dims output_padding = {0}) const;
  // Pooling over the trailing kernel_size.size() axes, any number of them, as tinygrad's tuple kernel_size:
  // {3, 3} pools 2-D, {4} pools the last axis only. stride: empty (the kernel), one value for every pooled
  // axis, or one per axis; dilation likewise; padding as ConvOptions::padding.
  // `ceil_mode`: the output size rounds up, so a last window may start in the input and run past it
  // (tinygrad's and PyTorch's ceil_mode).
  Tensor MaxPool2d(Dims kernel_size = {2, 2}, Dims stride = {}, Dims dilation = {1}, Dims padding = {0},
                   bool ceil_mode = false) const;
  // ceil_mode comes after count_include_pad here (tinygrad has it before), so that calls written before it
  // existed keep their meaning.
  Tensor AvgPool2d(Dims kernel_size = {2, 2}, Dims stride = {}, Dims dilation = {1}, Dims padding = {0},
                   bool count_include_pad = true, bool ceil_mode = false) const;
  // ---- pooling indices (tensor_nn.cc) ----
  // MaxPool2d and, for every output, the int32 index of its maximum (the first one) in the flattened pooled
  // axes of the input (tinygrad's max_pool2d(return_indices=True)).
  std::pair<Tensor, Tensor> MaxPool2dWithIndices(Dims kernel_size = {2, 2}, Dims stride = {},
                                                 Dims dilation = {1}, Dims padding = {0},
                                                 bool ceil_mode = false) const;
  // The partial inverse of MaxPool2dWithIndices (tinygrad's max_unpool2d): this tensor (batch, channels,
  // *pooled) put at `indices` in zeros of the input's spatial size, which is computed from the pooling
  // options unless `output_size` gives it (its trailing spatial sizes count).
  Tensor MaxUnpool2d(const Tensor& indices, Dims kernel_size = {2, 2}, Dims stride = {}, Dims dilation = {1},
                     Dims padding = {0}, std::optional<Dims> output_size = std::nullopt) const;
  Tensor Layernorm(Axes axis = -1, double eps = 1e-5) const;
  Tensor Batchnorm(const Tensor* weight, const Tensor* bias, const Tensor& mean, const Tensor& invstd,
                   Axes axis = 1) const;
  Tensor OneHot(int64_t num_classes) const;
  // Losses (tinygrad's): this tensor is logits. `reduction` is "mean", "sum" or "none".
  // Cross-entropy of logits over the last axis against int class labels `y` (shape of this tensor but the
  // last axis); labels equal to `ignore_index` (when not -1) do not count.
  Tensor SparseCategoricalCrossentropy(const Tensor& y, int64_t ignore_index = -1,
                                       double label_smoothing = 0.0,
                                       const std::string& reduction = "mean") const;
  // Binary cross-entropy of logits against targets `y` in [0, 1].
  Tensor BinaryCrossentropyLogits(const Tensor& y, const std::string& reduction = "mean") const;
  Tensor Triu(int64_t diagonal = 0) const;
  Tensor Tril(int64_t diagonal = 0) const;
  Tensor ScaledDotProductAttention(const Tensor& key, const Tensor& value, const Tensor* attn_mask = nullptr,
                                   bool is_causal = false) const;

  // ---- losses, scatters and resizing (tensor_nn.cc), as tinygrad's; the class axis is 1, as PyTorch's ----
  // Negative log-likelihood of log-probabilities (this, shape (N, C, ...)) at int class labels `y` (shape
  // (N, ...)), each term weighted by weight[y] when `weight` (shape (C,)) is given; labels equal to
  // `ignore_index` count nothing. "mean" divides the sum by the sum of the weights counted.
  Tensor NllLoss(const Tensor& y, const Tensor* weight = nullptr,
                 std::optional<int64_t> ignore_index = std::nullopt,
                 const std::string& reduction = "mean") const;
  // Cross-entropy of logits (this, shape (N, C, ...)) against `y`: int class indices when `y` has fewer than
  // 2 axes (one-hot encoded), else class probabilities; `label_smoothing` in [0, 1].
  Tensor CrossEntropy(const Tensor& y, const std::string& reduction = "mean",
                      double label_smoothing = 0.0) const;
  // This tensor with src's values (or the number `src`) written along `dim` at `index`:
  // out[..., index[i, j], ...] = src[i, j] (the last write wins for repeated indices). `reduce` "add" or
  // "multiply" combines a number `src` with the values there instead (a tensor src: ScatterReduce).
  Tensor Scatter(int64_t dim, const Tensor& index, const Operand& src,
                 std::optional<std::string> reduce = std::nullopt) const;
  // Scatter that reduces every value written to one place, and this tensor's value there when
  // `include_self`: `reduce` is "sum", "prod", "mean", "amax" or "amin". src has this tensor's dtype.
  Tensor ScatterReduce(int64_t dim, const Tensor& index, const Tensor& src, const std::string& reduce,
                       bool include_self = true) const;
  // Resizes the last size.size() axes to `size`: "linear" interpolates (bilinear, trilinear, ... for 2, 3,
  // ... axes), "nearest" and "nearest-exact" pick; `align_corners` (linear only) maps the corner pixels'
  // centers onto each other.
  Tensor Interpolate(const Dims& size, const std::string& mode = "linear", bool align_corners = false) const;

  // ---- autograd (tensor_autograd.cc, rules in gradient.cc; docs/autograd.md) ----
  // Marks this tensor as one Backward() gives a gradient to (tinygrad's requires_grad_); returns this tensor.
  // Unset (the default) behaves as tinygrad's None: a result of an op on a tensor that requires grad requires
  // it too.
  Tensor RequiresGrad(bool requires_grad = true) const;
  // The flag as set: true, false, or unset.
  std::optional<bool> requires_grad() const;
  // The gradients of this scalar tensor (or of `upstream` . this, when given, of this shape) with respect to
  // each target (tinygrad's Tensor.gradient). A target this tensor does not depend on is an error, or zeros
  // with `materialize_grads`; so is an op on the way that has no gradient rule (naming it), and a target or
  // tensor of an int or bool dtype.
  absl::StatusOr<std::vector<Tensor>> Gradient(absl::Span<const Tensor> targets,
                                               const std::optional<Tensor>& upstream = std::nullopt,
                                               bool materialize_grads = false) const;
  // Adds to Grad() of every live tensor this one depends on that requires grad (tinygrad's backward).
  absl::Status Backward(const std::optional<Tensor>& upstream = std::nullopt) const;
  // The gradient Backward() left (tinygrad's .grad), if any; SetGrad replaces it (nullopt clears it).
  std::optional<Tensor> Grad() const;
  void SetGrad(std::optional<Tensor> grad) const;
  // The same values, cut from the gradient graph (DETACH); requires_grad false.
  Tensor Detach() const;
  // Identity forward; in the backward pass the gradient flowing through here is made contiguous.
  Tensor ContiguousBackward() const;
  // In-place update (tinygrad's Tensor.assign): this tensor's UOp becomes ASSIGN(this, x), so the next
  // realize writes x's values into this tensor's buffer, after every read of the old values scheduled with
  // it. x must have this tensor's shape, dtype and device and must not require grad; a number fills. Returns
  // this tensor, or the error (this tensor is then unchanged).
  Tensor Assign(const Operand& x) const;

  // ---- in-place operators, properties and tinygrad's remaining helpers (tensor_misc.cc; BinaryCrossentropy
  // in tensor_losses.cc, MaskedSelect and Rearrange in tensor_movement.cc) ----
  // Python's `t op= x`: Assign(t op x), so every copy of this Tensor sees the new value (tinygrad's
  // __iadd__, ...). When the operation or the assign fails, this variable becomes the errored Tensor (the
  // other copies keep the old value). Where C++ has no such operator, a named method does the same.
  Tensor& operator+=(const Operand& x);
  Tensor& operator-=(const Operand& x);
  Tensor& operator*=(const Operand& x);
  Tensor& operator/=(const Operand& x);  // true division, as Div
  Tensor& operator&=(const Operand& x);
  Tensor& operator|=(const Operand& x);
  Tensor& operator^=(const Operand& x);
  Tensor& operator<<=(int64_t bits);
  Tensor& operator>>=(int64_t bits);
  Tensor& IDivAssign(const Operand& x);   // t //= x
  Tensor& PowAssign(const Operand& x);    // t **= x
  Tensor& MatmulAssign(const Tensor& w);  // t @= w
  // Bytes per element and in all (0 for an errored Tensor); whether the dtype is a float one.
  int64_t ElementSize() const { return dtype().itemsize(); }
  int64_t Nbytes() const { return numel() * ElementSize(); }
  bool IsFloatingPoint() const { return dtype().is_float(); }
  // Python's bool(t): realizes a one-element tensor and says whether its value is non-zero; more or fewer
  // elements are an error. (tinygrad v0.10.3 raises for every tensor; docs/support.md.)
  absl::StatusOr<bool> ToBool() const;
  // tinygrad's alu (named so that it does not hide the free Alu of schedule/tensor_uop.h in the members):
  // `op`, one of the ALU ops tinygrad's Tensor builds (EXP2, LOG2, SIN, SQRT, RECIP, ADD, MUL, IDIV, MAX,
  // MOD, CMPLT, CMPNE, XOR, SHL, SHR, OR, AND, THREEFRY, WHERE), applied to this tensor and `operands` as
  // they are: no broadcasting or promotion, so every operand has this tensor's shape and device, and the
  // dtypes the op takes. The result has the last operand's dtype, bool for CMPLT and CMPNE.
  Tensor ApplyAlu(Ops op, const std::vector<Tensor>& operands = {}) const;
  // `x` as a tensor: a tensor as it is, a number as FullLike (this tensor's shape, dtype and device).
  Tensor Ufix(const Operand& x) const;
  // This tensor through each function in turn (tinygrad's sequential).
  Tensor Sequential(const std::vector<std::function<Tensor(const Tensor&)>>& functions) const;
  // A bfloat16 tensor copied to the LLVM device and cast there (tinygrad's llvm_bf16_cast, for devices
  // without bfloat16).
  Tensor LlvmBf16Cast(DType dtype) const;
  // Binary cross-entropy of probabilities (this tensor, in (0, 1)) against targets `y`; `reduction` is
  // "mean", "sum" or "none".
  Tensor BinaryCrossentropy(const Tensor& y, const std::string& reduction = "mean") const;
  // The elements where `mask` (bool, broadcast to this shape) is true, flattened. It realizes the mask's
  // count to size the result, as tinygrad's masked_select does.
  Tensor MaskedSelect(const Tensor& mask) const;
  // einops-style rearrangement (tinygrad's rearrange): "b c (h w) -> b (h c) w" splits, permutes and merges
  // axes; "..." stands for the axes not named, once per side and not in a group on the left; "1" or "()" is
  // an axis of size 1 (dropped on the left, added on the right). `sizes` gives the size of an axis a split
  // cannot infer (one unknown per group). Axis names are identifiers that neither start nor end with "_".
  Tensor Rearrange(const std::string& formula, const std::map<std::string, int64_t>& sizes = {}) const;

  // ---- realize and read back (tensor_realize.cc) ----
  // Schedules and runs this tensor (and `others`) together; afterwards every live Tensor is updated.
  absl::Status Realize(absl::Span<const Tensor> others = {}) const;
  static absl::Status RealizeAll(absl::Span<const Tensor> tensors);

  // ---- the pipeline's steps, and sources outside the graph (tensor_pipeline.cc, tensor_realize.cc) ----
  // The kernels that realizing this tensor (and `others`) runs, in order, without running them (tinygrad's
  // schedule_with_vars), and the values of the variables bound in the graph. As in tinygrad, the tensors then
  // are the buffers those kernels write: `RunSchedule` (runtime/realize.h) of the result computes them.
  absl::StatusOr<uopc::Schedule> ScheduleWithVars(absl::Span<const Tensor> others = {}) const;
  // The kernels of ScheduleWithVars; an error when the graph binds a variable (tinygrad's schedule).
  absl::StatusOr<std::vector<ScheduleItem>> Schedule(absl::Span<const Tensor> others = {}) const;
  // Groups the graph of this tensor (and `others`) into kernels without scheduling them (tinygrad's
  // kernelize): each tensor becomes ASSIGN(BUFFER, KERNEL) (or a view of one, or a constant), which a later
  // Schedule or Realize runs. Returns this tensor, or the error (the tensors are then unchanged).
  Tensor Kernelize(absl::Span<const Tensor> others = {}) const;
  // Marks this tensor's graph for fusion into one kernel (tinygrad's fuse, a FUSE node). uopc's scheduler has
  // no fusion pass: it drops the mark, so the values are the same, the kernels those without it.
  Tensor Fuse() const;
  // Moves this tensor to `device` in place (tinygrad's to_), its gradient too. Returns this tensor, or the
  // error (this tensor is then unchanged).
  Tensor To_(const std::string& device) const;
  // A tensor of `shape` over the host memory at `ptr` (tinygrad's from_blob). tinygrad's buffer reads that
  // memory in place; here its bytes are copied at the call, so later writes to it are not seen.
  static Tensor FromBlob(const void* ptr, const Dims& shape, DType dtype = dtypes::kFloat32,
                         const std::string& device = "");
  // The bytes of a file as a 1-D tensor of `dtype` (tinygrad's from_url): `url` is a file:// URL or a path.
  // tinygrad downloads other URLs and keeps the tensor on DISK; here other schemes and `gunzip` are
  // Unimplemented, and the tensor is on `device` (docs/support.md).
  static Tensor FromUrl(const std::string& url, bool gunzip = false, DType dtype = dtypes::kUInt8,
                        const std::string& device = "");
  // tinygrad's image_conv2d and image_dot (the convolution and matmul it uses for image dtypes, IMAGE=1 on
  // QCOM): the channels padded to multiples of 4 and packed as an image would be, summed in float32 then
  // cast to `dtype`. On devices without image dtypes their values are Conv2d's and Dot's, as tinygrad's are.
  Tensor ImageConv2d(const Tensor& weight, const Tensor* bias = nullptr, const ConvOptions& options = {},
                     std::optional<DType> dtype = std::nullopt) const;
  Tensor ImageDot(const Tensor& w, std::optional<DType> dtype = std::nullopt) const;
  // The values in row-major order (T must have the dtype's size; bool reads as bool or uint8).
  template <typename E>
  absl::StatusOr<std::vector<E>> ToVector() const;
  template <typename E>
  absl::StatusOr<E> Item() const;
  absl::StatusOr<std::vector<uint8_t>> ToBytes() const;

  // ---- training and no-grad modes (tinygrad's Tensor.training and Tensor.no_grad) ----
  // Whether modules such as nn::BatchNorm use batch statistics and update their running averages; optimizers
  // step only while it is set. Process-wide, as tinygrad's class variable; false at start.
  static bool Training();
  // Sets Training() to `mode` for the life of the object and restores the previous value when it ends
  // (tinygrad's `with Tensor.train():`).
  class Train {
   public:
    explicit Train(bool mode = true);
    ~Train();
    Train(const Train&) = delete;
    Train& operator=(const Train&) = delete;

   private:
    bool previous_;
  };
  // Whether Backward() is off (tinygrad's Tensor.no_grad): while it is set, Backward gives no tensor a
  // gradient. Process-wide; false at start.
  static bool NoGrad();
  // Sets NoGrad() to `mode` for the life of the object and restores the previous value when it ends
  // (tinygrad's `with Tensor.test():`).
  class NoGradScope {
   public:
    explicit NoGradScope(bool mode = true);
    ~NoGradScope();
    NoGradScope(const NoGradScope&) = delete;
    NoGradScope& operator=(const NoGradScope&) = delete;

   private:
    bool previous_;
  };

  // ---- internals shared by the implementation files ----
  template <typename E>
  static DType DTypeOf();
  // Broadcasts this and `y` to one shape with one dtype (tinygrad's _broadcasted).
  std::pair<Tensor, Tensor> Broadcasted(const Operand& y, bool reverse = false,
                                        bool match_dtype = true) const;
  int64_t ResolveDim(int64_t dim, bool extra, absl::Status* error) const;
  // Replaces this handle's UOp (used by realize and assign).
  void SetUOp(UOpPtr uop) const;

 private:
  explicit Tensor(std::shared_ptr<TensorNode> node) : node_(std::move(node)) {}
  std::shared_ptr<TensorNode> node_;
};

// A tensor or a Python number, as the right side of an elementwise op.
class Tensor::Operand {
 public:
  Operand(const Tensor& t) : value_(t) {}    // NOLINT
  Operand(Scalar s) : value_(s) {}           // NOLINT
  Operand(int v) : value_(Scalar(v)) {}      // NOLINT
  Operand(int64_t v) : value_(Scalar(v)) {}  // NOLINT
  Operand(double v) : value_(Scalar(v)) {}   // NOLINT
  Operand(float v) : value_(Scalar(v)) {}    // NOLINT
  Operand(bool v) : value_(Scalar(v)) {}     // NOLINT
  bool is_tensor() const { return std::holds_alternative<Tensor>(value_); }
  const Tensor& tensor() const { return std::get<Tensor>(value_); }
  const Scalar& scalar() const { return std::get<Scalar>(value_); }

 private:
  std::variant<Tensor, Scalar> value_;
};

// Python's operators. A number on the left is the left operand (2 - t is t.Sub(2, reverse)).
#define UOPC_TENSOR_BINARY_OPERATOR(OP, METHOD)                                                \
  inline Tensor operator OP(const Tensor& a, const Tensor::Operand& b) { return a.METHOD(b); } \
  inline Tensor operator OP(Scalar a, const Tensor& b) { return b.METHOD(Tensor::Operand(a), true); }
UOPC_TENSOR_BINARY_OPERATOR(+, Add)
UOPC_TENSOR_BINARY_OPERATOR(-, Sub)
UOPC_TENSOR_BINARY_OPERATOR(*, Mul)
UOPC_TENSOR_BINARY_OPERATOR(/, Div)
UOPC_TENSOR_BINARY_OPERATOR(%, Mod)
UOPC_TENSOR_BINARY_OPERATOR(&, BitwiseAnd)
UOPC_TENSOR_BINARY_OPERATOR(|, BitwiseOr)
UOPC_TENSOR_BINARY_OPERATOR(^, BitwiseXor)
#undef UOPC_TENSOR_BINARY_OPERATOR
inline Tensor operator<(const Tensor& a, const Tensor::Operand& b) { return a.Lt(b); }
inline Tensor operator>(const Tensor& a, const Tensor::Operand& b) { return a.Gt(b); }
inline Tensor operator<=(const Tensor& a, const Tensor::Operand& b) { return a.Le(b); }
inline Tensor operator>=(const Tensor& a, const Tensor::Operand& b) { return a.Ge(b); }
inline Tensor operator-(const Tensor& a) { return a.Neg(); }
inline Tensor operator~(const Tensor& a) { return a.BitwiseNot(); }
inline Tensor operator<<(const Tensor& a, int64_t bits) { return a.LShift(bits); }
inline Tensor operator>>(const Tensor& a, int64_t bits) { return a.RShift(bits); }

// ---- templates ----
template <typename E>
DType Tensor::DTypeOf() {
  if constexpr (std::is_same_v<E, bool>)
    return dtypes::kBool;
  else if constexpr (std::is_same_v<E, float>)
    return dtypes::kFloat32;
  else if constexpr (std::is_same_v<E, double>)
    return dtypes::kFloat64;
  else if constexpr (std::is_same_v<E, int8_t>)
    return dtypes::kInt8;
  else if constexpr (std::is_same_v<E, uint8_t>)
    return dtypes::kUInt8;
  else if constexpr (std::is_same_v<E, int16_t>)
    return dtypes::kInt16;
  else if constexpr (std::is_same_v<E, uint16_t>)
    return dtypes::kUInt16;
  else if constexpr (std::is_same_v<E, int32_t>)
    return dtypes::kInt32;
  else if constexpr (std::is_same_v<E, uint32_t>)
    return dtypes::kUInt32;
  else if constexpr (std::is_same_v<E, int64_t>)
    return dtypes::kInt64;
  else if constexpr (std::is_same_v<E, uint64_t>)
    return dtypes::kUInt64;
  else
    static_assert(sizeof(E) == 0, "no dtype for this C++ type");
}

template <typename E>
Tensor Tensor::FromVector(const std::vector<E>& values, const Dims& shape, DType dtype,
                          const std::string& device) {
  if (static_cast<int>(sizeof(E)) != dtype.itemsize()) {
    return FromError(absl::InvalidArgumentError("FromVector: the C++ element size " +
                                                std::to_string(sizeof(E)) + " is not the size of " +
                                                dtype.ToString()));
  }
  std::vector<uint8_t> bytes(values.size() * sizeof(E));
  if (!values.empty()) std::memcpy(bytes.data(), values.data(), bytes.size());
  return FromBytes(std::move(bytes), shape, dtype, device);
}

template <typename E>
absl::StatusOr<std::vector<E>> Tensor::ToVector() const {
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ToBytes());
  if (static_cast<int>(sizeof(E)) != dtype().itemsize()) {
    return absl::InvalidArgumentError("ToVector: the C++ element size " + std::to_string(sizeof(E)) +
                                      " is not the size of " + dtype().ToString());
  }
  std::vector<E> out(bytes.size() / sizeof(E));
  if constexpr (std::is_same_v<E, bool>) {
    // std::vector<bool> packs bits: copy element by element.
    for (size_t i = 0; i < out.size(); ++i) out[i] = bytes[i] != 0;
  } else if (!out.empty()) {
    std::memcpy(out.data(), bytes.data(), out.size() * sizeof(E));
  }
  return out;
}

template <typename E>
absl::StatusOr<E> Tensor::Item() const {
  if (ok() && numel() != 1) {
    return absl::InvalidArgumentError("Item: the tensor must have one element, its shape has " +
                                      std::to_string(numel()));
  }
  UOPC_ASSIGN_OR_RETURN(std::vector<E> v, ToVector<E>());
  return v[0];
}

}  // namespace uopc

#endif  // UOPC_TENSOR_TENSOR_H_
