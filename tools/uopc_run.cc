// uopc run: compiles kernel ASTs and runs them once on a device, on the codegen corpus's inputs.
//
//   uopc run --jsonl [--device=CPU|INTERP] [--noopt] FILE|-
//
// Every input line {"id", "ast", ["vars": {"name": value}]} (the codegen corpus's lines work as they are)
// gives one output line {"id", "outputs": {"ARG": [values]}} holding every buffer the kernel stores to, or
// {"id", "error"}. Each buffer starts filled by the corpus formula (value(dtype, arg, j), corpus README
// section 6); values print in the corpus's JSON conventions, so the output compares with the corpus's
// `outputs`.
#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
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
#include "uop/text_ir.h"

ABSL_DECLARE_FLAG(bool, jsonl);
ABSL_DECLARE_FLAG(bool, noopt);
ABSL_FLAG(std::string, device, "CPU", "run: the device: CPU, INTERP, LLVM, OPENCL or CUDA");
ABSL_DECLARE_FLAG(std::string, target);

namespace uopc {

using nlohmann::json;

absl::Status RunRun(absl::Span<const std::string> args, std::ostream& out) {
  if (!absl::GetFlag(FLAGS_jsonl)) return UsageError("run reads JSON lines: give --jsonl");
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
    absl::StatusOr<std::unique_ptr<Renderer>> r = RendererForTarget(target);
    if (!r.ok()) return r.status();
    chosen = *std::move(r);
    renderer = chosen.get();
  }
  if (renderer == nullptr) return UsageError(absl::StrCat((*device)->name(), " has no codegen target"));
  CompileOptions options;
  options.optimize = !absl::GetFlag(FLAGS_noopt);
  absl::StatusOr<std::string> text = ReadInputText(args[0]);
  if (!text.ok()) return text.status();
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(*text, '\n', absl::SkipWhitespace())) {
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
                   RunOnCorpusInputs(*ast, record.value("vars", json()), **device, *renderer, options);
               !outputs.ok()) {
      error = outputs.status();
    } else {
      outputs_json = *std::move(outputs);
    }
    // {"id": ..., "outputs": ...} or {"id": ..., "error": ...}, id first, in the corpus's JSON conventions.
    out << "{\"id\": " << CorpusJsonText(id) << ", "
        << (error.ok() ? "\"outputs\": " + CorpusJsonText(outputs_json)
                       : "\"error\": " + CorpusJsonText(json(std::string(error.message()))))
        << "}\n";
  }
  return absl::OkStatus();
}

}  // namespace uopc
