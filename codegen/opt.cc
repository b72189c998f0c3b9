#include "codegen/opt.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

constexpr std::pair<OptOps, absl::string_view> kNames[] = {{OptOps::kTC, "TC"},
                                                           {OptOps::kUpcast, "UPCAST"},
                                                           {OptOps::kUnroll, "UNROLL"},
                                                           {OptOps::kLocal, "LOCAL"},
                                                           {OptOps::kGroup, "GROUP"},
                                                           {OptOps::kGroupTop, "GROUPTOP"},
                                                           {OptOps::kNoLocals, "NOLOCALS"},
                                                           {OptOps::kPadTo, "PADTO"},
                                                           {OptOps::kSwap, "SWAP"},
                                                           {OptOps::kVector, "VECTOR"}};

std::string ArgString(const Opt& opt, bool compact) {
  if (std::holds_alternative<std::monostate>(opt.arg)) return compact ? "" : "None";
  if (opt.has_int_arg()) return absl::StrCat(opt.int_arg());
  const Opt::TcArg& tc = std::get<Opt::TcArg>(opt.arg);
  return compact ? absl::StrJoin(tc, ",") : TupleString(tc);
}

absl::StatusOr<int64_t> ParseInt(absl::string_view s, absl::string_view what, absl::string_view text) {
  int64_t v;
  if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(s), &v)) {
    return absl::InvalidArgumentError(absl::StrCat("bad ", what, " '", s, "' in opt '", text, "'"));
  }
  return v;
}

// "None" -> monostate, "4" -> int, "(a, b, c)" or "a,b,c" -> TC triple.
absl::StatusOr<std::variant<std::monostate, int64_t, Opt::TcArg>> ParseArg(absl::string_view s,
                                                                           absl::string_view text) {
  s = absl::StripAsciiWhitespace(s);
  if (s.empty() || s == "None") return std::monostate{};
  if (absl::ConsumePrefix(&s, "(") && !absl::ConsumeSuffix(&s, ")")) {
    return absl::InvalidArgumentError(absl::StrCat("unbalanced parentheses in opt '", text, "'"));
  }
  std::vector<absl::string_view> parts = absl::StrSplit(s, ',');
  if (parts.size() == 1) {
    UOPC_ASSIGN_OR_RETURN(int64_t v, ParseInt(parts[0], "arg", text));
    return v;
  }
  if (parts.size() != 3) {
    return absl::InvalidArgumentError(absl::StrCat("a tuple arg must have 3 ints in opt '", text, "'"));
  }
  Opt::TcArg tc;
  for (int i = 0; i < 3; ++i) {
    UOPC_ASSIGN_OR_RETURN(tc[i], ParseInt(parts[i], "arg", text));
  }
  return tc;
}

absl::StatusOr<Opt> Build(absl::string_view op_name, absl::string_view axis, absl::string_view arg,
                          absl::string_view text) {
  std::optional<OptOps> op = OptOpsFromName(absl::StripAsciiWhitespace(op_name));
  if (!op) return absl::InvalidArgumentError(absl::StrCat("unknown OptOps '", op_name, "' in '", text, "'"));
  Opt opt;
  opt.op = *op;
  axis = absl::StripAsciiWhitespace(axis);
  if (!axis.empty() && axis != "None") {
    UOPC_ASSIGN_OR_RETURN(opt.axis, ParseInt(axis, "axis", text));
  }
  UOPC_ASSIGN_OR_RETURN(opt.arg, ParseArg(arg, text));
  return opt;
}

}  // namespace

absl::string_view OptOpsName(OptOps op) {
  for (const auto& [o, name] : kNames) {
    if (o == op) return name;
  }
  return "?";
}

std::optional<OptOps> OptOpsFromName(absl::string_view name) {
  absl::ConsumePrefix(&name, "OptOps.");
  for (const auto& [o, n] : kNames) {
    if (n == name) return o;
  }
  return std::nullopt;
}

