// The small helpers every layer of uopc shares, so that each has one definition: environment knobs read with
// tinygrad's getenv semantics, elapsed time and tinygrad's time_to_str, writing a file atomically, and
// Python's tuple repr for shapes. It sits at the bottom of the layers (it needs only Abseil and POSIX), so
// rewrite, codegen, runtime, tensor, nn and tools all use these rather than keeping copies.
#ifndef UOPC_UOP_UTIL_H_
#define UOPC_UOP_UTIL_H_

#include <chrono>
#include <cstdint>
#include <iterator>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace uopc {

// ---- environment knobs (tinygrad's getenv) ----
//
// A variable that is unset or empty gives the default. EnvInt and EnvDouble parse the whole value
// (surrounding blanks allowed, as Python's int() and float() allow them); a value that does not parse also
// gives the default, and the first such read of each variable prints one line on stderr naming it, its value
// and the default used, so a typo in a knob is visible but never stops a program. Each call reads the
// environment afresh: a knob that must not change while the process runs is read once by its user and kept.

int64_t EnvInt(absl::string_view name, int64_t default_value);
double EnvDouble(absl::string_view name, double default_value);
// EnvInt(name, default_value) != 0: "0" turns a flag off, any other integer on.
bool EnvFlag(absl::string_view name, bool default_value = false);
std::string EnvString(absl::string_view name, absl::string_view default_value = "");

// ---- time ----

// Seconds on the steady clock since `start`.
inline double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// tinygrad's time_to_str: "12.00s ", "3.50ms" or "7.25us", the number right-aligned in `width` characters
// (the unit is always two characters, so columns line up). An infinite time (nothing measured yet) is "-",
// right-aligned in as many characters as a number and its unit.
std::string TimeToStr(double seconds, int width = 0);

// ---- files ----

// Replaces `path` with `contents` so that no reader, and no crash, ever sees part of a file: the bytes go to
// a new file with a unique name in the same directory (created with O_EXCL, so with the permissions a plain
// create gives), which is fsynced, renamed over `path`, and the directory fsynced. On failure `path` is as it
// was, no temporary file is left behind, and the error names the file and the system's reason. The directory
// must exist.
absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents);

// ---- text ----

// Items as Python prints a tuple: "()", "(3,)", "(3, 4)". `formatter` is an absl::StrJoin formatter, for
// items that absl::StrCat cannot print itself (Sint, pairs).
template <typename Range, typename Formatter>
std::string TupleString(const Range& items, Formatter formatter) {
  return absl::StrCat("(", absl::StrJoin(items, ", ", formatter), std::size(items) == 1 ? ",)" : ")");
}
inline std::string TupleString(absl::Span<const int64_t> items) {
  return TupleString(items, absl::AlphaNumFormatter());
}

}  // namespace uopc

#endif  // UOPC_UOP_UTIL_H_
