#include "rewrite/symbolic_folding.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <tuple>

#include "rewrite/symbolic.h"
#include "uop/check.h"
#include "uop/exec_alu.h"

namespace uopc {
namespace {

using int128 = absl::int128;

int128 Abs(int128 v) { return v < 0 ? -v : v; }
int128 Gcd(int128 a, int128 b) {
  a = Abs(a);
  b = Abs(b);
  // Nearly always 64-bit values: Euclid's steps as machine divisions, not 128-bit arithmetic.
  if (absl::Int128High64(a) == 0 && absl::Int128High64(b) == 0) {
    return std::gcd(absl::Int128Low64(a), absl::Int128Low64(b));
  }
  while (b != 0) {
    int128 t = CMod(a, b);
    a = b;
    b = t;
  }
  return a;
}
// Whether v is an int64 whose quotient by any int64 is one too (INT64_MIN / -1 overflows).
bool Fits64(int128 v) {
  return v > std::numeric_limits<int64_t>::min() && v <= std::numeric_limits<int64_t>::max();
}
int128 FloorMod(int128 x, int128 y) {
  if (Fits64(x) && Fits64(y) && y != 0) {
    const int64_t a = static_cast<int64_t>(x), b = static_cast<int64_t>(y);
    const int64_t r = a % b;
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  }
  return x - FloorDiv(x, y) * y;
}

bool IsIntConst(const UOp* u) { return u->op() == Ops::CONST && u->arg().is_int(); }
int128 IntArg(const UOp* u) { return u->const_value().AsInt(); }
int128 Vmin(const UOp* u) { return u->vmin().AsInt(); }
int128 Vmax(const UOp* u) { return u->vmax().AsInt(); }
bool IntBounds(const UOp* u) { return !u->vmin().is_float() && !u->vmax().is_float(); }

UOpPtr ConstLike(const UOp* like, int128 v) { return UOp::Const(like->dtype(), ConstValue::Int(v)); }

// Python-int operands in builder expressions: `Int(3) * x` is MUL(CONST 3, x), as tinygrad's `3 * x`, built
// with FoldedAlu.
struct Int {
  explicit Int(int128 v) : value(v) {}
  int128 value;
};
UOpPtr operator*(Int a, const UOpPtr& b) { return FoldedMul(b.const_like(ConstValue::Int(a.value)), b); }
UOpPtr operator*(const UOpPtr& a, Int b) { return FoldedMul(a, a.const_like(ConstValue::Int(b.value))); }
UOpPtr operator+(const UOpPtr& a, Int b) { return FoldedAdd(a, a.const_like(ConstValue::Int(b.value))); }
UOpPtr operator-(const UOpPtr& a, Int b) { return FoldedAdd(a, a.const_like(ConstValue::Int(-b.value))); }
UOpPtr operator%(const UOpPtr& a, Int b) { return a.mod(a.const_like(ConstValue::Int(b.value))); }
UOpPtr Sum(const std::vector<UOpPtr>& terms) {
  UOpPtr acc = terms[0];
  for (size_t i = 1; i < terms.size(); ++i) acc = acc + terms[i];
  return acc;
}
// sum(coefs[i] * vars[i]) + constant, summed left to right from 0 like Python's sum().
UOpPtr LinearSum(const UOp* like, absl::Span<const int128> coefs, absl::Span<const UOpPtr> vars,
                 int128 constant) {
  UOpPtr acc = ConstLike(like, 0);
  for (size_t i = 0; i < vars.size(); ++i) acc = FoldedAdd(acc, Int(coefs[i]) * vars[i]);
  return acc + Int(constant);
}

bool IsIntValue(const UOp* u, int128 v) { return IsIntConst(u) && IntArg(u) == v; }
bool IsScalarConst(const UOp* u) { return u->op() == Ops::CONST && u->dtype().count() == 1; }

}  // namespace

namespace {
thread_local IntegerSemantics integer_semantics = IntegerSemantics::kWrapping;
}  // namespace

IntegerSemantics CurrentIntegerSemantics() { return integer_semantics; }

bool ExactIntegers(DType dtype) {
  return integer_semantics == IntegerSemantics::kExact && dtype.scalar() == dtypes::kInt32;
}

ScopedIntegerSemantics::ScopedIntegerSemantics(IntegerSemantics semantics) : previous_(integer_semantics) {
  integer_semantics = semantics;
}

ScopedIntegerSemantics::~ScopedIntegerSemantics() { integer_semantics = previous_; }

namespace {
thread_local bool floor_division_assumed = false;
}  // namespace

ScopedFloorDivision::ScopedFloorDivision() : previous_(floor_division_assumed) {
  floor_division_assumed = true;
}
ScopedFloorDivision::~ScopedFloorDivision() { floor_division_assumed = previous_; }
bool FloorDivisionAssumed() { return floor_division_assumed; }

absl::StatusOr<ConstValue> FoldConstantOp(Ops op, DType dtype, absl::Span<const ConstValue> operands,
                                          DType operand_dtype) {
  if (ExactIntegers(operand_dtype) && op != Ops::CAST && op != Ops::BITCAST) {
    // Exact index arithmetic: int64 holds every value an index takes.
    return ExecAlu(op, ExactIntegers(dtype) ? dtypes::kInt64 : dtype, operands, dtypes::kInt64);
  }
  if (operand_dtype.is_float() && op != Ops::CAST && op != Ops::BITCAST) {
    const DType f64 = dtypes::kFloat64;
    return ExecAlu(op, dtype.is_float() ? f64 : dtype, operands, f64);
  }
  return ExecAlu(op, dtype, operands, operand_dtype);
}

UOpPtr FoldedAlu(Ops op, const UOpPtr& a, const UOpPtr& b) {
  if (op == Ops::ADD) {
    if (IsIntValue(b.get(), 0)) return a;
    if (IsIntValue(a.get(), 0)) return b;
  } else if (op == Ops::MUL) {
    if (IsIntValue(b.get(), 1)) return a;
    if (IsIntValue(a.get(), 1)) return b;
    if (IsIntValue(a.get(), 0) && b->dtype().is_int()) return a;
    if (IsIntValue(b.get(), 0) && a->dtype().is_int()) return b;
  }
  if (IsScalarConst(a.get()) && IsScalarConst(b.get()) && a->dtype() == b->dtype()) {
    absl::StatusOr<ConstValue> v =
        FoldConstantOp(op, a->dtype(), {a->const_value(), b->const_value()}, a->dtype());
    if (v.ok()) return UOp::Const(a->dtype(), *v);
  }
  return a.alu(op, {b});
}

UOpPtr FoldedNeg(const UOpPtr& a) {
  if (a->dtype().scalar().is_bool()) return a.neg();
  return FoldedAlu(Ops::MUL, a, a.const_like(int64_t{-1}));
}

TermList SplitUOp(const UOp* x, Ops sep) {
  TermList out;
  absl::InlinedVector<const UOp*, 16> stack = {x};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (u->op() == sep) {
      for (size_t i = u->num_src(); i-- > 0;) stack.push_back(u->src(i));
    } else {
      out.push_back(u);
    }
  }
  return out;
}

