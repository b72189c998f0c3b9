#include "rewrite/testing/rule_fuzzer.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "rewrite/symbolic.h"
#include "uop/exec_alu.h"
#include "uop/status_macros.h"

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
        UOPC_ASSIGN_OR_RETURN(scratch[i], ExecCast(scratch[p.srcs[i][0]], u->src(0)->dtype(), u->dtype()));
        break;
      }
      default: {
        if (!groups::kALU.contains(u->op())) {
          return absl::InvalidArgumentError(absl::StrCat("cannot evaluate ", OpName(u->op())));
        }
        operands.clear();
        for (int s : p.srcs[i]) operands.push_back(scratch[s]);
        DType operand_dtype = u->src(u->op() == Ops::WHERE ? 1 : 0)->dtype();
        UOPC_ASSIGN_OR_RETURN(scratch[i], ExecAlu(u->op(), u->dtype(), operands, operand_dtype));
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

struct RuleFuzzer::CoverageState {
  std::vector<RuleCoverage> rules;
  bool counting = false;          // only the first rewrite of a checked expression counts
  std::vector<char> matched_now;  // per rule: its callback ran in this rewrite
  std::vector<int> fired;         // rules that replaced a node in the last counted rewrite

  void Begin() {
    counting = true;
    std::fill(matched_now.begin(), matched_now.end(), 0);
    fired.clear();
  }
  void End() {
    counting = false;
    for (size_t i = 0; i < rules.size(); ++i) rules[i].matched += matched_now[i];
    std::sort(fired.begin(), fired.end());
    fired.erase(std::unique(fired.begin(), fired.end()), fired.end());
  }
};

namespace {

// pm's rules again, with callbacks that count into `state`; same patterns, order and locations.
PatternMatcher CountingMatcher(const PatternMatcher& pm,
                               const std::shared_ptr<RuleFuzzer::CoverageState>& state) {
  state->rules.resize(pm.size());
  state->matched_now.assign(pm.size(), 0);
  std::vector<RuleSpec> specs;
  for (size_t i = 0; i < pm.size(); ++i) {
    const Rule& rule = pm.rule(i);
    state->rules[i].location = rule.location();
    state->rules[i].pattern = rule.pattern().ToString();
    RuleFn inner = rule.fn();
    const int index = static_cast<int>(i);
    RuleFn counting(
        [inner, state, index](const Match& m) -> UOpPtr {
          UOpPtr out = inner(m);
          if (state->counting) {
            state->matched_now[index] = 1;
            if (out != nullptr && out != m.root()) {
              ++state->rules[index].replaced;
              state->fired.push_back(index);
            } else {
              ++state->rules[index].declined;
            }
          }
          return out;
        },
        rule.fn().file(), rule.fn().line());
    specs.push_back(RuleSpec{rule.pattern(), std::move(counting)});
  }
  return PatternMatcher(std::move(specs));
}

}  // namespace

RuleFuzzer::RuleFuzzer(const PatternMatcher& pm, RuleFuzzerOptions options)
    : pm_(pm),
      coverage_(std::make_shared<CoverageState>()),
      counting_pm_(CountingMatcher(pm, coverage_)),
      options_(std::move(options)),
      rng_(options_.seed) {}

const std::vector<RuleCoverage>& RuleFuzzer::coverage() const { return coverage_->rules; }

const std::vector<int>& RuleFuzzer::last_fired() const { return coverage_->fired; }

int RuleFuzzer::rules_fired() const {
  int n = 0;
  for (const RuleCoverage& c : coverage_->rules) n += c.replaced > 0;
  return n;
}

std::string RuleFuzzer::CoverageReport() const {
  std::string s;
  for (const RuleCoverage& c : coverage_->rules) {
    absl::StrAppendFormat(&s, "%-24s generated %6d  matched %6d  replaced %6d  declined %6d  %s\n",
                          c.location, c.generated, c.matched, c.replaced, c.declined, c.pattern);
  }
  absl::StrAppend(&s, rules_fired(), " of ", coverage_->rules.size(), " rules fired\n");
  return s;
}

namespace {

// Random expressions over a fixed list of variables (the generator of the undirected expressions, and of the
// subexpressions that captures bind to).
class ExprGen {
 public:
  ExprGen(RuleFuzzer::Choices& ch, const RuleFuzzerOptions& o, std::vector<UOpPtr> vars)
      : ch_(ch), o_(o), vars_(std::move(vars)) {
    for (Ops op : {Ops::ADD, Ops::MUL, Ops::IDIV, Ops::MOD, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL,
                   Ops::SHR, Ops::WHERE}) {
      if (o.ops.contains(op)) int_ops_.push_back(op);
    }
    for (Ops op : {Ops::CMPLT, Ops::CMPNE, Ops::AND, Ops::OR, Ops::XOR, Ops::WHERE}) {
      if (o.ops.contains(op)) bool_ops_.push_back(op);
    }
    has_cmp_ = o.ops.contains(Ops::CMPLT) || o.ops.contains(Ops::CMPNE);
  }
  virtual ~ExprGen() = default;

  // Recursion depth is bounded by `depth` (at most a few dozen).
  UOpPtr Random(DType dt, int depth) {
    if (dt.is_bool()) {
      if (depth <= 0 || bool_ops_.empty() || ch_.Chance(20)) {
        if (has_cmp_ && ch_.Chance(70)) {
          return UOp::New(CmpOp(), dtypes::kBool, {IntLeaf(), IntLeaf()});
        }
        return UOp::Const(dtypes::kBool, ch_.Chance(50));
      }
      Ops op = bool_ops_[ch_.Below(bool_ops_.size())];
      switch (op) {
        case Ops::CMPLT:
        case Ops::CMPNE: {
          DType operand = (op == Ops::CMPNE && ch_.Chance(15)) ? dtypes::kBool : dtypes::kInt32;
          return UOp::New(op, dtypes::kBool, {Random(operand, depth - 1), Random(operand, depth - 1)});
        }
        case Ops::WHERE:
          return UOp::New(op, dtypes::kBool,
                          {Random(dtypes::kBool, depth - 1), Random(dtypes::kBool, depth - 1),
                           Random(dtypes::kBool, depth - 1)});
        default:
          return UOp::New(op, dtypes::kBool,
                          {Random(dtypes::kBool, depth - 1), Random(dtypes::kBool, depth - 1)});
      }
    }
    if (depth <= 0 || int_ops_.empty() || ch_.Chance(25)) return IntLeaf();
    Ops op = int_ops_[ch_.Below(int_ops_.size())];
    switch (op) {
      case Ops::SHL:
      case Ops::SHR:
        return UOp::New(op, dtypes::kInt32, {Random(dtypes::kInt32, depth - 1), ShiftCount()});
      case Ops::WHERE:
        return UOp::New(op, dtypes::kInt32,
                        {Random(dtypes::kBool, depth - 1), Random(dtypes::kInt32, depth - 1),
                         Random(dtypes::kInt32, depth - 1)});
      default: {
        UOpPtr a = Random(dtypes::kInt32, depth - 1);
        // A constant right operand is what most rules look for.
        UOpPtr b = ch_.Chance(40) ? IntConst() : Random(dtypes::kInt32, depth - 1);
        return UOp::New(op, dtypes::kInt32, {a, b});
      }
    }
  }

 protected:
  virtual int64_t IntConstValue() {
    return ch_.Chance(60) ? ch_.Between(-2, 4) : ch_.Between(-o_.max_const, o_.max_const);
  }
  UOpPtr IntConst() { return UOp::Const(dtypes::kInt32, IntConstValue()); }
  UOpPtr IntLeaf() { return ch_.Chance(70) ? vars_[ch_.Below(vars_.size())] : IntConst(); }
  // Never a negative count (an error in exec_alu); mostly small ones so SHL rarely overflows.
  UOpPtr ShiftCount() {
    int64_t n = ch_.Chance(80) ? ch_.Between(0, 4) : ch_.Between(0, 31);
    return UOp::Const(dtypes::kInt32, n);
  }
  Ops CmpOp() {
    if (!o_.ops.contains(Ops::CMPLT)) return Ops::CMPNE;
    if (!o_.ops.contains(Ops::CMPNE)) return Ops::CMPLT;
    return ch_.Chance(50) ? Ops::CMPLT : Ops::CMPNE;
  }

  RuleFuzzer::Choices& ch_;
  const RuleFuzzerOptions& o_;
  std::vector<UOpPtr> vars_;
  std::vector<Ops> int_ops_, bool_ops_;
  bool has_cmp_ = false;
};

std::string VarName(int i) {
  return std::string(1, static_cast<char>('a' + i % 26)) + (i >= 26 ? std::to_string(i) : "");
}

// Instantiations of one pattern: see the header. Every choice comes from the Choices, so bytes give the same
// expression every time.
class PatternGen : public ExprGen {
 public:
  PatternGen(RuleFuzzer::Choices& ch, const RuleFuzzerOptions& o) : ExprGen(ch, o, MakeVars(ch, o)) {}

  // The pattern instantiated, or null when this attempt failed (an op, dtype or arg the generator does not
  // make, or choices that contradict the pattern).
  UOpPtr Instantiate(const UPat& pat) {
    bound_.clear();
    consts_.clear();
    CollectConsts(pat, 0);
    return Inst(pat, std::nullopt, 0);
  }

  // e inside a random context of its dtype's: e + k, e * k, e < k, where(v < k, e, k), ...
  UOpPtr Wrap(const UOpPtr& e) {
    const UOpPtr v = vars_[ch_.Below(vars_.size())];
    if (e->dtype().is_bool()) {
      switch (ch_.Below(5)) {
        case 0:
          return e & UOp::New(Ops::CMPLT, dtypes::kBool, {v, IntConst()});
        case 1:
          return e | UOp::New(Ops::CMPLT, dtypes::kBool, {IntConst(), v});
        case 2:
          return UOp::New(Ops::WHERE, dtypes::kInt32, {e, v, IntConst()});
        case 3:
          return UOp::New(Ops::CMPNE, dtypes::kBool, {e, UOp::Const(dtypes::kBool, true)});
        default:
          return UOp::New(Ops::CMPNE, dtypes::kBool, {e, Random(dtypes::kBool, 1)});
      }
    }
    switch (ch_.Below(9)) {
      case 0:
        return e + IntConst();
      case 1:
        return e * IntConst();
      case 2:
        return UOp::New(Ops::CMPLT, dtypes::kBool, {e, IntConst()});
      case 3:
        return UOp::New(Ops::CMPLT, dtypes::kBool, {IntConst(), e});
      case 4:
        return UOp::New(Ops::WHERE, dtypes::kInt32,
                        {UOp::New(Ops::CMPLT, dtypes::kBool, {v, IntConst()}), e, IntConst()});
      case 5:
        return UOp::New(Ops::IDIV, dtypes::kInt32, {e, IntConst()});
      case 6:
        return UOp::New(Ops::MOD, dtypes::kInt32, {e, IntConst()});
      case 7:
        return e + v;
      default:
        return UOp::New(Ops::MAX, dtypes::kInt32, {e, IntConst()});
    }
  }

 private:
  static std::vector<UOpPtr> MakeVars(RuleFuzzer::Choices& ch, const RuleFuzzerOptions& o) {
    std::vector<UOpPtr> vars;
    for (int i = 0; i < std::max(o.num_vars, 1); ++i) {
      int64_t lo, hi;
      switch (ch.Below(8)) {
        case 0:
        case 1:  // straddles 0
          lo = -ch.Between(1, 4);
          hi = ch.Between(1, 8);
          break;
        case 2:  // from 0
          lo = 0;
          hi = ch.Between(1, 12);
          break;
        case 3:  // from 1
          lo = 1;
          hi = ch.Between(1, 12);
          break;
        case 4:  // negative
          hi = -ch.Between(0, 1);
          lo = hi - ch.Between(1, 8);
          break;
        case 5:  // one value
          lo = hi = ch.Between(-3, 8);
          break;
        default:  // anywhere in the options' range
          lo = ch.Between(o.var_min, o.var_max);
          hi = ch.Between(lo, std::min(o.var_max, lo + 10));
      }
      vars.push_back(UOp::Variable(VarName(i), lo, hi));
    }
    return vars;
  }

  void CollectConsts(const UPat& p, int depth) {
    if (depth > 16) return;
    const internal::UPatNode& n = p.node();
    if (n.const_arg && !n.const_arg->is_float()) consts_.push_back(n.const_arg->AsInt64());
    for (const UPat& s : n.src) CollectConsts(s, depth + 1);
  }

  int64_t Clamp(int64_t v) const { return std::clamp<int64_t>(v, -(int64_t{1} << 30), int64_t{1} << 30); }

  // Constants where rules break.
  int64_t IntConstValue() override {
    switch (ch_.Below(10)) {
      case 0:
      case 1: {
        static constexpr int64_t kSmall[] = {0, 1, -1, 2, -2};
        return kSmall[ch_.Below(5)];
      }
      case 2:
      case 3:
        if (!consts_.empty()) {
          int64_t k = consts_[ch_.Below(consts_.size())];
          switch (ch_.Below(5)) {
            case 0:
              return Clamp(-k);
            case 1:
              return Clamp(k + 1);
            case 2:
              return Clamp(k - 1);
            case 3:
              if (consts_.size() >= 2) {
                int64_t k2 = consts_[ch_.Below(consts_.size())];
                return ch_.Chance(50) ? Clamp(k * k2) : Clamp(k + k2);
              }
              return k;
            default:
              return k;
          }
        }
        return ch_.Between(-2, 4);
      case 4: {  // powers of two and their neighbours
        int64_t p = int64_t{1} << ch_.Between(0, 6);
        p += ch_.Between(-1, 1);
        return ch_.Chance(25) ? -p : p;
      }
      case 5: {  // the ends of the variables' ranges
        const UOpPtr& v = vars_[ch_.Below(vars_.size())];
        int64_t end = ch_.Chance(50) ? v->vmin().AsInt64() : v->vmax().AsInt64();
        return end + ch_.Between(-1, 1);
      }
      case 6:
        return -ch_.Between(1, o_.max_const);
      default:
        return ch_.Between(-o_.max_const, o_.max_const);
    }
  }

  UOpPtr NewConst(DType dt) {
    UOpPtr k = dt.is_bool() ? UOp::Const(dtypes::kBool, ch_.Chance(50)) : IntConst();
    if (!dt.is_bool()) consts_.push_back(k->const_value().AsInt64());
    return k;
  }

  // A capture with no op: a variable, a constant or a small random subexpression.
  UOpPtr Leaf(DType dt, bool shift_count) {
    if (shift_count) return ch_.Chance(70) ? ShiftCount() : UOp::Const(dtypes::kInt32, ch_.Between(0, 31));
    if (dt.is_bool()) {
      switch (ch_.Below(4)) {
        case 0:
          return UOp::Const(dtypes::kBool, ch_.Chance(50));
        case 1:
          return Random(dtypes::kBool, static_cast<int>(ch_.Between(1, 2)));
        default:
          return UOp::New(CmpOp(), dtypes::kBool, {vars_[ch_.Below(vars_.size())], IntConst()});
      }
    }
    switch (ch_.Below(10)) {
      case 0:
      case 1:
        return NewConst(dt);
      case 2:
      case 3:
      case 4:
        return Random(dtypes::kInt32, static_cast<int>(ch_.Between(1, 2)));
      default:
        return vars_[ch_.Below(vars_.size())];
    }
  }

  // The dtypes a node of this pattern may take: int32 and/or bool, filtered by the pattern and `want`.
  std::optional<DType> PickDType(const DTypeSet& set, std::optional<DType> want, int bool_percent) {
    if (want) {
      if (!set.any() && !set.Matches(*want)) return std::nullopt;
      return want;
    }
    bool i = set.any() || set.Matches(dtypes::kInt32), b = set.any() || set.Matches(dtypes::kBool);
    if (i && b) return ch_.Chance(bool_percent) ? dtypes::kBool : dtypes::kInt32;
    if (i) return dtypes::kInt32;
    if (b) return dtypes::kBool;
    return std::nullopt;
  }

  UOpPtr Bind(const internal::UPatNode& n, UOpPtr u) {
    if (u != nullptr && !n.name.empty()) bound_[n.name] = u;
    return u;
  }

  UOpPtr Inst(const UPat& pat, std::optional<DType> want, int depth, bool shift_count = false) {
    if (depth > 12) return nullptr;
    const internal::UPatNode& n = pat.node();
    if (!n.name.empty()) {
      auto it = bound_.find(n.name);
      if (it != bound_.end()) {
        const UOpPtr& b = it->second;
        if ((want && b->dtype() != *want) || (!n.dtype.any() && !n.dtype.Matches(b->dtype()))) return nullptr;
        return b;
      }
    }
    if (n.src_kind == UPat::SrcKind::kAlternatives) {
      if (n.src.empty()) return nullptr;
      return Bind(n, Inst(n.src[ch_.Below(n.src.size())], want, depth + 1, shift_count));
    }
    if (n.arg) return nullptr;
    // Constants.
    if (n.const_arg) {
      std::optional<DType> dt = PickDType(n.dtype, want, 30);
      if (!dt || n.const_arg->is_float()) return nullptr;
      if (!n.any_op && !n.ops.contains(Ops::CONST)) return nullptr;
      if (dt->is_bool()) {
        if (n.const_arg->AsInt() != 0 && n.const_arg->AsInt() != 1) return nullptr;
        return Bind(n, UOp::Const(dtypes::kBool, n.const_arg->AsInt() != 0));
      }
      return Bind(n, UOp::Const(dtypes::kInt32, n.const_arg->AsInt64()));
    }
    const bool leaf_pattern = n.src_kind == UPat::SrcKind::kNone;
    if (n.any_op) {
      if (leaf_pattern) {
        std::optional<DType> dt = PickDType(n.dtype, want, 15);
        if (!dt) return nullptr;
        return Bind(n, Leaf(*dt, shift_count));
      }
    }
    std::vector<Ops> candidates;
    for (Ops op : {Ops::ADD, Ops::MUL, Ops::IDIV, Ops::MOD, Ops::MAX, Ops::AND, Ops::OR, Ops::XOR, Ops::SHL,
                   Ops::SHR, Ops::CMPLT, Ops::CMPNE, Ops::WHERE, Ops::CAST, Ops::CONST, Ops::DEFINE_VAR}) {
      if (!n.any_op && !n.ops.contains(op)) continue;
      if (n.any_op && (op == Ops::CONST || op == Ops::DEFINE_VAR)) continue;
      if (!leaf_pattern && (op == Ops::CONST || op == Ops::DEFINE_VAR)) continue;
      candidates.push_back(op);
    }
    if (candidates.empty()) return nullptr;
    Ops op = candidates[ch_.Below(candidates.size())];
    if (shift_count && op != Ops::CONST) return nullptr;
    if (op == Ops::CONST) {
      std::optional<DType> dt = PickDType(n.dtype, want, 15);
      if (!dt) return nullptr;
      if (shift_count) return Bind(n, Leaf(*dt, true));
      return Bind(n, NewConst(*dt));
    }
    if (op == Ops::DEFINE_VAR) {
      std::optional<DType> dt = PickDType(n.dtype, want, 0);
      if (!dt || dt->is_bool()) return nullptr;
      return Bind(n, vars_[ch_.Below(vars_.size())]);
    }
    if (op == Ops::CAST) {
      // Between int32 and bool, either way (or to the same dtype, which the rules remove).
      std::optional<DType> dt = PickDType(n.dtype, want, 30);
      if (!dt) return nullptr;
      DType from = ch_.Chance(50) ? dtypes::kBool : dtypes::kInt32;
      UOpPtr s;
      if (n.src_kind == UPat::SrcKind::kNone) {
        s = Random(from, static_cast<int>(ch_.Between(0, 2)));
      } else if (n.src.size() == 1 &&
                 (n.src_kind == UPat::SrcKind::kTuple || n.src_kind == UPat::SrcKind::kAnyOrder ||
                  n.src_kind == UPat::SrcKind::kRepeat)) {
        s = Inst(n.src[0], from, depth + 1);
      }
      if (s == nullptr) return nullptr;
      return Bind(n, UOp::New(Ops::CAST, *dt, {s}));
    }
    const bool cmp = op == Ops::CMPLT || op == Ops::CMPNE;
    const bool int_only = op == Ops::IDIV || op == Ops::MOD || op == Ops::SHL || op == Ops::SHR;
    const bool bitwise = op == Ops::AND || op == Ops::OR || op == Ops::XOR;
    std::optional<DType> dt;
    if (cmp) {
      dt = PickDType(n.dtype, want.value_or(dtypes::kBool), 0);
    } else {
      dt = PickDType(n.dtype, want, bitwise ? 35 : 10);
    }
    if (!dt || (int_only && dt->is_bool())) return nullptr;
    const int arity = op == Ops::WHERE ? 3 : 2;
    // The operands' dtypes (a comparison's: int32, or bool for CMPNE now and then).
    std::vector<DType> operand(arity, *dt);
    if (cmp) {
      DType o = op == Ops::CMPNE && ch_.Chance(20) ? dtypes::kBool : dtypes::kInt32;
      operand.assign(arity, o);
    }
    if (op == Ops::WHERE) operand[0] = dtypes::kBool;
    std::vector<UOpPtr> srcs;
    switch (n.src_kind) {
      case UPat::SrcKind::kNone:
        for (int i = 0; i < arity; ++i) {
          if ((op == Ops::SHL || op == Ops::SHR) && i == 1) {
            srcs.push_back(ShiftCount());
          } else {
            srcs.push_back(Random(operand[i], static_cast<int>(ch_.Between(0, 2))));
          }
        }
        break;
      case UPat::SrcKind::kTuple:
      case UPat::SrcKind::kAnyOrder: {
        if (static_cast<int>(n.src.size()) != arity) return nullptr;
        std::vector<int> order(arity);
        for (int i = 0; i < arity; ++i) order[i] = i;
        // Any order: the sources are made in the pattern's order (names bind as the matcher sees them) and
        // placed in a random permutation.
        if (n.src_kind == UPat::SrcKind::kAnyOrder) {
          for (int i = arity - 1; i > 0; --i) std::swap(order[i], order[ch_.Below(i + 1)]);
        }
        srcs.assign(arity, nullptr);
        for (int i = 0; i < arity; ++i) {
          int slot = order[i];
          bool count = (op == Ops::SHL || op == Ops::SHR) && slot == 1;
          UOpPtr s = Inst(n.src[i], operand[slot], depth + 1, count);
          if (s == nullptr) return nullptr;
          srcs[slot] = s;
        }
        break;
      }
      case UPat::SrcKind::kRepeat:
        for (int i = 0; i < arity; ++i) {
          UOpPtr s = Inst(n.src[0], operand[i], depth + 1, (op == Ops::SHL || op == Ops::SHR) && i == 1);
          if (s == nullptr) return nullptr;
          srcs.push_back(s);
        }
        break;
      case UPat::SrcKind::kAlternatives:
        return nullptr;
    }
    for (int i = 0; i < arity; ++i) {
      if (srcs[i]->dtype() != operand[i]) return nullptr;
    }
    if ((op == Ops::SHL || op == Ops::SHR) &&
        (srcs[1]->op() != Ops::CONST || srcs[1]->const_value().AsInt64() < 0)) {
      return nullptr;
    }
    return Bind(n, UOp::New(op, *dt, srcs));
  }

  absl::flat_hash_map<std::string, UOpPtr> bound_;
  std::vector<int64_t> consts_;  // the pattern's constants and those made so far
};

}  // namespace

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
    vars.push_back(UOp::Variable(VarName(i), lo, hi));
  }
  ExprGen gen(ch, o, std::move(vars));
  bool want_int = o.int_roots && (!o.bool_roots || ch.Chance(70));
  int depth = static_cast<int>(ch.Between(1, std::max(o.max_depth, 1)));
  return gen.Random(want_int ? dtypes::kInt32 : dtypes::kBool, depth);
}

