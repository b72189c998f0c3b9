#include "shapetracker/movement_ops.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rewrite/infix.h"
#include "uop/exec_alu.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using nlohmann::json;

constexpr int64_t kMaxArg = std::numeric_limits<int32_t>::max();

absl::StatusOr<int64_t> ArgInt(const json& j, absl::string_view what) {
  if (!j.is_number_integer()) return absl::InvalidArgumentError(absl::StrCat(what, ": expected an integer"));
  int64_t v;
  if (j.is_number_unsigned()) {
    uint64_t u = j.get<uint64_t>();
    if (u > static_cast<uint64_t>(kMaxArg)) {
      return absl::InvalidArgumentError(absl::StrCat(what, ": ", u, " does not fit in int32"));
    }
    v = static_cast<int64_t>(u);
  } else {
    v = j.get<int64_t>();
  }
  if (v > kMaxArg || v < -kMaxArg) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": ", v, " does not fit in int32"));
  }
  return v;
}

absl::Status CheckList(const json& j, absl::string_view name, absl::string_view expected) {
  if (!j.is_array()) return absl::InvalidArgumentError(absl::StrCat(name, ": expected ", expected));
  if (j.size() > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": more than ", kMaxRank, " axes"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<int64_t>> ParseInts(const json& j, absl::string_view name) {
  UOPC_RETURN_IF_ERROR(CheckList(j, name, "a list of integers"));
  std::vector<int64_t> out;
  for (const json& x : j) {
    UOPC_ASSIGN_OR_RETURN(int64_t v, ArgInt(x, name));
    out.push_back(v);
  }
  return out;
}

absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParsePairs(const json& j, absl::string_view name) {
  UOPC_RETURN_IF_ERROR(CheckList(j, name, "a list of [a, b] pairs"));
  std::vector<std::pair<int64_t, int64_t>> out;
  for (const json& x : j) {
    if (!x.is_array() || x.size() != 2) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": expected a list of [a, b] pairs"));
    }
    UOPC_ASSIGN_OR_RETURN(int64_t a, ArgInt(x[0], name));
    UOPC_ASSIGN_OR_RETURN(int64_t b, ArgInt(x[1], name));
    out.emplace_back(a, b);
  }
  return out;
}

absl::StatusOr<std::vector<bool>> ParseBools(const json& j, absl::string_view name) {
  UOPC_RETURN_IF_ERROR(CheckList(j, name, "a list of booleans"));
  std::vector<bool> out;
  for (const json& x : j) {
    // tinygrad's tests also write flip arguments as 0/1.
    if (x.is_number_integer() && (x == 0 || x == 1)) {
      out.push_back(x == 1);
      continue;
    }
    if (!x.is_boolean())
      return absl::InvalidArgumentError(absl::StrCat(name, ": expected a list of booleans"));
    out.push_back(x.get<bool>());
  }
  return out;
}

SintVec ToSints(absl::Span<const int64_t> v) { return SintVec(v.begin(), v.end()); }
PairVec ToSintPairs(absl::Span<const std::pair<int64_t, int64_t>> v) {
  PairVec out;
  for (const auto& [a, b] : v) out.emplace_back(Sint(a), Sint(b));
  return out;
}

// Positions of a shape whose dimensions are at most `dims` (overflow-safe); nullopt when above the limit.
// Negative sizes count as 0: the tracker rejects them itself.
std::optional<int64_t> BoundedProduct(absl::Span<const int64_t> dims) {
  int64_t p = 1;
  for (int64_t d : dims) {
    if (d <= 0) return 0;
  }
  for (int64_t d : dims) {
    if (__builtin_mul_overflow(p, d, &p) || p > kMaxMovementElements) return std::nullopt;
  }
  return p;
}

absl::Status CheckArgRange(const MovementOp& op) {
  auto check = [&](int64_t v) -> absl::Status {
    if (v > kMaxArg || v < -kMaxArg) {
      return absl::InvalidArgumentError(
          absl::StrCat(MovementKindName(op.kind), ": argument ", v, " does not fit in int32"));
    }
    return absl::OkStatus();
  };
  for (int64_t v : op.axes) {
    UOPC_RETURN_IF_ERROR(check(v));
  }
  for (const auto& [a, b] : op.pairs) {
    UOPC_RETURN_IF_ERROR(check(a));
    UOPC_RETURN_IF_ERROR(check(b));
  }
  size_t n = op.axes.size() + op.pairs.size() + op.flips.size();
  if (n > static_cast<size_t>(kMaxRank)) {
    return absl::InvalidArgumentError(
        absl::StrCat(MovementKindName(op.kind), ": more than ", kMaxRank, " axes"));
  }
  return absl::OkStatus();
}

