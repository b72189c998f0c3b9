#include "runtime/cuda_device.h"

#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/ptx.h"
#include "runtime/device.h"
#include "uop/check.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// The device, or a skip with the device's reason (no driver, no GPU, no NVRTC).
#define UOPC_CUDA_DEVICE_OR_SKIP(var, lang)                                                       \
  absl::StatusOr<std::unique_ptr<Device>> var##_or = MakeCudaDevice(CudaDeviceOptions{            \
      .language = lang, .cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/cache")});  \
  if (absl::IsFailedPrecondition(var##_or.status())) GTEST_SKIP() << var##_or.status().message(); \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status();                                                \
  Device& var = **var##_or

// tinygrad's `cuda` and `ptx` renderings of the corpus's add_int3: one block of three threads.
constexpr char kAddCuda[] = R"(#define INFINITY (__int_as_float(0x7f800000))
#define NAN (__int_as_float(0x7fffffff))
extern "C" __global__ void __launch_bounds__(3) E_3(int* data0, int* data1, int* data2) {
  int lidx0 = threadIdx.x; /* 3 */
  int val0 = *(data1+lidx0);
  int val1 = *(data2+lidx0);
  *(data0+lidx0) = (val0+val1);
}
)";

constexpr char kAddPtx[] = R"(.version VERSION
.target TARGET
.address_size 64
.visible .entry E_3(
	.param .u64 data0,
	.param .u64 data1,
	.param .u64 data2
)
{
	.reg		.u64 %dat_u64_<3>;
	.reg		.u32 %const_u32_<1>;
	.reg		.s64 %cast_s64_<1>;
	.reg		.s64 %alu_s64_<4>;
	.reg		.s32 %val_s32_<2>;
	.reg		.s32 %alu_s32_<1>;
	.reg		.u32 %lidx0;
	ld.param.u64	%dat_u64_0, [data0+0];
	ld.param.u64	%dat_u64_1, [data1+0];
	ld.param.u64	%dat_u64_2, [data2+0];
	mov.u32		%lidx0, %tid.x;
	mov.b32		%const_u32_0, 2U;
	cvt.s64.s32	%cast_s64_0, %lidx0;
	shl.b64		%alu_s64_0, %cast_s64_0, %const_u32_0;
	add.s64		%alu_s64_1, %dat_u64_1, %alu_s64_0;
	ld.global.s32	%val_s32_0, [%alu_s64_1+0];
	add.s64		%alu_s64_2, %dat_u64_2, %alu_s64_0;
	ld.global.s32	%val_s32_1, [%alu_s64_2+0];
	add.s32		%alu_s32_0, %val_s32_0, %val_s32_1;
	add.s64		%alu_s64_3, %dat_u64_0, %alu_s64_0;
	st.global.s32	[%alu_s64_3+0], %alu_s32_0;
	ret;
}
)";

template <typename T>
Buffer MakeBuffer(Device& device, DType dtype, const std::vector<T>& values) {
  absl::StatusOr<Buffer> buffer = Buffer::Allocate(device, dtype, static_cast<int64_t>(values.size()));
  UOPC_CHECK(buffer.ok(), "allocate");
  UOPC_CHECK(buffer
                 ->CopyIn(absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(values.data()),
                                              values.size() * sizeof(T)))
                 .ok(),
             "copy in");
  return *std::move(buffer);
}

template <typename T>
std::vector<T> Read(const Buffer& buffer) {
  std::vector<T> values(buffer.size());
  UOPC_CHECK(buffer.CopyOut(absl::MakeSpan(reinterpret_cast<uint8_t*>(values.data()), buffer.nbytes())).ok(),
             "copy out");
  return values;
}

