#include "renderer/ptx.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <sstream>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "renderer/render_rules.h"
#include "renderer/tensor_cores.h"
#include "rewrite/upat.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

// The register type of a scalar dtype (tinygrad's PTXRenderer.types): bytes live in 16-bit registers, since
// PTX has no 8-bit arithmetic.
std::optional<std::string> RegType(DType dt) {
  if (dt.is_ptr() || dt.count() != 1) return std::nullopt;
  switch (dt.scalar_type()) {
    case ScalarType::kInt8:
    case ScalarType::kInt16:
      return "s16";
    case ScalarType::kInt32:
      return "s32";
    case ScalarType::kInt64:
      return "s64";
    case ScalarType::kUInt8:
    case ScalarType::kUInt16:
      return "u16";
    case ScalarType::kUInt32:
      return "u32";
    case ScalarType::kUInt64:
      return "u64";
    case ScalarType::kFloat16:
      return "f16";
    case ScalarType::kBFloat16:
      return "b16";  // uopc's addition: PTX computes no bfloat16 (the extra rules compute in float)
    case ScalarType::kFloat32:
      return "f32";
    case ScalarType::kFloat64:
      return "f64";
    case ScalarType::kBool:
      return "pred";
    default:
      return std::nullopt;
  }
}

// The type of a load or store of a scalar dtype (tinygrad's mem_types): bytes and bools move as 8 bits,
// halfs as untyped 16 bits.
std::optional<std::string> MemType(DType dt) {
  if (dt.is_ptr() || dt.count() != 1) return std::nullopt;
  switch (dt.scalar_type()) {
    case ScalarType::kInt8:
      return "s8";
    case ScalarType::kUInt8:
    case ScalarType::kBool:
      return "u8";
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16:
      return "b16";
    default:
      return RegType(dt);
  }
}

// tinygrad's render_val: a constant as PTX writes it (floats by their bits, big-endian hex).
std::string RenderVal(const ConstValue& v, DType dt) {
  if (dt.is_float()) {
    const double x = v.AsFloat();
    if (dt.scalar_type() == ScalarType::kFloat64) {
      uint64_t bits;
      std::memcpy(&bits, &x, sizeof(bits));
      return absl::StrFormat("0d%016X", bits);
    }
    if (dt.scalar_type() == ScalarType::kFloat16) {
      return absl::StrFormat("0x%04X", FloatToHalfBits(static_cast<float>(x)));
    }
    if (dt.scalar_type() == ScalarType::kBFloat16) {
      return absl::StrFormat("0x%04X", FloatToBFloat16Bits(static_cast<float>(x)));
    }
    const float f = static_cast<float>(x);
    uint32_t bits;
    std::memcpy(&bits, &f, sizeof(bits));
    return absl::StrFormat("0f%08X", bits);
  }
  std::ostringstream out;  // Python's str(int(x)), which may exceed 64 bits
  out << v.AsInt();
  std::string text = out.str();
  if (dt.is_unsigned()) text += "U";
  return text;
}

std::string RenderVal(int64_t v, DType dt) { return RenderVal(ConstValue::Int(v), dt); }

// A string without its first character ("s32" -> "32", "%ridx_s32_0" -> "ridx_s32_0"); "" stays "".
std::string Tail(const std::string& s) { return s.empty() ? s : s.substr(1); }

// The type cvt names for a dtype: its register type, but `bf16` for bfloat16 (held in b16 registers).
std::optional<std::string> CvtType(DType dt) {
  if (!dt.is_ptr() && dt.count() == 1 && dt.scalar_type() == ScalarType::kBFloat16) return "bf16";
  return RegType(dt);
}

// tinygrad's modifier: the rounding of a conversion from b to a.
std::string CvtModifier(DType a, DType b) {
  if (a.is_int() && b.is_float()) return ".rzi";
  if (a.is_float() && (a.itemsize() < b.itemsize() || b.is_int() || b.is_bool())) return ".rn";
  return "";
}

// The ops of tinygrad's asm_for_op: the target's supported_ops, which codegen's late rewrites aim at.
constexpr OpSet kPtxOps{Ops::RECIP, Ops::EXP2,  Ops::LOG2,  Ops::SIN,    Ops::SQRT, Ops::SHR,  Ops::SHL,
                        Ops::ADD,   Ops::MUL,   Ops::XOR,   Ops::AND,    Ops::OR,   Ops::IDIV, Ops::MOD,
                        Ops::MAX,   Ops::CMPLT, Ops::CMPNE, Ops::MULACC, Ops::WHERE};
// The renderer also writes the ALU ops codegen never makes for PTX but a hand-written kernel may hold (uopc's
// addition). They stay out of supported_ops: there, NEG and SUB would turn codegen's `x * -1` and `x + -y`
// into them, and the kernels would no longer be tinygrad's.
constexpr OpSet kRenderedOps = kPtxOps | OpSet{Ops::SUB, Ops::NEG, Ops::FDIV};
// The ops PTX has a half instruction for (sub.f16 and neg.f16 are uopc's additions); the other ops on halfs
// are computed in float.
constexpr OpSet kHalfOps{Ops::EXP2, Ops::ADD, Ops::SUB, Ops::NEG, Ops::MUL, Ops::MAX, Ops::CMPLT, Ops::WHERE};

// A uop's registers: one name, or one per lane for a vector (tinygrad's r[u], a str or a list).
struct Regs {
  std::vector<std::string> names;
  bool is_list = false;
};

