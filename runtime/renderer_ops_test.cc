// Every renderer takes every op the kernel spec allows. tinygrad's front end emits only some ALU ops (never
// SUB, FDIV or a hand-placed MULACC, for instance), so its renderers never needed the rest; users of codegen
// write their own kernel ASTs, so uopc's must render or lower every op of uop/spec.cc, for every dtype that
// ExecAlu (the single source of op semantics) gives a meaning.
//
// Each op (and each CAST and BITCAST) on each common dtype becomes an elementwise kernel AST out = op(a, b,
// c) over loaded buffers. Every target (C, OpenCL, Metal, CUDA, PTX, LLVM IR) must compile it, with the
// hand-coded opts (which vectorize) and without; the CPU and LLVM devices run it, INTERP runs every target's
// linear program but PTX's, and on an NVIDIA GPU the CUDA device runs uopc's PTX and CUDA C, all compared
// with ExecAlu on the same inputs. A PTX render must also use only instructions PTX defines for its types
// (renderer/ptx_isa.h) and assemble, where there is ptxas. To stay fast, each dtype's ops run as one kernel
// of many outputs; a kernel that fails to compile is retried op by op, to name the op.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "renderer/gpu_cstyle.h"
#include "renderer/llvmir.h"
#include "renderer/ptx.h"
#include "renderer/ptx_isa.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/cuda_device.h"
#include "runtime/interp_device.h"
#include "runtime/registry.h"
#include "shapetracker/shapetracker.h"
#include "uop/exec_alu.h"
#include "uop/spec.h"
#include "uop/status_macros.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

using nlohmann::json;

constexpr int kLanes = 8;

const std::vector<DType>& AllDTypes() {
  static const std::vector<DType>* const kAll = new std::vector<DType>{
      dtypes::kBool,     dtypes::kInt8,    dtypes::kUInt8,  dtypes::kInt16,  dtypes::kUInt16,
      dtypes::kInt32,    dtypes::kUInt32,  dtypes::kInt64,  dtypes::kUInt64, dtypes::kFloat16,
      dtypes::kBFloat16, dtypes::kFloat32, dtypes::kFloat64};
  return *kAll;
}

// What an operand holds: the op's first, second or third value, a condition, or a shift count (in the
// shifted dtype, or in uint32, the other dtype the spec allows for it).
enum class Role { kA, kB, kC, kCondition, kShift };

// Eight values of `dt` for `role`, each exactly representable, chosen so that no lane is undefined in C
// (no shift by the width or more, no signed division overflow). Integer division by zero is included:
// codegen guards it (ExecAlu's x // 0 == 0).
std::vector<ConstValue> Values(DType dt, Role role) {
  std::vector<double> raw;
  if (role == Role::kCondition) {
    raw = {1, 0, 1, 0, 0, 1, 1, 0};
  } else if (dt.is_bool()) {
    raw = role == Role::kA   ? std::vector<double>{0, 1, 0, 1, 0, 1, 1, 0}
          : role == Role::kB ? std::vector<double>{0, 0, 1, 1, 1, 0, 1, 0}
                             : std::vector<double>{1, 0, 1, 0, 0, 1, 1, 0};
  } else if (role == Role::kShift) {
    raw = {0, 1, 2, 3, 4, 1, 5, 6};
  } else if (dt.is_float()) {
    raw = role == Role::kA   ? std::vector<double>{0, 1, -1.5, 2.5, 0.25, 100, -3, 7}
          : role == Role::kB ? std::vector<double>{3, -2, 0.5, 1, 2, -1, 0.25, 1.5}
                             : std::vector<double>{2, 3, -4, 0, 1, 9, 5, -6};
  } else {
    raw = role == Role::kA   ? std::vector<double>{0, 1, -1, 5, -7, 100, 42, -100}
          : role == Role::kB ? std::vector<double>{3, -2, 0, 1, 2, -5, 3, 7}
                             : std::vector<double>{2, 3, -4, 0, 1, 9, 5, -6};
  }
  std::vector<ConstValue> out;
  for (double v : raw) {
    const ConstValue value = dt.is_float() ? ConstValue::Float(v) : ConstValue::Int(static_cast<int64_t>(v));
    out.push_back(ExecCast(value, dtypes::kFloat64, dt).value_or(ConstValue()));
  }
  // The extremes of an integer dtype, where they cannot overflow a division.
  if (dt.is_int() && role == Role::kA) {
    out[6] = DTypeMax(dt);
    if (dt.is_unsigned()) out[7] = DTypeMin(dt);
  }
  return out;
}

