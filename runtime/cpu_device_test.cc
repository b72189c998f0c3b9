#include "runtime/cpu_device.h"

#include <stdlib.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "runtime/registry.h"
#include "uop/check.h"
#include "uop/kernel_info.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

std::string TestDir(const std::string& name) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

CpuDevice::Options CacheIn(const std::string& dir) {
  CpuDevice::Options options;
  options.cache_directory = dir;
  return options;
}

constexpr char kAddSource[] = R"(
void E_3(int* restrict data0, int* restrict data1, int* restrict data2) {
  for (int ridx0 = 0; ridx0 < 3; ridx0++) {
    int val0 = *(data1+ridx0);
    int val1 = *(data2+ridx0);
    *(data0+ridx0) = (val0+val1);
  }
}
)";

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

TEST(CpuDeviceTest, CompilesAndRunsAKernel) {
  CpuDevice cpu(CacheIn(""));
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(AddSpec());
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<int>(cpu, dtypes::kInt32, {0, 0, 0});
  Buffer a = MakeBuffer<int>(cpu, dtypes::kInt32, {1, 2, 3});
  Buffer b = MakeBuffer<int>(cpu, dtypes::kInt32, {10, 20, -30});
  double seconds = -1;
  ASSERT_TRUE((*program)->Launch({&out, &a, &b}, {}, LaunchParams{}, &seconds).ok());
  EXPECT_THAT(Read<int>(out), ::testing::ElementsAre(11, 22, -27));
  EXPECT_GE(seconds, 0);
  EXPECT_EQ((*program)->spec().name, "E_3");
  EXPECT_EQ(cpu.name(), "CPU");
  ASSERT_NE(cpu.renderer(), nullptr);
  EXPECT_EQ(cpu.renderer()->device(), "CPU");
}

TEST(CpuDeviceTest, PassesVariablesAfterBuffers) {
  CpuDevice cpu(CacheIn(""));
  ProgramSpec spec{.name = "fill",
                   .src = R"(
void fill(float* restrict data0, const int start, const int n) {
  for (int i = 0; i < n; i++) data0[i] = (float)(start + i);
})",
                   .globals = {0},
                   .vars = {"start", "n"}};
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(spec);
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<float>(cpu, dtypes::kFloat32, {0, 0, 0, 0});
  ASSERT_TRUE((*program)->Launch({&out}, {7, 3}, LaunchParams{}).ok());
  EXPECT_THAT(Read<float>(out), ::testing::ElementsAre(7, 8, 9, 0));
  absl::Status big = (*program)->Launch({&out}, {int64_t{1} << 40, 1}, LaunchParams{});
  EXPECT_EQ(big.code(), absl::StatusCode::kOutOfRange) << big;
}

// A kernel split across cores, as codegen renders one (renderer.h's CoreSplit): each core id writes its
// chunk.
TEST(CpuDeviceTest, RunsEveryCoreIdOfASplitKernel) {
  CpuDevice::Options options = CacheIn("");
  options.threads = 2;
  CpuDevice cpu(options);
  ProgramSpec spec{.name = "E_6",
                   .src =
                       "void E_6(int* restrict data0, const int core_id) {\n"
                       "  int gidx0 = core_id; /* 3 */\n"
                       "  for (int ridx0 = 0; ridx0 < 2; ridx0++) *(data0+(gidx0*2+ridx0)) = gidx0+1;\n}\n",
                   .globals = {0},
                   .global_size = std::vector<int64_t>{3, 1, 1},
                   .local_size = std::vector<int64_t>{1, 1, 1}};
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(spec);
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer out = MakeBuffer<int>(cpu, dtypes::kInt32, {0, 0, 0, 0, 0, 0});
  LaunchParams launch;
  launch.global_size = {3, 1, 1};
  ASSERT_TRUE((*program)->Launch({&out}, {}, launch).ok());
  EXPECT_THAT(Read<int>(out), ::testing::ElementsAre(1, 1, 2, 2, 3, 3));
  launch.global_size = {3, 2, 1};
  EXPECT_THAT((*program)->Launch({&out}, {}, launch).message(), HasSubstr("(n, 1, 1)"));
}

