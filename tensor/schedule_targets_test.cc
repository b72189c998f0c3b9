// The schedule of a program does not depend on the device it is for, as in tinygrad v0.10.3: every gradient
// program (tensor/testing/grad_programs.h) scheduled for the device of each target uopc renders
// (renderer/targets.h) has the kernels it has on CPU: as many, in the same order, each with the same AST,
// reading and writing buffers of the same dtypes and sizes in the same pattern, on that device.
//
// tinygrad's scheduler (engine/grouper.py, engine/schedule.py, engine/memory.py) consults a device in two
// places, neither of which changes these programs' kernels: a BITCAST or CONTIGUOUS of a DISK buffer becomes
// a BUFFER_VIEW (uopc has no DISK device), and the memory planner sub-allocates from one arena on devices
// whose allocator can offset into a buffer (docs/parity.md). It reads no device limit (v0.10.3 has no maximum
// of buffers per kernel) and schedules for devices it cannot open: `harvest_grad_graphs.py TINYGRAD
// --by-device` finds the same kernels for these programs on every device tinygrad has. So no case here
// encodes a difference.
//
// Scheduling opens no device, so every target's device is checked without its hardware; the last test runs
// the conv program's schedule on a device that runs CUDA's programs in the interpreter.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/targets.h"
#include "runtime/interp_device.h"
#include "runtime/realize.h"
#include "runtime/registry.h"
#include "schedule/schedule.h"
#include "schedule/tensor_uop.h"
#include "tensor/tensor.h"
#include "tensor/testing/grad_programs.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// The device each target renders for, by uopc's device names (tinygrad calls OPENCL "GPU"). PTX is a second
// renderer of the CUDA device (tinygrad's CUDA=1 PTX=1).
const std::map<std::string, std::string>& DeviceOfTarget() {
  static const auto* devices = new std::map<std::string, std::string>{
      {"clang", "CPU"},   {"llvm", "LLVM"}, {"opencl", "OPENCL"},
      {"metal", "METAL"}, {"cuda", "CUDA"}, {"ptx", "CUDA"},
  };
  return *devices;
}

// Every device to check against CPU: the targets' and the interpreter's.
std::vector<std::string> DevicesToCheck() {
  std::vector<std::string> devices;
  for (const auto& [target, device] : DeviceOfTarget()) {
    if (device != "CPU" && std::find(devices.begin(), devices.end(), device) == devices.end()) {
      devices.push_back(device);
    }
  }
  devices.push_back("INTERP");
  return devices;
}

// The program's loss and gradients scheduled together for `device`, without touching the device.
absl::StatusOr<Schedule> ScheduleOn(const std::string& device, const GradProgram& program) {
  Tensor::SetDefaultDevice(device);
  absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
  Tensor::SetDefaultDevice("CPU");
  if (!outs.ok()) return outs.status();
  std::vector<UOpPtr> roots;
  for (const Tensor& t : *outs) roots.push_back(t.uop());
  return CreateSchedule(UOp::Sink(roots));
}

// The program's schedule on CPU, made once for all the devices compared with it.
absl::StatusOr<const Schedule*> CpuSchedule(const GradProgram& program) {
  static auto* schedules = new std::map<std::string, Schedule>();
  if (auto it = schedules->find(program.name); it != schedules->end()) return &it->second;
  UOPC_ASSIGN_OR_RETURN(Schedule s, ScheduleOn("CPU", program));
  return &schedules->emplace(program.name, std::move(s)).first->second;
}

// `ast` with every DEVICE named `from` renamed `to` (a COPY's AST names its device; a kernel's names none).
UOpPtr RenameDevice(const UOpPtr& ast, const std::string& from, const std::string& to) {
  absl::flat_hash_map<const UOp*, UOpPtr> rename;
  for (const UOp* u : ast->Toposort()) {
    if (u->op() == Ops::DEVICE && u->arg().as_string() == from) {
      rename[u] = UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(to));
    }
  }
  return rename.empty() ? ast : ast->Substitute(rename);
}

// "" when `got` (for `device`) has `want`'s kernels (for CPU), else the first difference.
std::string ScheduleDifference(const Schedule& want, const Schedule& got, const std::string& device) {
  if (got.items.size() != want.items.size()) {
    return absl::StrCat(got.items.size(), " kernels, ", want.items.size(), " on CPU");
  }
  // Buffers by first use, so that kernels sharing a buffer (or the planner's reuse) compare.
  absl::flat_hash_map<const UOp*, int> want_ids, got_ids;
  for (size_t i = 0; i < want.items.size(); ++i) {
    const ScheduleItem& w = want.items[i];
    const ScheduleItem& g = got.items[i];
    if (RenameDevice(g.ast, device, "CPU").get() != w.ast.get()) {
      return absl::StrCat("kernel ", i, "'s AST differs");
    }
    if (g.bufs.size() != w.bufs.size()) {
      return absl::StrCat("kernel ", i, " has ", g.bufs.size(), " buffers, ", w.bufs.size(), " on CPU");
    }
    for (size_t j = 0; j < w.bufs.size(); ++j) {
      const UOp* wb = w.bufs[j].get();
      const UOp* gb = g.bufs[j].get();
      const std::string where = absl::StrCat("kernel ", i, " buffer ", j);
      // What is on CPU there is on `device` here; a copy's source (PYTHON's host data) stays where it was.
      const std::string want_device = DeviceOf(wb) == "CPU" ? device : DeviceOf(wb);
      if (DeviceOf(gb) != want_device) return absl::StrCat(where, " is on ", DeviceOf(gb));
      if (gb->dtype() != wb->dtype() || gb->arg() != wb->arg()) return absl::StrCat(where, " differs");
      int wid = want_ids.try_emplace(wb, static_cast<int>(want_ids.size())).first->second;
      int gid = got_ids.try_emplace(gb, static_cast<int>(got_ids.size())).first->second;
      if (wid != gid) return absl::StrCat(where, " is another kernel's buffer than on CPU");
    }
  }
  return "";
}

