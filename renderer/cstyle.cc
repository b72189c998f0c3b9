#include "renderer/cstyle.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "rewrite/upat.h"
#include "uop/check.h"
#include "uop/kernel_info.h"
#include "uop/print.h"

namespace uopc {
namespace {

// tinygrad's strip_parens: `(a+b)` -> `a+b`, but not `(a)+(b)`.
absl::string_view StripParens(absl::string_view s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  const absl::string_view inner = s.substr(1, s.size() - 2);
  const size_t open = inner.find('('), close = inner.find(')');
  // Python's find gives -1 when absent, which compares below every position.
  const long o = open == absl::string_view::npos ? -1 : static_cast<long>(open);
  const long c = close == absl::string_view::npos ? -1 : static_cast<long>(close);
  return o <= c ? inner : s;
}

// The name prefix of a uop's variable (tinygrad's prefix table); every other op is an `alu`.
absl::string_view NamePrefix(Ops op) {
  switch (op) {
    case Ops::WMMA:
      return "wmma";
    case Ops::DEFINE_LOCAL:
      return "temp";
    case Ops::CONST:
      return "const";
    case Ops::CAST:
    case Ops::BITCAST:
    case Ops::VECTORIZE:
      return "cast";
    case Ops::GEP:
      return "gep";
    case Ops::NOOP:
      return "precast";
    case Ops::INDEX:
      return "bidx";
    case Ops::DEFINE_ACC:
      return "acc";
    case Ops::LOAD:
      return "val";
    default:
      return "alu";
  }
}

// Whether a uop's expression is used in place instead of getting a line of its own.
bool Inlined(const UOp* u, int uses) {
  const Ops op = u->op();
  if (op == Ops::CAST && u->dtype().vcount() != 1) return false;
  if (op == Ops::CONST || op == Ops::GEP || op == Ops::INDEX || op == Ops::CUSTOMI) return true;
  const bool cheap = op == Ops::VECTORIZE || op == Ops::CAST || op == Ops::BITCAST ||
                     (groups::kALU.contains(op) && op != Ops::WHERE);
  return cheap && uses == 1;
}

// Python's str.format with positional `{}` / `{N}` fields (CUSTOM ops).
std::string FormatCustom(const std::string& format, const std::vector<std::string>& args) {
  std::string out;
  size_t next = 0;
  for (size_t i = 0; i < format.size(); ++i) {
    if (format[i] == '{' && i + 1 < format.size() && format[i + 1] == '{') {
      out += '{';
      ++i;
    } else if (format[i] == '}' && i + 1 < format.size() && format[i + 1] == '}') {
      out += '}';
      ++i;
    } else if (format[i] == '{') {
      const size_t end = format.find('}', i);
      if (end == std::string::npos) return out + format.substr(i);
      const std::string field = format.substr(i + 1, end - i - 1);
      const size_t index = field.empty() ? next++ : static_cast<size_t>(std::atoi(field.c_str()));
      if (index < args.size()) out += args[index];
      i = end;
    } else {
      out += format[i];
    }
  }
  return out;
}

// Lane `i` of `v`. Through a GEP it is taken from the GEP's source, as gep_pushing's GEP(GEP(x, a), i) ->
// GEP(x, a[i]) would fold it: building the folded lane directly saves an intermediate node per lane, which
// devectorizing a swizzled vector would otherwise build for every element.
UOpPtr Lane(const UOpPtr& v, int64_t i) {
  const UOp* x = v.get();
  while (x->op() == Ops::GEP && !x->dtype().is_ptr() && i >= 0 && static_cast<size_t>(i) < x->arg().size() &&
         !x->src(0)->dtype().is_ptr()) {
    i = x->arg()[i].as_int();
    x = x->src(0);
  }
  return x == v.get() ? v.gep(i) : x->ref().gep(i);
}

}  // namespace

UOpPtr NoVectorizedAlu(const UOp* alu) {
  const int lanes = alu->dtype().vcount();
  if (lanes == 1) return nullptr;
  std::vector<UOpPtr> scalars;
  for (int i = 0; i < lanes; ++i) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : alu->src()) src.push_back(Lane(s, i));
    scalars.push_back(UOp::New(alu->op(), alu->dtype().scalar(), src, alu->arg()));
  }
  return UOp::New(Ops::VECTORIZE, alu->dtype(), scalars);
}

