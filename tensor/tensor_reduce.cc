// Reductions (sum, max, mean, var, argmax...), softmax, cumulative ops (cumsum, cumprod, logcumsumexp), the
// pooling view that cumsum and convolutions are built on (tinygrad's _reduce, _cumalu, _split_cumalu, _pool),
// einsum, and sort and top-k (tinygrad's bitonic network).
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::CeilDiv;
using tensor_internal::Error;
using tensor_internal::SymbolicSizeError;

namespace {

// Resolved, de-duplicated axes of `axis` (every axis when it says all; none for a 0-d tensor).
absl::StatusOr<Dims> ResolveAxes(const Tensor& t, const Tensor::Axes& axis) {
  Dims out;
  if (t.ndim() == 0) return out;
  if (axis.all) {
    for (int64_t i = 0; i < t.ndim(); ++i) out.push_back(i);
    return out;
  }
  absl::Status err;
  for (int64_t a : axis.axes) out.push_back(t.ResolveDim(a, false, &err));
  UOPC_RETURN_IF_ERROR(err);
  return out;
}

Tensor Reduce(const Tensor& t, Ops op, const Tensor::Axes& axis, bool keepdim) {
  UOPC_TENSOR_PROPAGATE(&t);
  absl::StatusOr<Dims> axes = ResolveAxes(t, axis);
  if (!axes.ok()) return Tensor::FromError(axes.status());
  Tensor ret = tensor_internal::WithShapes(
      [&](TensorShapes& shapes) { return Tensor(ReduceAxis(t.uop(), op, *axes, shapes)); });
  if (keepdim) return ret;
  SintVec shape = t.SymShape(), out;
  for (int64_t i = 0; i < static_cast<int64_t>(shape.size()); ++i)
    if (std::find(axes->begin(), axes->end(), i) == axes->end()) out.push_back(shape[i]);
  return ret.Reshape(out);
}

// The sizes a reduction over `axis` sums, in axis order (what tinygrad's mean and var count).
SintVec ReducedSizes(const Tensor& t, const Tensor::Axes& axis) {
  absl::StatusOr<Dims> axes = ResolveAxes(t, axis);
  if (!axes.ok()) return {};
  SintVec shape = t.SymShape();
  Dims uniq = *axes;
  std::sort(uniq.begin(), uniq.end());
  uniq.erase(std::unique(uniq.begin(), uniq.end()), uniq.end());
  SintVec sizes;
  for (int64_t a : uniq) sizes.push_back(shape[a]);
  return sizes;
}

// Python's prod of `sizes` (a fold from the integer 1 that becomes a UOp at the first symbolic size,
// unsimplified) as Tensor.from_uop makes it a tensor: mean's divisor over a symbolic axis.
Tensor SizeProductTensor(absl::Span<const Sint> sizes, const std::string& device) {
  int64_t leading = 1;
  std::optional<Tensor> product;
  for (const Sint& size : sizes) {
    if (!product && size.is_int()) {
      leading *= size.value();
      continue;
    }
    Tensor factor = Tensor::FromSint(size, device);
    product = product ? *product * factor : Tensor::FromSint(leading, device) * factor;
  }
  return product ? *product : Tensor::FromSint(leading, device);
}

Tensor Inverse(const Tensor& t) {
  if (t.dtype().is_float()) return t.Neg();
  if (t.dtype().is_int()) return t.BitwiseNot();
  return t.LogicalNot();
}

}  // namespace

