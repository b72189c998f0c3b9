#include "tensor/testing/random_program.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "tensor/tensor.h"
#include "tensor/testing/host_tensor.h"
#include "uop/util.h"

namespace uopc {

uint64_t FuzzChoices::Below(uint64_t n) {
  if (n <= 1) return 0;
  if (!from_bytes_) return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_);
  uint64_t v = 0;
  for (uint64_t range = 1; range < n && range <= (uint64_t{1} << 48); range <<= 8) {
    uint8_t byte = 0;
    if (size_ > 0) {
      byte = *data_++;
      --size_;
    }
    v = (v << 8) | byte;
  }
  return v % n;
}

ProgramProfile TensorFuzzProfile() {
  ProgramProfile p;
  p.input_dtypes = {dtypes::kFloat32, dtypes::kFloat32, dtypes::kFloat32, dtypes::kInt32,
                    dtypes::kInt32,   dtypes::kInt8,    dtypes::kUInt8,   dtypes::kBool};
  return p;
}

ProgramProfile ScheduleFuzzProfile() {
  ProgramProfile p;
  p.input_dtypes = {dtypes::kFloat32, dtypes::kFloat32, dtypes::kFloat32, dtypes::kInt32};
  p.max_ops = 20;
  p.max_outputs = 5;
  p.max_realizes = 3;
  p.w_binary = 24;
  p.w_unary = 4;
  p.w_cast = 2;
  p.w_where = 4;
  p.w_reduce = 14;
  p.w_cumsum = 2;
  p.w_movement = 22;
  p.w_contiguous = 8;
  p.w_assign = 8;
  p.w_reduce_broadcast = 10;
  p.transcendental = false;
  return p;
}

namespace {

using Shape = std::vector<int64_t>;

std::string DimsStr(const Shape& s) { return absl::StrCat("{", absl::StrJoin(s, ", "), "}"); }
std::string DTypeStr(DType d) { return d.ToString(); }

// One value of the program: the Tensor and what the reference says it holds.
struct Value {
  std::string name;
  Tensor t;
  HostTensor ref;
  // The version of each input buffer the value reads (an assign makes a new version).
  absl::flat_hash_map<int, int> reads;
  bool stale = false;
};

struct BinaryInfo {
  BinaryOp op;
  const char* method;
  bool has_reverse;
};
constexpr BinaryInfo kBinaries[] = {
    {BinaryOp::kAdd, "Add", true},        {BinaryOp::kSub, "Sub", true},
    {BinaryOp::kMul, "Mul", true},        {BinaryOp::kDiv, "Div", true},
    {BinaryOp::kIDiv, "IDiv", true},      {BinaryOp::kMod, "Mod", true},
    {BinaryOp::kMax, "Maximum", false},   {BinaryOp::kMin, "Minimum", false},
    {BinaryOp::kAnd, "BitwiseAnd", true}, {BinaryOp::kOr, "BitwiseOr", true},
    {BinaryOp::kXor, "BitwiseXor", true}, {BinaryOp::kLt, "Lt", false},
    {BinaryOp::kGt, "Gt", false},         {BinaryOp::kLe, "Le", false},
    {BinaryOp::kGe, "Ge", false},         {BinaryOp::kEq, "Eq", false},
    {BinaryOp::kNe, "Ne", false},
};

Tensor ApplyBinary(BinaryOp op, const Tensor& a, const Tensor::Operand& b, bool reverse) {
  switch (op) {
    case BinaryOp::kAdd:
      return a.Add(b, reverse);
    case BinaryOp::kSub:
      return a.Sub(b, reverse);
    case BinaryOp::kMul:
      return a.Mul(b, reverse);
    case BinaryOp::kDiv:
      return a.Div(b, reverse);
    case BinaryOp::kIDiv:
      return a.IDiv(b, reverse);
    case BinaryOp::kMod:
      return a.Mod(b, reverse);
    case BinaryOp::kMax:
      return a.Maximum(b);
    case BinaryOp::kMin:
      return a.Minimum(b);
    case BinaryOp::kAnd:
      return a.BitwiseAnd(b, reverse);
    case BinaryOp::kOr:
      return a.BitwiseOr(b, reverse);
    case BinaryOp::kXor:
      return a.BitwiseXor(b, reverse);
    case BinaryOp::kLt:
      return a.Lt(b);
    case BinaryOp::kGt:
      return a.Gt(b);
    case BinaryOp::kLe:
      return a.Le(b);
    case BinaryOp::kGe:
      return a.Ge(b);
    case BinaryOp::kEq:
      return a.Eq(b);
    case BinaryOp::kNe:
      return a.Ne(b);
  }
  return a;
}

struct UnaryInfo {
  UnaryOp op;
  const char* method;
  Tensor (Tensor::*fn)() const;
  bool transcendental;
};
const UnaryInfo kUnaries[] = {
    {UnaryOp::kNeg, "Neg", &Tensor::Neg, false},
    {UnaryOp::kAbs, "Abs", &Tensor::Abs, false},
    {UnaryOp::kRelu, "Relu", &Tensor::Relu, false},
    {UnaryOp::kSquare, "Square", &Tensor::Square, false},
    {UnaryOp::kExp2, "Exp2", &Tensor::Exp2, true},
    {UnaryOp::kSqrt, "Sqrt", &Tensor::Sqrt, true},
    {UnaryOp::kSin, "Sin", &Tensor::Sin, true},
    {UnaryOp::kReciprocal, "Reciprocal", &Tensor::Reciprocal, true},
    {UnaryOp::kFloor, "Floor", &Tensor::Floor, false},
    {UnaryOp::kLogicalNot, "LogicalNot", &Tensor::LogicalNot, false},
    {UnaryOp::kBitwiseNot, "BitwiseNot", &Tensor::BitwiseNot, false},
};

struct ReduceInfo {
  ReduceOp op;
  const char* method;
};
constexpr ReduceInfo kReduces[] = {
    {ReduceOp::kSum, "Sum"},   {ReduceOp::kSum, "Sum"},   {ReduceOp::kMax, "Max"}, {ReduceOp::kMin, "Min"},
    {ReduceOp::kProd, "Prod"}, {ReduceOp::kMean, "Mean"}, {ReduceOp::kAny, "Any"}, {ReduceOp::kAll, "All"},
};

Tensor ApplyReduce(ReduceOp op, const Tensor& a, const Tensor::Axes& axes, bool keepdim) {
  switch (op) {
    case ReduceOp::kSum:
      return a.Sum(axes, keepdim);
    case ReduceOp::kMax:
      return a.Max(axes, keepdim);
    case ReduceOp::kMin:
      return a.Min(axes, keepdim);
    case ReduceOp::kProd:
      return a.Prod(axes, keepdim);
    case ReduceOp::kMean:
      return a.Mean(axes, keepdim);
    case ReduceOp::kAny:
      return a.Any(axes, keepdim);
    case ReduceOp::kAll:
      return a.All(axes, keepdim);
  }
  return a;
}

class Generator {
 public:
  Generator(FuzzChoices& c, const ProgramProfile& p) : c_(c), p_(p) {}

