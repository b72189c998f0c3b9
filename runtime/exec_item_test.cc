// ExecItem on a stand-in device whose program records its launches: what a kernel item launches (buffers in
// its order, variable values, launch dims from the spec), what a copy moves, buffer replacements, and the
// KernelRun and DEBUG=2 line a run reports.
#include "runtime/exec_item.h"

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "runtime/device.h"
#include "schedule/tensor_uop.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// What the last launch got.
struct Launched {
  std::vector<const Buffer*> buffers;
  std::vector<int64_t> var_values;
  LaunchParams launch;
  bool timed = false;
  int count = 0;
};

class RecordingProgram : public Program {
 public:
  RecordingProgram(ProgramSpec spec, Launched* launched) : Program(std::move(spec)), launched_(launched) {}
  absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                      const LaunchParams& params, double* seconds) override {
    launched_->buffers.assign(buffers.begin(), buffers.end());
    launched_->var_values.assign(var_values.begin(), var_values.end());
    launched_->launch = params;
    launched_->timed = seconds != nullptr;
    launched_->count += 1;
    if (seconds != nullptr) *seconds = 0.25e-3;
    return absl::OkStatus();
  }

 private:
  Launched* launched_;
};

class FakeDevice : public Device {
 public:
  FakeDevice() : Device("FAKE") {}
  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return nullptr; }
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec&, absl::string_view) override {
    return absl::UnimplementedError("programs are made by hand here");
  }

 private:
  HostAllocator allocator_;
  SourceCompiler compiler_;
};

// `n` float32 buffers of 4 elements and their BUFFER nodes.
struct Buffers {
  std::vector<Buffer> memory;
  std::vector<UOpPtr> nodes;
  Buffer* at(size_t i) { return &memory[i]; }
};

Buffers MakeBuffers(Device& device, int n, int64_t size = 4) {
  Buffers b;
  for (int i = 0; i < n; ++i) {
    b.memory.push_back(Buffer::Allocate(device, dtypes::kFloat32, size).value());
    b.nodes.push_back(NewBuffer("FAKE", size, dtypes::kFloat32));
  }
  return b;
}