const PatternMatcher& CStyleExtraMatcher() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // A BITCAST is rendered from a variable: put a NOOP in front of anything else.
      {UPat(Ops::BITCAST).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOp* x = m.root();
         const Ops src = x->src(0)->op();
         if (src == Ops::NOOP || src == Ops::LOAD || src == Ops::CUSTOM) return nullptr;
         return UOp::New(Ops::BITCAST, x->dtype(), {UOp::New(Ops::NOOP, x->src(0)->dtype(), x->src())});
       }},
      // A multiply-add is a multiply and an add, rounded after each as ExecAlu's MULACC is (uopc's addition:
      // codegen makes no MULACC for C-style targets, but a hand-written kernel may hold one).
      {UPat(Ops::MULACC).src(UPat::Var("a"), UPat::Var("b"), UPat::Var("c")),
       [](const Match& m) { return m["a"] * m["b"] + m["c"]; }},
      // max(a, b) -> a < b ? b : a (a max function is awkward on many C-style targets).
      {UPat(Ops::MAX).named("m"),
       [](const Match& m) {
         const UOpPtr a = m.root()->src()[0], b = m.root()->src()[1];
         return a.lt(b).where(b, a);
       }},
      // Bools, bool casts and WHERE are not vectorized.
      {UPat(groups::kALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN, Ops::INDEX})
           .dtype(dtypes::kBool)
           .named("alu"),
       [](const Match& m) { return NoVectorizedAlu(m.root()); }},
      {UPat(Ops::CAST).src(UPat::Var("", dtypes::kBool)).named("alu"),
       [](const Match& m) { return NoVectorizedAlu(m.root()); }},
      {UPat(Ops::WHERE).named("alu"), [](const Match& m) { return NoVectorizedAlu(m.root()); }},
  });
  return *pm;
}

const std::string& CStyleContext::Name(const UOp* u) const {
  auto it = names.find(u);
  if (it != names.end()) return it->second;
  missing = true;
  static const std::string* const kEmpty = new std::string();
  return *kEmpty;
}

absl::string_view CStyleContext::Src(const UOp* u, int i) const {
  const UOp* s = u->src(i);
  const Ops op = u->op();
  const std::string& name = Name(s);
  if (s->op() == op && (op == Ops::ADD || op == Ops::MUL || op == Ops::XOR)) return StripParens(name);
  return name;
}

const RenderFields<CStyleContext>& CStyleContext::Fields() {
  static const RenderFields<CStyleContext>* const fields = new RenderFields<CStyleContext>({
      {"dtype",
       [](CStyleContext& c, const UOp* u, std::string* out) { *out += c.r.RenderDType(u->dtype()); }},
      {"base",
       [](CStyleContext& c, const UOp* u, std::string* out) { *out += c.r.RenderDType(u->dtype().base()); }},
      {"size",
       [](CStyleContext&, const UOp* u, std::string* out) { absl::StrAppend(out, u->dtype().ptr_size()); }},
      {"barrier", [](CStyleContext& c, const UOp*, std::string* out) { *out += c.r.barrier_; }},
      {"smem", [](CStyleContext& c, const UOp*,
                  std::string* out) { absl::StrAppend(out, c.r.smem_align_, c.r.smem_prefix_); }},
  });
  return *fields;
}

std::string CStyleRenderer::RenderDType(DType dt) const {
  if (dt.is_ptr()) {
    const std::string& prefix = dt.is_local() && smem_prefix_for_cast_ ? smem_prefix_ : buffer_prefix_;
    return absl::StrCat(prefix, RenderDType(dt.base()), "*");
  }
  auto it = type_map_.find(dt.scalar_type());
  const std::string scalar = it != type_map_.end() ? it->second : dt.scalar().name();
  if (dt.count() > 1) return absl::StrCat(absl::StrReplaceAll(scalar, {{" ", "_"}}), dt.count());
  return scalar;
}

