#include "renderer/cstyle.h"

#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "rewrite/upat.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

// tinygrad's strip_parens: `(a+b)` -> `a+b`, but not `(a)+(b)`.
std::string StripParens(const std::string& s) {
  if (s.size() < 2 || s.front() != '(' || s.back() != ')') return s;
  const std::string inner = s.substr(1, s.size() - 2);
  const size_t open = inner.find('('), close = inner.find(')');
  // Python's find gives -1 when absent, which compares below every position.
  const long o = open == std::string::npos ? -1 : static_cast<long>(open);
  const long c = close == std::string::npos ? -1 : static_cast<long>(close);
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

}  // namespace

UOpPtr NoVectorizedAlu(const UOp* alu) {
  const int lanes = alu->dtype().vcount();
  if (lanes == 1) return nullptr;
  std::vector<UOpPtr> scalars;
  for (int i = 0; i < lanes; ++i) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : alu->src()) src.push_back(s.gep(i));
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

// The names given so far, and how often each uop is used.
class CStyleRenderer::Context {
 public:
  const std::string& operator[](const UOp* u) const {
    auto it = names.find(u);
    if (it != names.end()) return it->second;
    missing = true;
    static const std::string* const kEmpty = new std::string();
    return *kEmpty;
  }
  absl::flat_hash_map<const UOp*, std::string> names;
  absl::flat_hash_map<const UOp*, int> uses;
  mutable bool missing = false;
};

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

std::optional<std::string> CStyleRenderer::RenderAlu(Ops op, DType dtype,
                                                     absl::Span<const std::string> a) const {
  switch (op) {
    case Ops::SQRT:
      return absl::StrCat("sqrt(", a[0], ")");
    case Ops::RECIP:
      return absl::StrCat("(1/", a[0], ")");
    case Ops::NEG:
      return absl::StrCat("-", a[0]);
    case Ops::EXP2:
      return absl::StrCat("exp2(", a[0], ")");
    case Ops::LOG2:
      return absl::StrCat("log2(", a[0], ")");
    case Ops::SIN:
      return absl::StrCat("sin(", a[0], ")");
    case Ops::AND:
      return absl::StrCat("(", a[0], "&", a[1], ")");
    case Ops::XOR:
      return absl::StrCat("(", a[0], "^", a[1], ")");
    case Ops::OR:
      return absl::StrCat("(", a[0], "|", a[1], ")");
    case Ops::ADD:
      return absl::StrCat("(", a[0], "+", a[1], ")");
    case Ops::SUB:
      return absl::StrCat("(", a[0], "-", a[1], ")");
    case Ops::MUL:
      return absl::StrCat("(", a[0], "*", a[1], ")");
    case Ops::MOD:
      return absl::StrCat("(", a[0], "%", a[1], ")");
    case Ops::IDIV:
      return absl::StrCat("(", a[0], "/", a[1], ")");
    case Ops::CMPNE:
      return absl::StrCat("(", a[0], "!=", a[1], ")");
    case Ops::SHR:
      return absl::StrCat("(", a[0], ">>", a[1], ")");
    case Ops::SHL:
      return absl::StrCat("(", a[0], "<<", a[1], ")");
    case Ops::CMPLT:
      return absl::StrCat("(", a[0], "<", a[1], ")");
    case Ops::WHERE:
      return absl::StrCat("(", a[0], "?", a[1], ":", a[2], ")");
    default:
      return std::nullopt;
  }
}

std::optional<std::string> CStyleRenderer::RenderConst(const UOp* u) const {
  const DType dt = u->dtype();
  const ConstValue v = u->const_value();
  if (v.is_float() && std::isinf(v.f()))
    return absl::StrCat("(", RenderCast(dt, v.f() > 0 ? infinity_ : "-" + infinity_), ")");
  if (dt.is_float() && v.is_float() && std::isnan(v.f())) return absl::StrCat("(", RenderCast(dt, nan_), ")");
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
      return absl::StrCat("(", RenderCast(dt, text + "f"), ")");
    case ScalarType::kUInt8:
    case ScalarType::kUInt16:
      return absl::StrCat("(", RenderCast(dt, text + "u"), ")");
    case ScalarType::kInt8:
    case ScalarType::kInt16:
      return absl::StrCat("(", RenderCast(dt, text), ")");
    default:
      return text;
  }
}

