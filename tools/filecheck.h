// FileCheck: checks a program's output against the `CHECK:` lines of a test file, the way LLVM's FileCheck
// does.
//
// A golden test is one file holding both the input and the expectations (`# CHECK: %2 = ADD`); the runner
// finds every directive with the given prefix in `check_text` and matches them, in order, against `input`:
//
//   CHECK: pat       pat occurs at or after the end of the previous match (same line or later)
//   CHECK-NEXT: pat  pat occurs on the line right after the previous match
//   CHECK-SAME: pat  pat occurs on the same line as the previous match, after it
//   CHECK-NOT: pat   pat does not occur between the previous match and the next one (or the end of input)
//
// A pattern is literal text in which `{{re}}` embeds an RE2 regular expression. As in LLVM (without
// --strict-whitespace), leading and trailing whitespace is ignored and a run of spaces or tabs matches any
// non-empty run of spaces or tabs. A pattern never matches across a line break. `[[VAR:...]]` variables and
// CHECK-DAG, -LABEL, -EMPTY are not supported; a directive spelled `CHECK-<other>:` is an error, not ignored.
#ifndef UOPC_TOOLS_FILECHECK_H_
#define UOPC_TOOLS_FILECHECK_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace uopc {

// Checks `input` against the directives with `prefix` found in `check_text`.
//   OK                  every directive holds;
//   FailedPrecondition  the input breaks a directive: the message names the check line, the directive and the
//                       pattern, and shows where the input was searched (line:col and the text of that line);
//   InvalidArgument     the check text itself is wrong (no directive, empty pattern, bad regex, unknown
//                       directive, a NEXT/SAME without a previous match), or the prefix is not a word.
absl::Status FileCheck(absl::string_view check_text, absl::string_view input,
                       absl::string_view prefix = "CHECK");

}  // namespace uopc

#endif  // UOPC_TOOLS_FILECHECK_H_
