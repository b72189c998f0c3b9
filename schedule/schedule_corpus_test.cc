// The scheduler on tinygrad's 70 tensor programs and its 4 benchmark graphs: from each tensor graph
// tinygrad's scheduler was given (schedule/testdata, made by harvest_tensor_programs.py), the same kernels in
// the same order, each AST equal to tinygrad's, and the same pattern of buffers.
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "schedule/schedule.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

struct Case {
  std::string program;
  nlohmann::json line;
};

std::vector<Case> LoadCases(const std::string& path) {
  std::vector<Case> cases;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json j = nlohmann::json::parse(line);
    cases.push_back({j["program"].get<std::string>(), j});
  }
  return cases;
}

// Empty when the schedule of the case's graph is tinygrad's, else what differs.
std::string ScheduleDifference(const Case& c) {
  absl::StatusOr<UOpPtr> graph = ParseIrSingle(c.line["graph"].get<std::string>());
  if (!graph.ok()) return absl::StrCat("graph does not parse: ", graph.status().ToString());
  absl::StatusOr<Schedule> schedule = CreateSchedule(*graph);
  if (!schedule.ok()) return absl::StrCat("CreateSchedule: ", schedule.status().ToString());
  const nlohmann::json& kernels = c.line["kernels"];
  std::string diff;
  if (schedule->items.size() != kernels.size()) {
    absl::StrAppend(&diff, schedule->items.size(), " kernels, tinygrad ", kernels.size(), "\n");
  }
  absl::flat_hash_map<const UOp*, int> buf_ids;
  for (size_t i = 0; i < std::min(schedule->items.size(), kernels.size()); ++i) {
    const ScheduleItem& item = schedule->items[i];
    std::string want = kernels[i]["ast"].get<std::string>();
    std::string got;
    if (item.ast->op() == Ops::SINK) {
      got = PrintIr(item.ast.get());
      absl::StatusOr<UOpPtr> parsed = ParseIrSingle(want);
      if (parsed.ok()) want = PrintIr(parsed->get());
    } else {
      got = std::string(OpName(item.ast->op()));
    }
    if (got != want)
      absl::StrAppend(&diff, "kernel ", i, ":\n--- got\n", got, "\n--- tinygrad\n", want, "\n");
    std::vector<int> ids;
    for (const UOpPtr& b : item.bufs)
      ids.push_back(buf_ids.try_emplace(b.get(), buf_ids.size()).first->second);
    std::vector<int> want_ids = kernels[i]["bufs"].get<std::vector<int>>();
    if (ids != want_ids) {
      absl::StrAppend(&diff, "kernel ", i, " buffers [", absl::StrJoin(ids, ", "), "], tinygrad [",
                      absl::StrJoin(want_ids, ", "), "]\n");
    }
  }
  return diff;
}

void CheckAll(const std::string& path, int floor) {
  std::vector<Case> cases = LoadCases(path);
  ASSERT_FALSE(cases.empty()) << path;
  int equal = 0;
  std::vector<std::string> failing;
  for (const Case& c : cases) {
    std::string diff = ScheduleDifference(c);
    if (diff.empty()) {
      ++equal;
    } else {
      failing.push_back(c.program);
      if (failing.size() <= 3) ADD_FAILURE() << c.program << ":\n" << diff;
    }
  }
  std::cout << path << ": " << equal << "/" << cases.size()
            << " schedules equal; differ: " << absl::StrJoin(failing, " ") << "\n";
  EXPECT_GE(equal, floor);
}

// Graphs whose shapes do not fit are errors naming the node and the shapes, not crashes.
TEST(ScheduleTest, BadGraphsAreErrors) {
  const std::string head =
      "%u0 = UNIQUE : void arg=0\n%u1 = UNIQUE : void arg=1\n%cpu = DEVICE : void arg='CPU'\n"
      "%a = BUFFER : float32 (%u0, %cpu) arg=6\n%b = BUFFER : float32 (%u1, %cpu) arg=5\n";
  const std::pair<std::string, std::string> cases[] = {
      {"%r = RESHAPE : float32 (%a) arg=(2, 3)\n%s = ADD : float32 (%r, %b)\n%k = SINK : void (%s)\n",
       "sources have different shapes (2, 3) and (5,)"},
      {"%r = RESHAPE : float32 (%a) arg=(4, 3)\n%k = SINK : void (%r)\n", "can't reshape (6,) to (4, 3)"},
      {"%s = REDUCE_AXIS : float32 (%a) arg=(Ops.ADD, (3,))\n%k = SINK : void (%s)\n", "axis 3 out of range"},
      {"%p = PAD : float32 (%a) arg=((1, 2),)\n%e = EXPAND : float32 (%p) arg=(9, 2)\n%k = SINK : void "
       "(%e)\n",
       "EXPAND"},
  };
  for (const auto& [body, message] : cases) {
    absl::StatusOr<UOpPtr> graph = ParseIrSingle(head + body + "return %k\n");
    ASSERT_TRUE(graph.ok()) << graph.status();
    absl::StatusOr<Schedule> s = CreateSchedule(*graph);
    ASSERT_FALSE(s.ok()) << body;
    EXPECT_NE(s.status().message().find(message), std::string::npos) << s.status();
  }
  EXPECT_FALSE(CreateSchedule(UOp::Const(dtypes::kInt32, 1)).ok());
}

TEST(ScheduleCorpusTest, TensorPrograms) { CheckAll("schedule/testdata/tensor_graphs.jsonl", 70); }
TEST(ScheduleCorpusTest, BenchmarkGraphs) { CheckAll("schedule/testdata/benchmark_graphs.jsonl", 4); }

}  // namespace
}  // namespace uopc
