#include "uop/spec.h"

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "uop/arg.h"
#include "uop/dtype.h"
#include "uop/ops.h"
#include "uop/util.h"

namespace uopc {
namespace {

// A rule's verdict on a node: nullopt when the rule does not apply (the next rule decides), an empty string
// when the node satisfies it, otherwise what is wrong. This mirrors tinygrad's PatternMatcher, where the
// first rule that matches and returns True or False decides.
using Verdict = std::optional<std::string>;
constexpr std::nullopt_t kNoMatch = std::nullopt;
Verdict Ok() { return std::string(); }

template <typename... T>
Verdict Fail(const T&... parts) {
  return absl::StrCat(parts...);
}

std::string OpStr(Ops op) { return absl::StrCat("Ops.", OpName(op)); }
std::string DStr(DType d) { return d.ToString(); }

// ---- tinygrad's dtype predicates (a pointer is neither an int nor a float) ----

bool IsInt(DType d) { return !d.is_ptr() && d.is_int(); }
bool IsFloat(DType d) { return !d.is_ptr() && d.is_float(); }
// UPat's dtype test: the dtype itself or, for a vector, its scalar. Pointers never match a value dtype.
bool IsA(DType d, DType want) { return d == want || (!d.is_ptr() && d.scalar() == want); }
// tinygrad's DType.scalar(): a vector's element; a vector of pointers' single pointer; otherwise the dtype.
DType TgScalar(DType d) { return d.is_ptr() ? d.base().Ptr(d.ptr_size(), d.is_local()) : d.scalar(); }

bool OpIn(const UOp* u, std::initializer_list<Ops> ops) {
  for (Ops op : ops) {
    if (u->op() == op) return true;
  }
  return false;
}

// Source ops, as tinygrad's error message lists them: [Ops.CONST, Ops.RANGE].
std::string SrcOps(const UOp* u) {
  std::vector<std::string> ops;
  for (const UOpPtr& s : u->src()) ops.push_back(OpStr(s->op()));
  return absl::StrCat("[", absl::StrJoin(ops, ", "), "]");
}

std::string ArgRepr(const UOp* u) {
  if (u->op() == Ops::CONST && (u->arg().is_int() || u->arg().is_float() || u->arg().is_bool())) {
    return ConstFromArg(u->arg(), u->dtype()).ToString();
  }
  return u->arg().ToString();
}

// The Python type name of a constant arg, for messages.
absl::string_view ArgTypeName(const Arg& a) {
  switch (a.kind()) {
    case Arg::Kind::kInt:
      return "int";
    case Arg::Kind::kFloat:
      return "float";
    case Arg::Kind::kBool:
      return "bool";
    case Arg::Kind::kNone:
      return "None";
    case Arg::Kind::kString:
      return "str";
    case Arg::Kind::kTuple:
      return "tuple";
    case Arg::Kind::kDType:
      return "DType";
    case Arg::Kind::kOp:
      return "Ops";
    case Arg::Kind::kPayload:
      return a.as_payload().type_name();
  }
  return "?";
}

// The arg kind dtypes.as_const gives a constant of dtype d.
Arg::Kind ConstKindFor(DType d) {
  if (IsInt(d)) return Arg::Kind::kInt;
  if (IsFloat(d)) return Arg::Kind::kFloat;
  return Arg::Kind::kBool;
}
absl::string_view KindName(Arg::Kind k) {
  return k == Arg::Kind::kInt ? "int" : k == Arg::Kind::kFloat ? "float" : "bool";
}

Verdict CheckConstArg(const UOp* u) {
  Arg::Kind want = ConstKindFor(u->dtype());
  if (u->arg().kind() != want) {
    return Fail("a constant of ", DStr(u->dtype()), " must hold a Python ", KindName(want), ", not ",
                ArgTypeName(u->arg()));
  }
  return Ok();
}

// uopc addition: tinygrad's spec has no VCONST rule (devectorize removes them before linearize), but VCONST
// is a constant like CONST: one value per lane, each of the kind the element type holds.
Verdict CheckVConst(const UOp* u) {
  if (!u->arg().is_tuple() || static_cast<int>(u->arg().size()) != u->dtype().count()) {
    return Fail("VCONST's arg must be a tuple of ", u->dtype().count(), " values (one per lane of ",
                DStr(u->dtype()), ")");
  }
  Arg::Kind want = ConstKindFor(u->dtype().scalar());
  for (size_t i = 0; i < u->arg().size(); ++i) {
    if (u->arg()[i].kind() != want) {
      return Fail("VCONST lane ", i, " must be a Python ", KindName(want), ", not ",
                  ArgTypeName(u->arg()[i]));
    }
  }
  return Ok();
}

// tinygrad's "TODO: confirm the args of both of these are shapetrackers", done as far as this layer can.
Verdict CheckViewArg(const UOp* u) {
  if (!u->arg().is_payload() || u->arg().as_payload().type_name() != "ShapeTracker") {
    return Fail("VIEW's arg must be a ShapeTracker, not ", ArgTypeName(u->arg()));
  }
  return Ok();
}

// Product of the sizes of a CONTRACT/UNROLL arg ((axis, size), ...); nullopt when the arg has another form.
std::optional<int64_t> AxisSizeProduct(const Arg& arg) {
  if (!arg.is_tuple()) return std::nullopt;
  int64_t prod = 1;
  for (const Arg& a : arg.as_tuple()) {
    if (!a.is_tuple() || a.size() != 2 || !a[1].is_int()) return std::nullopt;
    prod *= a[1].as_int();
  }
  return prod;
}

// tinygrad's validate_index. Range analysis proves most indexes in bounds; where it cannot, tinygrad asks z3
// (taking the gate into account). Without z3 the index is rejected only when its whole range lies outside the
// buffer and the gate can be true: then every executed access is out of bounds.
Verdict ValidateIndex(const UOp* idx, const UOp* mask) {
  int64_t size = idx->src(0)->dtype().ptr_size();
  if (size == -1) return Ok();
  const UOp* i = idx->src(1);
  ConstValue lo = i->vmin(), hi = i->vmax();
  if (lo >= ConstValue::Int(0) && hi < ConstValue::Int(size)) return Ok();
  for (const UOp* n : i->Toposort()) {
    if (n->op() == Ops::BITCAST) return Ok();  // tinygrad skips the check here too
  }
  bool always_outside = hi < ConstValue::Int(0) || lo >= ConstValue::Int(size);
  bool gate_can_pass = mask == nullptr || mask->vmax().AsBool();
  if (always_outside && gate_can_pass) {
    return Fail("INDEX out of bounds: the index is always in [", lo.ToString(), ", ", hi.ToString(),
                "], outside the buffer's [0, ", size, ")");
  }
  return Ok();
}

// ---- tinygrad's `spec`: the rules for kernel ASTs and linearized programs ----

Verdict CheckAlu(const UOp* u) {
  const DType dt = u->dtype();
  // uopc addition: the arity of each group (tinygrad's fall-through rule checks dtypes only).
  size_t arity = groups::kUnary.contains(u->op()) ? 1 : groups::kBinary.contains(u->op()) ? 2 : 3;
  if (u->num_src() != arity) {
    return Fail(OpStr(u->op()), " takes ", arity, " source", arity == 1 ? "" : "s", ", not ", u->num_src());
  }
  switch (u->op()) {
    case Ops::WHERE: {
      const UOp* c = u->src(0);
      const UOp* x = u->src(1);
      const UOp* y = u->src(2);
      // Stricter than tinygrad, whose ALU rule would accept WHERE(int, int, int).
      if (!IsA(c->dtype(), dtypes::kBool)) {
        return Fail("WHERE's condition must be bool, not ", DStr(c->dtype()));
      }
      if (dt != x->dtype() || dt != y->dtype()) {
        return Fail("WHERE's dtype and both branches must agree (", DStr(dt), " vs ", DStr(x->dtype()), ", ",
                    DStr(y->dtype()), ")");
      }
      return Ok();
    }
    case Ops::CMPLT:
    case Ops::CMPNE: {
      const DType a = u->src(0)->dtype(), b = u->src(1)->dtype();
      // Stricter than tinygrad, whose ALU rule would accept a comparison producing its operands' dtype.
      if (!IsA(dt, dtypes::kBool)) return Fail("a comparison must produce bool, not ", DStr(dt));
      if (a.base() != b.base()) {
        return Fail("compared operands differ in dtype (", DStr(a), " vs ", DStr(b), ")");
      }
      if (dt.count() != a.count()) {
        return Fail("a comparison of ", DStr(a), " must produce ", a.count(), " lanes, not ", DStr(dt));
      }
      return Ok();
    }
    case Ops::SHL:
    case Ops::SHR: {
      const DType x = u->src(0)->dtype(), y = u->src(1)->dtype();
      if (dt != x) return Fail("a shift's dtype must equal its operand's (", DStr(x), "), not ", DStr(dt));
      if (y != x && y != dtypes::kUInt32) {
        return Fail("a shift distance must be ", DStr(x), " or dtypes.uint, not ", DStr(y));
      }
      return Ok();
    }
    case Ops::IDIV:
    case Ops::MOD:
      if (!IsInt(dt)) return Fail(OpStr(u->op()), " is integer-only, not ", DStr(dt));
      break;
    default:
      break;
  }
  for (size_t i = 0; i < u->num_src(); ++i) {
    if (u->src(i)->dtype().base() != dt.base()) {
      return Fail("ALU source ", i, " has dtype ", DStr(u->src(i)->dtype()), ", the op has ", DStr(dt));
    }
  }
  return Ok();
}

bool IsBufferDef(const UOp* u) { return OpIn(u, {Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL}); }
bool IsBufferIndex(const UOp* u) { return OpIn(u, {Ops::INDEX, Ops::CAST}); }

Verdict CheckSpec(const UOp* u) {
  const DType dt = u->dtype();
  const size_t n = u->num_src();
  auto src = [u](size_t i) { return u->src(i); };
  if (groups::kALU.contains(u->op())) return CheckAlu(u);
  switch (u->op()) {
    case Ops::DEFINE_GLOBAL:
      if (!dt.is_ptr() || dt.is_local()) return Fail("DEFINE_GLOBAL must be a non-local pointer");
      // uopc addition: the arg is the buffer's parameter number.
      if (!u->arg().is_int()) return Fail("DEFINE_GLOBAL's arg must be its int parameter number");
      return Ok();
    case Ops::DEFINE_LOCAL:
      if (!dt.is_ptr() || !dt.is_local()) return Fail("DEFINE_LOCAL must be a local pointer");
      return Ok();
    case Ops::DEFINE_ACC:
      if (n < 1) return Fail("DEFINE_ACC takes an initial value and RANGEs");
      for (size_t i = 1; i < n; ++i) {
        if (src(i)->op() != Ops::RANGE) return Fail("DEFINE_ACC source ", i, " must be a RANGE");
      }
      if (src(0)->dtype() != dt) {
        return Fail("DEFINE_ACC's initial value has dtype ", DStr(src(0)->dtype()), ", not ", DStr(dt));
      }
      return Ok();
    case Ops::DEFINE_VAR: {
      const Arg& a = u->arg();
      if (!a.is_tuple() || a.size() != 3 || !a[0].is_string() || !a[1].is_int() || !a[2].is_int()) {
        return Fail("DEFINE_VAR's arg must be (name, min, max) with int bounds");
      }
      return Ok();
    }
    case Ops::RANGE:
      if (n != 1) return Fail("RANGE takes one source (its end), not ", n);
      if (dt != src(0)->dtype()) return Fail("RANGE's dtype must equal its end's, ", DStr(src(0)->dtype()));
      // uopc addition: loop counters are integers (tinygrad only ever builds int RANGEs).
      if (!IsInt(dt) || dt.count() != 1) return Fail("RANGE must be a scalar int");
      if (!u->arg().is_int()) return Fail("RANGE's arg must be its int axis number");
      return Ok();
    case Ops::SPECIAL: {
      if (n != 0) return Fail("SPECIAL takes no sources");
      // uopc addition: the arg is (name, size) and the value a scalar int, as v0.10.3 builds them; the size
      // is an int, or a scalar int UOp when the launch dim is symbolic.
      const Arg& a = u->arg();
      const UOpArg* symbolic = a.is_tuple() && a.size() == 2 ? a[1].payload_as<UOpArg>() : nullptr;
      if (!a.is_tuple() || a.size() != 2 || !a[0].is_string() || (!a[1].is_int() && symbolic == nullptr)) {
        return Fail("SPECIAL's arg must be (name, size)");
      }
      if (symbolic != nullptr &&
          (!IsInt(symbolic->uop()->dtype()) || symbolic->uop()->dtype().count() != 1)) {
        return Fail("a SPECIAL's symbolic size must be a scalar int");
      }
      if (!IsInt(dt) || dt.count() != 1) return Fail("SPECIAL must be a scalar int");
      return Ok();
    }
    case Ops::VIEW:
      if (Verdict v = CheckViewArg(u); !v->empty()) return v;
      if (n == 0) {
        if (dt != dtypes::kVoid) return Fail("a VIEW without a source must be void");
        return Ok();
      }
      if (n == 1) {
        if (src(0)->op() == Ops::STORE) return Fail("a VIEW cannot view a STORE");
        if (dt.base() != src(0)->dtype().base()) {
          return Fail("a VIEW must keep its source's dtype ", DStr(src(0)->dtype()));
        }
        return Ok();
      }
      return Fail("VIEW takes at most one source");
    case Ops::VALID:
      if (!IsA(dt, dtypes::kBool) || n != 1 || src(0)->op() != Ops::VIEW) {
        return Fail("VALID must be bool VALID(VIEW)");
      }
      return Ok();
    case Ops::CONST:
      return CheckConstArg(u);
    case Ops::VCONST:
      return CheckVConst(u);
    case Ops::LOAD:
      if (n >= 1 && IsBufferDef(src(0))) {
        if ((n == 2 && src(1)->op() == Ops::VIEW) ||
            (n == 3 && src(1)->op() == Ops::VIEW && src(2)->op() == Ops::STORE)) {
          return Ok();
        }
      }
      if (n >= 1 && IsBufferIndex(src(0))) {
        if (n == 1) return Ok();
        if (n == 2) {
          if (OpIn(src(1), {Ops::IF, Ops::BARRIER})) return Ok();
          if (src(1)->dtype() != dt) {
            return Fail("a gated LOAD's alternative value has dtype ", DStr(src(1)->dtype()), ", not ",
                        DStr(dt));
          }
          return Ok();
        }
      }
      if (n >= 1 && IsA(src(0)->dtype(), dtypes::kInt64)) return Ok();  // PTX loads from an address
      return Fail(
          "LOAD must be LOAD(INDEX|CAST[, alt|IF|BARRIER]) or LOAD(DEFINE_GLOBAL|DEFINE_LOCAL, VIEW[, "
          "STORE])");
    case Ops::STORE:
      if (n == 3 && IsBufferDef(src(0)) && src(1)->op() == Ops::VIEW) return Ok();
      if (n >= 1 && IsBufferIndex(src(0)) && (n == 2 || n == 3)) {
        if (dt != dtypes::kVoid) return Fail("STORE must be void");
        if (n == 2 || IsA(src(2)->dtype(), dtypes::kBool) || src(2)->op() == Ops::IF) return Ok();
        return Fail("a STORE's gate must be bool or an IF");
      }
      if (n >= 1 && IsA(src(0)->dtype(), dtypes::kInt64)) return Ok();  // PTX stores to an address
      return Fail(
          "STORE must be STORE(INDEX|CAST, value[, gate|IF]) or STORE(DEFINE_GLOBAL|DEFINE_LOCAL, VIEW, "
          "value)");
    case Ops::INDEX: {
      if ((n != 2 && n != 3) || !IsBufferDef(src(0))) {
        return Fail("INDEX must be INDEX(DEFINE_GLOBAL|DEFINE_LOCAL, index[, gate])");
      }
      if (n == 3 && !IsA(src(2)->dtype(), dtypes::kBool)) {
        return Fail("INDEX's gate must be bool, not ", DStr(src(2)->dtype()));
      }
      // uopc addition: tinygrad's index is always an int expression.
      if (!IsInt(src(1)->dtype())) return Fail("INDEX's index must be an int, not ", DStr(src(1)->dtype()));
      return ValidateIndex(u, n == 3 ? src(2) : nullptr);
    }
    case Ops::ASSIGN:
      if (n == 2 && OpIn(src(0), {Ops::DEFINE_ACC, Ops::DEFINE_GLOBAL})) {
        // uopc addition: an accumulator update keeps the accumulator's dtype.
        if (src(0)->op() == Ops::DEFINE_ACC && (dt != src(0)->dtype() || dt != src(1)->dtype())) {
          return Fail("ASSIGN to an accumulator of ", DStr(src(0)->dtype()),
                      " must have that dtype (value is ", DStr(src(1)->dtype()), ")");
        }
        return Ok();
      }
      return Fail("ASSIGN must be ASSIGN(DEFINE_ACC|DEFINE_GLOBAL, value)");
    case Ops::ENDRANGE:
      if (dt != dtypes::kVoid || n != 1 || src(0)->op() != Ops::RANGE) {
        return Fail("ENDRANGE must be void ENDRANGE(RANGE)");
      }
      return Ok();
    case Ops::WMMA:
      if (n != 3) return Fail("WMMA takes (a, b, acc)");
      if (!u->arg().is_tuple() || u->arg().size() != 8) return Fail("WMMA's arg must be a tuple of 8");
      return Ok();
    case Ops::CONTRACT: {
      std::optional<int64_t> prod = AxisSizeProduct(u->arg());
      if (!prod) return Fail("CONTRACT's arg must be ((axis, size), ...)");
      if (dt.count() != *prod) return Fail("CONTRACT of ", *prod, " lanes cannot produce ", DStr(dt));
      return Ok();
    }
    case Ops::UNROLL: {
      std::optional<int64_t> prod = AxisSizeProduct(u->arg());
      if (!prod) return Fail("UNROLL's arg must be ((axis, size), ...)");
      if (n < 1 || src(0)->dtype().count() != *prod) {
        return Fail("UNROLL of ", *prod, " lanes needs a source of as many");
      }
      return Ok();
    }
    case Ops::IF:
      if (dt != dtypes::kVoid || n < 1 || n > 2 || (n == 2 && src(1)->op() != Ops::BARRIER)) {
        return Fail("IF must be void IF(gate[, BARRIER])");
      }
      // uopc addition: the gate is a condition.
      if (!IsA(src(0)->dtype(), dtypes::kBool)) {
        return Fail("IF's gate must be bool, not ", DStr(src(0)->dtype()));
      }
      return Ok();
    case Ops::ENDIF:
      if (dt != dtypes::kVoid || n != 1 || src(0)->op() != Ops::IF) {
        return Fail("ENDIF must be void ENDIF(IF)");
      }
      return Ok();
    case Ops::REDUCE_AXIS: {
      const Arg& a = u->arg();
      if (!a.is_tuple() || a.size() < 2 || !a[0].is_op() ||
          !(a[0].as_op() == Ops::ADD || a[0].as_op() == Ops::MUL || a[0].as_op() == Ops::MAX)) {
        return Fail("REDUCE_AXIS's arg must be (Ops.ADD|Ops.MUL|Ops.MAX, axes)");
      }
      // uopc addition: one source, reduced over a tuple of int axes.
      if (!a[1].is_tuple()) return Fail("REDUCE_AXIS's axes must be a tuple of ints");
      for (const Arg& axis : a[1].as_tuple()) {
        if (!axis.is_int()) return Fail("REDUCE_AXIS's axes must be a tuple of ints");
      }
      if (n != 1) return Fail("REDUCE_AXIS takes one source, not ", n);
      return Ok();
    }
    case Ops::GEP: {
      if (n != 1) return Fail("GEP takes one source");
      // Generalizes tinygrad's scalar-only rule to GEPs that pick several lanes.
      const DType s = src(0)->dtype();
      const Arg& a = u->arg();
      if (!a.is_tuple() || a.size() == 0) return Fail("GEP's arg must be a tuple of lane numbers");
      for (const Arg& i : a.as_tuple()) {
        if (!i.is_int() || i.as_int() < 0 || i.as_int() >= s.vcount()) {
          return Fail("GEP lane ", i.ToString(), " is not a lane of ", DStr(s));
        }
      }
      std::optional<DType> want = TgScalar(s).vec(static_cast<int>(a.size()));
      if (!want || dt != *want) {
        return Fail("GEP of ", a.size(), " lane(s) of ", DStr(s), " must be ",
                    want ? DStr(*want) : std::string("a vector"));
      }
      return Ok();
    }
    case Ops::VECTORIZE: {
      if (n < 2 || static_cast<int>(n) != dt.count()) {
        return Fail("VECTORIZE of ", n, " sources must produce a vector of as many (at least 2)");
      }
      for (size_t i = 0; i < n; ++i) {
        std::optional<DType> v = src(i)->dtype().vec(static_cast<int>(n));
        if (!v || *v != dt) return Fail("VECTORIZE source ", i, " has dtype ", DStr(src(i)->dtype()));
      }
      return Ok();
    }
    case Ops::CAST:
    case Ops::BITCAST:
      if (n != 1) return Fail(OpStr(u->op()), " takes one source");
      if (!u->arg().is_none()) return Fail(OpStr(u->op()), "'s arg must be None");
      return Ok();
    case Ops::BARRIER:
      if (dt != dtypes::kVoid) return Fail("BARRIER must be void");
      return Ok();
    case Ops::SINK:
      if (dt != dtypes::kVoid) return Fail("SINK must be void");
      return Ok();
    case Ops::NOOP:
    case Ops::CUSTOMI:
    case Ops::CUSTOM:
      return Ok();
    default:
      return Fail("no rule allows ", OpStr(u->op()), " here");
  }
}

// ---- tinygrad's tensor_uop_spec (buffer_spec + assign_spec + tensor rules), tried before `spec` ----

// tinygrad's UOp.base: the source under movement ops and views.
const UOp* BaseOf(const UOp* u) {
  while ((u->op() == Ops::VIEW && u->num_src() != 0) || groups::kMovement.contains(u->op())) {
    if (u->num_src() == 0) break;
    u = u->src(0);
  }
  return u;
}

// `views_of_values`: the scheduler's graphs, where merge_views has made movement ops into VIEWs of any value;
// `spec`'s VIEW rule applies to those.
Verdict CheckTensorSpec(const UOp* u, bool views_of_values = false) {
  const DType dt = u->dtype();
  const size_t n = u->num_src();
  auto src = [u](size_t i) { return u->src(i); };
  if (groups::kMovement.contains(u->op()) && n == 1) {
    if (!u->arg().is_tuple()) return Fail(OpStr(u->op()), "'s arg must be a tuple");
    if (dt != src(0)->dtype()) {
      return Fail("a movement op must keep its source's dtype ", DStr(src(0)->dtype()));
    }
    return Ok();
  }
  switch (u->op()) {
    case Ops::UNIQUE:
      if (dt == dtypes::kVoid && n == 0) return Ok();
      return Fail("UNIQUE must be void with no sources");
    case Ops::DEVICE:
      if (dt != dtypes::kVoid || n != 0) return Fail("DEVICE must be void with no sources");
      if (!u->arg().is_string()) return Fail("DEVICE's arg must be a device name");
      return Ok();
    case Ops::BUFFER:
      if (n < 2 || src(0)->op() != Ops::UNIQUE || src(1)->op() != Ops::DEVICE) {
        return Fail("BUFFER must be BUFFER(UNIQUE, DEVICE, ...)");
      }
      if (!u->arg().is_int()) return Fail("BUFFER's arg must be its int size");
      return Ok();
    case Ops::BUFFER_VIEW:
      if (n != 1 || src(0)->op() != Ops::BUFFER) return kNoMatch;
      if (!u->arg().is_tuple() || u->arg().size() != 2 || !u->arg()[0].is_int() || !u->arg()[1].is_int()) {
        return Fail("BUFFER_VIEW's arg must be (size, offset)");
      }
      return Ok();
    case Ops::KERNEL:
      for (size_t i = 0; i < n; ++i) {
        if (!OpIn(src(i), {Ops::BUFFER, Ops::BUFFER_VIEW, Ops::ASSIGN})) {
          return Fail("KERNEL source ", i, " must be a BUFFER, BUFFER_VIEW or ASSIGN");
        }
      }
      // tinygrad checks the kernel's AST, which lives in the payload; this layer can only see that it is one.
      if (!u->arg().is_payload()) return Fail("KERNEL's arg must be a Kernel payload");
      return Ok();
    case Ops::ASSIGN:
      if (n < 2) return Fail("ASSIGN takes a target and a value");
      for (size_t i = 2; i < n; ++i) {
        if (src(i)->op() != Ops::ASSIGN) return Fail("ASSIGN source ", i, " must be an ASSIGN it depends on");
      }
      return Ok();
    case Ops::VIEW: {
      if (n != 1 || views_of_values) return kNoMatch;
      if (Verdict v = CheckViewArg(u); !v->empty()) return v;
      const UOp* base = BaseOf(src(0));
      if (!OpIn(base, {Ops::BUFFER, Ops::BUFFER_VIEW, Ops::ASSIGN, Ops::CONST, Ops::DEVICE})) {
        return Fail("a tensor VIEW must be of a BUFFER, BUFFER_VIEW, ASSIGN, CONST or DEVICE, not ",
                    OpStr(base->op()));
      }
      return Ok();
    }
    case Ops::BIND:
      if (IsA(dt, dtypes::kInt32) && n == 2 && src(0)->op() == Ops::DEFINE_VAR &&
          OpIn(src(1), {Ops::CONST, Ops::VCONST}) && IsA(src(1)->dtype(), dtypes::kInt32) &&
          u->arg().is_none()) {
        return Ok();
      }
      return kNoMatch;
    case Ops::CONST:
      if (n == 1 && src(0)->op() == Ops::VIEW && src(0)->num_src() == 1 &&
          src(0)->src(0)->op() == Ops::DEVICE) {
        // tinygrad checks that the view is one unmasked zero-stride view: the shapetracker layer's business.
        // uopc addition: the value's kind is checked as for kernel constants.
        return CheckConstArg(u);
      }
      return kNoMatch;
    case Ops::DETACH:
    case Ops::CONTIGUOUS:
    case Ops::CONTIGUOUS_BACKWARD:
    case Ops::FUSE:
      if (n != 1 || !u->arg().is_none()) return kNoMatch;
      if (dt != src(0)->dtype()) {
        return Fail(OpStr(u->op()), " must keep its source's dtype ", DStr(src(0)->dtype()));
      }
      return Ok();
    case Ops::CUSTOM_GRADIENT:
      // uopc: the value, then the nodes its rule differentiates with respect to; the arg names the rule.
      if (n < 2 || !u->arg().is_tuple() || u->arg().as_tuple().empty() ||
          !u->arg().as_tuple()[0].is_string()) {
        return Fail("CUSTOM_GRADIENT takes a value and at least one more source, and an arg naming its rule");
      }
      if (dt != src(0)->dtype()) {
        return Fail("CUSTOM_GRADIENT must keep its value's dtype ", DStr(src(0)->dtype()));
      }
      return Ok();
    case Ops::COPY:
      if (n != 2 || src(1)->op() != Ops::DEVICE) return kNoMatch;
      if (dt != src(0)->dtype()) return Fail("COPY must keep its source's dtype ", DStr(src(0)->dtype()));
      return Ok();
    default:
      return kNoMatch;
  }
}

// ---- tinygrad's sched_spec: the kernel graph holds buffers, kernels and assigns, nothing else ----

Verdict CheckKernelGraphSpec(const UOp* u) {
  switch (u->op()) {
    case Ops::UNIQUE:
    case Ops::DEVICE:
    case Ops::BUFFER:
    case Ops::BUFFER_VIEW:
    case Ops::KERNEL:
    case Ops::ASSIGN:
      if (Verdict v = CheckTensorSpec(u)) return v;
      break;
    case Ops::SINK:
      if (u->dtype() != dtypes::kVoid) return Fail("SINK must be void");
      return Ok();
    default:
      break;
  }
  return Fail("the kernel graph holds only buffers, kernels and assigns; ", OpStr(u->op()),
              " is not allowed");
}

// ---- the forms a kernel takes between codegen steps, tried before `spec` ----

Verdict CheckCodegenSpec(const UOp* u) {
  const DType dt = u->dtype();
  const size_t n = u->num_src();
  auto src = [u](size_t i) { return u->src(i); };
  switch (u->op()) {
    case Ops::REDUCE: {
      // The lowerer's REDUCE(value, ranges...): remove_reduce turns it into an accumulator loop.
      if (!u->arg().is_op() ||
          !(u->arg().as_op() == Ops::ADD || u->arg().as_op() == Ops::MUL || u->arg().as_op() == Ops::MAX)) {
        return Fail("REDUCE's arg must be Ops.ADD, Ops.MUL or Ops.MAX");
      }
      if (n < 1) return Fail("REDUCE takes a value and RANGEs");
      for (size_t i = 1; i < n; ++i) {
        if (src(i)->op() != Ops::RANGE) return Fail("REDUCE source ", i, " must be a RANGE");
      }
      // The value may be a CONTRACT of the unrolled lanes; its elements are what is reduced.
      if (src(0)->dtype().is_ptr() || src(0)->dtype().scalar() != dt.scalar()) {
        return Fail("REDUCE of ", DStr(src(0)->dtype()), " cannot produce ", DStr(dt));
      }
      return Ok();
    }
    case Ops::VECTORIZE:
      // The expander's vector of pointers (one per lane), which devectorize splits again.
      if (!dt.is_ptr()) return kNoMatch;
      if (n < 2 || static_cast<int>(n) != dt.vcount()) {
        return Fail("VECTORIZE of ", n, " pointers must produce a vector of as many (at least 2)");
      }
      for (size_t i = 0; i < n; ++i) {
        std::optional<DType> v = src(i)->dtype().vec(static_cast<int>(n));
        if (!v || *v != dt) return Fail("VECTORIZE source ", i, " has dtype ", DStr(src(i)->dtype()));
      }
      return Ok();
    case Ops::INDEX:
      // The expander's INDEX into a vector of pointers, with one index (and gate) per lane.
      if (n < 1 || !src(0)->dtype().is_ptr() || !OpIn(src(0), {Ops::VECTORIZE, Ops::GEP})) return kNoMatch;
      if (n != 2 && n != 3) return Fail("INDEX takes pointers, an index and an optional gate");
      if (!IsInt(src(1)->dtype())) return Fail("INDEX's index must be an int, not ", DStr(src(1)->dtype()));
      if (n == 3 && !IsA(src(2)->dtype(), dtypes::kBool)) {
        return Fail("INDEX's gate must be bool, not ", DStr(src(2)->dtype()));
      }
      return Ok();
    case Ops::IGNORE:
      // store_ignore's IGNORE(value, mask): void where it wraps a STORE's value, else the value's dtype.
      if (n != 2) return Fail("IGNORE takes a value and a mask");
      if (dt != dtypes::kVoid && dt != src(0)->dtype()) {
        return Fail("IGNORE must be void or keep its value's dtype ", DStr(src(0)->dtype()));
      }
      if (!IsA(src(1)->dtype(), dtypes::kBool)) return Fail("IGNORE's mask must be bool");
      return Ok();
    default:
      return kNoMatch;
  }
}

enum class Stage { kTensor, kScheduler, kKernelGraph, kKernelAst, kCodegen, kProgram };

absl::string_view StageName(Stage s) {
  switch (s) {
    case Stage::kTensor:
      return "tensor graph";
    case Stage::kScheduler:
      return "scheduler graph";
    case Stage::kKernelGraph:
      return "kernel graph";
    case Stage::kKernelAst:
      return "kernel AST";
    case Stage::kCodegen:
      return "codegen graph";
    case Stage::kProgram:
      return "program";
  }
  return "";
}

absl::Status Violation(Stage stage, absl::string_view where, size_t index, const UOp* u,
                       absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(StageName(stage), " spec violation at ", where, " ", index,
                                                 ": ", OpStr(u->op()), " ", DStr(u->dtype()),
                                                 " arg=", ArgRepr(u), " src=", SrcOps(u), ": ", why));
}

absl::Status VerifyList(Stage stage, absl::Span<const UOp* const> uops, absl::string_view where) {
  for (size_t i = 0; i < uops.size(); ++i) {
    const UOp* u = uops[i];
    if (u == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(StageName(stage), " spec violation at ", where, " ", i, ": null uop"));
    }
    Verdict v = kNoMatch;
    if (stage == Stage::kKernelGraph) {
      v = CheckKernelGraphSpec(u);
    } else {
      if (stage == Stage::kTensor) v = CheckTensorSpec(u);
      if (stage == Stage::kScheduler) v = CheckTensorSpec(u, /*views_of_values=*/true);
      if (stage == Stage::kCodegen) v = CheckCodegenSpec(u);
      // A kernel's AST keeps the tensor graph's variable bindings until the schedule unbinds them
      // (tinygrad's pm_unbind, after create_ast).
      if (stage == Stage::kKernelAst && u->op() == Ops::BIND) v = CheckTensorSpec(u);
      if (!v) v = CheckSpec(u);
    }
    if (!v->empty()) return Violation(stage, where, i, u, *v);
  }
  return absl::OkStatus();
}

