#include "runtime/interp_device.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/interp.h"
#include "runtime/registry.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

class InterpProgram : public Program {
 public:
  InterpProgram(Device& device, const ProgramSpec& spec, InterpretedProgram program)
      : Program(spec), device_(device), program_(std::move(program)) {}

  absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                      const LaunchParams& params, double* seconds) override {
    UOPC_RETURN_IF_ERROR(CheckArguments(device_, buffers, var_values));
    // The interpreter finds buffers by DEFINE_GLOBAL arg; parameter i is spec().globals[i].
    int64_t max_arg = -1;
    for (int64_t arg : spec().globals) max_arg = std::max(max_arg, arg);
    std::vector<InterpBuffer> by_arg(max_arg + 1);
    for (size_t i = 0; i < buffers.size(); ++i) {
      by_arg[spec().globals[i]] = {buffers[i]->handle(), buffers[i]->size(), buffers[i]->dtype()};
    }
    absl::flat_hash_map<std::string, int64_t> vars;
    for (size_t i = 0; i < var_values.size(); ++i) vars[spec().vars[i]] = var_values[i];
    LaunchDims dims{params.global_size, params.local_size};
    const auto start = std::chrono::steady_clock::now();
    absl::Status s = program_.Run(by_arg, vars, dims);
    if (seconds != nullptr) {
      *seconds = SecondsSince(start);
    }
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat(spec().name, ": ", s.message()));
    return absl::OkStatus();
  }

 private:
  Device& device_;
  InterpretedProgram program_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Program>> InterpDevice::LoadProgram(const ProgramSpec& spec,
                                                                   absl::string_view lib) {
  if (spec.uops.empty())
    return absl::InvalidArgumentError(absl::StrCat(spec.name, ": INTERP runs uops, and the spec has none"));
  absl::StatusOr<InterpretedProgram> program = InterpretedProgram::Create(spec.uops);
  if (!program.ok()) {
    return absl::Status(program.status().code(), absl::StrCat(spec.name, ": ", program.status().message()));
  }
  return std::unique_ptr<Program>(new InterpProgram(*this, spec, *std::move(program)));
}

namespace {

// Linking //runtime:interp is what makes "INTERP" a device of the program (runtime/registry.h).
const bool interp_registered = RegisterDevice(
    "INTERP", []() -> absl::StatusOr<std::unique_ptr<Device>> { return std::make_unique<InterpDevice>(); });

}  // namespace
}  // namespace uopc
