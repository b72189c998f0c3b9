#include "renderer/llvmir.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "renderer/render_rules.h"
#include "rewrite/upat.h"
#include "uop/check.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

// tinygrad's truncate_bf16: the float32 value's top 16 bits (chopped, not rounded), infinity past the
// largest bfloat16.
double ChopToBFloat16(double x) {
  const float largest = BFloat16BitsToFloat(0x7f7f);
  if (std::fabs(x) > largest) return std::copysign(INFINITY, x);
  const float f = static_cast<float>(x);
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  bits &= 0xffff0000u;
  float chopped;
  std::memcpy(&chopped, &bits, sizeof(chopped));
  return chopped;
}

// The instruction of a binary op on a scalar kind (tinygrad's lop table): unsigned and bool, signed, float;
// nullptr for an op the kind has no instruction for.
const char* BinaryInstruction(Ops op, DType operand) {
  const DType s = operand.scalar();
  if (s.is_float()) {
    switch (op) {
      case Ops::ADD:
        return "fadd nsz arcp contract afn";
      case Ops::MUL:
        return "fmul nsz arcp contract afn";
      case Ops::CMPLT:
        return "fcmp nsz arcp contract afn ult";
      case Ops::CMPNE:
        return "fcmp nsz arcp contract afn une";
      case Ops::FDIV:
        return "fdiv nsz arcp contract afn";
      case Ops::SUB:  // uopc's addition, as are SUB, SHL, SHR and bool ADD below
        return "fsub nsz arcp contract afn";
      default:
        return nullptr;
    }
  }
  if (!s.is_int() && !s.is_bool()) return nullptr;
  const bool is_signed = s.is_int() && !s.is_unsigned();
  switch (op) {
    case Ops::ADD:
      // On i1, add is xor; a bool sum is true where either is (ExecAlu), which is or.
      return s.is_bool() ? "or" : is_signed ? "add nsw" : "add";
    case Ops::SUB:
      return "sub";
    case Ops::SHL:
      return "shl";
    case Ops::SHR:
      return is_signed ? "ashr" : "lshr";
    case Ops::MUL:
      return "mul";
    case Ops::IDIV:
      return is_signed ? "sdiv" : "udiv";
    case Ops::MOD:
      return is_signed ? "srem" : "urem";
    case Ops::CMPLT:
      return is_signed ? "icmp slt" : "icmp ult";
    case Ops::CMPNE:
      return "icmp ne";
    case Ops::OR:
      return "or";
    case Ops::AND:
      return "and";
    case Ops::XOR:
      return "xor";
    default:
      return nullptr;
  }
}

// A source of a gated load: the INDEX with a mask (buffer, index, mask), or a CAST of one.
const UOp* MaskedIndex(const UOp* src) {
  const UOp* index = src;
  if (src->op() == Ops::CAST && src->num_src() == 1) index = src->src(0);
  return index->op() == Ops::INDEX && index->num_src() == 3 ? index : nullptr;
}

// A VECTORIZE of one value repeated (tinygrad's `src=UPat.var('y')`: every source the same node).
bool IsBroadcast(const UOp* u) {
  if (u->num_src() == 0) return false;
  for (const UOpPtr& s : u->src()) {
    if (s.get() != u->src(0)) return false;
  }
  return true;
}

