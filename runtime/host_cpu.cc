#include "runtime/host_cpu.h"

#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace uopc {

std::string HostCpuIdentity() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, model, flags;
  while (std::getline(cpuinfo, line) && (model.empty() || flags.empty())) {
    if (model.empty() && absl::StartsWith(line, "model name")) model = line;
    if (flags.empty() && (absl::StartsWith(line, "flags") || absl::StartsWith(line, "Features")))
      flags = line;
  }
  return absl::StrCat(model, "\n", flags);
}

}  // namespace uopc