std::string CStyleRenderer::RenderCast(DType dt, absl::string_view val) const {
  return absl::StrCat("(", RenderDType(dt), ")(", val, ")");
}

std::string CStyleRenderer::RenderBitcast(DType dt, absl::string_view val) const {
  return absl::StrCat("(*((", buffer_prefix_, RenderDType(dt), "*)&", val, "))");
}

namespace {

// A constant with a C suffix or cast: `1.0f`, `2ll`, `((half)(1.0f))`.
std::optional<std::string> RenderConst(const CStyleRenderer& r, const UOp* u, absl::string_view infinity,
                                       absl::string_view nan) {
  const DType dt = u->dtype();
  const ConstValue v = u->const_value();
  if (v.is_float() && std::isinf(v.f()))
    return absl::StrCat(
        "(", r.RenderCast(dt, v.f() > 0 ? std::string(infinity) : absl::StrCat("-", infinity)), ")");
  if (dt.is_float() && v.is_float() && std::isnan(v.f()))
    return absl::StrCat("(", r.RenderCast(dt, nan), ")");
  const std::string text = v.ToString();  // Python's str() of the arg
  switch (dt.scalar_type()) {
    case ScalarType::kFloat32:
      return text + "f";
    case ScalarType::kInt64:
      return text + "ll";
    case ScalarType::kUInt64:
      return text + "ull";
    case ScalarType::kUInt32:
      return text + "u";
    case ScalarType::kBool:
      return std::string(v.AsBool() ? "1" : "0");
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16:
      return absl::StrCat("(", r.RenderCast(dt, text + "f"), ")");
    case ScalarType::kUInt8:
    case ScalarType::kUInt16:
      return absl::StrCat("(", r.RenderCast(dt, text + "u"), ")");
    case ScalarType::kInt8:
    case ScalarType::kInt16:
      return absl::StrCat("(", r.RenderCast(dt, text), ")");
    default:
      return text;
  }
}

bool HasStringArg0(const UOp* u) {
  return u->arg().is_tuple() && u->arg().size() != 0 && u->arg()[0].is_string();
}
bool IsVectorCast(const UOp* u) { return u->dtype().count() > 1 && !u->dtype().is_ptr(); }
bool IsGatedLoad(const UOp* u) {
  if (u->num_src() < 2) return false;
  const UOp* bidx = u->src(0);
  const UOp* index = bidx->op() == Ops::CAST ? bidx->src(0) : bidx;
  return index->op() == Ops::INDEX && index->num_src() == 3;
}

// tinygrad's CStyleLanguage code_for_op: how C spells each ALU op a C-style target renders itself.
struct AluSpelling {
  Ops op;
  const char* format;
};
constexpr AluSpelling kCodeForOp[] = {
    {Ops::SQRT, "sqrt({0})"},      {Ops::RECIP, "(1/{0})"},  {Ops::NEG, "-{0}"},
    {Ops::EXP2, "exp2({0})"},      {Ops::LOG2, "log2({0})"}, {Ops::SIN, "sin({0})"},
    {Ops::AND, "({0}&{1})"},       {Ops::XOR, "({0}^{1})"},  {Ops::OR, "({0}|{1})"},
    {Ops::ADD, "({0}+{1})"},       {Ops::SUB, "({0}-{1})"},  {Ops::MUL, "({0}*{1})"},
    {Ops::MOD, "({0}%{1})"},       {Ops::IDIV, "({0}/{1})"}, {Ops::CMPNE, "({0}!={1})"},
    {Ops::SHR, "({0}>>{1})"},      {Ops::SHL, "({0}<<{1})"}, {Ops::CMPLT, "({0}<{1})"},
    {Ops::WHERE, "({0}?{1}:{2})"},
};
// Its keys: every C-style target's supported_ops, less what a target leaves to codegen's fallbacks.
constexpr OpSet kCodeForOpOps = [] {
  OpSet ops;
  for (const AluSpelling& a : kCodeForOp) ops.Insert(a.op);
  return ops;
}();
// The ALU op every C-style target writes although no code_for_op lists it: FDIV, which codegen never makes
// for C but a hand-written kernel may hold (uopc's addition).
constexpr OpSet kUnlistedAluOps{Ops::FDIV};

}  // namespace

