#include "rewrite/testing/rule_prover.h"

#include <z3.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "uop/util.h"

namespace uopc {
namespace {

constexpr unsigned kBits = 32;

// z3 reports errors through a handler; the default one exits the process. Ours does nothing: every call
// site checks Z3_get_error_code afterwards.
void IgnoreZ3Error(Z3_context, Z3_error_code) {}

bool Supported(DType dt) { return dt == dtypes::kInt32 || dt == dtypes::kBool; }

}  // namespace

// One z3 context (recreated now and then: a context keeps every term it made) and the translation of UOp
// graphs into its terms.
class RuleProver::Z3 {
 public:
  explicit Z3(int timeout_ms) : timeout_ms_(timeout_ms) { Reset(); }
  ~Z3() {
    if (ctx_ != nullptr) Z3_del_context(ctx_);
  }

  // Recreates the context every few hundred queries.
  void MaybeReset() {
    if (++queries_ % 200 == 0) Reset();
  }

  // Whether before and after can differ (or after leave its bounds, or use an undefined shift); fills
  // *assignment with the variables' values when they can.
  Verdict Prove(const UOp* before, const UOp* after, absl::flat_hash_map<std::string, int64_t>* assignment) {
    vars_.clear();
    ranges_.clear();
    std::vector<Z3_ast> before_defined, after_defined;
    Z3_ast b = Translate(before, &before_defined);
    Z3_ast a = b == nullptr ? nullptr : Translate(after, &after_defined);
    if (a == nullptr || Z3_get_error_code(ctx_) != Z3_OK) return Verdict::kUnsupported;
    if (before->dtype() != after->dtype()) return Verdict::kUnsupported;

    std::vector<Z3_ast> goal = {Z3_mk_not(ctx_, Z3_mk_eq(ctx_, b, a))};
    for (Z3_ast d : after_defined) goal.push_back(Z3_mk_not(ctx_, d));
    OutOfBounds(after, a, &goal);
    OutOfBounds(before, b, &goal);

    Z3_solver s = Z3_mk_solver_for_logic(ctx_, Z3_mk_string_symbol(ctx_, "QF_BV"));
    Z3_solver_inc_ref(ctx_, s);
    Z3_params p = Z3_mk_params(ctx_);
    Z3_params_inc_ref(ctx_, p);
    Z3_params_set_uint(ctx_, p, Z3_mk_string_symbol(ctx_, "timeout"), static_cast<unsigned>(timeout_ms_));
    Z3_solver_set_params(ctx_, s, p);
    Z3_params_dec_ref(ctx_, p);
    for (Z3_ast r : ranges_) Z3_solver_assert(ctx_, s, r);
    for (Z3_ast d : before_defined) Z3_solver_assert(ctx_, s, d);
    Z3_solver_assert(ctx_, s, Z3_mk_or(ctx_, static_cast<unsigned>(goal.size()), goal.data()));
    Z3_lbool r = Z3_solver_check(ctx_, s);
    Verdict v = Verdict::kTimedOut;
    if (Z3_get_error_code(ctx_) != Z3_OK) {
      v = Verdict::kTimedOut;
    } else if (r == Z3_L_FALSE) {
      v = Verdict::kProven;
    } else if (r == Z3_L_TRUE) {
      v = Verdict::kFound;
      Z3_model m = Z3_solver_get_model(ctx_, s);
      Z3_model_inc_ref(ctx_, m);
      if (EnvFlag("UOPC_PROVER_DEBUG")) {
        std::fprintf(stderr, "%s\nmodel:\n%s\n", Z3_solver_to_string(ctx_, s), Z3_model_to_string(ctx_, m));
      }
      for (const auto& [name, var] : vars_) {
        Z3_ast value = nullptr;
        uint64_t u = 0;
        if (Z3_model_eval(ctx_, m, var, true, &value) && Z3_get_numeral_uint64(ctx_, value, &u)) {
          (*assignment)[name] = static_cast<int32_t>(static_cast<uint32_t>(u));
        }
      }
      Z3_model_dec_ref(ctx_, m);
    }
    Z3_solver_dec_ref(ctx_, s);
    return v;
  }

 private:
  void Reset() {
    if (ctx_ != nullptr) Z3_del_context(ctx_);
    Z3_config cfg = Z3_mk_config();
    Z3_set_param_value(cfg, "model", "true");
    ctx_ = Z3_mk_context(cfg);
    Z3_del_config(cfg);
    Z3_set_error_handler(ctx_, IgnoreZ3Error);
    bv_ = Z3_mk_bv_sort(ctx_, kBits);
  }