void RunAdd(Device& device, const char* src) {
  absl::StatusOr<std::unique_ptr<Program>> program =
      device.CreateProgram(ProgramSpec{.name = "E_3", .src = src, .globals = {0, 1, 2}});
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<int>(device, dtypes::kInt32, {0, 0, 0});
  Buffer a = MakeBuffer<int>(device, dtypes::kInt32, {1, 2, 3});
  Buffer b = MakeBuffer<int>(device, dtypes::kInt32, {10, 20, -30});
  double seconds = -1;
  LaunchParams params{.global_size = {1, 1, 1}, .local_size = {3, 1, 1}};
  ASSERT_TRUE((*program)->Launch({&out, &a, &b}, {}, params, &seconds).ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(11, 22, -27));
  EXPECT_GE(seconds, 0);
}

// Runs everywhere: a device, or the one clear error (on this machine: no driver).
TEST(CudaDeviceTest, IsAvailableOrSaysWhyNot) {
  absl::StatusOr<std::unique_ptr<Device>> device = MakeCudaDevice();
  if (device.ok()) {
    EXPECT_EQ((*device)->name(), "CUDA");
  } else {
    EXPECT_EQ(device.status().code(), absl::StatusCode::kFailedPrecondition) << device.status();
    EXPECT_THAT(std::string(device.status().message()), StartsWith("CUDA is not available: "));
    std::printf("%s\n", std::string(device.status().message()).c_str());
  }
}

TEST(CudaDeviceTest, RunsCudaC) {
  UOPC_CUDA_DEVICE_OR_SKIP(cuda, CudaDeviceOptions::Language::kCudaC);
  RunAdd(cuda, kAddCuda);
}

TEST(CudaDeviceTest, RunsPtx) {
  UOPC_CUDA_DEVICE_OR_SKIP(cuda, CudaDeviceOptions::Language::kPtx);
  RunAdd(cuda, kAddPtx);
}

TEST(CudaDeviceTest, NvrtcErrorsCarryTheLog) {
  UOPC_CUDA_DEVICE_OR_SKIP(cuda, CudaDeviceOptions::Language::kCudaC);
  absl::StatusOr<std::unique_ptr<Program>> program = cuda.CreateProgram(ProgramSpec{
      .name = "broken", .src = "extern \"C\" __global__ void broken(int* d) { *d = undeclared_thing; }"});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("undeclared_thing"));
}

TEST(CudaDeviceTest, PtxErrorsCarryTheJitLog) {
  UOPC_CUDA_DEVICE_OR_SKIP(cuda, CudaDeviceOptions::Language::kPtx);
  absl::StatusOr<std::unique_ptr<Program>> program = cuda.CreateProgram(
      ProgramSpec{.name = "E_3", .src = ".version VERSION\n.target TARGET\nnot ptx at all\n"});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("cannot load the module of E_3"));
}

// ---- the device's plumbing against a stand-in driver and NVRTC (runtime/fake_cuda_driver.cc) ----

constexpr char kFakeLibrary[] = "./runtime/libfake_cuda.so";

absl::StatusOr<std::unique_ptr<Device>> MakeFakeCudaDevice(CudaDeviceOptions::Language language) {
  return MakeCudaDevice(CudaDeviceOptions{.language = language,
                                          .cache_directory = "",
                                          .driver_library = kFakeLibrary,
                                          .nvrtc_library = kFakeLibrary});
}

// The stand-in's controls, through the handle the device loaded.
template <typename F>
F FakeControl(const char* name) {
  void* library = dlopen(kFakeLibrary, RTLD_NOW | RTLD_LOCAL);
  UOPC_CHECK(library != nullptr, "the fake driver loads");
  F f = reinterpret_cast<F>(dlsym(library, name));
  UOPC_CHECK(f != nullptr, "the fake driver exports its controls");
  return f;
}

TEST(FakeCudaDriverTest, CudaCThroughNvrtcLaunchesWithTinygradsDims) {
  absl::StatusOr<std::unique_ptr<Device>> cuda = MakeFakeCudaDevice(CudaDeviceOptions::Language::kCudaC);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  RunAdd(**cuda, kAddCuda);
  unsigned dims[6];
  FakeControl<void (*)(unsigned*)>("fake_cuda_last_launch")(dims);
  EXPECT_THAT(dims, ElementsAre(1, 1, 1, 3, 1, 1));  // grid = global size, block = local size
}