json ValueJson(const ConstValue& v, DType dt) {
  if (dt.is_bool()) return v.AsBool();
  if (dt.is_float()) {
    const double f = v.AsFloat();
    if (std::isnan(f)) return "nan";
    if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
    return f;
  }
  const absl::int128 i = v.AsInt();
  if (i < 0) return static_cast<int64_t>(i);
  return static_cast<uint64_t>(i);
}

// One output of a kernel: `op` of `dtype` on operands of the given roles and dtypes.
struct Case {
  std::string name;
  Ops op;
  DType dtype;
  std::vector<std::pair<Role, DType>> operands;
};

// ExecAlu's results for a case, or nullopt where ExecAlu gives the op no meaning on these dtypes.
std::optional<std::vector<ConstValue>> Expected(const Case& c) {
  std::vector<ConstValue> out;
  for (int lane = 0; lane < kLanes; ++lane) {
    std::vector<ConstValue> args;
    for (const auto& [role, dt] : c.operands) args.push_back(Values(dt, role)[lane]);
    std::optional<DType> operand_dtype;
    if (c.op == Ops::CAST || c.op == Ops::BITCAST || c.op == Ops::CMPLT || c.op == Ops::CMPNE)
      operand_dtype = c.operands[0].second;
    absl::StatusOr<ConstValue> v = ExecAlu(c.op, c.dtype, args, operand_dtype);
    if (!v.ok()) return std::nullopt;
    out.push_back(*v);
  }
  return out;
}

// A kernel of several cases: the AST, its inputs ({"ARG": [values]}), and per output buffer the case.
struct Kernel {
  UOpPtr ast;
  json inputs = json::object();
  std::map<int64_t, std::pair<Case, std::vector<ConstValue>>> outputs;
};

absl::StatusOr<Kernel> BuildKernel(const std::vector<std::pair<Case, std::vector<ConstValue>>>& cases) {
  UOPC_ASSIGN_OR_RETURN(ShapeTracker st, ShapeTracker::FromShape({kLanes}));
  const UOpPtr view = st.ToUOp();
  Kernel k;
  int64_t next_arg = 0;
  std::map<std::pair<int, std::string>, UOpPtr> loads;  // (role, dtype) -> its load
  std::vector<UOpPtr> stores;
  for (const auto& [c, want] : cases) {
    std::vector<UOpPtr> src;
    for (const auto& [role, dt] : c.operands) {
      UOpPtr& load = loads[{static_cast<int>(role), dt.ToString()}];
      if (load == nullptr) {
        const int64_t arg = next_arg++;
        load = UOp::New(Ops::DEFINE_GLOBAL, dt.Ptr(kLanes), {}, arg).load({view});
        json values = json::array();
        for (const ConstValue& v : Values(dt, role)) values.push_back(ValueJson(v, dt));
        k.inputs[absl::StrCat(arg)] = values;
      }
      src.push_back(load);
    }
    const int64_t arg = next_arg++;
    const UOpPtr out = UOp::New(Ops::DEFINE_GLOBAL, c.dtype.Ptr(kLanes), {}, arg);
    stores.push_back(out.store({view, UOp::New(c.op, c.dtype, src)}));
    k.outputs.emplace(arg, std::make_pair(c, want));
  }
  k.ast = UOp::Sink(stores);
  return k;
}

