#include "codegen/expander.h"

#include <cstdint>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/ignore.h"
#include "codegen/testing/kernel_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using expander_internal::AxisSizes;
using expander_internal::LaneChoices;
using expander_internal::LaneIndex;
using expander_internal::SwizzleLanes;

using Step = std::function<absl::StatusOr<UOpPtr>(const UOpPtr&, const Renderer&)>;

// The corpus graphs (both CPU targets) where `step` on stage `before` does not give stage `after`.
std::vector<std::string> CorpusDifferences(const char* before, const char* after, const Step& step) {
  ClangRenderer clang;
  return CorpusStepDifferences(before, after, [&](const UOpPtr& g) { return step(g, clang); });
}

TEST(ExpanderCorpusTest, InitialSymbolic) {
  EXPECT_THAT(CorpusDifferences("lowerer", "initial symbolic", RewriteInitialSymbolic), ::testing::IsEmpty());
}

TEST(ExpanderCorpusTest, StoreIgnore) {
  EXPECT_THAT(CorpusDifferences("initial symbolic", "store_ignore", RewriteStoreIgnore),
              ::testing::IsEmpty());
}

TEST(ExpanderCorpusTest, MoveIgnore) {
  EXPECT_THAT(CorpusDifferences("store_ignore", "move_ignore", RewriteMoveIgnore), ::testing::IsEmpty());
}

TEST(ExpanderCorpusTest, Expander) {
  EXPECT_THAT(CorpusDifferences("move_ignore", "expander", RewriteExpander), ::testing::IsEmpty());
}

// The four steps chained from the corpus's lowerer stage give its expander stage.
TEST(ExpanderCorpusTest, StepsChainedFromTheLowerer) {
  auto chained = [](const UOpPtr& sink, const Renderer& renderer) -> absl::StatusOr<UOpPtr> {
    UOpPtr g = sink;
    for (const Step& step : {Step(RewriteInitialSymbolic), Step(RewriteStoreIgnore), Step(RewriteMoveIgnore),
                             Step(RewriteExpander)}) {
      UOPC_ASSIGN_OR_RETURN(g, step(g, renderer));
    }
    return g;
  };
  EXPECT_THAT(CorpusDifferences("lowerer", "expander", chained), ::testing::IsEmpty());
}

// ---- lane arithmetic ----

TEST(LaneTest, ChoicesVaryTheLastAxisFastest) {
  const AxisSizes axes = {{3, 2}, {1, 3}};
  std::vector<std::vector<std::pair<int64_t, int64_t>>> want = {{{3, 0}, {1, 0}}, {{3, 0}, {1, 1}},
                                                                {{3, 0}, {1, 2}}, {{3, 1}, {1, 0}},
                                                                {{3, 1}, {1, 1}}, {{3, 1}, {1, 2}}};
  EXPECT_EQ(LaneChoices(axes), want);
  for (size_t i = 0; i < want.size(); ++i) EXPECT_EQ(LaneIndex(axes, want[i]), static_cast<int64_t>(i));
  EXPECT_EQ(LaneChoices({}).size(), 1u);     // one lane, no axes
  EXPECT_EQ(LaneIndex(axes, {{3, 1}}), -1);  // axis 1 missing
}