// One LLVM render: the names given so far (tinygrad's `r`). A lookup of a uop without one is recorded, and
// the render fails, as tinygrad's KeyError does; so does a cast LLVM has no instruction for.
class LlvmContext {
 public:
  const std::string& Name(const UOp* u) const {
    auto it = names_.find(u);
    if (it != names_.end()) return it->second;
    missing_ = true;
    static const std::string* const kEmpty = new std::string();
    return *kEmpty;
  }
  const std::string& Src(const UOp* u, int i) const { return Name(u->src(i)); }
  bool contains(const UOp* u) const { return names_.contains(u); }
  void Set(const UOp* u, std::string name) { names_[u] = std::move(name); }
  // On a target that keeps vectors wider than tinygrad's float4 (Renderer::vector_width), vector loads and
  // stores promise only their element's alignment: a 16-lane load starts anywhere a float may.
  bool unaligned_vectors = false;
  std::string Alignment(DType dt) const {
    if (!unaligned_vectors || dt.count() == 1) return "";
    return absl::StrCat(", align ", dt.scalar().itemsize());
  }
  // Whether a lookup failed since the last call, which resets it.
  bool TakeMissing() const { return std::exchange(missing_, false); }
  // The formats' fields: {type} (u's LLVM type), {t0}..{t2} (its sources' types), {base} (its pointer's
  // element type), {arg}, {lane} (a GEP's lane), {bare} and {bare0} (u's or source 0's name without `%`),
  // {lop} (a binary op's instruction for its operands' kind), {align} and {align1} (`, align N` for a load's
  // or a store's vector when unaligned_vectors is set, else nothing).
  static const RenderFields<LlvmContext>& Fields();

  absl::Status status;

 private:
  absl::flat_hash_map<const UOp*, std::string> names_;
  mutable bool missing_ = false;
};

// Python's `name[1:]`: a local name without its `%`.
std::string Bare(const std::string& name) { return name.empty() ? name : name.substr(1); }

const RenderFields<LlvmContext>& LlvmContext::Fields() {
  using C = LlvmContext;
  static const RenderFields<C>* const fields = new RenderFields<C>({
      {"type", [](C&, const UOp* u, std::string* out) { *out += LlvmType(u->dtype()); }},
      {"t0", [](C&, const UOp* u, std::string* out) { *out += LlvmType(u->src(0)->dtype()); }},
      {"t1", [](C&, const UOp* u, std::string* out) { *out += LlvmType(u->src(1)->dtype()); }},
      {"t2", [](C&, const UOp* u, std::string* out) { *out += LlvmType(u->src(2)->dtype()); }},
      {"base", [](C&, const UOp* u, std::string* out) { *out += LlvmType(u->dtype().base()); }},
      {"arg", [](C&, const UOp* u, std::string* out) { *out += u->arg().ToString(); }},
      {"lane", [](C&, const UOp* u, std::string* out) { *out += u->arg()[0].ToString(); }},
      {"bare", [](C& c, const UOp* u, std::string* out) { *out += Bare(c.Name(u)); }},
      {"bare0", [](C& c, const UOp* u, std::string* out) { *out += Bare(c.Src(u, 0)); }},
      {"lop",
       [](C&, const UOp* u, std::string* out) { *out += BinaryInstruction(u->op(), u->src(0)->dtype()); }},
      {"align", [](C& c, const UOp* u, std::string* out) { *out += c.Alignment(u->dtype()); }},
      {"align1", [](C& c, const UOp* u, std::string* out) { *out += c.Alignment(u->src(1)->dtype()); }},
  });
  return *fields;
}

bool HasSource(const UOp* x) { return x->num_src() >= 1; }
bool IsMaskedLoad(const UOp* x) { return x->num_src() == 2 && MaskedIndex(x->src(0)) != nullptr; }
bool IsLane(const UOp* x) { return x->arg().is_tuple() && x->arg().size() != 0; }
bool HasLop(const UOp* x) { return BinaryInstruction(x->op(), x->src(0)->dtype()) != nullptr; }
bool IsFloat(const UOp* x) { return x->dtype().is_float(); }

