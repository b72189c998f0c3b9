#include "runtime/opencl_device.h"

#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "uop/check.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The device, or a skip naming why there is none (no OpenCL platform installed).
#define UOPC_OPENCL_DEVICE_OR_SKIP(var)                                                                 \
  absl::StatusOr<std::unique_ptr<Device>> var##_or = MakeOpenCLDevice(                                  \
      OpenCLDeviceOptions{.cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache")}); \
  if (absl::IsFailedPrecondition(var##_or.status())) GTEST_SKIP() << var##_or.status().message();       \
  ASSERT_TRUE(var##_or.ok()) << var##_or.status();                                                      \
  OpenCLDevice& var = static_cast<OpenCLDevice&>(**var##_or)

// tinygrad's `opencl` rendering of the corpus's add_int3: one work-group of three work-items.
constexpr char kAddSource[] =
    R"(__kernel void E_3(__global int* data0, __global int* data1, __global int* data2) {
  int lidx0 = get_local_id(0); /* 3 */
  int val0 = *(data1+lidx0);
  int val1 = *(data2+lidx0);
  *(data0+lidx0) = (val0+val1);
}
)";

// Work-groups and work-items together: out[gidx*4+lidx] = gidx*100 + lidx + n.
constexpr char kGridSource[] = R"(__kernel void grid(__global int* data0, const int n) {
  int gidx0 = get_group_id(0);
  int lidx0 = get_local_id(0);
  *(data0+(gidx0*4+lidx0)) = gidx0*100+lidx0+n;
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

TEST(OpenCLDeviceTest, BuildsAndRunsAKernelWithLocalSize) {
  UOPC_OPENCL_DEVICE_OR_SKIP(cl);
  EXPECT_EQ(cl.name(), "OPENCL");
  EXPECT_FALSE(cl.device_name().empty());
  absl::StatusOr<std::unique_ptr<Program>> program =
      cl.CreateProgram(ProgramSpec{.name = "E_3", .src = kAddSource, .globals = {0, 1, 2}});
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<int>(cl, dtypes::kInt32, {0, 0, 0});
  Buffer a = MakeBuffer<int>(cl, dtypes::kInt32, {1, 2, 3});
  Buffer b = MakeBuffer<int>(cl, dtypes::kInt32, {10, 20, -30});
  double seconds = -1;
  LaunchParams params{.global_size = {1, 1, 1}, .local_size = {3, 1, 1}};
  ASSERT_TRUE((*program)->Launch({&out, &a, &b}, {}, params, &seconds).ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(11, 22, -27));
  EXPECT_GE(seconds, 0);
}

TEST(OpenCLDeviceTest, GlobalSizeCountsWorkGroups) {
  UOPC_OPENCL_DEVICE_OR_SKIP(cl);
  absl::StatusOr<std::unique_ptr<Program>> program =
      cl.CreateProgram(ProgramSpec{.name = "grid", .src = kGridSource, .globals = {0}, .vars = {"n"}});
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<int>(cl, dtypes::kInt32, std::vector<int>(8, -1));
  LaunchParams params{.global_size = {2, 1, 1}, .local_size = {4, 1, 1}};
  ASSERT_TRUE((*program)->Launch({&out}, {7}, params).ok());
  ASSERT_TRUE(cl.Synchronize().ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(7, 8, 9, 10, 107, 108, 109, 110));
  // A value that does not fit the kernel's int, and dims that are not sizes.
  EXPECT_EQ((*program)->Launch({&out}, {int64_t{1} << 40}, params).code(), absl::StatusCode::kOutOfRange);
  LaunchParams zero{.global_size = {0, 1, 1}};
  EXPECT_EQ((*program)->Launch({&out}, {1}, zero).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*program)->Launch({}, {1}, params).code(), absl::StatusCode::kInvalidArgument);
}

TEST(OpenCLDeviceTest, BuildErrorsCarryTheBuildLog) {
  UOPC_OPENCL_DEVICE_OR_SKIP(cl);
  absl::StatusOr<std::unique_ptr<Program>> program = cl.CreateProgram(ProgramSpec{
      .name = "broken", .src = "__kernel void broken(__global int* d) { *d = undeclared_thing; }"});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("OpenCL build failed"));
  EXPECT_THAT(program.status().message(), HasSubstr("undeclared_thing"));
}

TEST(OpenCLDeviceTest, AMissingKernelNameIsAnError) {
  UOPC_OPENCL_DEVICE_OR_SKIP(cl);
  absl::StatusOr<std::unique_ptr<Program>> program =
      cl.CreateProgram(ProgramSpec{.name = "E_4", .src = kAddSource, .globals = {0, 1, 2}});
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("no kernel 'E_4'"));
}

TEST(OpenCLDeviceTest, HalfNeedsClKhrFp16) {
  UOPC_OPENCL_DEVICE_OR_SKIP(cl);
  constexpr char kHalfSource[] = R"(#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void E_2(__global half* data0, __global half* data1) {
  int lidx0 = get_local_id(0);
  *(data0+lidx0) = (*(data1+lidx0))*((half)2.0f);
}
)";
  absl::StatusOr<std::unique_ptr<Program>> program =
      cl.CreateProgram(ProgramSpec{.name = "E_2", .src = kHalfSource, .globals = {0, 1}});
  if (cl.HasExtension("cl_khr_fp16")) {
    EXPECT_TRUE(program.ok()) << program.status();
  } else {
    ASSERT_FALSE(program.ok());
    EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_THAT(program.status().message(), HasSubstr("cl_khr_fp16"));
  }
}

TEST(OpenCLDeviceTest, BinariesComeFromTheCompileCache) {
  UOPC_OPENCL_DEVICE_OR_SKIP(cl);
  std::string src = absl::StrCat(kAddSource, "// cache test\n");
  ASSERT_TRUE(cl.CreateProgram(ProgramSpec{.name = "E_3", .src = src, .globals = {0, 1, 2}}).ok());
  Compiler::Stats before = cl.compiler().stats();
  absl::StatusOr<std::unique_ptr<Program>> again =
      cl.CreateProgram(ProgramSpec{.name = "E_3", .src = src, .globals = {0, 1, 2}});
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(cl.compiler().stats().cache_hits, before.cache_hits + 1);
  EXPECT_EQ(cl.compiler().stats().compiles, before.compiles);
}

TEST(OpenCLSourceUsesHalfTest, FindsTheWordOnly) {
  EXPECT_TRUE(OpenCLSourceUsesHalf("__global half* data0"));
  EXPECT_TRUE(OpenCLSourceUsesHalf("half4 v = (half4)(0);"));
  EXPECT_TRUE(OpenCLSourceUsesHalf("(half)x"));
  EXPECT_FALSE(OpenCLSourceUsesHalf("float halfway = 0.5f; int half_n; vload_halfx"));
  EXPECT_FALSE(OpenCLSourceUsesHalf("__kernel void f(__global float* d) {}"));
}

TEST(OpenCLErrorNameTest, NamesCodes) {
  EXPECT_EQ(OpenCLErrorName(-11), "CL_BUILD_PROGRAM_FAILURE");
  EXPECT_EQ(OpenCLErrorName(-1001), "CL_PLATFORM_NOT_FOUND_KHR");
  EXPECT_EQ(OpenCLErrorName(-9999), "OpenCL error -9999");
}

}  // namespace
}  // namespace uopc