  ProgramOutcome Run() {
    const int rounds = static_cast<int>(c_.Between(1, p_.max_realizes));
    const int first_inputs = static_cast<int>(c_.Between(1, std::max(1, p_.max_inputs / 2)));
    for (int i = 0; i < first_inputs; ++i) NewInput(RandomShape(), RandomDType());
    for (int round = 0; round < rounds && out_.failure.empty() && !stop_; ++round) {
      const int ops = static_cast<int>(c_.Between(2, std::max(2, p_.max_ops / rounds)));
      for (int i = 0; i < ops && out_.failure.empty(); ++i) {
        // A few tries for an op the reference can pin down.
        for (int attempt = 0; attempt < 4 && !Step(); ++attempt) {
        }
      }
      if (out_.failure.empty()) RealizeAndCompare();
    }
    out_.listing = absl::StrJoin(lines_, "\n");
    return out_;
  }

 private:
  // ---- choices ----

  DType RandomDType() { return p_.input_dtypes[c_.Below(p_.input_dtypes.size())]; }

  Shape RandomShape() {
    const int rank = static_cast<int>(c_.Below(p_.max_rank + 1));
    Shape s;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) {
      int64_t d = c_.Between(1, p_.max_dim);
      if (n * d > p_.max_elements) d = 1;
      s.push_back(d);
      n *= d;
    }
    return s;
  }

  double RandomValue(DType d) {
    if (d.is_bool()) return static_cast<double>(c_.Below(2));
    if (d.is_float()) {
      // Multiples of 1/4 (now and then of 1/64): sums and products stay exact, so most results compare
      // exactly.
      const double scale = c_.Percent(15) ? 64.0 : 4.0;
      return static_cast<double>(c_.Between(-16, 16)) / scale;
    }
    if (c_.Percent(4)) {
      // Now and then the dtype's edge, to wrap.
      const int bits = d.itemsize() * 8;
      const bool is_signed = !d.is_unsigned();
      const double hi = std::ldexp(1.0, is_signed ? bits - 1 : bits) - 1;
      return c_.Percent(50) || !is_signed ? hi : -hi - 1;
    }
    if (d.is_unsigned()) return static_cast<double>(c_.Between(0, 16));
    return static_cast<double>(c_.Between(-8, 8));
  }