// The cases of every ALU op on `dt` that ExecAlu defines and the kernel spec accepts.
std::vector<std::pair<Case, std::vector<ConstValue>>> AluCases(DType dt) {
  std::vector<Case> candidates;
  auto add = [&](Ops op, DType out, std::vector<std::pair<Role, DType>> operands, std::string suffix = "") {
    candidates.push_back(
        {absl::StrCat(OpName(op), suffix, " ", dt.ToString()), op, out, std::move(operands)});
  };
  groups::kUnary.ForEach([&](Ops op) { add(op, dt, {{Role::kA, dt}}); });
  groups::kBinary.ForEach([&](Ops op) {
    if (op == Ops::CMPLT || op == Ops::CMPNE) {
      add(op, dtypes::kBool, {{Role::kA, dt}, {Role::kB, dt}});
    } else if (op == Ops::SHL || op == Ops::SHR) {
      add(op, dt, {{Role::kA, dt}, {Role::kShift, dt}});
      if (dt != dtypes::kUInt32) add(op, dt, {{Role::kA, dt}, {Role::kShift, dtypes::kUInt32}}, " by uint");
    } else {
      add(op, dt, {{Role::kA, dt}, {Role::kB, dt}});
    }
  });
  add(Ops::WHERE, dt, {{Role::kCondition, dtypes::kBool}, {Role::kA, dt}, {Role::kB, dt}});
  add(Ops::MULACC, dt, {{Role::kA, dt}, {Role::kB, dt}, {Role::kC, dt}});
  std::vector<std::pair<Case, std::vector<ConstValue>>> out;
  for (Case& c : candidates) {
    std::optional<std::vector<ConstValue>> want = Expected(c);
    if (!want.has_value()) continue;
    // The spec's verdict on the op alone (THREEFRY, for one, is uint64 only).
    absl::StatusOr<Kernel> k = BuildKernel({{c, *want}});
    if (!k.ok() || !VerifyKernelAst(k->ast.get()).ok()) continue;
    out.emplace_back(std::move(c), *std::move(want));
  }
  return out;
}

// CASTs from `from` to every other dtype; floats cast to unsigned integers from their magnitudes (C leaves a
// negative float's conversion to an unsigned type undefined).
std::vector<std::pair<Case, std::vector<ConstValue>>> CastCases(DType from) {
  std::vector<std::pair<Case, std::vector<ConstValue>>> out;
  for (DType to : AllDTypes()) {
    if (to == from) continue;
    const Role role = from.is_float() && (to.is_unsigned()) ? Role::kShift : Role::kA;
    Case c{absl::StrCat("CAST ", from.ToString(), " -> ", to.ToString()), Ops::CAST, to, {{role, from}}};
    if (std::optional<std::vector<ConstValue>> want = Expected(c)) out.emplace_back(c, *want);
  }
  return out;
}

// BITCASTs from `from` to every other non-bool dtype of its size.
std::vector<std::pair<Case, std::vector<ConstValue>>> BitcastCases(DType from) {
  std::vector<std::pair<Case, std::vector<ConstValue>>> out;
  if (from.is_bool()) return out;
  for (DType to : AllDTypes()) {
    if (to == from || to.is_bool() || to.itemsize() != from.itemsize()) continue;
    Case c{absl::StrCat("BITCAST ", from.ToString(), " -> ", to.ToString()),
           Ops::BITCAST,
           to,
           {{Role::kA, from}}};
    if (std::optional<std::vector<ConstValue>> want = Expected(c)) out.emplace_back(c, *want);
  }
  return out;
}

struct Target {
  std::string name;
  std::shared_ptr<const Renderer> renderer;
};

const std::vector<Target>& Targets() {
  static const std::vector<Target>* const kTargets = new std::vector<Target>{
      {"clang", std::make_shared<ClangRenderer>()},    {"opencl", std::make_shared<OpenCLRenderer>()},
      {"metal", std::make_shared<MetalRenderer>()},    {"cuda", std::make_shared<CUDARenderer>("sm_80")},
      {"ptx", std::make_shared<PTXRenderer>("sm_80")}, {"llvm", std::make_shared<LLVMRenderer>()},
  };
  return *kTargets;
}

const std::vector<std::pair<std::string, CompileOptions>>& OptionSets() {
  static const auto* const kSets = new std::vector<std::pair<std::string, CompileOptions>>{
      {"opts", CompileOptions{}}, {"noopt", CompileOptions{.optimize = false}}};
  return *kSets;
}

// "" when the outputs match ExecAlu's within the corpus tolerances; else what differs, per case.
std::string Compare(const Kernel& k, const json& got) {
  std::string problems;
  for (const auto& [arg, entry] : k.outputs) {
    const auto& [c, want] = entry;
    const std::string key = absl::StrCat(arg);
    if (!got.contains(key)) {
      absl::StrAppend(&problems, c.name, ": not stored\n");
      continue;
    }
    json want_json = json::array();
    for (const ConstValue& v : want) want_json.push_back(ValueJson(v, c.dtype));
    if (std::string diff = CorpusValuesMismatch(c.dtype, got[key], want_json); !diff.empty())
      absl::StrAppend(&problems, c.name, ": ", diff, " (got ", got[key].dump(), ")\n");
  }
  return problems;
}

