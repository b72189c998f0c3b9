#include "tools/filecheck.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

enum class Kind { kPlain, kNext, kSame, kNot };

struct Directive {
  Kind kind;
  int check_line;       // 1-based line in the check text
  std::string pattern;  // as written, trimmed
  std::unique_ptr<RE2> re;
};

// A position in the input: a line index and a byte offset in that line.
struct Pos {
  size_t line = 0;
  size_t col = 0;
};

struct Match {
  size_t line;
  size_t begin;
  size_t end;
};

std::string DirectiveName(absl::string_view prefix, Kind kind) {
  switch (kind) {
    case Kind::kPlain:
      return absl::StrCat(prefix, ":");
    case Kind::kNext:
      return absl::StrCat(prefix, "-NEXT:");
    case Kind::kSame:
      return absl::StrCat(prefix, "-SAME:");
    case Kind::kNot:
      return absl::StrCat(prefix, "-NOT:");
  }
  return "";
}

bool IsWordChar(char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-'; }
bool IsHorizontalSpace(char c) { return c == ' ' || c == '\t'; }
re2::StringPiece Piece(absl::string_view s) { return re2::StringPiece(s.data(), s.size()); }

// Splits on '\n', drops a '\r' before it, and drops the empty line after a final newline.
std::vector<absl::string_view> SplitLines(absl::string_view text) {
  if (text.empty()) return {};
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  if (lines.size() > 1 && lines.back().empty()) lines.pop_back();
  for (absl::string_view& line : lines) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  }
  return lines;
}

// Translates a pattern (literal text with embedded {{regex}}) into one RE2 expression.
absl::StatusOr<std::unique_ptr<RE2>> CompilePattern(absl::string_view pattern, int check_line) {
  RE2::Options options;
  options.set_log_errors(false);
  std::string regex;
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern.substr(i, 2) == "{{") {
      // The regex ends at the first "}}" outside its own braces (so `{{a{2}}}` is the regex `a{2}`).
      size_t j = i + 2;
      int depth = 0;
      std::optional<size_t> end;
      while (j < pattern.size()) {
        char c = pattern[j];
        if (c == '\\') {
          j += 2;
          continue;
        }
        if (c == '{') ++depth;
        if (c == '}') {
          if (depth == 0 && pattern.substr(j, 2) == "}}") {
            end = j;
            break;
          }
          if (depth > 0) --depth;
        }
        ++j;
      }
      if (!end) {
        return absl::InvalidArgumentError(absl::StrCat(
            "check line ", check_line, ": `{{` without a closing `}}` in pattern `", pattern, "`"));
      }
      absl::string_view embedded = pattern.substr(i + 2, *end - i - 2);
      RE2 alone(Piece(embedded), options);
      if (!alone.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("check line ", check_line, ": invalid regex {{", embedded, "}}: ", alone.error()));
      }
      absl::StrAppend(&regex, "(?:", embedded, ")");
      i = *end + 2;
    } else if (IsHorizontalSpace(pattern[i])) {
      while (i < pattern.size() && IsHorizontalSpace(pattern[i])) ++i;
      regex += "[ \\t]+";
    } else {
      size_t j = i;
      while (j < pattern.size() && !IsHorizontalSpace(pattern[j]) && pattern.substr(j, 2) != "{{") ++j;
      regex += RE2::QuoteMeta(Piece(pattern.substr(i, j - i)));
      i = j;
    }
  }
  auto re = std::make_unique<RE2>(regex, options);
  if (!re->ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("check line ", check_line, ": pattern `", pattern, "` does not compile: ", re->error()));
  }
  return re;
}