TEST(LaneTest, SwizzleBroadcastsOverAxesTheSourceLacks) {
  const AxisSizes both = {{0, 2}, {1, 3}};
  EXPECT_EQ(SwizzleLanes(both, {{1, 3}}, {}), (std::vector<int64_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(SwizzleLanes(both, {{0, 2}}, {}), (std::vector<int64_t>{0, 0, 0, 1, 1, 1}));
  // The source's axes in the other order.
  EXPECT_EQ(SwizzleLanes(both, {{1, 3}, {0, 2}}, {}), (std::vector<int64_t>{0, 2, 4, 1, 3, 5}));
  // WMMA's excluded axes read lane 0.
  EXPECT_EQ(SwizzleLanes({{1, 3}}, {{0, 2}, {1, 3}}, {0}), (std::vector<int64_t>{0, 1, 2}));
}

// ---- rules, against tinygrad v0.10.3's results on the same graphs ----

absl::StatusOr<UOpPtr> ExpanderOnly(const UOpPtr& sink, const Renderer&) {
  return TryGraphRewrite(sink, Expander());
}

void ExpectStep(const Step& step, const char* input, const char* want) {
  absl::StatusOr<UOpPtr> in = ParseIrSingle(input);
  ASSERT_TRUE(in.ok()) << in.status();
  ClangRenderer clang;
  absl::StatusOr<UOpPtr> got = step(*in, clang);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(GraphDifference(*got, want), "");
}

// Two UNROLLs over different axes meet in an ADD: the sum is unrolled over both axes (the first slower), a
// scalar operand is broadcast, and the STORE of unrolled values becomes one vector store (its UNROLL flattens
// into the SINK).
TEST(ExpanderTest, UnrollsThroughAluBroadcastingScalars) {
  ExpectStep(RewriteExpander, R"(%buf = DEFINE_GLOBAL : int32.ptr(6) arg=0
%v0 = VCONST : int32.vec(2) arg=(0, 3)
%u0 = UNROLL : int32 (%v0) arg=((0, 2),)
%v1 = VCONST : int32.vec(3) arg=(0, 1, 2)
%u1 = UNROLL : int32 (%v1) arg=((1, 3),)
%idx = ADD : int32 (%u0, %u1)
%x = DEFINE_VAR : int32 arg=('x', 0, 10)
%val = MUL : int32 (%idx, %x)
%p = INDEX : int32.ptr(6) (%buf, %idx)
%st = STORE : void (%p, %val)
%sink = SINK : void (%st)
return %sink
)",
             R"(%0 = DEFINE_GLOBAL : int32.ptr(6) arg=0
%1 = VECTORIZE : int32.ptr(6).vec(6) (%0, %0, %0, %0, %0, %0)
%2 = VCONST : int32.vec(6) arg=(0, 1, 2, 3, 4, 5)
%3 = INDEX : int32.ptr(6).vec(6) (%1, %2)
%4 = DEFINE_VAR : int32 arg=('x', 0, 10)
%5 = VECTORIZE : int32.vec(6) (%4, %4, %4, %4, %4, %4)
%6 = MUL : int32.vec(6) (%5, %2)
%7 = STORE : void (%3, %6)
%8 = SINK : void (%7)
return %8
)");
}

// A REDUCE of a CONTRACT over axis 0 of a value unrolled over axes 0 and 1: the load is expanded over both
// axes, the CONTRACT regroups its lanes axis 0 fastest, the REDUCE keeps its RANGE and stays unrolled over
// axis 1, and the store of that unrolled result is a vector store.
TEST(ExpanderTest, ReduceOverAContractedAxisKeepsTheOtherUnrolled) {
  ExpectStep(RewriteExpander, R"(%in = DEFINE_GLOBAL : float32.ptr(64) arg=1
%out = DEFINE_GLOBAL : float32.ptr(3) arg=0
%n = CONST : int32 arg=8
%r = RANGE : int32 (%n) arg=2
%va = VCONST : int32.vec(2) arg=(0, 1)
%ua = UNROLL : int32 (%va) arg=((0, 2),)
%vb = VCONST : int32.vec(3) arg=(0, 16, 32)
%ub = UNROLL : int32 (%vb) arg=((1, 3),)
%c2 = CONST : int32 arg=2
%rr = MUL : int32 (%r, %c2)
%i0 = ADD : int32 (%ua, %rr)
%i1 = ADD : int32 (%i0, %ub)
%p = INDEX : float32.ptr(64) (%in, %i1)
%ld = LOAD : float32 (%p)
%con = CONTRACT : float32.vec(2) (%ld) arg=((0, 2),)
%red = REDUCE : float32 (%con, %r) arg=Ops.ADD
%vo = VCONST : int32.vec(3) arg=(0, 1, 2)
%uo = UNROLL : int32 (%vo) arg=((1, 3),)
%po = INDEX : float32.ptr(3) (%out, %uo)
%st = STORE : void (%po, %red)
%sink = SINK : void (%st)
return %sink
)",
             R"(%0 = DEFINE_GLOBAL : float32.ptr(3) arg=0
%1 = VECTORIZE : float32.ptr(3).vec(3) (%0, %0, %0)
%2 = VCONST : int32.vec(3) arg=(0, 1, 2)
%3 = INDEX : float32.ptr(3).vec(3) (%1, %2)
%4 = DEFINE_GLOBAL : float32.ptr(64) arg=1
%5 = VECTORIZE : float32.ptr(64).vec(6) (%4, %4, %4, %4, %4, %4)
%6 = CONST : int32 arg=8
%7 = RANGE : int32 (%6) arg=2
%8 = CONST : int32 arg=2
%9 = MUL : int32 (%7, %8)
%10 = VECTORIZE : int32.vec(6) (%9, %9, %9, %9, %9, %9)
%11 = VCONST : int32.vec(6) arg=(0, 16, 32, 1, 17, 33)
%12 = ADD : int32.vec(6) (%10, %11)
%13 = INDEX : float32.ptr(64).vec(6) (%5, %12)
%14 = LOAD : float32.vec(6) (%13)
%15 = GEP : float32.vec(6) (%14) arg=(0, 3, 1, 4, 2, 5)
%16 = REDUCE : float32.vec(3) (%15, %7) arg=Ops.ADD
%17 = STORE : void (%3, %16)
%18 = SINK : void (%17)
return %18
)");
}