// Rejects ops whose result would be too large, before the tracker computes any strides for it.
absl::Status CheckResultSize(const ShapeTracker& st, const MovementOp& op) {
  std::vector<int64_t> dims;
  if (op.kind == MovementKind::kReshape || op.kind == MovementKind::kExpand) {
    dims = op.axes;
  } else if (op.kind == MovementKind::kPad) {
    const SintVec& shape = st.shape();
    for (size_t i = 0; i < op.pairs.size(); ++i) {
      int64_t s = i < shape.size() ? shape[i].vmax() : 1;
      dims.push_back(s + std::max<int64_t>(op.pairs[i].first, 0) + std::max<int64_t>(op.pairs[i].second, 0));
    }
  } else {
    return absl::OkStatus();
  }
  if (!BoundedProduct(dims)) {
    return absl::InvalidArgumentError(absl::StrCat(op.ToString(), ": the result would have more than ",
                                                   kMaxMovementElements, " positions"));
  }
  return absl::OkStatus();
}

// The value of a CONST as int64 (bools 0/1).
int64_t AsInt(const ConstValue& v) { return v.AsInt64(); }

// Evaluates `order` (a toposort) into `values`, for the nodes marked in `todo`. RANGE k reads coords[k].
absl::Status EvaluateNodes(absl::Span<const UOp* const> order,
                           const absl::flat_hash_map<const UOp*, int>& slot, const std::vector<char>& todo,
                           absl::Span<const int64_t> coords,
                           const absl::flat_hash_map<const UOp*, int64_t>& var_values,
                           std::vector<ConstValue>& values) {
  for (size_t i = 0; i < order.size(); ++i) {
    if (!todo[i]) continue;
    const UOp* u = order[i];
    switch (u->op()) {
      case Ops::CONST:
        values[i] = u->const_value();
        continue;
      case Ops::RANGE: {
        int64_t axis = u->arg().is_int() ? u->arg().as_int() : -1;
        if (axis < 0 || axis >= static_cast<int64_t>(coords.size())) {
          return absl::InvalidArgumentError(
              absl::StrCat("RANGE with axis ", u->arg().ToString(), " but only ", coords.size(), " axes"));
        }
        values[i] = ConstValue::Int(coords[axis]);
        continue;
      }
      case Ops::DEFINE_VAR: {
        auto it = var_values.find(u);
        if (it == var_values.end()) {
          return absl::InvalidArgumentError(absl::StrCat("no value for variable '", u->var_name(), "'"));
        }
        values[i] = ConstValue::Int(it->second);
        continue;
      }
      case Ops::BIND:
        values[i] = values[slot.at(u->src(1))];
        continue;
      default:
        break;
    }
    if (!groups::kALU.contains(u->op()) && u->op() != Ops::CAST) {
      return absl::InvalidArgumentError(absl::StrCat("cannot evaluate Ops.", OpName(u->op())));
    }
    absl::InlinedVector<ConstValue, 3> operands;
    for (const UOpPtr& s : u->src()) operands.push_back(values[slot.at(s.get())]);
    std::optional<DType> operand_dtype;
    if (u->op() == Ops::CMPLT || u->op() == Ops::CMPNE || u->op() == Ops::CAST) {
      operand_dtype = u->src(0)->dtype();
    }
    UOPC_ASSIGN_OR_RETURN(values[i], ExecAlu(u->op(), u->dtype(), operands, operand_dtype));
  }
  return absl::OkStatus();
}

// Values of the DEFINE_VARs reachable in `order`: from BINDs in the graph first, then from `vars` by name.
absl::flat_hash_map<const UOp*, int64_t> VariableValues(absl::Span<const UOp* const> order,
                                                        const VarValues& vars) {
  absl::flat_hash_map<const UOp*, int64_t> out;
  for (const UOp* u : order) {
    if (u->op() == Ops::BIND && u->num_src() == 2 && u->src(1)->is_const()) {
      out.emplace(u->src(0), AsInt(u->src(1)->const_value()));
    }
  }
  for (const UOp* u : order) {
    if (u->op() != Ops::DEFINE_VAR || out.contains(u)) continue;
    if (auto it = vars.find(u->var_name()); it != vars.end()) out.emplace(u, it->second);
  }
  return out;
}

}  // namespace

const char* MovementKindName(MovementKind kind) {
  switch (kind) {
    case MovementKind::kReshape:
      return "reshape";
    case MovementKind::kPermute:
      return "permute";
    case MovementKind::kExpand:
      return "expand";
    case MovementKind::kPad:
      return "pad";
    case MovementKind::kShrink:
      return "shrink";
    case MovementKind::kFlip:
      return "flip";
    case MovementKind::kSimplify:
      return "simplify";
  }
  return "?";
}