std::optional<std::string> CStyleRenderer::RenderOp(const UOp* u, const Context& ctx) const {
  auto src = [&](size_t i) -> const std::string& { return ctx[u->src(i)]; };
  const bool cpu = device_ == "CPU" || device_ == "DSP";
  switch (u->op()) {
    case Ops::DEFINE_ACC:
      return src(0);
    case Ops::ASSIGN:
      return absl::StrCat(src(0), " = ", src(1), ";");
    case Ops::IF:
      return absl::StrCat("if (", src(0), ") {");
    case Ops::ENDIF:
    case Ops::ENDRANGE:
      return std::string("}");
    case Ops::WMMA:
      if (!u->arg().is_tuple() || u->arg().size() == 0 || !u->arg()[0].is_string()) return std::nullopt;
      return absl::StrCat("__", u->arg()[0].as_string(), "(", src(0), ", ", src(1), ", ", src(2), ")");
    case Ops::RANGE: {
      const std::string& r = ctx[u];
      return absl::StrCat("for (", RenderDType(u->dtype()), " ", r, " = 0; ", r, " < ", src(0), "; ", r,
                          "++) {");
    }
    case Ops::VECTORIZE: {
      std::vector<std::string> parts;
      for (const UOpPtr& s : u->src()) parts.push_back(ctx[s.get()]);
      const std::string ctor = absl::StrReplaceAll(float4_, {{"float4", RenderDType(u->dtype())}});
      const std::string list = absl::StrJoin(parts, ",");
      return cpu ? absl::StrCat(ctor, "{", list, "}") : absl::StrCat(ctor, "(", list, ")");
    }
    case Ops::CAST:
      if (u->dtype().count() > 1 && !u->dtype().is_ptr()) {
        return absl::StrCat("__builtin_convertvector(", src(0), ", ", RenderDType(u->dtype()), ")");
      }
      return absl::StrCat("(", RenderCast(u->dtype(), src(0)), ")");
    case Ops::BITCAST:
      return RenderBitcast(u->dtype(), src(0));
    case Ops::DEFINE_LOCAL:
      return absl::StrCat(smem_align_, smem_prefix_, RenderDType(u->dtype().base()), " ", ctx[u], "[",
                          u->dtype().ptr_size(), "];");
    case Ops::BARRIER:
      return barrier_;
    case Ops::NOOP:
      return src(0);
    case Ops::SPECIAL: {
      if (!u->arg().is_tuple() || u->arg().size() != 2 || !u->arg()[0].is_string()) return std::nullopt;
      const std::string& name = u->arg()[0].as_string();
      auto it = code_for_workitem_.find(name.empty() ? ' ' : name[0]);
      if (it == code_for_workitem_.end()) return std::nullopt;
      // `{}` is the dimension's digit, `{xyz}` its letter.
      const char digit = name.back();
      const std::string letter(1, static_cast<char>('x' + (digit - '0')));
      return absl::StrCat(absl::StrReplaceAll(it->second, {{"{}", std::string(1, digit)}, {"{xyz}", letter}}),
                          "; /* ", u->arg()[1].ToString(), " */");
    }
    case Ops::CONST:
      return RenderConst(u);
    case Ops::INDEX: {
      if (u->num_src() < 2) return std::nullopt;
      const UOp* idx = u->src(1);
      // (tinygrad compares the index's arg with Ops.ADD, which only an ADD-valued arg satisfies.)
      const bool strip = idx->arg().is_op() && idx->arg().as_op() == Ops::ADD;
      return absl::StrCat("(", src(0), "+", strip ? StripParens(src(1)) : src(1), ")");
    }
    case Ops::LOAD: {
      if (u->num_src() < 1) return std::nullopt;
      const UOp* bidx = u->src(0);
      const UOp* index = bidx->op() == Ops::CAST ? bidx->src(0) : bidx;
      if (u->num_src() >= 2 && index->op() == Ops::INDEX && index->num_src() == 3) {
        return absl::StrCat("(", ctx[index->src(2)], "?*", src(0), ":", src(1), ")");
      }
      return absl::StrCat("*", src(0));
    }
    case Ops::STORE:
      if (u->num_src() < 2) return std::nullopt;
      return absl::StrCat("*", src(0), " = ", src(1), ";");
    case Ops::GEP: {
      if (!u->arg().is_tuple() || u->arg().size() == 0) return std::nullopt;
      const int64_t i = u->arg()[0].as_int();
      const int wide = device_ == "CUDA" || device_ == "NV" ? 8 : 4;
      if (u->src(0)->dtype().count() > wide || cpu) return absl::StrCat(src(0), "[", i, "]");
      if (i < 0 || i >= 8) return std::nullopt;
      return absl::StrCat(src(0), ".", std::string(1, "xyzwabcd"[i]));
    }
    case Ops::CUSTOM:
    case Ops::CUSTOMI: {
      if (!u->arg().is_string()) return std::nullopt;
      std::vector<std::string> args;
      for (const UOpPtr& s : u->src()) args.push_back(ctx[s.get()]);
      return FormatCustom(u->arg().as_string(), args);
    }
    default:
      break;
  }
  if (groups::kALU.contains(u->op())) {
    std::vector<std::string> operands;
    const bool flatten = u->op() == Ops::ADD || u->op() == Ops::MUL || u->op() == Ops::XOR;
    for (const UOpPtr& s : u->src()) {
      operands.push_back(flatten && s->op() == u->op() ? StripParens(ctx[s.get()]) : ctx[s.get()]);
    }
    const size_t arity = groups::kTernary.contains(u->op()) ? 3 : groups::kBinary.contains(u->op()) ? 2 : 1;
    if (operands.size() != arity) return std::nullopt;
    return RenderAlu(u->op(), u->dtype(), operands);
  }
  return std::nullopt;
}