// -1 until the environment is read, then 0 or 1.
std::atomic<int> spec_checks{-1};

}  // namespace

bool SpecChecksEnabled() {
  int on = spec_checks.load(std::memory_order_relaxed);
  if (on < 0) {
    int want = EnvFlag("SPEC") ? 1 : 0;
    // A SetSpecChecks that came first wins.
    spec_checks.compare_exchange_strong(on, want, std::memory_order_relaxed);
    on = spec_checks.load(std::memory_order_relaxed);
  }
  return on == 1;
}

void SetSpecChecks(bool enabled) { spec_checks.store(enabled ? 1 : 0, std::memory_order_relaxed); }

absl::Status SpecStepError(absl::string_view pipeline, absl::string_view step, const absl::Status& verdict) {
  return absl::Status(verdict.code(), absl::StrCat("SPEC: ", pipeline, " step '", step,
                                                   "' left an invalid graph: ", verdict.message()));
}

absl::Status VerifyTensorGraph(const UOp* sink) {
  if (sink == nullptr) return absl::InvalidArgumentError("tensor graph spec: null root");
  return VerifyList(Stage::kTensor, sink->Toposort(), "node (toposort order)");
}

absl::Status VerifySchedulerGraph(const UOp* sink) {
  if (sink == nullptr) return absl::InvalidArgumentError("scheduler graph spec: null root");
  return VerifyList(Stage::kScheduler, sink->Toposort(), "node (toposort order)");
}