  Z3_ast Bv(int64_t v) {
    return Z3_mk_unsigned_int64(ctx_, static_cast<uint32_t>(static_cast<int32_t>(v)), bv_);
  }
  Z3_ast Zero() { return Bv(0); }

  // The value of `u` is outside [vmin, vmax] of `u`.
  void OutOfBounds(const UOp* u, Z3_ast t, std::vector<Z3_ast>* goal) {
    if (u->dtype().is_bool()) {
      if (u->vmin().AsBool()) goal->push_back(Z3_mk_not(ctx_, t));
      if (!u->vmax().AsBool()) goal->push_back(t);
      return;
    }
    // Bounds beyond int32 (range analysis of a graph that may wrap) bound nothing.
    if (u->vmin() > ConstValue::Int(INT32_MIN))
      goal->push_back(Z3_mk_bvslt(ctx_, t, Bv(u->vmin().AsInt64())));
    if (u->vmax() < ConstValue::Int(INT32_MAX))
      goal->push_back(Z3_mk_bvslt(ctx_, Bv(u->vmax().AsInt64()), t));
  }

  // The term for `root`, or null when a node has an op or dtype this does not translate. Conditions under
  // which exec_alu can evaluate the graph (shift counts >= 0) go to *defined.
  Z3_ast Translate(const UOp* root, std::vector<Z3_ast>* defined) {
    absl::flat_hash_map<const UOp*, Z3_ast> term;
    for (const UOp* u : root->Toposort()) {
      if (!Supported(u->dtype())) return nullptr;
      Z3_ast t = nullptr;
      const bool is_bool = u->dtype().is_bool();
      auto src = [&](int i) { return term[u->src(i)]; };
      auto src_bool = [&](int i) { return u->src(i)->dtype().is_bool(); };
      switch (u->op()) {
        case Ops::CONST:
          if (u->const_value().is_float()) return nullptr;
          t = is_bool ? (u->const_value().AsBool() ? Z3_mk_true(ctx_) : Z3_mk_false(ctx_))
                      : Bv(u->const_value().AsInt64());
          break;
        case Ops::DEFINE_VAR: {
          if (is_bool) return nullptr;
          auto it = vars_.find(u->var_name());
          if (it == vars_.end()) {
            Z3_ast v = Z3_mk_const(ctx_, Z3_mk_string_symbol(ctx_, u->var_name().c_str()), bv_);
            it = vars_.emplace(u->var_name(), v).first;
            ranges_.push_back(Z3_mk_bvsle(ctx_, Bv(u->vmin().AsInt64()), v));
            ranges_.push_back(Z3_mk_bvsle(ctx_, v, Bv(u->vmax().AsInt64())));
          }
          t = it->second;
          break;
        }
        case Ops::CAST:
          if (src_bool(0) == is_bool) {
            t = src(0);
          } else if (is_bool) {
            t = Z3_mk_not(ctx_, Z3_mk_eq(ctx_, src(0), Zero()));
          } else {
            t = Z3_mk_ite(ctx_, src(0), Bv(1), Zero());
          }
          break;
        case Ops::ADD:
        case Ops::MUL:
        case Ops::MAX:
          if (is_bool) {
            Z3_ast args[2] = {src(0), src(1)};
            t = u->op() == Ops::MUL ? Z3_mk_and(ctx_, 2, args) : Z3_mk_or(ctx_, 2, args);
          } else if (u->op() == Ops::ADD) {
            t = Z3_mk_bvadd(ctx_, src(0), src(1));
          } else if (u->op() == Ops::MUL) {
            t = Z3_mk_bvmul(ctx_, src(0), src(1));
          } else {
            t = Z3_mk_ite(ctx_, Z3_mk_bvslt(ctx_, src(0), src(1)), src(1), src(0));
          }
          break;
        case Ops::AND:
        case Ops::OR:
        case Ops::XOR:
          if (is_bool) {
            Z3_ast args[2] = {src(0), src(1)};
            t = u->op() == Ops::AND  ? Z3_mk_and(ctx_, 2, args)
                : u->op() == Ops::OR ? Z3_mk_or(ctx_, 2, args)
                                     : Z3_mk_xor(ctx_, src(0), src(1));
          } else {
            t = u->op() == Ops::AND  ? Z3_mk_bvand(ctx_, src(0), src(1))
                : u->op() == Ops::OR ? Z3_mk_bvor(ctx_, src(0), src(1))
                                     : Z3_mk_bvxor(ctx_, src(0), src(1));
          }
          break;
        case Ops::IDIV:
        case Ops::MOD: {
          if (is_bool) return nullptr;
          // x // 0 = 0 and x % 0 = x; otherwise SMT-LIB's bvsdiv/bvsrem are C's (INT_MIN // -1 wraps).
          Z3_ast zero_divisor = Z3_mk_eq(ctx_, src(1), Zero());
          t = u->op() == Ops::IDIV
                  ? Z3_mk_ite(ctx_, zero_divisor, Zero(), Z3_mk_bvsdiv(ctx_, src(0), src(1)))
                  : Z3_mk_ite(ctx_, zero_divisor, src(0), Z3_mk_bvsrem(ctx_, src(0), src(1)));
          break;
        }
        case Ops::SHL:
        case Ops::SHR:
          if (is_bool || src_bool(1)) return nullptr;
          // A count >= 32 gives 0 (SHL) or the sign (SHR) in SMT-LIB as in exec_alu; a negative one is an
          // error.
          defined->push_back(Z3_mk_bvsle(ctx_, Zero(), src(1)));
          t = u->op() == Ops::SHL ? Z3_mk_bvshl(ctx_, src(0), src(1)) : Z3_mk_bvashr(ctx_, src(0), src(1));
          break;
        case Ops::CMPLT:
          if (src_bool(0)) {
            Z3_ast args[2] = {Z3_mk_not(ctx_, src(0)), src(1)};
            t = Z3_mk_and(ctx_, 2, args);
          } else {
            t = Z3_mk_bvslt(ctx_, src(0), src(1));
          }
          break;
        case Ops::CMPNE:
          t = Z3_mk_not(ctx_, Z3_mk_eq(ctx_, src(0), src(1)));
          break;
        case Ops::WHERE: {
          Z3_ast cond = src_bool(0) ? src(0) : Z3_mk_not(ctx_, Z3_mk_eq(ctx_, src(0), Zero()));
          t = Z3_mk_ite(ctx_, cond, src(1), src(2));
          break;
        }
        default:
          return nullptr;
      }
      if (t == nullptr || Z3_get_error_code(ctx_) != Z3_OK) return nullptr;
      term[u] = t;
    }
    return term[root];
  }