  HostScalar RandomScalar(DType next_to) {
    HostScalar s;
    const uint64_t k = c_.Below(10);
    if (next_to.is_bool() && k < 4) {
      s.kind = HostScalar::Kind::kBool;
      s.value = static_cast<double>(c_.Below(2));
    } else if (k < 3 && (next_to.is_float() || c_.Percent(30))) {
      s.kind = HostScalar::Kind::kFloat;
      s.value = static_cast<double>(c_.Between(-8, 8)) / 2.0;
    } else {
      s.kind = HostScalar::Kind::kInt;
      s.value = static_cast<double>(c_.Between(next_to.is_unsigned() ? 0 : -4, 8));
    }
    return s;
  }

  Tensor::Operand ScalarOperand(const HostScalar& s) {
    switch (s.kind) {
      case HostScalar::Kind::kBool:
        return Tensor::Operand(s.value != 0);
      case HostScalar::Kind::kInt:
        return Tensor::Operand(static_cast<int64_t>(s.value));
      case HostScalar::Kind::kFloat:
        return Tensor::Operand(s.value);
    }
    return Tensor::Operand(0);
  }

  // A live value, most often one of the latest.
  int PickValue(const std::function<bool(const Value&)>& ok = nullptr) {
    std::vector<int> live;
    for (int i = 0; i < static_cast<int>(values_.size()); ++i) {
      if (!values_[i].stale && (!ok || ok(values_[i]))) live.push_back(i);
    }
    if (live.empty()) return -1;
    if (c_.Percent(65)) return live[live.size() - 1 - c_.Below(std::min<size_t>(live.size(), 4))];
    return live[c_.Below(live.size())];
  }

  // ---- values ----

  int NewInput(const Shape& shape, DType dtype) {
    std::vector<double> vals(HostNumel(shape));
    for (double& v : vals) v = RandomValue(dtype);
    HostTensor ref = HostTensor::Of(dtype, shape, vals);
    Value v;
    v.name = absl::StrCat("t", values_.size());
    v.t = Tensor::FromBytes(HostToBytes(ref), shape, dtype);
    v.ref = std::move(ref);
    const int id = static_cast<int>(input_buffers_.size());
    v.reads[id] = 0;
    std::vector<std::string> shown;
    for (double x : vals) shown.push_back(absl::StrCat(x));
    lines_.push_back(absl::StrCat(v.name, " = input ", DTypeStr(dtype), " ", TupleString(shape), " {",
                                  absl::StrJoin(shown, ", "), "}"));
    if (!v.t.ok()) {
      Fail(absl::StrCat("creating ", v.name, ": ", v.t.status().ToString()));
      return -1;
    }
    input_buffers_.emplace_back();
    for (const UOp* u : v.t.uop()->Toposort()) {
      if (u->op() == Ops::BUFFER) input_buffers_.back().insert(u);
    }
    buffer_holders_.push_back(v.t.uop());
    input_values_.push_back(static_cast<int>(values_.size()));
    version_.push_back(0);
    device_version_.push_back(0);
    values_.push_back(std::move(v));
    return static_cast<int>(values_.size()) - 1;
  }

  // The reads of a value made from `operands`; nullopt when they read two versions of one buffer (a program
  // the scheduler may rightly refuse as a cycle).
  std::optional<absl::flat_hash_map<int, int>> MergeReads(std::initializer_list<const Value*> operands) {
    absl::flat_hash_map<int, int> reads;
    for (const Value* v : operands) {
      if (v == nullptr) continue;
      for (const auto& [id, version] : v->reads) {
        auto [it, inserted] = reads.emplace(id, version);
        if (!inserted && it->second != version) return std::nullopt;
      }
    }
    return reads;
  }

  // Adds the op's result when the reference pinned it down; false (nothing added) otherwise. A Tensor error
  // or a dtype or shape unlike the reference's fails the program.
  bool Push(std::optional<HostTensor> ref, const std::function<Tensor()>& make, const std::string& expr,
            std::initializer_list<const Value*> operands) {
    if (!ref || HostNumel(ref->shape) > p_.max_elements) return false;
    std::optional<absl::flat_hash_map<int, int>> reads = MergeReads(operands);
    if (!reads) return false;
    Value v;
    v.name = absl::StrCat("t", values_.size());
    v.t = make();
    v.ref = *std::move(ref);
    v.reads = *std::move(reads);
    lines_.push_back(
        absl::StrCat(v.name, " = ", expr, "  # ", DTypeStr(v.ref.dtype), " ", TupleString(v.ref.shape)));
    ++out_.ops;
    if (!v.t.ok()) {
      Fail(absl::StrCat(v.name, ": the Tensor API refused a valid op: ", v.t.status().ToString()));
    } else if (v.t.dtype() != v.ref.dtype) {
      Fail(absl::StrCat(v.name, ": dtype ", DTypeStr(v.t.dtype()), ", the reference's ",
                        DTypeStr(v.ref.dtype)));
    } else if (v.t.Shape() != v.ref.shape) {
      Fail(absl::StrCat(v.name, ": shape ", TupleString(v.t.Shape()), ", the reference's ",
                        TupleString(v.ref.shape)));
    }
    values_.push_back(std::move(v));
    return true;
  }

