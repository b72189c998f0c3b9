#include "runtime/interp.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "uop/exec_alu.h"
#include "uop/ops.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// What a lane of a pointer value points at: element `offset` of memory `mem` (a global buffer, then the
// workgroup's local buffers), usable only when `gate` holds.
struct Pointer {
  int mem = -1;
  int64_t offset = 0;
  bool gate = true;
};

// One element of one lane of a value: a number, or a pointer for pointer-typed uops.
struct Scalar {
  ConstValue v;
  Pointer p;
};

struct Memory {
  uint8_t* data = nullptr;
  int64_t size = 0;  // elements
  DType dtype;       // scalar
};

// The ops the interpreter runs; anything else is rejected by Create.
constexpr OpSet kSupported =
    groups::kALU |
    OpSet{Ops::CAST,       Ops::BITCAST,    Ops::CONST,   Ops::VCONST, Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL,
          Ops::DEFINE_VAR, Ops::DEFINE_ACC, Ops::SPECIAL, Ops::RANGE,  Ops::ENDRANGE,      Ops::IF,
          Ops::ENDIF,      Ops::INDEX,      Ops::LOAD,    Ops::STORE,  Ops::ASSIGN,        Ops::GEP,
          Ops::VECTORIZE,  Ops::BARRIER,    Ops::NOOP,    Ops::SINK,   Ops::WMMA};

absl::Status UopError(int pos, const UOp* u, absl::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("uop ", pos, " (", OpName(u->op()), " ", u->dtype().ToString(), "): ", what));
}

// A loop bound or an index as an int64: Python's int() of the value, saturated (an ill-typed program may hand
// over a float; the bounds checks then reject what it points at).
int64_t AsIndex(const ConstValue& v) {
  const absl::int128 i = v.AsInt();
  const absl::int128 lo = std::numeric_limits<int64_t>::min(), hi = std::numeric_limits<int64_t>::max();
  return static_cast<int64_t>(i < lo ? lo : i > hi ? hi : i);
}

// The elements a uop's value has per lane: its vector width (pointers: the pointer vector's).
int Width(const UOp* u) { return std::max(1, u->dtype().vcount()); }

// Reads element `offset` of `m` as a value of its dtype.
ConstValue ReadElement(const Memory& m, int64_t offset) {
  const uint8_t* at = m.data + offset * m.dtype.itemsize();
  auto read = [&](auto tag) {
    decltype(tag) x;
    std::memcpy(&x, at, sizeof(x));
    return x;
  };
  switch (m.dtype.scalar_type()) {
    case ScalarType::kBool:
      return ConstValue::Bool(*at != 0);
    case ScalarType::kInt8:
      return ConstValue::Int(read(int8_t{}));
    case ScalarType::kUInt8:
      return ConstValue::Int(read(uint8_t{}));
    case ScalarType::kInt16:
      return ConstValue::Int(read(int16_t{}));
    case ScalarType::kUInt16:
      return ConstValue::Int(read(uint16_t{}));
    case ScalarType::kInt32:
      return ConstValue::Int(read(int32_t{}));
    case ScalarType::kUInt32:
      return ConstValue::Int(read(uint32_t{}));
    case ScalarType::kInt64:
      return ConstValue::Int(read(int64_t{}));
    case ScalarType::kUInt64:
      return ConstValue::Int(read(uint64_t{}));
    case ScalarType::kFloat32:
      return ConstValue::Float(read(float{}));
    case ScalarType::kFloat64:
      return ConstValue::Float(read(double{}));
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16: {
      absl::StatusOr<ConstValue> v =
          ExecBitcast(ConstValue::Int(read(uint16_t{})), DType(ScalarType::kUInt16), m.dtype);
      return v.ok() ? *v : ConstValue::Float(0);
    }
    case ScalarType::kVoid:
      break;
  }
  return ConstValue();
}