// One PTX render (tinygrad's `r` and ssa counters): the registers given so far, their counters per kind, the
// program's positions, and the first error a lookup met (the render then fails with it).
class PtxContext {
 public:
  explicit PtxContext(absl::Span<const UOp* const> uops) {
    for (size_t i = 0; i < uops.size(); ++i) position_.emplace(uops[i], i);
  }

  // The uop being rendered, for error messages and IF labels.
  void Start(const UOp* u, size_t pos) {
    current_ = u;
    pos_ = pos;
  }
  size_t pos() const { return pos_; }
  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("cannot render uop ", pos_, " (", OpName(current_->op()),
                                                   " ", current_->dtype().ToString(), ") as PTX: ", what));
  }
  // Records the first error; lookups after it return empty text.
  void Fail(absl::string_view what) {
    if (status.ok()) status = Error(what);
  }

  // A fresh register of kind `prefix` and register type `type` (tinygrad's ssa).
  std::string Ssa(absl::string_view prefix, absl::string_view type) {
    std::string key = absl::StrCat(prefix, "_", type, "_");
    auto [it, inserted] = counter_index_.emplace(key, counters_.size());
    if (inserted) counters_.emplace_back(key, 0);
    return absl::StrCat("%", key, counters_[it->second].second++);
  }

  const Regs& RegsOf(const UOp* u) {
    static const Regs* const kNone = new Regs{{""}, false};
    auto it = regs_.find(u);
    if (it != regs_.end()) return it->second;
    Fail("a source has no register");
    return *kNone;
  }
  // A scalar's register.
  const std::string& Name(const UOp* u) {
    const Regs& r = RegsOf(u);
    if (r.is_list || r.names.size() != 1) {
      Fail("a vector where PTX needs one register");
      static const std::string* const kEmpty = new std::string();
      return *kEmpty;
    }
    return r.names[0];
  }
  const std::string& Src(const UOp* u, int i) { return Name(u->src(i)); }
  std::string RegType(DType dt) {
    std::optional<std::string> t = uopc::RegType(dt);
    if (!t.has_value()) Fail(absl::StrCat("no PTX register type for ", dt.ToString()));
    return t.value_or("");
  }
  std::string MemType(DType dt) {
    std::optional<std::string> t = uopc::MemType(dt);
    if (!t.has_value()) Fail(absl::StrCat("no PTX memory type for ", dt.ToString()));
    return t.value_or("");
  }
  // The formats' fields: {t} (u's register type), {bits} (its width: `s32` -> `32`), {st} (source 0's
  // register type, for comparisons), {mem} (u's memory type), {val} (u's constant), {val0} (source 0's
  // constant, in u's dtype), {var} (a DEFINE_VAR's name), {arg} (the arg).
  static const RenderFields<PtxContext>& Fields();

  void Set(const UOp* u, std::string name) { regs_[u] = Regs{{std::move(name)}, false}; }
  void SetList(const UOp* u, std::vector<std::string> names) { regs_[u] = Regs{std::move(names), true}; }
  void SetSame(const UOp* u, const UOp* other) {
    Regs copy = regs_.at(other);  // (inserting may rehash: copy before)
    regs_[u] = std::move(copy);
  }
  // The uop's index in the program, or nullopt for one outside it.
  std::optional<size_t> Position(const UOp* u) const {
    auto it = position_.find(u);
    return it == position_.end() ? std::nullopt : std::optional<size_t>(it->second);
  }
  const std::vector<std::pair<std::string, int64_t>>& counters() const { return counters_; }

  absl::Status status;
  // A WMMA's packed 32-bit registers: A, B and the accumulator.
  std::vector<std::vector<std::string>> wmma_regs;

 private:
  const UOp* current_ = nullptr;
  size_t pos_ = 0;
  absl::flat_hash_map<const UOp*, size_t> position_;
  absl::flat_hash_map<const UOp*, Regs> regs_;
  std::vector<std::pair<std::string, int64_t>> counters_;  // in order of first use
  absl::flat_hash_map<std::string, size_t> counter_index_;
};

const RenderFields<PtxContext>& PtxContext::Fields() {
  using C = PtxContext;
  static const RenderFields<C>* const fields = new RenderFields<C>({
      {"t", [](C& c, const UOp* u, std::string* out) { *out += c.RegType(u->dtype()); }},
      {"bits", [](C& c, const UOp* u, std::string* out) { *out += Tail(c.RegType(u->dtype())); }},
      {"st", [](C& c, const UOp* u, std::string* out) { *out += c.RegType(u->src(0)->dtype()); }},
      {"mem", [](C& c, const UOp* u, std::string* out) { *out += c.MemType(u->dtype()); }},
      {"val", [](C&, const UOp* u, std::string* out) { *out += RenderVal(u->const_value(), u->dtype()); }},
      {"val0",
       [](C&, const UOp* u, std::string* out) { *out += RenderVal(u->src(0)->const_value(), u->dtype()); }},
      {"var", [](C&, const UOp* u, std::string* out) { *out += u->var_name(); }},
      {"arg", [](C&, const UOp* u, std::string* out) { *out += u->arg().ToString(); }},
  });
  return *fields;
}

// tinygrad's mem_type: loads and stores through an address computed from shared memory are `shared`.
std::string MemSpace(const UOp* x) {
  if (x->num_src() == 0) return "global";
  for (const UOp* u : x->src(0)->Toposort()) {
    if (u->op() == Ops::DEFINE_LOCAL) return "shared";
  }
  return "global";
}

