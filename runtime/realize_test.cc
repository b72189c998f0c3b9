// Realize on tinygrad's 70 tensor programs: each tensor graph (schedule/testdata), its inputs filled as the
// corpus says, scheduled and run on CPU and on INTERP, gives tinygrad's results.
#include "runtime/realize.h"

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rewrite/graph_rewrite.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"
#include "schedule/tensor_uop.h"
#include "testdata/corpus_path.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using nlohmann::json;

// The graph with every CPU DEVICE moved to `device`.
UOpPtr OnDevice(const UOpPtr& graph, const std::string& device) {
  UOpMap rep;
  for (const UOp* u : graph->Toposort()) {
    if (u->op() == Ops::DEVICE && u->arg().is_string() && u->arg().as_string() == "CPU") {
      rep[u] = UOp::New(Ops::DEVICE, dtypes::kVoid, {}, Arg(device));
    }
  }
  return rep.empty() ? graph : Substitute(graph, rep);
}

// One value in `dtype`'s memory layout (the integer, bool and float32/64 values Python lists hold here).
absl::Status AppendValue(DType dtype, const json& v, std::vector<uint8_t>* out) {
  auto append = [out](const auto& x) {
    const uint8_t* p = reinterpret_cast<const uint8_t*>(&x);
    out->insert(out->end(), p, p + sizeof(x));
  };
  switch (dtype.scalar_type()) {
    case ScalarType::kBool:
      append(static_cast<uint8_t>(v.get<bool>()));
      break;
    case ScalarType::kInt8:
      append(static_cast<int8_t>(v.get<int64_t>()));
      break;
    case ScalarType::kUInt8:
      append(static_cast<uint8_t>(v.get<int64_t>()));
      break;
    case ScalarType::kInt16:
      append(static_cast<int16_t>(v.get<int64_t>()));
      break;
    case ScalarType::kUInt16:
      append(static_cast<uint16_t>(v.get<int64_t>()));
      break;
    case ScalarType::kInt32:
      append(static_cast<int32_t>(v.get<int64_t>()));
      break;
    case ScalarType::kUInt32:
      append(static_cast<uint32_t>(v.get<uint64_t>()));
      break;
    case ScalarType::kInt64:
      append(v.get<int64_t>());
      break;
    case ScalarType::kUInt64:
      append(v.get<uint64_t>());
      break;
    case ScalarType::kFloat32:
      append(v.get<float>());
      break;
    case ScalarType::kFloat64:
      append(v.get<double>());
      break;
    default:
      return absl::UnimplementedError("list values of this dtype");
  }
  return absl::OkStatus();
}

absl::Status FillInputs(const UOpPtr& graph, const json& inputs) {
  for (const UOp* u : graph->Toposort()) {
    if (u->op() != Ops::BUFFER) continue;
    std::string unique = std::to_string(u->src(0)->arg().as_int());
    if (!inputs.contains(unique)) continue;
    const json& in = inputs[unique];
    std::vector<uint8_t> bytes;
    if (in.contains("arg")) {
      bytes = CorpusInputBytes(u->dtype(), in["arg"].get<int64_t>(), u->arg().as_int());
    } else {
      for (const json& v : in["values"]) {
        UOPC_RETURN_IF_ERROR(AppendValue(u->dtype(), v, &bytes));
      }
    }
    UOPC_RETURN_IF_ERROR(BufferStore::Global().Write(u->ref(), bytes));
  }
  return absl::OkStatus();
}