absl::StatusOr<std::string> CStyleRenderer::Render(absl::Span<const UOp* const> uops) const {
  Context ctx;
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
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("cannot render uop ", pos, " (", OpName(u->op()), " ",
                                                     u->dtype().ToString(), "): ", what));
    };
    if (u->op() == Ops::SINK) {
      if (const KernelInfo* info = KernelInfoOf(u)) name = info->name;
      continue;
    }
    if (u->op() == Ops::DEFINE_GLOBAL || u->op() == Ops::DEFINE_VAR) {
      if (u->op() == Ops::DEFINE_GLOBAL && !u->arg().is_int())
        return error("a DEFINE_GLOBAL needs a buffer number");
      if (u->op() == Ops::DEFINE_VAR &&
          (!u->arg().is_tuple() || u->arg().size() == 0 || !u->arg()[0].is_string())) {
        return error("a DEFINE_VAR needs a name");
      }
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
      if (!u->arg().is_tuple() || u->arg().size() == 0 || !u->arg()[0].is_string())
        return error("bad SPECIAL arg");
      ctx.names[u] = u->arg()[0].as_string();
    } else if (u->op() == Ops::RANGE) {
      ctx.names[u] = absl::StrCat("ridx", u->arg().ToString());
    } else {
      prefix = std::string(NamePrefix(u->op()));
      ctx.names[u] = absl::StrCat(*prefix, counters[*prefix]);
    }
    ctx.missing = false;
    std::optional<std::string> line = RenderOp(u, ctx);
    if (!line.has_value()) return error("the target has no rendering for it");
    if (ctx.missing) return error("a source is not rendered before its use");
    if (u->op() == Ops::ENDIF || u->op() == Ops::ENDRANGE) --depth;
    auto uses = ctx.uses.find(u);
    if (Inlined(u, uses == ctx.uses.end() ? 0 : uses->second)) {
      ctx.names[u] = *std::move(line);
    } else {
      if (u->op() == Ops::RANGE || u->op() == Ops::ASSIGN || u->op() == Ops::DEFINE_LOCAL ||
          u->dtype() == DType()) {
        if (u->op() == Ops::ASSIGN) ctx.names[u] = ctx[u->src(0)];
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

ClangRenderer::ClangRenderer(CoreSplit split) {
  device_ = "CPU";
  has_local_ = false;
  global_max_ = std::nullopt;
  core_split_ = split;
  // The launch index of a kernel split across cores (tinygrad's code_for_workitem on its threaded CPU).
  code_for_workitem_ = {{'g', "core_id"}};
  // tinygrad's CStyleLanguage code_for_op without EXP2, SIN and LOG2 (the CPU gets their polynomial
  // fallbacks).
  supported_ops_ =
      OpSet{Ops::SQRT, Ops::RECIP, Ops::NEG,  Ops::AND,   Ops::XOR, Ops::OR,  Ops::ADD,   Ops::SUB,
            Ops::MUL,  Ops::MOD,   Ops::IDIV, Ops::CMPNE, Ops::SHR, Ops::SHL, Ops::CMPLT, Ops::WHERE};
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
      }) +
      CStyleExtraMatcher());
  return pm;
}

std::optional<std::string> ClangRenderer::RenderAlu(Ops op, DType dtype,
                                                    absl::Span<const std::string> a) const {
  if (op == Ops::EXP2 || op == Ops::LOG2 || op == Ops::SIN) return std::nullopt;
  if (op == Ops::SQRT) {
    return absl::StrCat(dtype == dtypes::kFloat64 ? "__builtin_sqrt(" : "__builtin_sqrtf(", a[0], ")");
  }
  return CStyleRenderer::RenderAlu(op, dtype, a);
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
    const int alignment = 1 << static_cast<int>(std::log2(itemsize));  // rounded down to a power of two
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