// What a check of one kernel found: "" when all is well; `compiled` false when the kernel did not compile
// (then no output says which op is at fault).
struct Verdict {
  std::string problem;
  bool compiled = true;
};
using Check = std::function<Verdict(const Kernel&)>;

// Checks the cases as one kernel; "" when all is well, else what failed. A kernel that does not compile is
// retried case by case, so that the message names the ops.
std::string CheckCases(const std::vector<std::pair<Case, std::vector<ConstValue>>>& cases,
                       const Check& check) {
  if (cases.empty()) return "";
  absl::StatusOr<Kernel> k = BuildKernel(cases);
  if (!k.ok()) return k.status().ToString();
  Verdict v = check(*k);
  if (v.compiled || cases.size() == 1) return v.problem;
  std::string per_case;
  for (const auto& c : cases) {
    if (std::string p = CheckCases({c}, check); !p.empty()) absl::StrAppend(&per_case, c.first.name, ": ", p);
  }
  return per_case.empty() ? v.problem : per_case;
}

std::vector<std::vector<std::pair<Case, std::vector<ConstValue>>>> AllGroups() {
  std::vector<std::vector<std::pair<Case, std::vector<ConstValue>>>> groups;
  for (DType dt : AllDTypes()) {
    groups.push_back(AluCases(dt));
    groups.push_back(CastCases(dt));
    groups.push_back(BitcastCases(dt));
  }
  return groups;
}

TEST(RendererOpsTest, EnoughCases) {
  int cases = 0;
  for (const auto& g : AllGroups()) cases += g.size();
  // 13 dtypes: about 20 ALU ops each, 12 casts each, the bitcasts of 4 size classes.
  EXPECT_GE(cases, 350);
}

TEST(RendererOpsTest, EveryTargetRendersEveryOp) {
  // Where this machine has ptxas, the PTX must assemble too.
  const std::string ptxas = FindPtxas();
  int64_t index = 0;
  for (const auto& group : AllGroups()) {
    for (const Target& t : Targets()) {
      for (const auto& option_set : OptionSets()) {
        if (!InTestSample(index++)) continue;
        const CompileOptions& options = option_set.second;
        std::string problem = CheckCases(group, [&](const Kernel& k) -> Verdict {
          KernelNameCounter names;
          absl::StatusOr<ProgramSpec> p = CompileKernel(k.ast, *t.renderer, options, &names);
          if (!p.ok()) return {absl::StrCat(p.status().message(), "\n"), false};
          if (t.name != "ptx") return {};
          std::vector<std::string> illegal = IllegalPtxInstructions(p->src);
          if (!illegal.empty())
            return {absl::StrCat("illegal PTX: ", absl::StrJoin(illegal, "; "), "\n"), false};
          if (ptxas.empty()) return {};
          std::string errors = PtxasErrors(ptxas, PtxForArch(p->src, "sm_80"), "sm_80");
          return {errors, errors.empty()};
        });
        EXPECT_EQ(problem, "") << t.name << " (" << option_set.first << ")";
      }
    }
  }
}

bool UsesBFloat16(const Case& c) {
  if (c.dtype == dtypes::kBFloat16) return true;
  for (const auto& [role, dt] : c.operands) {
    if (dt == dtypes::kBFloat16) return true;
  }
  return false;
}

