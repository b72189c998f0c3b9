#include "uop/text_ir.h"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "uop/arg.h"
#include "uop/check.h"
#include "uop/ops.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// Tuples nest at most this deep; the parser recurses once per level, so this bounds its stack.
constexpr int kMaxTupleDepth = 100;
// The NaN that `nan` stands for (what std::numeric_limits<double>::quiet_NaN() is on every target we build
// for); every other NaN is written with its bits, nan(0x...).
constexpr uint64_t kCanonicalNanBits = 0x7ff8000000000000ull;

// Scalar names in ScalarType order: explicit widths, unlike tinygrad's `int` and `half`.
constexpr absl::string_view kIrScalarNames[kNumScalarTypes] = {
    "void",   "bool",  "int8",   "uint8",   "int16",    "uint16",  "int32",
    "uint32", "int64", "uint64", "float16", "bfloat16", "float32", "float64",
};

absl::string_view IrScalarName(ScalarType s) { return kIrScalarNames[static_cast<int>(s)]; }

// CONST and VCONST args of uint64 nodes hold values >= 2^63 as negative bit patterns (see ConstFromArg); the
// text shows the unsigned value instead.
bool ArgIntsAreUnsigned(Ops op, DType dtype) {
  return (op == Ops::CONST || op == Ops::VCONST) && dtype.scalar_type() == ScalarType::kUInt64;
}

// -----------------------------------------------------------------------------------------------------------
// Printer.

// Appends without the zero-fill that StrAppend's resize does; the printer is mostly value numbers.
void AppendInt(std::string* out, int64_t v) {
  char buf[24];
  auto res = std::to_chars(buf, buf + sizeof(buf), v);
  out->append(buf, res.ptr - buf);
}

void AppendName(std::string* out, absl::string_view name) { out->append(name.data(), name.size()); }

void AppendDType(std::string* out, DType dt) {
  AppendName(out, IrScalarName(dt.scalar_type()));
  if (dt.count() > 1) absl::StrAppend(out, ".vec(", dt.count(), ")");
  if (dt.is_ptr()) {
    absl::StrAppend(out, ".ptr(", dt.ptr_size(), dt.is_local() ? ", local=True)" : ")");
    if (dt.vcount() != 1) absl::StrAppend(out, ".vec(", dt.vcount(), ")");
  }
}

void AppendFloat(std::string* out, double f) {
  uint64_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  if (f != f) {
    if (bits == kCanonicalNanBits) {
      out->append("nan");
    } else {
      char hex[17];
      auto res = std::to_chars(hex, hex + sizeof(hex), bits, 16);
      absl::StrAppend(out, "nan(0x", absl::string_view(hex, res.ptr - hex), ")");
    }
    return;
  }
  out->append(PythonFloatRepr(f));
}

// Python's repr() of a str, byte by byte: printable ASCII as is, the rest escaped.
void AppendString(std::string* out, const std::string& s) {
  char quote = (s.find('\'') != std::string::npos && s.find('"') == std::string::npos) ? '"' : '\'';
  out->push_back(quote);
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out->append("\\\\");
        break;
      case '\n':
        out->append("\\n");
        break;
      case '\r':
        out->append("\\r");
        break;
      case '\t':
        out->append("\\t");
        break;
      default:
        if (c == quote) {
          out->push_back('\\');
          out->push_back(static_cast<char>(c));
        } else if (c < 0x20 || c >= 0x7f) {
          static constexpr char kHex[] = "0123456789abcdef";
          out->append("\\x");
          out->push_back(kHex[c >> 4]);
          out->push_back(kHex[c & 15]);
        } else {
          out->push_back(static_cast<char>(c));
        }
    }
  }
  out->push_back(quote);
}