TEST(CpuDeviceTest, LaunchChecksItsArguments) {
  CpuDevice cpu(CacheIn(""));
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(AddSpec());
  ASSERT_TRUE(program.ok()) << program.status();
  Buffer a = MakeBuffer<int>(cpu, dtypes::kInt32, {1, 2, 3});
  EXPECT_THAT((*program)->Launch({&a, &a}, {}, LaunchParams{}).message(),
              HasSubstr("takes 3 buffers, got 2"));
  EXPECT_THAT((*program)->Launch({&a, &a, &a}, {5}, LaunchParams{}).message(), HasSubstr("variable values"));
  LaunchParams threads;
  threads.global_size = {4, 1, 1};
  EXPECT_THAT((*program)->Launch({&a, &a, &a}, {}, threads).message(), HasSubstr("global size (1, 1, 1)"));
  EXPECT_FALSE((*program)->Launch({&a, nullptr, &a}, {}, LaunchParams{}).ok());
  CpuDevice other(CacheIn(""));
  Buffer elsewhere = MakeBuffer<int>(other, dtypes::kInt32, {1, 2, 3});
  EXPECT_FALSE((*program)->Launch({&a, &elsewhere, &a}, {}, LaunchParams{}).ok());
}

TEST(CpuDeviceTest, SpecThatDoesNotMatchTheSourceIsACompileError) {
  CpuDevice cpu(CacheIn(""));
  ProgramSpec two_buffers = AddSpec();
  two_buffers.globals = {0, 1};
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(two_buffers);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("too few arguments"));

  ProgramSpec wrong_name = AddSpec();
  wrong_name.name = "E_4";
  program = cpu.CreateProgram(wrong_name);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("E_4"));

  ProgramSpec bad_name = AddSpec();
  bad_name.name = "E_3(); system";
  EXPECT_EQ(cpu.CreateProgram(bad_name).status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(CpuDeviceTest, CompileErrorCarriesTheCompilersStderr) {
  CpuDevice cpu(CacheIn(""));
  ProgramSpec spec{.name = "broken",
                   .src = "void broken(int* restrict data0) { data0[0] = undeclared_thing; }",
                   .globals = {0}};
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(spec);
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(program.status().message(), HasSubstr("error:"));
  EXPECT_THAT(program.status().message(), HasSubstr("undeclared_thing"));
  EXPECT_EQ(cpu.compiler().stats().compiles, 1);
}

// A kernel that needs a compiler runtime helper must not link rather than load and compute garbage (clang 14
// turns a double to __fp16 cast into a call of libgcc's __truncdfhf2, with a mismatched ABI, on hosts without
// AVX512-FP16). 128-bit division calls __divti3 on every x86-64 host, so it stands in for every such helper.
TEST(CpuDeviceTest, KernelNeedingARuntimeHelperFailsToLink) {
  CpuDevice cpu(CacheIn(""));
  ProgramSpec spec{
      .name = "k", .src = "void k(__int128* restrict a) { a[0] = a[0] / a[1]; }", .globals = {0}};
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(spec);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("__divti3"));
}

TEST(CpuDeviceTest, MissingCompilerIsAnError) {
  CpuDevice::Options options = CacheIn(TestDir("missing_compiler"));
  options.compiler_path = "/nonexistent/clang";
  CpuDevice cpu(options);
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(AddSpec());
  ASSERT_FALSE(program.ok());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kFailedPrecondition) << program.status();
  EXPECT_THAT(program.status().message(), HasSubstr("/nonexistent/clang"));
  // Without the cache too.
  options.cache_directory = "";
  CpuDevice uncached(options);
  EXPECT_FALSE(uncached.compiler().Compile(kAddSource).ok());
}