// tinygrad's base_rewrite for LLVM IR: the instruction lines of each uop.
const RenderRules<LlvmContext>& Rules() {
  using C = LlvmContext;
  static const RenderRules<C>* const rules = new RenderRules<C>({
      {Ops::INDEX, "  {x} = getelementptr inbounds {base}, {t0} {0}, {t1} {1}"},
      // A masked load branches around the load and joins the loaded and the alternative value.
      {RenderPat(Ops::LOAD).when(IsMaskedLoad),
       [](C& r, const UOp* x) -> std::optional<std::string> {
         const std::string& n = r.Name(x);
         const UOp* idx = x->src(0);
         const std::string& mask = r.Name(MaskedIndex(idx)->src(2));
         const std::string t = LlvmType(x->dtype()), b = Bare(n);
         return absl::StrCat("  br label ", n, "_entry\n", b, "_entry:\n", "  br i1 ", mask, ", label ", n,
                             "_load, label ", n, "_exit\n", b, "_load:\n", "  ", n, "_yes = load ", t, ", ",
                             LlvmType(idx->dtype()), " ", r.Name(idx), r.Alignment(x->dtype()), "\n",
                             "  br label ", n, "_exit\n", b, "_exit:\n", "  ", n, " = phi ", t, " [", n,
                             "_yes, ", n, "_load], [", r.Src(x, 1), ", ", n, "_entry]");
       }},
      {Ops::LOAD, "  {x} = load {type}, {t0} {0}{align}"},
      {Ops::STORE, "  store {t1} {1}, {t0} {0}{align1}"},
      {RenderPat(Ops::GEP).srcs(1).when(IsLane), "  {x} = extractelement {t0} {0}, i32 {lane}"},
      {RenderPat(Ops::VECTORIZE).when(IsBroadcast),
       [](C& r, const UOp* x) -> std::optional<std::string> {
         const std::string& n = r.Name(x);
         const std::string t = LlvmType(x->src(0)->dtype()), one = absl::StrCat("<1 x ", t, ">");
         return absl::StrCat("  ", n, "_z = insertelement ", one, " poison, ", t, " ", r.Src(x, 0),
                             ", i32 0\n", "  ", n, " = shufflevector ", one, " ", n, "_z, ", one,
                             " poison, <", x->dtype().count(), " x i32> zeroinitializer");
       }},
      {Ops::VECTORIZE,
       [](C& r, const UOp* x) -> std::optional<std::string> {
         const std::string& n = r.Name(x);
         const std::string t = LlvmType(x->dtype());
         std::string out;
         for (size_t i = 0; i < x->num_src(); ++i) {
           const std::string target = i + 1 != x->num_src() ? absl::StrCat(n, "_", i) : n;
           const std::string into = i != 0 ? absl::StrCat(n, "_", i - 1) : "poison";
           absl::StrAppend(&out, i != 0 ? "\n" : "", "  ", target, " = insertelement ", t, " ", into, ", ",
                           LlvmType(x->src(i)->dtype()), " ", r.Src(x, i), ", i32 ", i);
         }
         return out;
       }},
      {RenderPat(Ops::BITCAST).srcs(1), "  {x} = bitcast {t0} {0} to {type}"},
      {RenderPat(Ops::CAST).srcs(1),
       [](C& r, const UOp* x) -> std::optional<std::string> {
         absl::StatusOr<std::string> instruction = LlvmCastInstruction(x->src(0)->dtype(), x->dtype());
         if (!instruction.ok()) {
           r.status = instruction.status();
           return std::string();
         }
         return absl::StrCat("  ", r.Name(x), " = ", *instruction, " ", LlvmType(x->src(0)->dtype()), " ",
                             r.Src(x, 0), " to ", LlvmType(x->dtype()));
       }},
      {RenderPat(Ops::WHERE).srcs(3), "  {x} = select {t0} {0}, {t1} {1}, {t2} {2}"},
      {RenderPat(Ops::RANGE).when(HasSource),
       "  br label %loop_entry_{arg}\nloop_entry_{arg}:\n  br label %loop_body_{arg}\nloop_body_{arg}:\n"
       "  {x} = phi {type} [ 0, %loop_entry_{arg} ], [ {x}phi, %loop_latch_{arg} ]"},
      {RenderPat(Ops::ENDRANGE).when([](const UOp* x) {
         return x->num_src() >= 1 && x->src(0)->num_src() >= 1;
       }),
       [](C& r, const UOp* x) -> std::optional<std::string> {
         const UOp* range = x->src(0);
         const std::string a = range->arg().ToString();
         const std::string& i = r.Name(range);
         return absl::StrCat("  br label %loop_latch_", a, "\nloop_latch_", a, ":\n", "  ", i,
                             "phi = add i32 ", i, ", 1\n", "  ", r.Name(x), " = icmp ult i32 ", i, "phi, ",
                             r.Src(range, 0), "\n", "  br i1 ", r.Name(x), ", label %loop_body_", a,
                             ", label %loop_exit_", a, "\nloop_exit_", a, ":");
       }},
      {Ops::IF, "  br i1 {0}, label %ifbody_{bare}, label %ifskip_{bare}\nifbody_{bare}:"},
      {RenderPat(Ops::ENDIF).when(HasSource), "  br label %ifskip_{bare0}\nifskip_{bare0}:"},
      {Ops::BARRIER, ""},
      {RenderPat(groups::kBinary).srcs(2).when(HasLop), "  {x} = {lop} {t0} {0}, {1}"},
      // -x (uopc's addition: codegen makes no NEG for LLVM, a hand-written kernel may hold one).
      {RenderPat(Ops::NEG).srcs(1).when(IsFloat), "  {x} = fneg nsz arcp contract afn {t0} {0}"},
      {RenderPat(Ops::NEG).srcs(1), "  {x} = sub {t0} zeroinitializer, {0}"},
  });
  return *rules;
}

