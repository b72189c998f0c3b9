#include "runtime/registry.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "renderer/gpu_cstyle.h"
#include "runtime/cpu_device.h"
#include "runtime/cuda_device.h"
#include "runtime/interp_device.h"
#include "runtime/llvm_device.h"
#include "runtime/opencl_device.h"

namespace uopc {
namespace {

struct Entry {
  DeviceFactory factory;
  std::unique_ptr<Device> device;
};

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, Entry> entries;  // guarded by mutex

  Registry() {
    entries["CPU"].factory = []() -> absl::StatusOr<std::unique_ptr<Device>> {
      return std::make_unique<CpuDevice>();
    };
    entries["INTERP"].factory = []() -> absl::StatusOr<std::unique_ptr<Device>> {
      return std::make_unique<InterpDevice>();
    };
    entries["LLVM"].factory = []() { return MakeLLVMDevice(); };
    entries["OPENCL"].factory = []() {
      OpenCLDeviceOptions options;
      options.renderer = std::shared_ptr<const Renderer>(MakeOpenCLRenderer());
      return MakeOpenCLDevice(options);
    };
    // CUDA C for sm_80 (tinygrad's tensor cores need it), or $UOPC_CUDA_ARCH.
    entries["CUDA"].factory = []() {
      const char* arch = std::getenv("UOPC_CUDA_ARCH");
      CudaDeviceOptions options;
      options.renderer = std::shared_ptr<const Renderer>(MakeCUDARenderer(arch != nullptr ? arch : "sm_80"));
      return MakeCudaDevice(options);
    };
  }
};

// Never destroyed: devices may be used from static destructors, and programs must not outlive their device.
Registry& TheRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

std::string Canonical(absl::string_view name) {
  std::string upper = absl::AsciiStrToUpper(name);
  if (absl::EndsWith(upper, ":0")) upper.resize(upper.size() - 2);
  return upper;
}

}  // namespace

bool RegisterDevice(absl::string_view name, DeviceFactory factory) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  Entry& entry = registry.entries[Canonical(name)];
  if (entry.device != nullptr) return false;
  entry.factory = std::move(factory);
  return true;
}

absl::StatusOr<Device*> GetDevice(absl::string_view name) {
  Registry& registry = TheRegistry();
  std::string canonical = Canonical(name);
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.entries.find(canonical);
  if (it == registry.entries.end()) {
    std::vector<std::string> known;
    for (const auto& [n, e] : registry.entries) known.push_back(n);
    std::sort(known.begin(), known.end());
    return absl::NotFoundError(
        absl::StrCat("no device '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
  }
  Entry& entry = it->second;
  if (entry.device == nullptr) {
    absl::StatusOr<std::unique_ptr<Device>> device = entry.factory();
    if (!device.ok()) return device.status();
    if (*device == nullptr)
      return absl::InternalError(absl::StrCat("the factory of ", canonical, " made nothing"));
    entry.device = *std::move(device);
  }
  return entry.device.get();
}

std::vector<std::string> RegisteredDevices() {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  std::vector<std::string> names;
  for (const auto& [name, entry] : registry.entries) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace uopc
