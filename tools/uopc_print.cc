// uopc print: parse a graph file and print it (as canonical IR, tinygrad's listing, or tinygrad's tree).
#include <ostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/uopc_subcommand.h"

namespace uopc {

absl::Status RunPrint(absl::Span<const std::string> args, std::ostream& out) {
  absl::StatusOr<GraphFile> file = ReadGraphFile(args[0]);
  if (!file.ok()) return file.status();
  // An empty file (or only comments) is most likely the wrong file: say so rather than print nothing.
  if (file->roots.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file->name, ": no graph to print (the file is empty)"));
  }
  absl::StatusOr<std::string> text = FormatGraphs(file->roots, absl::GetFlag(FLAGS_format));
  if (!text.ok()) return text.status();
  out << *text;
  return absl::OkStatus();
}

}  // namespace uopc
