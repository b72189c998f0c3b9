// The pieces every `uopc` subcommand is built from: its table entry, reading a graph file, printing graphs.
//
// A subcommand is one function `absl::Status Run(args, out)` plus one row in the table in uopc.cc. It reads
// its flags with absl::GetFlag (flags shared by several subcommands, like --format, are declared here),
// writes its result to `out`, and reports bad input as a Status whose message starts with the file's name
// (`x.uop:3:7: expected ...`); the driver prints it on stderr and exits 1. A Status made by UsageError()
// exits 2 and prints the subcommand's usage instead.
#ifndef UOPC_TOOLS_UOPC_SUBCOMMAND_H_
#define UOPC_TOOLS_UOPC_SUBCOMMAND_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"
#include "uop/uop.h"

ABSL_DECLARE_FLAG(std::string, format);

namespace uopc {

struct Subcommand {
  absl::string_view name;
  // What follows `uopc NAME` in the usage line, e.g. "[--format=ir|listing|tree] FILE|-".
  absl::string_view synopsis;
  // One line for `uopc --help`.
  absl::string_view summary;
  // The flags (names without dashes) the subcommand reads; setting any other subcommand's flag is a usage
  // error.
  absl::Span<const absl::string_view> flags;
  // Number of positional arguments after the subcommand's name.
  int num_args;
  absl::Status (*run)(absl::Span<const std::string> args, std::ostream& out);
};

// A usage error: wrong flag values or arguments. The driver exits 2 and shows the subcommand's usage.
absl::Status UsageError(absl::string_view message);
bool IsUsageError(const absl::Status& status);

// The whole of `path` ("-" is stdin). Errors start with the path: "x.jsonl: cannot open: ...".
absl::StatusOr<std::string> ReadInputText(const std::string& path);

// The status of a --jsonl run once every line has its output line: OK when no line failed, else an
// InvalidArgument error "FILE: N of M lines failed (...)" so that uopc exits 1 (the failures' own messages
// are in their {"id", "error"} lines).
absl::Status JsonlStatus(const std::string& path, int failed, int total);

// A graph file read and parsed: `name` is the path as given, or "<stdin>" for "-".
struct GraphFile {
  std::string name;
  std::vector<UOpPtr> roots;
};

// Reads `path` ("-" is stdin) and parses it as textual IR. Errors start with the name: "x.uop:3:7: ..." for
// malformed text, "x.uop: cannot open: ..." for a missing file.
absl::StatusOr<GraphFile> ReadGraphFile(const std::string& path);

// The graphs in the format named by --format: "ir" (the default, the round-tripping text), "listing"
// (tinygrad's print_uops of every node in toposort order) or "tree" (tinygrad's UOp repr, one per root).
absl::StatusOr<std::string> FormatGraphs(absl::Span<const UOpPtr> roots, absl::string_view format);

// ---- subcommands (one function each; uopc.cc lists them) ----

// uopc print [--format=ir|listing|tree] FILE|-
absl::Status RunPrint(absl::Span<const std::string> args, std::ostream& out);
// uopc verify --spec=tensor|kernel|program [--format=...] FILE|-
absl::Status RunVerify(absl::Span<const std::string> args, std::ostream& out);
// uopc simplify [--rules=symbolic|sym] (--jsonl [--time] FILE|- | --vars='a:0:8 ...' EXPR)
absl::Status RunSimplify(absl::Span<const std::string> args, std::ostream& out);
// uopc shape --jsonl FILE|-
inline constexpr absl::string_view kShapeFlags[] = {"jsonl"};
absl::Status RunShape(absl::Span<const std::string> args, std::ostream& out);
// uopc compile [--target=clang] [--noopt | --opts=...] [--emit=src|uops|stages|ast] FILE|-
// uopc compile --jsonl [--target=clang] [--noopt] [--time] FILE|-
// uopc compile --step=STEP [--target=clang] FILE|-
inline constexpr absl::string_view kCompileFlags[] = {"target", "noopt", "opts", "emit",
                                                      "jsonl",  "time",  "step"};
absl::Status RunCompile(absl::Span<const std::string> args, std::ostream& out);
// The renderer --target names (a usage error listing the known ones otherwise).
absl::StatusOr<std::unique_ptr<Renderer>> RendererForTarget(absl::string_view target);
// uopc schedule [--format=ir|listing|tree] FILE|-
inline constexpr absl::string_view kScheduleFlags[] = {"format"};
absl::Status RunSchedule(absl::Span<const std::string> args, std::ostream& out);
// uopc run --jsonl [--device=CPU|INTERP] [--noopt] FILE|-
inline constexpr absl::string_view kRunFlags[] = {"device", "noopt", "jsonl", "target", "inputs", "bind"};
absl::Status RunRun(absl::Span<const std::string> args, std::ostream& out);

// uopc viz [--target=clang] [--noopt] [--jsonl] [--out=PAGE.html] [--max_nodes=600] FILE|-
inline constexpr absl::string_view kVizFlags[] = {"target", "noopt", "jsonl", "out", "max_nodes"};
absl::Status RunViz(absl::Span<const std::string> args, std::ostream& out);

}  // namespace uopc

#endif  // UOPC_TOOLS_UOPC_SUBCOMMAND_H_