UOpPtr RuleFuzzer::GenerateForRuleWith(Choices& ch, size_t rule_index) const {
  if (rule_index >= pm_.size()) return nullptr;
  const UPat& pat = pm_.rule(rule_index).pattern();
  // Several attempts: random dtype and op choices may contradict the rest of the pattern.
  for (int attempt = 0; attempt < 12; ++attempt) {
    PatternGen gen(ch, options_);
    UOpPtr e = gen.Instantiate(pat);
    if (e == nullptr) continue;
    if ((e->dtype().is_bool() && !options_.bool_roots) || (!e->dtype().is_bool() && !options_.int_roots)) {
      continue;
    }
    if (ch.Chance(options_.context_percent)) {
      UOpPtr w = gen.Wrap(e);
      if ((w->dtype().is_bool() ? options_.bool_roots : options_.int_roots)) e = w;
    }
    return e;
  }
  return nullptr;
}

UOpPtr RuleFuzzer::Generate() {
  Choices ch(&rng_);
  return GenerateWith(ch);
}

UOpPtr RuleFuzzer::GenerateForRule(size_t rule_index) {
  Choices ch(&rng_);
  UOpPtr e = GenerateForRuleWith(ch, rule_index);
  if (e != nullptr) ++coverage_->rules[rule_index].generated;
  return e;
}

