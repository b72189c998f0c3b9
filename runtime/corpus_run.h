// A kernel run on the codegen corpus's inputs: compile an AST for a device, fill every buffer with the corpus
// formula (value(dtype, arg, j), shared/reference/tinygrad-v0.10.3/corpus/README.md section 6), run it once,
// and read back every buffer it stores to as JSON in the corpus's conventions. `uopc run` and the corpus
// tests use it, so what the tests check is what users run.
//
//   absl::StatusOr<nlohmann::json> out = RunOnCorpusInputs(ast, **GetDevice("CPU"), CompileOptions{});
//   // *out == {"0": [2.0, 4.5, ...]}
#ifndef UOPC_RUNTIME_CORPUS_RUN_H_
#define UOPC_RUNTIME_CORPUS_RUN_H_

#include "absl/status/statusor.h"
#include "codegen/codegen.h"
#include "nlohmann/json.hpp"
#include "runtime/device.h"
#include "uop/uop.h"

namespace uopc {

// {"ARG": [values]} for every buffer the kernel stores to. `vars` gives each DEFINE_VAR's value by name (an
// object; null when the kernel has none). Errors: codegen's, the device's, a variable without a value.
absl::StatusOr<nlohmann::json> RunOnCorpusInputs(const UOpPtr& ast, const nlohmann::json& vars,
                                                 Device& device, const CompileOptions& options);
// The same, compiled for `renderer` instead of the device's own target (INTERP runs any target's program:
// `--target` of `uopc run`). `inputs` ({"ARG": [values]}, null for none) replaces the formula's values of the
// buffers it names (CorpusBytesFromJson: exactly the buffer's size, in the corpus's JSON conventions).
absl::StatusOr<nlohmann::json> RunOnCorpusInputs(const UOpPtr& ast, const nlohmann::json& vars,
                                                 Device& device, const Renderer& renderer,
                                                 const CompileOptions& options,
                                                 const nlohmann::json& inputs = nullptr);

}  // namespace uopc

#endif  // UOPC_RUNTIME_CORPUS_RUN_H_