// Writes `v` (a value of m's dtype) as element `offset` of `m`.
void WriteElement(const Memory& m, int64_t offset, const ConstValue& v) {
  uint8_t* at = m.data + offset * m.dtype.itemsize();
  auto write = [&](auto x) { std::memcpy(at, &x, sizeof(x)); };
  switch (m.dtype.scalar_type()) {
    case ScalarType::kBool:
      *at = v.AsBool() ? 1 : 0;
      break;
    case ScalarType::kInt8:
      write(static_cast<int8_t>(v.AsInt()));
      break;
    case ScalarType::kUInt8:
      write(static_cast<uint8_t>(v.AsInt()));
      break;
    case ScalarType::kInt16:
      write(static_cast<int16_t>(v.AsInt()));
      break;
    case ScalarType::kUInt16:
      write(static_cast<uint16_t>(v.AsInt()));
      break;
    case ScalarType::kInt32:
      write(static_cast<int32_t>(v.AsInt()));
      break;
    case ScalarType::kUInt32:
      write(static_cast<uint32_t>(v.AsInt()));
      break;
    case ScalarType::kInt64:
      write(static_cast<int64_t>(v.AsInt()));
      break;
    case ScalarType::kUInt64:
      write(static_cast<uint64_t>(v.AsInt()));
      break;
    case ScalarType::kFloat32:
      write(static_cast<float>(v.AsFloat()));
      break;
    case ScalarType::kFloat64:
      write(v.AsFloat());
      break;
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16: {
      absl::StatusOr<ConstValue> bits = ExecBitcast(v, m.dtype, DType(ScalarType::kUInt16));
      write(static_cast<uint16_t>(bits.ok() ? bits->AsInt() : 0));
      break;
    }
    case ScalarType::kVoid:
      break;
  }
}

// How a tensor core spreads its operands over a warp (tinygrad's ops_python models): for A element (k, row)
// and B element (col, k) the (element, lane) holding it, and for output element e of a lane its (col, row).
struct WmmaLayout {
  int warp_threads = 0, k = 0, num_a = 0, num_b = 0, num_c = 0;
  std::function<std::pair<int, int>(int, int)> a_elem, b_elem, c_map;
};

absl::StatusOr<WmmaLayout> WmmaLayoutOf(const UOp* u) {
  const Arg& arg = u->arg();
  if (!arg.is_tuple() || arg.size() < 7 || !arg[4].is_string() || !arg[1].is_tuple()) {
    return absl::InvalidArgumentError(
        "a WMMA's arg is (name, dims, dtype_in, dtype_out, device, threads, ...)");
  }
  const std::string& device = arg[4].as_string();
  const int n = static_cast<int>(arg[1][0].as_int()), mm = static_cast<int>(arg[1][1].as_int()),
            kk = static_cast<int>(arg[1][2].as_int());
  WmmaLayout l;
  if (device == "METAL") {
    auto ab = [](int i, int j) {
      return std::pair<int, int>{i % 2, (i / 2) % 2 + (j % 4) * 2 + (i / 4) * 8 + (j / 4) * 16};
    };
    l = {32, 8, 2, 2, 2, ab, ab, [](int lane, int e) {
           return std::pair<int, int>{e + (lane % 2) * 2 + ((lane / 8) % 2) * 4,
                                      (lane / 2) % 4 + (lane / 16) * 4};
         }};
    return l;
  }
  if (device == "CUDA") {
    auto c_map = [](int lane, int e) {
      return std::pair<int, int>{e % 2 + (lane % 4) * 2, lane / 4 + (e / 2) * 8};
    };
    const bool half_in = arg[2].is_dtype() && arg[2].as_dtype() == dtypes::kFloat16;
    if (n == 8 && mm == 16 && kk == 16) {
      return WmmaLayout{
          32,
          16,
          8,
          4,
          4,
          [](int k, int row) {
            return std::pair<int, int>{k % 2 + (row / 8) * 2 + (k / 8) * 4, (k / 2) % 4 + (row % 8) * 4};
          },
          [](int col, int k) {
            return std::pair<int, int>{k % 2 + (k / 8) * 2, (k / 2) % 4 + col * 4};
          },
          c_map};
    }
    if (n == 8 && mm == 16 && kk == 8 && half_in) {
      return WmmaLayout{32,
                        8,
                        4,
                        2,
                        4,
                        [](int k, int row) {
                          return std::pair<int, int>{k % 2 + (row / 8) * 2, k / 2 + (row % 8) * 4};
                        },
                        [](int col, int k) {
                          return std::pair<int, int>{k % 2, k / 2 + col * 4};
                        },
                        c_map};
    }
    if (n == 8 && mm == 16 && kk == 8) {
      return WmmaLayout{32,
                        8,
                        4,
                        2,
                        4,
                        [](int k, int row) {
                          return std::pair<int, int>{(k / 4) * 2 + row / 8, k % 4 + (row % 8) * 4};
                        },
                        [](int col, int k) {
                          return std::pair<int, int>{k / 4, k % 4 + col * 4};
                        },
                        c_map};
    }
  }
  return absl::UnimplementedError(
      absl::StrCat("no model of the ", device, " tensor core ", arg[1].ToString()));
}

}  // namespace

