// RenderRules: a renderer's text rules as a table (tinygrad's string_rewrite): a rule is an op pattern and
// either a format of the render context's names for the uop and its sources, or a function of the context
// and the uop that returns the text. A renderer's driver loop names the uops and places the text; the rules
// say what each op is written as.
//
//   using Rules = RenderRules<CContext>;
//   static const Rules* const rules = new Rules({
//       {Ops::ADD, "({0}+{1})"},                                  // {N}: source N's name
//       {Ops::RANGE, "for ({dtype} {x} = 0; {x} < {0}; {x}++) {{"},  // {x}: the uop's own name
//       {RenderPat(Ops::CAST).dtype(dtypes::kBool), [](CContext& ctx, const UOp* x) -> std::optional<...>
//       {..}},
//   });
//   std::optional<std::string> text = rules->Render(ctx, u);  // the first rule that matches and accepts
//
// - A format's fields: `{0}`..`{9}` are ctx.Src(u, i) (a format that names source i does not match a uop
//   with fewer sources), `{x}` is ctx.Name(u), `{{` and `}}` are braces, and any other `{key}` is a field the
//   context type lists in its static `Fields()` (a RenderFields<Ctx>: key -> function appending the text);
//   an unknown key is a bug in the table and fails when the table is built. Formats are parsed once, when
//   the table is built.
// - A function returns the text, or nullopt to decline (the next rule is tried), as a tinygrad callback
//   returning None does.
// - Rules are kept per op in table order, so finding a uop's rules is one array index; `a + b` is a's rules,
//   then b's (a target's rules before the rules it shares with others).
#ifndef UOPC_RENDERER_RENDER_RULES_H_
#define UOPC_RENDERER_RENDER_RULES_H_

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "rewrite/upat.h"
#include "uop/check.h"
#include "uop/ops.h"
#include "uop/uop.h"

namespace uopc {

// Which uops a render rule applies to: its ops, and optionally their dtypes, source count and a test of the
// uop (tinygrad's UPat of a string rule, which rarely looks deeper than the root).
class RenderPat {
 public:
  RenderPat(Ops op) : ops_{op} {}      // NOLINT: a bare op reads as the pattern in a table
  RenderPat(OpSet ops) : ops_(ops) {}  // NOLINT
  // The uop's dtype (or its scalar type, DTypeSet's rule) is in `dtypes`.
  RenderPat dtype(DTypeSet dtypes) const {
    RenderPat p = *this;
    p.dtypes_ = dtypes;
    return p;
  }
  // The uop has exactly `n` sources.
  RenderPat srcs(int n) const {
    RenderPat p = *this;
    p.num_src_ = n;
    return p;
  }
  // `test(u)` holds.
  RenderPat when(bool (*test)(const UOp*)) const {
    RenderPat p = *this;
    p.test_ = test;
    return p;
  }

  const OpSet& ops() const { return ops_; }
  bool Matches(const UOp* u) const {
    return (dtypes_.any() || dtypes_.Matches(u->dtype())) &&
           (num_src_ < 0 || static_cast<int>(u->num_src()) == num_src_) && (test_ == nullptr || test_(u));
  }

 private:
  OpSet ops_;
  DTypeSet dtypes_;
  int num_src_ = -1;
  bool (*test_)(const UOp*) = nullptr;
};

// The named fields a context type offers to formats: key -> appends the field's text for a uop.
template <typename Ctx>
using RenderFields = absl::flat_hash_map<std::string, void (*)(Ctx&, const UOp*, std::string*)>;

// One rule: a pattern and a format or a function.
template <typename Ctx>
struct RenderRule {
  using Fn = std::function<std::optional<std::string>(Ctx&, const UOp*)>;
  RenderRule(RenderPat pat, const char* format) : pat(std::move(pat)), format(format) {}
  RenderRule(RenderPat pat, Fn fn) : pat(std::move(pat)), fn(std::move(fn)) {}
  RenderPat pat;
  const char* format = nullptr;
  Fn fn;
};

template <typename Ctx>
class RenderRules {
 public:
  RenderRules(std::initializer_list<RenderRule<Ctx>> rules) {
    for (const RenderRule<Ctx>& r : rules) Add(r);
  }
  RenderRules(const std::vector<RenderRule<Ctx>>& rules) {  // NOLINT
    for (const RenderRule<Ctx>& r : rules) Add(r);
  }

