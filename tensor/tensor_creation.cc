// Creating tensors: from values, Python-list literals, constants, arange/eye, and tinygrad's threefry random
// numbers (Tensor.rand and its per-device seed and counter tensors).
#include <cmath>
#include <cstring>
#include <map>
#include <mutex>

#include "absl/strings/match.h"
#include "runtime/registry.h"
#include "runtime/sha256.h"
#include "shapetracker/shapetracker.h"
#include "tensor/multi.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::CeilDiv;
using tensor_internal::Error;
using tensor_internal::PackValues;
using tensor_internal::SplitDevices;

namespace {

// Python's float `a // b` (b != 0): the quotient of the exact remainder's division, not floor(a / b), whose
// rounded a / b can cross an integer (4.0 // -1e-6 is -4000001.0, floor(4.0 / -1e-6) is -4000000).
double PyFloorDiv(double a, double b) {
  double mod = std::fmod(a, b);
  double div = (a - mod) / b;
  if (mod != 0 && (b < 0) != (mod < 0)) div -= 1.0;
  if (div == 0) return std::copysign(0.0, a / b);
  double floor_div = std::floor(div);
  return div - floor_div > 0.5 ? floor_div + 1.0 : floor_div;
}

// One value in `dtype`'s memory layout (Python's struct.pack after tinygrad's truncate).
void PackValue(ConstValue v, DType dtype, uint8_t* out) {
  ConstValue c = AsConst(v, dtype);
  auto put = [&](auto x) { std::memcpy(out, &x, sizeof(x)); };
  switch (dtype.scalar_type()) {
    case ScalarType::kBool:
      put(static_cast<uint8_t>(c.AsBool()));
      break;
    case ScalarType::kInt8:
      put(static_cast<int8_t>(c.AsInt64()));
      break;
    case ScalarType::kUInt8:
      put(static_cast<uint8_t>(c.AsInt64()));
      break;
    case ScalarType::kInt16:
      put(static_cast<int16_t>(c.AsInt64()));
      break;
    case ScalarType::kUInt16:
      put(static_cast<uint16_t>(c.AsInt64()));
      break;
    case ScalarType::kInt32:
      put(static_cast<int32_t>(c.AsInt64()));
      break;
    case ScalarType::kUInt32:
      put(static_cast<uint32_t>(static_cast<uint64_t>(c.AsInt())));
      break;
    case ScalarType::kInt64:
      put(static_cast<int64_t>(c.AsInt()));
      break;
    case ScalarType::kUInt64:
      put(static_cast<uint64_t>(c.AsInt()));
      break;
    case ScalarType::kFloat16:
      put(FloatToHalfBits(static_cast<float>(c.AsFloat())));
      break;
    case ScalarType::kBFloat16: {
      float f = static_cast<float>(c.AsFloat());
      uint32_t bits;
      std::memcpy(&bits, &f, 4);
      put(static_cast<uint16_t>(bits >> 16));
      break;
    }
    case ScalarType::kFloat32:
      put(static_cast<float>(c.AsFloat()));
      break;
    case ScalarType::kFloat64:
      put(c.AsFloat());
      break;
    default:
      break;
  }
}

// The random-number state of Tensor.manual_seed: the seed, and per device the seed and counter tensors.
struct RngState {
  std::mutex mu;
  int64_t seed = 0;
  std::map<std::string, Tensor> device_seeds;
  std::map<std::string, Tensor> counters;
};
RngState& Rng() {
  static auto* rng = new RngState();
  return *rng;
}

std::mutex default_device_mu;
// Empty until set or first asked for; then what the registry picks from the devices linked into the program.
std::string& ChosenDefaultDevice() {
  static auto* name = new std::string();
  return *name;
}

std::string Dev(const std::string& device) { return device.empty() ? Tensor::DefaultDevice() : device; }

}  // namespace

void Tensor::SetDefaultDevice(std::string device) {
  std::lock_guard<std::mutex> lock(default_device_mu);
  ChosenDefaultDevice() = std::move(device);
}

std::string Tensor::DefaultDevice() {
  std::lock_guard<std::mutex> lock(default_device_mu);
  if (ChosenDefaultDevice().empty()) ChosenDefaultDevice() = DefaultDeviceName();
  return ChosenDefaultDevice();
}

