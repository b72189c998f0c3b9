// The in-place operators (tinygrad's __iadd__, ...: an Assign of the operation's result), Python's bool(t),
// and tinygrad's small helpers alu, ufix, sequential and llvm_bf16_cast.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"
#include "uop/util.h"

namespace uopc {

using tensor_internal::Error;

namespace {

// Makes `value` the new value of `self` (Assign); when the operation or the assign failed, `self` becomes the
// errored Tensor so that the caller sees the error on the variable it wrote to.
Tensor& AssignInPlace(Tensor& self, const Tensor& value) {
  Tensor assigned = self.Assign(value);
  if (!assigned.ok()) self = assigned;
  return self;
}

// The number of sources of an ALU op tinygrad's Tensor builds at the tensor level (uop/ops.h's groups, less
// NEG, SUB, FDIV, POW and MULACC, which only the codegen passes create); 0 for any other op.
int AluArity(Ops op) {
  if (OpSet{Ops::NEG, Ops::SUB, Ops::FDIV, Ops::POW, Ops::MULACC}.contains(op)) return 0;
  if (groups::kUnary.contains(op)) return 1;
  if (groups::kBinary.contains(op)) return 2;
  return groups::kTernary.contains(op) ? 3 : 0;
}

// Empty when `op` takes operands of dtype `dt` (WHERE's condition is checked apart); else what it takes.
std::string AluDTypeError(Ops op, DType dt) {
  switch (op) {
    case Ops::EXP2:
    case Ops::LOG2:
    case Ops::SIN:
    case Ops::SQRT:
    case Ops::RECIP:
      return dt.is_float() ? "" : "a float dtype";
    case Ops::IDIV:
    case Ops::MOD:
      return dt.is_int() ? "" : "an int dtype";
    case Ops::XOR:
    case Ops::OR:
    case Ops::AND:
      return dt.is_int() || dt.is_bool() ? "" : "an int or bool dtype";
    case Ops::SHL:
    case Ops::SHR:
      return dt.is_int() ? "" : "an int dtype";
    case Ops::THREEFRY:
      return dt == dtypes::kUInt64 ? "" : "dtypes.ulong";
    default:
      return "";
  }
}

}  // namespace

Tensor& Tensor::operator+=(const Operand& x) { return AssignInPlace(*this, Add(x)); }
Tensor& Tensor::operator-=(const Operand& x) { return AssignInPlace(*this, Sub(x)); }
Tensor& Tensor::operator*=(const Operand& x) { return AssignInPlace(*this, Mul(x)); }
Tensor& Tensor::operator/=(const Operand& x) { return AssignInPlace(*this, Div(x)); }
Tensor& Tensor::operator&=(const Operand& x) { return AssignInPlace(*this, BitwiseAnd(x)); }
Tensor& Tensor::operator|=(const Operand& x) { return AssignInPlace(*this, BitwiseOr(x)); }
Tensor& Tensor::operator^=(const Operand& x) { return AssignInPlace(*this, BitwiseXor(x)); }
Tensor& Tensor::operator<<=(int64_t bits) { return AssignInPlace(*this, LShift(bits)); }
Tensor& Tensor::operator>>=(int64_t bits) { return AssignInPlace(*this, RShift(bits)); }
Tensor& Tensor::IDivAssign(const Operand& x) { return AssignInPlace(*this, IDiv(x)); }
Tensor& Tensor::PowAssign(const Operand& x) { return AssignInPlace(*this, Pow(x)); }
Tensor& Tensor::MatmulAssign(const Tensor& w) { return AssignInPlace(*this, Matmul(w)); }

absl::StatusOr<bool> Tensor::ToBool() const {
  UOPC_RETURN_IF_ERROR(status());
  if (numel() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("ToBool: the truth value of a tensor of shape ",
                                                   TupleString(Shape()),
                                                   " is ambiguous; it needs exactly one element"));
  }
  return Cast(dtypes::kBool).Item<bool>();
}

Tensor Tensor::ApplyAlu(Ops op, const std::vector<Tensor>& operands) const {
  UOPC_TENSOR_PROPAGATE(this);
  for (const Tensor& t : operands) UOPC_TENSOR_PROPAGATE(&t);
  const std::string name = absl::StrCat("ApplyAlu(", OpName(op), ")");
  int arity = AluArity(op);
  if (arity == 0) {
    return Error(name,
                 "not one of the ALU ops a Tensor builds (EXP2, LOG2, SIN, SQRT, RECIP, ADD, MUL, IDIV, "
                 "MAX, MOD, CMPLT, CMPNE, XOR, SHL, SHR, OR, AND, THREEFRY, WHERE)");
  }
  if (static_cast<int>(operands.size()) + 1 != arity) {
    return Error(name,
                 absl::StrCat("takes ", arity - 1, " operands besides this tensor, got ", operands.size()));
  }
  std::vector<Tensor> all = {*this};
  all.insert(all.end(), operands.begin(), operands.end());
  for (const Tensor& t : all) {
    if (t.Shape() != Shape() || t.Device() != Device()) {
      return Error(name,
                   absl::StrCat("every operand needs this tensor's shape and device, ", TupleString(Shape()),
                                " on ", Device(), "; got ", TupleString(t.Shape()), " on ", t.Device()));
    }
  }
  // WHERE's condition is bool; the values (every operand of the other ops) share one dtype.
  size_t first_value = op == Ops::WHERE ? 1 : 0;
  if (op == Ops::WHERE && !dtype().is_bool()) {
    return Error(name, "the condition (this tensor) must be bool, got " + dtype().ToString());
  }
  DType value_dtype = all[first_value].dtype();
  for (size_t i = first_value; i < all.size(); ++i) {
    if (all[i].dtype() != value_dtype) {
      return Error(name, absl::StrCat("the operands' dtypes differ: ", value_dtype.ToString(), " and ",
                                      all[i].dtype().ToString(), " (cast one)"));
    }
  }
  if (std::string takes = AluDTypeError(op, value_dtype); !takes.empty()) {
    return Error(name, absl::StrCat("takes ", takes, ", got ", value_dtype.ToString()));
  }
  std::vector<UOpPtr> srcs;
  for (const Tensor& t : all) srcs.push_back(t.uop());
  return Tensor(Alu(op, srcs));
}

Tensor Tensor::Ufix(const Operand& x) const {
  if (x.is_tensor()) return x.tensor();
  return FullLike(x.scalar());
}

Tensor Tensor::Sequential(const std::vector<std::function<Tensor(const Tensor&)>>& functions) const {
  Tensor x = *this;
  for (size_t i = 0; i < functions.size(); ++i) {
    UOPC_TENSOR_PROPAGATE(&x);
    if (!functions[i]) return Error("Sequential", absl::StrCat("function ", i, " is empty"));
    x = functions[i](x);
  }
  return x;
}

Tensor Tensor::LlvmBf16Cast(DType dtype) const {
  UOPC_TENSOR_PROPAGATE(this);
  if (this->dtype() != dtypes::kBFloat16) {
    return Error("LlvmBf16Cast", "the tensor must be dtypes.bfloat16, got " + this->dtype().ToString());
  }
  return To("LLVM").Cast(dtype);
}

}  // namespace uopc