  void Fail(std::string what) {
    if (out_.failure.empty()) out_.failure = std::move(what);
  }

  // ---- ops ----

  bool Step() {
    const int weights[] = {p_.w_binary, p_.w_unary,    p_.w_cast,       p_.w_where,  p_.w_reduce,
                           p_.w_cumsum, p_.w_movement, p_.w_contiguous, p_.w_assign, p_.w_reduce_broadcast};
    int total = 0;
    for (int w : weights) total += w;
    int pick = static_cast<int>(c_.Below(total));
    int kind = 0;
    while (pick >= weights[kind]) pick -= weights[kind++];
    switch (kind) {
      case 0:
        return Binary();
      case 1:
        return Unary();
      case 2:
        return Cast();
      case 3:
        return Where();
      case 4:
        return Reduce(-1);
      case 5:
        return Cumsum();
      case 6:
        return Movement();
      case 7:
        return Contiguous();
      case 8:
        return Assign();
      default:
        return ReduceBroadcast();
    }
  }

  // A shape `a` broadcasts with: some axes 1, maybe fewer leading axes.
  Shape BroadcastableShape(const Shape& a) {
    Shape s = a;
    for (int64_t& d : s) {
      if (c_.Percent(40)) d = 1;
    }
    if (!s.empty() && c_.Percent(30)) s.erase(s.begin(), s.begin() + c_.Below(s.size() + 1));
    return s;
  }

  // The second operand of a binary op with value `a`: a number, `a` itself, another value that broadcasts
  // with it, or a new input that does.
  bool SecondOperand(int a, HostScalar* scalar, int* b) {
    *b = -1;
    switch (c_.Below(5)) {
      case 0:
        *scalar = RandomScalar(values_[a].ref.dtype);
        return true;
      case 1:
        *b = a;
        return true;
      case 2:
      case 3: {
        const Shape shape = values_[a].ref.shape;
        *b = PickValue([&](const Value& v) { return HostBroadcastShape(shape, v.ref.shape).has_value(); });
        return *b >= 0;
      }
      default:
        *b = NewInput(BroadcastableShape(values_[a].ref.shape),
                      c_.Percent(60) ? values_[a].ref.dtype : RandomDType());
        return *b >= 0;
    }
  }

  // A binary op (`only`, else a random one) of `a` (else a random value) and `b`: -2 draws the second
  // operand, -1 makes it a number.
  bool Binary(std::optional<BinaryOp> only = std::nullopt, int a = -1, int b = -2) {
    if (a < 0) a = PickValue();
    if (a < 0) return false;
    const BinaryInfo* info = nullptr;
    if (only) {
      for (const BinaryInfo& i : kBinaries) {
        if (i.op == *only) info = &i;
      }
    } else {
      info = &kBinaries[c_.Below(std::size(kBinaries))];
    }
    if (!p_.transcendental && info->op == BinaryOp::kDiv) return false;
    HostScalar scalar;
    if (b == -2 && !SecondOperand(a, &scalar, &b)) return false;
    if (b == -1) scalar = RandomScalar(values_[a].ref.dtype);
    const bool reverse = b < 0 && info->has_reverse && c_.Percent(30);
    const Value& va = values_[a];
    HostOperand ha{&va.ref, {}}, hb{b >= 0 ? &values_[b].ref : nullptr, scalar};
    std::optional<HostTensor> ref = reverse ? HostBinary(info->op, hb, ha) : HostBinary(info->op, ha, hb);
    const std::string operand = b >= 0 ? values_[b].name : scalar.ToString();
    const std::string expr =
        absl::StrCat(va.name, ".", info->method, "(", operand, reverse ? ", /*reverse=*/true" : "", ")");
    Tensor ta = va.t;
    Tensor::Operand ob = b >= 0 ? Tensor::Operand(values_[b].t) : ScalarOperand(scalar);
    const BinaryOp op = info->op;
    return Push(std::move(ref), [&] { return ApplyBinary(op, ta, ob, reverse); }, expr,
                {&values_[a], b >= 0 ? &values_[b] : nullptr});
  }

