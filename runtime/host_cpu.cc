#include "runtime/host_cpu.h"

#include <fstream>
#include <iostream>
#include <mutex>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "uop/util.h"

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

int HostKernelVectorWidth() {
  const std::string style = EnvString("UOPC_KERNELS", "fast");
  if (style == "tinygrad") return 1;
  if (style != "fast") {
    static std::once_flag warned;
    std::call_once(warned, [&] {
      std::cerr << "uopc: UOPC_KERNELS=" << style << " is neither fast nor tinygrad; using fast\n";
    });
  }
  return 16;
}

}  // namespace uopc
