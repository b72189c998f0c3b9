// The device interface without a compiler: a stand-in for the INTERP device, which runs spec.uops.
#include "runtime/device.h"

#include <cstring>
#include <iostream>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/registry.h"
#include "uop/kernel_info.h"
#include "uop/status_macros.h"
#include "uop/uop.h"

namespace uopc {
namespace {

// "Runs" a linear program by writing, into buffer 0 (int32), the number of uops and then each variable value.
class UopCountingProgram : public Program {
 public:
  UopCountingProgram(const Device& device, ProgramSpec spec) : Program(std::move(spec)), device_(device) {}
  absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                      const LaunchParams& params, double* seconds) override {
    UOPC_RETURN_IF_ERROR(CheckArguments(device_, buffers, var_values));
    std::vector<int32_t> out(buffers[0]->size(), 0);
    out[0] = static_cast<int32_t>(spec().uops.size());
    for (size_t i = 0; i < var_values.size() && i + 1 < out.size(); ++i) out[i + 1] = var_values[i];
    if (seconds != nullptr) *seconds = 0;
    return buffers[0]->CopyIn(
        absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(out.data()), out.size() * 4));
  }

 private:
  const Device& device_;
};

class UopDevice : public Device {
 public:
  UopDevice() : Device("UOPS") {}
  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return nullptr; }
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                       absl::string_view lib) override {
    if (spec.uops.empty()) return absl::InvalidArgumentError("this device runs uops");
    return std::unique_ptr<Program>(std::make_unique<UopCountingProgram>(*this, spec));
  }

 private:
  HostAllocator allocator_;
  SourceCompiler compiler_;
};

TEST(DeviceTest, ADeviceThatRunsUops) {
  ASSERT_TRUE(RegisterDevice(
      "uops", [] { return absl::StatusOr<std::unique_ptr<Device>>(std::make_unique<UopDevice>()); }));
  absl::StatusOr<Device*> device = GetDevice("UOPS");
  ASSERT_TRUE(device.ok()) << device.status();

  UOpPtr g0 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(), {}, Arg(0));
  UOpPtr n = UOp::Variable("n", 0, 100);
  KernelInfo info;
  info.name = "k";
  absl::StatusOr<ProgramSpec> spec = ProgramSpec::FromUops({g0, n, UOp::Sink({}, KernelInfoAsArg(info))}, "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  absl::StatusOr<std::unique_ptr<Program>> program = (*device)->CreateProgram(*spec);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ((*device)->compiler().stats().compiles, 1);

  absl::StatusOr<Buffer> out = Buffer::Allocate(**device, dtypes::kInt32, 2);
  ASSERT_TRUE(out.ok());
  double seconds = -1;
  ASSERT_TRUE((*program)->Launch({&*out}, {42}, LaunchParams{}, &seconds).ok());
  std::vector<uint8_t> bytes = out->ToBytes().value();
  int32_t got[2];
  std::memcpy(got, bytes.data(), sizeof(got));
  EXPECT_EQ(got[0], 3);
  EXPECT_EQ(got[1], 42);
  EXPECT_EQ(seconds, 0);
  EXPECT_THAT((*program)->Launch({&*out}, {}, LaunchParams{}).message(),
              ::testing::HasSubstr("variable values"));
  EXPECT_FALSE((*device)->CreateProgram(ProgramSpec{.name = "k", .src = "no uops"}).ok());
}

// DeviceMemoryUsed (the DEBUG=2 line's `mem`) counts every device's buffers from allocation to release, once
// however often a buffer is moved. Devices not available here (CUDA without a GPU) are skipped.
TEST(DeviceTest, MemoryUsedCountsBuffersOnEveryDevice) {
  int counted = 0;
  for (const std::string& name : RegisteredDevices()) {
    absl::StatusOr<Device*> device = GetDevice(name);
    if (!device.ok()) {
      std::cout << name << " skipped: " << device.status() << "\n";
      continue;
    }
    SCOPED_TRACE(name);
    const int64_t before = DeviceMemoryUsed();
    {
      absl::StatusOr<Buffer> a = Buffer::Allocate(**device, dtypes::kFloat32, 1000);
      ASSERT_TRUE(a.ok()) << a.status();
      EXPECT_EQ(DeviceMemoryUsed(), before + 4000);
      Buffer moved = *std::move(a);
      absl::StatusOr<Buffer> b = Buffer::Allocate(**device, dtypes::kInt8, 3);
      ASSERT_TRUE(b.ok()) << b.status();
      EXPECT_EQ(DeviceMemoryUsed(), before + 4003);
      moved = *std::move(b);  // frees the first
      EXPECT_EQ(DeviceMemoryUsed(), before + 3);
    }
    EXPECT_EQ(DeviceMemoryUsed(), before);
    ++counted;
  }
  EXPECT_GE(counted, 2);  // CPU and INTERP at least
}

}  // namespace
}  // namespace uopc