int128 FloorDiv(int128 x, int128 y) {
  if (Fits64(x) && Fits64(y) && y != 0) {
    const int64_t a = static_cast<int64_t>(x), b = static_cast<int64_t>(y);
    const int64_t q = a / b;
    return q * b != a && ((a < 0) != (b < 0)) ? q - 1 : q;
  }
  int128 q = CDiv(x, y);
  if (q * y != x && ((x < 0) != (y < 0))) --q;
  return q;
}

// tinygrad's const_factor and divides recurse into sums and products; these keep their own stack, as a sum
// nests as deep as it has terms (a million terms must not overflow the C stack).

namespace {

// const_factor of a node that is not a sum.
int128 TermFactor(const UOp* x) {
  switch (x->op()) {
    case Ops::CONST:
      return x->arg().is_int() ? IntArg(x) : 1;
    case Ops::VCONST: {
      int128 g = 0;
      for (const Arg& a : x->arg().as_tuple()) g = Gcd(g, a.is_int() ? a.as_int() : 1);
      return g;
    }
    case Ops::MUL:
      if (IsIntConst(x->src(0))) return IntArg(x->src(0));
      if (IsIntConst(x->src(1))) return IntArg(x->src(1));
      return 1;
    default:
      return 1;
  }
}

// x / v for a node that is neither a sum nor a product.
UOpPtr LeafQuotient(const UOp* x, int128 v) {
  switch (x->op()) {
    case Ops::CONST:
      if (IsIntConst(x) && FloorMod(IntArg(x), v) == 0) return ConstLike(x, FloorDiv(IntArg(x), v));
      return nullptr;
    case Ops::VCONST: {
      std::vector<ConstValue> vals;
      for (const Arg& a : x->arg().as_tuple()) {
        if (!a.is_int() || FloorMod(a.as_int(), v) != 0) return nullptr;
        vals.push_back(ConstValue::Int(FloorDiv(a.as_int(), v)));
      }
      return UOp::VConst(x->dtype(), vals);
    }
    default:
      return nullptr;
  }
}

}  // namespace

