// The devices by name (tinygrad's `Device["CPU"]`): each is made on first use and lives for the process.
//
// Built in: "CPU" (clang), "INTERP" (the interpreter), "LLVM" (LLVM 19's JIT), "OPENCL" (the OpenCL ICD, POCL
// here) and "CUDA" (the driver and NVRTC, loaded at run time); making one that is not available here is an
// error saying why. Another runtime registers a factory, from a static initializer in an alwayslink library
// or from main():
//
//   RegisterDevice("MYDEV", [] { return MakeMyDevice(); });
//   absl::StatusOr<Device*> d = GetDevice("interp");   // names are case-insensitive; ":0" is dropped
#ifndef UOPC_RUNTIME_REGISTRY_H_
#define UOPC_RUNTIME_REGISTRY_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "runtime/device.h"

namespace uopc {

using DeviceFactory = std::function<absl::StatusOr<std::unique_ptr<Device>>()>;

// Adds (or replaces, while the device has not been made yet) the factory for `name`. Returns false when the
// device already exists. Thread safe.
bool RegisterDevice(absl::string_view name, DeviceFactory factory);

// The device called `name` (tinygrad's canonical form: upper case, "CPU:0" is "CPU"), made on first use.
// Errors: an unknown name, or the factory's error (not cached: a later call tries again).
absl::StatusOr<Device*> GetDevice(absl::string_view name);

// The registered names, sorted.
std::vector<std::string> RegisteredDevices();

}  // namespace uopc

#endif  // UOPC_RUNTIME_REGISTRY_H_
