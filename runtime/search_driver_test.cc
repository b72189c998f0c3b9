// BEAM search on real devices: searched kernels compute what the unoptimized ones compute (directly and
// through realize), the timing process survives candidates that crash or hang, the cache answers a repeated
// search. No assertion depends on how fast anything ran.
#include "runtime/search_driver.h"

#include <cstdlib>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/targets.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/realize.h"
#include "runtime/registry.h"
#include "schedule/schedule.h"
#include "schedule/tensor_uop.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

const CorpusKernel& Corpus(const std::string& id) {
  for (const CorpusKernel& ck : KernelCorpus()) {
    if (ck.id == id) return ck;
  }
  static CorpusKernel missing;
  ADD_FAILURE() << "no corpus kernel " << id;
  return missing;
}

std::string TempDirectory(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/beam_", name);
  std::filesystem::remove_all(dir);
  return dir;
}

DeviceBeamOptions TestOptions(const std::string& cache_name) {
  DeviceBeamOptions o;
  o.search.beam_width = 2;
  o.cache_directory = TempDirectory(cache_name);
  o.progress = DeviceBeamOptions::Progress::kNever;
  return o;
}

// The DType of each stored-to buffer of a corpus kernel, by arg.
DType OutputDType(const CorpusKernel& ck, const std::string& arg) {
  for (const CorpusBuffer& b : ck.buffers) {
    if (std::to_string(b.arg) == arg) return CorpusDType(b.dtype).value();
  }
  ADD_FAILURE() << "no buffer " << arg;
  return dtypes::kFloat32;
}

void ExpectSearchedEqualsUnoptimized(const std::string& device_name, const std::string& id, bool isolate,
                                     int64_t beam_width) {
  absl::StatusOr<Device*> device = GetDevice(device_name);
  ASSERT_TRUE(device.ok()) << device.status();
  const CorpusKernel& ck = Corpus(id);
  UOpPtr ast = ParseCorpusGraph(ck.ast);
  DeviceBeamOptions options = TestOptions(absl::StrCat("equal_", device_name));
  options.isolate = isolate;
  options.read_cache = false;
  options.search.beam_width = beam_width;
  absl::StatusOr<DeviceBeamResult> r = BeamSearchOnDevice(ast, **device, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->from_cache);
  EXPECT_GT(r->search.timed, 0) << id;
  EXPECT_EQ(r->search.failed, 0) << id;
  CompileOptions searched, plain;
  searched.opts = r->opts;
  plain.optimize = false;
  absl::StatusOr<nlohmann::json> got = RunOnCorpusInputs(ast, nullptr, **device, searched);
  absl::StatusOr<nlohmann::json> want = RunOnCorpusInputs(ast, nullptr, **device, plain);
  ASSERT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
  ASSERT_EQ(got->size(), want->size());
  for (const auto& [arg, values] : want->items()) {
    EXPECT_EQ(CorpusValuesMismatch(OutputDType(ck, arg), (*got)[arg], values), "")
        << id << " on " << device_name << " with [" << OptListToCompactString(r->opts) << "]";
  }
}

TEST(BeamSearchOnDeviceTest, SearchedKernelsComputeWhatUnoptimizedOnesDoOnCpu) {
  ExpectSearchedEqualsUnoptimized("CPU", "matmul_64/0", /*isolate=*/true, /*beam_width=*/2);
  ExpectSearchedEqualsUnoptimized("CPU", "bigger_sum/0", /*isolate=*/true, /*beam_width=*/1);
}

TEST(BeamSearchOnDeviceTest, SearchedKernelsComputeWhatUnoptimizedOnesDoOnLlvm) {
  ExpectSearchedEqualsUnoptimized("LLVM", "softmax/1", /*isolate=*/true, /*beam_width=*/2);
}

TEST(BeamSearchOnDeviceTest, InProcessTimingFindsOptsToo) {
  ExpectSearchedEqualsUnoptimized("CPU", "sum_all/0", /*isolate=*/false, /*beam_width=*/1);
}

