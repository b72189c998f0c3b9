// Realize on tinygrad's 70 tensor programs: each tensor graph (schedule/testdata), its inputs filled as the
// corpus says, scheduled and run on CPU and on INTERP, gives tinygrad's results.
#include "runtime/realize.h"

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rewrite/graph_rewrite.h"
#include "runtime/corpus_values.h"
#include "schedule/tensor_uop.h"
#include "testdata/corpus_path.h"
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
        if (absl::Status s = AppendValue(u->dtype(), v, &bytes); !s.ok()) return s;
      }
    }
    if (absl::Status s = BufferStore::Global().Write(u->ref(), bytes); !s.ok()) return s;
  }
  return absl::OkStatus();
}

// "" when the program's results are tinygrad's; "skip" when an output is not a whole buffer.
std::string RunProgram(const json& graph_line, const json& program, const std::string& device) {
  absl::StatusOr<UOpPtr> parsed = ParseIrSingle(graph_line["graph"].get<std::string>());
  if (!parsed.ok()) return parsed.status().ToString();
  UOpPtr graph = OnDevice(*parsed, device);
  if (absl::Status s = FillInputs(graph, graph_line["inputs"]); !s.ok()) return s.ToString();
  absl::StatusOr<Schedule> schedule = CreateSchedule(graph);
  if (!schedule.ok()) return schedule.status().ToString();
  absl::StatusOr<std::vector<KernelRun>> runs = RunSchedule(*schedule);
  if (!runs.ok()) return runs.status().ToString();
  std::string diff;
  for (size_t i = 0; i < graph->num_src(); ++i) {
    auto it = schedule->becomes_map.find(graph->src(i));
    if (it == schedule->becomes_map.end()) return "skip: no becomes";
    UOpPtr value = it->second;
    UOpPtr buffer = BaseOf(value);
    if (buffer->op() != Ops::BUFFER) return absl::StrCat("skip: base ", OpName(buffer->op()));
    if (value->op() == Ops::VIEW) {
      const ShapeTracker* st = ShapeTrackerOf(value.get());
      if (st == nullptr || !st->contiguous() || st->size() != buffer->arg().as_int())
        return "skip: a view of a buffer";
    }
    absl::StatusOr<std::vector<uint8_t>> bytes = BufferStore::Global().Read(buffer);
    if (!bytes.ok()) return bytes.status().ToString();
    absl::StatusOr<json> got = CorpusJsonFromBytes(buffer->dtype(), *bytes);
    if (!got.ok()) return got.status().ToString();
    std::string mismatch = CorpusValuesMismatch(buffer->dtype(), *got, program["results"][i]["values"]);
    if (!mismatch.empty()) absl::StrAppend(&diff, "output ", i, ": ", mismatch, "\n");
  }
  return diff;
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

}  // namespace
}  // namespace uopc
