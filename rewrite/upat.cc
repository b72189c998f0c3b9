#include "rewrite/upat.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "uop/check.h"

namespace uopc {

namespace {

// tinygrad's DType.scalar(): a vector's element type; a vector of pointers' single pointer; else the type
// itself.
DType TinygradScalar(DType dt) {
  if (!dt.is_ptr()) return dt.scalar();
  if (dt.vcount() > 1) return dt.base().Ptr(dt.ptr_size(), dt.is_local());
  return dt;
}

bool IsPlainScalar(DType dt) { return !dt.is_ptr() && dt.count() == 1; }

uint16_t ScalarBit(ScalarType s) { return static_cast<uint16_t>(1u << static_cast<int>(s)); }

// Python's unary minus on a number (-True is -1).
ConstValue Negate(ConstValue v) {
  switch (v.kind()) {
    case ConstValue::Kind::kFloat:
      return ConstValue::Float(-v.f());
    case ConstValue::Kind::kBool:
      return ConstValue::Int(v.b() ? -1 : 0);
    case ConstValue::Kind::kInt:
      break;
  }
  return ConstValue::Int(-v.i());
}

}  // namespace

// ---- DTypeSet ----

DTypeSet::DTypeSet(DType dt) { Add(dt); }

DTypeSet::DTypeSet(std::initializer_list<DType> dts) {
  for (DType dt : dts) Add(dt);
}

void DTypeSet::Add(DType dt) {
  if (IsPlainScalar(dt)) {
    scalar_mask_ |= ScalarBit(dt.scalar_type());
    return;
  }
  for (int i = 0; i < num_extra_; ++i) {
    if (extra_[i] == dt) return;
  }
  UOPC_CHECK(num_extra_ < kMaxExtra, "a DTypeSet holds at most 4 vector or pointer dtypes");
  extra_[num_extra_++] = dt;
}

bool DTypeSet::MatchesExtra(DType dt) const {
  DType scalar = TinygradScalar(dt);
  for (int i = 0; i < num_extra_; ++i) {
    if (extra_[i] == dt || extra_[i] == scalar) return true;
  }
  return false;
}

DTypeSet DTypeSet::Union(const DTypeSet& o) const {
  if (any() || o.any()) return DTypeSet();
  DTypeSet r = *this;
  r.scalar_mask_ |= o.scalar_mask_;
  for (int i = 0; i < o.num_extra_; ++i) r.Add(o.extra_[i]);
  return r;
}

bool operator==(const DTypeSet& a, const DTypeSet& b) {
  if (a.scalar_mask_ != b.scalar_mask_ || a.num_extra_ != b.num_extra_) return false;
  for (int i = 0; i < a.num_extra_; ++i) {
    bool found = false;
    for (int j = 0; j < b.num_extra_; ++j) found = found || a.extra_[i] == b.extra_[j];
    if (!found) return false;
  }
  return true;
}

std::string DTypeSet::ToString() const {
  std::vector<std::string> names;
  for (int s = 0; s < kNumScalarTypes; ++s) {
    if (scalar_mask_ & (1u << s)) names.emplace_back(DType(static_cast<ScalarType>(s)).short_name());
  }
  for (int i = 0; i < num_extra_; ++i) names.push_back(extra_[i].ToString());
  if (names.size() == 1) return names[0];
  return absl::StrCat("{", absl::StrJoin(names, ", "), "}");
}

OpSet AllOps() {
  OpSet all;
  for (int i = 0; i < kNumOps; ++i) all.Insert(static_cast<Ops>(i));
  return all;
}

// ---- UPat ----

UPat::UPat() : node_(std::make_shared<internal::UPatNode>()) {}

UPat::UPat(Ops op) : UPat(OpSet{op}) {}

UPat::UPat(OpSet ops) {
  auto n = std::make_shared<internal::UPatNode>();
  n->ops = ops;
  n->any_op = false;
  node_ = std::move(n);
}

std::shared_ptr<internal::UPatNode> UPat::Copy() const {
  return std::make_shared<internal::UPatNode>(*node_);
}

UPat UPat::Var(absl::string_view name, DTypeSet dtype) { return UPat().named(name).dtype(dtype); }

UPat UPat::Cvar(absl::string_view name, DTypeSet dtype, bool vec) {
  return UPat(vec ? OpSet{Ops::CONST, Ops::VCONST} : OpSet{Ops::CONST}).named(name).dtype(dtype);
}

UPat UPat::Const(DTypeSet dtype, PatConst b) {
  auto n = UPat(Ops::CONST).dtype(dtype).Copy();
  n->const_arg = b.value;
  return UPat(std::move(n));
}

UPat UPat::Any(std::initializer_list<UPat> alternatives) {
  auto n = std::make_shared<internal::UPatNode>();
  n->src_kind = SrcKind::kAlternatives;
  n->src.assign(alternatives.begin(), alternatives.end());
  UOPC_CHECK(!n->src.empty(), "UPat::Any needs at least one alternative");
  return UPat(std::move(n));
}

UPat UPat::src(std::vector<UPat> srcs) const {
  auto n = Copy();
  n->src_kind = SrcKind::kTuple;
  n->src = std::move(srcs);
  return UPat(std::move(n));
}

UPat UPat::src_any_order(std::vector<UPat> srcs) const {
  auto n = Copy();
  n->src_kind = SrcKind::kAnyOrder;
  n->src = std::move(srcs);
  return UPat(std::move(n));
}

UPat UPat::src_repeat(const UPat& each) const {
  auto n = Copy();
  n->src_kind = SrcKind::kRepeat;
  n->src = {each};
  return UPat(std::move(n));
}

UPat UPat::allow_any_len() const {
  auto n = Copy();
  n->allow_any_len = true;
  return UPat(std::move(n));
}

UPat UPat::named(absl::string_view name) const {
  auto n = Copy();
  n->name = std::string(name);
  return UPat(std::move(n));
}

UPat UPat::dtype(DTypeSet dtype) const {
  auto n = Copy();
  n->dtype = dtype;
  return UPat(std::move(n));
}

UPat UPat::arg(Arg arg) const {
  auto n = Copy();
  n->arg = std::move(arg);
  n->const_arg.reset();
  return UPat(std::move(n));
}

UPat UPat::custom_early_reject(OpSet ops) const {
  auto n = Copy();
  n->custom_early_reject = ops;
  return UPat(std::move(n));
}

UPat UPat::alu(Ops op, std::vector<UPat> more) const {
  std::vector<UPat> all;
  all.reserve(more.size() + 1);
  all.push_back(*this);
  for (UPat& m : more) all.push_back(std::move(m));
  DTypeSet dt = groups::kComparison.contains(op) ? DTypeSet(dtypes::kBool) : all.back().dtype_set();
  UPat p = UPat(op).dtype(dt);
  return groups::kCommutative.contains(op) ? p.src_any_order(std::move(all)) : p.src(std::move(all));
}

UPat UPat::cast(DTypeSet dtype) const { return UPat(Ops::CAST).dtype(dtype).src(*this); }
UPat UPat::bitcast(DTypeSet dtype) const { return UPat(Ops::BITCAST).dtype(dtype).src(*this); }

UPat UPat::gep(std::optional<int64_t> i) const {
  UPat p = UPat(Ops::GEP).src(*this);
  return i.has_value() ? p.arg(Arg::IntTuple({*i})) : p;
}

UPat UPat::index(const UPat& idx) const { return UPat(Ops::INDEX).dtype(dtype_set()).src(*this, idx); }
UPat UPat::index(const UPat& idx, const UPat& valid) const {
  return UPat(Ops::INDEX).dtype(dtype_set()).src(*this, idx, valid);
}

UPat UPat::load(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return UPat(Ops::LOAD).src(std::move(more));
}

UPat UPat::store(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return UPat(Ops::STORE).dtype(dtypes::kVoid).src(std::move(more));
}

UPat UPat::assign(const UPat& x) const { return UPat(Ops::ASSIGN).dtype(dtype_set()).src(*this, x); }

UPat UPat::reduce(std::vector<UPat> more) const {
  more.insert(more.begin(), *this);
  return UPat(Ops::REDUCE).dtype(dtype_set()).src(std::move(more));
}

UPat UPat::view(std::optional<Arg> st) const {
  UPat p = UPat(Ops::VIEW).dtype(dtype_set()).src(*this);
  return st.has_value() ? p.arg(*st) : p;
}

UPat UPat::or_casted(absl::string_view name) const {
  UPat cast = UPat(Ops::CAST).src(*this);
  if (!name.empty()) cast = cast.named(name);
  return Any(name.empty() ? *this : named(name), cast);
}

UPat UPat::or_broadcasted() const {
  return Any(*this, UPat(Ops::VECTORIZE).dtype(dtype_set()).src_repeat(*this));
}

UPat UPat::neg() const {
  if (dtype_set() == DTypeSet(dtypes::kBool)) return logical_not();
  return *this * -1;
}

std::optional<OpSet> UPat::ops() const {
  if (node_->any_op) return std::nullopt;
  return node_->ops;
}
const DTypeSet& UPat::dtype_set() const { return node_->dtype; }
const std::string& UPat::name() const { return node_->name; }
UPat::SrcKind UPat::src_kind() const { return node_->src_kind; }
const std::vector<UPat>& UPat::srcs() const { return node_->src; }

std::string UPat::ToString() const {
  const internal::UPatNode& n = *node_;
  std::string out;
  if (n.src_kind == SrcKind::kAlternatives) {
    std::vector<std::string> alts;
    for (const UPat& a : n.src) alts.push_back(a.ToString());
    out = absl::StrCat("any(", absl::StrJoin(alts, " | "), ")");
    return n.name.empty() ? out : absl::StrCat(n.name, "@", out);
  }
  bool bare = n.any_op && n.dtype.any() && !n.arg && !n.const_arg && n.src_kind == SrcKind::kNone &&
              !n.custom_early_reject;
  if (bare) return n.name.empty() ? "_" : n.name;
  if (!n.name.empty()) absl::StrAppend(&out, n.name, "@");
  if (n.any_op) {
    out += "_";
  } else {
    std::vector<absl::string_view> names;
    n.ops.ForEach([&](Ops op) { names.push_back(OpName(op)); });
    out += absl::StrJoin(names, "|");
  }
  if (!n.dtype.any()) absl::StrAppend(&out, ":", n.dtype.ToString());
  if (n.const_arg) absl::StrAppend(&out, "(", n.const_arg->ToString(), ")");
  if (n.arg) absl::StrAppend(&out, "(", n.arg->ToString(), ")");
  std::vector<std::string> srcs;
  for (const UPat& s : n.src) srcs.push_back(s.ToString());
  std::string tail = n.allow_any_len ? ", ..." : "";
  switch (n.src_kind) {
    case SrcKind::kNone:
    case SrcKind::kAlternatives:
      break;
    case SrcKind::kTuple:
      absl::StrAppend(&out, "(", absl::StrJoin(srcs, ", "), tail, ")");
      break;
    case SrcKind::kAnyOrder:
      absl::StrAppend(&out, "{", absl::StrJoin(srcs, ", "), tail, "}");
      break;
    case SrcKind::kRepeat:
      absl::StrAppend(&out, "(", srcs[0], "...)");
      break;
  }
  if (n.custom_early_reject) {
    std::vector<absl::string_view> names;
    n.custom_early_reject->ForEach([&](Ops op) { names.push_back(OpName(op)); });
    absl::StrAppend(&out, "[reject unless ", absl::StrJoin(names, "|"), "]");
  }
  return out;
}

// ---- operators ----

namespace {
UPat Binary(const UPat& a, Ops op, const UPat& b) { return a.alu(op, {b}); }
}  // namespace

UPat operator+(const UPat& a, const UPat& b) { return Binary(a, Ops::ADD, b); }
UPat operator-(const UPat& a, const UPat& b) { return Binary(a, Ops::ADD, -b); }
UPat operator*(const UPat& a, const UPat& b) { return Binary(a, Ops::MUL, b); }
UPat operator/(const UPat& a, const UPat& b) { return a * b.reciprocal(); }
UPat operator%(const UPat& a, const UPat& b) { return Binary(a, Ops::MOD, b); }
UPat operator&(const UPat& a, const UPat& b) { return Binary(a, Ops::AND, b); }
UPat operator|(const UPat& a, const UPat& b) { return Binary(a, Ops::OR, b); }
UPat operator^(const UPat& a, const UPat& b) { return Binary(a, Ops::XOR, b); }
UPat operator<<(const UPat& a, const UPat& b) { return Binary(a, Ops::SHL, b); }
UPat operator>>(const UPat& a, const UPat& b) { return Binary(a, Ops::SHR, b); }
UPat operator<(const UPat& a, const UPat& b) { return a.lt(b); }
UPat operator>(const UPat& a, const UPat& b) { return a.gt(b); }
UPat operator-(const UPat& a) { return a.neg(); }

UPat operator+(const UPat& a, PatConst b) { return a + a.const_like(b); }
UPat operator+(PatConst a, const UPat& b) { return b.const_like(a) + b; }
UPat operator-(const UPat& a, PatConst b) { return a + a.const_like(Negate(b.value)); }
UPat operator-(PatConst a, const UPat& b) { return b.const_like(a) + (-b); }
UPat operator*(const UPat& a, PatConst b) { return a * a.const_like(b); }
UPat operator*(PatConst a, const UPat& b) { return b.const_like(a) * b; }
UPat operator/(const UPat& a, PatConst b) { return a * a.const_like(b).reciprocal(); }
UPat operator/(PatConst a, const UPat& b) { return b.const_like(a) * b.reciprocal(); }
UPat operator%(const UPat& a, PatConst b) { return a % a.const_like(b); }
UPat operator%(PatConst a, const UPat& b) { return b.const_like(a) % b; }
UPat operator&(const UPat& a, PatConst b) { return a & a.const_like(b); }
UPat operator&(PatConst a, const UPat& b) { return b.const_like(a) & b; }
UPat operator|(const UPat& a, PatConst b) { return a | a.const_like(b); }
UPat operator|(PatConst a, const UPat& b) { return b.const_like(a) | b; }
UPat operator^(const UPat& a, PatConst b) { return a ^ a.const_like(b); }
UPat operator^(PatConst a, const UPat& b) { return b.const_like(a) ^ b; }
UPat operator<<(const UPat& a, PatConst b) { return a << a.const_like(b); }
UPat operator>>(const UPat& a, PatConst b) { return a >> a.const_like(b); }
UPat operator<(const UPat& a, PatConst b) { return a.lt(b); }
UPat operator>(const UPat& a, PatConst b) { return a.gt(b); }

}  // namespace uopc
