#include "shapetracker/sint.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "rewrite/symbolic.h"
#include "uop/check.h"
#include "uop/print.h"

namespace uopc {
namespace {

// Python's floor division and modulo of integers.
int64_t IntFloorDiv(int64_t a, int64_t b) {
  if (a == std::numeric_limits<int64_t>::min() && b == -1) return a;  // wraps, like the other operations
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
int64_t IntMod(int64_t a, int64_t b) {
  if (b == -1) return 0;
  int64_t r = a % b;
  if (r != 0 && ((r < 0) != (b < 0))) r += b;
  return r;
}

// Two's-complement wrapping arithmetic: absurd shapes must not be undefined behaviour.
int64_t WrapAdd(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
}
int64_t WrapSub(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) - static_cast<uint64_t>(b));
}
int64_t WrapMul(int64_t a, int64_t b) {
  return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
}

// The decided value of a bool UOp after simplification (tinygrad's resolve without a default).
std::optional<bool> Decide(const UOpPtr& cond) {
  UOpPtr s = Simplify(cond);
  if (s->vmin() == s->vmax()) return s->vmin().AsBool();
  return std::nullopt;
}

}  // namespace

Sint Sint::FromUOp(const UOpPtr& u) {
  UOPC_CHECK(u != nullptr, "Sint from a null UOp");
  Sint out;
  UOpPtr s = Simplify(u);
  if (s->op() == Ops::CONST) {
    out.int_ = s->const_value().AsInt64();
  } else {
    out.uop_ = std::move(s);
  }
  return out;
}

int64_t Sint::value() const {
  UOPC_CHECK(is_int(), "Sint::value of a symbolic value");
  return int_;
}

const UOpPtr& Sint::uop() const {
  UOPC_CHECK(!is_int(), "Sint::uop of an integer");
  return uop_;
}

UOpPtr Sint::ToUOp() const { return is_int() ? UOp::Const(dtypes::kInt32, int_) : uop_; }

int64_t Sint::vmin() const { return is_int() ? int_ : uop_->vmin().AsInt64(); }
int64_t Sint::vmax() const { return is_int() ? int_ : uop_->vmax().AsInt64(); }

std::string Sint::ToString() const { return is_int() ? absl::StrCat(int_) : PrintUOpTree(uop_.get()); }

Sint operator+(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) return Sint(WrapAdd(a.int_, b.int_));
  return Sint::FromUOp(a.ToUOp() + b.ToUOp());
}
Sint operator-(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) return Sint(WrapSub(a.int_, b.int_));
  return Sint::FromUOp(a.ToUOp() - b.ToUOp());
}
Sint operator*(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) return Sint(WrapMul(a.int_, b.int_));
  return Sint::FromUOp(a.ToUOp() * b.ToUOp());
}
Sint Sint::operator-() const {
  if (is_int()) return Sint(WrapSub(0, int_));
  return FromUOp(uop_.neg());
}

Sint FloorDiv(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) {
    UOPC_CHECK(b.value() != 0, "Sint division by zero");
    return IntFloorDiv(a.value(), b.value());
  }
  return Sint::FromUOp(a.ToUOp().idiv(b.ToUOp()));
}
Sint Mod(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) {
    UOPC_CHECK(b.value() != 0, "Sint modulo by zero");
    return IntMod(a.value(), b.value());
  }
  return Sint::FromUOp(a.ToUOp().mod(b.ToUOp()));
}
Sint CeilDiv(const Sint& a, const Sint& b) { return -FloorDiv(a, -b); }

Sint Max(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) return std::max(a.value(), b.value());
  // Symbolic operands first, then the number (tinygrad's smax).
  if (a.is_int()) return Sint::FromUOp(b.uop().maximum(a.ToUOp()));
  return Sint::FromUOp(a.uop().maximum(b.ToUOp()));
}
Sint Min(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) return std::min(a.value(), b.value());
  if (a.is_int()) return Sint::FromUOp(b.uop().minimum(a.ToUOp()));
  return Sint::FromUOp(a.uop().minimum(b.ToUOp()));
}

std::optional<bool> Lt(const Sint& a, const Sint& b) {
  if (a.is_int() && b.is_int()) return a.value() < b.value();
  if (a.vmax() < b.vmin()) return true;
  if (a.vmin() >= b.vmax()) return false;
  return Decide(a.ToUOp().lt(b.ToUOp()));
}
std::optional<bool> Le(const Sint& a, const Sint& b) {
  std::optional<bool> gt = Lt(b, a);
  if (!gt) return std::nullopt;
  return !*gt;
}
std::optional<bool> Eq(const Sint& a, const Sint& b) {
  if (a == b) return true;
  if (a.is_int() && b.is_int()) return false;
  if (a.vmax() < b.vmin() || b.vmax() < a.vmin()) return false;
  if (a.vmin() == a.vmax() && b.vmin() == b.vmax()) return a.vmin() == b.vmin();
  std::optional<bool> ne = Decide(a.ToUOp().ne(b.ToUOp()));
  if (!ne) return std::nullopt;
  return !*ne;
}
std::optional<bool> Ne(const Sint& a, const Sint& b) {
  std::optional<bool> eq = Eq(a, b);
  if (!eq) return std::nullopt;
  return !*eq;
}

bool AllInt(absl::Span<const Sint> v) {
  return std::all_of(v.begin(), v.end(), [](const Sint& s) { return s.is_int(); });
}

Sint Prod(absl::Span<const Sint> v) {
  Sint acc = 1;
  for (const Sint& s : v) acc = acc * s;
  return acc;
}

std::string TupleString(absl::Span<const Sint> v) {
  return TupleString(v, [](std::string* out, const Sint& s) { out->append(s.ToString()); });
}

}  // namespace uopc