namespace tensor_internal {

ConstValue IdentityElement(Ops op, DType dtype) {
  if (op == Ops::ADD) return AsConst(ConstValue::Int(0), dtype);
  if (op == Ops::MUL) return AsConst(ConstValue::Int(1), dtype);
  return DTypeMin(dtype);
}

Tensor CumAlu(const Tensor& x, int64_t axis, Ops op, bool include_initial) {
  UOPC_TENSOR_PROPAGATE(&x);
  Dims shape = x.Shape();
  int64_t n = shape[axis];
  if (n == 0) return Error("cumulative op", "the axis has size 0 in shape " + TupleString(shape));
  int64_t pl_sz = n - (include_initial ? 0 : 1);
  Tensor t = x.Transpose(axis, -1);
  std::vector<std::pair<int64_t, int64_t>> pads(t.ndim(), {0, 0});
  pads.back() = {pl_sz, include_initial ? -1 : 0};
  Tensor pooled = Pool(t.Pad(pads, Scalar(IdentityElement(op, x.dtype()))), {n}, {1}, {1});
  Tensor r = op == Ops::ADD ? pooled.Sum(-1) : op == Ops::MAX ? pooled.Max(-1) : pooled.Prod(-1);
  return r.Transpose(axis, -1);
}

Tensor Pool(const Tensor& self, const Dims& k, const Dims& stride_in, const Dims& dilation_in) {
  UOPC_TENSOR_PROPAGATE(&self);
  Dims shape = self.Shape();
  size_t nk = k.size();
  if (shape.size() < nk)
    return Error("pool", absl::StrCat("can't pool ", TupleString(shape), " with ", TupleString(k)));
  Dims s = PerAxis(stride_in, nk), d = PerAxis(dilation_in, nk);
  if (s.size() != nk || d.size() != nk) {
    return Error("pool", absl::StrCat("stride/dilation mismatch kernel:", TupleString(k),
                                      " stride:", TupleString(s), " dilation:", TupleString(d)));
  }
  for (size_t j = 0; j < nk; ++j) {
    if (s[j] < 1 || d[j] < 1) {
      return Error("pool", absl::StrCat("stride and dilation must be >= 1, got stride:", TupleString(s),
                                        " dilation:", TupleString(d)));
    }
  }
  size_t nn = shape.size() - nk;
  // The axes before the pooled ones may be symbolic (they pass through); the pooled ones may not.
  const SintVec sym_shape = self.SymShape();
  const SintVec noop(sym_shape.begin(), sym_shape.begin() + nn);
  if (!AllInt(absl::MakeConstSpan(sym_shape).subspan(nn))) {
    return Error("pool",
                 absl::StrCat("the pooled axes of ", TupleString(sym_shape), " must not be symbolic"));
  }
  Dims i(shape.begin() + nn, shape.end());
  for (size_t j = 0; j < nk; ++j) {
    if (d[j] * (k[j] - 1) + 1 > i[j]) {
      return Error("pool",
                   absl::StrCat("kernel ", TupleString(k), " is larger than the input ", TupleString(shape)));
    }
  }
  Dims o(nk);
  for (size_t j = 0; j < nk; ++j) o[j] = CeilDiv(i[j] - d[j] * (k[j] - 1), s[j]);
  // None in tinygrad's shrink args: the whole axis.
  auto noop_pairs = [&]() {
    std::vector<SintPair> p;
    for (size_t j = 0; j < nn; ++j) p.push_back({0, noop[j]});
    return p;
  };
  bool general = false;
  for (size_t j = 0; j < nk; ++j)
    if (k[j] > s[j] || d[j] != 1) general = true;
  Tensor x = self;
  if (general) {
    Dims f(nk), rep(nn, 1);
    for (size_t j = 0; j < nk; ++j) {
      f[j] = 1 + (o[j] * s[j] > i[j] - d[j] * (k[j] - 1) ? 1 : 0);
      // The input is repeated to at least k * (i * f + d) along the axis: past int64 (tinygrad's unbounded
      // ints reach it for a cumsum or arange of 2^31 elements and more), shapes cannot say it.
      const absl::int128 span = absl::int128(k[j]) * (absl::int128(i[j]) * f[j] + d[j]);
      const absl::int128 repeated = (span + i[j] - 1) / i[j] * i[j];
      if (repeated > std::numeric_limits<int64_t>::max()) {
        return Error("pool", absl::StrCat("pooling ", TupleString(shape), " with kernel ", TupleString(k),
                                          " needs an intermediate axis of 2^63 elements or more"));
      }
      rep.push_back(CeilDiv(k[j] * (i[j] * f[j] + d[j]), i[j]));
    }
    x = x.Repeat(rep);
    auto sh = noop_pairs();
    SintVec rs = noop;
    for (size_t j = 0; j < nk; ++j) {
      sh.push_back({0, k[j] * (i[j] * f[j] + d[j])});
      rs.insert(rs.end(), {k[j], i[j] * f[j] + d[j]});
    }
    x = x.Shrink(sh).Reshape(rs);
    sh = noop_pairs();
    rs = noop;
    for (size_t j = 0; j < nk; ++j) {
      sh.push_back({0, k[j]});
      sh.push_back({0, o[j] * s[j]});
      rs.insert(rs.end(), {k[j], o[j], s[j]});
    }
    x = x.Shrink(sh).Reshape(rs);
    sh = noop_pairs();
    rs = noop;
    for (size_t j = 0; j < nk; ++j) {
      sh.push_back({0, k[j]});
      sh.push_back({0, o[j]});
      sh.push_back({0, 1});
      rs.insert(rs.end(), {k[j], o[j]});
    }
    x = x.Shrink(sh).Reshape(rs);
    Dims perm;
    for (size_t j = 0; j < nn; ++j) perm.push_back(j);
    for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2 + 1);
    for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2);
    return x.Permute(perm);
  }
  std::vector<SintPair> pads(nn, {0, 0});
  auto sh = noop_pairs();
  for (size_t j = 0; j < nk; ++j) {
    pads.push_back({0, std::max<int64_t>(0, o[j] * s[j] - i[j])});
    sh.push_back({0, o[j] * s[j]});
  }
  x = x.Pad(pads).Shrink(sh);
  SintVec rs = noop;
  for (size_t j = 0; j < nk; ++j) rs.insert(rs.end(), {o[j], s[j]});
  x = x.Reshape(rs);
  sh = noop_pairs();
  for (size_t j = 0; j < nk; ++j) {
    sh.push_back({0, o[j]});
    sh.push_back({0, k[j]});
  }
  x = x.Shrink(sh);
  Dims perm;
  for (size_t j = 0; j < nn; ++j) perm.push_back(j);
  for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2);
  for (size_t j = 0; j < nk; ++j) perm.push_back(nn + j * 2 + 1);
  return x.Permute(perm);
}

}  // namespace tensor_internal

