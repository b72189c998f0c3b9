#include "rewrite/infix.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "uop/status_macros.h"

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
    {"//", Ops::IDIV}, {"<<", Ops::SHL}, {">>", Ops::SHR}, {"!=", Ops::CMPNE},
    {"+", Ops::ADD},   {"*", Ops::MUL},  {"%", Ops::MOD},  {"<", Ops::CMPLT},
    {"&", Ops::AND},   {"|", Ops::OR},   {"^", Ops::XOR},
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
      UOPC_ASSIGN_OR_RETURN(UOpPtr rhs, ParseExpr(0));
      e = Binary(symbol->op, *e, rhs, op_at);
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
      UOPC_ASSIGN_OR_RETURN(UOpPtr lhs, ParseExpr(depth + 1));
      SkipSpace();
      size_t op_at = pos_;
      const BinarySymbol* symbol = SymbolAt();
      if (symbol == nullptr) return Error("a binary operator");
      pos_ += symbol->text.size();
      UOPC_ASSIGN_OR_RETURN(UOpPtr rhs, ParseExpr(depth + 1));
      UOPC_RETURN_IF_ERROR(Expect(")"));
      return Binary(symbol->op, lhs, rhs, op_at);
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
    UOPC_RETURN_IF_ERROR(Expect("("));
    std::vector<UOpPtr> args;
    while (true) {
      UOPC_ASSIGN_OR_RETURN(UOpPtr a, ParseExpr(depth + 1));
      args.push_back(std::move(a));
      if (Consume(")")) break;
      if (absl::Status s = Expect(","); !s.ok()) return Error("',' or ')'");
    }
    size_t want = name == "where" ? 3 : (name == "max" || name == "sub") ? 2 : 1;
    if (args.size() != want) {
      return TypeError(
          at, absl::StrCat(name, " takes ", want, " argument", want == 1 ? "" : "s", ", got ", args.size()));
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
      return TypeError(at, absl::StrCat("operands of ", OpName(op), " differ in type: ",
                                        lhs->dtype().ToString(), " and ", rhs->dtype().ToString()));
    }
    bool is_bool = lhs->dtype() == dtypes::kBool;
    bool bool_ok = op == Ops::AND || op == Ops::OR || op == Ops::XOR || op == Ops::CMPNE ||
                   op == Ops::CMPLT || op == Ops::MAX || op == Ops::ADD || op == Ops::MUL;
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

// A node's text as pieces: literal text, and the texts of sources in between.
struct Piece {
  std::string literal;
  const UOp* source = nullptr;  // when set, this source's text stands here
};
using Pieces = absl::InlinedVector<Piece, 5>;

// Writes the text of `root`, expanding each node's pieces as they come (a node reached twice is written
// twice, as tinygrad's render does). Keeping one string per node instead would copy every source's text into
// its user's, quadratic in the depth of the expression; this is linear in the length of the text and keeps
// its own stack.
template <typename PiecesOf>
std::string RenderExpression(const UOp* root, PiecesOf pieces_of) {
  std::string out;
  std::vector<Piece> pending;  // what is still to write, the next piece last
  auto expand = [&](const UOp* u) {
    Pieces pieces = pieces_of(u);
    for (auto it = pieces.rbegin(); it != pieces.rend(); ++it) pending.push_back(std::move(*it));
  };
  expand(root);
  while (!pending.empty()) {
    Piece piece = std::move(pending.back());
    pending.pop_back();
    if (piece.source != nullptr) {
      expand(piece.source);
    } else {
      out += piece.literal;
    }
  }
  return out;
}

// `text` with the sources of `u` at its `$0`, `$1`, `$2` (no other `$` occurs in these templates).
Pieces Template(absl::string_view text, const UOp* u) {
  Pieces pieces;
  size_t start = 0;
  for (size_t i = 0; i + 1 < text.size(); ++i) {
    if (text[i] != '$') continue;
    pieces.push_back({std::string(text.substr(start, i - start))});
    const size_t index = text[i + 1] - '0';
    // A node missing a source its op has (built by hand) still prints.
    pieces.push_back(index < u->num_src() ? Piece{"", u->src(index)} : Piece{"<missing>"});
    start = i + 2;
    ++i;
  }
  pieces.push_back({std::string(text.substr(start))});
  return pieces;
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

absl::StatusOr<UOpPtr> ParseInfix(absl::string_view text,
                                  const absl::flat_hash_map<std::string, UOpPtr>& vars) {
  return InfixParser(text, vars).ParseAll();
}

absl::StatusOr<UOpPtr> ParseInfix(absl::string_view text, const std::vector<InfixVar>& vars) {
  absl::flat_hash_map<std::string, UOpPtr> table;
  for (const InfixVar& v : vars) {
    if (v.min > v.max) {
      return absl::InvalidArgumentError(
          absl::StrCat("variable '", v.name, "' has an empty range [", v.min, ", ", v.max, "]"));
    }
    table[v.name] = UOp::Variable(v.name, v.min, v.max);
  }
  return ParseInfix(text, table);
}

std::string RenderInfix(const UOp* root) {
  return RenderExpression(root, [](const UOp* u) -> Pieces {
    if (std::optional<std::string> leaf = LeafText(u, /*infix=*/true)) return {{*std::move(leaf)}};
    switch (u->op()) {
      case Ops::MAX:
        return Template("max($0, $1)", u);
      case Ops::WHERE:
        return Template("where($0, $1, $2)", u);
      case Ops::NEG:
        return Template("neg($0)", u);
      case Ops::SUB:
        return Template("sub($0, $1)", u);
      case Ops::CAST:
        if (u->dtype() == dtypes::kBool) return Template("cast_bool($0)", u);
        if (u->dtype() == dtypes::kInt32) return Template("cast_int($0)", u);
        break;
      case Ops::BIND:
        return Template("$0", u);
      default:
        if (absl::string_view sym = InfixSymbol(u->op()); !sym.empty() && u->num_src() == 2) {
          return {{"("}, {"", u->src(0)}, {absl::StrCat(" ", sym, " ")}, {"", u->src(1)}, {")"}};
        }
    }
    return {{absl::StrCat("<", OpName(u->op()), ">")}};
  });
}

std::string RenderTinygrad(const UOp* root) {
  return RenderExpression(root, [](const UOp* u) -> Pieces {
    if (std::optional<std::string> leaf = LeafText(u, /*infix=*/false)) return {{*std::move(leaf)}};
    switch (u->op()) {
      case Ops::CAST:
        return Template(absl::StrCat("(", absl::StripPrefix(u->dtype().ToString(), "dtypes."), ")($0)"), u);
      case Ops::LOAD:
        return {{"load"}};
      case Ops::BIND:
        return Template("$0", u);
      case Ops::NEG:
        return Template("(-$0)", u);
      case Ops::MAX:
        return Template("max($0, $1)", u);
      case Ops::MULACC:
        return Template("($0*$1+$2)", u);
      case Ops::WHERE:
        return Template("($1 if $0 else $2)", u);
      default:
        if (absl::string_view sym = TinygradSymbol(u->op()); !sym.empty() && u->num_src() == 2) {
          return {{"("}, {"", u->src(0)}, {std::string(sym)}, {"", u->src(1)}, {")"}};
        }
    }
    return {{absl::StrCat("<", OpName(u->op()), ">")}};
  });
}

}  // namespace uopc