TEST(BeamSearchOnDeviceTest, TheCacheAnswersARepeatedSearch) {
  absl::StatusOr<Device*> cpu = GetDevice("CPU");
  ASSERT_TRUE(cpu.ok());
  UOpPtr ast = ParseCorpusGraph(Corpus("sum_all/0").ast);
  DeviceBeamOptions options = TestOptions("cache");
  absl::StatusOr<DeviceBeamResult> first = BeamSearchOnDevice(ast, **cpu, options);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE(first->from_cache);
  absl::StatusOr<DeviceBeamResult> second = BeamSearchOnDevice(ast, **cpu, options);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->from_cache);
  EXPECT_EQ(OptListToCompactString(second->opts), OptListToCompactString(first->opts));
  // IGNORE_BEAM_CACHE: searched again.
  options.read_cache = false;
  absl::StatusOr<DeviceBeamResult> third = BeamSearchOnDevice(ast, **cpu, options);
  ASSERT_TRUE(third.ok());
  EXPECT_FALSE(third->from_cache);
  EXPECT_GT(third->search.rounds, 0);
}

// ---- the timing process ----

ProgramSpec HandWritten(const std::string& body) {
  ProgramSpec p;
  p.name = "test";
  p.src = absl::StrCat("void test(float* restrict data0) {\n", body, "\n}\n");
  p.globals = {0};
  p.outs = {0};
  return p;
}

TEST(DeviceEvaluatorTest, CrashesAndHangsAreDroppedAndTheNextCandidateRuns) {
  absl::StatusOr<Device*> cpu = GetDevice("CPU");
  ASSERT_TRUE(cpu.ok());
  absl::StatusOr<std::unique_ptr<DeviceEvaluator>> evaluator =
      DeviceEvaluator::Create(**cpu, {TimingBuffer{0, dtypes::kFloat32, 16, true}}, /*isolate=*/true,
                              /*timeout_seconds=*/1.0);
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  ASSERT_TRUE((*evaluator)->isolated());
  std::vector<ProgramSpec> programs = {
      HandWritten("*(volatile int*)0 = 1;"),                             // crashes
      HandWritten("for (;;) { __asm__ volatile(\"\"); }"),               // never ends
      HandWritten("for (int i = 0; i < 16; i++) data0[i] = (float)i;"),  // fine
      HandWritten("for (;;) { __asm__ volatile(\"\"); }"),               // never ends, but a cut applies
      HandWritten("for (int i = 0; i < 16; i++) data0[i] = data0[i] + 1.0f;"),  // fine
  };
  std::vector<std::string> binaries;
  for (const ProgramSpec& p : programs) {
    absl::StatusOr<std::string> b = (*evaluator)->Compile(p);
    ASSERT_TRUE(b.ok()) << b.status();
    binaries.push_back(*b);
  }
  std::vector<TimingJob> jobs;
  for (size_t i = 0; i < programs.size(); ++i) jobs.push_back({&programs[i], &binaries[i], {}});
  (*evaluator)->StartTiming(jobs);
  const double inf = std::numeric_limits<double>::infinity();
  absl::StatusOr<std::vector<double>> crashed = (*evaluator)->Time(0, 3, inf);
  EXPECT_FALSE(crashed.ok());
  EXPECT_NE(crashed.status().message().find("crashed (signal 11)"), std::string::npos) << crashed.status();
  absl::StatusOr<std::vector<double>> hung = (*evaluator)->Time(1, 3, inf);
  EXPECT_EQ(hung.status().code(), absl::StatusCode::kDeadlineExceeded) << hung.status();
  absl::StatusOr<std::vector<double>> fine = (*evaluator)->Time(2, 3, inf);
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(fine->size(), 3u);
  // With an early cut of 1 ms, a candidate still running well past it is killed and kept as "slower than
  // that" (one lower-bound time), not as a failure.
  absl::StatusOr<std::vector<double>> cut = (*evaluator)->Time(3, 3, 0.001);
  ASSERT_TRUE(cut.ok()) << cut.status();
  ASSERT_EQ(cut->size(), 1u);
  EXPECT_GT((*cut)[0], 0.001);
  absl::StatusOr<std::vector<double>> fine_again = (*evaluator)->Time(4, 2, inf);
  ASSERT_TRUE(fine_again.ok()) << fine_again.status();
  EXPECT_EQ(fine_again->size(), 2u);
  (*evaluator)->FinishTiming();
  // One child to start with, and a new one after the crash, the hang and the cut.
  EXPECT_EQ((*evaluator)->children_started(), 4);
}

