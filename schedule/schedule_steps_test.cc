// The scheduler's driver as a list of named steps, and SPEC=1's checks between them: a step that leaves an
// invalid graph is named in the error.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "schedule/schedule.h"
#include "uop/spec.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// (a + b).sum() and a * 2, two outputs sharing an input.
UOpPtr Program() {
  absl::StatusOr<UOpPtr> graph = ParseIrSingle(
      "%u0 = UNIQUE : void arg=0\n%u1 = UNIQUE : void arg=1\n%cpu = DEVICE : void arg='CPU'\n"
      "%a = BUFFER : float32 (%u0, %cpu) arg=6\n%b = BUFFER : float32 (%u1, %cpu) arg=6\n"
      "%s = ADD : float32 (%a, %b)\n%r = REDUCE_AXIS : float32 (%s) arg=(Ops.ADD, (0,))\n"
      "%c = CONTIGUOUS : float32 (%r)\n%two = MUL : float32 (%a, %a)\n%m = CONTIGUOUS : float32 (%two)\n"
      "%k = SINK : void (%c, %m)\nreturn %k\n");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *graph;
}

class ScheduleStepsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetSpecChecks(false); }
};

// `steps` with `step` inserted after the step named `after`.
std::vector<ScheduleStep> With(const ScheduleStep& step, absl::string_view after) {
  std::vector<ScheduleStep> steps;
  for (const ScheduleStep& s : ScheduleSteps()) {
    steps.push_back(s);
    if (s.name == after) steps.push_back(step);
  }
  return steps;
}

TEST_F(ScheduleStepsTest, TheStepsInOrder) {
  std::vector<std::string> names;
  for (const ScheduleStep& s : ScheduleSteps()) names.emplace_back(s.name);
  EXPECT_THAT(names,
              ElementsAre("check_shapes", "merge_views", "group_realizes", "create_kernels", "fix_assign",
                          "create_ast", "order_kernels", "becomes_map", "memory_planner"));
}

TEST_F(ScheduleStepsTest, RunningTheStepsIsCreateSchedule) {
  for (bool spec : {false, true}) {
    SetSpecChecks(spec);
    UOpPtr g = Program();
    absl::StatusOr<Schedule> a = CreateSchedule(g);
    absl::StatusOr<Schedule> b = RunScheduleSteps(g, ScheduleSteps());
    ASSERT_TRUE(a.ok()) << a.status();
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_EQ(a->items.size(), 2u);
    ASSERT_EQ(b->items.size(), a->items.size());
    for (size_t i = 0; i < a->items.size(); ++i) EXPECT_EQ(a->items[i].ast, b->items[i].ast);
    EXPECT_EQ(a->becomes_map.size(), b->becomes_map.size());
  }
}

// A step that breaks the tensor graph: an ADD of a float and an int.
absl::Status MixDtypes(ScheduleState& state) {
  UOpPtr x = state.graph->src()[0];
  UOpPtr bad = UOp::New(Ops::ADD, x->dtype(), {x, UOp::Const(dtypes::kInt32, 1)});
  state.graph = UOp::Sink({bad});
  return absl::OkStatus();
}

TEST_F(ScheduleStepsTest, ABrokenStepIsNamed) {
  SetSpecChecks(true);
  absl::StatusOr<Schedule> s =
      RunScheduleSteps(Program(), With({"mix_dtypes", &MixDtypes, ScheduleSteps()[1].verify}, "merge_views"));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.status().message(), HasSubstr("SPEC: schedule step 'mix_dtypes' left an invalid graph: "
                                              "scheduler graph spec violation"));
  EXPECT_THAT(s.status().message(), HasSubstr("Ops.ADD dtypes.float"));
  EXPECT_THAT(s.status().message(), HasSubstr("ALU source 1 has dtype dtypes.int"));
}

// A step after create_ast that leaves a VIEW in the kernel graph, which tinygrad's sched_spec forbids: with
// the checks on it is named; without them the schedule goes on.
absl::Status ViewTheAssigns(ScheduleState& state) {
  std::vector<UOpPtr> src;
  for (const UOpPtr& s : state.graph->src()) src.push_back(UOp::New(Ops::VIEW, s->dtype(), {s}, s->arg()));
  state.graph = UOp::Sink(src);
  return absl::OkStatus();
}

TEST_F(ScheduleStepsTest, TheKernelGraphIsCheckedAfterTheStepThatMadeIt) {
  const ScheduleStep& create_ast = ScheduleSteps()[5];
  ASSERT_EQ(create_ast.name, "create_ast");
  std::vector<ScheduleStep> steps =
      With({"view_the_assigns", &ViewTheAssigns, create_ast.verify}, "create_ast");
  SetSpecChecks(false);
  EXPECT_TRUE(RunScheduleSteps(Program(), steps).ok());
  SetSpecChecks(true);
  absl::StatusOr<Schedule> s = RunScheduleSteps(Program(), steps);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("SPEC: schedule step 'view_the_assigns' left an invalid graph: "
                                              "kernel graph spec violation"));
  EXPECT_THAT(s.status().message(), HasSubstr("Ops.VIEW is not allowed"));
}

// The graph given to the scheduler is checked first (tinygrad checks it against tensor_uop_spec).
TEST_F(ScheduleStepsTest, TheInputIsChecked) {
  UOpPtr g = Program();
  UOpPtr a = g->src()[1]->src()[0]->src()[0];  // the BUFFER a
  UOpPtr bad = UOp::Sink({UOp::New(Ops::CONTIGUOUS, dtypes::kInt32, {a})});
  SetSpecChecks(true);
  absl::StatusOr<Schedule> s = CreateSchedule(bad);
  ASSERT_FALSE(s.ok());
  EXPECT_THAT(s.status().message(), HasSubstr("SPEC: the tensor graph given to the scheduler is invalid: "));
  EXPECT_THAT(s.status().message(), HasSubstr("CONTIGUOUS must keep its source's dtype"));
}

}  // namespace
}  // namespace uopc