// A GEP of element 1 of an UNROLL of int2 values picks element 1 of each of the three lanes.
TEST(ExpanderTest, GepOfAnUnrolledVectorPicksTheElementInEveryLane) {
  ExpectStep(RewriteExpander, R"(%buf = DEFINE_GLOBAL : int32.ptr(3) arg=0
%x = DEFINE_VAR : int32 arg=('x', 0, 10)
%xs = VECTORIZE : int32.vec(6) (%x, %x, %x, %x, %x, %x)
%k = VCONST : int32.vec(6) arg=(1, 2, 3, 4, 5, 6)
%m = MUL : int32.vec(6) (%xs, %k)
%um = UNROLL : int32.vec(2) (%m) arg=((0, 3),)
%g = GEP : int32 (%um) arg=(1,)
%vi = VCONST : int32.vec(3) arg=(0, 1, 2)
%ui = UNROLL : int32 (%vi) arg=((0, 3),)
%p = INDEX : int32.ptr(3) (%buf, %ui)
%st = STORE : void (%p, %g)
%sink = SINK : void (%st)
return %sink
)",
             R"(%0 = DEFINE_GLOBAL : int32.ptr(3) arg=0
%1 = VECTORIZE : int32.ptr(3).vec(3) (%0, %0, %0)
%2 = VCONST : int32.vec(3) arg=(0, 1, 2)
%3 = INDEX : int32.ptr(3).vec(3) (%1, %2)
%4 = DEFINE_VAR : int32 arg=('x', 0, 10)
%5 = VECTORIZE : int32.vec(3) (%4, %4, %4)
%6 = VCONST : int32.vec(3) arg=(2, 4, 6)
%7 = MUL : int32.vec(3) (%5, %6)
%8 = STORE : void (%3, %7)
%9 = SINK : void (%8)
return %9
)");
}

// An IF on an unrolled condition is taken when any lane's condition holds; its barrier is not expanded.
TEST(ExpanderTest, IfConditionHoldsWhenAnyLaneDoes) {
  ExpectStep(RewriteExpander, R"(%x = DEFINE_VAR : int32 arg=('x', 0, 10)
%v = VCONST : int32.vec(2) arg=(0, 1)
%u = UNROLL : int32 (%v) arg=((0, 2),)
%a = ADD : int32 (%u, %x)
%c5 = CONST : int32 arg=5
%cond = CMPLT : bool (%a, %c5)
%b = BARRIER : void
%if = IF : void (%cond, %b)
%sink = SINK : void (%if)
return %sink
)",
             R"(%0 = DEFINE_VAR : int32 arg=('x', 0, 10)
%1 = CONST : int32 arg=5
%2 = CMPLT : bool (%0, %1)
%3 = CONST : int32 arg=4
%4 = CMPLT : bool (%0, %3)
%5 = OR : bool (%2, %4)
%6 = BARRIER : void
%7 = IF : void (%5, %6)
%8 = SINK : void (%7)
return %8
)");
}

