#include "rewrite/testing/rule_fuzzer.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rewrite/symbolic.h"
#include "uop/exec_alu.h"

namespace uopc {

// The generator's source of decisions: a PRNG, or the bytes of a fuzz input (0 once they run out, which makes
// every later choice the first alternative, so generation always ends).
class RuleFuzzer::Choices {
 public:
  explicit Choices(std::mt19937_64* rng) : rng_(rng) {}
  Choices(const uint8_t* data, size_t size) : data_(data), size_(size) {}

  // Uniform-ish in [0, n).
  uint64_t Below(uint64_t n) {
    if (n <= 1) return 0;
    if (rng_ != nullptr) return (*rng_)() % n;
    uint64_t v = 0;
    for (int i = 0; i < 2 && pos_ < size_; ++i) v = (v << 8) | data_[pos_++];
    return v % n;
  }
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Below(static_cast<uint64_t>(hi - lo) + 1));
  }
  // True with probability percent/100 (with bytes: false once they run out).
  bool Chance(int percent) { return Below(100) >= static_cast<uint64_t>(100 - percent); }

 private:
  std::mt19937_64* rng_ = nullptr;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  size_t pos_ = 0;
};

namespace {

using Assignment = absl::flat_hash_map<std::string, int64_t>;

// A graph flattened for fast repeated evaluation with exec_alu (SymInfer's semantics, without its per-call
// toposort and hashing: the fuzzer evaluates each graph at up to thousands of assignments).
struct Program {
  std::vector<const UOp*> nodes;       // toposorted; the root last
  std::vector<std::vector<int>> srcs;  // indices into nodes
  std::vector<int> var;                // per node: index into the variable list, or -1
};

Program Compile(const UOp* root, const std::vector<InfixVar>& vars) {
  Program p;
  p.nodes = root->Toposort();
  absl::flat_hash_map<const UOp*, int> index;
  for (size_t i = 0; i < p.nodes.size(); ++i) index[p.nodes[i]] = static_cast<int>(i);
  for (const UOp* u : p.nodes) {
    std::vector<int> s;
    for (const UOpPtr& x : u->src()) s.push_back(index[x.get()]);
    p.srcs.push_back(std::move(s));
    int v = -1;
    if (u->op() == Ops::DEFINE_VAR) {
      for (size_t j = 0; j < vars.size(); ++j) {
        if (vars[j].name == u->var_name()) v = static_cast<int>(j);
      }
    }
    p.var.push_back(v);
  }
  return p;
}

absl::StatusOr<ConstValue> Evaluate(const Program& p, const std::vector<int64_t>& values,
                                    std::vector<ConstValue>& scratch) {
  scratch.resize(p.nodes.size());
  std::vector<ConstValue> operands;
  for (size_t i = 0; i < p.nodes.size(); ++i) {
    const UOp* u = p.nodes[i];
    switch (u->op()) {
      case Ops::CONST:
        scratch[i] = u->const_value();
        break;
      case Ops::DEFINE_VAR:
        if (p.var[i] < 0) return absl::InvalidArgumentError(absl::StrCat("unknown variable ", u->var_name()));
        scratch[i] = ConstValue::Int(values[p.var[i]]);
        break;
      case Ops::CAST: {
        absl::StatusOr<ConstValue> r = ExecCast(scratch[p.srcs[i][0]], u->src(0)->dtype(), u->dtype());
        if (!r.ok()) return r.status();
        scratch[i] = *r;
        break;
      }
      default: {
        if (!groups::kALU.contains(u->op())) {
          return absl::InvalidArgumentError(absl::StrCat("cannot evaluate ", OpName(u->op())));
        }
        operands.clear();
        for (int s : p.srcs[i]) operands.push_back(scratch[s]);
        DType operand_dtype = u->src(u->op() == Ops::WHERE ? 1 : 0)->dtype();
        absl::StatusOr<ConstValue> r = ExecAlu(u->op(), u->dtype(), operands, operand_dtype);
        if (!r.ok()) return r.status();
        scratch[i] = *r;
      }
    }
  }
  return scratch.back();
}

std::vector<InfixVar> VarsOf(const UOp* root) {
  std::vector<InfixVar> vars;
  for (const UOp* u : root->Toposort()) {
    if (u->op() != Ops::DEFINE_VAR) continue;
    bool seen = false;
    for (const InfixVar& v : vars) seen |= v.name == u->var_name();
    if (!seen) vars.push_back({u->var_name(), u->vmin().AsInt64(), u->vmax().AsInt64()});
  }
  std::sort(vars.begin(), vars.end(), [](const InfixVar& a, const InfixVar& b) { return a.name < b.name; });
  return vars;
}

// Shrinking order: fewer nodes, then fewer variable uses, then smaller constants, then narrower ranges.
std::tuple<int64_t, int64_t, int64_t, int64_t> SizeOf(const UOp* root) {
  int64_t nodes = 0, vars = 0, consts = 0, widths = 0;
  for (const UOp* u : root->Toposort()) {
    ++nodes;
    if (u->op() == Ops::DEFINE_VAR) {
      ++vars;
      widths += u->vmax().AsInt64() - u->vmin().AsInt64();
    }
    if (u->op() == Ops::CONST && !u->dtype().is_bool()) consts += std::abs(u->const_value().AsInt64());
  }
  return {nodes, vars, consts, widths};
}

bool InRange(const ConstValue& v, const UOp* u) { return u->vmin() <= v && v <= u->vmax(); }

std::string Render(const UOp* u) { return u == nullptr ? "<null>" : RenderInfix(u); }

}  // namespace