// Finds the first directive with `prefix` on `line`, if any. The prefix must start a word, and be followed by
// ':' or by '-SUFFIX:'.
absl::StatusOr<std::optional<Directive>> ParseDirective(absl::string_view line, int check_line,
                                                        absl::string_view prefix) {
  size_t from = 0;
  while (true) {
    size_t at = line.find(prefix, from);
    if (at == absl::string_view::npos) return std::nullopt;
    from = at + 1;
    if (at > 0 && IsWordChar(line[at - 1])) continue;
    size_t p = at + prefix.size();
    Kind kind;
    if (p < line.size() && line[p] == ':') {
      kind = Kind::kPlain;
      ++p;
    } else if (p < line.size() && line[p] == '-') {
      size_t q = p + 1;
      while (q < line.size() &&
             (absl::ascii_isupper(static_cast<unsigned char>(line[q])) ||
              absl::ascii_isdigit(static_cast<unsigned char>(line[q])) || line[q] == '-')) {
        ++q;
      }
      if (q == p + 1 || q >= line.size() || line[q] != ':')
        continue;  // prose like "CHECK-based", not a directive
      absl::string_view suffix = line.substr(p + 1, q - p - 1);
      if (suffix == "NEXT") {
        kind = Kind::kNext;
      } else if (suffix == "SAME") {
        kind = Kind::kSame;
      } else if (suffix == "NOT") {
        kind = Kind::kNot;
      } else {
        return absl::InvalidArgumentError(absl::StrCat(
            "check line ", check_line, ": unsupported directive ", prefix, "-", suffix,
            ": (supported: ", prefix, ":, ", prefix, "-NEXT:, ", prefix, "-SAME:, ", prefix, "-NOT:)"));
      }
      p = q + 1;
    } else {
      continue;
    }
    std::string pattern(absl::StripAsciiWhitespace(line.substr(p)));
    if (pattern.empty()) {
      return absl::InvalidArgumentError(absl::StrCat("check line ", check_line, ": ",
                                                     DirectiveName(prefix, kind), " has an empty pattern"));
    }
    UOPC_ASSIGN_OR_RETURN(std::unique_ptr<RE2> re, CompilePattern(pattern, check_line));
    return Directive{kind, check_line, std::move(pattern), std::move(re)};
  }
}

bool IsValidPrefix(absl::string_view prefix) {
  if (prefix.empty() || !absl::ascii_isalpha(static_cast<unsigned char>(prefix[0]))) return false;
  for (char c : prefix) {
    if (!IsWordChar(c)) return false;
  }
  return true;
}

class Checker {
 public:
  Checker(absl::string_view input, absl::string_view prefix) : lines_(SplitLines(input)), prefix_(prefix) {}

  absl::Status Run(const std::vector<Directive>& directives) {
    Pos cur;
    std::optional<Match> last;
    const Directive* last_directive = nullptr;
    std::vector<const Directive*> nots;
    for (const Directive& d : directives) {
      if (d.kind == Kind::kNot) {
        nots.push_back(&d);
        continue;
      }
      if ((d.kind == Kind::kNext || d.kind == Kind::kSame) && !last) {
        return absl::InvalidArgumentError(absl::StrCat("check line ", d.check_line, ": ", Name(d),
                                                       " has no previous ", prefix_, ": match to follow"));
      }
      std::optional<Match> m = Find(*d.re, cur, End());
      if (!m) {
        return absl::FailedPreconditionError(
            absl::StrCat(Head(d), " not found in input\n", Where(cur, " to the end of the input")));
      }
      if (d.kind == Kind::kNext && m->line != last->line + 1) {
        return absl::FailedPreconditionError(
            absl::StrCat(Head(d), " matched on input line ", m->line + 1,
                         ", not on the line after the previous match (line ", last->line + 1, ", check line ",
                         last_directive->check_line, ")\n", ShowLine(m->line)));
      }
      if (d.kind == Kind::kSame && m->line != last->line) {
        return absl::FailedPreconditionError(
            absl::StrCat(Head(d), " not found on the same line as the previous match (check line ",
                         last_directive->check_line, ")\n", Where(cur, ""),
                         "\n  first match after it is on input line ", m->line + 1));
      }
      UOPC_RETURN_IF_ERROR(CheckNots(nots, cur, Pos{m->line, m->begin}, last_directive, &d));
      nots.clear();
      last = m;
      last_directive = &d;
      cur = Pos{m->line, m->end};
    }
    return CheckNots(nots, cur, End(), last_directive, nullptr);
  }