  bool Unary() {
    const int a = PickValue();
    if (a < 0) return false;
    const UnaryInfo& info = kUnaries[c_.Below(std::size(kUnaries))];
    if (info.transcendental && !p_.transcendental) return false;
    const Value& va = values_[a];
    Tensor ta = va.t;
    return Push(HostUnary(info.op, va.ref), [&] { return (ta.*info.fn)(); },
                absl::StrCat(va.name, ".", info.method, "()"), {&values_[a]});
  }

  bool Cast() {
    const int a = PickValue();
    if (a < 0) return false;
    const DType to = c_.Percent(15) ? dtypes::kBool : RandomDType();
    const Value& va = values_[a];
    Tensor ta = va.t;
    return Push(HostCast(va.ref, to), [&] { return ta.Cast(to); },
                absl::StrCat(va.name, ".Cast(", DTypeStr(to), ")"), {&values_[a]});
  }

  bool Where() {
    const int x = PickValue();
    if (x < 0) return false;
    // The condition: a comparison of a value that broadcasts with x against a number.
    const Shape xs = values_[x].ref.shape;
    const int c = PickValue([&](const Value& v) { return HostBroadcastShape(xs, v.ref.shape).has_value(); });
    if (c < 0) return false;
    static constexpr BinaryOp kCmp[] = {BinaryOp::kLt, BinaryOp::kGt, BinaryOp::kNe};
    const size_t cond_index = values_.size();
    if (!Binary(kCmp[c_.Below(3)], c, -1)) return false;
    if (!out_.failure.empty()) return true;
    HostScalar scalar;
    int y = -1;
    if (c_.Percent(50)) {
      scalar = RandomScalar(values_[x].ref.dtype);
    } else {
      y = PickValue([&](const Value& v) {
        return HostBroadcastShape(xs, v.ref.shape).has_value() &&
               HostBroadcastShape(values_[cond_index].ref.shape, v.ref.shape).has_value();
      });
    }
    const Value& vc = values_[cond_index];
    const Value& vx = values_[x];
    HostOperand hx{&vx.ref, {}}, hy{y >= 0 ? &values_[y].ref : nullptr, scalar};
    const bool swap = c_.Percent(30);  // the number first: cond.Where(3, x)
    std::optional<HostTensor> ref = swap ? HostWhere(vc.ref, hy, hx) : HostWhere(vc.ref, hx, hy);
    const std::string xname = vx.name, yname = y >= 0 ? values_[y].name : scalar.ToString();
    Tensor tc = vc.t;
    Tensor::Operand ox(vx.t), oy = y >= 0 ? Tensor::Operand(values_[y].t) : ScalarOperand(scalar);
    return Push(std::move(ref), [&] { return swap ? tc.Where(oy, ox) : tc.Where(ox, oy); },
                absl::StrCat(vc.name, ".Where(", swap ? yname : xname, ", ", swap ? xname : yname, ")"),
                {&values_[cond_index], &values_[x], y >= 0 ? &values_[y] : nullptr});
  }

  // A reduction of a random value (or of `a`) over random axes; returns whether one was added.
  bool Reduce(int a, std::optional<bool> keepdim_only = std::nullopt) {
    if (a < 0) a = PickValue();
    if (a < 0) return false;
    const ReduceInfo& info = kReduces[c_.Below(std::size(kReduces))];
    const Value& va = values_[a];
    const int rank = static_cast<int>(va.ref.shape.size());
    Shape axes, written;
    const bool all = rank == 0 || c_.Percent(15);
    if (all) {
      for (int d = 0; d < rank; ++d) axes.push_back(d);
    } else {
      for (int d = 0; d < rank; ++d) {
        if (c_.Percent(45)) axes.push_back(d);
      }
      if (axes.empty()) axes.push_back(static_cast<int64_t>(c_.Below(rank)));
      // Now and then counted from the end, as Python's negative axes.
      for (int64_t d : axes) written.push_back(c_.Percent(20) ? d - rank : d);
    }
    const bool keepdim = keepdim_only ? *keepdim_only : c_.Percent(40);
    Tensor ta = va.t;
    Tensor::Axes t_axes = all ? Tensor::Axes() : Tensor::Axes(written);
    const ReduceOp op = info.op;
    return Push(HostReduce(op, va.ref, axes, keepdim), [&] { return ApplyReduce(op, ta, t_axes, keepdim); },
                absl::StrCat(va.name, ".", info.method, "(", all ? "" : DimsStr(written),
                             keepdim ? absl::StrCat(all ? "{}" : "", ", /*keepdim=*/true") : "", ")"),
                {&values_[a]});
  }

