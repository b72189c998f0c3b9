// The Tensor handle, the registry of live tensors, shapes and broadcasting (tinygrad's Tensor.__init__,
// _broadcasted, _broadcast_to).
#include "tensor/tensor.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <utility>

#include "rewrite/infix.h"
#include "tensor/tensor_internal.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace tensor_internal {
namespace {

std::mutex registry_mu;
std::vector<std::weak_ptr<TensorNode>>& Registry() {
  static auto* registry = new std::vector<std::weak_ptr<TensorNode>>();
  return *registry;
}

std::mutex shapes_mu;
TensorShapes& GlobalShapes() {
  static auto* shapes = new TensorShapes();
  return *shapes;
}
int64_t shape_lookups = 0;

std::mutex host_mu;
std::vector<std::pair<UOpPtr, std::vector<uint8_t>>>& HostData() {
  static auto* data = new std::vector<std::pair<UOpPtr, std::vector<uint8_t>>>();
  return *data;
}

}  // namespace

void Register(const std::shared_ptr<TensorNode>& node) {
  std::lock_guard<std::mutex> lock(registry_mu);
  std::vector<std::weak_ptr<TensorNode>>& reg = Registry();
  // Drop dead handles now and then so the registry stays the size of the live set.
  if (reg.size() > 1024 && (reg.size() & (reg.size() - 1)) == 0) {
    reg.erase(std::remove_if(reg.begin(), reg.end(), [](const auto& w) { return w.expired(); }), reg.end());
  }
  reg.push_back(node);
}

std::vector<std::shared_ptr<TensorNode>> LiveNodes() {
  std::lock_guard<std::mutex> lock(registry_mu);
  std::vector<std::shared_ptr<TensorNode>> out;
  std::vector<std::weak_ptr<TensorNode>>& reg = Registry();
  reg.erase(std::remove_if(reg.begin(), reg.end(), [](const auto& w) { return w.expired(); }), reg.end());
  for (const auto& w : reg)
    if (auto n = w.lock()) out.push_back(std::move(n));
  return out;
}

TensorShapes& LockedShapes() {
  shapes_mu.lock();
  // The memo holds the nodes it has seen; start afresh now and then so it does not hold dead graphs forever.
  if (++shape_lookups > 200000) {
    shape_lookups = 0;
    GlobalShapes().Clear();
  }
  return GlobalShapes();
}
void UnlockShapes() { shapes_mu.unlock(); }

absl::StatusOr<SintVec> SymShapeOf(const UOpPtr& u) {
  return WithShapes([&](TensorShapes& shapes) -> absl::StatusOr<SintVec> {
    UOPC_ASSIGN_OR_RETURN(const ShapeTracker* st, shapes.TrySt(u));
    if (st == nullptr) return absl::InvalidArgumentError("the node has no shape");
    return st->shape();
  });
}

absl::StatusOr<Dims> ShapeOf(const UOpPtr& u) {
  UOPC_ASSIGN_OR_RETURN(SintVec shape, SymShapeOf(u));
  Dims out;
  for (const Sint& s : shape) out.push_back(s.is_int() ? s.value() : -1);
  return out;
}

int64_t NumElements(absl::Span<const int64_t> shape) {
  int64_t p = 1;
  for (int64_t s : shape) p *= s;
  return p;
}

int64_t CeilDiv(int64_t a, int64_t b) {
  // Python's -(a // -b).
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r > 0) == (b > 0))) ? q + 1 : q;
}

Tensor FromStatusOr(absl::StatusOr<UOpPtr> u) {
  if (!u.ok()) return Tensor::FromError(u.status());
  return Tensor(*std::move(u));
}

Tensor Error(absl::string_view op, const std::string& message) {
  return Tensor::FromError(absl::InvalidArgumentError(absl::StrCat(op, ": ", message)));
}

std::optional<Tensor> SymbolicSizeError(const Tensor& t, absl::string_view op, const Dims& axes) {
  const SintVec shape = t.SymShape();
  for (size_t k = 0; k < shape.size(); ++k) {
    if (shape[k].is_int()) continue;
    if (!axes.empty() && std::find(axes.begin(), axes.end(), static_cast<int64_t>(k)) == axes.end()) continue;
    return Tensor::FromError(absl::UnimplementedError(absl::StrCat(
        op, ": axis ", k, " has the symbolic size ", RenderTinygrad(shape[k].uop().get()), ", and ", op,
        axes.empty() ? " takes" : " takes there", " integer sizes only (docs/support.md)")));
  }
  return std::nullopt;
}

