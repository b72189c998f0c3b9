#include "codegen/int_division_guard.h"

#include "absl/container/flat_hash_map.h"

namespace uopc {
namespace {

bool InRange(const UOp* u, absl::int128 v) { return u->vmin().i() <= v && v <= u->vmax().i(); }

// The guarded form of `div` (an IDIV or MOD of integers), or nullptr when it cannot trap.
UOpPtr Guard(const UOp* div) {
  const UOpPtr x(div->src(0)), y(div->src(1));
  const DType scalar = div->dtype().scalar();
  const bool by_zero = InRange(y.get(), 0);
  const bool overflow =
      !scalar.is_unsigned() && InRange(y.get(), -1) && InRange(x.get(), DTypeMin(scalar).i());
  if (!by_zero && !overflow) return nullptr;
  const UOpPtr nonzero = y.ne(int64_t{0});
  UOpPtr ok = by_zero ? nonzero : y.ne(int64_t{-1}).bitwise_or(x.ne(x.const_like(DTypeMin(scalar))));
  if (by_zero && overflow)
    ok = nonzero.bitwise_and(y.ne(int64_t{-1}).bitwise_or(x.ne(x.const_like(DTypeMin(scalar)))));
  const UOpPtr divisor = ok.where(y, y.const_like(1));
  const UOpPtr result = x.alu(div->op(), {divisor});
  if (!by_zero) return result;
  return nonzero.where(result, div->op() == Ops::IDIV ? x.const_like(0) : x);
}

}  // namespace

UOpPtr GuardIntDivision(const UOpPtr& sink) {
  absl::flat_hash_map<const UOp*, UOpPtr> guarded;
  for (const UOp* u : sink->Toposort()) {
    if ((u->op() != Ops::IDIV && u->op() != Ops::MOD) || !u->dtype().is_int()) continue;
    if (UOpPtr g = Guard(u); g != nullptr) guarded[u] = std::move(g);
  }
  return guarded.empty() ? sink : sink->Substitute(guarded);
}

}  // namespace uopc