int128 ConstFactor(const UOp* x) {
  if (x->op() != Ops::ADD) return TermFactor(x);
  // gcd(factor(a), factor(b)) of a sum a + b is the gcd of all its terms' factors (gcd ignores signs).
  int128 g = 0;
  absl::InlinedVector<const UOp*, 16> sums = {x};
  while (!sums.empty() && g != 1) {
    const UOp* sum = sums.back();
    sums.pop_back();
    for (const UOp* side : {sum->src(0), sum->src(1)}) {
      if (side->op() == Ops::ADD) {
        sums.push_back(side);
      } else {
        g = Gcd(g, TermFactor(side));
      }
    }
  }
  return g;
}

UOpPtr Divides(const UOp* x, int128 v) {
  if (v == 1) return x->ref();
  if (v == 0) return nullptr;
  // a + b divides when both sides do: a/v + b/v. y * z divides when y does (y/v * z), when z is v (y; what
  // y * (v/v) would fold to, and the commonest term by far), or when z does (y * z/v). Each sum or product
  // on the way down waits in a frame for its first side's quotient, then, where needed, for its second's.
  struct Frame {
    const UOp* x;
    UOpPtr first;  // set once the frame waits for its second side: a/v of a sum, y of a product
  };
  absl::InlinedVector<Frame, 16> frames;
  const UOp* next = x;
  while (true) {
    for (; next->op() == Ops::ADD || next->op() == Ops::MUL; next = next->src(0)) {
      frames.push_back({next, nullptr});
    }
    UOpPtr quotient = LeafQuotient(next, v);  // of the side finished last; null where it does not divide
    next = nullptr;
    while (next == nullptr && !frames.empty()) {
      Frame& f = frames.back();
      const bool on_second = f.first != nullptr;
      if (f.x->op() == Ops::ADD) {
        if (quotient != nullptr && !on_second) {
          f.first = std::move(quotient);
          next = f.x->src(1);
          continue;
        }
        if (quotient != nullptr) quotient = FoldedAdd(f.first, quotient);
      } else if (on_second) {
        if (quotient != nullptr) quotient = FoldedMul(f.first, quotient);
      } else if (quotient != nullptr) {
        quotient = FoldedMul(quotient, f.x->src()[1]);
      } else if (IsIntValue(f.x->src(1), v)) {
        quotient = f.x->src()[0];
      } else {
        f.first = f.x->src()[0];
        next = f.x->src(1);
        continue;
      }
      frames.pop_back();
    }
    if (next == nullptr) return quotient;
  }
}