  bool Cumsum() {
    const int a = PickValue([](const Value& v) { return !v.ref.shape.empty(); });
    if (a < 0) return false;
    const Value& va = values_[a];
    const int64_t rank = static_cast<int64_t>(va.ref.shape.size());
    const int64_t axis = static_cast<int64_t>(c_.Below(rank));
    const int64_t written = c_.Percent(20) ? axis - rank : axis;
    Tensor ta = va.t;
    return Push(HostCumsum(va.ref, axis), [&] { return ta.Cumsum(written); },
                absl::StrCat(va.name, ".Cumsum(", written, ")"), {&values_[a]});
  }

  // A reduction with keepdim combined with its own input (x - x.max(axis, keepdim=True), ...): the
  // reduction's result broadcast back.
  bool ReduceBroadcast() {
    const int a = PickValue([](const Value& v) { return !v.ref.shape.empty(); });
    if (a < 0) return false;
    if (!Reduce(a, /*keepdim_only=*/true)) return false;
    if (!out_.failure.empty()) return true;
    const int r = static_cast<int>(values_.size()) - 1;
    static constexpr BinaryOp kOps[] = {BinaryOp::kSub, BinaryOp::kMul, BinaryOp::kAdd, BinaryOp::kMax};
    Binary(kOps[c_.Below(4)], a, r);
    return true;
  }

  bool Contiguous() {
    const int a = PickValue();
    if (a < 0) return false;
    const Value& va = values_[a];
    Tensor ta = va.t;
    return Push(va.ref, [&] { return ta.Contiguous(); }, absl::StrCat(va.name, ".Contiguous()"),
                {&values_[a]});
  }

  bool Movement() {
    const int a = PickValue();
    if (a < 0) return false;
    const Value& va = values_[a];
    const Shape& shape = va.ref.shape;
    const int rank = static_cast<int>(shape.size());
    Tensor ta = va.t;
    switch (c_.Below(6)) {
      case 0: {  // reshape: the elements split into random factors
        int64_t n = HostNumel(shape);
        if (n == 0) return false;
        Shape out;
        const int want = static_cast<int>(c_.Below(p_.max_rank + 1));
        while (static_cast<int>(out.size()) + 1 < want && n > 1) {
          std::vector<int64_t> divisors;
          for (int64_t d = 1; d <= n; ++d) {
            if (n % d == 0) divisors.push_back(d);
          }
          const int64_t d = divisors[c_.Below(divisors.size())];
          out.push_back(d);
          n /= d;
        }
        if (want > 0 || n > 1) out.push_back(n);
        Shape written = out;
        if (!written.empty() && c_.Percent(20)) written[c_.Below(written.size())] = -1;
        return Push(HostReshape(va.ref, out), [&] { return ta.Reshape(written); },
                    absl::StrCat(va.name, ".Reshape(", DimsStr(written), ")"), {&values_[a]});
      }
      case 1: {  // permute
        if (rank < 2) return false;
        Shape order(rank);
        for (int i = 0; i < rank; ++i) order[i] = i;
        for (int i = rank - 1; i > 0; --i) std::swap(order[i], order[c_.Below(i + 1)]);
        return Push(HostPermute(va.ref, order), [&] { return ta.Permute(order); },
                    absl::StrCat(va.name, ".Permute(", DimsStr(order), ")"), {&values_[a]});
      }
      case 2: {  // expand: axes of size 1 grow, maybe a new leading axis
        Shape out = shape;
        int64_t n = HostNumel(shape);
        for (int64_t& d : out) {
          if (d == 1 && c_.Percent(70)) {
            const int64_t to = c_.Between(2, 4);
            if (n * to <= p_.max_elements) {
              d = to;
              n *= to;
            }
          }
        }
        if (rank < p_.max_rank && c_.Percent(30)) {
          const int64_t to = c_.Between(2, 3);
          if (n * to <= p_.max_elements) out.insert(out.begin(), to);
        }
        if (out == shape) return false;
        Shape written = out;
        for (size_t i = 0; i < written.size(); ++i) {
          const size_t j = i + shape.size() - written.size();  // the source axis, when there is one
          if (i >= written.size() - shape.size() && shape[j] == written[i] && c_.Percent(25)) written[i] = -1;
        }
        return Push(HostExpand(va.ref, out), [&] { return ta.Expand(written); },
                    absl::StrCat(va.name, ".Expand(", DimsStr(written), ")"), {&values_[a]});
      }
      case 3: {  // pad
        if (rank == 0) return false;
        std::vector<std::pair<int64_t, int64_t>> pads(rank);
        Shape out = shape;
        std::vector<std::string> shown;
        for (int d = 0; d < rank; ++d) {
          if (c_.Percent(50))
            pads[d] = {static_cast<int64_t>(c_.Below(3)), static_cast<int64_t>(c_.Below(3))};
          out[d] += pads[d].first + pads[d].second;
          shown.push_back(absl::StrCat("{", pads[d].first, ", ", pads[d].second, "}"));
        }
        if (out == shape) return false;
        const HostScalar value = RandomScalar(va.ref.dtype);
        Scalar sv = value.kind == HostScalar::Kind::kBool  ? Scalar(value.value != 0)
                    : value.kind == HostScalar::Kind::kInt ? Scalar(static_cast<int64_t>(value.value))
                                                           : Scalar(value.value);
        return Push(HostPadWith(va.ref, pads, value), [&] { return ta.Pad(pads, sv); },
                    absl::StrCat(va.name, ".Pad({", absl::StrJoin(shown, ", "), "}, ", value.ToString(), ")"),
                    {&values_[a]});
      }
      case 4: {  // shrink
        if (rank == 0) return false;
        std::vector<std::pair<int64_t, int64_t>> bounds(rank);
        std::vector<std::string> shown;
        for (int d = 0; d < rank; ++d) {
          int64_t lo = 0, hi = shape[d];
          if (c_.Percent(50) && shape[d] > 0) {
            lo = static_cast<int64_t>(c_.Below(shape[d]));
            hi = c_.Between(lo + (c_.Percent(3) ? 0 : 1), shape[d]);
          }
          bounds[d] = {lo, hi};
          shown.push_back(absl::StrCat("{", lo, ", ", hi, "}"));
        }
        return Push(HostShrink(va.ref, bounds), [&] { return ta.Shrink(bounds); },
                    absl::StrCat(va.name, ".Shrink({", absl::StrJoin(shown, ", "), "})"), {&values_[a]});
      }
      default: {  // flip
        if (rank == 0) return false;
        Shape axes;
        for (int d = 0; d < rank; ++d) {
          if (c_.Percent(50)) axes.push_back(d);
        }
        if (axes.empty()) axes.push_back(static_cast<int64_t>(c_.Below(rank)));
        return Push(HostFlip(va.ref, axes), [&] { return ta.Flip(axes); },
                    absl::StrCat(va.name, ".Flip(", DimsStr(axes), ")"), {&values_[a]});
      }
    }
  }