json MovementOp::ToJson() const {
  json arg;
  switch (kind) {
    case MovementKind::kReshape:
    case MovementKind::kPermute:
    case MovementKind::kExpand:
      arg = axes;
      break;
    case MovementKind::kPad:
    case MovementKind::kShrink:
      arg = json::array();
      for (const auto& [a, b] : pairs) arg.push_back({a, b});
      break;
    case MovementKind::kFlip:
      arg = json::array();
      for (bool f : flips) arg.push_back(f);
      break;
    case MovementKind::kSimplify:
      break;
  }
  return json::array({MovementKindName(kind), arg});
}

absl::StatusOr<MovementOp> ParseMovementOp(const json& j) {
  if (!j.is_array() || j.empty() || j.size() > 2 || !j[0].is_string()) {
    return absl::InvalidArgumentError("expected an op [\"name\", argument]");
  }
  std::string name = j[0].get<std::string>();
  json arg = j.size() == 2 ? j[1] : json(nullptr);
  MovementOp op;
  if (name == "reshape" || name == "permute" || name == "expand") {
    op.kind = name == "reshape"   ? MovementKind::kReshape
              : name == "permute" ? MovementKind::kPermute
                                  : MovementKind::kExpand;
    UOPC_ASSIGN_OR_RETURN(op.axes, ParseInts(arg, name));
  } else if (name == "pad" || name == "shrink") {
    op.kind = name == "pad" ? MovementKind::kPad : MovementKind::kShrink;
    UOPC_ASSIGN_OR_RETURN(op.pairs, ParsePairs(arg, name));
  } else if (name == "flip") {
    op.kind = MovementKind::kFlip;
    UOPC_ASSIGN_OR_RETURN(op.flips, ParseBools(arg, name));
  } else if (name == "simplify") {
    if (!arg.is_null()) return absl::InvalidArgumentError("simplify: expected null as its argument");
    op.kind = MovementKind::kSimplify;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown movement op '", name, "'"));
  }
  return op;
}

absl::StatusOr<std::vector<MovementOp>> ParseMovementOps(const json& j) {
  if (!j.is_array()) return absl::InvalidArgumentError("expected a list of ops");
  std::vector<MovementOp> ops;
  for (size_t i = 0; i < j.size(); ++i) {
    absl::StatusOr<MovementOp> op = ParseMovementOp(j[i]);
    if (!op.ok()) return absl::InvalidArgumentError(absl::StrCat("op ", i, ": ", op.status().message()));
    ops.push_back(*std::move(op));
  }
  return ops;
}

json MovementOpsToJson(absl::Span<const MovementOp> ops) {
  json out = json::array();
  for (const MovementOp& op : ops) out.push_back(op.ToJson());
  return out;
}

json ViewToJson(const View& v) {
  auto sint = [](const Sint& s) -> json {
    return s.is_int() ? json(s.value()) : json(RenderInfix(s.uop().get()));
  };
  auto list = [&](const SintVec& xs) {
    json out = json::array();
    for (const Sint& x : xs) out.push_back(sint(x));
    return out;
  };
  json mask = nullptr;
  if (v.mask()) {
    mask = json::array();
    for (const auto& [lo, hi] : *v.mask()) mask.push_back({sint(lo), sint(hi)});
  }
  return json{{"shape", list(v.shape())},
              {"strides", list(v.strides())},
              {"offset", sint(v.offset())},
              {"mask", mask},
              {"contiguous", v.contiguous()}};
}

json RealStridesToJson(const std::vector<std::optional<Sint>>& strides) {
  json out = json::array();
  for (const std::optional<Sint>& s : strides) {
    if (!s) {
      out.push_back(nullptr);
    } else if (s->is_int()) {
      out.push_back(s->value());
    } else {
      out.push_back(RenderInfix(s->uop().get()));
    }
  }
  return out;
}

absl::StatusOr<ShapeTracker> ApplyMovementOp(const ShapeTracker& st, const MovementOp& op) {
  UOPC_RETURN_IF_ERROR(CheckArgRange(op));
  UOPC_RETURN_IF_ERROR(CheckResultSize(st, op));
  switch (op.kind) {
    case MovementKind::kReshape:
      return st.Reshape(ToSints(op.axes));
    case MovementKind::kPermute:
      return st.Permute(op.axes);
    case MovementKind::kExpand:
      return st.Expand(ToSints(op.axes));
    case MovementKind::kPad:
      return st.Pad(ToSintPairs(op.pairs));
    case MovementKind::kShrink:
      return st.Shrink(ToSintPairs(op.pairs));
    case MovementKind::kFlip: {
      absl::InlinedVector<bool, 6> flips(op.flips.begin(), op.flips.end());
      return st.Flip(flips);
    }
    case MovementKind::kSimplify:
      return st.Simplify();
  }
  return absl::InvalidArgumentError("unknown movement op");
}