namespace {

// Bounds of an integer expression, computed as range analysis would compute them on the built nodes.
struct Interval {
  int128 lo = 0, hi = 0;
};

Interval Combine(Ops op, const Interval& a, const Interval& b) {
  // Below 2^62 in magnitude, sums and products are exact and far from range analysis's +-2^125 clamp: plain
  // arithmetic gives what IntBinaryBounds gives, without its conversions.
  constexpr int128 kSmall = int128(1) << 62;
  auto small = [&](int128 v) { return v > -kSmall && v < kSmall; };
  if (small(a.lo) && small(a.hi) && small(b.lo) && small(b.hi)) {
    if (op == Ops::ADD) return Interval{a.lo + b.lo, a.hi + b.hi};
    if (op == Ops::MUL) {
      int128 p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi};
      return Interval{*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
    }
  }
  auto r = IntBinaryBounds(op, ConstValue::Int(a.lo), ConstValue::Int(a.hi), ConstValue::Int(b.lo),
                           ConstValue::Int(b.hi));
  UOPC_CHECK(r.has_value(), "interval arithmetic covers ADD and MUL");
  return Interval{r->first.AsInt(), r->second.AsInt()};
}

// The bounds of `sum(coefs[i] * vars[i]) + constant`, each product as MUL(CONST, var), summed left to right
// starting from the constant when const_first, else from 0 with the constant added last.
Interval LinearBounds(absl::Span<const int128> coefs, absl::Span<const UOpPtr> vars, int128 constant,
                      bool const_first = false) {
  Interval sum{const_first ? constant : 0, const_first ? constant : 0};
  for (size_t i = 0; i < vars.size(); ++i) {
    Interval term = Combine(Ops::MUL, Interval{coefs[i], coefs[i]}, Interval{Vmin(vars[i]), Vmax(vars[i])});
    sum = Combine(Ops::ADD, sum, term);
  }
  return const_first ? sum : Combine(Ops::ADD, sum, Interval{constant, constant});
}

}  // namespace

using Coefficients = absl::InlinedVector<int128, 8>;