absl::string_view RuleFailureKindName(RuleFailure::Kind kind) {
  switch (kind) {
    case RuleFailure::Kind::kRewriteError:
      return "rewrite error (non-termination)";
    case RuleFailure::Kind::kNotIdempotent:
      return "not idempotent";
    case RuleFailure::Kind::kDTypeChanged:
      return "dtype changed";
    case RuleFailure::Kind::kValueMismatch:
      return "value mismatch";
    case RuleFailure::Kind::kOutOfBounds:
      return "value outside [vmin, vmax] of the rewritten graph";
    case RuleFailure::Kind::kOriginalOutOfBounds:
      return "value outside [vmin, vmax] of the original graph";
    case RuleFailure::Kind::kEvalError:
      return "rewritten graph cannot be evaluated";
  }
  return "?";
}

std::string RuleFailure::ToString() const {
  std::string s = absl::StrCat(RuleFailureKindName(kind), " (shrunk from ", original_size, " to ",
                               std::get<0>(SizeOf(expr.get())), " nodes)\n");
  absl::StrAppend(&s, "  expr:      ", Render(expr.get()), "\n");
  absl::StrAppend(&s, "  rewritten: ", Render(rewritten.get()), "\n");
  absl::StrAppend(&s, "  ranges:    ",
                  absl::StrJoin(vars, ", ",
                                [](std::string* out, const InfixVar& v) {
                                  absl::StrAppend(out, v.name, " in [", v.min, ", ", v.max, "]");
                                }),
                  "\n");
  if (!assignment.empty()) {
    std::vector<std::pair<std::string, int64_t>> sorted(assignment.begin(), assignment.end());
    std::sort(sorted.begin(), sorted.end());
    absl::StrAppend(&s, "  at:        ", absl::StrJoin(sorted, ", ", absl::PairFormatter("=")), "\n");
  }
  if (before || after) {
    absl::StrAppend(&s, "  before:    ", before ? before->ToString() : "-", "  [", expr->vmin().ToString(),
                    ", ", expr->vmax().ToString(), "]\n");
    absl::StrAppend(&s, "  after:     ", after ? after->ToString() : "-");
    if (rewritten)
      absl::StrAppend(&s, "  [", rewritten->vmin().ToString(), ", ", rewritten->vmax().ToString(), "]");
    absl::StrAppend(&s, "\n");
  }
  if (!detail.empty()) absl::StrAppend(&s, "  detail:    ", detail, "\n");
  return s;
}