std::map<std::string, nlohmann::json> Harvested() {
  std::map<std::string, nlohmann::json> out;
  std::ifstream in("tensor/testdata/grad_graphs.jsonl");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    out[j["program"].get<std::string>()] = j;
  }
  return out;
}

const GradProgram& ProgramNamed(const std::string& name) {
  for (const GradProgram& p : GradPrograms()) {
    if (p.name == name) return p;
  }
  ADD_FAILURE() << "no program " << name;
  return GradPrograms()[0];
}

TEST(ScheduleTargetsTest, EveryTargetHasADevice) {
  for (const std::string& target : KnownTargets()) {
    EXPECT_TRUE(DeviceOfTarget().count(target)) << target << " renders for which device?";
  }
}

// One case per device: every program's kernels there are its kernels on CPU, and tinygrad's count.
class ScheduleOnDeviceTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ScheduleOnDeviceTest, KernelsAreTheCpusKernels) {
  const std::string& device = GetParam();
  std::map<std::string, nlohmann::json> harvested = Harvested();
  ASSERT_EQ(harvested.size(), GradPrograms().size());
  for (const GradProgram& program : GradPrograms()) {
    absl::StatusOr<const Schedule*> cpu = CpuSchedule(program);
    ASSERT_TRUE(cpu.ok()) << program.name << ": " << cpu.status();
    absl::StatusOr<Schedule> there = ScheduleOn(device, program);
    ASSERT_TRUE(there.ok()) << program.name << " on " << device << ": " << there.status();
    EXPECT_EQ(ScheduleDifference(**cpu, *there, device), "") << program.name << " on " << device;
    EXPECT_EQ(static_cast<int64_t>(there->items.size()), harvested[program.name]["n_kernels"].get<int64_t>())
        << program.name << " on " << device;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryTarget, ScheduleOnDeviceTest, ::testing::ValuesIn(DevicesToCheck()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The conv program realized on a device that runs CUDA's programs (sm_80, tensor cores) in the interpreter
// ("CUDA_IN_INTERP"; the kernel cache knows it by its device's name, INTERP, which no other test here runs
// on): the 17 kernels of its schedule run, no more, and give tinygrad's values. Reading the
// values back runs one kernel more: the gradient of the matrix is a transposed view of its kernel's output,
// which a read makes contiguous first, as tinygrad's Tensor.numpy() and tolist() do (17 + 1 runs there too).
TEST(ScheduleTargetsTest, ConvProgramRunsItsScheduleOnCuda) {
  const std::string device = "CUDA_IN_INTERP";
  RegisterDevice(device, []() -> absl::StatusOr<std::unique_ptr<Device>> {
    UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Renderer> cuda, MakeRendererForTarget("cuda"));
    return std::unique_ptr<Device>(new InterpDevice(std::move(cuda)));
  });
  const GradProgram& program = ProgramNamed("conv_pool_logsumexp");
  const nlohmann::json want = Harvested()[program.name];
  ASSERT_EQ(want["n_kernels"], 17);

  Tensor::SetDefaultDevice(device);
  absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
  Tensor::SetDefaultDevice("CPU");
  ASSERT_TRUE(outs.ok()) << outs.status();
  std::vector<std::string> runs;
  SetKernelRunListener([&](const KernelRun& run) { runs.push_back(run.name); });
  absl::Status realized = Tensor::RealizeAll(*outs);
  const size_t scheduled_runs = runs.size();
  std::vector<absl::StatusOr<std::vector<float>>> values;
  for (const Tensor& t : *outs) values.push_back(t.ToVector<float>());
  SetKernelRunListener(nullptr);
  ASSERT_TRUE(realized.ok()) << realized;
  for (const auto& v : values) ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ(scheduled_runs, 17u);
  ASSERT_EQ(runs.size(), 18u);
  EXPECT_EQ(runs.back().substr(0, 2), "E_") << "the read's copy of the transposed gradient";

  auto close = [](float got, double w) { return std::abs(got - w) <= 1e-3 + 1e-3 * std::abs(w); };
  ASSERT_EQ(values[0]->size(), 1u);
  EXPECT_TRUE(close((*values[0])[0], want["loss"].get<double>()))
      << (*values[0])[0] << " vs " << want["loss"];
  for (size_t k = 1; k < values.size(); ++k) {
    const std::vector<float>& got = *values[k];
    const nlohmann::json& g = want["grads"][k - 1]["values"];
    ASSERT_EQ(got.size(), g.size()) << "gradient " << k - 1;
    for (size_t i = 0; i < g.size(); ++i) {
      ASSERT_TRUE(close(got[i], g[i].get<double>()))
          << "gradient " << k - 1 << "[" << i << "] " << got[i] << " vs " << g[i];
    }
  }
}

}  // namespace
}  // namespace uopc