TEST(DeviceEvaluatorTest, ACompileErrorIsAStatus) {
  absl::StatusOr<Device*> cpu = GetDevice("CPU");
  ASSERT_TRUE(cpu.ok());
  absl::StatusOr<std::unique_ptr<DeviceEvaluator>> evaluator =
      DeviceEvaluator::Create(**cpu, {TimingBuffer{0, dtypes::kFloat32, 16, true}}, true, 1.0);
  ASSERT_TRUE(evaluator.ok());
  EXPECT_FALSE((*evaluator)->Compile(HandWritten("this is not C")).ok());
}

// ---- failures: the candidate's, or the device's ----

// A GPU stand-in that runs nothing (CUDA's renderer, host memory, timed in process): a launch takes a time
// made of the program's source, or is refused (a launch the device does not take; the device is fine), or
// faults and loses the device (every Synchronize fails from then on, as a CUDA context does after an illegal
// address), by the candidate's opts.
class FakeGpu : public Device {
 public:
  FakeGpu() : Device("FAKE_GPU"), renderer_(*MakeRendererForTarget("cuda")) {}

  std::function<bool(const ProgramSpec&)> refuses = [](const ProgramSpec&) { return false; };
  std::function<bool(const ProgramSpec&)> faults = [](const ProgramSpec&) { return false; };
  bool lost = false;
  int64_t launches = 0;
  int64_t launches_when_lost = 0;

  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return renderer_.get(); }
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec, absl::string_view) override {
    return std::unique_ptr<Program>(new FakeProgram(*this, spec));
  }
  absl::Status Synchronize() override {
    return lost ? absl::InternalError("CUDA_ERROR_ILLEGAL_ADDRESS") : absl::OkStatus();
  }

 private:
  class FakeProgram : public Program {
   public:
    FakeProgram(FakeGpu& gpu, ProgramSpec spec) : Program(std::move(spec)), gpu_(gpu) {}
    absl::Status Launch(absl::Span<Buffer* const>, absl::Span<const int64_t>, const LaunchParams&,
                        double* seconds) override {
      ++gpu_.launches;
      if (gpu_.lost) return absl::InternalError("CUDA_ERROR_ILLEGAL_ADDRESS");
      if (gpu_.refuses(spec())) return absl::InvalidArgumentError("CUDA_ERROR_INVALID_VALUE");
      if (gpu_.faults(spec())) {
        gpu_.lost = true;
        gpu_.launches_when_lost = gpu_.launches;
        return absl::InternalError("CUDA_ERROR_ILLEGAL_ADDRESS");
      }
      // 1 to 2 ms, by the source (FNV-1a).
      uint64_t h = 1469598103934665603ull;
      for (unsigned char c : spec().src) h = (h ^ c) * 1099511628211ull;
      if (seconds != nullptr) *seconds = 1e-3 * (1 + static_cast<double>(h >> 11) / 9007199254740992.0);
      return absl::OkStatus();
    }

   private:
    FakeGpu& gpu_;
  };

  HostAllocator allocator_;
  SourceCompiler compiler_;
  std::unique_ptr<Renderer> renderer_;
};

bool Has(const ProgramSpec& p, OptOps op) {
  for (const Opt& o : p.applied_opts) {
    if (o.op == op) return true;
  }
  return false;
}

DeviceBeamOptions FakeGpuOptions(const std::string& cache_name) {
  DeviceBeamOptions options = TestOptions(cache_name);
  options.read_cache = options.write_cache = false;
  options.isolate = false;  // a GPU times in process
  return options;
}