// The CPU (clang) and LLVM devices run their targets' programs; INTERP runs every target's but PTX's (whose
// loads and stores go through integer addresses, which the interpreter does not follow: the CUDA device runs
// those, //runtime:cuda_corpus_test).
TEST(RendererOpsTest, DevicesComputeWhatExecAluDoes) {
  struct Run {
    std::string name;
    Device* device;
    const Renderer* renderer;
  };
  std::vector<Run> runs;
  for (const char* name : {"CPU", "LLVM"}) {
    absl::StatusOr<Device*> d = GetDevice(name);
    ASSERT_TRUE(d.ok()) << d.status();
    runs.push_back({name, *d, (*d)->renderer()});
  }
  InterpDevice interp;
  for (const Target& t : Targets()) {
    if (t.name != "ptx") runs.push_back({"INTERP/" + t.name, &interp, t.renderer.get()});
  }
  // clang before 15 has no __bf16 arithmetic on x86 ("__bf16 is not supported on this target"); where the
  // CPU device cannot compile a bfloat16 kernel, its bfloat16 cases are left out.
  bool cpu_has_bfloat16 = true;
  {
    const Case copy{"bfloat16 copy", Ops::CAST, dtypes::kFloat32, {{Role::kA, dtypes::kBFloat16}}};
    absl::StatusOr<Kernel> k = BuildKernel({{copy, *Expected(copy)}});
    ASSERT_TRUE(k.ok()) << k.status();
    absl::StatusOr<json> got =
        RunOnCorpusInputs(k->ast, nullptr, *runs[0].device, *runs[0].renderer, CompileOptions{}, k->inputs);
    if (!got.ok() && absl::StrContains(got.status().message(), "__bf16 is not supported")) {
      cpu_has_bfloat16 = false;
      std::printf("the CPU device's clang has no bfloat16: its bfloat16 cases are left out\n");
    }
  }
  int64_t index = 0;
  for (const auto& all_cases : AllGroups()) {
    for (const Run& r : runs) {
      auto group = all_cases;
      if (r.name == "CPU" && !cpu_has_bfloat16) {
        std::erase_if(group, [](const auto& c) { return UsesBFloat16(c.first); });
      }
      for (const auto& option_set : OptionSets()) {
        if (!InTestSample(index++)) continue;
        const CompileOptions& options = option_set.second;
        std::string problem = CheckCases(group, [&](const Kernel& k) -> Verdict {
          absl::StatusOr<json> got =
              RunOnCorpusInputs(k.ast, nullptr, *r.device, *r.renderer, options, k.inputs);
          if (!got.ok()) return {absl::StrCat(got.status().message(), "\n"), false};
          return {Compare(k, *got)};
        });
        EXPECT_EQ(problem, "") << r.name << " (" << option_set.first << ")";
      }
    }
  }
}

// On an NVIDIA GPU: uopc's PTX and its CUDA C (through NVRTC) compute what ExecAlu does. Skips where there is
// no driver or GPU (or, for CUDA C, no NVRTC).
TEST(RendererOpsTest, CudaComputesWhatExecAluDoes) {
  const std::string cache =
      absl::StrCat(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp", "/uopc_cache");
  int devices = 0;
  for (const auto language : {CudaDeviceOptions::Language::kPtx, CudaDeviceOptions::Language::kCudaC}) {
    const std::string name = language == CudaDeviceOptions::Language::kPtx ? "CUDA/ptx" : "CUDA/cuda";
    // The PTX device renders for its GPU's arch; CUDA C is rendered for sm_80, as the registered device does.
    std::shared_ptr<const Renderer> cuda_c = language == CudaDeviceOptions::Language::kCudaC
                                                 ? std::shared_ptr<const Renderer>(MakeCUDARenderer("sm_80"))
                                                 : nullptr;
    absl::StatusOr<std::unique_ptr<Device>> device =
        MakeCudaDevice(CudaDeviceOptions{.language = language, .cache_directory = cache, .renderer = cuda_c});
    if (absl::IsFailedPrecondition(device.status())) {
      std::printf("%s: %s\n", name.c_str(), std::string(device.status().message()).c_str());
      continue;
    }
    ASSERT_TRUE(device.ok()) << device.status();
    ++devices;
    for (const auto& group : AllGroups()) {
      for (const auto& option_set : OptionSets()) {
        std::string problem = CheckCases(group, [&](const Kernel& k) -> Verdict {
          absl::StatusOr<json> got = RunOnCorpusInputs(k.ast, nullptr, **device, *(*device)->renderer(),
                                                       option_set.second, k.inputs);
          if (!got.ok()) return {absl::StrCat(got.status().message(), "\n"), false};
          return {Compare(k, *got)};
        });
        EXPECT_EQ(problem, "") << name << " (" << option_set.first << ")";
      }
    }
  }
  if (devices == 0) GTEST_SKIP() << "no CUDA device here";
}

}  // namespace
}  // namespace uopc