TEST(CpuDeviceTest, CompileCacheHitMissAndCorruption) {
  std::string dir = TestDir("cache");
  {
    CpuDevice cpu(CacheIn(dir));
    ASSERT_TRUE(cpu.CreateProgram(AddSpec()).ok());
    EXPECT_EQ(cpu.compiler().stats().compiles, 1);
    EXPECT_EQ(cpu.compiler().stats().cache_hits, 0);
  }
  {
    CpuDevice cpu(CacheIn(dir));  // a new process, as far as the cache is concerned
    absl::StatusOr<std::unique_ptr<Program>> program = cpu.CreateProgram(AddSpec());
    ASSERT_TRUE(program.ok());
    EXPECT_EQ(cpu.compiler().stats().compiles, 0);
    EXPECT_EQ(cpu.compiler().stats().cache_hits, 1);
    Buffer out = MakeBuffer<int>(cpu, dtypes::kInt32, {0, 0, 0});
    Buffer a = MakeBuffer<int>(cpu, dtypes::kInt32, {1, 2, 3});
    ASSERT_TRUE((*program)->Launch({&out, &a, &a}, {}, LaunchParams{}).ok());
    EXPECT_THAT(Read<int>(out), ::testing::ElementsAre(2, 4, 6));
  }
  // Overwrite every entry with garbage: compiling still works, and repairs the entry.
  int entries = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    std::ofstream(entry.path(), std::ios::trunc) << "garbage";
    ++entries;
  }
  EXPECT_EQ(entries, 1);
  {
    CpuDevice cpu(CacheIn(dir));
    ASSERT_TRUE(cpu.CreateProgram(AddSpec()).ok());
    EXPECT_EQ(cpu.compiler().stats().compiles, 1);
    ASSERT_TRUE(cpu.CreateProgram(AddSpec()).ok());
    EXPECT_EQ(cpu.compiler().stats().cache_hits, 1);
  }
}

TEST(CpuDeviceTest, CacheFollowsXdgCacheHome) {
  std::string xdg = TestDir("xdg");
  std::string old = std::getenv("XDG_CACHE_HOME") ? std::getenv("XDG_CACHE_HOME") : "";
  setenv("XDG_CACHE_HOME", xdg.c_str(), 1);
  CpuDevice cpu;
  EXPECT_EQ(cpu.compiler().cache().directory(), xdg + "/uopc");
  ASSERT_TRUE(cpu.CreateProgram(AddSpec()).ok());
  EXPECT_TRUE(std::filesystem::exists(xdg + "/uopc/compile/clang_jit"));
  if (old.empty()) {
    unsetenv("XDG_CACHE_HOME");
  } else {
    setenv("XDG_CACHE_HOME", old.c_str(), 1);
  }
}

TEST(CpuDeviceTest, UnwritableCacheDoesNotBreakCompiling) {
  std::string file = TestDir("cache_file");
  std::ofstream(file) << "a file, not a directory";
  CpuDevice cpu(CacheIn(file + "/below"));
  ASSERT_TRUE(cpu.CreateProgram(AddSpec()).ok());
  ASSERT_TRUE(cpu.CreateProgram(AddSpec()).ok());
  EXPECT_EQ(cpu.compiler().stats().compiles, 2);
}

TEST(CpuDeviceTest, ManyProgramsLoadSideBySide) {
  CpuDevice cpu(CacheIn(""));
  std::vector<std::unique_ptr<Program>> programs;
  for (int i = 0; i < 4; ++i) {
    std::string src = "void k(int* restrict a) { a[0] = " + std::to_string(i) + "; }";
    absl::StatusOr<std::unique_ptr<Program>> p =
        cpu.CreateProgram(ProgramSpec{.name = "k", .src = src, .globals = {0}});
    ASSERT_TRUE(p.ok()) << p.status();
    programs.push_back(*std::move(p));
  }
  programs.erase(programs.begin() + 1);  // unloading one leaves the others intact
  std::string src = "void k(int* restrict a) { a[0] = 9; }";
  absl::StatusOr<std::unique_ptr<Program>> p =
      cpu.CreateProgram(ProgramSpec{.name = "k", .src = src, .globals = {0}});
  ASSERT_TRUE(p.ok());
  programs.push_back(*std::move(p));
  Buffer out = MakeBuffer<int>(cpu, dtypes::kInt32, {-1});
  std::vector<int> got;
  for (auto& program : programs) {
    ASSERT_TRUE(program->Launch({&out}, {}, LaunchParams{}).ok());
    got.push_back(Read<int>(out)[0]);
  }
  EXPECT_THAT(got, ::testing::ElementsAre(0, 2, 3, 9));
}

