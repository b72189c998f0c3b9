// The registry in a program that links one device (INTERP, //runtime:interp) and not the others: only the
// linked device is registered, asking for another names the target that would link it, and the default device
// is picked from what is linked.
#include "runtime/registry.h"

#include <cstdlib>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/interp_device.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LinkedDevicesTest, OnlyTheLinkedDeviceIsRegistered) {
  EXPECT_THAT(RegisteredDevices(), ElementsAre("INTERP"));
  absl::StatusOr<Device*> interp = GetDevice("interp");
  ASSERT_TRUE(interp.ok()) << interp.status();
  EXPECT_EQ((*interp)->name(), "INTERP");
}

TEST(LinkedDevicesTest, AnUnlinkedDeviceNamesItsTarget) {
  absl::StatusOr<Device*> llvm = GetDevice("LLVM");
  EXPECT_EQ(llvm.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(
      llvm.status().message(),
      "device \"LLVM\" is not linked into this program: add //runtime:llvm to its deps (or //runtime for "
      "every device)");
  for (const auto& [name, target] :
       {std::pair{"cpu:0", "//runtime:cpu"}, {"OpenCL", "//runtime:opencl"}, {"CUDA", "//runtime:cuda"}}) {
    EXPECT_THAT(GetDevice(name).status().message(), HasSubstr("add " + std::string(target) + " to its deps"));
  }
  // A name uopc does not know is a different mistake: the message lists what there is.
  EXPECT_EQ(GetDevice("TPU").status().message(), "no device 'TPU' (known: INTERP)");
}

TEST(LinkedDevicesTest, TheDefaultIsALinkedDevice) {
  unsetenv("INTERP");
  // CPU is not linked, so the default is the device that is.
  EXPECT_EQ(DefaultDeviceName(), "INTERP");
  // The environment names a device only among the linked ones.
  setenv("LLVM", "1", 1);
  EXPECT_EQ(DefaultDeviceName(), "INTERP");
  unsetenv("LLVM");

  ASSERT_TRUE(RegisterDevice("SECOND", []() -> absl::StatusOr<std::unique_ptr<Device>> {
    return std::unique_ptr<Device>(std::make_unique<InterpDevice>());
  }));
  setenv("SECOND", "1", 1);
  EXPECT_EQ(DefaultDeviceName(), "SECOND");
  setenv("SECOND", "0", 1);
  EXPECT_EQ(DefaultDeviceName(), "INTERP");
  unsetenv("SECOND");
}

}  // namespace
}  // namespace uopc