std::string Opt::ToString() const {
  return absl::StrCat("Opt(op=OptOps.", OptOpsName(op), ", axis=", axis ? absl::StrCat(*axis) : "None",
                      ", arg=", ArgString(*this, false), ")");
}

std::string Opt::ToCompactString() const {
  std::string s(OptOpsName(op));
  std::string a = ArgString(*this, true);
  if (axis || !a.empty()) absl::StrAppend(&s, ":", axis ? absl::StrCat(*axis) : "");
  if (!a.empty()) absl::StrAppend(&s, ":", a);
  return s;
}

absl::StatusOr<Opt> ParseOpt(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  if (absl::ConsumePrefix(&s, "Opt(")) {
    if (!absl::ConsumeSuffix(&s, ")")) {
      return absl::InvalidArgumentError(absl::StrCat("missing ')' in opt '", text, "'"));
    }
    // op=..., axis=..., arg=... (the arg may be a tuple holding commas, so split on the keywords).
    size_t op_at = s.find("op="), axis_at = s.find(", axis="), arg_at = s.find(", arg=");
    if (op_at != 0 || axis_at == absl::string_view::npos || arg_at == absl::string_view::npos ||
        arg_at < axis_at) {
      return absl::InvalidArgumentError(
          absl::StrCat("expected Opt(op=OptOps.X, axis=A, arg=B), got '", text, "'"));
    }
    absl::string_view op_name = s.substr(3, axis_at - 3);
    if (!absl::StartsWith(op_name, "OptOps.")) {
      return absl::InvalidArgumentError(absl::StrCat("expected OptOps.X in '", text, "'"));
    }
    return Build(op_name, s.substr(axis_at + 7, arg_at - axis_at - 7), s.substr(arg_at + 6), text);
  }
  std::vector<absl::string_view> parts = absl::StrSplit(s, absl::MaxSplits(':', 2));
  return Build(parts[0], parts.size() > 1 ? parts[1] : "", parts.size() > 2 ? parts[2] : "", text);
}

absl::StatusOr<std::vector<Opt>> ParseOptList(absl::string_view text) {
  absl::string_view s = absl::StripAsciiWhitespace(text);
  std::vector<Opt> out;
  if (absl::ConsumePrefix(&s, "[")) {
    if (!absl::ConsumeSuffix(&s, "]")) {
      return absl::InvalidArgumentError(absl::StrCat("missing ']' in '", text, "'"));
    }
    // Split after each top-level "Opt(...)".
    while (!(s = absl::StripAsciiWhitespace(s)).empty()) {
      int depth = 0;
      size_t end = 0;
      for (; end < s.size(); ++end) {
        if (s[end] == '(') ++depth;
        if (s[end] == ')' && --depth == 0) break;
      }
      if (end == s.size())
        return absl::InvalidArgumentError(absl::StrCat("unbalanced opt list '", text, "'"));
      UOPC_ASSIGN_OR_RETURN(Opt opt, ParseOpt(s.substr(0, end + 1)));
      out.push_back(opt);
      s.remove_prefix(end + 1);
      s = absl::StripAsciiWhitespace(s);
      absl::ConsumePrefix(&s, ",");
    }
    return out;
  }
  for (absl::string_view part : absl::StrSplit(s, absl::ByAnyChar(" ;\t\n"), absl::SkipEmpty())) {
    UOPC_ASSIGN_OR_RETURN(Opt opt, ParseOpt(part));
    out.push_back(opt);
  }
  return out;
}

std::string OptListToString(const std::vector<Opt>& opts) {
  return absl::StrCat(
      "[", absl::StrJoin(opts, ", ", [](std::string* o, const Opt& x) { o->append(x.ToString()); }), "]");
}

std::string OptListToCompactString(absl::Span<const Opt> opts) {
  return absl::StrJoin(opts, " ", [](std::string* o, const Opt& x) { o->append(x.ToCompactString()); });
}

}  // namespace uopc