absl::Status VerifyKernelGraph(const UOp* sink) {
  if (sink == nullptr) return absl::InvalidArgumentError("kernel graph spec: null root");
  return VerifyList(Stage::kKernelGraph, sink->Toposort(), "node (toposort order)");
}

absl::Status VerifyCodegenGraph(const UOp* sink) {
  if (sink == nullptr) return absl::InvalidArgumentError("codegen graph spec: null root");
  return VerifyList(Stage::kCodegen, sink->Toposort(), "node (toposort order)");
}

absl::Status VerifyKernelAst(const UOp* sink) {
  if (sink == nullptr) return absl::InvalidArgumentError("kernel AST spec: null root");
  std::vector<const UOp*> order = sink->Toposort();
  if (sink->op() != Ops::SINK) {
    return Violation(Stage::kKernelAst, "node (toposort order)", order.size() - 1, sink,
                     "a kernel AST must be rooted at a SINK");
  }
  for (size_t i = 0; i < sink->num_src(); ++i) {
    if (sink->src(i)->op() != Ops::STORE) {
      return Violation(Stage::kKernelAst, "node (toposort order)", order.size() - 1, sink,
                       absl::StrCat("a kernel AST's SINK may only hold STOREs; source ", i, " is ",
                                    OpStr(sink->src(i)->op())));
    }
  }
  return VerifyList(Stage::kKernelAst, order, "node (toposort order)");
}

absl::Status VerifyProgram(absl::Span<const UOp* const> uops) {
  return VerifyList(Stage::kProgram, uops, "uop");
}

absl::Status VerifyProgram(const UOp* root) {
  if (root == nullptr) return absl::InvalidArgumentError("program spec: null root");
  return VerifyList(Stage::kProgram, root->Toposort(), "node (toposort order)");
}

}  // namespace uopc