  // An in-place assign to an input: a value of its shape (made from it, or another), cast to its dtype.
  bool Assign() {
    if (input_values_.empty()) return false;
    const int id = static_cast<int>(c_.Below(input_values_.size()));
    const int target = input_values_[id];
    if (target < 0 || values_[target].stale) return false;
    const Shape shape = values_[target].ref.shape;
    const DType dtype = values_[target].ref.dtype;
    int v = PickValue([&](const Value& x) { return x.ref.shape == shape && !x.t.Is(values_[target].t); });
    if (v < 0 || c_.Percent(40)) {
      // target op number, the usual `a.assign(a + 1)`.
      static constexpr BinaryOp kOps[] = {BinaryOp::kAdd, BinaryOp::kMul, BinaryOp::kSub, BinaryOp::kMax};
      const size_t before = values_.size();
      if (!Binary(kOps[c_.Below(4)], target, -1) || !out_.failure.empty()) return true;
      v = static_cast<int>(before);
      if (values_[v].ref.shape != shape) return true;
    }
    if (values_[v].ref.dtype != dtype) {
      const Value& vv = values_[v];
      Tensor tv = vv.t;
      if (!Push(HostCast(vv.ref, dtype), [&] { return tv.Cast(dtype); },
                absl::StrCat(vv.name, ".Cast(", DTypeStr(dtype), ")"), {&values_[v]})) {
        return true;
      }
      if (!out_.failure.empty()) return true;
      v = static_cast<int>(values_.size()) - 1;
    }
    const Value& value = values_[v];
    std::optional<absl::flat_hash_map<int, int>> reads = MergeReads({&values_[target], &value});
    if (!reads) return true;
    Tensor t = values_[target].t;
    Tensor r = t.Assign(value.t);
    lines_.push_back(absl::StrCat(values_[target].name, ".Assign(", value.name, ")  # ", values_[target].name,
                                  " is now version ", version_[id] + 1));
    ++out_.ops;
    if (!r.ok()) {
      Fail(absl::StrCat("Assign: the Tensor API refused a valid assign: ", r.status().ToString()));
      return true;
    }
    // Every value holding the target's handle now holds the assigned value: a new version of the buffer.
    ++version_[id];
    (*reads)[id] = version_[id];
    const HostTensor ref = value.ref;
    for (Value& x : values_) {
      if (!x.t.Is(t)) continue;
      x.ref = ref;
      x.reads = *reads;
    }
    return true;
  }

