// uopc verify: parse a graph file, check every graph in it against one stage's spec, and print it on success.
// For kernel ASTs and programs the check includes the bounds proof devices make before running a kernel
// (codegen/bounds_check.h): an access that cannot be proven inside its buffer fails verification.
#include <ostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "codegen/bounds_check.h"
#include "tools/uopc_subcommand.h"
#include "uop/spec.h"
#include "uop/status_macros.h"

ABSL_FLAG(std::string, spec, "", "Which stage's rules `uopc verify` checks: tensor, kernel or program.");

namespace uopc {

absl::Status RunVerify(absl::Span<const std::string> args, std::ostream& out) {
  std::string spec = absl::GetFlag(FLAGS_spec);
  absl::Status (*verify)(const UOp*) = nullptr;
  if (spec == "tensor") {
    verify = VerifyTensorGraph;
  } else if (spec == "kernel") {
    // The spec, then every load and store proven inside its buffer (what devices check before running it).
    verify = [](const UOp* root) {
      absl::Status s = VerifyKernelAst(root);
      return s.ok() ? CheckKernelAstBounds(root) : s;
    };
  } else if (spec == "program") {
    verify = [](const UOp* root) {
      absl::Status s = VerifyProgram(root);
      return s.ok() ? CheckProgramBounds(root, "program") : s;
    };
  } else {
    return UsageError(spec.empty()
                          ? "verify needs --spec=tensor, --spec=kernel or --spec=program"
                          : absl::StrCat("unknown --spec=", spec, " (expected tensor, kernel or program)"));
  }
  // Check the format before doing any work, so a typo is a usage error even when verification fails.
  UOPC_RETURN_IF_ERROR(FormatGraphs({}, absl::GetFlag(FLAGS_format)).status());
  UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(args[0]));
  if (file.roots.empty()) return absl::InvalidArgumentError(absl::StrCat(file.name, ": no graph to verify"));
  for (size_t i = 0; i < file.roots.size(); ++i) {
    if (absl::Status s = verify(file.roots[i].get()); !s.ok()) {
      std::string which = file.roots.size() > 1
                              ? absl::StrCat(" (graph ", i + 1, " of ", file.roots.size(), ")")
                              : std::string();
      return absl::Status(s.code(), absl::StrCat(file.name, which, ": ", s.message()));
    }
  }
  UOPC_ASSIGN_OR_RETURN(std::string text, FormatGraphs(file.roots, absl::GetFlag(FLAGS_format)));
  out << text;
  return absl::OkStatus();
}

}  // namespace uopc