std::vector<uint8_t> tensor_internal::PackValues(absl::Span<const ConstValue> values, DType dtype) {
  std::vector<uint8_t> bytes(values.size() * dtype.itemsize());
  for (size_t i = 0; i < values.size(); ++i) PackValue(values[i], dtype, bytes.data() + i * dtype.itemsize());
  return bytes;
}

Tensor Tensor::FromBytes(std::vector<uint8_t> bytes, const Dims& shape, DType dtype,
                         const std::string& device_in) {
  const std::string device = Dev(device_in);
  int64_t n = tensor_internal::NumElements(shape);
  if (static_cast<int64_t>(bytes.size()) != n * dtype.itemsize()) {
    return Error("FromVector", absl::StrCat(bytes.size() / std::max(1, dtype.itemsize()),
                                            " values do not fill the shape ", TupleString(shape)));
  }
  for (int64_t s : shape)
    if (s < 0) return Error("FromVector", "negative size in shape " + TupleString(shape));
  // On several devices: on the first, then copied to the others.
  if (std::vector<std::string> devices = SplitDevices(device); devices.size() > 1) {
    return FromBytes(std::move(bytes), shape, dtype, devices[0]).Shard(devices);
  }
  UOpPtr buffer = NewBuffer(device, n, dtype);
  tensor_internal::AddHostData(buffer, std::move(bytes));
  if (shape.size() == 1) return Tensor(buffer);
  absl::StatusOr<ShapeTracker> st = ShapeTracker::FromShape(SintVec(shape.begin(), shape.end()));
  if (!st.ok()) return FromError(st.status());
  return Tensor(ViewOf(buffer, *st));
}

Tensor Tensor::LiteralBytes(std::vector<uint8_t> bytes, const Dims& shape, DType dtype,
                            const std::string& device_in) {
  const std::string device = Dev(device_in);
  UOpPtr buffer = NewBuffer("PYTHON", tensor_internal::NumElements(shape), dtype);
  tensor_internal::AddHostData(buffer, std::move(bytes));
  Tensor t = tensor_internal::Movement(Tensor(buffer), Ops::RESHAPE, shape);
  if (!t.ok()) return t;
  // On several devices, the host values copied to each (tinygrad shards a list on a tuple of devices).
  if (std::vector<std::string> devices = SplitDevices(device); devices.size() > 1) return t.Shard(devices);
  return Tensor(UOp::New(Ops::COPY, dtype, {t.uop(), UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))}));
}

Tensor Tensor::Literal(const std::vector<int64_t>& values, std::optional<DType> dtype,
                       const std::string& device) {
  DType dt = dtype.value_or(dtypes::kDefaultInt);
  std::vector<ConstValue> cv;
  for (int64_t v : values) cv.push_back(ConstValue::Int(v));
  return LiteralBytes(PackValues(cv, dt), {static_cast<int64_t>(values.size())}, dt, device);
}

Tensor Tensor::Literal(const std::vector<int64_t>& values, const Dims& shape, std::optional<DType> dtype,
                       const std::string& device) {
  DType dt = dtype.value_or(dtypes::kDefaultInt);
  if (static_cast<int64_t>(values.size()) != tensor_internal::NumElements(shape)) {
    return Error("Literal",
                 absl::StrCat(values.size(), " values do not fill the shape ", TupleString(shape)));
  }
  std::vector<ConstValue> cv;
  for (int64_t v : values) cv.push_back(ConstValue::Int(v));
  return LiteralBytes(PackValues(cv, dt), shape, dt, device);
}

Tensor Tensor::Literal(const std::vector<double>& values, std::optional<DType> dtype,
                       const std::string& device) {
  DType dt = dtype.value_or(dtypes::kDefaultFloat);
  std::vector<ConstValue> cv;
  for (double v : values) cv.push_back(ConstValue::Float(v));
  return LiteralBytes(PackValues(cv, dt), {static_cast<int64_t>(values.size())}, dt, device);
}

Tensor Tensor::Const(Scalar value, std::optional<DType> dtype, const std::string& device_in) {
  const std::string device = Dev(device_in);
  DType dt = dtype.value_or(value.PyDType());
  // On several devices, one constant on each (MULTI, not sharded).
  if (absl::StrContains(device, ','))
    return Tensor(TensorConst(dt, AsConst(value.value, dt), Dims{}, device));
  // CONST(VIEW(DEVICE)) with the 0-d ShapeTracker (UOp.metaop for shape ()).
  UOpPtr view = UOp::New(Ops::VIEW, dtypes::kVoid, {UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))},
                         Arg(std::make_shared<ShapeTrackerArg>(*ShapeTracker::FromShape({}))));
  return Tensor(UOp::New(Ops::CONST, dt, {view}, UOp::Const(dt, AsConst(value.value, dt))->arg()));
}