void AddHostData(const UOpPtr& buffer, std::vector<uint8_t> bytes) {
  std::lock_guard<std::mutex> lock(host_mu);
  HostData().emplace_back(buffer, std::move(bytes));
}

std::vector<std::pair<UOpPtr, std::vector<uint8_t>>> TakeHostData() {
  std::lock_guard<std::mutex> lock(host_mu);
  return std::exchange(HostData(), {});
}

}  // namespace tensor_internal

DType Scalar::PyDType() const {
  if (value.is_bool()) return dtypes::kBool;
  return value.is_int() ? dtypes::kDefaultInt : dtypes::kDefaultFloat;
}

Tensor::Tensor() {
  node_ = std::make_shared<TensorNode>();
  node_->status = absl::FailedPreconditionError("an uninitialized Tensor");
}

Tensor::Tensor(UOpPtr uop) {
  node_ = std::make_shared<TensorNode>();
  node_->uop = std::move(uop);
  tensor_internal::Register(node_);
}

Tensor Tensor::FromError(absl::Status status) {
  auto node = std::make_shared<TensorNode>();
  node->status = std::move(status);
  return Tensor(std::move(node));
}

const UOpPtr& Tensor::uop() const { return node_->uop; }
const absl::Status& Tensor::status() const { return node_->status; }
absl::StatusOr<Tensor> Tensor::Ok() const {
  if (!ok()) return status();
  return *this;
}

Dims Tensor::Shape() const {
  if (!ok()) return {};
  absl::StatusOr<Dims> s = tensor_internal::ShapeOf(uop());
  return s.ok() ? *s : Dims{};
}

SintVec Tensor::SymShape() const {
  if (!ok()) return {};
  absl::StatusOr<SintVec> s = tensor_internal::SymShapeOf(uop());
  return s.ok() ? *std::move(s) : SintVec{};
}

bool Tensor::symbolic() const { return !AllInt(SymShape()); }

Sint Variable(const std::string& name, int64_t min, int64_t max) {
  return Sint::FromUOp(UOp::New(Ops::DEFINE_VAR, dtypes::kInt32, {}, Arg{Arg(name), Arg(min), Arg(max)}));
}

absl::StatusOr<Sint> Bind(const Sint& variable, int64_t value) {
  if (variable.is_int() || variable.uop()->op() != Ops::DEFINE_VAR) {
    return absl::InvalidArgumentError(absl::StrCat("Bind: ", variable.ToString(), " is not a Variable"));
  }
  const Arg& arg = variable.uop()->arg();
  if (value < arg[1].as_int() || value > arg[2].as_int()) {
    return absl::OutOfRangeError(absl::StrCat("Bind: ", arg[0].as_string(), "=", value,
                                              " is outside its range [", arg[1].as_int(), ", ",
                                              arg[2].as_int(), "]"));
  }
  return Sint::FromUOp(UOp::New(Ops::BIND, dtypes::kInt32,
                                {variable.uop(), UOp::Const(dtypes::kInt32, ConstValue::Int(value))}));
}

absl::StatusOr<std::pair<std::string, int64_t>> BoundValue(const Sint& bound) {
  if (bound.is_int() || bound.uop()->op() != Ops::BIND) {
    return absl::InvalidArgumentError(absl::StrCat(bound.ToString(), " is not a bound Variable"));
  }
  return std::make_pair(bound.uop()->src(0)->arg()[0].as_string(),
                        bound.uop()->src(1)->const_value().AsInt64());
}

int64_t Tensor::numel() const { return tensor_internal::NumElements(Shape()); }
DType Tensor::dtype() const { return ok() ? uop()->dtype() : dtypes::kVoid; }
std::string Tensor::Device() const { return ok() ? DeviceOf(uop().get()) : ""; }
void Tensor::SetUOp(UOpPtr uop) const { node_->uop = std::move(uop); }

int64_t Tensor::ResolveDim(int64_t dim, bool extra, absl::Status* error) const {
  int64_t total = ndim() + (extra ? 1 : 0);
  int64_t lo = -std::max<int64_t>(1, total), hi = std::max<int64_t>(1, total) - 1;
  if (dim < lo || dim > hi) {
    if (error->ok()) {
      *error = absl::InvalidArgumentError(absl::StrCat("dim=", dim, " out of range [", lo, ", ", hi,
                                                       "] for a tensor of shape ", TupleString(Shape())));
    }
    return 0;
  }
  return dim < 0 ? dim + total : dim;
}