absl::StatusOr<InterpretedProgram> InterpretedProgram::Create(absl::Span<const UOpPtr> uops) {
  InterpretedProgram program(std::vector<UOpPtr>(uops.begin(), uops.end()));
  absl::flat_hash_map<const UOp*, int> position;
  for (int i = 0; i < static_cast<int>(uops.size()); ++i) position.try_emplace(uops[i].get(), i);
  std::vector<int> open_ifs;
  for (int i = 0; i < static_cast<int>(uops.size()); ++i) {
    const UOp* u = uops[i].get();
    if (!kSupported.contains(u->op())) return UopError(i, u, "the interpreter does not run this op");
    Op op{u, {}, -1};
    // A DEFINE_ACC comes before the loops it accumulates over: only its initial value is an input.
    const size_t inputs = u->op() == Ops::DEFINE_ACC ? std::min<size_t>(1, u->num_src()) : u->num_src();
    for (size_t s = 0; s < inputs; ++s) {
      auto it = position.find(u->src(s));
      if (it == position.end() || it->second >= i)
        return UopError(i, u, "a source is not defined before its use");
      op.src.push_back(it->second);
    }
    // Every op has the sources it reads.
    size_t min_src = 0;
    if (groups::kTernary.contains(u->op()) || u->op() == Ops::WMMA) {
      min_src = 3;
    } else if (groups::kBinary.contains(u->op()) || u->op() == Ops::INDEX) {
      min_src = 2;
    } else if (groups::kUnary.contains(u->op()) || u->op() == Ops::LOAD || u->op() == Ops::CAST ||
               u->op() == Ops::BITCAST || u->op() == Ops::NOOP || u->op() == Ops::DEFINE_ACC ||
               u->op() == Ops::IF) {
      min_src = 1;
    }
    if (op.src.size() < min_src) return UopError(i, u, absl::StrCat("needs at least ", min_src, " sources"));
    // Only ordering edges may point at uops without a value (a SINK's, BARRIER's or ENDIF's sources, a LOAD's
    // or IF's trailing barrier, the IF a gated STORE sits in); a value read from one is a malformed program.
    for (size_t s = 0; s < op.src.size(); ++s) {
      const bool ordering_only = u->op() == Ops::SINK || u->op() == Ops::BARRIER || u->op() == Ops::ENDIF ||
                                 ((u->op() == Ops::LOAD || u->op() == Ops::IF) && s >= 1) ||
                                 (u->op() == Ops::STORE && s >= 2 && uops[op.src[s]]->op() == Ops::IF);
      if (uops[op.src[s]]->dtype() == DType() && !ordering_only) {
        return UopError(i, u, absl::StrCat("reads a value from uop ", op.src[s], ", which has none"));
      }
    }
    // Each input is one element or as wide as the uop (VECTORIZE: one element per source), so that no lane
    // reads past a value.
    const int width = Width(u);
    if (u->op() == Ops::VECTORIZE && static_cast<int>(op.src.size()) != width) {
      return UopError(i, u, "a VECTORIZE needs one source per element");
    }
    for (size_t s = 0; s < op.src.size(); ++s) {
      const int w = Width(uops[op.src[s]].get());
      const bool fits = u->op() == Ops::VECTORIZE                     ? w == 1
                        : u->op() == Ops::GEP || u->op() == Ops::WMMA ? true  // WMMA checks its layout
                        : u->op() == Ops::STORE
                            ? s == 1 || w == 1 || (u->num_src() > 1 && w == Width(u->src(1)))
                        : u->op() == Ops::LOAD && s == 0 ? w == 1 || w == width
                                                         : w == 1 || w == width;
      if (!fits && uops[op.src[s]]->dtype() != DType())
        return UopError(i, u, "a source's width does not fit");
    }
    if (u->op() == Ops::ASSIGN && !op.src.empty() && Width(uops[op.src[0]].get()) != width) {
      return UopError(i, u, "an ASSIGN must be as wide as its accumulator");
    }
    switch (u->op()) {
      case Ops::ENDRANGE:
        if (op.src.size() != 1 || uops[op.src[0]]->op() != Ops::RANGE) {
          return UopError(i, u, "ENDRANGE needs its RANGE as source");
        }
        if (program.ops_[op.src[0]].jump != -1) return UopError(i, u, "the RANGE is ended twice");
        op.jump = op.src[0];
        program.ops_[op.src[0]].jump = i;
        break;
      case Ops::IF:
        open_ifs.push_back(i);
        break;
      case Ops::ENDIF:
        if (open_ifs.empty()) return UopError(i, u, "ENDIF without IF");
        program.ops_[open_ifs.back()].jump = i;
        open_ifs.pop_back();
        break;
      case Ops::RANGE:
        if (op.src.size() != 1) return UopError(i, u, "RANGE needs one source, its end");
        break;
      case Ops::STORE:
        if (op.src.size() != 2 && !(op.src.size() == 3 && uops[op.src[2]]->op() == Ops::IF)) {
          return UopError(i, u, "STORE needs (pointer, value), and at most the IF it sits in");
        }
        break;
      case Ops::ASSIGN:
        if (op.src.size() != 2 || uops[op.src[0]]->op() != Ops::DEFINE_ACC) {
          return UopError(i, u, "ASSIGN needs (DEFINE_ACC, value)");
        }
        break;
      case Ops::SPECIAL:
        if (!u->arg().is_tuple() || u->arg().size() != 2 || !u->arg()[0].is_string() ||
            u->arg()[0].as_string().size() < 2) {
          return UopError(i, u, "SPECIAL needs the arg (name, size)");
        }
        break;
      case Ops::DEFINE_GLOBAL:
        if (!u->arg().is_int() || !u->dtype().is_ptr())
          return UopError(i, u, "DEFINE_GLOBAL needs a buffer number");
        break;
      case Ops::DEFINE_LOCAL:
        if (!u->dtype().is_ptr() || u->dtype().ptr_size() < 0)
          return UopError(i, u, "DEFINE_LOCAL needs a size");
        break;
      case Ops::GEP:
        if (!u->arg().is_tuple() || op.src.size() != 1) return UopError(i, u, "GEP needs an index tuple");
        for (const Arg& a : u->arg().as_tuple()) {
          if (!a.is_int() || a.as_int() < 0 || a.as_int() >= Width(u->src(0))) {
            return UopError(i, u, "GEP index out of the source's range");
          }
        }
        break;
      default:
        break;
    }
    position[u] = i;
    program.ops_.push_back(std::move(op));
  }
  if (!open_ifs.empty()) return UopError(open_ifs.back(), uops[open_ifs.back()].get(), "IF without ENDIF");
  for (int i = 0; i < static_cast<int>(uops.size()); ++i) {
    if (uops[i]->op() == Ops::RANGE && program.ops_[i].jump == -1) {
      return UopError(i, uops[i].get(), "RANGE without ENDRANGE");
    }
  }
  return program;
}