// tinygrad's fmt: a tab before the line, and the first space (after the mnemonic) as one tab for a long first
// word, else two.
std::string FormatLine(const std::string& line) {
  if (!line.empty() && line[0] == '$') return line;
  const size_t space = line.find(' ');
  if (space == std::string::npos) return "\t" + line;
  return absl::StrCat("\t", line.substr(0, space), space > 7 ? "\t" : "\t\t", line.substr(space + 1));
}

constexpr char kKernelPrefix[] = ".version VERSION\n.target TARGET\n.address_size 64\n.visible .entry";

}  // namespace

const PatternMatcher& PtxExtraMatcher() {
  static const PatternMatcher* const pm = new PatternMatcher({
      // Bool comparisons: a != b is a ^ b, a < b is !a & b.
      {UPat::Var("x", dtypes::kBool).ne(UPat::Var("y")),
       [](const Match& m) { return m["x"].bitwise_xor(m["y"]); }},
      {UPat::Var("x", dtypes::kBool).lt(UPat::Var("y")),
       [](const Match& m) { return m["x"].bitwise_xor(m["x"].const_like(true)).bitwise_and(m["y"]); }},
      // Bool ops PTX has no predicate instruction for, as the logic they compute (uopc's addition: tinygrad
      // never makes them): max is or, a - b is a ^ b, -a is a, a * b + c is (a & b) | c, a << n is a, and
      // a >> n is a where n is 0.
      {UPat(Ops::MAX).dtype(dtypes::kBool).src(UPat::Var("x"), UPat::Var("y")),
       [](const Match& m) { return m["x"] | m["y"]; }},
      {UPat(Ops::SUB).dtype(dtypes::kBool).src(UPat::Var("x"), UPat::Var("y")),
       [](const Match& m) { return m["x"].bitwise_xor(m["y"]); }},
      {UPat(Ops::NEG).dtype(dtypes::kBool).src(UPat::Var("x")), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::MULACC).dtype(dtypes::kBool).src(UPat::Var("a"), UPat::Var("b"), UPat::Var("c")),
       [](const Match& m) { return m["a"].bitwise_and(m["b"]) | m["c"]; }},
      {UPat(Ops::SHL).dtype(dtypes::kBool).src(UPat::Var("x"), UPat()), [](const Match& m) { return m["x"]; }},
      {UPat(Ops::SHR).dtype(dtypes::kBool).src(UPat::Var("x"), UPat::Var("n")),
       [](const Match& m) { return m["x"].bitwise_and(m["n"].ne(m["n"].const_like(0)).logical_not()); }},
      // bfloat16 (uopc's addition: tinygrad's PTX has none) computes in float: its ALU ops, its comparisons,
      // and its casts to and from anything but float (PTX converts bf16 only to and from f32 on sm_80).
      {UPat(kRenderedOps - OpSet{Ops::WHERE}).dtype(dtypes::kBFloat16).named("x"),
       [](const Match& m) {
         const UOp* x = m.root();
         const DType f32 = dtypes::kFloat32.Vec(x->dtype().count());
         std::vector<UOpPtr> src;
         for (const UOpPtr& s : x->src()) src.push_back(s.cast(f32));
         return UOp::New(x->op(), f32, src, x->arg()).cast(x->dtype());
       }},
      {UPat(OpSet{Ops::CMPLT, Ops::CMPNE}).src(UPat::Var("a", dtypes::kBFloat16), UPat::Var("b")).named("x"),
       [](const Match& m) {
         const DType f32 = dtypes::kFloat32.Vec(m["a"]->dtype().count());
         return UOp::New(m.root()->op(), m.root()->dtype(), {m["a"].cast(f32), m["b"].cast(f32)});
       }},
      {UPat(Ops::CAST).src(UPat::Var("y", dtypes::kBFloat16)).named("x"),
       [](const Match& m) -> UOpPtr {
         const DType to = m.root()->dtype();
         if (to.is_ptr() || to.scalar() == dtypes::kFloat32 || to.scalar() == dtypes::kBFloat16) return nullptr;
         return m["y"].cast(dtypes::kFloat32.Vec(to.count())).cast(to);
       }},
      {UPat(Ops::CAST).dtype(dtypes::kBFloat16).src(UPat::Var("y")).named("x"),
       [](const Match& m) -> UOpPtr {
         const DType from = m["y"]->dtype();
         if (from.is_ptr() || from.scalar() == dtypes::kFloat32 || from.scalar() == dtypes::kBFloat16)
           return nullptr;
         return m["y"].cast(dtypes::kFloat32.Vec(from.count())).cast(m.root()->dtype());
       }},
      // Half ops without a PTX instruction compute in float.
      {UPat(kRenderedOps - kHalfOps).dtype(dtypes::kFloat16).named("x"),
       [](const Match& m) {
         const UOp* x = m.root();
         std::vector<UOpPtr> src;
         for (const UOpPtr& s : x->src()) src.push_back(s.cast(dtypes::kFloat32));
         return UOp::New(x->op(), dtypes::kFloat32, src, x->arg()).cast(dtypes::kFloat16);
       }},
      // Bools are loaded and stored as bytes.
      {UPat(Ops::LOAD).dtype(dtypes::kBool).src(UPat().dtype(dtypes::kInt64)).allow_any_len().named("x"),
       [](const Match& m) {
         const UOp* x = m.root();
         std::vector<UOpPtr> src = {x->src()[0]};
         if (x->num_src() >= 2) src.push_back(x->src()[1].cast(dtypes::kUInt8));
         for (size_t i = 2; i < x->num_src(); ++i) src.push_back(x->src()[i]);
         return UOp::New(Ops::LOAD, dtypes::kUInt8, src, x->arg()).cast(dtypes::kBool);
       }},
      {UPat(Ops::STORE)
           .src(UPat().dtype(dtypes::kInt64), UPat().dtype(dtypes::kBool))
           .allow_any_len()
           .named("x"),
       [](const Match& m) {
         const UOp* x = m.root();
         std::vector<UOpPtr> src = {x->src()[0], x->src()[1].cast(dtypes::kUInt8)};
         for (size_t i = 2; i < x->num_src(); ++i) src.push_back(x->src()[i]);
         return UOp::New(Ops::STORE, dtypes::kVoid, src, x->arg());
       }},
      // Indexing is 64-bit pointer arithmetic, and casts of pointers do nothing.
      {UPat(Ops::INDEX).src(UPat::Var("buf"), UPat::Var("idx")),
       [](const Match& m) {
         const UOpPtr& buf = m["buf"];
         return buf.cast(dtypes::kInt64) +
                m["idx"].cast(dtypes::kInt64) * static_cast<int64_t>(buf->dtype().itemsize());
       }},
      {UPat(Ops::CAST).named("x"),
       [](const Match& m) -> UOpPtr {
         const UOp* x = m.root();
         if (x->num_src() > 0 && (x->dtype().is_ptr() || x->src(0)->dtype() == dtypes::kVoid))
           return x->src()[0];
         return nullptr;
       }},
      // A gate moves from the INDEX to the load or store, so the INDEX becomes arithmetic.
      {UPat(Ops::LOAD).src(UPat(Ops::INDEX).src(UPat::Var("buf"), UPat::Var("idx"), UPat::Var("gate")),
                           UPat::Var("alt")),
       [](const Match& m) {
         return UOp::New(Ops::LOAD, m["alt"]->dtype(), {m["buf"].index(m["idx"]), m["alt"], m["gate"]});
       }},
      {UPat(Ops::STORE)
           .src(UPat(Ops::INDEX).src(UPat::Var("buf"), UPat::Var("idx"), UPat()), UPat::Var("val"),
                UPat::Var("gate")),
       [](const Match& m) {
         return m["buf"].index(m["idx"]).store({m["val"], m["gate"]});
       }},
      // Shift amounts are unsigned.
      {UPat(Ops::SHL).src(UPat::Var("x"), UPat::Var("y")),
       [](const Match& m) -> UOpPtr {
         if (m["y"]->dtype() == dtypes::kUInt32) return nullptr;
         return UOp::New(Ops::SHL, m["x"]->dtype(), {m["x"], m["y"].cast(dtypes::kUInt32)});
       }},
      {UPat(Ops::SHR).src(UPat::Var("x"), UPat::Var("y")),
       [](const Match& m) -> UOpPtr {
         if (m["y"]->dtype() == dtypes::kUInt32) return nullptr;
         return UOp::New(Ops::SHR, m["x"]->dtype(), {m["x"], m["y"].cast(dtypes::kUInt32)});
       }},
  });
  return *pm;
}