Tensor Tensor::Sum(Axes axis, bool keepdim, std::optional<DType> acc_dtype) const {
  UOPC_TENSOR_PROPAGATE(this);
  Tensor ret = Reduce(Cast(acc_dtype.value_or(SumAccDType(dtype()))), Ops::ADD, axis, keepdim);
  bool small_float = dtype() == dtypes::kFloat16 || dtype() == dtypes::kBFloat16;
  return (!acc_dtype && small_float) ? ret.Cast(dtype()) : ret;
}

Tensor Tensor::Prod(Axes axis, bool keepdim) const { return Reduce(*this, Ops::MUL, axis, keepdim); }
Tensor Tensor::Max(Axes axis, bool keepdim) const { return Reduce(*this, Ops::MAX, axis, keepdim); }
Tensor Tensor::Min(Axes axis, bool keepdim) const { return Inverse(Inverse(*this).Max(axis, keepdim)); }
Tensor Tensor::Any(Axes axis, bool keepdim) const { return Bool().Max(axis, keepdim); }
Tensor Tensor::All(Axes axis, bool keepdim) const { return LogicalNot().Any(axis, keepdim).LogicalNot(); }

Tensor Tensor::Mean(Axes axis, bool keepdim) const {
  UOPC_TENSOR_PROPAGATE(this);
  DType out = dtype().is_float() ? dtype() : dtypes::kFloat32;
  Tensor numerator = Cast(SumAccDType(dtype())).Sum(axis, keepdim);
  UOPC_TENSOR_PROPAGATE(&numerator);
  const SintVec sizes = ReducedSizes(*this, axis);
  if (AllInt(sizes)) return numerator.Div(uopc::Prod(sizes).value()).Cast(out);
  return numerator.Div(SizeProductTensor(sizes, Device())).Cast(out);
}