  int timeout_ms_;
  int64_t queries_ = 0;
  Z3_context ctx_ = nullptr;
  Z3_sort bv_ = nullptr;
  absl::flat_hash_map<std::string, Z3_ast> vars_;
  std::vector<Z3_ast> ranges_;
};

absl::string_view RuleProverVerdictName(RuleProver::Verdict v) {
  switch (v) {
    case RuleProver::Verdict::kProven:
      return "proven";
    case RuleProver::Verdict::kTimedOut:
      return "timed out";
    case RuleProver::Verdict::kFound:
      return "counterexample";
    case RuleProver::Verdict::kUnchanged:
      return "not rewritten";
    case RuleProver::Verdict::kUnsupported:
      return "unsupported";
    case RuleProver::Verdict::kSkipped:
      return "skipped";
  }
  return "?";
}

RuleProver::RuleProver(const PatternMatcher& pm, RuleProverOptions options)
    : pm_(pm), options_(std::move(options)), fuzzer_(pm, options_.fuzzer), z3_(new Z3(options_.timeout_ms)) {
  for (size_t i = 0; i < pm.size(); ++i) {
    results_.push_back({pm.rule(i).location(), pm.rule(i).pattern().ToString()});
  }
}

RuleProver::~RuleProver() { delete z3_; }

RuleProver::Verdict RuleProver::ProveOne(const UOpPtr& expr, std::optional<RuleFailure>* failure) {
  failure->reset();
  // The fuzzer's own check first: its sampled assignments find most wrong rules at once.
  std::optional<RuleFailure> sampled = fuzzer_.CheckOneUnshrunk(expr);
  const UOpPtr rewritten = fuzzer_.last_rewritten();
  fired_ = fuzzer_.last_fired();
  if (sampled) {
    *failure = fuzzer_.CheckAt(expr, sampled->assignment);
    if (!*failure) *failure = sampled;
    return Verdict::kFound;
  }
  if (rewritten == nullptr) return Verdict::kSkipped;
  if (rewritten == expr) return Verdict::kUnchanged;
  z3_->MaybeReset();
  absl::flat_hash_map<std::string, int64_t> assignment;
  Verdict v = z3_->Prove(expr.get(), rewritten.get(), &assignment);
  if (v != Verdict::kFound) return v;
  *failure = fuzzer_.CheckAt(expr, assignment);
  if (!*failure) {
    // exec_alu agrees with itself at z3's assignment: the translation above is wrong, not the rule.
    RuleFailure f;
    f.kind = RuleFailure::Kind::kValueMismatch;
    f.expr = expr;
    f.rewritten = rewritten;
    f.assignment = assignment;
    f.original_size = static_cast<int>(expr->Toposort().size());
    for (const UOp* u : expr->Toposort()) {
      if (u->op() == Ops::DEFINE_VAR)
        f.vars.push_back({u->var_name(), u->vmin().AsInt64(), u->vmax().AsInt64()});
    }
    f.detail = "z3 found this assignment, but exec_alu gives equal values: a bug in the prover's translation";
    *failure = f;
  }
  return Verdict::kFound;
}

absl::Status RuleProver::Run() {
  for (size_t i = 0; i < pm_.size(); ++i) {
    bool reported = false;
    // Instantiations in which rule i itself fired count towards the budget; others are tried up to 4 times
    // as many (the callback may decline, or an earlier rule may rewrite the node first).
    int fired_here = 0;
    for (int k = 0; k < 4 * options_.instantiations_per_rule && fired_here < options_.instantiations_per_rule;
         ++k) {
      UOpPtr expr = fuzzer_.GenerateForRule(i);
      if (expr == nullptr) {
        if (k >= options_.instantiations_per_rule && fired_here == 0) break;  // not instantiable
        continue;
      }
      std::optional<RuleFailure> failure;
      Verdict v = ProveOne(expr, &failure);
      std::vector<int> fired = fired_;
      fired_here += std::find(fired.begin(), fired.end(), static_cast<int>(i)) != fired.end();
      if (v == Verdict::kFound && failure) {
        // The rules that fired on the counterexample's expression (the shrunk one may differ).
        if (fired.empty()) fired.push_back(static_cast<int>(i));
        if (!reported && static_cast<int>(findings_.size()) < options_.max_findings) {
          findings_.push_back(*failure);
          reported = true;
        }
      }
      for (int r : fired) {
        RuleProof& p = results_[r];
        switch (v) {
          case Verdict::kProven:
            ++p.proven;
            break;
          case Verdict::kTimedOut:
            ++p.timed_out;
            break;
          case Verdict::kFound:
            ++p.found;
            break;
          case Verdict::kUnsupported:
            ++p.unsupported;
            break;
          default:
            break;
        }
      }
    }
  }
  if (findings_.empty()) return absl::OkStatus();
  std::vector<std::string> reports;
  for (const RuleFailure& f : findings_) reports.push_back(f.ToString());
  return absl::InternalError(
      absl::StrCat(findings_.size(), " counterexamples:\n", absl::StrJoin(reports, "\n")));
}

std::string RuleProver::Report() const {
  std::string s =
      "| rule | pattern | proven | timed out | found | unsupported |\n|---|---|---:|---:|---:|---:|\n";
  RuleProof total;
  int exercised = 0;
  for (const RuleProof& p : results_) {
    std::string pattern = p.pattern;
    for (char& ch : pattern) {
      if (ch == '|') ch = '/';
    }
    absl::StrAppendFormat(&s, "| %s | `%s` | %d | %d | %d | %d |\n", p.location, pattern, p.proven,
                          p.timed_out, p.found, p.unsupported);
    total.proven += p.proven;
    total.timed_out += p.timed_out;
    total.found += p.found;
    total.unsupported += p.unsupported;
    exercised += p.proven + p.timed_out + p.found > 0;
  }
  absl::StrAppendFormat(
      &s,
      "\n%d of %d rules took part in a proven, timed-out or refuted rewrite; rewrites counted per "
      "rule that fired in them: %d proven, %d timed out, %d counterexamples, %d unsupported.\n",
      exercised, results_.size(), total.proven, total.timed_out, total.found, total.unsupported);
  return s;
}

}  // namespace uopc
