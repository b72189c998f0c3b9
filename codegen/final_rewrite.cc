#include "codegen/final_rewrite.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
#include <vector>

#include "codegen/int_division_guard.h"
#include "codegen/transcendental.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "rewrite/symbolic_folding.h"
#include "rewrite/valid.h"

namespace uopc {
namespace {

// log2(v) when v is a power of two in [1, 2**63], else nullopt (tinygrad's powers_of_two table).
std::optional<int> PowerOfTwo(const UOpPtr& c) {
  if (c->op() != Ops::CONST || !c->arg().is_int()) return std::nullopt;
  const absl::int128 v = c->const_value().AsInt();
  for (int i = 0; i < 64; ++i) {
    if (v == (absl::int128(1) << i)) return i;
  }
  return std::nullopt;
}

// m, s with x // d == (x * m) >> s for every 0 <= x <= vmax, d > 0 (Hacker's Delight, chapter 10).
std::pair<absl::int128, int> MagicGu(absl::int128 vmax, absl::int128 d) {
  const absl::int128 nc = (vmax + 1) / d * d - 1;
  int nbits = 0;
  for (absl::int128 v = vmax; v > 0; v >>= 1) ++nbits;
  for (int s = 0; s <= 2 * nbits; ++s) {
    const absl::int128 p = absl::int128(1) << s;
    if (p > nc * (d - 1 - (p - 1) % d)) return {(p + d - 1 - (p - 1) % d) / d, s};
  }
  return {0, -1};  // unreachable for d > 0
}

// The next wider integer type (tinygrad's promo_lattice[dt][-1] where that is an integer).
std::optional<DType> WiderInt(DType dt) {
  switch (dt.scalar_type()) {
    case ScalarType::kInt8:
      return dtypes::kInt16;
    case ScalarType::kInt16:
      return dtypes::kInt32;
    case ScalarType::kInt32:
      return dtypes::kInt64;
    case ScalarType::kUInt8:
      return dtypes::kUInt16;
    case ScalarType::kUInt16:
      return dtypes::kUInt32;
    case ScalarType::kUInt32:
      return dtypes::kUInt64;
    default:
      return std::nullopt;
  }
}

// x // d as a multiply and shift, for x >= 0; null when the product could overflow even in a wider type.
UOpPtr FastIdiv(const Renderer* renderer, const UOpPtr& x, const UOpPtr& d_const) {
  if (d_const->op() != Ops::CONST || x->dtype().count() != 1) return nullptr;
  const absl::int128 d = d_const->const_value().AsInt();
  if (d == 0 || x->vmin() < ConstValue::Int(0)) return nullptr;
  const int sign = d > 0 ? 1 : -1;
  const absl::int128 max = DTypeMax(x->dtype()).AsInt();
  const absl::int128 vmax = std::min(x->vmax().AsInt(), max);
  auto [m, s] = MagicGu(vmax, d > 0 ? d : -d);
  auto const_of = [](const UOpPtr& like, absl::int128 v) { return like.const_like(ConstValue::Int(v)); };
  if (m * vmax <= max) return sign * ((x * const_of(x, m)) >> const_of(x, s));
  if (renderer != nullptr) {
    if (std::optional<DType> wider = WiderInt(x->dtype()); wider && m * vmax <= DTypeMax(*wider).AsInt()) {
      UOpPtr wide = x.cast(*wider);
      return sign * ((wide * const_of(wide, m)) >> const_of(wide, s)).cast(x->dtype());
    }
  }
  return nullptr;
}

// `valid` (an AND of clauses) with each `x % 2^k` of signed x that appears in one clause only rewritten to
// `x & (2^k - 1)` where the other clauses keep x non-negative (NonNegativeGiven): there C's % and the mask
// agree, and tinygrad rewrites every such mod. The load of a transposed convolution's tap keeps such a clause
// (`((56*a + 3*c - 114) % 2) < 1` beside `a >= 2` and `c >= 1`). Null when nothing changes.
UOpPtr ModToAndGivenValid(const UOpPtr& valid) {
  const std::vector<UOpPtr> clauses = SplitUop(valid, Ops::AND);
  if (clauses.size() < 2) return nullptr;
  std::vector<std::vector<const UOp*>> reached;
  bool any_candidate = false;
  for (const UOpPtr& clause : clauses) {
    reached.push_back(clause->Toposort());
    for (const UOp* u : reached.back()) {
      if (u->op() == Ops::MOD && u->src(0)->dtype().is_int() && !u->src(0)->dtype().is_unsigned() &&
          u->src(0)->vmin() < ConstValue::Int(0) && u->src(1)->op() == Ops::CONST &&
          PowerOfTwo(u->src(1)->ref())) {
        any_candidate = true;
      }
    }
  }
  if (!any_candidate) return nullptr;
  UOpMap replacements;
  for (size_t i = 0; i < clauses.size(); ++i) {
    std::vector<UOpPtr> others;
    for (size_t j = 0; j < clauses.size(); ++j) {
      if (j != i) others.push_back(clauses[j]);
    }
    for (const UOp* u : reached[i]) {
      if (u->op() != Ops::MOD || !u->src(0)->dtype().is_int() || u->src(0)->dtype().is_unsigned() ||
          u->src(0)->vmin() >= ConstValue::Int(0) || u->src(1)->op() != Ops::CONST ||
          !PowerOfTwo(u->src(1)->ref())) {
        continue;
      }
      // A mod that another clause also holds would be rewritten there too, on that clause's own proof.
      bool elsewhere = false;
      for (size_t j = 0; j < clauses.size() && !elsewhere; ++j) {
        elsewhere = j != i && std::find(reached[j].begin(), reached[j].end(), u) != reached[j].end();
      }
      if (elsewhere || !NonNegativeGiven(u->src(0)->ref(), others)) continue;
      UOpPtr x = u->src(0)->ref();
      replacements.emplace(u, x & x.const_like(ConstValue::Int(u->src(1)->const_value().AsInt() - 1)));
    }
  }
  if (replacements.empty()) return nullptr;
  return Substitute(valid, replacements, "gate mod as and");
}

}  // namespace

PatternMatcher LateRewritePatterns(const OpSet& ops, bool force_transcendental,
                                   const std::vector<DType>& fallback_dtypes) {
  std::vector<RuleSpec> rules;
  const DTypeSet floats = {dtypes::kFloat16, dtypes::kFloat32, dtypes::kFloat64};
  // The dtypes on which a supported op still falls back: those the target names.
  std::optional<DTypeSet> fallback_floats;
  for (DType dt : fallback_dtypes) {
    if (floats.Matches(dt)) fallback_floats = fallback_floats ? fallback_floats->Union(dt) : DTypeSet(dt);
  }
  const UPat d = UPat::Var("d");
  using Fallback = UOpPtr (*)(const UOpPtr&);
  const std::pair<Ops, Fallback> fallbacks[] = {
      {Ops::EXP2, &XExp2}, {Ops::LOG2, &XLog2}, {Ops::SIN, [](const UOpPtr& x) { return XSin(x); }}};
  for (const auto& [op, fallback] : fallbacks) {
    const bool always = !ops.contains(op) || force_transcendental;
    if (!always && !fallback_floats.has_value()) continue;
    rules.push_back({UPat(op).dtype(always ? floats : *fallback_floats).src(d),
                     [f = fallback](const Match& m) { return f(m["d"]); }});
  }
  if (!ops.contains(Ops::SQRT)) {
    rules.push_back(
        {UPat(Ops::SQRT).src(d), [](const Match& m) { return XPow(m["d"], m["d"].const_like(0.5)); }});
  }
  const UPat x_int = UPat::Var("x", dtypes::kInts), c = UPat::Cvar("c");
  if (ops.contains(Ops::AND)) {
    // x % 2^k is x & (2^k - 1) only where x >= 0: C's % takes the dividend's sign (-3 % 8 is -3, -3 & 7 is
    // 5). tinygrad rewrites signed x without the check; uopc keeps C's semantics (docs/parity.md).
    rules.push_back({x_int % c, [](const Match& m) -> UOpPtr {
                       if (!PowerOfTwo(m["c"])) return nullptr;
                       if (!m["x"]->dtype().is_unsigned() && m["x"]->vmin() < ConstValue::Int(0))
                         return nullptr;
                       return m["x"] & m["x"].const_like(ConstValue::Int(m["c"]->const_value().AsInt() - 1));
                     }});
    rules.push_back({UPat(Ops::AND).dtype(dtypes::kBool).named("valid"),
                     [](const Match& m) { return ModToAndGivenValid(m["valid"]); }});
  }
  if (ops.contains(Ops::SHL)) {
    rules.push_back({x_int * c, [](const Match& m) -> UOpPtr {
                       std::optional<int> v = PowerOfTwo(m["c"]);
                       return v && *v != 0 ? m["x"] << *v : nullptr;
                     }});
  }
  if (ops.contains(Ops::SHR)) {
    rules.push_back({UPat::Var("x", dtypes::kUInts).idiv(c), [](const Match& m) -> UOpPtr {
                       std::optional<int> v = PowerOfTwo(m["c"]);
                       return v && *v != 0 ? m["x"] >> *v : nullptr;
                     }});
    rules.push_back({UPat::Var("x", dtypes::kSInts).idiv(c), [](const Match& m) -> UOpPtr {
                       std::optional<int> v = PowerOfTwo(m["c"]);
                       return v && *v != 0 && m["x"]->vmin() >= ConstValue::Int(0) ? m["x"] >> *v : nullptr;
                     }});
    rules.push_back({x_int.idiv(UPat::Cvar("d")), [](const Match& m) {
                       return FastIdiv(static_cast<const Renderer*>(m.raw_ctx()), m["x"], m["d"]);
                     }});
    rules.push_back({x_int % UPat::Cvar("d"), [](const Match& m) -> UOpPtr {
                       UOpPtr f = FastIdiv(static_cast<const Renderer*>(m.raw_ctx()), m["x"], m["d"]);
                       return f ? m["x"] - m["d"] * f : nullptr;
                     }});
  }
  if (ops.contains(Ops::NEG)) {
    rules.push_back({UPat::Var("x") * -1, [](const Match& m) { return m["x"].alu(Ops::NEG); }});
    if (ops.contains(Ops::SUB)) {
      rules.push_back({UPat::Var("x") + UPat::Var("y").alu(Ops::NEG),
                       [](const Match& m) { return m["x"].alu(Ops::SUB, {m["y"]}); }});
    }
  }
  if (ops.contains(Ops::MULACC)) {
    rules.push_back({UPat::Var("a") * UPat::Var("b") + UPat::Var("c"), [](const Match& m) {
                       return m["a"].alu(Ops::MULACC, {m["b"], m["c"]});
                     }});
  }
  return PatternMatcher(std::move(rules));
}

const PatternMatcher& RenderPatterns() {
  static const PatternMatcher* const kRules = new PatternMatcher({
      // Rendering uses explicit VECTORIZEs.
      {UPat(Ops::CONST).named("c"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& c = m["c"];
         const int n = c->dtype().vcount();
         if (n <= 1) return nullptr;
         std::vector<UOpPtr> elements(n, UOp::Const(c->dtype().scalar(), c->const_value()));
         return UOp::New(Ops::VECTORIZE, c->dtype(), elements);
       }},
      {UPat(Ops::VCONST).named("c"),
       [](const Match& m) {
         const UOpPtr& c = m["c"];
         std::vector<UOpPtr> elements;
         for (size_t i = 0; i < c->arg().size(); ++i) elements.push_back(c.gep(static_cast<int64_t>(i)));
         return UOp::New(Ops::VECTORIZE, c->dtype(), elements);
       }},
      {UPat(Ops::GEP).named("gep"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& gep = m["gep"];
         if (gep->arg().size() <= 1) return nullptr;
         std::vector<UOpPtr> elements;
         for (const Arg& i : gep->arg().as_tuple()) elements.push_back(gep->src()[0].gep(i.as_int()));
         return UOp::New(Ops::VECTORIZE, gep->dtype(), elements);
       }},
      {UPat(Ops::GEP).named("gep"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& gep = m["gep"];
         const bool first_of_scalar =
             gep->src(0)->dtype().vcount() == 1 && gep->arg().size() == 1 && gep->arg()[0].as_int() == 0;
         return first_of_scalar ? gep->src()[0] : nullptr;
       }},
      {UPat(Ops::VECTORIZE).src(UPat::Var("x")), [](const Match& m) { return m["x"]; }},
      // Masked loads get an alternative value.
      {UPat(Ops::LOAD)
           .src(UPat(Ops::INDEX).src(UPat(), UPat(), UPat()).or_casted())
           .allow_any_len()
           .named("x"),
       [](const Match& m) -> UOpPtr {
         const UOpPtr& x = m["x"];
         if (x->num_src() != 1 && x->src(1)->op() != Ops::CUSTOM) return nullptr;
         std::vector<UOpPtr> src = {x->src()[0], x.const_like(0)};
         src.insert(src.end(), x->src().begin() + 1, x->src().end());
         return UOp::New(x->op(), x->dtype(), src, x->arg());
       }},
      // Gated stores go inside an IF.
      {UPat(Ops::STORE)
           .dtype(dtypes::kVoid)
           .src(UPat().src(UPat(), UPat(), UPat().dtype(dtypes::kBool)).named("idx").or_casted(), UPat())
           .named("store"),
       [](const Match& m) {
         const UOpPtr& store = m["store"];
         std::vector<UOpPtr> src(store->src().begin(), store->src().end());
         src.push_back(UOp::New(Ops::IF, dtypes::kVoid, {m["idx"]->src()[2]}));
         return UOp::New(Ops::STORE, dtypes::kVoid, src);
       }},
  });
  return *kRules;
}

absl::StatusOr<UOpPtr> RewriteFinal(const UOpPtr& sink, const Renderer& renderer) {
  // The matcher depends only on the target's ops and extra rules; compiling it once per target (tinygrad
  // caches get_late_rewrite_patterns too) keeps the step cheap per kernel. Renderers' extra matchers are
  // static, so their address names them.
  struct CachedMatcher {
    OpSet ops;
    std::vector<DType> fallback_dtypes;
    const PatternMatcher* extra;
    std::shared_ptr<const PatternMatcher> matcher;
  };
  static std::mutex mutex;
  static std::vector<CachedMatcher>* const cache = new std::vector<CachedMatcher>();
  const OpSet& ops = renderer.supported_ops();
  const std::vector<DType>& fallback_dtypes = renderer.transcendental_fallback_dtypes();
  const PatternMatcher* extra = renderer.extra_matcher();
  std::shared_ptr<const PatternMatcher> matcher;
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (const CachedMatcher& c : *cache) {
      if (c.ops == ops && c.fallback_dtypes == fallback_dtypes && c.extra == extra) matcher = c.matcher;
    }
    if (matcher == nullptr) {
      // SymbolicSimple() is joined last, so that its rules are compiled into one matcher only.
      PatternMatcher late =
          LateRewritePatterns(ops, /*force_transcendental=*/false, fallback_dtypes) + RenderPatterns();
      if (extra != nullptr) late = late + *extra;
      matcher = std::make_shared<const PatternMatcher>(SymbolicSimple() + late);
      cache->push_back({ops, fallback_dtypes, extra, matcher});
    }
  }
  // Divisions that could trap get their guards first (codegen/int_division_guard.h), so that the late rules
  // see the guarded divisor, which is no constant, and leave it a division.
  return TryGraphRewrite(GuardIntDivision(sink), *matcher,
                         {.ctx = const_cast<Renderer*>(&renderer), .name = "final rewrite"});
}

}  // namespace uopc
