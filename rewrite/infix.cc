#include "rewrite/infix.h"

#include <optional>
#include <utility>

#include "absl/container/node_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace uopc {
namespace {

// Deeper nesting than any real expression; bounds the parser's recursion.
constexpr int kMaxDepth = 1000;

struct BinarySymbol {
  absl::string_view text;
  Ops op;
};
// Longest first, so "//" wins over a would-be "/" and "<<" over "<".
constexpr BinarySymbol kBinarySymbols[] = {
    {"//", Ops::IDIV}, {"<<", Ops::SHL}, {">>", Ops::SHR}, {"!=", Ops::CMPNE}, {"+", Ops::ADD},
    {"*", Ops::MUL},   {"%", Ops::MOD},  {"<", Ops::CMPLT}, {"&", Ops::AND},   {"|", Ops::OR},
    {"^", Ops::XOR},
};

class InfixParser {
 public:
  InfixParser(absl::string_view text, const absl::flat_hash_map<std::string, UOpPtr>& vars)
      : text_(text), vars_(vars) {}

  absl::StatusOr<UOpPtr> ParseAll() {
    absl::StatusOr<UOpPtr> e = ParseExpr(0);
    if (!e.ok()) return e;
    // For hand-written input the outermost binary ops may go without parentheses, applied left to right.
    for (SkipSpace(); pos_ < text_.size();) {
      const BinarySymbol* symbol = SymbolAt();
      if (symbol == nullptr) break;
      size_t op_at = pos_;
      pos_ += symbol->text.size();
      absl::StatusOr<UOpPtr> rhs = ParseExpr(0);
      if (!rhs.ok()) return rhs;
      e = Binary(symbol->op, *e, *rhs, op_at);
      if (!e.ok()) return e;
      SkipSpace();
    }
    SkipSpace();
    if (pos_ != text_.size()) return Error("end of expression");
    return e;
  }

 private:
  absl::Status Error(absl::string_view expected) const {
    std::string got = pos_ < text_.size() ? absl::StrCat("'", text_.substr(pos_, 12), "'") : "end of input";
    return absl::InvalidArgumentError(absl::StrCat("col ", pos_ + 1, ": expected ", expected, ", got ", got));
  }
  absl::Status TypeError(size_t at, absl::string_view what) const {
    return absl::InvalidArgumentError(absl::StrCat("col ", at + 1, ": ", what));
  }

  const BinarySymbol* SymbolAt() const {
    for (const BinarySymbol& s : kBinarySymbols) {
      if (text_.substr(pos_, s.text.size()) == s.text) return &s;
    }
    return nullptr;
  }

  void SkipSpace() {
    while (pos_ < text_.size() && absl::ascii_isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Consume(absl::string_view token) {
    SkipSpace();
    if (text_.substr(pos_, token.size()) != token) return false;
    pos_ += token.size();
    return true;
  }
  absl::Status Expect(absl::string_view token) {
    if (!Consume(token)) return Error(absl::StrCat("'", token, "'"));
    return absl::OkStatus();
  }

  absl::StatusOr<UOpPtr> ParseExpr(int depth) {
    if (depth > kMaxDepth) return Error("an expression nested less deeply");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("an expression");
    char c = text_[pos_];
    if (c == '(') {
      ++pos_;
      absl::StatusOr<UOpPtr> lhs = ParseExpr(depth + 1);
      if (!lhs.ok()) return lhs;
      SkipSpace();
      size_t op_at = pos_;
      const BinarySymbol* symbol = SymbolAt();
      if (symbol == nullptr) return Error("a binary operator");
      pos_ += symbol->text.size();
      absl::StatusOr<UOpPtr> rhs = ParseExpr(depth + 1);
      if (!rhs.ok()) return rhs;
      if (absl::Status s = Expect(")"); !s.ok()) return s;
      return Binary(symbol->op, *lhs, *rhs, op_at);
    }
    if (c == '-' || absl::ascii_isdigit(static_cast<unsigned char>(c))) return ParseInt();
    if (absl::ascii_isalpha(static_cast<unsigned char>(c)) || c == '_') return ParseWordOrCall(depth);
    return Error("an expression");
  }

  absl::StatusOr<UOpPtr> ParseInt() {
    size_t start = pos_;
    if (text_[pos_] == '-') ++pos_;
    size_t digits = pos_;
    while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits) return Error("digits");
    int64_t value;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &value)) {
      return TypeError(start, "integer literal out of range");
    }
    return UOp::Const(dtypes::kInt32, value);
  }

