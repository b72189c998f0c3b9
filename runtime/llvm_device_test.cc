#include "runtime/llvm_device.h"

#include <stdlib.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "uop/check.h"
#include "uop/kernel_info.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::DoubleEq;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::unique_ptr<LLVMDevice> MakeDevice(const std::string& cache = "") {
  LLVMDevice::Options options;
  options.cache_directory = cache;
  absl::StatusOr<std::unique_ptr<LLVMDevice>> device = LLVMDevice::Create(options);
  if (!device.ok()) {
    std::fprintf(stderr, "cannot create the LLVM device: %s\n", device.status().ToString().c_str());
    std::abort();
  }
  return *std::move(device);
}

// What tinygrad's LLVMRenderer writes for data0 = data1 + data2 on 3 ints.
constexpr char kAddSource[] =
    R"(define void @E_3(i32* noalias align 32 %data0, i32* noalias align 32 %data1, i32* noalias align 32 %data2) #0
{
  br label %loop_entry_0
loop_entry_0:
  br label %loop_body_0
loop_body_0:
  %v0 = phi i32 [ 0, %loop_entry_0 ], [ %v0phi, %loop_latch_0 ]
  %v1 = getelementptr inbounds i32, i32* %data1, i32 %v0
  %v2 = load i32, i32* %v1
  %v3 = getelementptr inbounds i32, i32* %data2, i32 %v0
  %v4 = load i32, i32* %v3
  %v5 = getelementptr inbounds i32, i32* %data0, i32 %v0
  %v6 = add nsw i32 %v2, %v4
  store i32 %v6, i32* %v5
  br label %loop_latch_0
loop_latch_0:
  %v0phi = add i32 %v0, 1
  %v8 = icmp ult i32 %v0phi, 3
  br i1 %v8, label %loop_body_0, label %loop_exit_0
loop_exit_0:
  ret void
}
attributes #0 = { alwaysinline nounwind "no-builtins" "no-trapping-math"="true" })";

ProgramSpec AddSpec() { return ProgramSpec{.name = "E_3", .src = kAddSource, .globals = {0, 1, 2}}; }

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

TEST(LlvmDeviceTest, CompilesAndRunsTinygradsIr) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  absl::StatusOr<std::unique_ptr<Program>> program = llvm->CreateProgram(AddSpec());
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<int>(*llvm, dtypes::kInt32, {0, 0, 0});
  Buffer a = MakeBuffer<int>(*llvm, dtypes::kInt32, {1, 2, 3});
  Buffer b = MakeBuffer<int>(*llvm, dtypes::kInt32, {10, 20, -30});
  double seconds = -1;
  ASSERT_TRUE((*program)->Launch({&out, &a, &b}, {}, LaunchParams{}, &seconds).ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(11, 22, -27));
  EXPECT_GE(seconds, 0);
  EXPECT_EQ(llvm->name(), "LLVM");
  ASSERT_NE(llvm->renderer(), nullptr);
  EXPECT_EQ(llvm->renderer()->device(), "LLVM");
}

TEST(LlvmDeviceTest, MakeLlvmDeviceGivesADevice) {
  absl::StatusOr<std::unique_ptr<Device>> device = MakeLLVMDevice();
  ASSERT_TRUE(device.ok()) << device.status();
  EXPECT_EQ((*device)->name(), "LLVM");
}

TEST(LlvmDeviceTest, PassesVariablesAfterBuffers) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  ProgramSpec spec{.name = "fill",
                   .src = R"(define void @fill(float* noalias align 32 %data0, i32 %start, i32 %n) {
entry:
  %empty = icmp sle i32 %n, 0
  br i1 %empty, label %done, label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %v = add i32 %start, %i
  %f = sitofp i32 %v to float
  %p = getelementptr inbounds float, float* %data0, i32 %i
  store float %f, float* %p
  %next = add i32 %i, 1
  %more = icmp slt i32 %next, %n
  br i1 %more, label %loop, label %done
done:
  ret void
})",
                   .globals = {0},
                   .vars = {"start", "n"}};
  absl::StatusOr<std::unique_ptr<Program>> program = llvm->CreateProgram(spec);
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<float>(*llvm, dtypes::kFloat32, {0, 0, 0, 0});
  ASSERT_TRUE((*program)->Launch({&out}, {7, 3}, LaunchParams{}).ok());
  EXPECT_THAT(Read<float>(out), ElementsAre(7, 8, 9, 0));
  absl::Status big = (*program)->Launch({&out}, {int64_t{1} << 40, 1}, LaunchParams{});
  EXPECT_EQ(big.code(), absl::StatusCode::kOutOfRange) << big;
}