TEST(ExpanderTest, VectorOfOneAccumulatorIsAVectorAccumulator) {
  ExpectStep(ExpanderOnly, R"(%z = CONST : float32 arg=0.0
%n = CONST : int32 arg=4
%r = RANGE : int32 (%n) arg=1
%acc = DEFINE_ACC : float32 (%z, %r) arg=(0,)
%v = VECTORIZE : float32.vec(4) (%acc, %acc, %acc, %acc)
%sink = SINK : void (%v)
return %sink
)",
             R"(%0 = CONST : float32 arg=0.0
%1 = VECTORIZE : float32.vec(4) (%0, %0, %0, %0)
%2 = CONST : int32 arg=4
%3 = RANGE : int32 (%2) arg=1
%4 = DEFINE_ACC : float32.vec(4) (%1, %3) arg=(0,)
%5 = SINK : void (%4)
return %5
)");
}

// UNROLL(UNROLL(v, inner), outer) is UNROLL(v, inner + outer); an UNROLL of no axes is its source.
TEST(ExpanderTest, NestedUnrollsConcatenateAxesAndEmptyUnrollIsItsSource) {
  ExpectStep(ExpanderOnly, R"(%v = VCONST : int32.vec(6) arg=(0, 1, 2, 3, 4, 5)
%in = UNROLL : int32.vec(2) (%v) arg=((1, 3),)
%out = UNROLL : int32 (%in) arg=((0, 2),)
%x = DEFINE_VAR : int32 arg=('x', 0, 10)
%e = UNROLL : int32 (%x) arg=()
%s = ADD : int32 (%out, %e)
%sink = SINK : void (%s)
return %sink
)",
             R"(%0 = VCONST : int32.vec(6) arg=(0, 1, 2, 3, 4, 5)
%1 = DEFINE_VAR : int32 arg=('x', 0, 10)
%2 = VECTORIZE : int32.vec(6) (%1, %1, %1, %1, %1, %1)
%3 = ADD : int32.vec(6) (%0, %2)
%4 = UNROLL : int32 (%3) arg=((1, 3), (0, 2))
%5 = SINK : void (%4)
return %5
)");
}

// A STORE through a gated INDEX: the load behind the BARRIER in its value waits on IF(gate, barrier).
TEST(ExpanderTest, InitialSymbolicGatesLoadsBehindABarrier) {
  ExpectStep(RewriteInitialSymbolic, R"(%g = DEFINE_GLOBAL : float32.ptr(16) arg=0
%l = DEFINE_LOCAL : float32.ptr(16, local=True) arg='temp0'
%x = DEFINE_VAR : int32 arg=('x', 0, 15)
%c8 = CONST : int32 arg=8
%gate = CMPLT : bool (%x, %c8)
%pl = INDEX : float32.ptr(16, local=True) (%l, %x)
%one = CONST : float32 arg=1.0
%stl = STORE : void (%pl, %one)
%bar = BARRIER : void (%stl)
%ld = LOAD : float32 (%pl, %bar)
%two = CONST : float32 arg=2.0
%m = MUL : float32 (%ld, %two)
%pg = INDEX : float32.ptr(16) (%g, %x, %gate)
%st = STORE : void (%pg, %m)
%sink = SINK : void (%st)
return %sink
)",
             R"(%0 = DEFINE_GLOBAL : float32.ptr(16) arg=0
%1 = DEFINE_VAR : int32 arg=('x', 0, 15)
%2 = CONST : int32 arg=8
%3 = CMPLT : bool (%1, %2)
%4 = INDEX : float32.ptr(16) (%0, %1, %3)
%5 = DEFINE_LOCAL : float32.ptr(16, local=True) arg='temp0'
%6 = INDEX : float32.ptr(16, local=True) (%5, %1)
%7 = CONST : float32 arg=1.0
%8 = STORE : void (%6, %7)
%9 = BARRIER : void (%8)
%10 = IF : void (%3, %9)
%11 = LOAD : float32 (%6, %10)
%12 = CONST : float32 arg=2.0
%13 = MUL : float32 (%11, %12)
%14 = STORE : void (%4, %13)
%15 = SINK : void (%14)
return %15
)");
}