std::vector<uint8_t> Bytes(std::vector<float> v) {
  std::vector<uint8_t> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

// A program of two parameters and one variable `n`: 3n operations, 8n bytes loaded and stored, 100 unique.
std::shared_ptr<Program> MakeProgram(Launched* launched) {
  const UOpPtr n = UOp::Variable("n", 1, 100);
  ProgramSpec spec{.name = "r_4_4",
                   .globals = {0, 1},
                   .vars = {"n"},
                   .global_size = std::vector<int64_t>{4, 2},
                   .local_size = std::vector<int64_t>{8}};
  spec.estimates.ops.Add({n}, 3);
  spec.estimates.lds.Add({n}, 8);
  spec.estimates.mem = 100;
  return std::make_shared<RecordingProgram>(std::move(spec), launched);
}

TEST(LaunchDimsTest, RenderedSizesAndOnesElsewhere) {
  absl::StatusOr<LaunchParams> cpu = LaunchDims(ProgramSpec{});
  ASSERT_TRUE(cpu.ok()) << cpu.status();
  EXPECT_THAT(cpu->global_size, ElementsAre(1, 1, 1));
  EXPECT_THAT(cpu->local_size, ElementsAre(1, 1, 1));
  absl::StatusOr<LaunchParams> gpu = LaunchDims(
      ProgramSpec{.global_size = std::vector<int64_t>{4, 2}, .local_size = std::vector<int64_t>{8}});
  ASSERT_TRUE(gpu.ok()) << gpu.status();
  EXPECT_THAT(gpu->global_size, ElementsAre(4, 2, 1));
  EXPECT_THAT(gpu->local_size, ElementsAre(8, 1, 1));
}

// A program whose first global dim is 4 * i, i read by nothing else (no parameter), beside the variable n.
std::shared_ptr<Program> MakeSymbolicProgram(Launched* launched) {
  ProgramSpec spec{.name = "E_4i",
                   .globals = {0},
                   .vars = {"n"},
                   .global_size = std::vector<int64_t>{40, 3},
                   .local_size = std::vector<int64_t>{2},
                   .symbolic_launch_dims = {{0, UOp::Variable("i", 1, 10) * 4}},
                   .launch_vars = {"i"}};
  return std::make_shared<RecordingProgram>(std::move(spec), launched);
}

TEST(LaunchDimsTest, SymbolicDimsAreEvaluatedForTheValues) {
  Launched launched;
  const std::shared_ptr<Program> program = MakeSymbolicProgram(&launched);
  const ProgramSpec& spec = program->spec();
  absl::StatusOr<LaunchParams> at3 = LaunchDims(spec, {{"i", 3}});
  ASSERT_TRUE(at3.ok()) << at3.status();
  EXPECT_THAT(at3->global_size, ElementsAre(12, 3, 1));
  EXPECT_THAT(at3->local_size, ElementsAre(2, 1, 1));
  EXPECT_THAT(LaunchDims(spec).status().message(), HasSubstr("E_4i's launch dims"));  // i unbound
}

// The item launches with the size for its values, and a replay at another value with that value's size; the
// launch variable is not passed to the program.
TEST(ExecItemTest, SymbolicLaunchDimsFollowTheVariables) {
  FakeDevice device;
  Buffers b = MakeBuffers(device, 1);
  Launched launched;
  EXPECT_FALSE(
      ExecItem::ForProgram(MakeSymbolicProgram(&launched), device, {b.nodes[0]}, {b.at(0)}, {5}).ok());
  absl::StatusOr<ExecItem> item =
      ExecItem::ForProgram(MakeSymbolicProgram(&launched), device, {b.nodes[0]}, {b.at(0)}, {5}, {{"i", 3}});
  ASSERT_TRUE(item.ok()) << item.status();
  ASSERT_TRUE(item->Run().ok());
  EXPECT_THAT(launched.var_values, ElementsAre(5));
  EXPECT_THAT(launched.launch.global_size, ElementsAre(12, 3, 1));
  const absl::flat_hash_map<std::string, int64_t> replay = {{"i", 7}};
  ASSERT_TRUE(item->Run({}, {.var_values = &replay}).ok());
  EXPECT_THAT(launched.var_values, ElementsAre(5));
  EXPECT_THAT(launched.launch.global_size, ElementsAre(28, 3, 1));
  const absl::flat_hash_map<std::string, int64_t> both = {{"i", 10}, {"n", 1}};
  ASSERT_TRUE(item->Run({}, {.var_values = &both}).ok());
  EXPECT_THAT(launched.var_values, ElementsAre(1));
  EXPECT_THAT(launched.launch.global_size, ElementsAre(40, 3, 1));
}

TEST(ExecItemTest, KernelLaunchesItsBuffersValuesAndDims) {
  FakeDevice device;
  Buffers b = MakeBuffers(device, 3);
  Launched launched;
  absl::StatusOr<ExecItem> item =
      ExecItem::ForProgram(MakeProgram(&launched), device, {b.nodes[0], b.nodes[1]}, {b.at(0), b.at(1)}, {7});
  ASSERT_TRUE(item.ok()) << item.status();
  EXPECT_FALSE(item->is_copy());
  EXPECT_EQ(item->name(), "r_4_4");

  absl::StatusOr<KernelRun> run = item->Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_THAT(launched.buffers, ElementsAre(b.at(0), b.at(1)));
  EXPECT_THAT(launched.var_values, ElementsAre(7));
  EXPECT_THAT(launched.launch.global_size, ElementsAre(4, 2, 1));
  EXPECT_THAT(launched.launch.local_size, ElementsAre(8, 1, 1));
  EXPECT_TRUE(launched.timed);
  EXPECT_EQ(run->name, "r_4_4");
  EXPECT_EQ(run->device, "FAKE");
  EXPECT_EQ(run->run_seconds, 0.25e-3);
  EXPECT_EQ(run->flops, 21);  // the estimates for n = 7
  EXPECT_EQ(run->lds, 56);
  EXPECT_EQ(run->bytes, 56);  // the unique bytes, at most those loaded and stored
  EXPECT_EQ(run->num_buffers, 2);
  EXPECT_GE(run->mem_used, 3 * 16);

  // A replacement by node; the item's own buffers are unchanged for the next run.
  ASSERT_TRUE(item->Run({{b.nodes[1].get(), b.at(2)}}, {.timed = false}).ok());
  EXPECT_THAT(launched.buffers, ElementsAre(b.at(0), b.at(2)));
  EXPECT_FALSE(launched.timed);
  ASSERT_TRUE(item->Run({{b.nodes[2].get(), b.at(0)}}).ok());  // not the item's: no change
  EXPECT_THAT(launched.buffers, ElementsAre(b.at(0), b.at(1)));
  EXPECT_EQ(launched.count, 3);
}

TEST(ExecItemTest, KernelChecksItsArguments) {
  FakeDevice device;
  Buffers b = MakeBuffers(device, 2);
  Launched launched;
  EXPECT_THAT(
      ExecItem::ForProgram(MakeProgram(&launched), device, {b.nodes[0]}, {b.at(0)}, {7}).status().message(),
      HasSubstr("takes 2 buffers and 1 variables"));
  EXPECT_FALSE(ExecItem::ForProgram(MakeProgram(&launched), device, b.nodes, {b.at(0), b.at(1)}, {}).ok());
  EXPECT_EQ(launched.count, 0);
}

TEST(ExecItemTest, CopyMovesTheSourceIntoTheDestination) {
  FakeDevice device;
  Buffers b = MakeBuffers(device, 3);
  ASSERT_TRUE(b.at(1)->CopyIn(Bytes({1, 2, 3, 4})).ok());
  ASSERT_TRUE(b.at(2)->CopyIn(Bytes({5, 6, 7, 8})).ok());
  absl::StatusOr<ExecItem> item = ExecItem::ForCopy({b.nodes[0], b.nodes[1]}, {b.at(0), b.at(1)});
  ASSERT_TRUE(item.ok()) << item.status();
  EXPECT_TRUE(item->is_copy());
  EXPECT_EQ(item->name(), "copy 16, FAKE <- FAKE");

  absl::StatusOr<KernelRun> run = item->Run();
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(b.at(0)->ToBytes().value(), Bytes({1, 2, 3, 4}));
  EXPECT_EQ(run->bytes, 16);
  EXPECT_EQ(run->lds, 16);
  EXPECT_EQ(run->flops, 0);
  EXPECT_EQ(run->num_buffers, 2);

  ASSERT_TRUE(item->Run({{b.nodes[1].get(), b.at(2)}}).ok());
  EXPECT_EQ(b.at(0)->ToBytes().value(), Bytes({5, 6, 7, 8}));

  Buffers other = MakeBuffers(device, 1, /*size=*/8);
  EXPECT_FALSE(ExecItem::ForCopy({b.nodes[0], other.nodes[0]}, {b.at(0), other.at(0)}).ok());
  EXPECT_FALSE(ExecItem::ForCopy({b.nodes[0]}, {b.at(0)}).ok());
}

// DEBUG=2: one line a run, numbered and timed across the process's runs; nothing below 2.
TEST(ExecItemTest, DebugTwoPrintsTheRunsLine) {
  FakeDevice device;
  Buffers b = MakeBuffers(device, 2);
  Launched launched;
  absl::StatusOr<ExecItem> item =
      ExecItem::ForProgram(MakeProgram(&launched), device, b.nodes, {b.at(0), b.at(1)}, {7});
  ASSERT_TRUE(item.ok()) << item.status();
  std::string debug;
  ASSERT_TRUE(item->Run({}, {.debug = 1, .debug_out = &debug}).ok());
  EXPECT_EQ(debug, "");
  absl::StatusOr<KernelRun> first = item->Run({}, {.debug = 2, .debug_out = &debug});
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE(item->Run({}, {.debug = 2, .debug_out = &debug}).ok());
  std::vector<std::string> lines = absl::StrSplit(debug, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u) << debug;
  EXPECT_THAT(lines[0], StartsWith("*** FAKE    "));
  EXPECT_THAT(lines[0], HasSubstr(" r_4_4 "));
  EXPECT_THAT(lines[0], HasSubstr(" arg  2 mem "));
  EXPECT_THAT(lines[0], HasSubstr("tm    250.00us/"));
  // The second line is the next number, with the summed time one run more.
  int64_t number = 0;
  ASSERT_TRUE(absl::SimpleAtoi(lines[0].substr(12, 4), &number)) << lines[0];
  const std::string head = absl::StrFormat("*** FAKE    %4d ", number + 1);
  EXPECT_THAT(lines[1], StartsWith(head)) << lines[1];
}

}  // namespace
}  // namespace uopc