// One workgroup's run of a program: every uop's value lane by lane, the memories, the lane masks and the
// active loops. As XLA's HloEvaluator does, it has one handler per group of ops and a dispatch on the op; the
// run loop checks each uop's inputs first. A handler gives the uop at `pc_` its value; the control-flow
// handlers also choose the uop that runs next (`next_pc_`).
class InterpretedProgram::Workgroup {
 public:
  Workgroup(const InterpretedProgram& program, absl::Span<const InterpBuffer> buffers,
            const absl::flat_hash_map<std::string, int64_t>& vars, const LaunchDims& dims,
            const std::array<int64_t, 3>& gid, int warp)
      : program_(program),
        buffers_(buffers),
        vars_(vars),
        dims_(dims),
        gid_(gid),
        warp_(warp),
        values_(program.ops_.size()) {
    for (const InterpBuffer& b : buffers) {
      memories_.push_back({static_cast<uint8_t*>(b.data), b.size, b.dtype.scalar()});
    }
    masks_.push_back(std::vector<bool>(warp, true));
  }

  // Runs the program to its end. `steps` counts the uops run by every workgroup; past `max_steps` (when
  // positive) the run stops.
  absl::Status Run(int64_t max_steps, int64_t& steps);

 private:
  // Calls the handler of the op's group. The dispatch and the handlers of the ops an inner loop runs (ALU,
  // INDEX, LOAD, accumulators, ENDRANGE) are inlined into the run loop, which keeps the speed of the single
  // switch they replace (a call and a returned Status per uop cost about 3% more instructions).
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status Execute(const Op& op);

  // The kernel's inputs: buffers, local memory, variables, thread ids, constants.
  absl::Status HandleDefineGlobal(const Op& op);
  absl::Status HandleDefineLocal(const Op& op);
  absl::Status HandleDefineVar(const Op& op);
  absl::Status HandleSpecial(const Op& op);
  absl::Status HandleConstant(const Op& op);  // CONST, VCONST
  // Control flow: loops and masked blocks.
  absl::Status HandleRange(const Op& op);
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status HandleEndRange(const Op& op);
  absl::Status HandleIf(const Op& op);
  absl::Status HandleEndIf(const Op& op);
  // Values built from the elements of others: NOOP, VECTORIZE, GEP.
  absl::Status HandleElements(const Op& op);
  // Loop-carried values: DEFINE_ACC, ASSIGN.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status HandleAccumulator(const Op& op);
  // Memory: pointers, loads and stores.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status HandleIndex(const Op& op);
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status HandleLoad(const Op& op);
  absl::Status HandleStore(const Op& op);
  // A tensor core's matrix multiply-accumulate over the lanes of a warp.
  absl::Status HandleWmma(const Op& op);
  // Element by element: the ALU ops, CAST and BITCAST.
  ABSL_ATTRIBUTE_ALWAYS_INLINE absl::Status HandleAlu(const Op& op);