TEST(FakeCudaDriverTest, PtxIsLoadedWithItsPlaceholdersFilled) {
  absl::StatusOr<std::unique_ptr<Device>> cuda = MakeFakeCudaDevice(CudaDeviceOptions::Language::kPtx);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  RunAdd(**cuda, kAddPtx);
  // The PTX device's codegen target is the PTX renderer for the GPU's arch.
  ASSERT_NE((*cuda)->renderer(), nullptr);
  const auto* ptx = dynamic_cast<const PTXRenderer*>((*cuda)->renderer());
  ASSERT_NE(ptx, nullptr);
  EXPECT_EQ(ptx->arch(), "sm_80");
}

TEST(FakeCudaDriverTest, ErrorsCarryTheCompilersLogs) {
  absl::StatusOr<std::unique_ptr<Device>> cuda = MakeFakeCudaDevice(CudaDeviceOptions::Language::kCudaC);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  absl::StatusOr<std::unique_ptr<Program>> program = (*cuda)->CreateProgram(ProgramSpec{
      .name = "broken", .src = "extern \"C\" __global__ void broken(int* d) { *d = undeclared_thing; }"});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()),
              HasSubstr("identifier \"undeclared_thing\" is undefined"));
  // A kernel name the module does not have.
  program = (*cuda)->CreateProgram(ProgramSpec{.name = "E_4", .src = kAddCuda, .globals = {0, 1, 2}});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("no kernel 'E_4'"));

  absl::StatusOr<std::unique_ptr<Device>> ptx = MakeFakeCudaDevice(CudaDeviceOptions::Language::kPtx);
  ASSERT_TRUE(ptx.ok()) << ptx.status();
  program =
      (*ptx)->CreateProgram(ProgramSpec{.name = "E_3", .src = ".version VERSION\n.target TARGET\nnot ptx\n"});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("CUDA_ERROR_INVALID_PTX"));
  EXPECT_THAT(std::string(program.status().message()), HasSubstr("fake ptxas: no entry"));
}

TEST(FakeCudaDriverTest, NoGpuIsOneClearError) {
  auto set_count = FakeControl<void (*)(int)>("fake_cuda_set_device_count");
  set_count(0);
  absl::StatusOr<std::unique_ptr<Device>> cuda = MakeFakeCudaDevice(CudaDeviceOptions::Language::kPtx);
  set_count(1);
  ASSERT_FALSE(cuda.ok());
  EXPECT_EQ(cuda.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(
      cuda.status().message(),
      "CUDA is not available: cuInit failed: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)");
  // A library that is not a driver at all.
  absl::StatusOr<std::unique_ptr<Device>> none =
      MakeCudaDevice(CudaDeviceOptions{.driver_library = "./runtime/no_such_libcuda.so"});
  ASSERT_FALSE(none.ok());
  EXPECT_THAT(std::string(none.status().message()),
              StartsWith("CUDA is not available: cannot load the NVIDIA"));
}

TEST(PtxForArchTest, FillsTinygradsPlaceholders) {
  EXPECT_EQ(PtxForArch(".version VERSION\n.target TARGET\n", "sm_80"), ".version 7.5\n.target sm_80\n");
  EXPECT_EQ(PtxForArch(".version VERSION\n.target TARGET\n", "sm_89"), ".version 7.8\n.target sm_89\n");
  EXPECT_EQ(PtxForArch(".version VERSION\n.target TARGET\n", "sm_90"), ".version 7.8\n.target sm_90\n");
}

TEST(CudaArchTest, NamesComputeCapabilities) {
  EXPECT_EQ(CudaArch(8, 0), "sm_80");
  EXPECT_EQ(CudaArch(9, 0), "sm_90");
  EXPECT_EQ(CudaArch(7, 5), "sm_75");
}

}  // namespace
}  // namespace uopc
