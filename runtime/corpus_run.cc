#include "runtime/corpus_run.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "runtime/corpus_values.h"
#include "runtime/exec_item.h"
#include "uop/status_macros.h"

namespace uopc {

using nlohmann::json;

absl::StatusOr<json> RunOnCorpusInputs(const UOpPtr& ast, const json& vars, Device& device,
                                       const CompileOptions& options) {
  if (device.renderer() == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(device.name(), " has no codegen target"));
  }
  return RunOnCorpusInputs(ast, vars, device, *device.renderer(), options);
}

absl::StatusOr<json> RunOnCorpusInputs(const UOpPtr& ast, const json& vars, Device& device,
                                       const Renderer& renderer, const CompileOptions& options,
                                       const json& inputs) {
  if (!inputs.is_null() && !inputs.is_object()) {
    return absl::InvalidArgumentError("inputs must be an object {\"ARG\": [values]}");
  }
  KernelNameCounter names;  // each line runs as if alone
  UOPC_ASSIGN_OR_RETURN(ProgramSpec spec, CompileKernel(ast, renderer, options, &names));
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, device.CreateProgram(spec));

  // One buffer per DEFINE_GLOBAL of the AST, filled by the corpus formula.
  absl::flat_hash_map<int64_t, Buffer> buffers;
  for (const UOp* u : ast->Toposort()) {
    if (u->op() != Ops::DEFINE_GLOBAL || buffers.contains(u->arg().as_int())) continue;
    const int64_t arg = u->arg().as_int(), size = u->dtype().ptr_size();
    const DType dtype = u->dtype().base().scalar();
    if (size < 0) return absl::InvalidArgumentError(absl::StrCat("buffer ", arg, " has no size"));
    UOPC_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, dtype, size));
    std::vector<uint8_t> bytes;
    if (const std::string key = absl::StrCat(arg); inputs.is_object() && inputs.contains(key)) {
      absl::StatusOr<std::vector<uint8_t>> given = CorpusBytesFromJson(dtype, inputs[key], size);
      if (!given.ok())
        return absl::InvalidArgumentError(absl::StrCat("input ", key, ": ", given.status().message()));
      bytes = *std::move(given);
    } else {
      bytes = CorpusInputBytes(dtype, arg, size);
    }
    UOPC_RETURN_IF_ERROR(b.CopyIn(bytes));
    buffers.emplace(arg, std::move(b));
  }
  if (inputs.is_object()) {
    for (const auto& [key, values] : inputs.items()) {
      bool known = false;
      for (const auto& [arg, b] : buffers) known = known || absl::StrCat(arg) == key;
      if (!known)
        return absl::InvalidArgumentError(absl::StrCat("input ", key, ": the kernel has no buffer ", key));
    }
  }
  std::vector<Buffer*> params;
  for (int64_t arg : spec.globals) {
    auto it = buffers.find(arg);
    if (it == buffers.end())
      return absl::InternalError(absl::StrCat("the program uses buffer ", arg, ", the AST does not"));
    params.push_back(&it->second);
  }
  std::vector<int64_t> var_values;
  for (const std::string& name : spec.vars) {
    if (!vars.is_object() || !vars.contains(name) || !vars[name].is_number_integer()) {
      return absl::InvalidArgumentError(absl::StrCat("the kernel needs a value for variable ", name,
                                                     " (give \"vars\": {\"", name, "\": N})"));
    }
    var_values.push_back(vars[name].get<int64_t>());
  }
  absl::flat_hash_map<std::string, int64_t> values;
  for (size_t i = 0; i < spec.vars.size(); ++i) values[spec.vars[i]] = var_values[i];
  UOPC_ASSIGN_OR_RETURN(LaunchParams launch, LaunchDims(spec, values));
  UOPC_RETURN_IF_ERROR(program->Launch(params, var_values, launch));
  UOPC_RETURN_IF_ERROR(device.Synchronize());

  json outputs = json::object();
  for (int64_t arg : spec.outs) {
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers.at(arg).ToBytes());
    UOPC_ASSIGN_OR_RETURN(json values, CorpusJsonFromBytes(buffers.at(arg).dtype(), bytes));
    outputs[absl::StrCat(arg)] = std::move(values);
  }
  return outputs;
}

}  // namespace uopc