namespace {

using PtxRules = RenderRules<PtxContext>;

bool IsFloat(const UOp* u) { return u->dtype().is_float(); }
bool FromBool(const UOp* u) { return u->num_src() == 1 && u->src(0)->dtype() == dtypes::kBool; }
bool ComparesFloats(const UOp* u) { return u->num_src() == 2 && u->src(0)->dtype().is_float(); }
bool ToBool(const UOp* u) { return u->num_src() == 1 && u->dtype() == dtypes::kBool; }
bool OneSource(const UOp* u) { return u->num_src() == 1; }
bool GatedLoad(const UOp* u) { return u->num_src() == 3 && groups::kALU.contains(u->src(2)->op()); }
bool FromConst(const UOp* u) { return u->num_src() >= 1 && u->src(0)->op() == Ops::CONST; }
bool FromBoolConst(const UOp* u) { return FromConst(u) && u->src(0)->dtype() == dtypes::kBool; }
bool LoopOfRange(const UOp* u) { return u->num_src() == 1 && u->src(0)->num_src() >= 1; }
bool EndOfIf(const UOp* u) { return u->num_src() >= 1 && u->src(0)->num_src() >= 1; }

// Lanes packed into 32-bit registers: `{a, b}` for two halfs, the lane itself for a float.
std::string Packed(const std::vector<std::string>& lanes, size_t reg, int per_reg) {
  if (per_reg == 1) return lanes.at(reg);
  std::vector<std::string> packed(lanes.begin() + reg * per_reg,
                                  lanes.begin() + std::min(lanes.size(), (reg + 1) * per_reg));
  return absl::StrCat("{", absl::StrJoin(packed, ", "), "}");
}

// tinygrad's string_rewrite for PTX, in its order: one text per uop, instructions separated by newlines.
// The ALU rules are tinygrad's asm_for_op.
const PtxRules& Rules() {
  using C = PtxContext;
  // clang-format would indent each lambda of this table to its return type.
  // clang-format off
  static const PtxRules* const rules = new PtxRules({
      {RenderPat(Ops::CONST).dtype(dtypes::kBool), "setp.ne.s16 {x}, {val}, 0;"},
      {Ops::CONST, "mov.b{bits} {x}, {val};"},
      {Ops::STORE,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (x->num_src() < 2) return std::nullopt;
         const UOp* var = x->src(1);
         const int count = var->dtype().count();
         const std::string type = c.MemType(var->dtype().scalar());
         return absl::StrCat(
             "st.", MemSpace(x->src(0)), count > 1 ? absl::StrCat(".v", count) : "", ".", type, " [",
             c.Src(x, 0), "+0], ",
             count > 1 ? absl::StrCat("{", absl::StrJoin(c.RegsOf(var).names, ", "), "}") : c.Name(var), ";");
       }},
      {Ops::SPECIAL,
       [](C&, const UOp* x) -> std::optional<std::string> {
         const std::string& special = x->arg()[0].as_string();
         const char axis = static_cast<char>('x' + (special.back() - '0'));
         return absl::StrCat("mov.u32 %", special, ", %", special[0] == 'g' ? "ctaid" : "tid", ".",
                             std::string(1, axis), ";");
       }},
      {Ops::DEFINE_GLOBAL, "ld.param.u64 {x}, [data{arg}+0];"},
      // asm_for_op. Comparisons are typed by their operands.
      // The approximate instructions exist for f32 only (and ex2 for f16 too); for f64 PTX has correctly
      // rounded rcp, sqrt and div, and no exp2, log2 or sin, which codegen computes with its fallbacks
      // (transcendental_fallback_dtypes). tinygrad writes `.approx` for every float (docs/parity.md).
      // Integers have none of these: no rule, so such a uop is an error rather than PTX that does not
      // assemble.
      {RenderPat(Ops::RECIP).dtype(dtypes::kFloat32), "rcp.approx.{t} {x}, {0};"},
      {RenderPat(Ops::RECIP).dtype(dtypes::kFloat64), "rcp.rn.{t} {x}, {0};"},
      {RenderPat(Ops::EXP2).dtype({dtypes::kFloat16, dtypes::kFloat32}), "ex2.approx.{t} {x}, {0};"},
      {RenderPat(Ops::LOG2).dtype(dtypes::kFloat32), "lg2.approx.{t} {x}, {0};"},
      {RenderPat(Ops::SIN).dtype(dtypes::kFloat32), "sin.approx.{t} {x}, {0};"},
      {RenderPat(Ops::SQRT).dtype(dtypes::kFloat32), "sqrt.approx.{t} {x}, {0};"},
      {RenderPat(Ops::SQRT).dtype(dtypes::kFloat64), "sqrt.rn.{t} {x}, {0};"},
      {RenderPat(Ops::FDIV).dtype({dtypes::kFloat32, dtypes::kFloat64}), "div.rn.{t} {x}, {0}, {1};"},
      // neg takes signed and float types; an unsigned -x is 0 - x.
      {RenderPat(Ops::NEG).dtype(dtypes::kUInts), "sub.{t} {x}, 0, {0};"},
      {Ops::NEG, "neg.{t} {x}, {0};"},
      {Ops::SUB, "sub.{t} {x}, {0}, {1};"},
      {Ops::SHR, "shr.{t} {x}, {0}, {1};"},
      {Ops::SHL, "shl.b{bits} {x}, {0}, {1};"},
      {RenderPat(Ops::ADD).dtype(dtypes::kBool), "or.{t} {x}, {0}, {1};"},
      {Ops::ADD, "add.{t} {x}, {0}, {1};"},
      {RenderPat(Ops::MUL).dtype(dtypes::kBool), "and.{t} {x}, {0}, {1};"},
      {RenderPat(Ops::MUL).dtype(dtypes::kInts), "mul.lo.{t} {x}, {0}, {1};"},
      {Ops::MUL, "mul.{t} {x}, {0}, {1};"},
      {RenderPat(Ops::XOR).dtype(dtypes::kBool), "xor.pred {x}, {0}, {1};"},
      {Ops::XOR, "xor.b{bits} {x}, {0}, {1};"},
      {RenderPat(Ops::AND).dtype(dtypes::kBool), "and.pred {x}, {0}, {1};"},
      {Ops::AND, "and.b{bits} {x}, {0}, {1};"},
      {RenderPat(Ops::OR).dtype(dtypes::kBool), "or.pred {x}, {0}, {1};"},
      {Ops::OR, "or.b{bits} {x}, {0}, {1};"},
      {Ops::IDIV, "div.{t} {x}, {0}, {1};"},
      {Ops::MOD, "rem.{t} {x}, {0}, {1};"},
      {Ops::MAX, "max.{t} {x}, {0}, {1};"},
      {Ops::CMPLT, "setp.lt.{st} {x}, {0}, {1};"},
      // C's `!=` is true when an operand is NaN: PTX's unordered `neu` (its `ne` is false then, and so were
      // tinygrad's isnan and xlog2's NaN checks).
      {RenderPat(Ops::CMPNE).when(ComparesFloats), "setp.neu.{st} {x}, {0}, {1};"},
      {Ops::CMPNE, "setp.ne.{st} {x}, {0}, {1};"},
      {RenderPat(Ops::MULACC).when(IsFloat), "fma.rn.{t} {x}, {0}, {1}, {2};"},
      {Ops::MULACC, "mad.lo.{t} {x}, {0}, {1}, {2};"},
      {RenderPat(Ops::WHERE).dtype(dtypes::kBool), "@{0} mov.{t} {x}, {1};\n@!{0} mov.{t} {x}, {2};"},
      {RenderPat(Ops::WHERE).dtype(dtypes::kFloat16), "selp.b16 {x}, {1}, {2}, {0};"},
      {Ops::WHERE, "selp.{t} {x}, {1}, {2}, {0};"},
      // Casts.
      {Ops::BITCAST, "mov.b{bits} {x}, {0};"},
      {RenderPat(Ops::CAST).when(FromBool),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const DType dt = x->dtype();
         return absl::StrCat("selp.b", Tail(c.RegType(dt)), " ", c.Name(x), ", ", RenderVal(1, dt), ", ",
                             RenderVal(0, dt), ", ", c.Src(x, 0), ";");
       }},
      {RenderPat(Ops::CAST).when(ToBool),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const DType from = x->src(0)->dtype();
         return absl::StrCat("setp.ne.b", Tail(c.RegType(from)), " ", c.Name(x), ", ", c.Src(x, 0), ", ",
                             RenderVal(0, from), ";");
       }},
      {RenderPat(Ops::CAST).when(OneSource),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const DType dt = x->dtype(), from = x->src(0)->dtype();
         const std::optional<std::string> to_type = CvtType(dt), from_type = CvtType(from);
         if (!to_type.has_value() || !from_type.has_value()) {
           c.Fail("no PTX conversion between these types");
           return std::string();
         }
         return absl::StrCat("cvt", CvtModifier(dt, from), ".", *to_type, ".", *from_type, " ", c.Name(x),
                             ", ", c.Src(x, 0), ";");
       }},
      // Loads: a gated one sets its registers to the alternative (or zero for a vector) where the gate is
      // off.
      {RenderPat(Ops::LOAD).when(GatedLoad),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const DType dt = x->dtype(), scalar = dt.scalar();
         const std::string gate = c.Src(x, 2), where = MemSpace(x), address = c.Src(x, 0);
         if (x->src(1)->dtype().count() > 1) {
           std::string out;
           const std::vector<std::string>& lanes = c.RegsOf(x).names;
           for (const std::string& v : lanes) {
             absl::StrAppend(&out, "mov.", c.MemType(scalar), " ", v, ", ", RenderVal(0, scalar), ";\n");
           }
           absl::StrAppend(&out, "@", gate, " ld.", where, ".v", dt.count(), ".", c.MemType(scalar), " {",
                           absl::StrJoin(lanes, ", "), "}, [", address, "+0];");
           return out;
         }
         return absl::StrCat("@", gate, " ld.", where, ".", c.MemType(scalar), " ", c.Name(x), ", [", address,
                             "+0];\n@!", gate, " mov.b", Tail(c.RegType(scalar)), " ", c.Name(x), ", ",
                             c.Src(x, 1), ";");
       }},
      {Ops::LOAD,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const DType dt = x->dtype();
         const std::string where = MemSpace(x), address = c.Src(x, 0);
         if (dt.count() > 1) {
           return absl::StrCat("ld.", where, ".v", dt.count(), ".", c.MemType(dt.scalar()), " {",
                               absl::StrJoin(c.RegsOf(x).names, ", "), "}, [", address, "+0];");
         }
         return absl::StrCat("ld.", where, ".", c.MemType(dt), " ", c.Name(x), ", [", address, "+0];");
       }},
      // Accumulators, loops, assignments.
      {RenderPat(Ops::DEFINE_ACC).when(FromBoolConst),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const UOp* init = x->src(0);
         return absl::StrCat("setp.ne.s16 ", c.Name(init), ", ",
                             RenderVal(init->const_value(), init->dtype()), ", 0;\nmov.pred ", c.Name(x),
                             ", ", c.Name(init), ";");
       }},
      {RenderPat(Ops::DEFINE_ACC).when(FromConst), "mov.b{bits} {x}, {val0};"},
      {Ops::RANGE,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const std::string& r = c.Name(x);
         return absl::StrCat("mov.u32 ", r, ", 0;\nLOOP_", Tail(r), ":");
       }},
      {RenderPat(Ops::ASSIGN).dtype(dtypes::kBool), "mov.pred {0}, {1};"},
      {Ops::ASSIGN, "mov.b{bits} {0}, {1};"},
      {RenderPat(Ops::ENDRANGE).when(LoopOfRange),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         const std::string counter = c.Src(x, 0), pred = c.Name(x);
         return absl::StrCat("add.s32 ", counter, ", ", counter, ", 1;\nsetp.lt.s32 ", pred, ", ", counter,
                             ", ", c.Src(x->src(0), 0), ";\n@", pred, " bra LOOP_", Tail(counter), ";");
       }},
      {Ops::DEFINE_LOCAL,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (!x->arg().is_string()) {
           c.Fail("a DEFINE_LOCAL needs a name");
           return std::string();
         }
         const std::string& local = x->arg().as_string();
         const DType dt = x->dtype();
         return absl::StrCat(".shared .align 4 .b8 ", local, "[",
                             dt.ptr_size() * dt.itemsize(), "];\nmov.u64 ",
                             c.Name(x), ", ", local, "[0];");
       }},
      {Ops::IF,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         if (x->num_src() < 1) return std::nullopt;
         const std::string& gate = c.Src(x, 0);
         return absl::StrCat("@!", gate, " bra IF_", Tail(gate), "_", c.pos(),
                             ";");
       }},
      {RenderPat(Ops::ENDIF).when(EndOfIf),
       [](C& c, const UOp* x) -> std::optional<std::string> {
         std::optional<size_t> if_at = c.Position(x->src(0));
         if (!if_at.has_value()) {
           c.Fail("an ENDIF of an IF outside the program");
           return std::string();
         }
         return absl::StrCat("IF_", Tail(c.Src(x->src(0), 0)), "_", *if_at, ":");
       }},
      // Pack the inputs and accumulator into 32-bit registers, multiply, unpack.
      {Ops::WMMA,
       [](C& c, const UOp* x) -> std::optional<std::string> {
         std::vector<std::string> lines;
         for (int s = 0; s < 3; ++s) {
           const std::vector<std::string>& lanes = c.RegsOf(x->src(s)).names;
           const int per_reg = 4 / x->src(s)->dtype().scalar().itemsize();
           for (size_t i = 0; i < c.wmma_regs[s].size(); ++i) {
             lines.push_back(absl::StrCat("mov.b32 ", c.wmma_regs[s][i], ", ",
                                          Packed(lanes, i, per_reg), ";"));
           }
         }
         const Arg& dims = x->arg()[1];
         const DType in = x->arg()[2].as_dtype(), out = x->arg()[3].as_dtype();
         auto in_name = [](DType t) {
           return t == dtypes::kFloat32 ? "tf32" : "f16";
         };
         auto out_name = [](DType t) {
           return t == dtypes::kFloat32 ? "f32" : "f16";
         };
         const std::vector<std::vector<std::string>>& w = c.wmma_regs;
         lines.push_back(absl::StrCat(
             "mma.sync.aligned.m", dims[1].as_int(), "n", dims[0].as_int(), "k",
             dims[2].as_int(), ".row.col.", out_name(out), ".", in_name(in), ".",
             in_name(in), ".", out_name(out), std::string(12, ' '), "{",
             absl::StrJoin(w[2], ", "), "}, {", absl::StrJoin(w[0], ", "), "}, {",
             absl::StrJoin(w[1], ", "), "}, {", absl::StrJoin(w[2], ", "), "};"));
         const std::vector<std::string>& result = c.RegsOf(x).names;
         const int per_reg = 4 / out.itemsize();
         for (size_t i = 0; i < w[2].size(); ++i) {
           lines.push_back(absl::StrCat("mov.b32 ", Packed(result, i, per_reg),
                                        ", ", w[2][i], ";"));
         }
         return absl::StrJoin(lines, "\n");
       }},
      {Ops::BARRIER, "bar.sync\t0;"},
      {Ops::DEFINE_VAR, "ld.param.{mem} {x}, [{var}+0];"},
  });
  // clang-format on
  return *rules;
}