Tensor Tensor::Var(Axes axis, bool keepdim, int64_t correction) const {
  UOPC_TENSOR_PROPAGATE(this);
  Tensor squares = (*this - Mean(axis, true)).Square();
  // tinygrad's smax([0, n - correction]), simplified: a symbolic count whose range stays non-negative
  // becomes the count less the correction.
  const Sint n = uopc::Max(Sint(0), uopc::Prod(ReducedSizes(*this, axis)) - correction);
  Tensor sum = squares.Sum(axis, keepdim);
  return n.is_int() ? sum.Div(n.value()) : sum.Div(FromSint(n, Device()));
}

Tensor Tensor::Std(Axes axis, bool keepdim, int64_t correction) const {
  return Var(axis, keepdim, correction).Sqrt();
}

Tensor Tensor::Argmax(std::optional<int64_t> axis_in, bool keepdim) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (!axis_in) return Flatten().Argmax(0);
  absl::Status err;
  int64_t axis = ResolveDim(*axis_in, false, &err);
  if (!err.ok()) return FromError(err);
  if (auto symbolic = SymbolicSizeError(*this, "Argmax", {axis})) return *symbolic;
  Dims shape = Shape();
  Tensor m = Eq(Max(axis, true));
  Dims rs = {shape[axis]};
  rs.insert(rs.end(), ndim() - axis - 1, 1);
  Tensor idx = m * Arange(shape[axis], 0, -1, std::nullopt, Device()).Reshape(rs);
  return (Scalar(shape[axis]) - idx.Max(axis, keepdim)).Cast(dtypes::kInt32);
}

Tensor Tensor::Argmin(std::optional<int64_t> axis, bool keepdim) const {
  return Inverse(*this).Argmax(axis, keepdim);
}

namespace {
struct SoftmaxParts {
  Tensor m, e, ss;
};
SoftmaxParts SoftmaxOf(const Tensor& x, int64_t axis) {
  Tensor mx = x.Max(axis, true);
  Tensor detached = mx.ok() ? Tensor(UOp::New(Ops::DETACH, mx.dtype(), {mx.uop()})) : mx;
  Tensor m = x - detached;
  Tensor e = m.Exp();
  return {m, e, e.Sum(axis, true)};
}
}  // namespace

Tensor Tensor::Softmax(int64_t axis) const {
  SoftmaxParts p = SoftmaxOf(*this, axis);
  return p.e.Div(p.ss);
}

Tensor Tensor::LogSoftmax(int64_t axis) const {
  SoftmaxParts p = SoftmaxOf(*this, axis);
  return p.m - p.ss.Log();
}

Tensor Tensor::Logsumexp(Axes axis, bool keepdim) const {
  Tensor m = Max(axis, true);
  Tensor r = (*this - m).Exp().Sum(axis, keepdim).Log();
  if (axis.all || keepdim) return r + (keepdim ? m : m.Reshape(r.Shape()));
  Tensor sq = m;
  Dims axes = axis.axes;
  std::sort(axes.rbegin(), axes.rend());
  for (int64_t a : axes) sq = sq.Squeeze(a);
  return r + sq;
}