TEST(CpuDeviceTest, LoadingSomethingElseIsAnError) {
  CpuDevice cpu(CacheIn(""));
  EXPECT_FALSE(cpu.LoadProgram(AddSpec(), "not an ELF file").ok());
  // The kernel alone, without the entry point ProgramSource adds.
  absl::StatusOr<std::string> lib = cpu.compiler().Compile(kAddSource);
  ASSERT_TRUE(lib.ok()) << lib.status();
  absl::StatusOr<std::unique_ptr<Program>> program = cpu.LoadProgram(AddSpec(), *lib);
  ASSERT_FALSE(program.ok());
  EXPECT_THAT(program.status().message(), HasSubstr("uopc_entry"));
}

// The base class's caching logic, with a compiler that counts its calls.
class CountingCompiler : public Compiler {
 public:
  explicit CountingCompiler(CompileCache cache) : Compiler(std::move(cache)) {}
  std::string CacheName() const override { return "counting"; }
  absl::StatusOr<std::string> CacheKey() const override { return key; }
  absl::StatusOr<std::string> Compile(absl::string_view src) const override {
    if (src == "bad") return absl::InvalidArgumentError("bad source");
    return absl::StrCat("compiled:", src);
  }
  std::string key = "v1";
};

TEST(CompilerTest, CompileCachedUsesTheCacheOnlyForGoodResults) {
  std::string dir = TestDir("counting");
  CountingCompiler compiler{CompileCache(dir)};
  EXPECT_EQ(compiler.CompileCached("a").value(), "compiled:a");
  EXPECT_EQ(compiler.CompileCached("a").value(), "compiled:a");
  EXPECT_EQ(compiler.stats().compiles, 1);
  EXPECT_EQ(compiler.stats().cache_hits, 1);
  // Errors are not cached.
  EXPECT_FALSE(compiler.CompileCached("bad").ok());
  EXPECT_FALSE(compiler.CompileCached("bad").ok());
  EXPECT_EQ(compiler.stats().compiles, 3);
  // A new key (another compiler version) misses.
  compiler.key = "v2";
  EXPECT_TRUE(compiler.CompileCached("a").ok());
  EXPECT_EQ(compiler.stats().compiles, 4);
  // An empty key disables caching.
  compiler.key = "";
  EXPECT_TRUE(compiler.CompileCached("a").ok());
  EXPECT_TRUE(compiler.CompileCached("a").ok());
  EXPECT_EQ(compiler.stats().compiles, 6);

  SourceCompiler source;
  EXPECT_EQ(source.CompileCached("int x;").value(), "int x;");
  EXPECT_FALSE(source.cache().enabled());
}