UOpPtr RuleFuzzer::GenerateMixedWith(Choices& ch, size_t* next_rule, int* rule) const {
  *rule = -1;
  if (pm_.size() > 0 && ch.Chance(options_.pattern_percent)) {
    size_t r = 0;
    if (next_rule != nullptr) {
      // The rules in turn; a rule that already fired often gives its turn away most of the time.
      for (size_t skip = 0; skip < pm_.size(); ++skip) {
        r = (*next_rule)++ % pm_.size();
        if (coverage_->rules[r].replaced < 16 || ch.Chance(25)) break;
      }
    } else {
      r = ch.Below(pm_.size());
    }
    UOpPtr e = GenerateForRuleWith(ch, r);
    if (e != nullptr) {
      *rule = static_cast<int>(r);
      return e;
    }
  }
  return GenerateWith(ch);
}

UOpPtr RuleFuzzer::GenerateMixed() {
  Choices ch(&rng_);
  int rule = -1;
  UOpPtr e = GenerateMixedWith(ch, &next_rule_, &rule);
  if (rule >= 0) ++coverage_->rules[rule].generated;
  return e;
}

UOpPtr RuleFuzzer::GenerateFromBytes(const uint8_t* data, size_t size) const {
  Choices ch(data, size);
  int rule = -1;
  return GenerateMixedWith(ch, nullptr, &rule);
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
// With `coverage`, the first rewrite counts into it and the result is stored in *rewritten_out.
std::optional<RuleFailure> CheckImpl(const PatternMatcher& pm, const RuleFuzzerOptions& o, const UOpPtr& expr,
                                     const Assignment* hint, bool* judged, bool* changed,
                                     RuleFuzzer::CoverageState* coverage = nullptr,
                                     UOpPtr* rewritten_out = nullptr) {
  *judged = false;
  RuleFailure f;
  f.expr = expr;
  f.vars = VarsOf(expr.get());
  f.original_size = static_cast<int>(std::get<0>(SizeOf(expr.get())));
  RewriteOptions ro;
  ro.max_steps = o.max_steps;
  ro.name = "rule fuzzer";
  if (coverage != nullptr) coverage->Begin();
  absl::StatusOr<UOpPtr> rewritten = TryGraphRewrite(expr, pm, ro);
  if (coverage != nullptr) coverage->End();
  if (rewritten_out != nullptr && rewritten.ok()) *rewritten_out = *rewritten;
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

std::optional<RuleFailure> RuleFuzzer::CheckOneUnshrunk(const UOpPtr& expr) { return Check(expr, nullptr); }

std::optional<RuleFailure> RuleFuzzer::CheckAt(const UOpPtr& expr, const Assignment& assignment) {
  std::optional<RuleFailure> f = Check(expr, &assignment);
  if (!f) return f;
  return Shrink(*std::move(f));
}

std::optional<RuleFailure> RuleFuzzer::Check(const UOpPtr& expr, const Assignment* hint) {
  last_rewritten_ = nullptr;
  coverage_->fired.clear();
  if (!Judgeable(expr)) {
    ++skipped_;
    return std::nullopt;
  }
  bool judged = false, changed = false;
  std::optional<RuleFailure> f =
      CheckImpl(counting_pm_, options_, expr, hint, &judged, &changed, coverage_.get(), &last_rewritten_);
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
    std::optional<RuleFailure> f =
        CheckImpl(counting_pm_, options_, cand, best.assignment.empty() ? nullptr : &best.assignment, &judged,
                  &changed);
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
    UOpPtr expr = GenerateMixed();
    // Regenerate a few times rather than count an expression that may overflow.
    for (int tries = 0; tries < 20 && !Judgeable(expr); ++tries) expr = GenerateMixed();
    std::optional<RuleFailure> f = CheckOne(expr);
    if (f) return f->ToStatus();
  }
  std::vector<std::string> unfired;
  for (const RuleCoverage& c : coverage_->rules) {
    if (c.replaced == 0) {
      unfired.push_back(absl::StrCat("  ", c.location, " ", c.pattern, " (generated ", c.generated,
                                     ", matched ", c.matched, ", declined ", c.declined, ")"));
    }
  }
  if (unfired.empty()) return absl::OkStatus();
  std::string message = absl::StrCat(
      unfired.size(), " of ", coverage_->rules.size(), " rules never fired in ", num_expressions,
      " expressions: they are untested, not passed (RuleFuzzerOptions::allow_unfired_rules makes "
      "this a warning):\n",
      absl::StrJoin(unfired, "\n"), "\n");
  if (options_.allow_unfired_rules) {
    std::fprintf(stderr, "RuleFuzzer warning: %s", message.c_str());
    return absl::OkStatus();
  }
  return absl::FailedPreconditionError(message);
}

}  // namespace uopc