// "" when the program's results are tinygrad's; "skip" when an output is not a whole buffer.
absl::StatusOr<std::string> ResultDifference(const json& graph_line, const json& program,
                                             const std::string& device) {
  UOPC_ASSIGN_OR_RETURN(UOpPtr parsed, ParseIrSingle(graph_line["graph"].get<std::string>()));
  UOpPtr graph = OnDevice(parsed, device);
  UOPC_RETURN_IF_ERROR(FillInputs(graph, graph_line["inputs"]));
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(graph));
  UOPC_RETURN_IF_ERROR(RunSchedule(schedule).status());
  std::string diff;
  for (size_t i = 0; i < graph->num_src(); ++i) {
    auto it = schedule.becomes_map.find(graph->src(i));
    if (it == schedule.becomes_map.end()) return "skip: no becomes";
    UOpPtr value = it->second;
    UOpPtr buffer = BaseOf(value);
    if (buffer->op() != Ops::BUFFER) return absl::StrCat("skip: base ", OpName(buffer->op()));
    if (value->op() == Ops::VIEW) {
      const ShapeTracker* st = ShapeTrackerOf(value.get());
      if (st == nullptr || !st->contiguous() || st->size() != buffer->arg().as_int())
        return "skip: a view of a buffer";
    }
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, BufferStore::Global().Read(buffer));
    UOPC_ASSIGN_OR_RETURN(json got, CorpusJsonFromBytes(buffer->dtype(), bytes));
    std::string mismatch = CorpusValuesMismatch(buffer->dtype(), got, program["results"][i]["values"]);
    if (!mismatch.empty()) absl::StrAppend(&diff, "output ", i, ": ", mismatch, "\n");
  }
  return diff;
}

// ResultDifference, or its error as text.
std::string RunProgram(const json& graph_line, const json& program, const std::string& device) {
  absl::StatusOr<std::string> diff = ResultDifference(graph_line, program, device);
  return diff.ok() ? *std::move(diff) : diff.status().ToString();
}

void CheckDevice(const std::string& device, int floor) {
  std::ifstream graphs("schedule/testdata/tensor_graphs.jsonl");
  std::ifstream programs(CorpusPath("tensor_programs.jsonl"));
  ASSERT_TRUE(graphs && programs);
  std::string gl, pl;
  int equal = 0, skipped = 0;
  std::vector<std::string> failing;
  while (std::getline(graphs, gl) && std::getline(programs, pl)) {
    json g = json::parse(gl), p = json::parse(pl);
    ASSERT_EQ(g["program"], p["program"]);
    std::string diff = RunProgram(g, p, device);
    if (diff.empty()) {
      ++equal;
    } else if (absl::StartsWith(diff, "skip")) {
      std::cout << g["program"] << " " << diff << "\n";
      ++skipped;
    } else {
      failing.push_back(g["program"].get<std::string>());
      if (failing.size() <= 3) ADD_FAILURE() << device << " " << g["program"] << ": " << diff;
    }
  }
  std::cout << device << ": " << equal << " programs right, " << skipped
            << " with a view as output (not read here)"
            << "; wrong: " << absl::StrJoin(failing, " ") << "\n";
  EXPECT_GE(equal, floor);
}

TEST(RealizeTest, TensorProgramsOnCpu) { CheckDevice("CPU", 68); }
TEST(RealizeTest, TensorProgramsOnInterp) { CheckDevice("INTERP", 68); }

TEST(RealizeTest, BufferStoreFreesWhatNobodyHolds) {
  BufferStore::Global().Collect();
  size_t before = BufferStore::Global().size();
  {
    UOpPtr b = NewBuffer("CPU", 4, dtypes::kInt32);
    ASSERT_TRUE(BufferStore::Global().GetOrAllocate(b).ok());
    EXPECT_EQ(BufferStore::Global().size(), before + 1);
    BufferStore::Global().Collect();
    EXPECT_EQ(BufferStore::Global().size(), before + 1);
  }
  BufferStore::Global().Collect();
  EXPECT_LE(BufferStore::Global().size(), before);
}

// tinygrad's DEBUG=2 line, field by field (the string its ExecItem.run prints for these values).
TEST(RealizeTest, KernelRunLineIsTinygrads) {
  KernelRun run;
  run.name = "E_4";
  run.device = "CPU";
  run.run_seconds = 0.002;
  run.flops = 4e6;
  run.bytes = 1e6;
  run.lds = 3e6;
  run.mem_used = 1'500'000'000;
  run.num_buffers = 3;
  EXPECT_EQ(
      KernelRunLine(run, 7, 0.01),
      "*** CPU        7 E_4                                       arg  3 mem  1.50 GB tm   2000.00us/    "
      "10.00ms (     2.00 GFLOPS    0.5|1.5     GB/s)");
}