UOpPtr DivAndModFolding(const UOp* x, const UOp* y, Ops which, bool split_rem) {
  if (!IntBounds(x) || !IntBounds(y) || !x->dtype().is_int()) return nullptr;
  int128 x_min = Vmin(x), x_max = Vmax(x), y_min = Vmin(y), y_max = Vmax(y);
  // C: everything below is exact arithmetic on x's range. A dividend whose range leaves its dtype's wraps
  // around in C (a sum whose terms were distributed, say) and has another value there: leave it alone.
  // Exact index arithmetic (IntegerSemantics::kExact) has no wraparound to fear.
  const DType scalar = x->dtype().scalar();
  if (!ExactIntegers(scalar) && (x_min < DTypeMin(scalar).AsInt() || x_max > DTypeMax(scalar).AsInt())) {
    return nullptr;
  }
  // Under ScopedFloorDivision the caller vouches that x is non-negative wherever the result is used.
  const bool floor_identities_hold = FloorDivisionAssumed();

  // The quotient is the same everywhere: C and Python agree on this test because it uses C division.
  if ((y_min > 0 || y_max < 0) && y_min * y_max > 0) {
    int128 q = CDiv(x_min, y_min);
    if (q == CDiv(x_min, y_max) && q == CDiv(x_max, y_min) && q == CDiv(x_max, y_max)) {
      if (which == Ops::MOD) return q == 0 ? x->ref() : x->ref() - Int(q) * y->ref();
      return ConstLike(x, q);
    }
  }

  if (!IsIntConst(y) || x->dtype().count() > 1) return nullptr;
  int128 c = IntArg(y);
  if (c <= 0) return nullptr;

  absl::InlinedVector<UOpPtr, 8> svars;
  Coefficients factors, quotients, remainders;
  int128 gcd = c, div = 1, constant = 0;
  bool something_changed = false;
  for (const UOp* u : SplitUOp(x, Ops::ADD)) {
    // (a % kc) may stand in for a inside a mod by c. Only when a and x are non-negative: then the rewritten
    // dividend is non-negative too and C's remainder equals the mathematical one on both.
    if (u->op() == Ops::MOD && which == Ops::MOD && IsIntConst(u->src(1)) && IntArg(u->src(1)) != 0 &&
        FloorMod(IntArg(u->src(1)), c) == 0 &&
        (floor_identities_hold || (x_min >= 0 && IntBounds(u->src(0)) && Vmin(u->src(0)) >= 0))) {
      u = u->src(0);
      something_changed = true;
    }
    int128 f = ConstFactor(u);
    UOpPtr v = Divides(u, f);
    if (!v) return nullptr;  // f == 0: a zero term; leave it to constant folding
    int128 q = FloorDiv(f, c), r = FloorMod(f, c);
    if (r == 0 || ((which == Ops::MOD || split_rem || u->op() == Ops::CONST) && r != f))
      something_changed = true;
    if (u->op() == Ops::CONST) {
      constant += f;
    } else {
      if (f > 1 && c % f == 0 && (div == 1 || div > f)) div = f;
      gcd = Gcd(r, gcd);
      factors.push_back(f);
      svars.push_back(std::move(v));
      quotients.push_back(q);
      remainders.push_back(r);
    }
  }

  // One non-constant term taking two values: evaluate both ends with C semantics.
  if (svars.size() == 1 && Vmax(svars[0]) - Vmin(svars[0]) == 1) {
    const UOpPtr& v = svars[0];
    int128 lo = factors[0] * Vmin(v) + constant, hi = factors[0] * Vmax(v) + constant;
    int128 y1 = which == Ops::MOD ? CMod(lo, c) : CDiv(lo, c);
    int128 y2 = which == Ops::MOD ? CMod(hi, c) : CDiv(hi, c);
    return Int(y2 - y1) * (v - Int(Vmin(v))) + Int(y1);
  }

  // Within a mod by c, each coefficient may be replaced by its remainder nearest zero; if the resulting
  // expression stays inside one block [k*c, (k+1)*c), the mod (and the div) fold. The derivation uses floor
  // semantics, which match C only for a non-negative dividend.
  if ((x_min >= 0 || floor_identities_hold) &&
      std::all_of(factors.begin(), factors.end(), [](int128 f) { return f > 0; })) {
    Coefficients rems;
    for (int128 r : remainders) rems.push_back(Abs(r - c) < Abs(r) ? r - c : r);
    // Summed in tinygrad's order: sum(r*v for ...) + const%c, where Python's sum starts from the integer 0.
    // The bounds come first: most candidates fail the test, and building them would cost more than the test.
    Interval rem_bounds = LinearBounds(rems, svars, FloorMod(constant, c));
    int128 k = FloorDiv(rem_bounds.lo, c);
    if (k == FloorDiv(rem_bounds.hi, c)) {
      if (which == Ops::MOD) return LinearSum(x, rems, svars, FloorMod(constant, c)) - Int(k * c);
      Coefficients quotient_coefs;
      for (size_t i = 0; i < svars.size(); ++i) quotient_coefs.push_back(FloorDiv(factors[i] - rems[i], c));
      return LinearSum(x, quotient_coefs, svars, FloorDiv(constant - FloorMod(constant, c) + k * c, c));
    }
  }

  // A common factor g of every coefficient, the constant and c cancels (exact, so right for every sign).
  if (int128 g = Gcd(gcd, constant); g != 1) {
    Coefficients num_coefs;
    for (int128 f : factors) num_coefs.push_back(FloorDiv(f, g));
    UOpPtr num = LinearSum(x, num_coefs, svars, FloorDiv(constant, g));
    UOpPtr ret = UOp::New(which, x->dtype(), {num, ConstLike(x, c / g)});
    return which == Ops::MOD ? ret * Int(g) : ret;
  }

  if (gcd != 1) something_changed = true;
  if (!something_changed) {
    // x // c == (x // div) // (c / div) holds for truncating division too.
    if (which == Ops::IDIV && div > 1 && div < c) {
      if (UOpPtr inner = DivAndModFolding(x, ConstLike(x, div).get(), Ops::IDIV))
        return inner.idiv(inner.const_like(ConstValue::Int(c / div)));
    }
    return nullptr;
  }
  // The split is a floor-semantics identity: only right in C when the dividend and the remainder are
  // non-negative. (Tested on the remainder's bounds before building it.)
  Coefficients rem_factors;
  for (size_t i = 0; i < svars.size(); ++i) {
    rem_factors.push_back(which == Ops::IDIV && !split_rem && remainders[i] != 0
                              ? FloorDiv(factors[i], gcd)
                              : FloorDiv(remainders[i], gcd));
  }
  if ((x_min < 0 ||
       LinearBounds(rem_factors, svars, FloorDiv(FloorMod(constant, c), gcd), /*const_first=*/true).lo < 0) &&
      !remainders.empty()) {
    return nullptr;
  }
  UOpPtr quo = ConstLike(x, FloorDiv(constant, c));
  UOpPtr rem = ConstLike(x, FloorDiv(FloorMod(constant, c), gcd));
  for (size_t i = 0; i < svars.size(); ++i) {
    if (which == Ops::IDIV && !split_rem && remainders[i] != 0) {
      rem = FoldedAdd(rem, Int(FloorDiv(factors[i], gcd)) * svars[i]);
    } else {
      rem = FoldedAdd(rem, Int(FloorDiv(remainders[i], gcd)) * svars[i]);
      quo = FoldedAdd(quo, Int(quotients[i]) * svars[i]);
    }
  }
  if (which == Ops::MOD) return Int(gcd) * (rem % Int(c / gcd)) + Int(FloorMod(constant, gcd));
  return FoldedAdd(rem.idiv(rem.const_like(ConstValue::Int(c / gcd))), quo);
}

