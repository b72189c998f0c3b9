// uopc print: parse a graph file and print it (as canonical IR, tinygrad's listing, or tinygrad's tree).
#include <ostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/uopc_subcommand.h"
#include "uop/status_macros.h"

namespace uopc {

absl::Status RunPrint(absl::Span<const std::string> args, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(args[0]));
  // An empty file (or only comments) is most likely the wrong file: say so rather than print nothing.
  if (file.roots.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file.name, ": no graph to print (the file is empty)"));
  }
  UOPC_ASSIGN_OR_RETURN(std::string text, FormatGraphs(file.roots, absl::GetFlag(FLAGS_format)));
  out << text;
  return absl::OkStatus();
}

}  // namespace uopc
