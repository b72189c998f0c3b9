#include "renderer/renderer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// What every target's loop reads of a uop without asking again: a buffer's number, a variable's name, a
// launch index's name (its last character the dimension) and size, and an ALU op's sources.
absl::Status CheckRenderable(size_t pos, const UOp* u) {
  const Ops op = u->op();
  const Arg& arg = u->arg();
  if (op == Ops::DEFINE_GLOBAL && !arg.is_int())
    return RenderError(pos, u, "a DEFINE_GLOBAL needs a buffer number");
  if (op == Ops::DEFINE_VAR && (!arg.is_tuple() || arg.size() == 0 || !arg[0].is_string()))
    return RenderError(pos, u, "a DEFINE_VAR needs a name");
  if (op == Ops::SPECIAL) {
    if (!arg.is_tuple() || arg.size() != 2 || !arg[0].is_string() || arg[0].as_string().empty() ||
        (!arg[1].is_int() && arg[1].payload_as<UOpArg>() == nullptr)) {
      return RenderError(pos, u, "a SPECIAL's arg is its (name, size)");
    }
    // A local size bounds the program's threads where it is compiled (CUDA's __launch_bounds__).
    if (!arg[1].is_int() && arg[0].as_string()[0] == 'l') {
      return RenderError(pos, u, "a symbolic local size");
    }
  }
  if (groups::kALU.contains(op)) {
    const size_t arity = groups::kTernary.contains(op) ? 3 : groups::kBinary.contains(op) ? 2 : 1;
    if (u->num_src() != arity) return RenderError(pos, u, "an ALU op with the wrong number of sources");
  }
  return absl::OkStatus();
}

}  // namespace

std::string TensorCore::ToString() const {
  return absl::StrCat("WMMA_", absl::StrJoin(dims, "_"), "_", dtype_in.name(), "_", dtype_out.name());
}

absl::Status RenderError(size_t pos, const UOp* u, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("cannot render uop ", pos, " (", OpName(u->op()), " ",
                                                 u->dtype().ToString(), "): ", what));
}

absl::StatusOr<std::string> Renderer::Render(absl::Span<const UOp* const> uops) const {
  for (size_t pos = 0; pos < uops.size(); ++pos) UOPC_RETURN_IF_ERROR(CheckRenderable(pos, uops[pos]));
  return RenderProgram(uops);
}

}  // namespace uopc