UOpPtr FoldUnrolledDivs(const UOp* divs, int128 denominator, int128 fac) {
  std::vector<int128> seen_const;
  const UOp* ans = nullptr;
  for (const UOp* u : SplitUOp(divs, Ops::ADD)) {
    if (fac != 1) {
      if (u->op() != Ops::MUL || !IsIntConst(u->src(1)) || IntArg(u->src(1)) != fac) return nullptr;
      u = u->src(0);
    }
    if (!(u->op() == Ops::IDIV && IsIntConst(u->src(1)))) return nullptr;
    if (IntArg(u->src(1)) != denominator) return nullptr;
    const UOp* s0 = u->src(0);
    if (!IntBounds(s0) || Vmin(s0) < 0) return nullptr;
    if (s0->op() == Ops::ADD && IsIntConst(s0->src(1))) {
      seen_const.push_back(IntArg(s0->src(1)));
      s0 = s0->src(0);
    } else {
      seen_const.push_back(0);
    }
    if (ans == nullptr) ans = s0;
    if (ans != s0) return nullptr;
  }
  if (ans == nullptr || denominator <= 0 || denominator > 4096) return nullptr;
  // The first terms may already have folded to 0.
  int128 missing = denominator - static_cast<int128>(seen_const.size());
  for (int128 i = 0; i < missing; ++i) {
    if (0 <= Vmin(ans) && Vmax(ans) + i < denominator) seen_const.push_back(i);
  }
  std::sort(seen_const.begin(), seen_const.end());
  if (static_cast<int128>(seen_const.size()) != denominator) return nullptr;
  for (size_t i = 0; i < seen_const.size(); ++i) {
    if (seen_const[i] != static_cast<int128>(i)) return nullptr;
  }
  return Int(fac) * ans->ref();
}

UOpPtr LtFolding(const UOp* x, int128 c) {
  std::vector<const UOp*> p, np;
  for (const UOp* u : SplitUOp(x, Ops::ADD)) (ConstFactor(u) == 1 ? p : np).push_back(u);
  if (np.empty()) return nullptr;
  int128 d = c;
  for (const UOp* u : np) d = Gcd(d, ConstFactor(u));
  if (d <= 1) return nullptr;
  int128 lo = 0, hi = 0;
  for (const UOp* u : p) {
    if (!IntBounds(u)) return nullptr;
    lo += Vmin(u);
    hi += Vmax(u);
  }
  if (!(0 <= lo && hi < d)) return nullptr;
  UOpPtr sum = np[0]->ref();
  for (size_t i = 1; i < np.size(); ++i) sum = sum + np[i]->ref();
  UOpPtr divided = Divides(sum, d);
  if (!divided) return nullptr;
  return divided.lt(divided.const_like(ConstValue::Int(FloorDiv(c, d))));
}

UOpPtr CanonicalizeSimplex(const UOp* x) {
  bool changed = false;
  std::vector<UOpPtr> terms;
  for (const UOp* u : SplitUOp(x, Ops::ADD)) {
    if (u->op() == Ops::MUL && IsIntConst(u->src(1)) && IntArg(u->src(1)) > 0) {
      changed = true;
      u = u->src(0);
    }
    if (!(groups::kIrreducible.contains(u->op()) && IntBounds(u) && Vmin(u) >= 0)) return nullptr;
    terms.push_back(u->ref());
  }
  if (!changed) return nullptr;
  return Sum(terms);
}

