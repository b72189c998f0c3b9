#include "codegen/testing/random_kernel.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "shapetracker/shapetracker.h"
#include "uop/check.h"

namespace uopc {
namespace {

constexpr int64_t kDims[] = {1, 2, 3, 4, 5, 6, 8, 12, 16};

int64_t Product(absl::Span<const int64_t> shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<int64_t>());
}

SintVec ToSint(absl::Span<const int64_t> shape) { return SintVec(shape.begin(), shape.end()); }

ShapeTracker Must(absl::StatusOr<ShapeTracker> st) {
  UOPC_CHECK(st.ok(), "the random view generator made an invalid movement op");
  return *std::move(st);
}

class Generator {
 public:
  Generator(ChoiceSource& c, const RandomKernelOptions& o) : c_(c), o_(o) {}

  RandomKernel Make() {
    const int rank = static_cast<int>(c_.Between(1, o_.max_rank));
    for (int i = 0; i < rank; ++i) shape_.push_back(kDims[c_.Below(std::size(kDims))]);
    const DType dtype = c_.Percent(65) ? dtypes::kFloat32 : dtypes::kInt32;
    kernel_.buffers.push_back({0, dtype, 0});

    std::vector<int64_t> out_shape = shape_;
    UOpPtr value;
    if (c_.Percent(o_.reduce_percent)) {
      std::vector<int64_t> axes;
      for (int i = 0; i < rank; ++i) {
        if (c_.Percent(50)) axes.push_back(i);
      }
      if (axes.empty()) axes.push_back(static_cast<int64_t>(c_.Below(rank)));
      const Ops reduce_op = c_.Percent(70) ? Ops::ADD : Ops::MAX;
      UOpPtr inner = Tree(dtype, shape_, o_.max_depth);
      for (int64_t a : axes) out_shape[a] = 1;
      value =
          UOp::New(Ops::REDUCE_AXIS, dtype, {inner}, Arg(Arg::Tuple{Arg(reduce_op), Arg::IntTuple(axes)}));
      // Now and then, an elementwise op after the reduction, on the reduced shape.
      if (c_.Percent(40)) value = Binary(dtype, out_shape, value, Leaf(dtype, out_shape));
    } else {
      value = Tree(dtype, shape_, o_.max_depth);
    }
    kernel_.buffers[0].size = Product(out_shape);
    UOpPtr out = UOp::New(Ops::DEFINE_GLOBAL, dtype.Ptr(kernel_.buffers[0].size), {}, Arg(int64_t{0}));
    UOpPtr view = Must(ShapeTracker::FromShape(ToSint(out_shape))).ToUOp();
    UOpPtr store = UOp::New(Ops::STORE, dtypes::kVoid, {out, view, value});
    kernel_.ast = UOp::Sink({store});
    return std::move(kernel_);
  }

 private:
  // A value of `dtype` over `shape`.
  UOpPtr Tree(DType dtype, const std::vector<int64_t>& shape, int depth) {
    if (depth == 0 || c_.Percent(25)) return Leaf(dtype, shape);
    switch (c_.Below(5)) {
      case 0:
        return Unary(dtype, shape, Tree(dtype, shape, depth - 1));
      case 1: {
        // where(a < b, x, y)
        UOpPtr a = Tree(dtype, shape, depth - 1), b = Tree(dtype, shape, depth - 1);
        UOpPtr cond = c_.Percent(70) ? a.lt(b) : a.ne(b);
        return cond.where(Tree(dtype, shape, depth - 1), Tree(dtype, shape, depth - 1));
      }
      default:
        return Binary(dtype, shape, Tree(dtype, shape, depth - 1), Tree(dtype, shape, depth - 1));
    }
  }

  // A constant as kernel ASTs hold them: CONST over a view of the shape with every stride 0.
  UOpPtr Constant(DType dtype, const std::vector<int64_t>& shape, ConstValue v) {
    SintVec zeros(shape.size(), Sint(0));
    UOpPtr view = Must(ShapeTracker::FromShape(ToSint(shape), zeros)).ToUOp();
    return UOp::New(Ops::CONST, dtype, {view}, ArgFromConst(v, dtype));
  }
  UOpPtr Constant(DType dtype, const std::vector<int64_t>& shape, int64_t v) {
    return Constant(dtype, shape,
                    dtype.is_float() ? ConstValue::Float(static_cast<double>(v)) : ConstValue::Int(v));
  }

  UOpPtr Binary(DType dtype, const std::vector<int64_t>& shape, const UOpPtr& a, const UOpPtr& b) {
    if (dtype.is_float()) {
      switch (c_.Below(4)) {
        case 0:
          return a + b;
        case 1:
          return a * b;
        case 2:
          return a.maximum(b);
        default:
          return a + b * Constant(dtype, shape, -1);
      }
    }
    switch (c_.Below(7)) {
      case 0:
        return a + b;
      case 1:
        return a * Constant(dtype, shape, c_.Between(-3, 3));  // small factors: no int32 overflow
      case 2:
        return a.maximum(b);
      case 3:
        return a + b * Constant(dtype, shape, -1);
      case 4:
        return a ^ b;
      case 5:
        return a.idiv(Constant(dtype, shape, NonZeroDivisor()));  // divisors are constants: never zero
      default:
        return a % Constant(dtype, shape, NonZeroDivisor());
    }
  }

  int64_t NonZeroDivisor() {
    const int64_t d = c_.Between(1, 9);
    return c_.Percent(25) ? -d : d;
  }