absl::StatusOr<ShapeTracker> ApplyMovementOps(const ShapeTracker& st, absl::Span<const MovementOp> ops) {
  ShapeTracker out = st;
  for (size_t i = 0; i < ops.size(); ++i) {
    absl::StatusOr<ShapeTracker> next = ApplyMovementOp(out, ops[i]);
    if (!next.ok()) {
      return absl::Status(next.status().code(),
                          absl::StrCat("op ", i, " ", ops[i].ToString(), ": ", next.status().message()));
    }
    out = *std::move(next);
  }
  return out;
}

absl::StatusOr<int64_t> EvaluateInt(const UOpPtr& u, const VarValues& vars) {
  std::vector<const UOp*> order = u->Toposort();
  absl::flat_hash_map<const UOp*, int> slot;
  for (size_t i = 0; i < order.size(); ++i) slot[order[i]] = static_cast<int>(i);
  std::vector<ConstValue> values(order.size());
  std::vector<char> todo(order.size(), 1);
  UOPC_RETURN_IF_ERROR(EvaluateNodes(order, slot, todo, {}, VariableValues(order, vars), values));
  return AsInt(values.back());
}

absl::StatusOr<std::vector<int64_t>> IndexArray(const ShapeTracker& st, const VarValues& vars,
                                                int64_t max_positions) {
  // The shape, with symbolic dimensions at their values.
  std::vector<int64_t> shape;
  int64_t positions = 1;
  for (const Sint& d : st.shape()) {
    int64_t v;
    if (d.is_int()) {
      v = d.value();
    } else {
      UOPC_ASSIGN_OR_RETURN(v, EvaluateInt(d.uop(), vars));
    }
    if (v < 0)
      return absl::InvalidArgumentError(
          absl::StrCat("negative dimension in shape ", TupleString(st.shape())));
    shape.push_back(v);
    if (v == 0) positions = 0;
  }
  for (int64_t v : shape) {
    if (positions != 0 && (__builtin_mul_overflow(positions, v, &positions) || positions > max_positions)) {
      return absl::ResourceExhaustedError(
          absl::StrCat("shape ", TupleString(st.shape()), " has more than ", max_positions, " positions"));
    }
  }

  auto [idx, valid] = st.ToIndexedUops();
  if (!valid) valid = UOp::Const(dtypes::kBool, true);
  UOpPtr sink = UOp::Sink({idx, valid});
  std::vector<const UOp*> order = sink->Toposort();
  order.pop_back();  // the SINK
  absl::flat_hash_map<const UOp*, int> slot;
  for (size_t i = 0; i < order.size(); ++i) slot[order[i]] = static_cast<int>(i);
  absl::flat_hash_map<const UOp*, int64_t> var_values = VariableValues(order, vars);

  // Nodes that do not depend on a RANGE are evaluated once; the rest at every position.
  std::vector<char> varies(order.size(), 0);
  for (size_t i = 0; i < order.size(); ++i) {
    const UOp* u = order[i];
    if (u->op() == Ops::RANGE) {
      varies[i] = 1;
      continue;
    }
    for (const UOpPtr& s : u->src()) varies[i] |= varies[slot.at(s.get())];
  }
  std::vector<char> fixed(order.size());
  for (size_t i = 0; i < order.size(); ++i) fixed[i] = !varies[i];
  std::vector<ConstValue> values(order.size());
  std::vector<int64_t> coords(shape.size(), 0);
  UOPC_RETURN_IF_ERROR(EvaluateNodes(order, slot, fixed, coords, var_values, values));

  int idx_slot = slot.at(idx.get());
  int valid_slot = slot.at(valid.get());
  std::vector<int64_t> out;
  out.reserve(positions);
  for (int64_t p = 0; p < positions; ++p) {
    UOPC_RETURN_IF_ERROR(EvaluateNodes(order, slot, varies, coords, var_values, values));
    out.push_back(values[valid_slot].AsBool() ? AsInt(values[idx_slot]) : -1);
    for (int k = static_cast<int>(shape.size()) - 1; k >= 0; --k) {
      if (++coords[k] < shape[k]) break;
      coords[k] = 0;
    }
  }
  return out;
}

}  // namespace uopc
