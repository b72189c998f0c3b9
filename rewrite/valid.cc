#include "rewrite/valid.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/numeric/int128.h"
#include "absl/types/span.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "uop/uop.h"

namespace uopc {
namespace {

bool Reaches(const UOp* root, const UOp* target) {
  for (const UOp* u : root->Toposort()) {
    if (u == target) return true;
  }
  return false;
}

// uop with `from` replaced by `to`, then simplified.
UOpPtr SubstituteAndSimplify(const UOpPtr& uop, const UOpPtr& from, const UOpPtr& to) {
  UOpMap replacements;
  replacements.emplace(from.get(), to);
  return Simplify(Substitute(uop, replacements, "uop_given_valid"));
}

UOpPtr AndAll(const std::vector<UOpPtr>& clauses) {
  UOpPtr acc = clauses[0];
  for (size_t i = 1; i < clauses.size(); ++i) acc = acc.bitwise_and(clauses[i]);
  return acc;
}

// An integer expression as sum(coefficient * term) + constant, like terms merged; nullopt when a term or the
// constant is not an integer.
struct LinearForm {
  std::vector<std::pair<const UOp*, absl::int128>> terms;
  absl::int128 constant = 0;
};
std::optional<LinearForm> Linear(const UOpPtr& x) {
  LinearForm form;
  for (const UOpPtr& u : SplitUop(x, Ops::ADD)) {
    if (u->op() == Ops::CONST) {
      if (!u->const_value().is_int()) return std::nullopt;
      form.constant += u->const_value().AsInt();
      continue;
    }
    const UOp* term = u.get();
    absl::int128 coefficient = 1;
    if (u->op() == Ops::MUL && u->src(1)->op() == Ops::CONST && u->src(1)->const_value().is_int()) {
      term = u->src(0);
      coefficient = u->src(1)->const_value().AsInt();
    }
    if (term->vmin().is_float() || term->vmax().is_float()) return std::nullopt;
    auto same =
        std::find_if(form.terms.begin(), form.terms.end(), [&](const auto& t) { return t.first == term; });
    if (same != form.terms.end()) {
      same->second += coefficient;
    } else {
      form.terms.emplace_back(term, coefficient);
    }
  }
  return form;
}

// A clause's expression and the range the clause (with the expression's own range) allows it.
struct Range {
  UOpPtr expr;
  absl::int128 lo, hi;
};

std::vector<Range> RangesOf(absl::Span<const UOpPtr> clauses) {
  std::vector<Range> ranges;
  for (const UOpPtr& clause : clauses) {
    std::optional<ValidClause> parsed = ParseValid(clause);
    if (!parsed || !parsed->expr->dtype().is_int() || parsed->expr->vmin().is_float()) continue;
    const UOpPtr& expr = parsed->expr;
    auto it = std::find_if(ranges.begin(), ranges.end(), [&](const Range& r) { return r.expr == expr; });
    if (it == ranges.end()) {
      ranges.push_back(Range{expr, expr->vmin().AsInt(), expr->vmax().AsInt()});
      it = ranges.end() - 1;
    }
    if (parsed->is_upper) {
      it->hi = std::min(it->hi, absl::int128(parsed->bound));
    } else {
      it->lo = std::max(it->lo, absl::int128(parsed->bound));
    }
  }
  return ranges;
}

// The least value of x where every range in `given` holds, by interval arithmetic in which a sum of x's terms
// that is a multiple of one of `given`'s expressions takes that expression's range. Nullopt when x is not
// linear.
std::optional<absl::int128> LowerBoundGiven(const UOpPtr& x, const std::vector<Range>& given) {
  std::optional<LinearForm> form = Linear(x);
  if (!form) return std::nullopt;
  absl::int128 bound = form->constant;
  auto& terms = form->terms;
  auto find = [&](const UOp* t) {
    return std::find_if(terms.begin(), terms.end(), [&](const auto& term) { return term.first == t; });
  };
  for (const Range& r : given) {
    std::optional<LinearForm> e = Linear(r.expr);
    if (!e || e->terms.empty()) continue;
    auto first = find(e->terms[0].first);
    if (first == terms.end() || first->second % e->terms[0].second != 0) continue;
    const absl::int128 multiple = first->second / e->terms[0].second;
    if (multiple == 0) continue;
    bool all_there = std::all_of(e->terms.begin(), e->terms.end(), [&](const auto& et) {
      auto it = find(et.first);
      return it != terms.end() && it->second == multiple * et.second;
    });
    if (!all_there) continue;
    // multiple * (expr - its constant) is the part of x these terms make.
    bound += multiple * ((multiple > 0 ? r.lo : r.hi) - e->constant);
    for (const auto& et : e->terms) terms.erase(find(et.first));
  }
  for (const auto& [term, coefficient] : terms) {
    bound += coefficient * (coefficient > 0 ? term->vmin().AsInt() : term->vmax().AsInt());
  }
  return bound;
}

// `clause` simplified with floor-division identities, when every division and modulo in it that has a
// dividend able to go below zero has a non-negative one wherever the `others` hold (then C's `//` and `%`
// agree with floor's where the clause matters). tinygrad folds these with floor semantics unconditionally:
// the odd taps of a stride-2 transposed convolution, `((56*(a+b) + 4*c - 113) % 2) < 1` beside `a+b >= 2`
// and `c >= 1`, are false, and their loads go. `clause` itself otherwise.
UOpPtr SimplifyWithNonNegativeDividends(const UOpPtr& clause, const std::vector<UOpPtr>& others) {
  std::vector<const UOp*> dividends;
  for (const UOp* u : clause->Toposort()) {
    if ((u->op() == Ops::MOD || u->op() == Ops::IDIV) && u->dtype().is_int() &&
        !u->src(0)->vmin().is_float() && u->src(0)->vmin().AsInt() < 0) {
      dividends.push_back(u->src(0));
    }
  }
  if (dividends.empty()) return clause;
  for (const UOp* x : dividends) {
    if (!NonNegativeGiven(x->ref(), others)) return clause;
  }
  ScopedFloorDivision floor_division;
  return Simplify(clause);
}

}  // namespace

std::vector<UOpPtr> SplitUop(const UOpPtr& x, Ops sep) {
  std::vector<UOpPtr> out;
  // Depth-first, left to right, without recursion: a long chain must not overflow the stack.
  std::vector<const UOp*> stack{x.get()};
  while (!stack.empty()) {
    const UOp* u = stack.back();
    stack.pop_back();
    if (u->op() != sep) {
      out.push_back(u->ref());
      continue;
    }
    for (size_t i = u->num_src(); i-- > 0;) stack.push_back(u->src(i));
  }
  return out;
}

std::optional<ValidClause> ParseValid(const UOpPtr& clause) {
  // (X < c) != True  means  X >= c.
  if (clause->op() == Ops::CMPNE && clause->num_src() == 2 && clause->src(1)->op() == Ops::CONST &&
      clause->src(1)->const_value() == ConstValue::Int(1)) {
    const UOp* lt = clause->src(0);
    if (lt->op() == Ops::CMPLT && lt->src(1)->op() == Ops::CONST && lt->src(1)->const_value().is_int()) {
      return ValidClause{lt->src(0)->ref(), false, lt->src(1)->const_value().AsInt64()};
    }
  }
  // X < c  means  X <= c - 1 for integers.
  if (clause->op() == Ops::CMPLT && clause->num_src() == 2 && clause->src(1)->op() == Ops::CONST &&
      clause->src(0)->dtype().is_int() && clause->src(1)->const_value().is_int()) {
    return ValidClause{clause->src(0)->ref(), true, clause->src(1)->const_value().AsInt64() - 1};
  }
  return std::nullopt;
}

UOpPtr UopGivenValid(const UOpPtr& valid, const UOpPtr& uop_in) {
  // The bounds each clause puts on its expression, in first-seen order (tinygrad iterates a dict).
  struct Bounds {
    UOpPtr expr;
    std::optional<int64_t> lower, upper;
  };
  std::vector<Bounds> bounds;
  absl::flat_hash_map<const UOp*, size_t> index_of;
  for (const UOpPtr& clause : SplitUop(valid, Ops::AND)) {
    std::optional<ValidClause> parsed = ParseValid(clause);
    if (!parsed) return uop_in;
    auto [it, inserted] = index_of.try_emplace(parsed->expr.get(), bounds.size());
    if (inserted) bounds.push_back(Bounds{parsed->expr, std::nullopt, std::nullopt});
    Bounds& b = bounds[it->second];
    (parsed->is_upper ? b.upper : b.lower) = parsed->bound;
  }

  UOpPtr uop = uop_in;
  for (const Bounds& b : bounds) {
    const UOpPtr& expr = b.expr;
    // Only integer expressions carry integer bounds; anything else is left alone.
    if (!expr->dtype().is_int()) continue;
    absl::int128 v0 = b.lower ? absl::int128(*b.lower) : expr->vmin().AsInt();
    absl::int128 v1 = b.upper ? absl::int128(*b.upper) : expr->vmax().AsInt();
    if (v0 > v1) return nullptr;  // no value satisfies the valid
    if (v0 == v1) {
      uop = SubstituteAndSimplify(uop, expr, UOp::Const(expr->dtype(), ConstValue::Int(v0)));
      continue;
    }
    // Each candidate is a set of (X, X restricted by the valid); when every member simplifies the uop to the
    // same result, that result holds under the valid.
    std::vector<std::vector<std::pair<UOpPtr, UOpPtr>>> candidates;
    if (expr->op() == Ops::ADD && v0 == 1) {
      std::vector<UOpPtr> terms = SplitUop(expr, Ops::ADD);
      bool all_irreducible = std::all_of(
          terms.begin(), terms.end(), [](const UOpPtr& t) { return groups::kIrreducible.contains(t->op()); });
      if (all_irreducible) {
        std::vector<std::pair<UOpPtr, UOpPtr>> simplex;
        for (const UOpPtr& t : terms) {
          simplex.emplace_back(t, UOp::Variable("fake", 1, t->vmax().AsInt64(), t->dtype()));
        }
        candidates.push_back(std::move(simplex));
      }
    }
    if (Reaches(uop.get(), expr.get())) {
      candidates.push_back(
          {{expr, UOp::Variable("fake", static_cast<int64_t>(v0), static_cast<int64_t>(v1), expr->dtype())}});
    }
    for (const auto& candidate : candidates) {
      std::vector<UOpPtr> rewritten;
      for (const auto& [x, fake] : candidate) {
        rewritten.push_back(SubstituteAndSimplify(SubstituteAndSimplify(uop, x, fake), fake, x));
      }
      if (uop->op() == Ops::VECTORIZE && uop->num_src() == 2) {
        auto same_src = [&](size_t i) {
          return std::all_of(rewritten.begin(), rewritten.end(), [&](const UOpPtr& r) {
            return r->num_src() > i && rewritten[0]->num_src() > i && r->src(i) == rewritten[0]->src(i);
          });
        };
        if (same_src(0)) uop = uop.replace_src({rewritten[0]->src(0)->ref(), uop->src(1)->ref()});
        if (same_src(1)) uop = uop.replace_src({uop->src(0)->ref(), rewritten[0]->src(1)->ref()});
      } else if (std::all_of(rewritten.begin(), rewritten.end(),
                             [&](const UOpPtr& r) { return r == rewritten[0]; })) {
        uop = rewritten[0];
      }
    }
  }
  return uop;
}

bool NonNegativeGiven(const UOpPtr& x, absl::Span<const UOpPtr> given) {
  if (!x->dtype().is_int() || x->vmin().is_float()) return false;
  if (x->vmin().AsInt() >= 0) return true;
  std::vector<Range> ranges = RangesOf(given);
  if (ranges.empty()) return false;
  std::optional<absl::int128> lo = LowerBoundGiven(x, ranges);
  return lo && *lo >= 0;
}

UOpPtr SimplifyValid(const UOpPtr& valid) {
  std::vector<UOpPtr> clauses = SplitUop(valid, Ops::AND);
  // A clause whose expression appears inside other clauses goes first, so that those get simplified by it.
  std::vector<int> priority(clauses.size(), 0);
  for (size_t i = 0; i < clauses.size(); ++i) {
    std::optional<ValidClause> parsed = ParseValid(clauses[i]);
    if (!parsed) continue;
    for (const UOpPtr& other : clauses) {
      if (Reaches(other.get(), parsed->expr.get())) --priority[i];
    }
  }
  std::vector<size_t> order(clauses.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return priority[a] < priority[b]; });

  std::vector<UOpPtr> kept;
  bool changed = false;
  for (size_t i : order) {
    const UOpPtr& clause = clauses[i];
    UOpPtr next = clause;
    if (!kept.empty()) {
      if (UOpPtr simplified = UopGivenValid(AndAll(kept), clause)) next = simplified;
    }
    if (next != clause) changed = true;
    kept.push_back(next);
  }
  // Each clause is then simplified given all the others as they now are (so the valid stays equivalent).
  for (size_t i = 0; i < kept.size(); ++i) {
    std::vector<UOpPtr> others;
    for (size_t j = 0; j < kept.size(); ++j) {
      if (j != i) others.push_back(kept[j]);
    }
    UOpPtr next = SimplifyWithNonNegativeDividends(kept[i], others);
    if (next != kept[i]) {
      kept[i] = next;
      changed = true;
    }
  }
  return changed ? AndAll(kept) : nullptr;
}

}  // namespace uopc