  UOpPtr Unary(DType dtype, const std::vector<int64_t>& shape, const UOpPtr& x) {
    if (!dtype.is_float()) {
      return c_.Percent(50) ? x * Constant(dtype, shape, -1) : (x & Constant(dtype, shape, 15));
    }
    // Arguments kept where the results are finite: a NaN or inf would make a MAX reduction depend on the
    // order of its operands, which the opts change, and this fuzzer is after codegen bugs, not that.
    const UOpPtr positive = x * x + Constant(dtype, shape, 1);
    switch (c_.Below(6)) {
      case 0:
        return (x.sin() * Constant(dtype, shape, 4)).exp2();
      case 1:
        return positive.log2();
      case 2:
        return x.sin();
      case 3:
        return positive.sqrt();
      case 4:
        return positive.reciprocal();
      default:
        return x * Constant(dtype, shape, -1);
    }
  }

  // A load through a random view, a constant, or a load of another dtype cast to this one.
  UOpPtr Leaf(DType dtype, const std::vector<int64_t>& shape) {
    if (c_.Percent(15)) {
      return Constant(dtype, shape,
                      dtype.is_float() ? ConstValue::Float(static_cast<double>(c_.Between(-8, 8)) / 4)
                                       : ConstValue::Int(c_.Between(-8, 8)));
    }
    DType load_dtype = dtype;
    if (c_.Percent(20)) {
      static constexpr ScalarType kOthers[] = {ScalarType::kInt32, ScalarType::kFloat32, ScalarType::kFloat16,
                                               ScalarType::kUInt8, ScalarType::kInt8};
      load_dtype = DType(kOthers[c_.Below(std::size(kOthers))]);
    }
    const int64_t arg = static_cast<int64_t>(kernel_.buffers.size());
    auto [st, size] = RandomView(shape);
    kernel_.buffers.push_back({arg, load_dtype, size});
    UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, load_dtype.Ptr(size), {}, Arg(arg));
    UOpPtr load = UOp::New(Ops::LOAD, load_dtype, {buf, st.ToUOp()});
    return load_dtype == dtype ? load : load.cast(dtype);
  }

  // A view of final shape `shape` over a contiguous buffer, and the buffer's size: movement ops chosen
  // backwards from the final shape, then applied forwards.
  std::pair<ShapeTracker, int64_t> RandomView(const std::vector<int64_t>& shape) {
    std::vector<std::function<ShapeTracker(const ShapeTracker&)>> ops;
    std::vector<int64_t> target = shape;
    const int n = static_cast<int>(c_.Below(o_.max_view_ops + 1));
    for (int k = 0; k < n; ++k) {
      const int rank = static_cast<int>(target.size());
      std::vector<int64_t> prev = target;
      switch (c_.Below(6)) {
        case 0: {  // permute: target[i] = prev[order[i]]
          std::vector<int64_t> order(rank);
          std::iota(order.begin(), order.end(), 0);
          for (int i = rank - 1; i > 0; --i) std::swap(order[i], order[c_.Below(i + 1)]);
          for (int i = 0; i < rank; ++i) prev[order[i]] = target[i];
          ops.push_back([order](const ShapeTracker& st) { return Must(st.Permute(order)); });
          break;
        }
        case 1: {  // expand from size-1 dims
          for (int i = 0; i < rank; ++i) {
            if (c_.Percent(40)) prev[i] = 1;
          }
          ops.push_back([target](const ShapeTracker& st) { return Must(st.Expand(ToSint(target))); });
          break;
        }
        case 2: {  // pad
          std::vector<SintPair> pads;
          for (int i = 0; i < rank; ++i) {
            int64_t before = c_.Between(0, 2), after = c_.Between(0, 2);
            if (target[i] - before - after < 1) before = after = 0;
            prev[i] = target[i] - before - after;
            pads.push_back({Sint(before), Sint(after)});
          }
          ops.push_back([pads](const ShapeTracker& st) { return Must(st.Pad(pads)); });
          break;
        }
        case 3: {  // shrink
          std::vector<SintPair> window;
          for (int i = 0; i < rank; ++i) {
            const int64_t extra = c_.Between(0, 2), start = c_.Between(0, extra);
            prev[i] = target[i] + extra;
            window.push_back({Sint(start), Sint(start + target[i])});
          }
          ops.push_back([window](const ShapeTracker& st) { return Must(st.Shrink(window)); });
          break;
        }
        case 4: {  // flip
          absl::InlinedVector<bool, 6> axes(rank);
          for (int i = 0; i < rank; ++i) axes[i] = c_.Percent(50);
          ops.push_back([axes](const ShapeTracker& st) { return Must(st.Flip(axes)); });
          break;
        }
        default: {  // reshape from the flat buffer
          prev = {Product(target)};
          ops.push_back([target](const ShapeTracker& st) { return Must(st.Reshape(ToSint(target))); });
          break;
        }
      }
      target = std::move(prev);
    }
    ShapeTracker st = Must(ShapeTracker::FromShape(ToSint(target)));
    for (auto it = ops.rbegin(); it != ops.rend(); ++it) st = (*it)(st);
    return {st, std::max<int64_t>(1, Product(target))};
  }

  ChoiceSource& c_;
  const RandomKernelOptions& o_;
  std::vector<int64_t> shape_;
  RandomKernel kernel_;
};

}  // namespace

RandomKernel MakeRandomKernel(ChoiceSource& choices, const RandomKernelOptions& options) {
  return Generator(choices, options).Make();
}

}  // namespace uopc
