// The devices by name (tinygrad's `Device["CPU"]`): each is made on first use and lives for the process.
//
// A program has the devices it links. Each is its own target, whose library registers the device from a
// static initializer (alwayslink = 1): //runtime:cpu ("CPU", clang), //runtime:llvm ("LLVM", LLVM 19's JIT),
// //runtime:opencl ("OPENCL", the OpenCL ICD, POCL here), //runtime:cuda ("CUDA", the driver and NVRTC,
// loaded at run time) and //runtime:interp ("INTERP", the interpreter). //runtime links them all;
// //runtime:core none. Asking for a device that is not linked is an error naming its target; making one that
// is linked but not available here is an error saying why. Another runtime registers its factory the same
// way, from a static initializer in an alwayslink library or from main():
//
//   const bool registered = RegisterDevice("MYDEV", [] { return MakeMyDevice(); });
//   absl::StatusOr<Device*> d = GetDevice("interp");   // names are case-insensitive; ":0" is dropped
//   absl::StatusOr<Device*> d1 = GetDevice("CPU:1");   // a second CPU, with its own memory and programs
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
// "KIND:N" with N > 0 is another instance of a registered KIND, made by its factory (tinygrad's device
// index: sharded tensors run on "CPU" and "CPU:1").
// Errors: a uopc device that is not linked into this program (naming the target to add), another unknown
// name, or the factory's error (not cached: a later call tries again).
absl::StatusOr<Device*> GetDevice(absl::string_view name);

// tinygrad's Device.canonicalize: upper case, without an index of 0 ("cpu:0" is "CPU", "cpu:1" "CPU:1").
std::string CanonicalDeviceName(absl::string_view name);

// The registered names, sorted.
std::vector<std::string> RegisteredDevices();

// The device a program uses when it names none (tinygrad's Device.DEFAULT), from what is linked: the first
// registered device set to 1 in the environment (`LLVM=1`), else CPU when it is linked (uopc's default;
// tinygrad prefers a GPU), else the first registered device that opens. "CPU" when none does, so that using
// it names the target to link.
std::string DefaultDeviceName();

}  // namespace uopc

#endif  // UOPC_RUNTIME_REGISTRY_H_
