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

// tinygrad's modifier: the rounding of a conversion from b to a.
std::string CvtModifier(DType a, DType b) {
  if (a.is_int() && b.is_float()) return ".rzi";
  if (a.is_float() && (a.itemsize() < b.itemsize() || b.is_int() || b.is_bool())) return ".rn";
  return "";
}

// tinygrad's asm_for_op: the instruction(s) of ALU op `op` writing `d` from `a`, for dtype `dt` whose
// register type is `name`. nullopt for an op PTX has no instruction for or the wrong operand count.
std::optional<std::vector<std::string>> AsmForOp(Ops op, const std::string& d,
                                                 const std::vector<std::string>& a, DType dt,
                                                 const std::string& name) {
  auto one = [](std::string s) { return std::optional<std::vector<std::string>>({std::move(s)}); };
  const std::string bits = Tail(name);  // "s32" -> "32"
  const bool is_bool = dt == dtypes::kBool;
  const size_t arity = groups::kTernary.contains(op) ? 3 : groups::kBinary.contains(op) ? 2 : 1;
  if (a.size() != arity) return std::nullopt;
  switch (op) {
    case Ops::RECIP:
      return one(absl::StrCat("rcp", dt.is_float() ? ".approx" : "", ".", name, " ", d, ", ", a[0], ";"));
    case Ops::EXP2:
      return one(absl::StrCat("ex2.approx.", name, " ", d, ", ", a[0], ";"));
    case Ops::LOG2:
      return one(absl::StrCat("lg2.approx.", name, " ", d, ", ", a[0], ";"));
    case Ops::SIN:
      return one(absl::StrCat("sin.approx.", name, " ", d, ", ", a[0], ";"));
    case Ops::SQRT:
      return one(absl::StrCat("sqrt.approx.", name, " ", d, ", ", a[0], ";"));
    case Ops::SHR:
      return one(absl::StrCat("shr.", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::SHL:
      return one(absl::StrCat("shl.b", bits, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::ADD:
      return one(absl::StrCat(is_bool ? "or" : "add", ".", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::MUL:
      return one(absl::StrCat(is_bool ? "and" : "mul", dt.is_int() ? ".lo" : "", ".", name, " ", d, ", ",
                              a[0], ", ", a[1], ";"));
    case Ops::XOR:
    case Ops::AND:
    case Ops::OR: {
      const char* mnemonic = op == Ops::XOR ? "xor" : op == Ops::AND ? "and" : "or";
      return one(absl::StrCat(mnemonic, is_bool ? ".pred" : absl::StrCat(".b", bits), " ", d, ", ", a[0],
                              ", ", a[1], ";"));
    }
    case Ops::IDIV:
      return one(absl::StrCat("div.", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::MOD:
      return one(absl::StrCat("rem.", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::MAX:
      return one(absl::StrCat("max.", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::CMPLT:
      return one(absl::StrCat("setp.lt.", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::CMPNE:
      return one(absl::StrCat("setp.ne.", name, " ", d, ", ", a[0], ", ", a[1], ";"));
    case Ops::MULACC:
      return one(absl::StrCat(dt.is_float() ? "fma.rn" : "mad.lo", ".", name, " ", d, ", ", a[0], ", ", a[1],
                              ", ", a[2], ";"));
    case Ops::WHERE:
      if (is_bool) {
        return std::vector<std::string>{absl::StrCat("@", a[0], " mov.", name, " ", d, ", ", a[1], ";"),
                                        absl::StrCat("@!", a[0], " mov.", name, " ", d, ", ", a[2], ";")};
      }
      return one(absl::StrCat("selp.", name == "f16" ? "b16" : name, " ", d, ", ", a[1], ", ", a[2], ", ",
                              a[0], ";"));
    default:
      return std::nullopt;
  }
}

// The ops asm_for_op renders; the ones among them PTX cannot do on halfs are computed in float.
constexpr OpSet kPtxOps{Ops::RECIP, Ops::EXP2,  Ops::LOG2,  Ops::SIN,    Ops::SQRT, Ops::SHR,  Ops::SHL,
                        Ops::ADD,   Ops::MUL,   Ops::XOR,   Ops::AND,    Ops::OR,   Ops::IDIV, Ops::MOD,
                        Ops::MAX,   Ops::CMPLT, Ops::CMPNE, Ops::MULACC, Ops::WHERE};
constexpr OpSet kHalfOps{Ops::EXP2, Ops::ADD, Ops::MUL, Ops::MAX, Ops::CMPLT, Ops::WHERE};

TensorCore MakeTensorCore(std::array<int64_t, 3> dims, std::array<int64_t, 3> elements, DType in, DType out,
                          TensorCore::Swizzle a, TensorCore::Swizzle b) {
  TensorCore tc;
  tc.dims = dims;
  tc.threads = 32;
  tc.elements_per_thread = elements;
  tc.dtype_in = in;
  tc.dtype_out = out;
  tc.opts = {"u0", "l0", "l0", "l1", "l1", "l1", "u1"};
  tc.swizzle = {std::move(a), std::move(b)};
  return tc;
}

// CUDA's 8x16x8 tensor cores (half in): tinygrad's tc_8168_f16, and sm_75's whole list.
std::vector<TensorCore> TensorCores8168() {
  std::vector<TensorCore> tcs;
  for (DType out : {dtypes::kFloat32, dtypes::kFloat16}) {
    tcs.push_back(MakeTensorCore(
        {8, 16, 8}, {4, 2, 4}, dtypes::kFloat16, out,
        std::make_pair(std::vector<int64_t>{6, 7, 2, 3, 4}, std::vector<int64_t>{0, 1, 8, 5, 9}),
        std::make_pair(std::vector<int64_t>{6, 7, 8, 0, 1}, std::vector<int64_t>{2, 3, 4, 9, 5})));
  }
  return tcs;
}

// A uop's registers: one name, or one per lane for a vector (tinygrad's r[u], a str or a list).
struct Regs {
  std::vector<std::string> names;
  bool is_list = false;
};

// One render: the registers given so far, their counters per kind, the program's positions.
class PtxContext {
 public:
  explicit PtxContext(absl::Span<const UOp* const> uops) : uops_(uops) {
    for (size_t i = 0; i < uops.size(); ++i) position_.emplace(uops[i], i);
  }

  // A fresh register of kind `prefix` and register type `type` (tinygrad's ssa).
  std::string Ssa(absl::string_view prefix, absl::string_view type) {
    std::string key = absl::StrCat(prefix, "_", type, "_");
    auto [it, inserted] = counter_index_.emplace(key, counters_.size());
    if (inserted) counters_.emplace_back(key, 0);
    return absl::StrCat("%", key, counters_[it->second].second++);
  }

  bool Has(const UOp* u) const { return regs_.contains(u); }
  const Regs* Find(const UOp* u) const {
    auto it = regs_.find(u);
    return it == regs_.end() ? nullptr : &it->second;
  }
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

 private:
  absl::Span<const UOp* const> uops_;
  absl::flat_hash_map<const UOp*, size_t> position_;
  absl::flat_hash_map<const UOp*, Regs> regs_;
  std::vector<std::pair<std::string, int64_t>> counters_;  // in order of first use
  absl::flat_hash_map<std::string, size_t> counter_index_;
};

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
      // Half ops without a PTX instruction compute in float.
      {UPat(kPtxOps - kHalfOps).dtype(dtypes::kFloat16).named("x"),
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

PTXRenderer::PTXRenderer(std::string arch) : arch_(std::move(arch)) {
  device_ = "CUDA";
  global_max_ = std::vector<int64_t>{2147483647, 65535, 65535};
  local_max_ = std::vector<int64_t>{1024, 1024, 64};
  shared_max_ = 49152;
  supported_ops_ = kPtxOps;
  int sm = 0;
  if (arch_.size() > 3) sm = std::atoi(arch_.c_str() + 3);
  if (sm >= 80) {
    // CUDA's sm_80 list without its bfloat16 core (PTX renders half and float inputs only).
    for (DType out : {dtypes::kFloat32, dtypes::kFloat16}) {
      tensor_cores_.push_back(MakeTensorCore(
          {8, 16, 16}, {8, 4, 4}, dtypes::kFloat16, out,
          std::make_pair(std::vector<int64_t>{6, 7, 2, 3, 4}, std::vector<int64_t>{0, 1, 9, 5, 10, 8}),
          std::make_pair(std::vector<int64_t>{6, 7, 9, 0, 1}, std::vector<int64_t>{2, 3, 4, 10, 5, 8})));
    }
  }
  if (sm >= 75) {
    for (TensorCore& tc : TensorCores8168()) tensor_cores_.push_back(std::move(tc));
  }
}

absl::StatusOr<std::string> PTXRenderer::Render(absl::Span<const UOp* const> uops) const {
  PtxContext ctx(uops);
  std::vector<std::string> kernel;
  std::vector<std::pair<std::string, DType>> params;
  std::string name = "test";

  for (size_t pos = 0; pos < uops.size(); ++pos) {
    const UOp* u = uops[pos];
    const Ops op = u->op();
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("cannot render uop ", pos, " (", OpName(op), " ",
                                                     u->dtype().ToString(), ") as PTX: ", what));
    };
    absl::Status missing = absl::OkStatus();
    auto regs = [&](const UOp* x) -> const Regs& {
      static const Regs* const kNone = new Regs{{""}, false};
      const Regs* r = ctx.Find(x);
      if (r == nullptr) {
        missing = error("a source has no register");
        return *kNone;
      }
      return *r;
    };
    auto reg = [&](const UOp* x) -> std::string {
      const Regs& r = regs(x);
      if (r.is_list || r.names.size() != 1) {
        missing = error("a vector where PTX needs one register");
        return "";
      }
      return r.names[0];
    };
    auto reg_type = [&](DType dt) -> std::string {
      std::optional<std::string> t = RegType(dt);
      if (!t.has_value()) {
        missing = error(absl::StrCat("no PTX register type for ", dt.ToString()));
        return "";
      }
      return *t;
    };
    auto mem_type = [&](DType dt) -> std::string {
      std::optional<std::string> t = MemType(dt);
      if (!t.has_value()) {
        missing = error(absl::StrCat("no PTX memory type for ", dt.ToString()));
        return "";
      }
      return *t;
    };

    if (op == Ops::SINK) {
      if (const KernelInfo* info = KernelInfoOf(u)) name = info->name;
      continue;
    }
    if (op == Ops::VECTORIZE) {
      std::vector<std::string> names;
      for (const UOpPtr& s : u->src()) names.push_back(reg(s.get()));
      if (!missing.ok()) return missing;
      ctx.SetList(u, std::move(names));
      continue;
    }
    if (op == Ops::GEP) {
      if (u->num_src() != 1 || !u->arg().is_tuple() || u->arg().size() != 1)
        return error("a GEP of one lane");
      const Regs& r = regs(u->src(0));
      if (!missing.ok()) return missing;
      const int64_t i = u->arg()[0].as_int();
      if (!r.is_list || i < 0 || i >= static_cast<int64_t>(r.names.size()))
        return error("a lane out of range");
      ctx.Set(u, r.names[i]);
      continue;
    }
    if ((op == Ops::CAST || op == Ops::BITCAST) && u->num_src() == 1 &&
        (u->src(0)->dtype() == u->dtype() || u->src(0)->dtype().is_ptr())) {
      regs(u->src(0));
      if (!missing.ok()) return missing;
      ctx.SetSame(u, u->src(0));
      continue;
    }

    // Registers of the uop itself.
    std::vector<std::vector<std::string>> wmma_regs;
    if (op == Ops::SPECIAL) {
      if (!u->arg().is_tuple() || u->arg().size() == 0 || !u->arg()[0].is_string())
        return error("bad SPECIAL arg");
      ctx.Set(u, "%" + u->arg()[0].as_string());
    } else if (op == Ops::DEFINE_VAR) {
      if (!u->arg().is_tuple() || u->arg().size() == 0 || !u->arg()[0].is_string())
        return error("a DEFINE_VAR needs a name");
      params.emplace_back(u->var_name(), u->dtype());
    } else if (op == Ops::LOAD) {
      if (u->num_src() == 0 || u->src(0)->dtype() != dtypes::kInt64)
        return error("a load from an int64 address");
      if (u->dtype().count() > 1) {
        std::vector<std::string> names;
        const std::string t = reg_type(u->dtype().scalar());
        for (int i = 0; i < u->dtype().count(); ++i) names.push_back(ctx.Ssa("val", t));
        ctx.SetList(u, std::move(names));
      } else {
        ctx.Set(u, ctx.Ssa("val", reg_type(u->dtype())));
      }
    } else if (op == Ops::DEFINE_GLOBAL) {
      if (!u->arg().is_int()) return error("a DEFINE_GLOBAL needs a buffer number");
      params.emplace_back(absl::StrCat("data", u->arg().as_int()), u->dtype());
    } else if (op == Ops::WMMA) {
      if (u->num_src() != 3 || !u->arg().is_tuple() || u->arg().size() < 4 || !u->arg()[1].is_tuple() ||
          u->arg()[1].size() != 3 || !u->arg()[1][0].is_int() || !u->arg()[1][1].is_int() ||
          !u->arg()[1][2].is_int() || !u->arg()[2].is_dtype() || !u->arg()[3].is_dtype()) {
        return error("a WMMA with three sources and tinygrad's arg");
      }
      // Lanes are packed into 32-bit registers: halfs two to a register, floats one.
      const DType in = u->arg()[2].as_dtype(), out = u->arg()[3].as_dtype();
      const bool sizes_agree = (in == dtypes::kFloat16 || in == dtypes::kFloat32) &&
                               (out == dtypes::kFloat16 || out == dtypes::kFloat32) &&
                               u->src(0)->dtype().scalar().itemsize() == in.itemsize() &&
                               u->src(1)->dtype().scalar().itemsize() == in.itemsize() &&
                               u->src(2)->dtype().scalar().itemsize() == out.itemsize() &&
                               u->dtype().scalar().itemsize() == out.itemsize() &&
                               u->dtype().count() == static_cast<int>(regs(u->src(2)).names.size());
      if (!missing.ok()) return missing;
      if (!sizes_agree) return error("a WMMA whose operands do not match its half or float types");
      const int in_per_reg = 4 / u->arg()[2].as_dtype().itemsize(),
                out_per_reg = 4 / u->arg()[3].as_dtype().itemsize();
      for (int s = 0; s < 3; ++s) {
        const size_t lanes = regs(u->src(s)).names.size();
        const int step = s < 2 ? in_per_reg : out_per_reg;
        wmma_regs.emplace_back();
        for (size_t i = 0; i < lanes; i += step)
          wmma_regs.back().push_back(ctx.Ssa(s < 2 ? "wmma_in" : "wmma_acc", "b32"));
      }
      std::vector<std::string> names;
      const std::string t = reg_type(u->dtype().scalar());
      for (int i = 0; i < u->dtype().count(); ++i) names.push_back(ctx.Ssa("wmma", t));
      ctx.SetList(u, std::move(names));
    }
    std::optional<std::pair<std::string, std::optional<std::string>>> prefix;
    switch (op) {
      case Ops::CAST:
      case Ops::BITCAST:
        prefix = {"cast", std::nullopt};
        break;
      case Ops::ENDRANGE:
        prefix = {"pred", "pred"};
        break;
      case Ops::RANGE:
        prefix = {"ridx", std::nullopt};
        break;
      case Ops::DEFINE_ACC:
        prefix = {"acc", std::nullopt};
        break;
      case Ops::DEFINE_VAR:
        prefix = {"dat", std::nullopt};
        break;
      case Ops::CONST:
        prefix = {"const", std::nullopt};
        break;
      case Ops::DEFINE_LOCAL:
        prefix = {"local", "u64"};
        break;
      case Ops::DEFINE_GLOBAL:
        prefix = {"dat", "u64"};
        break;
      default:
        if (groups::kALU.contains(op)) prefix = {"alu", std::nullopt};
    }
    if (prefix.has_value()) {
      ctx.Set(u, ctx.Ssa(prefix->first, prefix->second.has_value() ? *prefix->second : reg_type(u->dtype())));
    }
    if (!missing.ok()) return missing;

    // The instructions (tinygrad's string_rewrite, rule by rule in its order).
    std::vector<std::string> lines;
    const DType dt = u->dtype();
    auto src = [&](size_t i) { return u->src(i); };
    auto alu = [&](Ops alu_op, const std::string& d, const std::vector<const UOp*>& operands,
                   DType op_dtype) -> bool {
      std::vector<std::string> a;
      for (const UOp* o : operands) a.push_back(reg(o));
      const std::string type = reg_type(op_dtype);
      if (!missing.ok()) return true;
      std::optional<std::vector<std::string>> code = AsmForOp(alu_op, d, a, op_dtype, type);
      if (!code.has_value()) return false;
      lines.insert(lines.end(), code->begin(), code->end());
      return true;
    };
    bool rendered = true;
    if (op == Ops::CONST && dt == dtypes::kBool) {
      lines.push_back(absl::StrCat("setp.ne.s16 ", reg(u), ", ", RenderVal(u->const_value(), dt), ", 0;"));
    } else if (op == Ops::CONST) {
      lines.push_back(
          absl::StrCat("mov.b", Tail(reg_type(dt)), " ", reg(u), ", ", RenderVal(u->const_value(), dt), ";"));
    } else if (op == Ops::STORE && u->num_src() >= 2) {
      const UOp* var = src(1);
      const int count = var->dtype().count();
      const Regs& value = regs(var);
      lines.push_back(
          absl::StrCat("st.", MemSpace(src(0)), count > 1 ? absl::StrCat(".v", count) : "", ".",
                       mem_type(var->dtype().scalar()), " [", reg(src(0)), "+0], ",
                       count > 1 ? absl::StrCat("{", absl::StrJoin(value.names, ", "), "}") : reg(var), ";"));
    } else if (op == Ops::SPECIAL) {
      const std::string& special = u->arg()[0].as_string();
      const char axis = static_cast<char>('x' + (special.back() - '0'));
      lines.push_back(absl::StrCat("mov.u32 %", special, ", %", special[0] == 'g' ? "ctaid" : "tid", ".",
                                   std::string(1, axis), ";"));
    } else if (op == Ops::DEFINE_GLOBAL) {
      lines.push_back(absl::StrCat("ld.param.u64 ", reg(u), ", [data", u->arg().as_int(), "+0];"));
    } else if ((op == Ops::CMPLT || op == Ops::CMPNE) && u->num_src() >= 1) {
      std::vector<const UOp*> operands;
      for (const UOpPtr& s : u->src()) operands.push_back(s.get());
      rendered = alu(op, reg(u), operands, src(0)->dtype());
    } else if (groups::kALU.contains(op)) {
      std::vector<const UOp*> operands;
      for (const UOpPtr& s : u->src()) operands.push_back(s.get());
      rendered = alu(op, reg(u), operands, dt);
    } else if (op == Ops::BITCAST && u->num_src() >= 1) {
      lines.push_back(absl::StrCat("mov.b", Tail(reg_type(dt)), " ", reg(u), ", ", reg(src(0)), ";"));
    } else if (op == Ops::CAST && u->num_src() == 1 && src(0)->dtype() == dtypes::kBool) {
      lines.push_back(absl::StrCat("selp.b", Tail(reg_type(dt)), " ", reg(u), ", ", RenderVal(1, dt), ", ",
                                   RenderVal(0, dt), ", ", reg(src(0)), ";"));
    } else if (op == Ops::CAST && u->num_src() == 1 && dt == dtypes::kBool) {
      lines.push_back(absl::StrCat("setp.ne.b", Tail(reg_type(src(0)->dtype())), " ", reg(u), ", ",
                                   reg(src(0)), ", ", RenderVal(0, src(0)->dtype()), ";"));
    } else if (op == Ops::CAST && u->num_src() == 1) {
      lines.push_back(absl::StrCat("cvt", CvtModifier(dt, src(0)->dtype()), ".", reg_type(dt), ".",
                                   reg_type(src(0)->dtype()), " ", reg(u), ", ", reg(src(0)), ";"));
    } else if (op == Ops::LOAD && u->num_src() == 3 && groups::kALU.contains(src(2)->op())) {
      const DType scalar = dt.scalar();
      const Regs& out = regs(u);
      const std::string gate = reg(src(2)), where = MemSpace(u), address = reg(src(0));
      if (src(1)->dtype().count() > 1) {
        for (const std::string& v : out.names) {
          lines.push_back(absl::StrCat("mov.", mem_type(scalar), " ", v, ", ", RenderVal(0, scalar), ";"));
        }
        lines.push_back(absl::StrCat("@", gate, " ld.", where, ".v", dt.count(), ".", mem_type(scalar), " {",
                                     absl::StrJoin(out.names, ", "), "}, [", address, "+0];"));
      } else {
        lines.push_back(absl::StrCat("@", gate, " ld.", where, ".", mem_type(scalar), " ", reg(u), ", [",
                                     address, "+0];"));
        lines.push_back(
            absl::StrCat("@!", gate, " mov.b", Tail(reg_type(scalar)), " ", reg(u), ", ", reg(src(1)), ";"));
      }
    } else if (op == Ops::LOAD) {
      const std::string where = MemSpace(u), address = reg(src(0));
      if (dt.count() > 1) {
        lines.push_back(absl::StrCat("ld.", where, ".v", dt.count(), ".", mem_type(dt.scalar()), " {",
                                     absl::StrJoin(regs(u).names, ", "), "}, [", address, "+0];"));
      } else {
        lines.push_back(absl::StrCat("ld.", where, ".", mem_type(dt), " ", reg(u), ", [", address, "+0];"));
      }
    } else if (op == Ops::DEFINE_ACC && u->num_src() >= 1 && src(0)->op() == Ops::CONST &&
               src(0)->dtype() == dtypes::kBool) {
      lines.push_back(absl::StrCat("setp.ne.s16 ", reg(src(0)), ", ",
                                   RenderVal(src(0)->const_value(), src(0)->dtype()), ", 0;"));
      lines.push_back(absl::StrCat("mov.pred ", reg(u), ", ", reg(src(0)), ";"));
    } else if (op == Ops::DEFINE_ACC && u->num_src() >= 1 && src(0)->op() == Ops::CONST) {
      lines.push_back(absl::StrCat("mov.b", Tail(reg_type(dt)), " ", reg(u), ", ",
                                   RenderVal(src(0)->const_value(), dt), ";"));
    } else if (op == Ops::RANGE) {
      const std::string r = reg(u);
      lines.push_back(absl::StrCat("mov.u32 ", r, ", 0;"));
      lines.push_back(absl::StrCat("LOOP_", Tail(r), ":"));
    } else if (op == Ops::ASSIGN && u->num_src() >= 2 && dt == dtypes::kBool) {
      lines.push_back(absl::StrCat("mov.pred ", reg(src(0)), ", ", reg(src(1)), ";"));
    } else if (op == Ops::ASSIGN && u->num_src() >= 2) {
      lines.push_back(absl::StrCat("mov.b", Tail(reg_type(dt)), " ", reg(src(0)), ", ", reg(src(1)), ";"));
    } else if (op == Ops::ENDRANGE && u->num_src() == 1 && src(0)->num_src() >= 1) {
      const std::string counter = reg(src(0));
      lines.push_back(absl::StrCat("add.s32 ", counter, ", ", counter, ", 1;"));
      lines.push_back(absl::StrCat("setp.lt.s32 ", reg(u), ", ", counter, ", ", reg(src(0)->src(0)), ";"));
      lines.push_back(absl::StrCat("@", reg(u), " bra LOOP_", Tail(counter), ";"));
    } else if (op == Ops::DEFINE_LOCAL) {
      if (!u->arg().is_string()) return error("a DEFINE_LOCAL needs a name");
      const std::string& local = u->arg().as_string();
      lines.push_back(absl::StrCat(".shared .align 4 .b8 ", local, "[", dt.ptr_size() * dt.itemsize(), "];"));
      lines.push_back(absl::StrCat("mov.u64 ", reg(u), ", ", local, "[0];"));
    } else if (op == Ops::IF && u->num_src() >= 1) {
      const std::string gate = reg(src(0));
      lines.push_back(absl::StrCat("@!", gate, " bra IF_", Tail(gate), "_", pos, ";"));
    } else if (op == Ops::ENDIF && u->num_src() >= 1 && src(0)->num_src() >= 1) {
      std::optional<size_t> if_at = ctx.Position(src(0));
      if (!if_at.has_value()) return error("an ENDIF of an IF outside the program");
      lines.push_back(absl::StrCat("IF_", Tail(reg(src(0)->src(0))), "_", *if_at, ":"));
    } else if (op == Ops::WMMA) {
      // Pack the inputs and accumulator into 32-bit registers, multiply, unpack.
      for (int s = 0; s < 3; ++s) {
        const std::vector<std::string>& lanes = regs(src(s)).names;
        const int per_reg = 4 / src(s)->dtype().scalar().itemsize();
        for (size_t i = 0; i < wmma_regs[s].size(); ++i) {
          if (per_reg == 1) {
            lines.push_back(absl::StrCat("mov.b32 ", wmma_regs[s][i], ", ", lanes.at(i), ";"));
          } else {
            std::vector<std::string> packed(lanes.begin() + i * per_reg,
                                            lanes.begin() + std::min(lanes.size(), (i + 1) * per_reg));
            lines.push_back(
                absl::StrCat("mov.b32 ", wmma_regs[s][i], ", {", absl::StrJoin(packed, ", "), "};"));
          }
        }
      }
      const Arg& dims = u->arg()[1];
      const DType in = u->arg()[2].as_dtype(), out = u->arg()[3].as_dtype();
      auto in_name = [](DType t) { return t == dtypes::kFloat32 ? "tf32" : "f16"; };
      auto out_name = [](DType t) { return t == dtypes::kFloat32 ? "f32" : "f16"; };
      lines.push_back(absl::StrCat(
          "mma.sync.aligned.m", dims[1].as_int(), "n", dims[0].as_int(), "k", dims[2].as_int(), ".row.col.",
          out_name(out), ".", in_name(in), ".", in_name(in), ".", out_name(out), std::string(12, ' '), "{",
          absl::StrJoin(wmma_regs[2], ", "), "}, {", absl::StrJoin(wmma_regs[0], ", "), "}, {",
          absl::StrJoin(wmma_regs[1], ", "), "}, {", absl::StrJoin(wmma_regs[2], ", "), "};"));
      const std::vector<std::string>& result = regs(u).names;
      const int per_reg = 4 / out.itemsize();
      for (size_t i = 0; i < wmma_regs[2].size(); ++i) {
        if (per_reg == 1) {
          lines.push_back(absl::StrCat("mov.b32 ", result.at(i), ", ", wmma_regs[2][i], ";"));
        } else {
          std::vector<std::string> packed(result.begin() + i * per_reg,
                                          result.begin() + std::min(result.size(), (i + 1) * per_reg));
          lines.push_back(
              absl::StrCat("mov.b32 {", absl::StrJoin(packed, ", "), "}, ", wmma_regs[2][i], ";"));
        }
      }
    } else if (op == Ops::BARRIER) {
      lines.push_back("bar.sync\t0;");
    } else if (op == Ops::DEFINE_VAR) {
      lines.push_back(absl::StrCat("ld.param.", mem_type(dt), " ", reg(u), ", [", u->var_name(), "+0];"));
    } else {
      rendered = false;
    }
    if (!missing.ok()) return missing;
    if (!rendered) return error("PTX has no rendering for it");
    kernel.insert(kernel.end(), lines.begin(), lines.end());

    if (op == Ops::ASSIGN) {
      ctx.SetSame(u, src(0));
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