namespace {
Tensor SplitCumAlu(const Tensor& self, int64_t axis_in, Ops op, absl::string_view name) {
  UOPC_TENSOR_PROPAGATE(&self);
  absl::Status err;
  int64_t axis = self.ResolveDim(axis_in, false, &err);
  if (!err.ok()) return Tensor::FromError(err);
  if (auto symbolic = SymbolicSizeError(self, name, {axis})) return *symbolic;
  Dims shape = self.Shape();
  if (self.ndim() == 0 || std::find(shape.begin(), shape.end(), 0) != shape.end()) return self;
  constexpr int64_t kSplit = 256;
  int64_t s = shape[axis];
  if (s <= kSplit * 2) return tensor_internal::CumAlu(self, axis, op, false);
  Tensor t = self.Transpose(axis, -1);
  std::vector<std::pair<int64_t, int64_t>> pads(t.ndim(), {0, 0});
  pads.back() = {CeilDiv(s, kSplit) * kSplit - s, 0};
  Tensor padded = t.Pad(pads, Scalar(tensor_internal::IdentityElement(op, self.dtype())));
  Dims ps = padded.Shape();
  ps.back() = -1;
  ps.push_back(kSplit);
  Tensor unflat = padded.Reshape(ps);
  Tensor ret = tensor_internal::CumAlu(unflat, unflat.ndim() - 1, op, false);
  Tensor base = ret.Index({Ellipsis{}, int64_t{-1}});
  base = tensor_internal::CumAlu(base, base.ndim() - 1, op, true);
  Dims bs = base.Shape();
  bs.push_back(ret.Shape().back());
  base = base.Unsqueeze(-1).Expand(bs);
  auto fix = [&](const Tensor& x) {
    return x.Flatten(-2).Index({Ellipsis{}, Slice{-s, std::nullopt, std::nullopt}}).Transpose(axis, -1);
  };
  if (op == Ops::ADD) return fix(ret) + fix(base);
  if (op == Ops::MAX) return fix(ret).Maximum(fix(base));
  return fix(ret) * fix(base);
}
}  // namespace

Tensor Tensor::Cumsum(int64_t axis) const { return SplitCumAlu(*this, axis, Ops::ADD, "Cumsum"); }
Tensor Tensor::Cummax(int64_t axis) const { return SplitCumAlu(*this, axis, Ops::MAX, "Cummax"); }
Tensor Tensor::Cumprod(int64_t axis) const { return SplitCumAlu(*this, axis, Ops::MUL, "Cumprod"); }

Tensor Tensor::Logcumsumexp(int64_t axis_in) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (ndim() == 0) return *this;
  absl::Status err;
  int64_t axis = ResolveDim(axis_in, false, &err);
  if (!err.ok()) return FromError(err);
  if (auto symbolic = SymbolicSizeError(*this, "Logcumsumexp", {axis})) return *symbolic;
  // Every prefix along the last axis as a row of a masked square: exp(x_j - running max) summed where j <= i.
  Tensor x = Transpose(axis, -1);
  Dims x_shape = x.Shape();
  int64_t n = x_shape.back();
  Tensor rows = x.Reshape({-1, n});
  Tensor running_max = rows.Cummax(-1).Unsqueeze(-1);
  Dims square = rows.Shape();
  square.push_back(n);
  Tensor expanded = rows.Unsqueeze(1).Expand(square);
  Tensor mask = Ones({n, n}, dtypes::kFloat32, Device()).Tril().Unsqueeze(0);
  Tensor ret = ((expanded - running_max).Exp() * mask).Sum(-1).Log() + running_max.Squeeze(-1);
  return ret.Reshape(x_shape).Transpose(-1, axis);
}

std::pair<Tensor, Tensor> Tensor::VarMean(Axes axis, bool keepdim, int64_t correction) const {
  return {Var(axis, keepdim, correction), Mean(axis, keepdim)};
}

std::pair<Tensor, Tensor> Tensor::StdMean(Axes axis, bool keepdim, int64_t correction) const {
  return {Std(axis, keepdim, correction), Mean(axis, keepdim)};
}