// A WMMA with a further upcast axis (0): the tensor core's own axes (its upcast axes 5, 6, 3 and reduce axis
// 7) are not expanded; lanes of those axes read lane 0, and a vector operand that is not unrolled is repeated
// (CAT).
TEST(ExpanderTest, WmmaUnrollsOnlyOverAxesOutsideTheTensorCore) {
  ExpectStep(ExpanderOnly, R"(%x = DEFINE_VAR : float32 arg=('x', 0, 10)
%y = DEFINE_VAR : float32 arg=('y', 0, 10)
%va = VECTORIZE : float32.vec(4) (%x, %y, %y, %x)
%a = UNROLL : float32.vec(2) (%va) arg=((0, 2),)
%b = VECTORIZE : float32.vec(2) (%y, %x)
%vc = VECTORIZE : float32.vec(8) (%x, %x, %y, %y, %x, %y, %x, %y)
%c = UNROLL : float32.vec(2) (%vc) arg=((0, 2), (3, 2))
%w = WMMA : float32.vec(2) (%a, %b, %c) arg=('WMMA_test', (1, 1, 1), dtypes.float32, dtypes.float32, 'CPU', 1, (((5, 2),), ((6, 2),), ((3, 2),)), (7,))
%sink = SINK : void (%w)
return %sink
)",
             R"(%0 = DEFINE_VAR : float32 arg=('x', 0, 10)
%1 = DEFINE_VAR : float32 arg=('y', 0, 10)
%2 = VECTORIZE : float32.vec(4) (%0, %1, %1, %0)
%3 = VECTORIZE : float32.vec(2) (%1, %0)
%4 = CAT : float32.vec(4) (%3, %3)
%5 = VECTORIZE : float32.vec(8) (%0, %0, %1, %1, %0, %1, %0, %1)
%6 = GEP : float32.vec(4) (%5) arg=(0, 1, 4, 5)
%7 = WMMA : float32.vec(4) (%2, %4, %6) arg=('WMMA_test', (1, 1, 1), dtypes.float32, dtypes.float32, 'CPU', 1, (((5, 2),), ((6, 2),), ((3, 2),)), (7,))
%8 = UNROLL : float32.vec(2) (%7) arg=((0, 2),)
%9 = SINK : void (%8)
return %9
)");
}

// A BARRIER after a store of unrolled values is not expanded itself: it waits on the one vector store, and so
// the load behind it, and the store of that load, are repeated per lane.
TEST(ExpanderTest, BarrierWaitsOnTheExpandedStore) {
  ExpectStep(RewriteExpander, R"(%l = DEFINE_LOCAL : float32.ptr(4, local=True) arg='temp0'
%v = VCONST : int32.vec(2) arg=(0, 1)
%u = UNROLL : int32 (%v) arg=((0, 2),)
%pl = INDEX : float32.ptr(4, local=True) (%l, %u)
%f = CAST : float32 (%u)
%st = STORE : void (%pl, %f)
%bar = BARRIER : void (%st)
%one = CONST : int32 arg=1
%p1 = INDEX : float32.ptr(4, local=True) (%l, %one)
%ld = LOAD : float32 (%p1, %bar)
%g = DEFINE_GLOBAL : float32.ptr(1) arg=0
%zero = CONST : int32 arg=0
%pg = INDEX : float32.ptr(1) (%g, %zero)
%sg = STORE : void (%pg, %ld)
%sink = SINK : void (%sg)
return %sink
)",
             R"(%0 = DEFINE_GLOBAL : float32.ptr(1) arg=0
%1 = CONST : int32 arg=0
%2 = INDEX : float32.ptr(1) (%0, %1)
%3 = VECTORIZE : float32.ptr(1).vec(2) (%2, %2)
%4 = DEFINE_LOCAL : float32.ptr(4, local=True) arg='temp0'
%5 = CONST : int32 arg=1
%6 = INDEX : float32.ptr(4, local=True) (%4, %5)
%7 = VECTORIZE : float32.ptr(4, local=True).vec(2) (%6, %6)
%8 = VECTORIZE : float32.ptr(4, local=True).vec(2) (%4, %4)
%9 = VCONST : int32.vec(2) arg=(0, 1)
%10 = INDEX : float32.ptr(4, local=True).vec(2) (%8, %9)
%11 = VCONST : float32.vec(2) arg=(0.0, 1.0)
%12 = STORE : void (%10, %11)
%13 = BARRIER : void (%12)
%14 = LOAD : float32.vec(2) (%7, %13)
%15 = STORE : void (%3, %14)
%16 = SINK : void (%15)
return %16
)");
}