// ---- canonical order ----

namespace {

// What Python's tuple comparison makes of two items: a tuple's `<` is decided by its first unequal item, and
// where that item is less neither way (two DTypes of one Python sort key), it is false both ways.
constexpr int kUnordered = 2;

// Python's DType.__lt__ compares (priority, itemsize, name, fmt, count): a pointer compares as its base (so
// the pointers of one base, and the base itself, are unordered among themselves).
int CompareDType(DType a, DType b) {
  if (a == b) return 0;
  auto key = [](DType d) { return std::make_tuple(d.priority(), d.itemsize(), d.name(), d.count()); };
  auto ka = key(a), kb = key(b);
  return ka < kb ? -1 : kb < ka ? 1 : kUnordered;
}

// Python's comparison of two args (only called where tinygrad's tuple comparison would compare them): -1, 0,
// 1 or kUnordered.
int CompareArg(const Arg& a, const Arg& b) {
  if (a == b) return 0;
  auto numeric = [](const Arg& v) { return v.is_int() || v.is_float() || v.is_bool(); };
  if (numeric(a) && numeric(b)) {
    auto to_const = [](const Arg& v) {
      return v.is_int()     ? ConstValue::Int(v.as_int())
             : v.is_float() ? ConstValue::Float(v.as_float())
                            : ConstValue::Bool(v.as_bool());
    };
    ConstValue x = to_const(a), y = to_const(b);
    return x < y ? -1 : y < x ? 1 : 0;
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string() ? -1 : 1;
  if (a.is_tuple() && b.is_tuple()) {
    const Arg::Tuple& x = a.as_tuple();
    const Arg::Tuple& y = b.as_tuple();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (int r = CompareArg(x[i], y[i]); r != 0) return r;
    }
    return x.size() < y.size() ? -1 : x.size() > y.size() ? 1 : 0;
  }
  if (a.is_dtype() && b.is_dtype()) return CompareDType(a.as_dtype(), b.as_dtype());
  if (a.is_op() && b.is_op()) return a.as_op() < b.as_op() ? -1 : 1;
  // Python would raise here; any fixed order keeps the rewrite deterministic.
  return a.kind() < b.kind() ? -1 : a.kind() > b.kind() ? 1 : (a.Hash() < b.Hash() ? -1 : 1);
}

}  // namespace

int CompareTuplize(const UOp* a, const UOp* b) {
  // Tuples compare item by item: (op, arg, dtype), then the sources pair by pair, then their counts.
  auto compare_heads = [](const UOp* x, const UOp* y) {
    if (x->op() != y->op()) return x->op() < y->op() ? -1 : 1;
    if (int r = CompareArg(x->arg(), y->arg()); r != 0) return r;
    return CompareDType(x->dtype(), y->dtype());
  };
  // Unordered is false both ways: 0 to the caller.
  auto result = [](int r) { return r == kUnordered ? 0 : r; };
  if (a == b) return 0;
  if (int r = compare_heads(a, b); r != 0) return result(r);  // where nearly every comparison ends
  // Pairs with equal heads can go on as deep as the expression: the pairs still to compare wait on a stack.
  // An entry with `counts` set stands for the comparison of the counts, after its pair's sources.
  struct Pending {
    const UOp* a;
    const UOp* b;
    bool counts;
  };
  absl::InlinedVector<Pending, 16> pending;
  auto push_sources = [&pending](const UOp* x, const UOp* y) {
    pending.push_back({x, y, true});
    for (size_t i = std::min(x->num_src(), y->num_src()); i-- > 0;) {
      pending.push_back({x->src(i), y->src(i), false});
    }
  };
  push_sources(a, b);
  while (!pending.empty()) {
    const auto [x, y, counts] = pending.back();
    pending.pop_back();
    if (counts) {
      if (x->num_src() != y->num_src()) return x->num_src() < y->num_src() ? -1 : 1;
    } else if (x != y) {
      if (int r = compare_heads(x, y); r != 0) return result(r);
      push_sources(x, y);
    }
  }
  return 0;
}

// ---- float power and threefry ----