// tinygrad's _broadcast_shape: 0 where either size is 0, else the larger (smax for symbolic sizes).
SintVec tensor_internal::BroadcastShape(const SintVec& a, const SintVec& b) {
  size_t n = std::max(a.size(), b.size());
  SintVec out(n);
  for (size_t i = 0; i < n; ++i) {
    Sint x = i + a.size() >= n ? a[i + a.size() - n] : Sint(1);
    Sint y = i + b.size() >= n ? b[i + b.size() - n] : Sint(1);
    out[i] = (x == Sint(0) || y == Sint(0)) ? Sint(0) : Max(x, y);
  }
  return out;
}

Tensor Tensor::BroadcastTo(const SintVec& new_shape) const {
  UOPC_TENSOR_PROPAGATE(this);
  SintVec shape = SymShape();
  if (shape == new_shape) return *this;
  if (shape.size() > new_shape.size()) {
    return tensor_internal::Error("broadcast",
                                  absl::StrCat("cannot broadcast a tensor of shape ", TupleString(shape),
                                               " to fewer dimensions ", TupleString(new_shape)));
  }
  SintVec aligned(new_shape.size() - shape.size(), Sint(1));
  aligned.insert(aligned.end(), shape.begin(), shape.end());
  for (size_t i = 0; i < aligned.size(); ++i) {
    if (!Resolve(uopc::Eq(aligned[i], new_shape[i]), false) &&
        !Resolve(uopc::Eq(aligned[i], Sint(1)), false)) {
      return tensor_internal::Error(
          "broadcast", absl::StrCat("cannot broadcast ", TupleString(shape), " to ", TupleString(new_shape)));
    }
  }
  return tensor_internal::Movement(Reshape(aligned), Ops::EXPAND, new_shape);
}

std::pair<Tensor, Tensor> Tensor::Broadcasted(const Operand& y, bool reverse, bool match_dtype) const {
  Tensor x = *this;
  Tensor yt;
  if (!x.ok()) return {x, x};
  if (y.is_tensor()) {
    yt = y.tensor();
    if (!yt.ok()) return {yt, yt};
  } else {
    const Scalar& s = y.scalar();
    DType xd = x.dtype();
    DType yd = (xd.is_float() || (xd.is_int() && s.value.is_int())) ? xd : s.PyDType();
    yt = Const(Scalar(AsConst(s.value, yd)), yd, x.Device());
  }
  // Operands on two devices would fail only at realize, far from the call; say so here, with both.
  if (x.Device() != yt.Device()) {
    Tensor e = tensor_internal::Error(
        "elementwise op",
        absl::StrCat("operands on different devices: ", TupleString(x.Shape()), " on ", x.Device(), " and ",
                     TupleString(yt.Shape()), " on ", yt.Device(), " (move one with .To(device))"));
    return {e, e};
  }
  if (match_dtype && x.dtype() != yt.dtype()) {
    DType out = LeastUpperDType(x.dtype(), yt.dtype());
    x = x.Cast(out);
    yt = yt.Cast(out);
  }
  if (reverse) std::swap(x, yt);
  SintVec xs = x.SymShape(), ys = yt.SymShape();
  SintVec out = tensor_internal::BroadcastShape(xs, ys);
  Tensor bx = x.BroadcastTo(out), by = yt.BroadcastTo(out);
  if (!bx.ok() || !by.ok()) {
    Tensor e = tensor_internal::Error(
        "broadcast", absl::StrCat("shapes ", TupleString(xs), " and ", TupleString(ys), " do not broadcast"));
    return {e, e};
  }
  return {bx, by};
}

namespace {
std::atomic<bool> training_mode{false};
}  // namespace

bool Tensor::Training() { return training_mode.load(std::memory_order_relaxed); }

Tensor::Train::Train(bool mode) : previous_(training_mode.exchange(mode)) {}

Tensor::Train::~Train() { training_mode.store(previous_); }

namespace {
std::atomic<bool> no_grad_mode{false};
}  // namespace

bool Tensor::NoGrad() { return no_grad_mode.load(std::memory_order_relaxed); }

Tensor::NoGradScope::NoGradScope(bool mode) : previous_(no_grad_mode.exchange(mode)) {}

Tensor::NoGradScope::~NoGradScope() { no_grad_mode.store(previous_); }

}  // namespace uopc