// The function around the instruction lines, then the attribute group (tinygrad's _render_fn and
// _render_footer). Buffers are `noalias align 32`: the allocator promises that alignment.
std::string RenderModule(const std::string& name, const std::vector<std::pair<std::string, DType>>& args,
                         const std::vector<std::string>& lines) {
  std::vector<std::string> params;
  for (const auto& [arg, dt] : args) {
    params.push_back(absl::StrCat(LlvmType(dt), dt.is_ptr() ? " noalias align 32" : "", " ", arg));
  }
  std::vector<std::string> out = {
      absl::StrCat("define void @", name, "(", absl::StrJoin(params, ", "), ") #0"), "{"};
  out.insert(out.end(), lines.begin(), lines.end());
  out.push_back("  ret void\n}");
  return absl::StrCat(
      absl::StrJoin(out, "\n"), "\n",
      "attributes #0 = { alwaysinline nounwind \"no-builtins\" \"no-trapping-math\"=\"true\" }");
}

}  // namespace

std::string LlvmType(DType dt) {
  if (dt.vcount() > 1) {
    const DType element = dt.is_ptr() ? dt.base().Ptr(dt.ptr_size(), dt.is_local()) : dt.scalar();
    return absl::StrCat("<", dt.vcount(), " x ", LlvmType(element), ">");
  }
  if (dt.is_ptr()) return absl::StrCat(LlvmType(dt.base()), "*");
  switch (dt.scalar_type()) {
    case ScalarType::kVoid:
      return "void";
    case ScalarType::kBool:
      return "i1";
    case ScalarType::kInt8:
    case ScalarType::kUInt8:
      return "i8";
    case ScalarType::kInt16:
    case ScalarType::kUInt16:
      return "i16";
    case ScalarType::kInt32:
    case ScalarType::kUInt32:
      return "i32";
    case ScalarType::kInt64:
    case ScalarType::kUInt64:
      return "i64";
    case ScalarType::kFloat16:
      return "half";
    case ScalarType::kBFloat16:
      return "bfloat";
    case ScalarType::kFloat32:
      return "float";
    case ScalarType::kFloat64:
      return "double";
  }
  return "void";
}