absl::Status RuleFailure::ToStatus() const { return absl::InternalError(ToString()); }

RuleFuzzer::RuleFuzzer(const PatternMatcher& pm, RuleFuzzerOptions options)
    : pm_(pm), options_(std::move(options)), rng_(options_.seed) {}

UOpPtr RuleFuzzer::GenerateWith(Choices& ch) const {
  const RuleFuzzerOptions& o = options_;
  std::vector<UOpPtr> vars;
  for (int i = 0; i < std::max(o.num_vars, 1); ++i) {
    int64_t lo = ch.Between(o.var_min, o.var_max);
    int64_t width_cap;
    switch (ch.Below(3)) {
      case 0:
        width_cap = 3;
        break;
      case 1:
        width_cap = 10;
        break;
      default:
        width_cap = o.var_max - o.var_min;
    }
    int64_t hi = ch.Between(lo, std::min(o.var_max, lo + width_cap));
    vars.push_back(UOp::Variable(
        std::string(1, static_cast<char>('a' + i % 26)) + (i >= 26 ? std::to_string(i) : ""), lo, hi));
  }
  auto int_const = [&]() {
    int64_t v = ch.Chance(60) ? ch.Between(-2, 4) : ch.Between(-o.max_const, o.max_const);
    return UOp::Const(dtypes::kInt32, v);
  };
  auto int_leaf = [&]() { return ch.Chance(70) ? vars[ch.Below(vars.size())] : int_const(); };
  std::vector<Ops> int_ops, bool_ops;
  for (Ops op : {Ops::ADD, Ops::MUL, Ops::IDIV, Ops::MOD, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL,
                 Ops::SHR, Ops::WHERE}) {
    if (o.ops.contains(op)) int_ops.push_back(op);
  }
  for (Ops op : {Ops::CMPLT, Ops::CMPNE, Ops::AND, Ops::OR, Ops::XOR, Ops::WHERE}) {
    if (o.ops.contains(op)) bool_ops.push_back(op);
  }
  const bool has_cmp = o.ops.contains(Ops::CMPLT) || o.ops.contains(Ops::CMPNE);
  auto cmp_op = [&]() {
    if (!o.ops.contains(Ops::CMPLT)) return Ops::CMPNE;
    if (!o.ops.contains(Ops::CMPNE)) return Ops::CMPLT;
    return ch.Chance(50) ? Ops::CMPLT : Ops::CMPNE;
  };

  // Recursion depth is bounded by max_depth (at most a few dozen).
  std::function<UOpPtr(DType, int)> gen = [&](DType dt, int depth) -> UOpPtr {
    if (dt.is_bool()) {
      if (depth <= 0 || bool_ops.empty() || ch.Chance(20)) {
        if (has_cmp && ch.Chance(70)) {
          return UOp::New(cmp_op(), dtypes::kBool, {int_leaf(), int_leaf()});
        }
        return UOp::Const(dtypes::kBool, ch.Chance(50));
      }
      Ops op = bool_ops[ch.Below(bool_ops.size())];
      switch (op) {
        case Ops::CMPLT:
        case Ops::CMPNE: {
          DType operand = (op == Ops::CMPNE && ch.Chance(15)) ? dtypes::kBool : dtypes::kInt32;
          return UOp::New(op, dtypes::kBool, {gen(operand, depth - 1), gen(operand, depth - 1)});
        }
        case Ops::WHERE:
          return UOp::New(
              op, dtypes::kBool,
              {gen(dtypes::kBool, depth - 1), gen(dtypes::kBool, depth - 1), gen(dtypes::kBool, depth - 1)});
        default:
          return UOp::New(op, dtypes::kBool, {gen(dtypes::kBool, depth - 1), gen(dtypes::kBool, depth - 1)});
      }
    }
    if (depth <= 0 || int_ops.empty() || ch.Chance(25)) return int_leaf();
    Ops op = int_ops[ch.Below(int_ops.size())];
    switch (op) {
      case Ops::SHL:
      case Ops::SHR: {
        // Never a negative count (an error in exec_alu); mostly small ones so SHL rarely overflows.
        int64_t n = ch.Chance(80) ? ch.Between(0, 4) : ch.Between(0, 31);
        return UOp::New(op, dtypes::kInt32, {gen(dtypes::kInt32, depth - 1), UOp::Const(dtypes::kInt32, n)});
      }
      case Ops::WHERE:
        return UOp::New(
            op, dtypes::kInt32,
            {gen(dtypes::kBool, depth - 1), gen(dtypes::kInt32, depth - 1), gen(dtypes::kInt32, depth - 1)});
      default: {
        UOpPtr a = gen(dtypes::kInt32, depth - 1);
        // A constant right operand is what most rules look for.
        UOpPtr b = ch.Chance(40) ? int_const() : gen(dtypes::kInt32, depth - 1);
        return UOp::New(op, dtypes::kInt32, {a, b});
      }
    }
  };
  bool want_int = o.int_roots && (!o.bool_roots || ch.Chance(70));
  int depth = static_cast<int>(ch.Between(1, std::max(o.max_depth, 1)));
  return gen(want_int ? dtypes::kInt32 : dtypes::kBool, depth);
}