CStyleRules CStyleRenderer::SharedRules() {
  using C = CStyleContext;
  std::vector<RenderRule<C>> rules = {
      {Ops::DEFINE_ACC, "{0}"},
      {Ops::ASSIGN, "{0} = {1};"},
      {Ops::IF, "if ({0}) {{"},
      {OpSet{Ops::ENDIF, Ops::ENDRANGE}, "}"},
      {RenderPat(Ops::WMMA).when(HasStringArg0),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (x->num_src() < 3) return std::nullopt;
         return absl::StrCat("__", x->arg()[0].as_string(), "(", c.Name(x->src(0)), ", ", c.Name(x->src(1)),
                             ", ", c.Name(x->src(2)), ")");
       }},
      {Ops::RANGE, "for ({dtype} {x} = 0; {x} < {0}; {x}++) {{"},
      {Ops::VECTORIZE,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         std::string out = absl::StrReplaceAll(c.r.float4_, {{"float4", c.r.RenderDType(x->dtype())}});
         const bool cpu = c.r.device_ == "CPU" || c.r.device_ == "DSP";
         out += cpu ? '{' : '(';
         for (size_t i = 0; i < x->num_src(); ++i) absl::StrAppend(&out, i ? "," : "", c.Name(x->src(i)));
         out += cpu ? '}' : ')';
         return out;
       }},
      {RenderPat(Ops::CAST).when(IsVectorCast), "__builtin_convertvector({0}, {dtype})"},
      {Ops::CAST,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (x->num_src() < 1) return std::nullopt;
         return absl::StrCat("(", c.r.RenderCast(x->dtype(), c.Name(x->src(0))), ")");
       }},
      {Ops::BITCAST,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (x->num_src() < 1) return std::nullopt;
         return c.r.RenderBitcast(x->dtype(), c.Name(x->src(0)));
       }},
      // kUnlistedAluOps.
      {Ops::FDIV, "({0}/{1})"},
      {Ops::DEFINE_LOCAL, "{smem}{base} {x}[{size}];"},
      {Ops::BARRIER, "{barrier}"},
      {Ops::NOOP, "{0}"},
      {Ops::SPECIAL,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (!x->arg().is_tuple() || x->arg().size() != 2 || !x->arg()[0].is_string()) return std::nullopt;
         const std::string& name = x->arg()[0].as_string();
         auto it = c.r.code_for_workitem_.find(name.empty() ? ' ' : name[0]);
         if (it == c.r.code_for_workitem_.end()) return std::nullopt;
         // `{}` is the dimension's digit, `{xyz}` its letter.
         const char digit = name.back();
         const std::string letter(1, static_cast<char>('x' + (digit - '0')));
         // A symbolic size is printed as tinygrad's repr of its UOp, over several lines.
         const UOpArg* symbolic = x->arg()[1].payload_as<UOpArg>();
         return absl::StrCat(
             absl::StrReplaceAll(it->second, {{"{}", std::string(1, digit)}, {"{xyz}", letter}}), "; /* ",
             symbolic != nullptr ? PrintUOpTree(symbolic->uop().get()) : x->arg()[1].ToString(), " */");
       }},
      {Ops::CONST, [](C& c, const UOp* x) { return RenderConst(c.r, x, c.r.infinity_, c.r.nan_); }},
      {Ops::INDEX,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (x->num_src() < 2) return std::nullopt;
         const UOp* idx = x->src(1);
         // (tinygrad compares the index's arg with Ops.ADD, which only an ADD-valued arg satisfies.)
         const bool strip = idx->arg().is_op() && idx->arg().as_op() == Ops::ADD;
         const std::string& i = c.Name(idx);
         return absl::StrCat("(", c.Name(x->src(0)), "+", strip ? StripParens(i) : absl::string_view(i), ")");
       }},
      {RenderPat(Ops::LOAD).when(IsGatedLoad),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const UOp* bidx = x->src(0);
         const UOp* index = bidx->op() == Ops::CAST ? bidx->src(0) : bidx;
         return absl::StrCat("(", c.Name(index->src(2)), "?*", c.Name(bidx), ":", c.Name(x->src(1)), ")");
       }},
      {Ops::LOAD, "*{0}"},
      {Ops::STORE, "*{0} = {1};"},
      {Ops::GEP,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (!x->arg().is_tuple() || x->arg().size() == 0 || x->num_src() < 1) return std::nullopt;
         const int64_t i = x->arg()[0].as_int();
         const bool cpu = c.r.device_ == "CPU" || c.r.device_ == "DSP";
         const int wide = c.r.device_ == "CUDA" || c.r.device_ == "NV" ? 8 : 4;
         if (x->src(0)->dtype().count() > wide || cpu) return absl::StrCat(c.Name(x->src(0)), "[", i, "]");
         if (i < 0 || i >= 8) return std::nullopt;
         return absl::StrCat(c.Name(x->src(0)), ".", std::string(1, "xyzwabcd"[i]));
       }},
      {OpSet{Ops::CUSTOM, Ops::CUSTOMI},
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (!x->arg().is_string()) return std::nullopt;
         std::vector<std::string> args;
         for (const UOpPtr& s : x->src()) args.push_back(c.Name(s.get()));
         return FormatCustom(x->arg().as_string(), args);
       }},
  };
  for (const AluSpelling& a : kCodeForOp) rules.emplace_back(a.op, a.format);
  return CStyleRules(rules);
}