TEST(ExpanderTest, ContractWithoutUnrollRepeatsTheValue) {
  UOpPtr x = UOp::Variable("x", 0, 10);
  UOpPtr con = UOp::New(Ops::CONTRACT, dtypes::kInt32.Vec(4), {x}, Arg(Arg::Tuple{Arg{Arg(0), Arg(4)}}));
  EXPECT_EQ(GraphRewrite(con, Expander()), x.broadcast(4));
}

TEST(ExpanderTest, ContractKeepsTheAxesItDoesNotName) {
  // UNROLL over axes 0 (2 lanes) and 1 (3 lanes); contracting axis 1 leaves an UNROLL over axis 0 whose lanes
  // are int3 groups.
  std::vector<UOpPtr> lanes;
  for (int i = 0; i < 6; ++i) lanes.push_back(UOp::Variable("v" + std::to_string(i), 0, 10));
  UOpPtr v = UOp::Vectorize(lanes);
  UOpPtr un = UOp::New(Ops::UNROLL, dtypes::kInt32, {v}, Arg{Arg{Arg(0), Arg(2)}, Arg{Arg(1), Arg(3)}});
  UOpPtr con = UOp::New(Ops::CONTRACT, dtypes::kInt32.Vec(3), {un}, Arg(Arg::Tuple{Arg{Arg(1), Arg(3)}}));
  // Expander() alone keeps the GEP of every lane in order (sym removes it).
  UOpPtr want = UOp::New(Ops::UNROLL, dtypes::kInt32.Vec(3), {v.gep(std::vector<int64_t>{0, 1, 2, 3, 4, 5})},
                         Arg(Arg::Tuple{Arg{Arg(0), Arg(2)}}));
  EXPECT_EQ(GraphRewrite(con, Expander()), want);
  // Contracting axis 0 instead regroups the lanes.
  UOpPtr con0 = UOp::New(Ops::CONTRACT, dtypes::kInt32.Vec(2), {un}, Arg(Arg::Tuple{Arg{Arg(0), Arg(2)}}));
  UOpPtr want0 = UOp::New(Ops::UNROLL, dtypes::kInt32.Vec(2), {v.gep(std::vector<int64_t>{0, 3, 1, 4, 2, 5})},
                          Arg(Arg::Tuple{Arg{Arg(1), Arg(3)}}));
  EXPECT_EQ(GraphRewrite(con0, Expander()), want0);
}

TEST(ExpanderTest, MalformedAxesAreLeftAlone) {
  UOpPtr x = UOp::Variable("x", 0, 10);
  UOpPtr bad = UOp::New(Ops::UNROLL, dtypes::kInt32, {x.broadcast(2)}, Arg("not axes"));
  UOpPtr sum = bad + x;
  absl::StatusOr<UOpPtr> got = TryGraphRewrite(sum, Expander());
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, sum);
  // Sizes of 0, and more lanes than a vector holds, are not expanded either.
  for (const Arg& axes :
       {Arg(Arg::Tuple{Arg{Arg(0), Arg(0)}}), Arg{Arg{Arg(0), Arg(300)}, Arg{Arg(1), Arg(300)}}}) {
    UOpPtr big = UOp::New(Ops::UNROLL, dtypes::kInt32, {x.broadcast(2)}, axes) + x;
    got = TryGraphRewrite(big, Expander());
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(*got, big);
    UOpPtr con = UOp::New(Ops::CONTRACT, dtypes::kInt32.Vec(2), {big}, Arg(Arg::Tuple{Arg{Arg(0), Arg(2)}}));
    got = TryGraphRewrite(con, Expander());
    ASSERT_TRUE(got.ok()) << got.status();
  }
}

}  // namespace
}  // namespace uopc