namespace {

// The operands' letters with every "..." replaced by letters the formula does not use (as many as the axes
// the operand has beyond its letters), and the output's letters (tinygrad's parse_formula).
struct EinsumLetters {
  std::vector<std::string> inputs;
  std::string output;
};

absl::StatusOr<EinsumLetters> ParseEinsum(std::string formula, const std::vector<Tensor>& operands) {
  formula.erase(std::remove(formula.begin(), formula.end(), ' '), formula.end());
  const size_t arrow = formula.find("->");
  if (arrow != std::string::npos && formula.find("->", arrow + 2) != std::string::npos) {
    return absl::InvalidArgumentError("the formula \"" + formula + "\" has more than one \"->\"");
  }
  EinsumLetters parsed;
  parsed.inputs = absl::StrSplit(formula.substr(0, arrow), ',');
  std::optional<std::string> output;
  if (arrow != std::string::npos) output = formula.substr(arrow + 2);
  if (parsed.inputs.size() != operands.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the formula \"", formula, "\" has ", parsed.inputs.size(),
                                                   " inputs, got ", operands.size(), " operands"));
  }
  // Letters used once, sorted (the implicit output).
  auto used_once = [](const std::string& text, const std::string& excluded) {
    std::string once;
    for (char c : text) {
      if (std::isalpha(static_cast<unsigned char>(c)) && std::count(text.begin(), text.end(), c) == 1 &&
          excluded.find(c) == std::string::npos) {
        once += c;
      }
    }
    std::sort(once.begin(), once.end());
    return once;
  };
  if (formula.find("...") == std::string::npos) {
    parsed.output = output ? *output : used_once(formula, "");
    return parsed;
  }
  std::string unused;
  for (char c : std::string("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"))
    if (formula.find(c) == std::string::npos) unused += c;
  int64_t longest = 0;
  for (size_t i = 0; i < parsed.inputs.size(); ++i) {
    std::string& input = parsed.inputs[i];
    const size_t pos = input.find("...");
    if (pos == std::string::npos) continue;
    const int64_t count = operands[i].ndim() - static_cast<int64_t>(input.size() - 3);
    if (count < 0 || count > static_cast<int64_t>(unused.size())) {
      return absl::InvalidArgumentError(absl::StrCat("operand ", i, " of shape ",
                                                     TupleString(operands[i].Shape()),
                                                     " has too few axes for \"", input, "\""));
    }
    longest = std::max(longest, count);
    input.replace(pos, 3, unused.substr(unused.size() - count));
  }
  const std::string ellipsis = unused.substr(unused.size() - longest);
  if (!output) {
    parsed.output = ellipsis + used_once(absl::StrJoin(parsed.inputs, ","), ellipsis);
  } else {
    parsed.output = *output;
    if (size_t pos = parsed.output.find("..."); pos != std::string::npos)
      parsed.output.replace(pos, 3, ellipsis);
  }
  return parsed;
}

}  // namespace