CStyleRenderer::CStyleRenderer() { supported_ops_ = kCodeForOpOps; }

const CStyleRules& CStyleRenderer::rules() const {
  static const CStyleRules* const rules = new CStyleRules(SharedRules());
  return *rules;
}

absl::StatusOr<std::string> CStyleRenderer::RenderProgram(absl::Span<const UOp* const> uops) const {
  CStyleContext ctx(*this);
  const CStyleRules& text_rules = rules();
  for (const UOp* u : uops) {
    for (const UOpPtr& s : u->src()) ++ctx.uses[s.get()];
  }
  std::vector<Param> params;
  absl::flat_hash_map<const UOp*, size_t> param_of;
  std::vector<std::string> lines;
  absl::flat_hash_map<std::string, int> counters;
  int depth = 1;
  std::string name = "test";
  for (size_t pos = 0; pos < uops.size(); ++pos) {
    const UOp* u = uops[pos];
    auto error = [&](absl::string_view what) { return RenderError(pos, u, what); };
    if (u->op() == Ops::SINK) {
      if (const KernelInfo* info = KernelInfoOf(u)) name = info->name;
      continue;
    }
    if (u->op() == Ops::DEFINE_GLOBAL || u->op() == Ops::DEFINE_VAR) {
      ctx.names[u] = u->op() == Ops::DEFINE_GLOBAL ? absl::StrCat("data", u->arg().as_int()) : u->var_name();
      if (!param_of.contains(u)) {
        param_of[u] = params.size();
        params.push_back({ctx.names[u], u->dtype(), false});
      }
      continue;
    }
    // A buffer the kernel stores to is not const.
    if (u->op() == Ops::STORE && u->num_src() > 0) {
      for (const UOp* up : u->src(0)->Toposort()) {
        if (auto it = param_of.find(up); it != param_of.end() && up->op() == Ops::DEFINE_GLOBAL) {
          params[it->second].mutable_ = true;
        }
      }
    }
    std::optional<std::string> prefix;
    if (u->op() == Ops::SPECIAL) {
      ctx.names[u] = u->arg()[0].as_string();
    } else if (u->op() == Ops::RANGE) {
      ctx.names[u] = absl::StrCat("ridx", u->arg().ToString());
    } else {
      prefix = std::string(NamePrefix(u->op()));
      ctx.names[u] = absl::StrCat(*prefix, counters[*prefix]);
    }
    ctx.missing = false;
    // An ALU op the target leaves to codegen's fallbacks has no rendering, though the shared rules spell it.
    std::optional<std::string> line;
    if (!groups::kALU.contains(u->op()) || (supported_ops_ | kUnlistedAluOps).contains(u->op()))
      line = text_rules.Render(ctx, u);
    if (!line.has_value()) return error("the target has no rendering for it");
    if (ctx.missing) return error("a source is not rendered before its use");
    if (u->op() == Ops::ENDIF || u->op() == Ops::ENDRANGE) --depth;
    auto uses = ctx.uses.find(u);
    if (Inlined(u, uses == ctx.uses.end() ? 0 : uses->second)) {
      ctx.names[u] = *std::move(line);
    } else {
      if (u->op() == Ops::RANGE || u->op() == Ops::ASSIGN || u->op() == Ops::DEFINE_LOCAL ||
          u->dtype() == DType()) {
        if (u->op() == Ops::ASSIGN) ctx.names[u] = ctx.Name(u->src(0));
      } else {
        line = absl::StrCat(RenderDType(u->dtype()), " ", ctx.names[u], " = ", *line,
                            u->op() == Ops::SPECIAL ? "" : ";");
      }
      lines.push_back(absl::StrCat(std::string(2 * std::max(depth, 0), ' '), *line));
      if (prefix.has_value()) ++counters[*prefix];
    }
    if (u->op() == Ops::IF || u->op() == Ops::RANGE) ++depth;
  }
  return RenderKernel(name, lines, params, uops);
}