namespace {

Tensor SizeTensor(const UOp* size, const std::string& device) {
  switch (size->op()) {
    case Ops::CONST:
      return Tensor::Const(size->const_value().AsInt64(), std::nullopt, device);
    case Ops::BIND: {
      // BIND(DEFINE_VAR(VIEW(DEVICE)), CONST(VIEW(DEVICE))): UOp.metaop's variable on a device.
      UOpPtr view =
          UOp::New(Ops::VIEW, dtypes::kVoid, {UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device))},
                   Arg(std::make_shared<ShapeTrackerArg>(*ShapeTracker::FromShape({}))));
      const UOp* var = size->src(0);
      const UOp* value = size->src(1);
      return Tensor(UOp::New(Ops::BIND, var->dtype(),
                             {UOp::New(Ops::DEFINE_VAR, var->dtype(), {view}, var->arg()),
                              UOp::New(Ops::CONST, value->dtype(), {view}, value->arg())}));
    }
    case Ops::ADD:
      return SizeTensor(size->src(0), device) + SizeTensor(size->src(1), device);
    case Ops::MUL:
      return SizeTensor(size->src(0), device) * SizeTensor(size->src(1), device);
    default:
      return tensor_internal::Error("FromSint",
                                    absl::StrCat("a size of ", Sint::FromUOp(size->ref()).ToString(),
                                                 " has no tensor: only bound variables, integers, "
                                                 "and their sums and products have"));
  }
}

}  // namespace

Tensor Tensor::FromSint(const Sint& value, const std::string& device) {
  if (value.is_int()) return Const(value.value(), std::nullopt, device);
  return SizeTensor(value.uop().get(), Dev(device));
}

Tensor Tensor::Full(const SintVec& shape, Scalar value, std::optional<DType> dtype,
                    const std::string& device) {
  for (const Sint& s : shape)
    if (s.vmin() < 0) return Error("Full", "negative size in shape " + TupleString(shape));
  return Const(value, dtype, device).Reshape(Dims(shape.size(), 1)).Expand(shape);
}

Tensor Tensor::Zeros(const SintVec& shape, DType dtype, const std::string& device) {
  return Full(shape, 0.0, dtype, device);
}
Tensor Tensor::Ones(const SintVec& shape, DType dtype, const std::string& device) {
  return Full(shape, 1.0, dtype, device);
}

Tensor Tensor::Empty(const Dims& shape, DType dtype, const std::string& device_in) {
  const std::string device = Dev(device_in);
  for (int64_t s : shape)
    if (s < 0) return Error("Empty", "negative size in shape " + TupleString(shape));
  if (std::vector<std::string> devices = SplitDevices(device); devices.size() > 1) {
    // A buffer on each device, not sharded (tinygrad's empty on a tuple).
    std::vector<UOpPtr> buffers;
    for (const std::string& d : devices) {
      Tensor one = Empty(shape, dtype, d);
      UOPC_TENSOR_PROPAGATE(&one);
      buffers.push_back(one.uop());
    }
    return Tensor(UOp::New(Ops::MULTI, dtype, buffers));
  }
  return Tensor(NewBuffer(device, tensor_internal::NumElements(shape), dtype)).Reshape(shape);
}

Tensor Tensor::FullLike(Scalar value, std::optional<DType> dtype) const {
  UOPC_TENSOR_PROPAGATE(this);
  return Full(SymShape(), value, dtype.value_or(this->dtype()), Device());
}

Tensor Tensor::ConstLike(Scalar value) const { return FullLike(value); }

Tensor Tensor::Clone() const {
  UOPC_TENSOR_PROPAGATE(this);
  Tensor copy(UOp::New(Ops::COPY, dtype(), {uop(), UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(Device()))}));
  copy.node_->requires_grad = node_->requires_grad;
  if (node_->grad.has_value()) copy.node_->grad = node_->grad->Clone();
  return copy;
}

Tensor Tensor::Arange(Scalar stop) { return Arange(0, stop); }