UOpPtr RuleFuzzer::Generate() {
  Choices ch(&rng_);
  return GenerateWith(ch);
}

UOpPtr RuleFuzzer::GenerateFromBytes(const uint8_t* data, size_t size) const {
  Choices ch(data, size);
  return GenerateWith(ch);
}

bool RuleFuzzer::Judgeable(const UOpPtr& expr) const {
  if (options_.allow_overflow) return true;
  for (const UOp* u : expr->Toposort()) {
    if (u->dtype().is_bool() || !u->dtype().is_int()) continue;
    if (u->vmin() < DTypeMin(u->dtype()) || u->vmax() > DTypeMax(u->dtype())) return false;
  }
  return true;
}

namespace {

// Everything one check needs, shared by CheckOneUnshrunk and the shrinker (which passes the failing
// assignment as a hint, tried first).
std::optional<RuleFailure> CheckImpl(const PatternMatcher& pm, const RuleFuzzerOptions& o, const UOpPtr& expr,
                                     const Assignment* hint, bool* judged, bool* changed) {
  *judged = false;
  RuleFailure f;
  f.expr = expr;
  f.vars = VarsOf(expr.get());
  f.original_size = static_cast<int>(std::get<0>(SizeOf(expr.get())));
  RewriteOptions ro;
  ro.max_steps = o.max_steps;
  absl::StatusOr<UOpPtr> rewritten = TryGraphRewrite(expr, pm, ro);
  *judged = true;
  if (!rewritten.ok()) {
    f.kind = RuleFailure::Kind::kRewriteError;
    f.detail = std::string(rewritten.status().message());
    return f;
  }
  f.rewritten = *rewritten;
  *changed = *rewritten != expr;
  if ((*rewritten)->dtype() != expr->dtype()) {
    f.kind = RuleFailure::Kind::kDTypeChanged;
    f.detail = absl::StrCat("dtype ", expr->dtype().ToString(), " became ", (*rewritten)->dtype().ToString());
    return f;
  }
  absl::StatusOr<UOpPtr> again = TryGraphRewrite(*rewritten, pm, ro);
  if (!again.ok() || *again != *rewritten) {
    f.kind = RuleFailure::Kind::kNotIdempotent;
    f.detail = again.ok() ? absl::StrCat("rewriting again gives ", Render(again->get()))
                          : absl::StrCat("rewriting again fails: ", again.status().message());
    return f;
  }

  const std::vector<InfixVar>& vars = f.vars;
  Program before = Compile(expr.get(), vars);
  Program after = Compile(rewritten->get(), vars);
  std::vector<ConstValue> scratch;
  std::vector<int64_t> values(vars.size());
  // Returns true when the assignment in `values` fails (filling f), false when it passes or cannot be judged.
  auto fails = [&]() -> bool {
    absl::StatusOr<ConstValue> v0 = Evaluate(before, values, scratch);
    if (!v0.ok()) {
      *judged = false;
      return false;
    }
    absl::StatusOr<ConstValue> v1 = Evaluate(after, values, scratch);
    std::optional<RuleFailure::Kind> kind;
    if (!v1.ok()) {
      kind = RuleFailure::Kind::kEvalError;
      f.detail = std::string(v1.status().message());
    } else if (!(*v0 == *v1)) {
      kind = RuleFailure::Kind::kValueMismatch;
    } else if (!InRange(*v0, expr.get())) {
      kind = RuleFailure::Kind::kOriginalOutOfBounds;
    } else if (!InRange(*v1, rewritten->get())) {
      kind = RuleFailure::Kind::kOutOfBounds;
    }
    if (!kind) return false;
    f.kind = *kind;
    for (size_t i = 0; i < vars.size(); ++i) f.assignment[vars[i].name] = values[i];
    // Report the values SymInfer computes on the graphs themselves.
    absl::StatusOr<ConstValue> s0 = SymInfer(expr.get(), f.assignment);
    absl::StatusOr<ConstValue> s1 = SymInfer(rewritten->get(), f.assignment);
    f.before = s0.ok() ? std::optional<ConstValue>(*s0) : std::optional<ConstValue>(*v0);
    if (s1.ok())
      f.after = *s1;
    else if (v1.ok())
      f.after = *v1;
    return true;
  };

  if (hint != nullptr) {
    bool usable = true;
    for (size_t i = 0; i < vars.size(); ++i) {
      auto it = hint->find(vars[i].name);
      if (it == hint->end() || it->second < vars[i].min || it->second > vars[i].max) {
        usable = false;
        break;
      }
      values[i] = it->second;
    }
    if (usable && fails()) return f;
    if (!*judged) return std::nullopt;
  }

  double total = 1;
  for (const InfixVar& v : vars) total *= static_cast<double>(v.max - v.min + 1);
  if (total <= static_cast<double>(o.max_exhaustive)) {
    for (size_t i = 0; i < vars.size(); ++i) values[i] = vars[i].min;
    while (true) {
      if (fails()) return f;
      if (!*judged) return std::nullopt;
      size_t i = 0;
      for (; i < vars.size(); ++i) {
        if (values[i] < vars[i].max) {
          ++values[i];
          break;
        }
        values[i] = vars[i].min;
      }
      if (i == vars.size()) break;
    }
    return std::nullopt;
  }
  // Sampled: the same samples for the same expression, whatever was checked before it.
  std::mt19937_64 rng(o.seed ^ expr->hash());
  for (int s = 0; s < o.num_samples; ++s) {
    for (size_t i = 0; i < vars.size(); ++i) {
      uint64_t width = static_cast<uint64_t>(vars[i].max - vars[i].min) + 1;
      values[i] = s == 0   ? vars[i].min
                  : s == 1 ? vars[i].max
                           : vars[i].min + static_cast<int64_t>(rng() % width);
    }
    if (fails()) return f;
    if (!*judged) return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

std::optional<RuleFailure> RuleFuzzer::CheckOneUnshrunk(const UOpPtr& expr) {
  if (!Judgeable(expr)) {
    ++skipped_;
    return std::nullopt;
  }
  bool judged = false, changed = false;
  std::optional<RuleFailure> f = CheckImpl(pm_, options_, expr, nullptr, &judged, &changed);
  if (judged) {
    ++checked_;
    changed_ += changed;
  } else {
    ++skipped_;
  }
  return f;
}

std::optional<RuleFailure> RuleFuzzer::CheckOne(const UOpPtr& expr) {
  std::optional<RuleFailure> f = CheckOneUnshrunk(expr);
  if (!f) return f;
  return Shrink(*std::move(f));
}

std::optional<RuleFailure> RuleFuzzer::Shrink(RuleFailure failure) {
  const int original_size = failure.original_size;
  RuleFailure best = std::move(failure);
  int budget = options_.shrink_budget;
  auto try_candidate = [&](const UOpPtr& cand) -> bool {
    if (cand == nullptr || budget <= 0 || !(SizeOf(cand.get()) < SizeOf(best.expr.get()))) return false;
    if (!Judgeable(cand)) return false;
    --budget;
    bool judged = false, changed = false;
    std::optional<RuleFailure> f = CheckImpl(
        pm_, options_, cand, best.assignment.empty() ? nullptr : &best.assignment, &judged, &changed);
    if (!f || f->kind != best.kind) return false;
    best = *std::move(f);
    return true;
  };
  bool progress = true;
  while (progress && budget > 0) {
    progress = false;
    std::vector<const UOp*> nodes = best.expr->Toposort();
    UOpPtr root = best.expr;
    for (auto it = nodes.rbegin(); it != nodes.rend() && !progress; ++it) {
      const UOp* u = *it;
      std::vector<UOpPtr> replacements;
      for (const UOpPtr& s : u->src()) {
        // The root may become a source of another dtype (a comparison its operand).
        if (s->dtype() == u->dtype() || u == root.get()) replacements.push_back(s);
      }
      if (u->dtype().is_bool()) {
        replacements.push_back(UOp::Const(dtypes::kBool, false));
        replacements.push_back(UOp::Const(dtypes::kBool, true));
      } else if (u->dtype() == dtypes::kInt32) {
        if (u->op() == Ops::DEFINE_VAR) {
          int64_t lo = u->vmin().AsInt64(), hi = u->vmax().AsInt64();
          auto at = best.assignment.find(u->var_name());
          int64_t a = at != best.assignment.end() ? at->second : lo;
          replacements.push_back(UOp::Const(dtypes::kInt32, a));
          // Narrower ranges around the failing value.
          for (auto [nlo, nhi] :
               {std::pair{a, a}, std::pair{lo, a}, std::pair{a, hi},
                std::pair{std::max(lo, a - 1), std::min(hi, a + 1)}, std::pair{std::max(lo, int64_t{0}), hi},
                std::pair{lo, std::min(hi, int64_t{0})}}) {
            if (nlo <= nhi && (nlo != lo || nhi != hi)) {
              replacements.push_back(UOp::Variable(u->var_name(), nlo, nhi));
            }
          }
        }
        for (int64_t c : {0, 1, -1, 2}) replacements.push_back(UOp::Const(dtypes::kInt32, c));
        if (u->op() == Ops::CONST) {
          int64_t c = u->const_value().AsInt64();
          replacements.push_back(UOp::Const(dtypes::kInt32, c / 2));
          replacements.push_back(UOp::Const(dtypes::kInt32, c > 0 ? c - 1 : c + 1));
        }
      }
      for (const UOpPtr& r : replacements) {
        if (r.get() == u) continue;
        UOpPtr cand = u == root.get() ? r : root->Substitute({{u, r}});
        if (try_candidate(cand)) {
          progress = true;
          break;
        }
      }
    }
  }
  best.original_size = original_size;
  return best;
}

std::optional<RuleFailure> RuleFuzzer::FuzzOneInput(const uint8_t* data, size_t size) {
  return CheckOne(GenerateFromBytes(data, size));
}

absl::Status RuleFuzzer::Run(int num_expressions) {
  for (int i = 0; i < num_expressions; ++i) {
    UOpPtr expr = Generate();
    // Regenerate a few times rather than count an expression that may overflow.
    for (int tries = 0; tries < 20 && !Judgeable(expr); ++tries) expr = Generate();
    std::optional<RuleFailure> f = CheckOne(expr);
    if (f) return f->ToStatus();
  }
  return absl::OkStatus();
}

}  // namespace uopc