// Launches the device refuses drop their candidates; the search returns the best of the others.
TEST(BeamSearchOnDeviceTest, RefusedCandidatesAreDropped) {
  FakeGpu gpu;
  gpu.refuses = [](const ProgramSpec& p) { return Has(p, OptOps::kUpcast); };
  absl::StatusOr<DeviceBeamResult> r =
      BeamSearchOnDevice(ParseCorpusGraph(Corpus("matmul_64/0").ast), gpu, FakeGpuOptions("refused"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(gpu.lost);
  EXPECT_GT(r->search.failed, 0);
  EXPECT_GT(r->search.timed, 0);
  EXPECT_EQ(r->search.first_failure.code(), absl::StatusCode::kInvalidArgument) << r->search.first_failure;
  ASSERT_FALSE(r->opts.empty());
  for (const Opt& o : r->opts) EXPECT_NE(o.op, OptOps::kUpcast) << OptListToCompactString(r->opts);
}

// A candidate after whose run the device no longer synchronizes has lost the device: the search ends with
// that error (marked EndBeamSearch) instead of failing every candidate after it.
TEST(BeamSearchOnDeviceTest, ALostDeviceEndsTheSearch) {
  FakeGpu gpu;
  gpu.faults = [](const ProgramSpec& p) { return Has(p, OptOps::kUnroll); };
  absl::StatusOr<DeviceBeamResult> r =
      BeamSearchOnDevice(ParseCorpusGraph(Corpus("matmul_64/0").ast), gpu, FakeGpuOptions("lost"));
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(EndsBeamSearch(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("does not recover"), std::string::npos) << r.status();
  EXPECT_TRUE(gpu.lost);
  // Candidates ran before the fault, none after it.
  EXPECT_GT(gpu.launches_when_lost, 1);
  EXPECT_EQ(gpu.launches, gpu.launches_when_lost);
}

// ---- through realize ----

// The kernel's output after RunSchedule with `options`, on the corpus's inputs.
absl::StatusOr<std::vector<uint8_t>> RunThroughRealize(const CorpusKernel& ck,
                                                       const RealizeOptions& options) {
  Schedule schedule;
  ScheduleItem item;
  item.ast = ParseCorpusGraph(ck.ast);
  for (const CorpusBuffer& b : ck.buffers) {
    UOPC_ASSIGN_OR_RETURN(DType dtype, CorpusDType(b.dtype));
    UOpPtr buffer = NewBuffer("CPU", b.size, dtype);
    UOPC_RETURN_IF_ERROR(BufferStore::Global().Write(buffer, CorpusInputBytes(dtype, b.arg, b.size)));
    item.bufs.push_back(buffer);
  }
  schedule.items.push_back(item);
  UOPC_ASSIGN_OR_RETURN(std::vector<KernelRun> runs, RunSchedule(schedule, options));
  return BufferStore::Global().Read(item.bufs[0]);
}

TEST(RealizeWithBeamTest, GivesTheResultsOfTheUnoptimizedKernel) {
  const std::string cache_home = TempDirectory("realize");
  setenv("XDG_CACHE_HOME", cache_home.c_str(), 1);
  const CorpusKernel& ck = Corpus("bigger_sum/0");
  RealizeOptions beam, noopt;
  beam.beam = 2;
  noopt.noopt = true;
  std::string debug;
  beam.debug = 3;  // prints the applied opts
  beam.debug_out = &debug;
  absl::StatusOr<std::vector<uint8_t>> got = RunThroughRealize(ck, beam);
  absl::StatusOr<std::vector<uint8_t>> want = RunThroughRealize(ck, noopt);
  ASSERT_TRUE(got.ok() && want.ok()) << got.status() << want.status();
  DType dtype = CorpusDType(ck.buffers[0].dtype).value();
  EXPECT_EQ(
      CorpusValuesMismatch(dtype, *CorpusJsonFromBytes(dtype, *got), *CorpusJsonFromBytes(dtype, *want)), "");
  // The search's winner is in the disk cache now.
  ASSERT_TRUE(std::filesystem::is_directory(cache_home + "/uopc/beam")) << debug;
  EXPECT_FALSE(std::filesystem::is_empty(cache_home + "/uopc/beam"));
}

}  // namespace
}  // namespace uopc