Tensor Tensor::Einsum(const std::string& formula, const std::vector<Tensor>& operands,
                      std::optional<DType> dtype) {
  for (const Tensor& t : operands) UOPC_TENSOR_PROPAGATE(&t);
  if (operands.empty()) return Error("Einsum", "needs at least one operand");
  absl::StatusOr<EinsumLetters> parsed = ParseEinsum(formula, operands);
  if (!parsed.ok()) return Error("Einsum", std::string(parsed.status().message()));
  // The size of every letter, in letter order.
  std::map<char, int64_t> sizes;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& letters = parsed->inputs[i];
    const Dims shape = operands[i].Shape();
    if (letters.size() != shape.size()) {
      return Error("Einsum", absl::StrCat("\"", letters, "\" names ", letters.size(), " axes, operand ", i,
                                          " has shape ", TupleString(shape)));
    }
    for (size_t a = 0; a < letters.size(); ++a) {
      const char c = letters[a];
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        return Error("Einsum",
                     absl::StrCat("'", std::string(1, c), "' in \"", formula, "\" is not a letter"));
      }
      if (letters.find(c) != a) {
        return Error("Einsum", absl::StrCat("'", std::string(1, c), "' appears twice in operand ", i, "'s \"",
                                            letters, "\""));
      }
      auto [it, inserted] = sizes.insert({c, shape[a]});
      if (!inserted && it->second != shape[a]) {
        return Error("Einsum", absl::StrCat("'", std::string(1, c), "' has size ", it->second, " and ",
                                            shape[a], " (operand ", i, ")"));
      }
    }
  }
  const std::string& output = parsed->output;
  for (size_t j = 0; j < output.size(); ++j) {
    if (!sizes.contains(output[j]) || output.find(output[j]) != j) {
      return Error("Einsum",
                   absl::StrCat("the output \"", output, "\" must name distinct letters of the inputs"));
    }
  }
  // Every operand with its axes in letter order and the letters it lacks as broadcast axes, multiplied.
  Dims full;
  for (const auto& [c, size] : sizes) full.push_back(size);
  Tensor product;
  for (size_t i = 0; i < operands.size(); ++i) {
    const std::string& letters = parsed->inputs[i];
    Dims order(letters.size());
    for (size_t a = 0; a < order.size(); ++a) order[a] = static_cast<int64_t>(a);
    std::stable_sort(order.begin(), order.end(),
                     [&](int64_t a, int64_t b) { return letters[a] < letters[b]; });
    Dims aligned;
    for (const auto& [c, size] : sizes) aligned.push_back(letters.find(c) != std::string::npos ? size : 1);
    Tensor x = operands[i].Permute(order).Reshape(aligned).Expand(full);
    product = i == 0 ? x : product * x;
  }
  Dims summed;
  int64_t axis = 0;
  for (const auto& [c, size] : sizes) {
    if (output.find(c) == std::string::npos) summed.push_back(axis);
    ++axis;
  }
  // The kept axes are in letter order; each output letter's rank among them is where it comes from.
  std::string sorted_output = output;
  std::sort(sorted_output.begin(), sorted_output.end());
  Dims permutation;
  for (char c : output) permutation.push_back(static_cast<int64_t>(sorted_output.find(c)));
  return product.Sum(summed, false, dtype).Permute(permutation);
}