  absl::Status Error(absl::string_view what) const { return UopError(pc_, program_.ops_[pc_].uop, what); }
  // The memory holding element `at` of the buffer `p` points into; null when `p` points into no buffer or
  // `at` is outside it.
  const Memory* Addressed(const Pointer& p, int64_t at) const {
    if (p.mem < 0 || p.mem >= static_cast<int>(memories_.size())) return nullptr;
    const Memory& mem = memories_[p.mem];
    return at >= 0 && at < mem.size ? &mem : nullptr;
  }
  // Why Addressed(p, at) is null, for a `load` or a `store`.
  absl::Status AccessError(absl::string_view access, const Pointer& p, int64_t at) const {
    if (p.mem < 0 || p.mem >= static_cast<int>(memories_.size())) {
      return Error(absl::StrCat(access, " through something that is not a buffer"));
    }
    return Error(
        absl::StrCat(access, " out of bounds: element ", at, " of a buffer of ", memories_[p.mem].size));
  }
  Scalar& At(int uop, int element, int lane) { return values_[uop][element * warp_ + lane]; }
  // Element e of a source, broadcasting a one-element value.
  const Scalar& Src(int uop, int element, int lane) const {
    const std::vector<Scalar>& v = values_[uop];
    return static_cast<int>(v.size()) == warp_ ? v[lane] : v[element * warp_ + lane];
  }
  bool Active(int lane) const { return masks_.back()[lane]; }

  const InterpretedProgram& program_;
  const absl::Span<const InterpBuffer> buffers_;
  const absl::flat_hash_map<std::string, int64_t>& vars_;
  const LaunchDims& dims_;
  const std::array<int64_t, 3> gid_;
  const int warp_;
  // values_[i][e * warp_ + t]: element e of lane t of uop i.
  std::vector<std::vector<Scalar>> values_;
  // The global buffers, then the workgroup's local memories.
  std::vector<Memory> memories_;
  std::vector<std::unique_ptr<uint8_t[]>> locals_;
  // The lanes still executing: IF blocks push a narrower mask.
  std::vector<std::vector<bool>> masks_;
  absl::flat_hash_map<int, int64_t> range_end_;  // active loops: RANGE position -> end
  // The position of the uop running, and of the one that runs after it.
  int pc_ = 0;
  int next_pc_ = 0;
};