  // ---- realize and compare ----

  bool ReadsBuffer(const Tensor& t, const absl::flat_hash_set<const UOp*>& buffers) {
    for (const UOp* u : t.uop()->Toposort()) {
      if (buffers.contains(u)) return true;
    }
    return false;
  }

  void RealizeAndCompare() {
    // The outputs: the last value, a few others, and now and then the inputs with an assign pending.
    std::vector<int> outputs;
    auto add = [&](int i) {
      if (i >= 0 && !values_[i].stale && std::find(outputs.begin(), outputs.end(), i) == outputs.end()) {
        outputs.push_back(i);
      }
    };
    for (int i = static_cast<int>(values_.size()) - 1; i >= 0; --i) {
      if (!values_[i].stale) {
        add(i);
        break;
      }
    }
    const int extra = static_cast<int>(c_.Below(p_.max_outputs));
    for (int k = 0; k < extra; ++k) add(PickValue());
    for (size_t id = 0; id < input_values_.size(); ++id) {
      if (version_[id] != device_version_[id] && c_.Percent(60)) add(input_values_[id]);
    }
    std::vector<Tensor> tensors;
    std::vector<std::string> names;
    for (int i : outputs) {
      tensors.push_back(values_[i].t);
      names.push_back(values_[i].name);
    }
    lines_.push_back(absl::StrCat("Tensor::RealizeAll({", absl::StrJoin(names, ", "), "})"));
    if (absl::Status s = Tensor::RealizeAll(tensors); !s.ok()) {
      if (absl::StrContains(s.message(), "self operand of augmented assign must be contiguous")) {
        out_.refused = std::string(s.message());
        stop_ = true;
        return;
      }
      Fail(absl::StrCat("RealizeAll: ", s.ToString()));
      return;
    }
    // The assigns that ran: those no longer in the chain of ASSIGNs the target's graph starts with (the
    // realize replaced them by the buffer).
    for (size_t id = 0; id < input_values_.size(); ++id) {
      int pending = 0;
      for (const UOp* u = values_[input_values_[id]].t.uop().get(); u->op() == Ops::ASSIGN; u = u->src(0)) {
        ++pending;
      }
      device_version_[id] = version_[id] - pending;
      // Two assigns in a row are one value in a new buffer (merge_views), which later assigns write in place.
      if (pending == 0) {
        for (const UOp* u : values_[input_values_[id]].t.uop()->Toposort()) {
          if (u->op() == Ops::BUFFER && input_buffers_[id].insert(u).second)
            buffer_holders_.push_back(u->ref());
        }
      }
    }
    // A value that still reads a buffer an assign has overwritten no longer has the values it was made with.
    for (Value& v : values_) {
      if (v.stale) continue;
      for (const auto& [id, version] : v.reads) {
        if (version < device_version_[id] && ReadsBuffer(v.t, input_buffers_[id])) v.stale = true;
      }
    }
    for (int i : outputs) {
      const Value& v = values_[i];
      if (v.stale) continue;
      absl::StatusOr<std::vector<uint8_t>> bytes = v.t.ToBytes();
      if (!bytes.ok()) {
        Fail(absl::StrCat("reading ", v.name, ": ", bytes.status().ToString()));
        return;
      }
      const std::string diff = HostCompare(v.ref, HostFromBytes(v.ref.dtype, *bytes));
      ++out_.outputs_compared;
      if (!diff.empty()) {
        Fail(absl::StrCat(v.name, " ", DTypeStr(v.ref.dtype), " ", TupleString(v.ref.shape), ": ", diff));
        return;
      }
    }
  }

  FuzzChoices& c_;
  const ProgramProfile& p_;
  std::vector<Value> values_;
  std::vector<std::string> lines_;
  // Per input: its BUFFER nodes (an assign may move it to a new one), the index of its Value, its latest
  // version and the version its buffer holds (the assigns realized so far).
  std::vector<absl::flat_hash_set<const UOp*>> input_buffers_;
  std::vector<UOpPtr> buffer_holders_;  // keeps those BUFFERs alive while they are looked up by pointer
  std::vector<int> input_values_;
  std::vector<int> version_;
  std::vector<int> device_version_;
  ProgramOutcome out_;
  bool stop_ = false;  // the realize refused the program
};

}  // namespace

ProgramOutcome RunRandomProgram(FuzzChoices& choices, const ProgramProfile& profile) {
  return Generator(choices, profile).Run();
}

}  // namespace uopc