void AppendArg(std::string* out, const Arg& arg, bool unsigned_ints) {
  switch (arg.kind()) {
    case Arg::Kind::kNone:
      out->append("None");
      return;
    case Arg::Kind::kInt:
      if (unsigned_ints && arg.as_int() < 0) {
        absl::StrAppend(out, static_cast<uint64_t>(arg.as_int()));
      } else {
        AppendInt(out, arg.as_int());
      }
      return;
    case Arg::Kind::kFloat:
      AppendFloat(out, arg.as_float());
      return;
    case Arg::Kind::kBool:
      out->append(arg.as_bool() ? "True" : "False");
      return;
    case Arg::Kind::kString:
      AppendString(out, arg.as_string());
      return;
    case Arg::Kind::kTuple: {
      const Arg::Tuple& t = arg.as_tuple();
      out->push_back('(');
      for (size_t i = 0; i < t.size(); ++i) {
        if (i) out->append(", ");
        AppendArg(out, t[i], unsigned_ints);
      }
      if (t.size() == 1) out->push_back(',');
      out->push_back(')');
      return;
    }
    case Arg::Kind::kDType:
      out->append("dtypes.");
      AppendDType(out, arg.as_dtype());
      return;
    case Arg::Kind::kOp:
      absl::StrAppend(out, "Ops.", OpName(arg.as_op()));
      return;
    case Arg::Kind::kPayload:
      out->append(arg.as_payload().ToString());
      return;
  }
}

class Printer {
 public:
  // Prints the nodes under `root` not printed yet, then `return %root`.
  void PrintGraph(const UOp* root) {
    auto it = ids_.find(root);
    int64_t id;
    if (it != ids_.end()) {
      id = it->second;
    } else {
      Visit(root);
      id = src_ids_.back();
    }
    absl::StrAppend(&out_, "return %", id, "\n");
  }
  std::string Finish() && { return std::move(out_); }

 private:
  // Post-order DFS with an explicit stack; a node is printed (and numbered) once all its sources are. A UOp
  // graph is acyclic, so a node is never pushed while it is already on the stack. The ids of the sources of
  // the nodes on the stack collect in `src_ids_`, so each edge costs one hash lookup.
  void Visit(const UOp* root) {
    struct Frame {
      const UOp* node;
      size_t next_src;
    };
    std::vector<Frame> stack = {{root, 0}};
    src_ids_.clear();
    while (!stack.empty()) {
      Frame& top = stack.back();
      if (top.next_src < top.node->num_src()) {
        const UOp* s = top.node->src(top.next_src++);
        auto it = ids_.find(s);
        if (it != ids_.end()) {
          src_ids_.push_back(it->second);
        } else {
          stack.push_back({s, 0});
        }
        continue;
      }
      int64_t id = PrintNode(top.node);
      stack.pop_back();
      src_ids_.push_back(id);  // a source of the new top, or the root itself
    }
  }

  // Prints the node whose source ids are the last num_src() entries of src_ids_, and pops them.
  int64_t PrintNode(const UOp* u) {
    int64_t id = static_cast<int64_t>(ids_.size());
    ids_.emplace(u, id);
    out_.push_back('%');
    AppendInt(&out_, id);
    out_.append(" = ");
    AppendName(&out_, OpName(u->op()));
    out_.append(" : ");
    AppendDType(&out_, u->dtype());
    if (u->num_src() > 0) {
      size_t first = src_ids_.size() - u->num_src();
      out_.append(" (%");
      for (size_t i = first; i < src_ids_.size(); ++i) {
        if (i > first) out_.append(", %");
        AppendInt(&out_, src_ids_[i]);
      }
      out_.push_back(')');
      src_ids_.resize(first);
    }
    if (!u->arg().is_none()) {
      out_.append(" arg=");
      AppendArg(&out_, u->arg(), ArgIntsAreUnsigned(u->op(), u->dtype()));
    }
    if (!u->tag().is_none()) {
      out_.append(" tag=");
      AppendArg(&out_, u->tag(), false);
    }
    out_.push_back('\n');
    return id;
  }

  absl::flat_hash_map<const UOp*, int64_t> ids_;
  std::vector<int64_t> src_ids_;
  std::string out_;
};

// -----------------------------------------------------------------------------------------------------------
// Parser.