UOpPtr XPow(const UOpPtr& base, const UOpPtr& exponent) {
  UOpPtr negative = base.lt(base.const_like(0.0));
  UOpPtr ret = negative.where(base.neg(), base).log2().mul(exponent).exp2();
  DType int_vec = dtypes::kInt32.Vec(exponent->dtype().count());
  UOpPtr non_int = exponent.ne(exponent.cast(int_vec).cast(exponent->dtype()));
  UOpPtr odd = exponent.lt(exponent.const_like(0.0))
                   .where(exponent.neg(), exponent)
                   .cast(int_vec)
                   .mod(UOp::Const(int_vec, 2))
                   .cast(dtypes::kBool.Vec(exponent->dtype().count()));
  UOpPtr adj =
      non_int.where(ret.const_like(std::nan("")), odd.where(ret.const_like(-1.0), ret.const_like(1.0)));
  UOpPtr zero_zero = base.eq(base.const_like(0.0)).bitwise_and(exponent.eq(exponent.const_like(0.0)));
  return zero_zero.where(ret.const_like(1.0), ret * negative.where(adj, ret.const_like(1.0)));
}

UOpPtr IntPow(const UOpPtr& base, const UOpPtr& exponent) {
  // On bools (0 and 1) b ** e is 0 only for 0 ** 1.
  if (base->dtype().scalar() == dtypes::kBool) return base | exponent.logical_not();
  UOpPtr result = base.const_like(1), square = base;
  const int bits = base->dtype().scalar().itemsize() * 8;
  for (int i = 0; i < bits; ++i) {
    result = ((exponent >> i) & 1).ne(0).where(result * square, result);
    if (i + 1 < bits) square = square * square;
  }
  if (base->dtype().is_unsigned()) return result;
  UOpPtr one = base.const_like(1), minus_one = base.const_like(-1);
  UOpPtr odd = (exponent & 1).ne(0);
  UOpPtr reciprocal =
      base.eq(one).where(one, base.eq(minus_one).where(odd.where(minus_one, one), base.const_like(0)));
  return exponent.lt(0).where(reciprocal, result);
}

UOpPtr Threefry2x32(const UOpPtr& x, const UOpPtr& key) {
  auto u64 = [&](const UOpPtr& like, uint64_t v) {
    return UOp::Const(like->dtype(), ConstValue::Int(absl::int128(v)));
  };
  auto u32 = [](const UOpPtr& like, uint64_t v) {
    return UOp::Const(like->dtype(), ConstValue::Int(absl::int128(v)));
  };
  const DType kU32 = dtypes::kUInt32;
  UOpPtr x0 = (x & u64(x, 0xffffffffu)).cast(kU32);
  UOpPtr x1 = (x.idiv(u64(x, uint64_t{1} << 32)) & u64(x, 0xffffffffu)).cast(kU32);
  UOpPtr key0 = (key & u64(key, 0xffffffffu)).cast(kU32);
  UOpPtr key1 = (key.idiv(u64(key, uint64_t{1} << 32)) & u64(key, 0xffffffffu)).cast(kU32);
  static constexpr int kRotations[2][4] = {{13, 15, 26, 6}, {17, 29, 16, 24}};
  UOpPtr ks[3] = {key1, (key0 ^ key1) ^ u32(key0, 0x1BD11BDA), key0};
  UOpPtr xr0 = x0 + ks[2], xr1 = x1 + ks[0];
  for (int i = 0; i < 5; ++i) {
    for (int r : kRotations[i % 2]) {
      UOpPtr sum = xr0 + xr1;
      xr1 = sum ^ (xr1 * u32(xr1, uint64_t{1} << r) + xr1.idiv(u32(xr1, uint64_t{1} << (32 - r))));
      xr0 = sum;
    }
    xr0 = xr0 + ks[i % 3];
    xr1 = xr1 + ks[(i + 1) % 3] + u32(xr1, static_cast<uint64_t>(i + 1));
  }
  UOpPtr hi = xr1.cast(dtypes::kUInt64);
  return (hi * u64(hi, uint64_t{1} << 32)) | xr0.cast(dtypes::kUInt64);
}

}  // namespace uopc
