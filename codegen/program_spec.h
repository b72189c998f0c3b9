// ProgramSpec: one compiled kernel as codegen hands it to a device (tinygrad's ProgramSpec): the function's
// name, its rendered source (for devices that compile it), its linear uops (for devices that interpret them),
// its parameters, its launch dims and the opts that made it.
#ifndef UOPC_CODEGEN_PROGRAM_SPEC_H_
#define UOPC_CODEGEN_PROGRAM_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/opt.h"
#include "uop/uop.h"

namespace uopc {

// What a device needs to make a Program (tinygrad's ProgramSpec): the kernel's function name, its rendered
// source (for compiling devices), its linear uops (for interpreting ones), the DEFINE_GLOBAL args in
// parameter order and the DEFINE_VAR names in parameter order.
struct ProgramSpec {
  // (Initializers everywhere, so `ProgramSpec{.name = ..., .src = ...}` may leave fields out without
  // warnings.)
  std::string name = {};
  std::string src = {};
  std::vector<UOpPtr> uops = {};
  std::vector<int64_t> globals = {};  // DEFINE_GLOBAL args, in the kernel's parameter order
  std::vector<std::string> vars =
      {};  // DEFINE_VAR names, in the kernel's parameter order (after the buffers)
  // Launch dims as rendered; nullopt on the CPU.
  std::optional<std::vector<int64_t>> global_size = std::nullopt, local_size = std::nullopt;
  // What codegen made of the kernel besides the program: the opts it applied, and the buffers the program
  // stores to and loads from (DEFINE_GLOBAL args, sorted).
  std::vector<Opt> applied_opts = {};
  std::vector<int64_t> outs = {}, ins = {};

  // name from the SINK's KernelInfo (the last uop); globals and vars from the DEFINE_GLOBAL and DEFINE_VAR
  // uops in program order (the renderers' parameter order); launch dims, when not given, from the SPECIAL
  // uops (tinygrad's ProgramSpec.__post_init__). Errors: no SINK with a KernelInfo last, a symbolic SPECIAL
  // size.
  static absl::StatusOr<ProgramSpec> FromUops(std::vector<UOpPtr> uops, std::string src,
                                              std::optional<std::vector<int64_t>> global_size = std::nullopt,
                                              std::optional<std::vector<int64_t>> local_size = std::nullopt);
};

}  // namespace uopc

#endif  // UOPC_CODEGEN_PROGRAM_SPEC_H_