 private:
  Pos End() const { return lines_.empty() ? Pos{0, 0} : Pos{lines_.size() - 1, lines_.back().size()}; }

  // The first match of `re` in [from, to), never across a line break.
  std::optional<Match> Find(const RE2& re, Pos from, Pos to) const {
    for (size_t l = from.line; l < lines_.size() && l <= to.line; ++l) {
      absl::string_view line = lines_[l];
      size_t begin = l == from.line ? from.col : 0;
      size_t end = l == to.line ? to.col : line.size();
      if (begin > end) continue;
      re2::StringPiece found;
      // Matching on the whole line keeps `^` and `$` meaning the line's start and end.
      if (re.Match(Piece(line), begin, end, RE2::UNANCHORED, &found, 1)) {
        size_t at = static_cast<size_t>(found.data() - line.data());
        return Match{l, at, at + found.size()};
      }
    }
    return std::nullopt;
  }

  absl::Status CheckNots(const std::vector<const Directive*>& nots, Pos from, Pos to, const Directive* before,
                         const Directive* after) const {
    for (const Directive* n : nots) {
      std::optional<Match> m = Find(*n->re, from, to);
      if (!m) continue;
      std::string range = absl::StrCat(
          before ? absl::StrCat("the match of check line ", before->check_line)
                 : std::string("the start of input"),
          " and ", after ? absl::StrCat("the match of check line ", after->check_line) : "the end of input");
      return absl::FailedPreconditionError(absl::StrCat(Head(*n), " found in input at line ", m->line + 1,
                                                        ", column ", m->begin + 1, ", between ", range, "\n",
                                                        ShowLine(m->line)));
    }
    return absl::OkStatus();
  }

  std::string Name(const Directive& d) const { return DirectiveName(prefix_, d.kind); }
  std::string Head(const Directive& d) const {
    return absl::StrCat("check line ", d.check_line, ": ", Name(d), " `", d.pattern, "`");
  }

  std::string ShowLine(size_t line) const {
    if (line >= lines_.size()) return "  (empty input)";
    absl::string_view text = lines_[line];
    constexpr size_t kMaxShown = 200;
    std::string shown(text.substr(0, kMaxShown));
    if (text.size() > kMaxShown) shown += "...";
    return absl::StrCat("  input line ", line + 1, ": ", shown);
  }

  // "searched from line:col<until>" and the text of that line.
  std::string Where(Pos p, absl::string_view until) const {
    if (lines_.empty()) return "  searched an empty input";
    return absl::StrCat("  searched from input line ", p.line + 1, ", column ", p.col + 1, until, "\n",
                        ShowLine(p.line));
  }

  std::vector<absl::string_view> lines_;
  absl::string_view prefix_;
};

}  // namespace

absl::Status FileCheck(absl::string_view check_text, absl::string_view input, absl::string_view prefix) {
  if (!IsValidPrefix(prefix)) {
    return absl::InvalidArgumentError(
        absl::StrCat("check prefix `", prefix, "` must be a letter followed by letters, digits, '_' or '-'"));
  }
  std::vector<Directive> directives;
  std::vector<absl::string_view> check_lines = SplitLines(check_text);
  for (size_t i = 0; i < check_lines.size(); ++i) {
    UOPC_ASSIGN_OR_RETURN(std::optional<Directive> d,
                          ParseDirective(check_lines[i], static_cast<int>(i + 1), prefix));
    if (d.has_value()) directives.push_back(std::move(*d));
  }
  if (directives.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("no ", prefix, ": directives found in the check text"));
  }
  return Checker(input, prefix).Run(directives);
}

}  // namespace uopc