std::pair<Tensor, Tensor> Tensor::Sort(int64_t dim_in, bool descending) const {
  auto failed = [](const Tensor& error) { return std::pair<Tensor, Tensor>{error, error}; };
  if (!ok()) return failed(*this);
  absl::Status err;
  const int64_t dim = ResolveDim(dim_in, false, &err);
  if (!err.ok()) return failed(FromError(err));
  if (ndim() == 0) return failed(Error("Sort", absl::StrCat("a 0-d tensor has no dim ", dim_in)));
  if (auto symbolic = SymbolicSizeError(*this, "Sort")) return failed(*symbolic);
  const Dims shape = Shape();
  const int64_t n = shape[dim];
  if (n == 0) return failed(Error("Sort", absl::StrCat("cannot sort dim ", dim, " of size 0")));
  int64_t stages = 0;
  while ((int64_t{1} << stages) < n) ++stages;
  // Padded to a power of two with values that sort last, then one axis of 2 per stage of the network.
  std::vector<std::pair<int64_t, int64_t>> pads(shape.size(), {0, 0});
  pads[dim] = {0, (int64_t{1} << stages) - n};
  Tensor x =
      Pad(pads, Scalar(descending ? DTypeMin(dtype()) : DTypeMax(dtype()))).Unflatten(dim, Dims(stages, 2));
  auto halves = [](const Tensor& t, int64_t axis) {
    std::vector<Tensor> parts = t.Split(1, axis);
    return parts.size() == 2 ? std::pair<Tensor, Tensor>{parts[0], parts[1]}
                             : std::pair<Tensor, Tensor>{parts[0], parts[0]};
  };
  for (int64_t stage = 1; stage <= stages; ++stage) {
    const int64_t crossover = dim + stages - stage - 1;
    Dims flip_axes;
    for (int64_t i = 1; i <= stage + ndim() - dim; ++i) flip_axes.push_back(-i);
    if (stage != stages) {
      // The second half flipped, so that every comparator of this stage points the same way.
      auto [blue, green] = halves(x, crossover);
      x = blue.Cat({green.Flip(flip_axes)}, crossover).Contiguous();
    }
    for (int64_t substage = stage - 1; substage >= 0; --substage) {
      const int64_t partner = dim + stages - substage - 1;
      auto [top, bottom] = halves(x, partner);
      Tensor larger = top.Maximum(bottom), smaller = top.Minimum(bottom);
      x = (descending ? larger.Cat({smaller}, partner) : smaller.Cat({larger}, partner)).Contiguous();
    }
    if (stage != stages) {
      auto [blue, flipped] = halves(x, crossover);
      x = blue.Cat({flipped.Flip(flip_axes)}, crossover);
    }
  }
  // tinygrad's flatten of no stage axes (a dim of size 1) goes wrong; the axis comes back here.
  x = stages > 0 ? x.Flatten(dim, dim + stages - 1) : x.Unsqueeze(dim);
  if (!x.ok()) return failed(x);
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t s : x.Shape()) keep.push_back({0, s});
  keep[dim] = {0, n};
  x = x.Shrink(keep);
  // The index of a sorted value: the position in the input holding an equal value with as many equal values
  // before it (so equal values keep their order).
  Dims along(shape.size(), 1);
  along[dim] = n;
  Tensor idx = Arange(0, n, 1, std::nullopt, Device()).Reshape(along).Expand(x.Shape());
  auto counts = [&](const Tensor& t) {
    return idx.Unsqueeze(dim)
        .Le(idx.Unsqueeze(dim + 1))
        .BitwiseAnd(t.Unsqueeze(dim).Eq(t.Unsqueeze(dim + 1)))
        .Sum(dim + 1);
  };
  Tensor count_input = counts(*this), count_sorted = counts(x);
  Tensor matches = Unsqueeze(dim + 1)
                       .Eq(x.Unsqueeze(dim))
                       .BitwiseAnd(count_input.Unsqueeze(dim + 1).Eq(count_sorted.Unsqueeze(dim)));
  return {x, (matches * idx.Unsqueeze(dim + 1)).Sum(dim)};
}

std::pair<Tensor, Tensor> Tensor::Topk(int64_t k, int64_t dim_in, bool largest, bool sorted) const {
  auto failed = [](const Tensor& error) { return std::pair<Tensor, Tensor>{error, error}; };
  if (!ok()) return failed(*this);
  if (!sorted) return failed(Error("Topk", "sorted=false is not supported"));
  absl::Status err;
  const int64_t dim = ResolveDim(dim_in, false, &err);
  if (!err.ok()) return failed(FromError(err));
  if (ndim() == 0) return failed(Error("Topk", absl::StrCat("a 0-d tensor has no dim ", dim_in)));
  if (auto symbolic = SymbolicSizeError(*this, "Topk")) return failed(*symbolic);
  const Dims shape = Shape();
  if (k < 0 || k > shape[dim]) {
    return failed(
        Error("Topk", absl::StrCat("k=", k, " is out of range for dim ", dim, " of size ", shape[dim])));
  }
  auto [values, indices] = Sort(dim, largest);
  std::vector<std::pair<int64_t, int64_t>> keep;
  for (int64_t s : shape) keep.push_back({0, s});
  keep[dim] = {0, k};
  return {values.Shrink(keep), indices.Shrink(keep)};
}

}  // namespace uopc
