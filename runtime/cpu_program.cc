#include "runtime/cpu_program.h"

#include <chrono>
#include <climits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {

bool TakesCoreId(const ProgramSpec& spec) { return spec.global_size.has_value(); }

absl::Status CpuProgram::Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                                const LaunchParams& params, double* seconds) {
  UOPC_RETURN_IF_ERROR(CheckArguments(device_, buffers, var_values));
  const bool split = TakesCoreId(spec());
  for (int i = 0; i < 3; ++i) {
    if (params.local_size[i] != 1) {
      return absl::InvalidArgumentError(
          absl::StrCat(device_.name(), " has no local dims: local sizes must be 1"));
    }
    if (params.global_size[i] != 1 && (!split || i > 0 || params.global_size[i] < 1)) {
      return absl::InvalidArgumentError(
          absl::StrCat(spec().name, " on ", device_.name(),
                       split ? ": a kernel split across cores takes a global size (n, 1, 1) with n >= 1"
                             : ": a kernel that is not split across cores takes global size (1, 1, 1)"));
    }
  }
  if (params.global_size[0] > INT_MAX) return absl::OutOfRangeError("too many core ids for an int");
  std::vector<void*> pointers(buffers.size());
  for (size_t i = 0; i < buffers.size(); ++i) pointers[i] = buffers[i]->handle();
  std::vector<int> ints(var_values.size());
  for (size_t i = 0; i < var_values.size(); ++i) {
    if (var_values[i] < INT_MIN || var_values[i] > INT_MAX) {
      return absl::OutOfRangeError(
          absl::StrCat("variable ", spec().vars[i], " = ", var_values[i], " does not fit the kernel's int"));
    }
    ints[i] = static_cast<int>(var_values[i]);
  }
  const auto start = std::chrono::steady_clock::now();
  if (params.global_size[0] == 1) {
    entry_(pointers.data(), ints.data(), 0);
  } else {
    pool_->Run(params.global_size[0],
               [&](int64_t core_id) { entry_(pointers.data(), ints.data(), static_cast<int>(core_id)); });
  }
  if (seconds != nullptr) {
    *seconds = SecondsSince(start);
  }
  return absl::OkStatus();
}

}  // namespace uopc