Tensor Tensor::Arange(Scalar start, Scalar stop, Scalar step, std::optional<DType> dtype,
                      const std::string& device) {
  bool any_float = start.value.is_float() || stop.value.is_float() || step.value.is_float();
  DType dt = dtype.value_or(any_float ? dtypes::kDefaultFloat : dtypes::kDefaultInt);
  int64_t len;
  if (any_float) {
    double a = start.value.AsFloat(), b = stop.value.AsFloat(), s = step.value.AsFloat();
    if (s == 0) return Error("Arange", "step must not be 0");
    len = static_cast<int64_t>(-PyFloorDiv(b - a, -s));  // tinygrad's ceildiv
  } else {
    int64_t a = start.value.AsInt64(), b = stop.value.AsInt64(), s = step.value.AsInt64();
    if (s == 0) return Error("Arange", "step must not be 0");
    len = CeilDiv(b - a, s);
  }
  if (len <= 0) return LiteralBytes({}, {0}, dt, device);
  // start - step as Python computes it.
  Scalar offset = any_float ? Scalar(start.value.AsFloat() - step.value.AsFloat())
                            : Scalar(start.value.AsInt64() - step.value.AsInt64());
  Tensor steps = Full({len}, step, dt, device);
  return (tensor_internal::CumAlu(steps, 0, Ops::ADD, false) + offset).Cast(dt);
}

Tensor Tensor::Linspace(Scalar start, Scalar stop, int64_t steps, DType dtype, const std::string& device) {
  if (steps < 0)
    return Error("Linspace", absl::StrCat("the number of steps must not be negative, got ", steps));
  if (dtype == dtypes::kBool) return Error("Linspace", "a bool dtype is not supported");
  if (steps == 1) {
    if (start.value.is_float()) return Literal(std::vector<double>{start.value.AsFloat()}, dtype, device);
    return Literal(std::vector<int64_t>{start.value.AsInt64()}, dtype, device);
  }
  // Python's true division of the two numbers: always a float.
  double delta = (stop.value.AsFloat() - start.value.AsFloat()) / static_cast<double>(steps - 1);
  return (start + Arange(0, steps, 1, std::nullopt, device) * delta).Cast(dtype);
}

Tensor Tensor::Eye(int64_t n, std::optional<int64_t> m, DType dtype, const std::string& device) {
  if (n < 0 || (m && *m < 0)) return Error("Eye", absl::StrCat("cannot have negative n=", n));
  Tensor x = Ones({n, 1}, dtype, device).Pad({{0, 0}, {0, n}}).Flatten().Shrink({{0, n * n}}).Reshape({n, n});
  if (!m) return x;
  return *m > n ? x.Pad({{0, 0}, {0, *m - n}}) : x.Shrink({{0, n}, {0, *m}});
}

void Tensor::ManualSeed(int64_t seed) {
  RngState& rng = Rng();
  std::lock_guard<std::mutex> lock(rng.mu);
  rng.seed = seed;
  rng.device_seeds.clear();
  rng.counters.clear();
}

namespace {

Tensor ThreefryRandomBits(const Tensor& key, const Tensor& counts0, const Tensor& counts1) {
  Tensor x = (counts1.Cast(dtypes::kUInt64) << 32) | counts0.Cast(dtypes::kUInt64);
  Dims shape = x.Shape();
  Tensor k1 = key.Index({int64_t{1}}).BroadcastTo(shape).Cast(dtypes::kUInt64);
  Tensor k0 = key.Index({int64_t{0}}).BroadcastTo(shape).Cast(dtypes::kUInt64);
  Tensor seed = (k1 << 32) | k0;
  UOPC_TENSOR_PROPAGATE(&x, &seed);
  x = Tensor(Alu(Ops::THREEFRY, {x.uop(), seed.uop()}));
  Tensor c0 = (x & int64_t{0xffffffff}).Cast(dtypes::kUInt32);
  Tensor c1 = ((x >> 32) & int64_t{0xffffffff}).Cast(dtypes::kUInt32);
  return c0.Cat({c1});
}

int Mantissa(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kFloat16:
      return 10;
    case ScalarType::kBFloat16:
      return 7;
    case ScalarType::kFloat64:
      return 52;
    default:
      return 23;
  }
}

DType UIntOfSize(int size) {
  switch (size) {
    case 1:
      return dtypes::kUInt8;
    case 2:
      return dtypes::kUInt16;
    case 8:
      return dtypes::kUInt64;
    default:
      return dtypes::kUInt32;
  }
}

}  // namespace