// The register kind (and type, where it is not the uop's) of a uop's own register (tinygrad's prefix).
std::optional<std::pair<const char*, const char*>> RegisterKind(Ops op) {
  switch (op) {
    case Ops::CAST:
    case Ops::BITCAST:
      return std::pair{"cast", nullptr};
    case Ops::ENDRANGE:
      return std::pair{"pred", "pred"};
    case Ops::RANGE:
      return std::pair{"ridx", nullptr};
    case Ops::DEFINE_ACC:
      return std::pair{"acc", nullptr};
    case Ops::DEFINE_VAR:
      return std::pair{"dat", nullptr};
    case Ops::CONST:
      return std::pair{"const", nullptr};
    case Ops::DEFINE_LOCAL:
      return std::pair{"local", "u64"};
    case Ops::DEFINE_GLOBAL:
      return std::pair{"dat", "u64"};
    default:
      if (groups::kALU.contains(op)) return std::pair{"alu", nullptr};
      return std::nullopt;
  }
}

}  // namespace

PTXRenderer::PTXRenderer(std::string arch) : arch_(std::move(arch)) {
  device_ = "CUDA";
  global_max_ = std::vector<int64_t>{2147483647, 65535, 65535};
  local_max_ = std::vector<int64_t>{1024, 1024, 64};
  shared_max_ = 49152;
  supported_ops_ = kPtxOps;
  transcendental_fallback_dtypes_ = {dtypes::kFloat64};  // PTX has no f64 ex2, lg2 or sin
  // CUDA's list without its bfloat16 core (PTX renders half and float inputs only).
  for (TensorCore& tc : CudaTensorCores(arch_, AllowTf32())) {
    if (tc.dtype_in != dtypes::kBFloat16) tensor_cores_.push_back(std::move(tc));
  }
}