  absl::StatusOr<UOpPtr> ParseWordOrCall(int depth) {
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (absl::ascii_isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    absl::string_view word = text_.substr(start, pos_ - start);
    if (word == "true") return UOp::Const(dtypes::kBool, true);
    if (word == "false") return UOp::Const(dtypes::kBool, false);
    static constexpr absl::string_view kCalls[] = {"max", "where", "neg", "sub", "cast_int", "cast_bool"};
    for (absl::string_view call : kCalls) {
      if (word == call) return ParseCall(word, start, depth);
    }
    auto it = vars_.find(std::string(word));
    if (it == vars_.end()) return TypeError(start, absl::StrCat("unknown variable '", word, "'"));
    return it->second;
  }

  absl::StatusOr<UOpPtr> ParseCall(absl::string_view name, size_t at, int depth) {
    if (absl::Status s = Expect("("); !s.ok()) return s;
    std::vector<UOpPtr> args;
    while (true) {
      absl::StatusOr<UOpPtr> a = ParseExpr(depth + 1);
      if (!a.ok()) return a;
      args.push_back(*std::move(a));
      if (Consume(")")) break;
      if (absl::Status s = Expect(","); !s.ok()) return Error("',' or ')'");
    }
    size_t want = name == "where" ? 3 : (name == "max" || name == "sub") ? 2 : 1;
    if (args.size() != want) {
      return TypeError(at, absl::StrCat(name, " takes ", want, " argument", want == 1 ? "" : "s", ", got ",
                                        args.size()));
    }
    if (name == "max") return Binary(Ops::MAX, args[0], args[1], at);
    if (name == "sub") return Binary(Ops::SUB, args[0], args[1], at);
    if (name == "where") {
      if (args[0]->dtype() != dtypes::kBool) return TypeError(at, "the condition of where must be bool");
      if (args[1]->dtype() != args[2]->dtype()) return TypeError(at, "the branches of where differ in type");
      return UOp::New(Ops::WHERE, args[2]->dtype(), {args[0], args[1], args[2]});
    }
    if (name == "neg") return UOp::New(Ops::NEG, args[0]->dtype(), {args[0]});
    if (name == "cast_int") return UOp::New(Ops::CAST, dtypes::kInt32, {args[0]});
    return UOp::New(Ops::CAST, dtypes::kBool, {args[0]});
  }

  absl::StatusOr<UOpPtr> Binary(Ops op, const UOpPtr& lhs, const UOpPtr& rhs, size_t at) {
    if (lhs->dtype() != rhs->dtype()) {
      return TypeError(at, absl::StrCat("operands of ", OpName(op), " differ in type: ", lhs->dtype().ToString(),
                                        " and ", rhs->dtype().ToString()));
    }
    bool is_bool = lhs->dtype() == dtypes::kBool;
    bool bool_ok = op == Ops::AND || op == Ops::OR || op == Ops::XOR || op == Ops::CMPNE || op == Ops::CMPLT ||
                   op == Ops::MAX || op == Ops::ADD || op == Ops::MUL;
    if (is_bool && !bool_ok) return TypeError(at, absl::StrCat(OpName(op), " is not defined on bool"));
    return lhs.alu(op, {rhs});
  }

  absl::string_view text_;
  const absl::flat_hash_map<std::string, UOpPtr>& vars_;
  size_t pos_ = 0;
};

absl::string_view InfixSymbol(Ops op) {
  for (const BinarySymbol& s : kBinarySymbols) {
    if (s.op == op) return s.text;
  }
  return {};
}

absl::string_view TinygradSymbol(Ops op) {
  if (op == Ops::SUB) return "-";
  return InfixSymbol(op);
}

// Renders every node of the graph after its sources, memoizing the strings.
template <typename RenderNode>
std::string RenderGraph(const UOp* root, RenderNode render_node) {
  absl::node_hash_map<const UOp*, std::string> text;  // stable addresses while the table grows
  for (const UOp* u : root->Toposort()) {
    std::vector<const std::string*> src;
    src.reserve(u->num_src());
    for (const UOpPtr& s : u->src()) src.push_back(&text[s.get()]);
    text[u] = render_node(u, src);
  }
  return std::move(text[root]);
}

std::string ConstText(const UOp* u, bool infix) {
  if (u->op() == Ops::VCONST) {
    std::string s = "(";
    const Arg::Tuple& t = u->arg().as_tuple();
    for (size_t i = 0; i < t.size(); ++i) {
      if (i) s += ", ";
      s += ConstFromArg(t[i], u->dtype().scalar()).ToString();
    }
    return s + ")";
  }
  ConstValue v = u->const_value();
  if (infix && v.is_bool()) return v.b() ? "true" : "false";
  return v.ToString();
}

// Variables, ranges and constants, spelled the same in both syntaxes except for bool constants.
std::optional<std::string> LeafText(const UOp* u, bool infix) {
  switch (u->op()) {
    case Ops::DEFINE_VAR:
    case Ops::SPECIAL:
      return u->arg()[0].is_string() ? u->arg()[0].as_string() : "<var>";
    case Ops::RANGE:
      return absl::StrCat("ridx", u->arg().ToString());
    case Ops::CONST:
    case Ops::VCONST:
      return ConstText(u, infix);
    default:
      return std::nullopt;
  }
}

}  // namespace