TEST(LlvmDeviceTest, LaunchChecksItsArguments) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  absl::StatusOr<std::unique_ptr<Program>> program = llvm->CreateProgram(AddSpec());
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer a = MakeBuffer<int>(*llvm, dtypes::kInt32, {1, 2, 3});
  EXPECT_THAT((*program)->Launch({&a, &a}, {}, LaunchParams{}).message(),
              HasSubstr("takes 3 buffers, got 2"));
  LaunchParams threads;
  threads.global_size = {4, 1, 1};
  EXPECT_THAT((*program)->Launch({&a, &a, &a}, {}, threads).message(), HasSubstr("global size (1, 1, 1)"));
  std::unique_ptr<LLVMDevice> other = MakeDevice();
  Buffer elsewhere = MakeBuffer<int>(*other, dtypes::kInt32, {1, 2, 3});
  EXPECT_FALSE((*program)->Launch({&a, &elsewhere, &a}, {}, LaunchParams{}).ok());
}

TEST(LlvmDeviceTest, ParseAndVerifyErrorsCarryLlvmsMessage) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  ProgramSpec bad = AddSpec();
  bad.src = absl::StrReplaceAll(kAddSource, {{"%v6 = add nsw i32", "%v6 = add nsw i33"}});
  absl::StatusOr<std::unique_ptr<Program>> p = llvm->CreateProgram(bad);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("LLVM cannot parse the IR"));
  EXPECT_THAT(p.status().message(), HasSubstr("kernel.ll:"));  // LLVM's diagnostic, with its position

  // Parses, but a value is used before the instruction that defines it.
  bad.src = absl::StrReplaceAll(kAddSource, {{"%v2 = load i32, i32* %v1", "%v2 = load i32, i32* %v3"}});
  p = llvm->CreateProgram(bad);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("does not verify"));
  EXPECT_THAT(p.status().message(), HasSubstr("Instruction does not dominate all uses!"));
}

TEST(LlvmDeviceTest, SpecThatDoesNotMatchTheIrIsACompileError) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  ProgramSpec two = AddSpec();
  two.globals = {0, 1};
  absl::StatusOr<std::unique_ptr<Program>> p = llvm->CreateProgram(two);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(),
              HasSubstr("@uopc_entry calls @E_3 as void (ptr, ptr), but it is void (ptr, ptr, ptr)"));

  ProgramSpec misnamed = AddSpec();
  misnamed.name = "E_4";
  EXPECT_THAT(llvm->CreateProgram(misnamed).status().message(), HasSubstr("@E_4"));
  misnamed.name = "E 4";
  EXPECT_THAT(llvm->CreateProgram(misnamed).status().message(), HasSubstr("not an LLVM identifier"));
}

// A zero-fill loop, which LLVM's optimizer turns into a call of memset: the one kind of library call linked.
TEST(LlvmDeviceTest, FillLoopsBecomeMemsetAndLink) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  ProgramSpec spec{.name = "E_800",
                   .src = R"(define void @E_800(float* noalias align 32 %data0) {
entry:
  br label %loop
loop:
  %i = phi i32 [ 0, %entry ], [ %next, %loop ]
  %p = getelementptr inbounds float, float* %data0, i32 %i
  store float 0.0, float* %p
  %next = add nsw i32 %i, 1
  %more = icmp slt i32 %next, 800
  br i1 %more, label %loop, label %done
done:
  ret void
})",
                   .globals = {0}};
  absl::StatusOr<std::unique_ptr<Program>> program = llvm->CreateProgram(spec);
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<float>(*llvm, dtypes::kFloat32, std::vector<float>(800, 1.5f));
  ASSERT_TRUE((*program)->Launch({&out}, {}, LaunchParams{}).ok());
  EXPECT_EQ(Read<float>(out), std::vector<float>(800, 0.0f));
}

// Nothing else outside the program is linked in: a call of a library function fails to load, by name.
TEST(LlvmDeviceTest, ExternalSymbolsAreNotResolved) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  ProgramSpec spec{.name = "k",
                   .src = R"(declare float @sinf(float)
define void @k(float* %data0) {
  %x = load float, float* %data0
  %y = call float @sinf(float %x)
  store float %y, float* %data0
  ret void
})",
                   .globals = {0}};
  absl::StatusOr<std::unique_ptr<Program>> p = llvm->CreateProgram(spec);
  EXPECT_EQ(p.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(p.status().message(), HasSubstr("sinf"));
}