std::string LlvmConst(ConstValue v, DType dt) {
  const DType s = dt.scalar();
  if (!s.is_float()) {
    const absl::int128 i = v.AsInt();
    return absl::StrFormat("%d", i);
  }
  const double x = v.AsFloat();
  double rounded = x;
  switch (s.scalar_type()) {
    case ScalarType::kFloat32:
      rounded = static_cast<float>(x);
      break;
    case ScalarType::kFloat16:
      rounded = Truncate(ConstValue::Float(x), s).AsFloat();
      break;
    case ScalarType::kBFloat16:
      rounded = ChopToBFloat16(x);
      break;
    default:
      break;
  }
  // Departures from tinygrad, both where its text is IR that LLVM rejects (docs/parity.md): a finite value
  // that rounds to an infinity is written as one (tinygrad writes `inf`), and a float literal always has a
  // `.` (tinygrad writes Python's `1e-05`, which LLVM reads as an integer).
  if (std::isinf(rounded) || std::isnan(rounded)) {
    uint64_t bits;
    std::memcpy(&bits, &rounded, sizeof(bits));
    return absl::StrFormat("0x%016X", bits);
  }
  std::string text = PythonFloatRepr(rounded);
  if (text.find('.') == std::string::npos) {
    const size_t exponent = text.find('e');
    if (exponent != std::string::npos) text.insert(exponent, ".0");
  }
  return text;
}