absl::StatusOr<std::string> PTXRenderer::RenderProgram(absl::Span<const UOp* const> uops) const {
  PtxContext ctx(uops);
  const PtxRules& rules = Rules();
  std::vector<std::string> kernel;
  std::vector<std::pair<std::string, DType>> params;
  std::string name = "test";

  for (size_t pos = 0; pos < uops.size(); ++pos) {
    const UOp* u = uops[pos];
    const Ops op = u->op();
    ctx.Start(u, pos);
    if (op == Ops::SINK) {
      if (const KernelInfo* info = KernelInfoOf(u)) name = info->name;
      continue;
    }
    // Uops that only name registers: a vector's lanes, a lane, a cast that changes nothing.
    if (op == Ops::VECTORIZE) {
      std::vector<std::string> names;
      for (const UOpPtr& s : u->src()) names.push_back(ctx.Name(s.get()));
      if (!ctx.status.ok()) return ctx.status;
      ctx.SetList(u, std::move(names));
      continue;
    }
    if (op == Ops::GEP) {
      if (u->num_src() != 1 || !u->arg().is_tuple() || u->arg().size() != 1)
        return ctx.Error("a GEP of one lane");
      const Regs& r = ctx.RegsOf(u->src(0));
      if (!ctx.status.ok()) return ctx.status;
      const int64_t i = u->arg()[0].as_int();
      if (!r.is_list || i < 0 || i >= static_cast<int64_t>(r.names.size()))
        return ctx.Error("a lane out of range");
      ctx.Set(u, r.names[i]);
      continue;
    }
    if ((op == Ops::CAST || op == Ops::BITCAST) && u->num_src() == 1 &&
        (u->src(0)->dtype() == u->dtype() || u->src(0)->dtype().is_ptr())) {
      ctx.RegsOf(u->src(0));
      if (!ctx.status.ok()) return ctx.status;
      ctx.SetSame(u, u->src(0));
      continue;
    }

    // Registers of the uop itself.
    ctx.wmma_regs.clear();
    if (op == Ops::SPECIAL) {
      ctx.Set(u, "%" + u->arg()[0].as_string());
    } else if (op == Ops::DEFINE_VAR) {
      params.emplace_back(u->var_name(), u->dtype());
    } else if (op == Ops::LOAD) {
      if (u->num_src() == 0 || u->src(0)->dtype() != dtypes::kInt64)
        return ctx.Error("a load from an int64 address");
      if (u->dtype().count() > 1) {
        std::vector<std::string> names;
        const std::string t = ctx.RegType(u->dtype().scalar());
        for (int i = 0; i < u->dtype().count(); ++i) names.push_back(ctx.Ssa("val", t));
        ctx.SetList(u, std::move(names));
      } else {
        ctx.Set(u, ctx.Ssa("val", ctx.RegType(u->dtype())));
      }
    } else if (op == Ops::DEFINE_GLOBAL) {
      params.emplace_back(absl::StrCat("data", u->arg().as_int()), u->dtype());
    } else if (op == Ops::WMMA) {
      if (u->num_src() != 3 || !u->arg().is_tuple() || u->arg().size() < 4 || !u->arg()[1].is_tuple() ||
          u->arg()[1].size() != 3 || !u->arg()[1][0].is_int() || !u->arg()[1][1].is_int() ||
          !u->arg()[1][2].is_int() || !u->arg()[2].is_dtype() || !u->arg()[3].is_dtype()) {
        return ctx.Error("a WMMA with three sources and tinygrad's arg");
      }
      // Lanes are packed into 32-bit registers: halfs two to a register, floats one.
      const DType in = u->arg()[2].as_dtype(), out = u->arg()[3].as_dtype();
      const bool sizes_agree = (in == dtypes::kFloat16 || in == dtypes::kFloat32) &&
                               (out == dtypes::kFloat16 || out == dtypes::kFloat32) &&
                               u->src(0)->dtype().scalar().itemsize() == in.itemsize() &&
                               u->src(1)->dtype().scalar().itemsize() == in.itemsize() &&
                               u->src(2)->dtype().scalar().itemsize() == out.itemsize() &&
                               u->dtype().scalar().itemsize() == out.itemsize() &&
                               u->dtype().count() == static_cast<int>(ctx.RegsOf(u->src(2)).names.size());
      if (!ctx.status.ok()) return ctx.status;
      if (!sizes_agree) return ctx.Error("a WMMA whose operands do not match its half or float types");
      const int in_per_reg = 4 / in.itemsize(), out_per_reg = 4 / out.itemsize();
      for (int s = 0; s < 3; ++s) {
        const size_t lanes = ctx.RegsOf(u->src(s)).names.size();
        const int step = s < 2 ? in_per_reg : out_per_reg;
        ctx.wmma_regs.emplace_back();
        for (size_t i = 0; i < lanes; i += step)
          ctx.wmma_regs.back().push_back(ctx.Ssa(s < 2 ? "wmma_in" : "wmma_acc", "b32"));
      }
      std::vector<std::string> names;
      const std::string t = ctx.RegType(u->dtype().scalar());
      for (int i = 0; i < u->dtype().count(); ++i) names.push_back(ctx.Ssa("wmma", t));
      ctx.SetList(u, std::move(names));
    }
    if (std::optional<std::pair<const char*, const char*>> kind = RegisterKind(op)) {
      ctx.Set(u, ctx.Ssa(kind->first, kind->second != nullptr ? kind->second : ctx.RegType(u->dtype())));
    }
    if (!ctx.status.ok()) return ctx.status;

    // The instructions.
    std::optional<std::string> text = rules.Render(ctx, u);
    if (!ctx.status.ok()) return ctx.status;
    if (!text.has_value()) return ctx.Error("PTX has no rendering for it");
    for (absl::string_view line : absl::StrSplit(*text, '\n')) kernel.emplace_back(line);

    if (op == Ops::ASSIGN) {
      ctx.SetSame(u, u->src(0));
    } else if (op == Ops::SPECIAL) {
      kernel.insert(kernel.begin(), absl::StrCat(".reg .u32 %", u->arg()[0].as_string(), ";"));
    }
  }

  // tinygrad's render_kernel: the register declarations, the instructions, `ret;`, inside the entry.
  std::vector<std::string> body;
  for (const auto& [key, count] : ctx.counters()) {
    // "alu_f32_" declares `.reg .f32 %alu_f32_<N>;`.
    const size_t end = key.size() - 1, start = key.rfind('_', end - 1) + 1;
    body.push_back(
        FormatLine(absl::StrCat(".reg .", key.substr(start, end - start), " %", key, "<", count, ">;")));
  }
  for (const std::string& line : kernel) body.push_back(FormatLine(line));
  body.push_back(FormatLine("ret;"));
  std::vector<std::string> param_lines;
  for (const auto& [param, dtype] : params) {
    std::optional<std::string> type = dtype.is_ptr() ? std::optional<std::string>("u64") : RegType(dtype);
    if (!type.has_value())
      return absl::InvalidArgumentError(absl::StrCat("no PTX type for parameter ", param));
    param_lines.push_back(absl::StrCat(".param .", *type, " ", param));
  }
  return absl::StrCat(kKernelPrefix, " ", name, "(\n\t", absl::StrJoin(param_lines, ",\n\t"), "\n)\n{\n",
                      absl::StrJoin(body, "\n"), "\n}");
}

}  // namespace uopc