std::string CStyleRenderer::RenderFunction(const std::string& function_name,
                                           const std::vector<std::string>& lines,
                                           const std::vector<Param>& params,
                                           absl::Span<const UOp* const> uops) const {
  std::vector<std::string> args;
  for (const Param& p : params) {
    std::string type = p.dtype.is_ptr()            ? RenderDType(p.dtype) + buffer_suffix_
                       : p.dtype == dtypes::kInt32 ? arg_int_prefix_
                                                   : "None";
    args.push_back(absl::StrCat(type, " ", p.name));
  }
  args.insert(args.end(), extra_args_.begin(), extra_args_.end());
  return absl::StrCat(kernel_prefix_, "void ", KernelModifier(uops), function_name, "(",
                      absl::StrJoin(args, ", "), ") {\n", absl::StrJoin(lines, "\n"), "\n}");
}

std::string CStyleRenderer::RenderKernel(const std::string& function_name,
                                         const std::vector<std::string>& lines,
                                         const std::vector<Param>& params,
                                         absl::Span<const UOp* const> uops) const {
  return RenderFunction(function_name, lines, params, uops);
}

ClangRenderer::ClangRenderer(CoreSplit split, int vector_width) {
  UOPC_CHECK(vector_width >= 1 && vector_width <= 16 && (vector_width & (vector_width - 1)) == 0,
             "a vector width is a power of two up to 16");
  vector_width_ = vector_width;
  device_ = "CPU";
  has_local_ = false;
  global_max_ = std::nullopt;
  core_split_ = split;
  // The launch index of a kernel split across cores (tinygrad's code_for_workitem on its threaded CPU).
  code_for_workitem_ = {{'g', "core_id"}};
  // tinygrad's ClangRenderer code_for_op: without EXP2, LOG2 and SIN (the CPU gets their polynomial
  // fallbacks).
  supported_ops_ = supported_ops_ - OpSet{Ops::EXP2, Ops::LOG2, Ops::SIN};
  float4_ = "(float4)";
  infinity_ = "__builtin_inff()";
  nan_ = "__builtin_nanf(\"\")";
  buffer_suffix_ = " restrict";
  type_map_ = {{ScalarType::kBool, "_Bool"}, {ScalarType::kFloat16, "__fp16"}};
}

