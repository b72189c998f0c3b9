// Integer/bool expressions as text: the corpus's infix syntax (parse and print) and tinygrad's render syntax.
//
// The infix syntax (../shared/reference/tinygrad-v0.10.3/corpus/README.md §1) fully parenthesizes every binary op,
// `(a + b)`, `(a // 4)`, `(a < 3)`, with `max(a, b)`, `where(c, t, f)`, `neg(x)`, `sub(a, b)`, `cast_int(x)`,
// `cast_bool(x)`, integer and `true`/`false` literals, and variables. The operand order of the text is the source
// order of the UOp, so parsing a printed expression gives back the same interned node.
//
// tinygrad's render syntax (§2) is what `UOp.render()` prints: `(a+b)`, `max(a, b)`, `(t if c else f)`, `True`,
// `ridx0` for RANGE 0. uopc reproduces it byte for byte so renders can be compared with tinygrad's tests.
#ifndef UOPC_REWRITE_INFIX_H_
#define UOPC_REWRITE_INFIX_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "uop/uop.h"

namespace uopc {

// A variable of an expression: DEFINE_VAR int32 `name` over [min, max].
struct InfixVar {
  std::string name;
  int64_t min = 0;
  int64_t max = 0;
};

// Parses `text`. Variables must be declared in `vars`; integer literals are int32 constants, `true`/`false` bool
// constants. Errors name the column (1-based) and what was expected.
absl::StatusOr<UOpPtr> ParseInfix(absl::string_view text, const std::vector<InfixVar>& vars);
// The same with a prebuilt name -> DEFINE_VAR table (for parsing many expressions over the same variables).
absl::StatusOr<UOpPtr> ParseInfix(absl::string_view text, const absl::flat_hash_map<std::string, UOpPtr>& vars);

// The corpus's infix syntax. Nodes with no infix spelling are printed as `<OP>` so the text stays readable.
std::string RenderInfix(const UOp* u);
// tinygrad's UOp.render(simplify=False) syntax.
std::string RenderTinygrad(const UOp* u);

}  // namespace uopc

#endif  // UOPC_REWRITE_INFIX_H_