absl::StatusOr<UOpPtr> ParseInfix(absl::string_view text, const absl::flat_hash_map<std::string, UOpPtr>& vars) {
  return InfixParser(text, vars).ParseAll();
}

absl::StatusOr<UOpPtr> ParseInfix(absl::string_view text, const std::vector<InfixVar>& vars) {
  absl::flat_hash_map<std::string, UOpPtr> table;
  for (const InfixVar& v : vars) {
    if (v.min > v.max) {
      return absl::InvalidArgumentError(absl::StrCat("variable '", v.name, "' has an empty range [", v.min, ", ",
                                                     v.max, "]"));
    }
    table[v.name] = UOp::Variable(v.name, v.min, v.max);
  }
  return ParseInfix(text, table);
}

std::string RenderInfix(const UOp* root) {
  return RenderGraph(root, [](const UOp* u, const std::vector<const std::string*>& s) -> std::string {
    if (std::optional<std::string> leaf = LeafText(u, /*infix=*/true)) return *std::move(leaf);
    switch (u->op()) {
      case Ops::MAX:
        return absl::StrCat("max(", *s[0], ", ", *s[1], ")");
      case Ops::WHERE:
        return absl::StrCat("where(", *s[0], ", ", *s[1], ", ", *s[2], ")");
      case Ops::NEG:
        return absl::StrCat("neg(", *s[0], ")");
      case Ops::SUB:
        return absl::StrCat("sub(", *s[0], ", ", *s[1], ")");
      case Ops::CAST:
        if (u->dtype() == dtypes::kBool) return absl::StrCat("cast_bool(", *s[0], ")");
        if (u->dtype() == dtypes::kInt32) return absl::StrCat("cast_int(", *s[0], ")");
        break;
      case Ops::BIND:
        return *s[0];
      default:
        if (absl::string_view sym = InfixSymbol(u->op()); !sym.empty() && s.size() == 2) {
          return absl::StrCat("(", *s[0], " ", sym, " ", *s[1], ")");
        }
    }
    return absl::StrCat("<", OpName(u->op()), ">");
  });
}

std::string RenderTinygrad(const UOp* root) {
  return RenderGraph(root, [](const UOp* u, const std::vector<const std::string*>& s) -> std::string {
    if (std::optional<std::string> leaf = LeafText(u, /*infix=*/false)) return *std::move(leaf);
    switch (u->op()) {
      case Ops::CAST:
        return absl::StrCat("(", u->dtype().ToString().substr(7), ")(", *s[0], ")");
      case Ops::LOAD:
        return "load";
      case Ops::BIND:
        return *s[0];
      case Ops::NEG:
        return absl::StrCat("(-", *s[0], ")");
      case Ops::MAX:
        return absl::StrCat("max(", *s[0], ", ", *s[1], ")");
      case Ops::MULACC:
        return absl::StrCat("(", *s[0], "*", *s[1], "+", *s[2], ")");
      case Ops::WHERE:
        return absl::StrCat("(", *s[1], " if ", *s[0], " else ", *s[2], ")");
      default:
        if (absl::string_view sym = TinygradSymbol(u->op()); !sym.empty() && s.size() == 2) {
          return absl::StrCat("(", *s[0], sym, *s[1], ")");
        }
    }
    return absl::StrCat("<", OpName(u->op()), ">");
  });
}

}  // namespace uopc
