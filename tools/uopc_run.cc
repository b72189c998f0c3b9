// uopc run: compiles kernel ASTs and runs them once on a device, on the codegen corpus's inputs or given
// ones.
//
//   uopc run [--device=CPU|INTERP|...] [--noopt] [--inputs=JSON|@FILE] [--bind='n=3,m=4'] FILE.uop|-
//   uopc run --jsonl [--device=CPU|INTERP|...] [--noopt] FILE|-
//
// FILE.uop holds one kernel AST in the textual IR; the output is one JSON object {"ARG": [values]} holding
// every buffer the kernel stores to. Every buffer starts filled by the corpus formula (value(dtype, arg, j),
// corpus README section 6) unless --inputs gives its values ({"1": [1, 2, 3]}: exactly the buffer's size);
// --bind gives the kernel's variables.
//
// With --jsonl, every input line {"id", "ast", ["vars": {"name": value}], ["inputs": {"ARG": [values]}]} (the
// codegen corpus's lines work as they are) gives one output line {"id", "outputs": {"ARG": [values]}} or
// {"id", "error"}; uopc exits 1 when any line failed. Values print in the corpus's JSON conventions, so the
// output compares with the corpus's `outputs` (docs/jsonl.md).
#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "nlohmann/json.hpp"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/device.h"
#include "runtime/registry.h"
#include "tools/uopc_subcommand.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

ABSL_DECLARE_FLAG(bool, jsonl);
ABSL_DECLARE_FLAG(bool, noopt);
ABSL_FLAG(std::string, device, "CPU", "run: the device: CPU, INTERP, LLVM, OPENCL or CUDA");
ABSL_DECLARE_FLAG(std::string, target);
ABSL_FLAG(std::string, inputs, "",
          "run: values of input buffers as JSON {\"ARG\": [values]}, or @FILE holding it (one-kernel mode)");
ABSL_FLAG(std::string, bind, "", "run: values of the kernel's variables, 'name=value,...' (one-kernel mode)");

namespace uopc {

using nlohmann::json;

namespace {

// --bind='n=3,m=4' as {"n": 3, "m": 4}.
absl::StatusOr<json> ParseBindings(absl::string_view text) {
  json vars = json::object();
  for (absl::string_view part : absl::StrSplit(text, absl::ByAnyChar(", "), absl::SkipEmpty())) {
    std::pair<absl::string_view, absl::string_view> kv = absl::StrSplit(part, absl::MaxSplits('=', 1));
    int64_t value = 0;
    if (kv.first.empty() || !absl::SimpleAtoi(kv.second, &value)) {
      return UsageError(absl::StrCat("--bind: expected name=integer, got '", part, "'"));
    }
    vars[std::string(kv.first)] = value;
  }
  return vars;
}

// --inputs: JSON text, or @FILE.
absl::StatusOr<json> ParseInputs(const std::string& flag) {
  if (flag.empty()) return json();
  std::string text = flag;
  if (flag[0] == '@') {
    UOPC_ASSIGN_OR_RETURN(text, ReadInputText(flag.substr(1)));
  }
  json inputs = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (inputs.is_discarded() || !inputs.is_object()) {
    return UsageError("--inputs: expected a JSON object {\"ARG\": [values], ...}");
  }
  return inputs;
}

// One kernel AST from a .uop file, run once; prints {"ARG": [values]}.
absl::Status RunOneKernel(const std::string& path, Device& device, const Renderer& renderer,
                          const CompileOptions& options, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(json vars, ParseBindings(absl::GetFlag(FLAGS_bind)));
  UOPC_ASSIGN_OR_RETURN(json inputs, ParseInputs(absl::GetFlag(FLAGS_inputs)));
  UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(path));
  if (file.roots.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(file.name, ": expected one kernel AST, found ",
                                                   file.roots.size(), " graphs (--jsonl runs many)"));
  }
  absl::StatusOr<json> outputs = RunOnCorpusInputs(file.roots[0], vars, device, renderer, options, inputs);
  if (!outputs.ok())
    return absl::Status(outputs.status().code(), absl::StrCat(file.name, ": ", outputs.status().message()));
  out << CorpusJsonText(*outputs) << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::Status RunRun(absl::Span<const std::string> args, std::ostream& out) {
  absl::StatusOr<Device*> device = GetDevice(absl::GetFlag(FLAGS_device));
  if (!device.ok()) {
    return UsageError(absl::StrCat(device.status().message(),
                                   " (devices: ", absl::StrJoin(RegisteredDevices(), ", "), ")"));
  }
  // INTERP runs any target's program (--target); every other device runs its own target's.
  std::unique_ptr<Renderer> chosen;
  const Renderer* renderer = (*device)->renderer();
  const std::string target = absl::GetFlag(FLAGS_target);
  if ((*device)->name() != "INTERP" && target != "clang") {
    return UsageError("--target is for --device=INTERP (every other device runs its own target's programs)");
  }
  if ((*device)->name() == "INTERP" && target != "clang") {
    UOPC_ASSIGN_OR_RETURN(chosen, RendererForTarget(target));
    renderer = chosen.get();
  }
  if (renderer == nullptr) return UsageError(absl::StrCat((*device)->name(), " has no codegen target"));
  CompileOptions options;
  options.optimize = !absl::GetFlag(FLAGS_noopt);
  if (!absl::GetFlag(FLAGS_jsonl)) return RunOneKernel(args[0], **device, *renderer, options, out);
  if (!absl::GetFlag(FLAGS_inputs).empty() || !absl::GetFlag(FLAGS_bind).empty()) {
    return UsageError("--inputs and --bind are for one kernel; JSON lines give \"inputs\" and \"vars\"");
  }
  UOPC_ASSIGN_OR_RETURN(std::string text, ReadInputText(args[0]));
  int line_number = 0, failed = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++line_number;
    json record = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    const json id = record.is_object() ? record.value("id", json()) : json();
    json outputs_json;
    absl::Status error;
    if (record.is_discarded() || !record.is_object()) {
      error = absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": not a JSON object"));
    } else if (!record.contains("ast") || !record["ast"].is_string()) {
      error = absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": missing \"ast\""));
    } else if (absl::StatusOr<UOpPtr> ast = ParseIrSingle(record["ast"].get<std::string>()); !ast.ok()) {
      error = absl::InvalidArgumentError(absl::StrCat("ast:", ast.status().message()));
    } else if (absl::StatusOr<json> outputs =
                   RunOnCorpusInputs(*ast, record.value("vars", json()), **device, *renderer, options,
                                     record.value("inputs", json()));
               !outputs.ok()) {
      error = outputs.status();
    } else {
      outputs_json = *std::move(outputs);
    }
    failed += error.ok() ? 0 : 1;
    // {"id": ..., "outputs": ...} or {"id": ..., "error": ...}, id first, in the corpus's JSON conventions.
    out << "{\"id\": " << CorpusJsonText(id) << ", "
        << (error.ok() ? "\"outputs\": " + CorpusJsonText(outputs_json)
                       : "\"error\": " + CorpusJsonText(json(std::string(error.message()))))
        << "}\n";
  }
  return JsonlStatus(args[0], failed, line_number);
}

}  // namespace uopc
