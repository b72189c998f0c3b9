#include "runtime/registry.h"

#include <algorithm>
#include <cstdlib>
#include <mutex>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

struct Entry {
  DeviceFactory factory;
  std::unique_ptr<Device> device;
};

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, Entry> entries;  // guarded by mutex
};

// uopc's devices and the targets that link them, for the error when a program asks for one it lacks.
constexpr struct {
  const char* name;
  const char* target;
} kDeviceTargets[] = {
    {"CPU", "//runtime:cpu"},   {"CUDA", "//runtime:cuda"},     {"INTERP", "//runtime:interp"},
    {"LLVM", "//runtime:llvm"}, {"OPENCL", "//runtime:opencl"},
};

// realize.cc's holder of host values (tinygrad's PYTHON buffers): it runs no kernels, so it is never the
// default.
constexpr absl::string_view kHostDataDevice = "PYTHON";

// Never destroyed: devices may be used from static destructors, and programs must not outlive their device.
Registry& TheRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace

std::string CanonicalDeviceName(absl::string_view name) {
  std::string upper = absl::AsciiStrToUpper(name);
  if (absl::EndsWith(upper, ":0")) upper.resize(upper.size() - 2);
  return upper;
}

bool RegisterDevice(absl::string_view name, DeviceFactory factory) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  Entry& entry = registry.entries[CanonicalDeviceName(name)];
  if (entry.device != nullptr) return false;
  entry.factory = std::move(factory);
  return true;
}

absl::StatusOr<Device*> GetDevice(absl::string_view name) {
  Registry& registry = TheRegistry();
  std::string canonical = CanonicalDeviceName(name);
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.entries.find(canonical);
  // "CPU:1" is another instance of CPU, with its own memory (tinygrad's device index), made by CPU's factory.
  if (std::pair<absl::string_view, absl::string_view> kind_index = absl::StrSplit(canonical, ':');
      it == registry.entries.end() && !kind_index.second.empty()) {
    int index = 0;
    auto kind = registry.entries.find(kind_index.first);
    if (absl::SimpleAtoi(kind_index.second, &index) && index > 0 && kind != registry.entries.end()) {
      DeviceFactory factory = kind->second.factory;
      it = registry.entries.emplace(canonical, Entry{}).first;
      it->second.factory = std::move(factory);
    }
  }
  if (it == registry.entries.end()) {
    for (const auto& [device, target] : kDeviceTargets) {
      if (canonical == device) {
        return absl::NotFoundError(absl::StrCat("device \"", canonical,
                                                "\" is not linked into this program: add ", target,
                                                " to its deps (or //runtime for every device)"));
      }
    }
    std::vector<std::string> known;
    for (const auto& [n, e] : registry.entries) known.push_back(n);
    std::sort(known.begin(), known.end());
    return absl::NotFoundError(
        absl::StrCat("no device '", name, "' (known: ", absl::StrJoin(known, ", "), ")"));
  }
  Entry& entry = it->second;
  if (entry.device == nullptr) {
    UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Device> device, entry.factory());
    if (device == nullptr)
      return absl::InternalError(absl::StrCat("the factory of ", canonical, " made nothing"));
    device->name_ = canonical;  // an instance of a kind ("CPU:1") is named for its index
    entry.device = std::move(device);
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

std::string DefaultDeviceName() {
  std::vector<std::string> names = RegisteredDevices();
  std::erase(names, std::string(kHostDataDevice));
  for (const std::string& name : names) {
    if (EnvInt(name, 0) == 1) return name;
  }
  if (std::find(names.begin(), names.end(), "CPU") != names.end()) return "CPU";
  for (const std::string& name : names) {
    if (GetDevice(name).ok()) return name;
  }
  return "CPU";
}

}  // namespace uopc