Tensor Tensor::Rand(const Dims& shape, DType dtype, const std::string& device_in, bool contiguous) {
  const std::string device = Dev(device_in);
  if (!dtype.is_float()) return Error("Rand", "rand only supports float dtypes, got " + dtype.ToString());
  if (SplitDevices(device).size() > 1) {
    return Error("Rand",
                 "rand only supports a single device, got " + device + " (RandLike of a sharded tensor)");
  }
  for (int64_t s : shape)
    if (s < 0) return Error("Rand", "invalid shape " + TupleString(shape));
  int64_t numel = tensor_internal::NumElements(shape);
  if (numel == 0) return Zeros(shape, dtype, device);
  int64_t num = CeilDiv(numel * dtype.itemsize(), 4);
  Tensor seeds, counter;
  {
    RngState& rng = Rng();
    std::lock_guard<std::mutex> lock(rng.mu);
    if (!rng.device_seeds.count(device)) {
      // The device's key: the low 32 bits of sha256 of the number of devices seen so far (4 bytes, big
      // endian).
      uint32_t index = static_cast<uint32_t>(rng.device_seeds.size());
      std::string be = {static_cast<char>(index >> 24), static_cast<char>(index >> 16),
                        static_cast<char>(index >> 8), static_cast<char>(index)};
      std::array<uint8_t, 32> digest = Sha256Digest(be);
      int64_t low = (int64_t{digest[28]} << 24) | (int64_t{digest[29]} << 16) | (int64_t{digest[30]} << 8) |
                    int64_t{digest[31]};
      rng.device_seeds.emplace(device, Literal(std::vector<int64_t>{low, rng.seed}, dtypes::kUInt32, device));
      rng.counters.emplace(device, Literal(std::vector<int64_t>{0}, dtypes::kUInt32, device));
    } else {
      Tensor& c = rng.counters.at(device);
      Tensor next = c + num;
      if (next.ok()) c.SetUOp(UOp::New(Ops::ASSIGN, c.dtype(), {c.uop(), next.uop()}));
    }
    seeds = rng.device_seeds.at(device);
    counter = rng.counters.at(device);
  }
  int64_t half = CeilDiv(num, 2);
  Tensor counts0 = Arange(0, half, 1, dtypes::kUInt32, device) + counter;
  Tensor counts1 = counts0 + half;
  Tensor bits = ThreefryRandomBits(seeds, counts0, counts1).Index({Slice{std::nullopt, num, std::nullopt}});
  DType uint_dtype = UIntOfSize(dtype.itemsize());
  bits = bits.Bitcast(uint_dtype);
  Tensor one = bits.FullLike(1, dtype).Bitcast(uint_dtype);
  bits = bits.RShift(dtype.itemsize() * 8 - Mantissa(dtype)).BitwiseOr(one);
  Tensor out = bits.Bitcast(dtype).Index({Slice{std::nullopt, numel, std::nullopt}}).Sub(1).Reshape(shape);
  return contiguous ? out.Contiguous() : out;
}

Tensor Tensor::Randn(const Dims& shape, DType dtype, const std::string& device) {
  Dims two = {2};
  two.insert(two.end(), shape.begin(), shape.end());
  Tensor src = Rand(two, dtypes::kFloat32, device);
  Tensor a = src.Index({int64_t{0}}), b = src.Index({int64_t{1}});
  return a.Mul(2 * M_PI).Cos().Mul((1 - b).Log().Mul(-2).Sqrt()).Cast(dtype);
}

Tensor Tensor::Uniform(const Dims& shape, double low, double high, DType dtype, const std::string& device) {
  return ((high - low) * Rand(shape, dtypes::kFloat32, device)).Cast(dtype) + low;
}

Tensor Tensor::Normal(const Dims& shape, double mean, double std, DType dtype, const std::string& device) {
  return std * Randn(shape, dtype, device) + mean;
}

Tensor Tensor::Randint(const Dims& shape, int64_t low, int64_t high, DType dtype, const std::string& device) {
  if (!dtype.is_int()) return Error("Randint", "dtype must be an int, got " + dtype.ToString());
  return ((Scalar(high - low) * Rand(shape, dtypes::kFloat32, device)).Cast(dtype)) + Scalar(low);
}

}  // namespace uopc