  // This table's rules, then `other`'s.
  RenderRules operator+(const RenderRules& other) const {
    RenderRules out = *this;
    for (const Compiled& c : other.rules_) out.Insert(c);
    return out;
  }

  // The text of the first rule that matches `u` and accepts it; nullopt when none does.
  std::optional<std::string> Render(Ctx& ctx, const UOp* u) const {
    for (const uint32_t i : by_op_[static_cast<int>(u->op())]) {
      const Compiled& c = rules_[i];
      if (!c.pat.Matches(u)) continue;
      if (c.fn) {
        std::optional<std::string> text = c.fn(ctx, u);
        if (text.has_value()) return text;
        continue;
      }
      if (c.max_src >= static_cast<int>(u->num_src())) continue;
      std::string out;
      out.reserve(c.reserve);
      for (const Piece& p : c.pieces) {
        switch (p.kind) {
          case Piece::kText:
            out += p.text;
            break;
          case Piece::kSrc:
            absl::StrAppend(&out, ctx.Src(u, p.index));
            break;
          case Piece::kSelf:
            absl::StrAppend(&out, ctx.Name(u));
            break;
          case Piece::kField:
            p.field(ctx, u, &out);
            break;
        }
      }
      return out;
    }
    return std::nullopt;
  }

 private:
  struct Piece {
    enum Kind : uint8_t { kText, kSrc, kSelf, kField } kind = kText;
    int index = 0;
    std::string text;
    void (*field)(Ctx&, const UOp*, std::string*) = nullptr;
  };
  static Piece MakePiece(typename Piece::Kind kind, int index = 0, std::string text = {}) {
    Piece p;
    p.kind = kind;
    p.index = index;
    p.text = std::move(text);
    return p;
  }
  struct Compiled {
    RenderPat pat;
    typename RenderRule<Ctx>::Fn fn;
    std::vector<Piece> pieces;
    int max_src = -1;  // the highest source a format names
    size_t reserve = 0;
  };

  void Add(const RenderRule<Ctx>& r) {
    Compiled c{r.pat, r.fn, {}, -1, 0};
    if (r.format != nullptr) Parse(r.format, &c);
    Insert(c);
  }
  void Insert(const Compiled& c) {
    const uint32_t index = static_cast<uint32_t>(rules_.size());
    rules_.push_back(c);
    c.pat.ops().ForEach([&](Ops op) { by_op_[static_cast<int>(op)].push_back(index); });
  }
  static void Parse(absl::string_view format, Compiled* c) {
    std::string text;
    auto flush = [&] {
      if (text.empty()) return;
      c->reserve += text.size();
      c->pieces.push_back(MakePiece(Piece::kText, 0, std::move(text)));
      text.clear();
    };
    for (size_t i = 0; i < format.size(); ++i) {
      const char ch = format[i];
      if ((ch == '{' || ch == '}') && i + 1 < format.size() && format[i + 1] == ch) {
        text += ch;
        ++i;
        continue;
      }
      if (ch != '{') {
        text += ch;
        continue;
      }
      const size_t end = format.find('}', i);
      if (end == absl::string_view::npos) Fail("an unclosed field in the render format", format);
      const absl::string_view key = format.substr(i + 1, end - i - 1);
      flush();
      c->reserve += 8;
      if (key.size() == 1 && key[0] >= '0' && key[0] <= '9') {
        c->pieces.push_back(MakePiece(Piece::kSrc, key[0] - '0'));
        c->max_src = std::max(c->max_src, key[0] - '0');
      } else if (key == "x") {
        c->pieces.push_back(MakePiece(Piece::kSelf));
      } else {
        const RenderFields<Ctx>& fields = Ctx::Fields();
        auto it = fields.find(key);
        if (it == fields.end())
          Fail(std::string("no field {") + std::string(key) + "} for the render format", format);
        Piece p = MakePiece(Piece::kField);
        p.field = it->second;
        c->pieces.push_back(std::move(p));
      }
      i = end;
    }
    flush();
  }

  // A table with a format it cannot read is a bug in the renderer.
  [[noreturn]] static void Fail(const std::string& what, absl::string_view format) {
    const std::string message = what + " `" + std::string(format) + "`";
    ::uopc::internal::CheckFailed(__FILE__, __LINE__, "a readable render format", message.c_str());
  }

  std::vector<Compiled> rules_;
  std::array<std::vector<uint32_t>, kNumOps> by_op_;
};

}  // namespace uopc

#endif  // UOPC_RENDERER_RENDER_RULES_H_