absl::Status InterpretedProgram::Workgroup::Run(int64_t max_steps, int64_t& steps) {
  const int n = static_cast<int>(program_.ops_.size());
  for (pc_ = 0; pc_ < n; pc_ = next_pc_) {
    if (max_steps > 0 && ++steps > max_steps) {
      return absl::ResourceExhaustedError(absl::StrCat("the program ran more than ", max_steps, " uops"));
    }
    next_pc_ = pc_ + 1;
    const Op& op = program_.ops_[pc_];
    if (op.uop->dtype() != DType()) values_[pc_].assign(static_cast<size_t>(Width(op.uop)) * warp_, Scalar{});
    // Every input must have a value by now. An ASSIGN whose loop ran no iteration stands for its accumulator,
    // as the C variable does; any other missing value is a program that reads what a block which did not run
    // would have computed.
    for (int s : op.src) {
      if (!values_[s].empty() || program_.uops_[s]->dtype() == DType()) continue;
      if (program_.uops_[s]->op() == Ops::ASSIGN && !values_[program_.ops_[s].src[0]].empty()) {
        values_[s] = values_[program_.ops_[s].src[0]];
        continue;
      }
      return Error(absl::StrCat("reads uop ", s, ", which has no value here (its block did not run)"));
    }
    UOPC_RETURN_IF_ERROR(Execute(op));
  }
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::Execute(const Op& op) {
  switch (op.uop->op()) {
    case Ops::SINK:
    case Ops::BARRIER:  // the lanes of a workgroup run in lock step
      return absl::OkStatus();
    case Ops::DEFINE_GLOBAL:
      return HandleDefineGlobal(op);
    case Ops::DEFINE_LOCAL:
      return HandleDefineLocal(op);
    case Ops::DEFINE_VAR:
      return HandleDefineVar(op);
    case Ops::SPECIAL:
      return HandleSpecial(op);
    case Ops::CONST:
    case Ops::VCONST:
      return HandleConstant(op);
    case Ops::RANGE:
      return HandleRange(op);
    case Ops::ENDRANGE:
      return HandleEndRange(op);
    case Ops::IF:
      return HandleIf(op);
    case Ops::ENDIF:
      return HandleEndIf(op);
    case Ops::NOOP:
    case Ops::VECTORIZE:
    case Ops::GEP:
      return HandleElements(op);
    case Ops::DEFINE_ACC:
    case Ops::ASSIGN:
      return HandleAccumulator(op);
    case Ops::INDEX:
      return HandleIndex(op);
    case Ops::LOAD:
      return HandleLoad(op);
    case Ops::STORE:
      return HandleStore(op);
    case Ops::WMMA:
      return HandleWmma(op);
    default:  // the ALU ops, CAST and BITCAST: what else Create admits
      return HandleAlu(op);
  }
}

absl::Status InterpretedProgram::Workgroup::HandleDefineGlobal(const Op& op) {
  const UOp* u = op.uop;
  const int64_t arg = u->arg().as_int();
  if (arg < 0 || arg >= static_cast<int64_t>(buffers_.size())) return Error("no buffer for this argument");
  if (buffers_[arg].dtype.scalar() != u->dtype().base().scalar()) {
    return Error(absl::StrCat("buffer ", arg, " holds ", buffers_[arg].dtype.ToString()));
  }
  for (Scalar& s : values_[pc_]) s.p = {static_cast<int>(arg), 0, true};
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::HandleDefineLocal(const Op& op) {
  const UOp* u = op.uop;
  const DType elem = u->dtype().base().scalar();
  const int64_t size = u->dtype().ptr_size() * std::max(1, u->dtype().base().count());
  locals_.push_back(std::make_unique<uint8_t[]>(size * elem.itemsize()));
  std::memset(locals_.back().get(), 0, size * elem.itemsize());
  memories_.push_back({locals_.back().get(), size, elem});
  for (Scalar& s : values_[pc_]) s.p = {static_cast<int>(memories_.size()) - 1, 0, true};
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::HandleDefineVar(const Op& op) {
  const UOp* u = op.uop;
  auto it = vars_.find(u->var_name());
  if (it == vars_.end()) return Error(absl::StrCat("no value for variable ", u->var_name()));
  if (u->arg().size() >= 3 && (it->second < u->arg()[1].as_int() || it->second > u->arg()[2].as_int())) {
    return Error(absl::StrCat("variable ", u->var_name(), " = ", it->second, " is out of its range"));
  }
  for (Scalar& s : values_[pc_]) s.v = ConstValue::Int(it->second);
  return absl::OkStatus();
}

// A thread id: the workgroup's (g), the lane's within it (l), or the global one (i), in dimension 0, 1 or 2.
absl::Status InterpretedProgram::Workgroup::HandleSpecial(const Op& op) {
  const std::string& name = op.uop->arg()[0].as_string();
  const int d = name.back() - '0';
  if (d < 0 || d > 2) return Error("SPECIAL dimension must be 0, 1 or 2");
  for (int t = 0; t < warp_; ++t) {
    const int64_t lid[3] = {t % dims_.local[0], t / dims_.local[0] % dims_.local[1],
                            t / (dims_.local[0] * dims_.local[1])};
    int64_t v = 0;
    switch (name[0]) {
      case 'g':
        v = gid_[d];
        break;
      case 'l':
        v = lid[d];
        break;
      case 'i':
        v = gid_[d] * dims_.local[d] + lid[d];
        break;
      default:
        return Error("SPECIAL name must start with g, l or i");
    }
    At(pc_, 0, t).v = ConstValue::Int(v);
  }
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::HandleConstant(const Op& op) {
  const UOp* u = op.uop;
  if (u->op() == Ops::CONST) {
    for (Scalar& s : values_[pc_]) s.v = u->const_value();
    return absl::OkStatus();
  }
  for (int e = 0; e < Width(u); ++e) {  // VCONST
    const ConstValue v = ConstFromArg(u->arg()[e], u->dtype().scalar());
    for (int t = 0; t < warp_; ++t) At(pc_, e, t).v = v;
  }
  return absl::OkStatus();
}

// A loop starts at 0 and, as C's `for`, an empty one runs no iteration: the run goes on after its ENDRANGE.
absl::Status InterpretedProgram::Workgroup::HandleRange(const Op& op) {
  const int64_t end = AsIndex(Src(op.src[0], 0, 0).v);
  if (end <= 0) {
    next_pc_ = op.jump + 1;
    return absl::OkStatus();
  }
  range_end_[pc_] = end;
  for (Scalar& s : values_[pc_]) s.v = ConstValue::Int(0);
  return absl::OkStatus();
}

// The loop's counter steps; while below the end, the run goes back to the uop after the RANGE.
absl::Status InterpretedProgram::Workgroup::HandleEndRange(const Op& op) {
  std::vector<Scalar>& counter = values_[op.jump];
  const int64_t next = AsIndex(counter[0].v) + 1;
  if (next < range_end_[op.jump]) {
    for (Scalar& s : counter) s.v = ConstValue::Int(next);
    next_pc_ = op.jump + 1;
    return absl::OkStatus();
  }
  range_end_.erase(op.jump);
  return absl::OkStatus();
}

// The block runs on the lanes whose condition holds; when none does, the run skips to its ENDIF.
absl::Status InterpretedProgram::Workgroup::HandleIf(const Op& op) {
  std::vector<bool> mask = masks_.back();
  bool any = false;
  for (int t = 0; t < warp_; ++t) {
    mask[t] = mask[t] && Src(op.src[0], 0, t).v.AsBool();
    any = any || mask[t];
  }
  masks_.push_back(std::move(mask));
  if (!any) next_pc_ = op.jump;  // ENDIF pops the mask
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::HandleEndIf(const Op& /*endif*/) {
  masks_.pop_back();
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::HandleElements(const Op& op) {
  const UOp* u = op.uop;
  const int width = Width(u);
  switch (u->op()) {
    case Ops::NOOP:
      values_[pc_] = values_[op.src[0]];
      break;
    case Ops::VECTORIZE:
      for (int e = 0; e < width; ++e) {
        for (int t = 0; t < warp_; ++t) At(pc_, e, t) = Src(op.src[e], 0, t);
      }
      break;
    default:  // GEP
      for (int e = 0; e < width; ++e) {
        const int from = static_cast<int>(u->arg()[e].as_int());
        for (int t = 0; t < warp_; ++t) At(pc_, e, t) = Src(op.src[0], from, t);
      }
      break;
  }
  return absl::OkStatus();
}

// A DEFINE_ACC takes its initial value; an ASSIGN writes the active lanes of its accumulator and has the
// accumulator's value.
absl::Status InterpretedProgram::Workgroup::HandleAccumulator(const Op& op) {
  const int width = Width(op.uop);
  if (op.uop->op() == Ops::DEFINE_ACC) {
    for (int e = 0; e < width; ++e) {
      for (int t = 0; t < warp_; ++t) At(pc_, e, t) = Src(op.src[0], e, t);
    }
    return absl::OkStatus();
  }
  for (int e = 0; e < width; ++e) {
    for (int t = 0; t < warp_; ++t) {
      if (Active(t)) At(op.src[0], e, t) = Src(op.src[1], e, t);
      At(pc_, e, t) = At(op.src[0], e, t);
    }
  }
  return absl::OkStatus();
}

// INDEX(pointer, offset [, gate]).
absl::Status InterpretedProgram::Workgroup::HandleIndex(const Op& op) {
  const int width = Width(op.uop);
  for (int e = 0; e < width; ++e) {
    for (int t = 0; t < warp_; ++t) {
      Pointer p = Src(op.src[0], e, t).p;
      p.offset += AsIndex(Src(op.src[1], e, t).v);
      if (op.src.size() > 2) p.gate = Src(op.src[2], e, t).v.AsBool();
      At(pc_, e, t).p = p;
    }
  }
  return absl::OkStatus();
}

// LOAD(pointer [, alt] [, barrier]): a gated pointer reads alt instead.
absl::Status InterpretedProgram::Workgroup::HandleLoad(const Op& op) {
  const UOp* u = op.uop;
  const int width = Width(u);
  int alt = -1;
  for (size_t s = 1; s < op.src.size(); ++s) {
    if (u->src(s)->dtype() != DType()) alt = op.src[s];
  }
  const bool pointer_vector = Width(u->src(0)) > 1;
  for (int t = 0; t < warp_; ++t) {
    if (!Active(t)) continue;
    for (int e = 0; e < width; ++e) {
      const Pointer& p = Src(op.src[0], pointer_vector ? e : 0, t).p;
      if (!p.gate) {
        if (alt < 0) return Error("a gated load needs an alternative value");
        At(pc_, e, t).v = Src(alt, e, t).v;
        continue;
      }
      const int64_t at = p.offset + (pointer_vector ? 0 : e);
      const Memory* mem = Addressed(p, at);
      if (mem == nullptr) return AccessError("load", p, at);
      At(pc_, e, t).v = ReadElement(*mem, at);
    }
  }
  return absl::OkStatus();
}

// STORE(pointer, value): the active lanes write where their pointer's gate holds.
absl::Status InterpretedProgram::Workgroup::HandleStore(const Op& op) {
  const UOp* u = op.uop;
  const int value_width = Width(u->src(1));
  const bool pointer_vector = Width(u->src(0)) > 1;
  for (int t = 0; t < warp_; ++t) {
    if (!Active(t)) continue;
    for (int e = 0; e < value_width; ++e) {
      const Pointer& p = Src(op.src[0], pointer_vector ? e : 0, t).p;
      if (!p.gate) continue;
      const int64_t at = p.offset + (pointer_vector ? 0 : e);
      const Memory* mem = Addressed(p, at);
      if (mem == nullptr) return AccessError("store", p, at);
      WriteElement(*mem, at, Src(op.src[1], e, t).v);
    }
  }
  return absl::OkStatus();
}

// WMMA(a, b, c): each output element is c's plus the dot product of a row of A and a column of B, gathered
// from the lanes of the warp that hold them (WmmaLayout).
absl::Status InterpretedProgram::Workgroup::HandleWmma(const Op& op) {
  const UOp* u = op.uop;
  absl::StatusOr<WmmaLayout> layout = WmmaLayoutOf(u);
  if (!layout.ok()) return Error(layout.status().message());
  if (Width(u->src(0)) != layout->num_a || Width(u->src(1)) != layout->num_b ||
      Width(u->src(2)) != layout->num_c || Width(u) != layout->num_c) {
    return Error("WMMA operands do not have the tensor core's elements per thread");
  }
  if (warp_ % layout->warp_threads != 0) {
    return Error(absl::StrCat("WMMA needs a multiple of ", layout->warp_threads, " threads"));
  }
  const DType out_dtype = u->dtype().scalar();
  for (int goff = 0; goff < warp_; goff += layout->warp_threads) {
    for (int lane = 0; lane < layout->warp_threads; ++lane) {
      for (int e = 0; e < layout->num_c; ++e) {
        const auto [ci, cj] = layout->c_map(lane, e);
        double acc = Src(op.src[2], e, goff + lane).v.AsFloat();
        for (int k = 0; k < layout->k; ++k) {
          const auto [ae, al] = layout->a_elem(k, cj);
          const auto [be, bl] = layout->b_elem(ci, k);
          acc += Src(op.src[0], ae, goff + al).v.AsFloat() * Src(op.src[1], be, goff + bl).v.AsFloat();
        }
        const ConstValue sum[2] = {ConstValue::Float(acc), ConstValue::Float(0.0)};
        absl::StatusOr<ConstValue> r = ExecAlu(Ops::ADD, out_dtype, sum);
        if (!r.ok()) return Error(r.status().message());
        At(pc_, e, goff + lane).v = *r;
      }
    }
  }
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Workgroup::HandleAlu(const Op& op) {
  const UOp* u = op.uop;
  const int width = Width(u);
  if (u->op() == Ops::CAST &&
      u->dtype().is_ptr()) {  // a pointer viewed as a vector pointer: the same address
    values_[pc_] = values_[op.src[0]];
    return absl::OkStatus();
  }
  if (u->op() == Ops::BITCAST && Width(u->src(0)) != width) {
    return Error("a BITCAST between vector widths is not supported");
  }
  std::optional<DType> operand_dtype;
  if (u->op() == Ops::CMPLT || u->op() == Ops::CMPNE || u->op() == Ops::CAST || u->op() == Ops::BITCAST) {
    operand_dtype = u->src(0)->dtype().scalar();
  }
  std::vector<ConstValue> operands(op.src.size());
  for (int t = 0; t < warp_; ++t) {
    for (int e = 0; e < width; ++e) {
      for (size_t s = 0; s < op.src.size(); ++s) operands[s] = Src(op.src[s], e, t).v;
      absl::StatusOr<ConstValue> r = ExecAlu(u->op(), u->dtype().scalar(), operands, operand_dtype);
      if (!r.ok()) {
        if (!Active(t)) continue;  // a masked-off lane computes nothing
        return Error(r.status().message());
      }
      At(pc_, e, t).v = *r;
    }
  }
  return absl::OkStatus();
}

absl::Status InterpretedProgram::Run(absl::Span<const InterpBuffer> buffers,
                                     const absl::flat_hash_map<std::string, int64_t>& vars,
                                     const LaunchDims& dims, int64_t max_steps) const {
  for (int d = 0; d < 3; ++d) {
    if (dims.global[d] < 1 || dims.local[d] < 1)
      return absl::InvalidArgumentError("launch sizes must be >= 1");
  }
  const int64_t warp64 = dims.local[0] * dims.local[1] * dims.local[2];
  if (warp64 > 4096) return absl::InvalidArgumentError("at most 4096 threads per workgroup");
  const int warp = static_cast<int>(warp64);
  int64_t steps = 0;
  for (int64_t gz = 0; gz < dims.global[2]; ++gz) {
    for (int64_t gy = 0; gy < dims.global[1]; ++gy) {
      for (int64_t gx = 0; gx < dims.global[0]; ++gx) {
        Workgroup workgroup(*this, buffers, vars, dims, {gx, gy, gz}, warp);
        UOPC_RETURN_IF_ERROR(workgroup.Run(max_steps, steps));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace uopc