bool IsIdentStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsIdentChar(char c) { return IsIdentStart(c) || IsDigit(c); }

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<std::vector<UOpPtr>> ParseFile() {
    while (true) {
      SkipSpace(/*newlines=*/true);
      if (AtEnd()) break;
      if (Peek() == '%') {
        UOPC_RETURN_IF_ERROR(ParseDefinition());
      } else if (PeekIdent() == "return") {
        UOPC_RETURN_IF_ERROR(ParseReturn());
      } else {
        return Expected(pos_, "'%name = ...' or 'return'");
      }
      SkipSpace(/*newlines=*/false);
      if (!AtEnd() && Peek() != '\n') return Expected(pos_, "end of line");
    }
    if (saw_return_) return std::move(roots_);
    std::vector<UOpPtr> roots;
    if (last_) roots.push_back(std::move(last_));
    return roots;
  }

 private:
  struct Definition {
    UOpPtr node;
    size_t pos;  // where the name was defined, for redefinition errors
  };

  // ---- characters, whitespace, errors ----

  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek(size_t ahead = 0) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  bool Consume(char c) {
    if (AtEnd() || text_[pos_] != c) return false;
    ++pos_;
    return true;
  }

  // Skips blanks and comments (`#` or `//` to the end of the line), and newlines too where asked: statements
  // end at a newline, but inside parentheses a list may continue on the next line.
  void SkipSpace(bool newlines) {
    while (!AtEnd()) {
      char c = text_[pos_];
      if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        ++pos_;
      } else if (c == '#' || (c == '/' && Peek(1) == '/')) {
        size_t eol = text_.find('\n', pos_);
        pos_ = eol == absl::string_view::npos ? text_.size() : eol;
      } else {
        break;
      }
    }
  }

  absl::string_view PeekIdent() const {
    if (AtEnd() || !IsIdentStart(text_[pos_])) return {};
    size_t end = pos_ + 1;
    while (end < text_.size() && IsIdentChar(text_[end])) ++end;
    return text_.substr(pos_, end - pos_);
  }
  absl::string_view ParseIdent() {
    absl::string_view id = PeekIdent();
    pos_ += id.size();
    return id;
  }

  // A short description of what is at `pos`, for "got ..." in messages.
  std::string Describe(size_t pos) const {
    if (pos >= text_.size()) return "end of input";
    char c = text_[pos];
    if (c == '\n') return "end of line";
    if (IsIdentChar(c) || c == '%') {
      size_t end = pos + 1;
      while (end < text_.size() && end - pos < 40 && IsIdentChar(text_[end])) ++end;
      return absl::StrCat("'", text_.substr(pos, end - pos), "'");
    }
    unsigned char u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) {
      static constexpr char kHex[] = "0123456789abcdef";
      return absl::StrCat("byte 0x", std::string(1, kHex[u >> 4]), std::string(1, kHex[u & 15]));
    }
    return absl::StrCat("'", std::string(1, c), "'");
  }

  std::string Location(size_t pos) const {
    pos = std::min(pos, text_.size());
    size_t line = 1, line_start = 0;
    for (size_t i = 0; i < pos; ++i) {
      if (text_[i] == '\n') {
        ++line;
        line_start = i + 1;
      }
    }
    return absl::StrCat(line, ":", pos - line_start + 1);
  }

  absl::Status Error(size_t pos, absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(Location(pos), ": ", message));
  }
  absl::Status Expected(size_t pos, absl::string_view what) const {
    return Error(pos, absl::StrCat("expected ", what, ", got ", Describe(pos)));
  }
  absl::Status Expect(char c) {
    if (Consume(c)) return absl::OkStatus();
    return Expected(pos_, absl::StrCat("'", std::string(1, c), "'"));
  }

  // ---- statements ----

  // `%name`: returns the name without the '%'.
  absl::StatusOr<absl::string_view> ParseValueName() {
    if (!Consume('%')) return Expected(pos_, "a value name like %0");
    size_t start = pos_;
    while (!AtEnd() && IsIdentChar(text_[pos_])) ++pos_;
    if (pos_ == start) return Expected(pos_, "a value name after '%'");
    return text_.substr(start, pos_ - start);
  }

  // The index of a name that is a canonical decimal number ("0", "17"; not "007"), else nullopt.
  static std::optional<size_t> NumericName(absl::string_view name) {
    if (name.size() > 18 || (name.size() > 1 && name[0] == '0')) return std::nullopt;
    size_t n = 0;
    for (char c : name) {
      if (!IsDigit(c)) return std::nullopt;
      n = n * 10 + static_cast<size_t>(c - '0');
    }
    return n;
  }

  const Definition* Lookup(absl::string_view name) const {
    if (std::optional<size_t> n = NumericName(name); n && *n < numbered_.size()) return &numbered_[*n];
    auto it = named_.find(name);
    return it == named_.end() ? nullptr : &it->second;
  }

  // Names %0, %1, ... defined in order (what the printer writes) live in a vector; any other name in a map.
  absl::Status Define(absl::string_view name, size_t pos, UOpPtr node) {
    if (const Definition* d = Lookup(name)) {
      return Error(pos,
                   absl::StrCat("redefinition of %", name, " (first defined at ", Location(d->pos), ")"));
    }
    if (std::optional<size_t> n = NumericName(name); n && *n == numbered_.size()) {
      numbered_.push_back({std::move(node), pos});
    } else {
      named_.emplace(std::string(name), Definition{std::move(node), pos});
    }
    return absl::OkStatus();
  }

  absl::StatusOr<UOpPtr> ParseValueRef() {
    size_t start = pos_;
    UOPC_ASSIGN_OR_RETURN(absl::string_view name, ParseValueName());
    const Definition* d = Lookup(name);
    if (d == nullptr) return Error(start, absl::StrCat("undefined value %", name));
    return d->node;
  }

  // %name = OP : dtype [(src, ...)] [arg=ARG] [tag=ARG]
  absl::Status ParseDefinition() {
    size_t name_pos = pos_;
    UOPC_ASSIGN_OR_RETURN(absl::string_view name, ParseValueName());
    SkipSpace(false);
    UOPC_RETURN_IF_ERROR(Expect('='));
    SkipSpace(false);
    size_t op_pos = pos_;
    absl::string_view op_name = ParseIdent();
    if (op_name.empty()) return Expected(op_pos, "an op name");
    std::optional<Ops> op = OpFromName(op_name);
    if (!op) return Error(op_pos, absl::StrCat("unknown op '", op_name, "'"));
    SkipSpace(false);
    UOPC_RETURN_IF_ERROR(Expect(':'));
    SkipSpace(false);
    UOPC_ASSIGN_OR_RETURN(DType dtype, ParseDType());
    SkipSpace(false);

    absl::InlinedVector<UOpPtr, 4> src;
    if (Consume('(')) {
      SkipSpace(true);
      if (!Consume(')')) {
        while (true) {
          UOPC_ASSIGN_OR_RETURN(UOpPtr s, ParseValueRef());
          src.push_back(std::move(s));
          SkipSpace(true);
          if (Consume(')')) break;
          if (!Consume(',')) return Expected(pos_, "',' or ')'");
          SkipSpace(true);
        }
      }
      SkipSpace(false);
    }

    Arg arg, tag;
    UOPC_RETURN_IF_ERROR(ParseOptionalField("arg", ArgIntsAreUnsigned(*op, dtype), &arg));
    UOPC_RETURN_IF_ERROR(ParseOptionalField("tag", false, &tag));

    if (*op == Ops::UNIQUE && arg.is_int()) internal::ReserveUniqueNumbers(arg.as_int() + 1);
    last_ = UOp::New(*op, dtype, absl::MakeConstSpan(src), std::move(arg), std::move(tag));
    return Define(name, name_pos, last_);
  }

  // `key=ARG` if the next word is `key`.
  absl::Status ParseOptionalField(absl::string_view key, bool unsigned_ints, Arg* out) {
    if (PeekIdent() != key) return absl::OkStatus();
    pos_ += key.size();
    SkipSpace(false);
    UOPC_RETURN_IF_ERROR(Expect('='));
    SkipSpace(false);
    UOPC_ASSIGN_OR_RETURN(*out, ParseArg(unsigned_ints, 0));
    SkipSpace(false);
    return absl::OkStatus();
  }

  // return %a[, %b ...]
  absl::Status ParseReturn() {
    pos_ += absl::string_view("return").size();
    saw_return_ = true;
    SkipSpace(false);
    while (true) {
      UOPC_ASSIGN_OR_RETURN(UOpPtr v, ParseValueRef());
      roots_.push_back(std::move(v));
      SkipSpace(false);
      if (!Consume(',')) return absl::OkStatus();
      SkipSpace(false);
    }
  }

  // ---- dtypes: name[.vec(n)][.ptr(size[, local=True])[.vec(n)]] ----

  absl::StatusOr<DType> ParseDType() {
    size_t start = pos_;
    absl::string_view name = ParseIdent();
    if (name.empty()) return Expected(start, "a dtype");
    std::optional<DType> dt = DType::FromName(name);
    if (!dt) return Error(start, absl::StrCat("unknown dtype '", name, "'"));
    while (Peek() == '.') {
      size_t suffix_pos = pos_;
      ++pos_;
      absl::string_view suffix = ParseIdent();
      if (suffix == "vec") {
        UOPC_ASSIGN_OR_RETURN(int64_t n, ParseParenthesizedInt());
        std::optional<DType> v;
        if (n >= 1 && n <= std::numeric_limits<int>::max()) v = dt->vec(static_cast<int>(n));
        if (!v) return Error(suffix_pos, absl::StrCat("invalid vector width ", n, " for ", DTypeToIr(*dt)));
        dt = v;
      } else if (suffix == "ptr") {
        UOPC_ASSIGN_OR_RETURN(dt, ParsePtrSuffix(*dt, suffix_pos));
      } else {
        return Expected(suffix_pos + 1, "'vec' or 'ptr'");
      }
    }
    return *dt;
  }

  absl::StatusOr<int64_t> ParseParenthesizedInt() {
    UOPC_RETURN_IF_ERROR(Expect('('));
    SkipSpace(false);
    UOPC_ASSIGN_OR_RETURN(int64_t n, ParseInt());
    SkipSpace(false);
    UOPC_RETURN_IF_ERROR(Expect(')'));
    return n;
  }

  // ptr([size][, local=True|False]); the size defaults to -1 (unlimited).
  absl::StatusOr<DType> ParsePtrSuffix(DType base, size_t suffix_pos) {
    UOPC_RETURN_IF_ERROR(Expect('('));
    SkipSpace(false);
    int64_t size = -1;
    bool local = false;
    if (Peek() != ')') {
      UOPC_ASSIGN_OR_RETURN(size, ParseInt());
      SkipSpace(false);
      if (Consume(',')) {
        SkipSpace(false);
        size_t key_pos = pos_;
        if (ParseIdent() != "local") return Expected(key_pos, "'local='");
        SkipSpace(false);
        UOPC_RETURN_IF_ERROR(Expect('='));
        SkipSpace(false);
        size_t value_pos = pos_;
        absl::string_view value = ParseIdent();
        if (value != "True" && value != "False") return Expected(value_pos, "True or False");
        local = value == "True";
        SkipSpace(false);
      }
    }
    UOPC_RETURN_IF_ERROR(Expect(')'));
    std::optional<DType> p = base.ptr(size, local);
    if (!p) {
      return Error(suffix_pos, absl::StrCat("invalid pointer type ", DTypeToIr(base), ".ptr(", size, ")"));
    }
    return *p;
  }

  // ---- literals ----

  // A signed 64-bit decimal integer.
  absl::StatusOr<int64_t> ParseInt() {
    size_t start = pos_;
    size_t end = start + (Peek() == '-' ? 1 : 0);
    if (end >= text_.size() || !IsDigit(text_[end])) return Expected(start, "an integer");
    while (end < text_.size() && IsDigit(text_[end])) ++end;
    int64_t v;
    auto res = std::from_chars(text_.data() + start, text_.data() + end, v);
    if (res.ec != std::errc()) return Error(start, "integer literal out of the int64 range");
    pos_ = end;
    return v;
  }

  // A number: an integer (-12), a float (1.5, -0.0, 1e-05, 2.5E+10), inf, -inf. In a uint64 constant,
  // integers from 2^63 to 2^64-1 are accepted too and stored as their bit patterns.
  absl::StatusOr<Arg> ParseNumber(bool unsigned_ints) {
    size_t start = pos_;
    size_t p = start;
    bool negative = p < text_.size() && text_[p] == '-';
    if (negative) ++p;
    if (text_.substr(p, 3) == "inf" && (p + 3 >= text_.size() || !IsIdentChar(text_[p + 3]))) {
      pos_ = p + 3;
      return Arg(negative ? -std::numeric_limits<double>::infinity()
                          : std::numeric_limits<double>::infinity());
    }
    if (p >= text_.size() || !IsDigit(text_[p])) return Expected(start, "an arg");
    bool is_float = false;
    while (p < text_.size() && IsDigit(text_[p])) ++p;
    if (p < text_.size() && text_[p] == '.') {
      is_float = true;
      ++p;
      while (p < text_.size() && IsDigit(text_[p])) ++p;
    }
    if (p < text_.size() && (text_[p] == 'e' || text_[p] == 'E')) {
      is_float = true;
      ++p;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (p >= text_.size() || !IsDigit(text_[p])) return Expected(p, "exponent digits");
      while (p < text_.size() && IsDigit(text_[p])) ++p;
    }
    if (p < text_.size() && IsIdentChar(text_[p])) return Expected(p, "a delimiter after the number");
    const char* first = text_.data() + start;
    const char* last = text_.data() + p;
    if (is_float) {
      double d;
      auto res = std::from_chars(first, last, d);
      if (res.ec != std::errc() || res.ptr != last) {
        return Error(start, "float literal out of the double range");
      }
      pos_ = p;
      return Arg(d);
    }
    int64_t v;
    auto res = std::from_chars(first, last, v);
    if (res.ec == std::errc() && res.ptr == last) {
      pos_ = p;
      return Arg(v);
    }
    if (unsigned_ints && !negative) {
      uint64_t u;
      auto ures = std::from_chars(first, last, u);
      if (ures.ec == std::errc() && ures.ptr == last) {
        pos_ = p;
        return Arg(static_cast<int64_t>(u));
      }
      return Error(start, "integer literal out of the uint64 range");
    }
    return Error(start, "integer literal out of the int64 range");
  }

  // 'text' or "text" with \\ \' \" \n \r \t \xHH escapes.
  absl::StatusOr<Arg> ParseString() {
    size_t start = pos_;
    char quote = text_[pos_++];
    std::string s;
    while (true) {
      if (AtEnd() || Peek() == '\n') return Error(start, "unterminated string literal");
      char c = text_[pos_++];
      if (c == quote) break;
      if (c != '\\') {
        s.push_back(c);
        continue;
      }
      size_t escape_pos = pos_ - 1;
      char e = Peek();
      ++pos_;
      switch (e) {
        case '\\':
          s.push_back('\\');
          break;
        case '\'':
          s.push_back('\'');
          break;
        case '"':
          s.push_back('"');
          break;
        case 'n':
          s.push_back('\n');
          break;
        case 'r':
          s.push_back('\r');
          break;
        case 't':
          s.push_back('\t');
          break;
        case 'x': {
          int value = 0;
          for (int i = 0; i < 2; ++i) {
            int digit = HexDigit(Peek());
            if (digit < 0) return Expected(pos_, "two hex digits after \\x");
            value = value * 16 + digit;
            ++pos_;
          }
          s.push_back(static_cast<char>(value));
          break;
        }
        default:
          if (e < 0x20 || e >= 0x7f) return Expected(escape_pos + 1, "an escape character after '\\'");
          return Error(escape_pos,
                       absl::StrCat("unknown escape sequence '\\", std::string(1, e), "' in string"));
      }
    }
    return Arg(std::move(s));
  }

  static int HexDigit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  // nan(0xBITS): a NaN with a sign or payload other than the canonical one.
  absl::StatusOr<Arg> ParseNanBits(size_t start) {
    ++pos_;  // '('
    if (Peek() != '0' || (Peek(1) != 'x' && Peek(1) != 'X')) return Expected(pos_, "0x and the NaN's bits");
    pos_ += 2;
    size_t digits = pos_;
    uint64_t bits = 0;
    while (HexDigit(Peek()) >= 0) {
      if (pos_ - digits == 16) return Error(digits, "more than 64 bits in nan(0x...)");
      bits = bits * 16 + static_cast<uint64_t>(HexDigit(Peek()));
      ++pos_;
    }
    if (pos_ == digits) return Expected(pos_, "hex digits");
    UOPC_RETURN_IF_ERROR(Expect(')'));
    double d;
    std::memcpy(&d, &bits, sizeof(d));
    if (d == d) return Error(start, "nan(0x...) bits are not a NaN");
    return Arg(d);
  }

  absl::StatusOr<Arg> ParseTuple(bool unsigned_ints, int depth) {
    size_t start = pos_;
    if (depth >= kMaxTupleDepth) {
      return Error(start, absl::StrCat("tuples nested deeper than ", kMaxTupleDepth, " levels"));
    }
    ++pos_;  // '('
    Arg::Tuple elements;
    SkipSpace(true);
    bool trailing_comma = false;
    while (!Consume(')')) {
      UOPC_ASSIGN_OR_RETURN(Arg element, ParseArg(unsigned_ints, depth + 1));
      elements.push_back(std::move(element));
      SkipSpace(true);
      trailing_comma = Consume(',');
      if (!trailing_comma) {
        if (Consume(')')) break;
        return Expected(pos_, "',' or ')'");
      }
      SkipSpace(true);
    }
    if (elements.size() == 1 && !trailing_comma) {
      return Error(start, "a one-element tuple needs a trailing comma: (x,)");
    }
    return Arg(std::move(elements));
  }

  absl::StatusOr<Arg> ParseArg(bool unsigned_ints, int depth) {
    size_t start = pos_;
    char c = Peek();
    if (AtEnd()) return Expected(start, "an arg");
    if (c == '(') return ParseTuple(unsigned_ints, depth);
    if (c == '\'' || c == '"') return ParseString();
    if (c == '-' || IsDigit(c)) return ParseNumber(unsigned_ints);
    absl::string_view word = ParseIdent();
    if (word.empty()) return Expected(start, "an arg");
    if (word == "None") return Arg();
    if (word == "True") return Arg(true);
    if (word == "False") return Arg(false);
    if (word == "inf") return Arg(std::numeric_limits<double>::infinity());
    if (word == "nan") {
      if (Peek() == '(') return ParseNanBits(start);
      return Arg(std::numeric_limits<double>::quiet_NaN());
    }
    if (word == "dtypes" && Consume('.')) {
      UOPC_ASSIGN_OR_RETURN(DType dt, ParseDType());
      return Arg(dt);
    }
    if (word == "Ops" && Consume('.')) {
      size_t op_pos = pos_;
      absl::string_view op_name = ParseIdent();
      if (op_name.empty()) return Expected(op_pos, "an op name");
      std::optional<Ops> op = OpFromName(op_name);
      if (!op) return Error(op_pos, absl::StrCat("unknown op '", op_name, "'"));
      return Arg(*op);
    }
    return ParsePayload(word, start);
  }

  // A payload of a higher layer, read by the parser registered for its type name.
  absl::StatusOr<Arg> ParsePayload(absl::string_view type_name, size_t start) {
    PayloadParser parser = FindPayloadParser(type_name);
    if (parser == nullptr) {
      return Error(start, absl::StrCat("expected an arg, got '", type_name,
                                       "' (not a literal, and no payload parser is registered for it)"));
    }
    absl::string_view rest = text_.substr(start);
    absl::StatusOr<PayloadParse> parsed = parser(rest);
    if (!parsed.ok()) {
      return Error(start, absl::StrCat("bad ", type_name, " payload: ", parsed.status().message()));
    }
    if (parsed->payload == nullptr || parsed->consumed < type_name.size() || parsed->consumed > rest.size()) {
      return Error(start, absl::StrCat("the ", type_name, " payload parser returned an invalid result"));
    }
    pos_ = start + parsed->consumed;
    return Arg(std::move(parsed->payload));
  }

  absl::string_view text_;
  size_t pos_ = 0;
  std::vector<Definition> numbered_;
  absl::flat_hash_map<std::string, Definition> named_;
  std::vector<UOpPtr> roots_;
  bool saw_return_ = false;
  UOpPtr last_;
};

}  // namespace

std::string DTypeToIr(DType dtype) {
  std::string out;
  AppendDType(&out, dtype);
  return out;
}

std::string PrintIr(const UOp* root) {
  UOPC_CHECK(root != nullptr, "PrintIr of a null root");
  Printer printer;
  printer.PrintGraph(root);
  return std::move(printer).Finish();
}

std::string PrintIr(absl::Span<const UOpPtr> roots) {
  Printer printer;
  for (const UOpPtr& root : roots) {
    UOPC_CHECK(root != nullptr, "PrintIr of a null root");
    printer.PrintGraph(root.get());
  }
  return std::move(printer).Finish();
}

absl::StatusOr<std::vector<UOpPtr>> ParseIr(absl::string_view text) { return Parser(text).ParseFile(); }

absl::StatusOr<UOpPtr> ParseIrSingle(absl::string_view text) {
  UOPC_ASSIGN_OR_RETURN(std::vector<UOpPtr> roots, ParseIr(text));
  if (roots.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat("expected a text with one root, got ", roots.size()));
  }
  return std::move(roots[0]);
}

}  // namespace uopc