const PatternMatcher* ClangRenderer::extra_matcher() const {
  static const PatternMatcher* const pm = new PatternMatcher(
      PatternMatcher({
          // clang lowers a double -> half cast to a compiler-rt call on x86 without AVX512-FP16: go through
          // float.
          {UPat::Var("x", dtypes::kFloat64).cast(dtypes::kFloat16),
           [](const Match& m) { return m["x"].cast(dtypes::kFloat32).cast(dtypes::kFloat16); }},
          {UPat(Ops::SQRT).named("alu"), [](const Match& m) { return NoVectorizedAlu(m.root()); }},
          // A target that keeps vectors writes an ALU op of at most its width, in a power of two of lanes.
          {UPat(groups::kALU).named("alu"),
           [](const Match& m) -> UOpPtr {
             const auto* renderer = static_cast<const Renderer*>(m.raw_ctx());
             const int lanes = m.root()->dtype().count();
             if (renderer == nullptr || renderer->vector_width() == 1 || lanes == 1) return nullptr;
             if (lanes <= renderer->vector_width() && (lanes & (lanes - 1)) == 0) return nullptr;
             return NoVectorizedAlu(m.root());
           }},
          // bfloat16 transcendentals run in float, where codegen has fallbacks for them (uopc's addition).
          {UPat(OpSet{Ops::EXP2, Ops::LOG2, Ops::SIN})
               .dtype(dtypes::kBFloat16)
               .src(UPat::Var("x"))
               .named("alu"),
           [](const Match& m) {
             const int n = m.root()->dtype().count();
             return UOp::New(m.root()->op(), dtypes::kFloat32.Vec(n), {m["x"].cast(dtypes::kFloat32.Vec(n))})
                 .cast(m.root()->dtype());
           }},
      }) +
      CStyleExtraMatcher());
  return pm;
}

const CStyleRules& ClangRenderer::rules() const {
  // tinygrad's ClangRenderer code_for_op: the C-style one with builtin square roots.
  static const CStyleRules* const rules =
      new CStyleRules(CStyleRules({
                          {RenderPat(Ops::SQRT).dtype(dtypes::kFloat64), "__builtin_sqrt({0})"},
                          {Ops::SQRT, "__builtin_sqrtf({0})"},
                      }) +
                      SharedRules());
  return *rules;
}

std::string ClangRenderer::RenderKernel(const std::string& function_name,
                                        const std::vector<std::string>& lines,
                                        const std::vector<Param>& params,
                                        absl::Span<const UOp* const> uops) const {
  // A typedef for every vector type the program uses, in order of first use.
  std::vector<std::string> defines;
  absl::flat_hash_set<DType> seen;
  for (const UOp* u : uops) {
    const DType dt = u->dtype();
    if (dt.is_ptr() || !seen.insert(dt).second || dt.count() <= 1) continue;
    const int itemsize = dt.itemsize();
    int alignment = 1 << static_cast<int>(std::log2(itemsize));  // rounded down to a power of two
    // Vectors wider than tinygrad's float4 assume no more alignment than a float4: a buffer's base is only
    // promised to be 16-byte aligned, so their loads and stores are the unaligned instructions.
    if (vector_width_ > 1) alignment = std::min(alignment, 16);
    defines.push_back(absl::StrCat("typedef ", RenderDType(dt.scalar()), " ", RenderDType(dt),
                                   " __attribute__((aligned(", alignment, "),vector_size(", itemsize,
                                   ")));"));
  }
  // A kernel split across cores takes its chunk's number last.
  std::vector<Param> all_params = params;
  for (const UOp* u : uops) {
    if (u->op() != Ops::SPECIAL) continue;
    all_params.push_back({"core_id", dtypes::kInt32, false});
    break;
  }
  return absl::StrCat(absl::StrJoin(defines, "\n"), "\n",
                      RenderFunction(function_name, lines, all_params, uops), "\n");
}

}  // namespace uopc