absl::StatusOr<std::string> LlvmCastInstruction(DType from, DType to) {
  if (from.is_float()) {
    if (to.is_float()) return std::string(to.itemsize() > from.itemsize() ? "fpext" : "fptrunc");
    if (to.is_int()) return std::string(to.is_unsigned() ? "fptoui" : "fptosi");
  }
  if (from.is_unsigned() || from.is_bool()) {
    if (to.is_float()) return std::string("uitofp");
    if (to.is_int()) return std::string(to.itemsize() < from.itemsize() ? "trunc" : "zext");
  }
  if (from.is_int()) {
    if (to.is_float()) return std::string("sitofp");
    if (to.is_int()) return std::string(to.itemsize() < from.itemsize() ? "trunc" : "sext");
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no LLVM cast from ", from.ToString(), " to ", to.ToString()));
}

LLVMRenderer::LLVMRenderer(CoreSplit split, int vector_width) {
  UOPC_CHECK(vector_width >= 1 && vector_width <= 16 && (vector_width & (vector_width - 1)) == 0,
             "a vector width is a power of two up to 16");
  vector_width_ = vector_width;
  device_ = "LLVM";
  core_split_ = split;
  supports_float4_ = true;
  has_local_ = false;
  global_max_ = std::nullopt;
  // tinygrad's LLVMRenderer has no code_for_op: every op codegen can decompose (EXP2, LOG2, SIN, SQRT, the
  // shifts, NEG) is decomposed.
  supported_ops_ = OpSet{};
}

const PatternMatcher* LLVMRenderer::extra_matcher() const {
  static const PatternMatcher* const pm = new PatternMatcher({
      // 1/x as a division (LLVM has no reciprocal instruction).
      {UPat(Ops::RECIP).named("x"),
       [](const Match& m) {
         const UOpPtr& x = m["x"];
         return UOp::New(Ops::FDIV, x->dtype(), {x.const_like(1), x->src()[0]});
       }},
      // A cast to bool is a comparison with zero.
      {UPat(Ops::CAST).dtype(dtypes::kBool).named("x"),
       [](const Match& m) {
         const UOpPtr& y = m["x"]->src()[0];
         return y.ne(y.const_like(0));
       }},
      // Ops codegen makes none of for LLVM, which a hand-written kernel may hold (uopc's additions): a
      // multiply-add as a multiply and an add, a shift by a count of another type by one of the shifted
      // value's (LLVM shifts take one type), and bool shifts as the logic they compute (an i1 shifted by 1 is
      // poison): a << n is a, a >> n is a where n is 0.
      {UPat(Ops::MULACC).src(UPat::Var("a"), UPat::Var("b"), UPat::Var("c")),
       [](const Match& m) { return m["a"] * m["b"] + m["c"]; }},
      {UPat(Ops::SHL).dtype(dtypes::kBool).src(UPat::Var("x"), UPat()),
       [](const Match& m) { return m["x"]; }},
      {UPat(Ops::SHR).dtype(dtypes::kBool).src(UPat::Var("x"), UPat::Var("n")),
       [](const Match& m) { return m["x"] & m["n"].ne(m["n"].const_like(0)).logical_not(); }},
      {UPat(OpSet{Ops::SHL, Ops::SHR}).src(UPat::Var("x"), UPat::Var("n")).named("shift"),
       [](const Match& m) -> UOpPtr {
         if (m["n"]->dtype() == m["x"]->dtype()) return nullptr;
         return UOp::New(m.root()->op(), m.root()->dtype(), {m["x"], m["n"].cast(m["x"]->dtype())});
       }},
      // max(a, b) -> a < b ? b : a.
      {UPat(Ops::MAX).named("m"),
       [](const Match& m) {
         const UOpPtr a = m.root()->src()[0], b = m.root()->src()[1];
         return a.lt(b).where(b, a);
       }},
      // bfloat16 math runs in float.
      {UPat(OpSet{Ops::SQRT, Ops::EXP2, Ops::LOG2, Ops::SIN}).dtype(dtypes::kBFloat16).named("x"),
       [](const Match& m) {
         const UOp* x = m.root();
         std::vector<UOpPtr> src;
         for (const UOpPtr& s : x->src()) src.push_back(s.cast(dtypes::kFloat32));
         return UOp::New(x->op(), dtypes::kFloat32, src, x->arg()).cast(dtypes::kBFloat16);
       }},
      // Casts from and to bfloat16 go through float.
      {UPat(Ops::CAST).src(UPat::Var("y", dtypes::kBFloat16)).named("x"),
       [](const Match& m) -> UOpPtr {
         if (m["x"]->dtype() == dtypes::kFloat32) return nullptr;
         return m["y"].cast(dtypes::kFloat32).cast(m["x"]->dtype());
       }},
      {UPat(Ops::CAST).dtype(dtypes::kBFloat16).src(UPat::Var("x")),
       [](const Match& m) -> UOpPtr {
         if (m["x"]->dtype() == dtypes::kFloat32) return nullptr;
         return m["x"].cast(dtypes::kFloat32).cast(dtypes::kBFloat16);
       }},
  });
  return pm;
}

absl::StatusOr<std::string> LLVMRenderer::RenderProgram(absl::Span<const UOp* const> uops) const {
  LlvmContext r;
  r.unaligned_vectors = vector_width_ > 1;
  const RenderRules<LlvmContext>& rules = Rules();
  std::vector<std::pair<std::string, DType>> args;
  std::vector<std::string> lines;
  int vc = -1;

  // Every ASSIGN names itself and its value up front, so the loop phis can refer to the value before it is
  // computed. Accumulators in the order of their ASSIGNs.
  std::vector<std::pair<const UOp*, const UOp*>> acc_to_assign;
  for (const UOp* u : uops) {
    if (u->op() != Ops::ASSIGN) continue;
    if (u->num_src() != 2) return absl::InvalidArgumentError("an ASSIGN needs an accumulator and a value");
    ++vc;
    r.Set(u, absl::StrCat("%assign", vc));
    r.Set(u->src(1), absl::StrCat("%assign", vc));
    for (const auto& [acc, value] : acc_to_assign) {
      if (acc == u->src(0)) return absl::InvalidArgumentError("an accumulator is assigned twice");
    }
    acc_to_assign.emplace_back(u->src(0), u->src(1));
  }

  std::string name = "test";
  const UOp* core_id = nullptr;  // a kernel split across cores takes its chunk's number last
  for (size_t pos = 0; pos < uops.size(); ++pos) {
    const UOp* u = uops[pos];
    auto error = [&](absl::string_view what) { return RenderError(pos, u, what); };
    switch (u->op()) {
      case Ops::SPECIAL:
        if (u->arg()[0].as_string() != "gidx0" || u->dtype() != dtypes::kInt32 || core_id != nullptr)
          return error("the only launch index on LLVM is the core id, gidx0");
        core_id = u;
        r.Set(u, "%core_id");
        continue;
      case Ops::SINK:
        if (const KernelInfo* info = KernelInfoOf(u)) name = info->name;
        continue;
      case Ops::DEFINE_GLOBAL:
        r.Set(u, absl::StrCat("%data", u->arg().as_int()));
        args.emplace_back(r.Name(u), u->dtype());
        continue;
      case Ops::DEFINE_VAR:
        r.Set(u, absl::StrCat("%", u->var_name()));
        args.emplace_back(r.Name(u), u->dtype());
        continue;
      case Ops::DEFINE_LOCAL:
        if (!u->dtype().is_ptr()) return error("a DEFINE_LOCAL is a pointer");
        if (!u->arg().is_int()) return error("a DEFINE_LOCAL needs a number");
        r.Set(u, absl::StrCat("%local_", u->arg().as_int()));
        lines.push_back(absl::StrCat("  ", r.Name(u), " = alloca [", u->dtype().ptr_size(), " x ",
                                     LlvmType(u->dtype()), "], align 16"));
        continue;
      case Ops::ASSIGN:
        continue;  // named in the first pass
      case Ops::DEFINE_ACC:
        if (u->num_src() == 0) return error("a DEFINE_ACC needs an initial value");
        r.Set(u, r.Name(u->src(0)));
        if (r.TakeMissing()) return error("its initial value is not rendered before it");
        continue;
      case Ops::CONST:
        r.Set(u, LlvmConst(u->const_value(), u->dtype()));
        continue;
      default:
        break;
    }
    // A cast between types LLVM spells the same (signed and unsigned, pointers) is the value itself.
    if (u->op() == Ops::CAST && u->num_src() == 1 &&
        (u->dtype().is_ptr() || LlvmType(u->dtype()) == LlvmType(u->src(0)->dtype()))) {
      r.Set(u, r.Name(u->src(0)));
      if (r.TakeMissing()) return error("a source is not rendered before its use");
      continue;
    }
    if (!r.contains(u)) r.Set(u, absl::StrCat("%v", ++vc));
    std::optional<std::string> line = rules.Render(r, u);
    if (!r.status.ok()) return error(r.status.message());
    if (!line.has_value()) return error("the LLVM target has no rendering for it");
    if (r.TakeMissing()) return error("a source is not rendered before its use");
    lines.push_back(*std::move(line));

    // The accumulators this loop carries get a phi: the value before the loop, or the one assigned in it.
    if (u->op() == Ops::RANGE) {
      for (const auto& [acc, value] : acc_to_assign) {
        bool carried = false;
        for (const UOpPtr& s : acc->src()) carried |= s.get() == u;
        if (!carried) continue;
        const std::string phi = absl::StrCat("%acc", ++vc);
        const std::string a = u->arg().ToString();
        lines.push_back(absl::StrCat("  ", phi, " = phi ", LlvmType(acc->dtype()), " [ ", r.Name(acc),
                                     ", %loop_entry_", a, " ], [ ", r.Name(value), ", %loop_latch_", a,
                                     " ]"));
        if (r.TakeMissing()) return error("an accumulator it carries is not defined before it");
        r.Set(acc, phi);
      }
    }
  }
  if (core_id != nullptr) args.emplace_back("%core_id", dtypes::kInt32);
  return RenderModule(name, args, lines);
}

std::unique_ptr<Renderer> MakeLLVMRenderer() { return std::make_unique<LLVMRenderer>(); }

}  // namespace uopc