// Programs of the same name live side by side; one going away leaves the other running.
TEST(LlvmDeviceTest, ProgramsAreIndependent) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  ProgramSpec sub = AddSpec();
  sub.src = absl::StrReplaceAll(kAddSource, {{"%v6 = add nsw i32", "%v6 = sub nsw i32"}});
  absl::StatusOr<std::unique_ptr<Program>> add = llvm->CreateProgram(AddSpec());
  absl::StatusOr<std::unique_ptr<Program>> minus = llvm->CreateProgram(sub);
  ASSERT_TRUE(add.ok()) << add.status();
  ASSERT_TRUE(minus.ok()) << minus.status();
  Buffer out = MakeBuffer<int>(*llvm, dtypes::kInt32, {0, 0, 0});
  Buffer a = MakeBuffer<int>(*llvm, dtypes::kInt32, {1, 2, 3});
  Buffer b = MakeBuffer<int>(*llvm, dtypes::kInt32, {10, 20, -30});
  ASSERT_TRUE((*minus)->Launch({&out, &a, &b}, {}, LaunchParams{}).ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(-9, -18, 33));
  add->reset();
  ASSERT_TRUE((*minus)->Launch({&out, &b, &a}, {}, LaunchParams{}).ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(9, 18, -33));
}

TEST(LlvmDeviceTest, ObjectsGoThroughTheCache) {
  const std::string dir = absl::StrCat(std::getenv("TEST_TMPDIR"), "/llvm_cache");
  std::filesystem::remove_all(dir);
  std::unique_ptr<LLVMDevice> first = MakeDevice(dir);
  ASSERT_TRUE(first->CreateProgram(AddSpec()).ok());
  EXPECT_EQ(first->compiler().stats().compiles, 1);
  std::unique_ptr<LLVMDevice> second = MakeDevice(dir);
  absl::StatusOr<std::unique_ptr<Program>> cached = second->CreateProgram(AddSpec());
  ASSERT_TRUE(cached.ok()) << cached.status();
  EXPECT_EQ(second->compiler().stats().cache_hits, 1);
  EXPECT_EQ(second->compiler().stats().compiles, 0);
  Buffer out = MakeBuffer<int>(*second, dtypes::kInt32, {0, 0, 0});
  Buffer a = MakeBuffer<int>(*second, dtypes::kInt32, {1, 2, 3});
  ASSERT_TRUE((*cached)->Launch({&out, &a, &a}, {}, LaunchParams{}).ok());
  EXPECT_THAT(Read<int>(out), ElementsAre(2, 4, 6));
}

// What uopc's renderer writes runs: out[i] = in[i] * 1e-05 in double, a constant tinygrad would write as
// `1e-05`, which LLVM does not read as a float.
TEST(LlvmDeviceTest, RunsWhatTheRendererWrites) {
  std::unique_ptr<LLVMDevice> llvm = MakeDevice();
  const DType d = dtypes::kFloat64;
  UOpPtr out = UOp::New(Ops::DEFINE_GLOBAL, d.Ptr(4), {}, Arg(0));
  UOpPtr in = UOp::New(Ops::DEFINE_GLOBAL, d.Ptr(4), {}, Arg(1));
  UOpPtr end = UOp::Const(dtypes::kInt32, 4), scale = UOp::Const(d, 1e-5);
  UOpPtr r = UOp::Range(end, 0);
  UOpPtr value = in.index(r).load() * scale;
  UOpPtr store = out.index(r).store({value});
  UOpPtr endr = UOp::New(Ops::ENDRANGE, dtypes::kVoid, {r});
  UOpPtr sink = UOp::Sink({store}, KernelInfoAsArg({.name = "E_4"}));
  std::vector<const UOp*> uops = {
      out.get(),     in.get(),    end.get(),          scale.get(), r.get(),    in.index(r).get(),
      value->src(0), value.get(), out.index(r).get(), store.get(), endr.get(), sink.get()};
  absl::StatusOr<std::string> src = llvm->renderer()->Render(uops);
  ASSERT_TRUE(src.ok()) << src.status();
  EXPECT_THAT(*src, HasSubstr("1.0e-05"));
  absl::StatusOr<std::unique_ptr<Program>> program =
      llvm->CreateProgram(ProgramSpec{.name = "E_4", .src = *src, .globals = {0, 1}});
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer o = MakeBuffer<double>(*llvm, d, {0, 0, 0, 0});
  Buffer i = MakeBuffer<double>(*llvm, d, {1, 2, -3, 1e5});
  ASSERT_TRUE((*program)->Launch({&o, &i}, {}, LaunchParams{}).ok());
  EXPECT_THAT(Read<double>(o), ElementsAre(DoubleEq(1.0 * 1e-5), DoubleEq(2.0 * 1e-5), DoubleEq(-3.0 * 1e-5),
                                           DoubleEq(1e5 * 1e-5)));
}

}  // namespace
}  // namespace uopc