TEST(BufferTest, AllocateCopyAndMove) {
  CpuDevice cpu(CacheIn(""));
  EXPECT_FALSE(Buffer::Allocate(cpu, dtypes::kFloat32.Vec(4), 4).ok());
  EXPECT_FALSE(Buffer::Allocate(cpu, dtypes::kFloat32.Ptr(), 4).ok());
  EXPECT_FALSE(Buffer::Allocate(cpu, dtypes::kVoid, 4).ok());
  EXPECT_FALSE(Buffer::Allocate(cpu, dtypes::kFloat32, -1).ok());
  absl::StatusOr<Buffer> empty = Buffer::Allocate(cpu, dtypes::kFloat32, 0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->nbytes(), 0);

  absl::StatusOr<Buffer> half = Buffer::Allocate(cpu, dtypes::kFloat16, 3);
  ASSERT_TRUE(half.ok());
  EXPECT_EQ(half->nbytes(), 6);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(half->handle()) % 32, 0u);
  std::vector<uint8_t> bytes = {1, 2, 3, 4, 5, 6};
  EXPECT_FALSE(half->CopyIn(absl::MakeConstSpan(bytes).subspan(1)).ok());
  ASSERT_TRUE(half->CopyIn(bytes).ok());
  Buffer moved = *std::move(half);
  EXPECT_EQ(moved.ToBytes().value(), bytes);
  std::vector<uint8_t> small(5);
  EXPECT_FALSE(moved.CopyOut(absl::MakeSpan(small)).ok());
  moved = MakeBuffer<int>(cpu, dtypes::kInt32, {4});
  EXPECT_EQ(moved.size(), 1);
}

TEST(ProgramSpecTest, FromUops) {
  UOpPtr g0 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(), {}, Arg(0));
  UOpPtr g1 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(), {}, Arg(1));
  UOpPtr n = UOp::Variable("n", 1, 10);
  UOpPtr gidx = UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg{Arg("gidx1"), Arg(int64_t{8})});
  UOpPtr lidx = UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg{Arg("lidx0"), Arg(int64_t{4})});
  KernelInfo info;
  info.name = "E_8_4";
  UOpPtr sink = UOp::Sink({}, KernelInfoAsArg(info));
  absl::StatusOr<ProgramSpec> spec = ProgramSpec::FromUops({g0, g1, n, gidx, lidx, sink}, "src");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(spec->name, "E_8_4");
  EXPECT_EQ(spec->src, "src");
  EXPECT_THAT(spec->globals, ::testing::ElementsAre(0, 1));
  EXPECT_THAT(spec->vars, ::testing::ElementsAre("n"));
  EXPECT_EQ(spec->global_size, (std::vector<int64_t>{1, 8, 1}));
  EXPECT_EQ(spec->local_size, (std::vector<int64_t>{4, 1, 1}));
  EXPECT_EQ(spec->uops.size(), 6u);

  // The CPU's programs have no SPECIALs and no launch dims.
  absl::StatusOr<ProgramSpec> cpu = ProgramSpec::FromUops({g0, sink}, "src");
  ASSERT_TRUE(cpu.ok());
  EXPECT_EQ(cpu->global_size, std::nullopt);
  EXPECT_EQ(cpu->local_size, std::nullopt);

  EXPECT_FALSE(ProgramSpec::FromUops({g0}, "src").ok());
  EXPECT_FALSE(ProgramSpec::FromUops({g0, UOp::Sink({})}, "src").ok());
}

TEST(RegistryTest, GetDevice) {
  absl::StatusOr<Device*> cpu = GetDevice("CPU");
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_EQ((*cpu)->name(), "CPU");
  EXPECT_EQ(GetDevice("cpu").value(), *cpu);
  EXPECT_EQ(GetDevice("CPU:0").value(), *cpu);
  absl::StatusOr<Device*> unknown = GetDevice("NOPE");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(unknown.status().message(), HasSubstr("CPU"));
  EXPECT_FALSE(RegisterDevice("cpu", [] { return absl::StatusOr<std::unique_ptr<Device>>(nullptr); }))
      << "the CPU exists already";

  int calls = 0;
  EXPECT_TRUE(RegisterDevice("FLAKY", [&calls]() -> absl::StatusOr<std::unique_ptr<Device>> {
    if (++calls == 1) return absl::UnavailableError("not yet");
    return std::unique_ptr<Device>(std::make_unique<CpuDevice>(CacheIn("")));
  }));
  EXPECT_EQ(GetDevice("flaky").status().code(), absl::StatusCode::kUnavailable);
  ASSERT_TRUE(GetDevice("flaky").ok());
  EXPECT_EQ(calls, 2);
  EXPECT_THAT(RegisteredDevices(), ::testing::Contains("FLAKY"));
}

}  // namespace
}  // namespace uopc