// Runs corpus kernel `id` once on `device` (its buffers zeroed) at DEBUG=2, with 16 MB more held on the
// device; the run, and the DEBUG output in `debug`.
absl::StatusOr<KernelRun> RunCorpusKernel(const std::string& id, const std::string& device_name,
                                          std::string* debug) {
  const CorpusKernel* kernel = nullptr;
  for (const CorpusKernel& k : KernelCorpus()) {
    if (k.id == id) kernel = &k;
  }
  if (kernel == nullptr) return absl::NotFoundError(id);
  UOPC_ASSIGN_OR_RETURN(Device * device, GetDevice(device_name));
  UOPC_ASSIGN_OR_RETURN(Buffer held, Buffer::Allocate(*device, dtypes::kUInt8, 16'000'000));
  Schedule schedule;
  ScheduleItem item;
  item.ast = ParseCorpusGraph(kernel->ast);
  for (const CorpusBuffer& b : kernel->buffers) {
    UOPC_ASSIGN_OR_RETURN(DType dtype, CorpusDType(b.dtype));
    UOpPtr buffer = NewBuffer(device_name, b.size, dtype);
    UOPC_RETURN_IF_ERROR(
        BufferStore::Global().Write(buffer, std::vector<uint8_t>(b.size * dtype.itemsize(), 0)));
    item.bufs.push_back(buffer);
  }
  schedule.items.push_back(item);
  RealizeOptions options;
  options.debug = 2;
  options.debug_out = debug;
  UOPC_ASSIGN_OR_RETURN(std::vector<KernelRun> runs, RunSchedule(schedule, options));
  if (runs.size() != 1) return absl::InternalError("one kernel, one run");
  return runs[0];
}

// A kernel run reports its program's estimates (tinygrad's for matmul_64/0 on the CPU, as in
// codegen/testdata/estimates.jsonl) and the device memory in use, which the DEBUG=2 line shows.
TEST(RealizeTest, DebugLineShowsEstimatesAndMemoryInUse) {
  std::string debug;
  absl::StatusOr<KernelRun> run = RunCorpusKernel("matmul_64/0", "CPU", &debug);
  ASSERT_TRUE(run.ok()) << run.status();
  EXPECT_EQ(run->flops, 524288);
  EXPECT_EQ(run->bytes, 49152);  // the unique-memory estimate, below the bytes loaded and stored
  EXPECT_EQ(run->lds, 540672);
  EXPECT_GE(run->mem_used, 16'000'000 + 3 * 64 * 64 * 4);
  EXPECT_TRUE(absl::StrContains(debug, absl::StrFormat(" mem %5.2f GB ", run->mem_used / 1e9))) << debug;
  EXPECT_FALSE(absl::StrContains(debug, " mem  0.00 GB")) << debug;
}

// On a GPU: the half matmul runs on tensor cores, whose WMMAs count 2*M*N*K (tinygrad: 65536 operations and
// 6144 unique bytes for matmul_half/0). Skips without CUDA.
TEST(RealizeTest, TensorCoreKernelCountsItsWmmasOnCuda) {
  if (absl::StatusOr<Device*> cuda = GetDevice("CUDA"); !cuda.ok()) GTEST_SKIP() << cuda.status();
  std::string debug;
  absl::StatusOr<KernelRun> run = RunCorpusKernel("matmul_half/0", "CUDA", &debug);
  ASSERT_TRUE(run.ok()) << run.status();
  std::cout << debug;
  EXPECT_TRUE(absl::StrContains(run->src, "WMMA")) << run->src;
  EXPECT_EQ(run->flops, 65536);
  EXPECT_EQ(run->bytes, 6144);
  EXPECT_GE(run->mem_used, 16'000'000 + 3 * 32 * 32 * 2);
  EXPECT_FALSE(absl::StrContains(debug, " mem  0.00 GB")) << debug;
}

}  // namespace
}  // namespace uopc
