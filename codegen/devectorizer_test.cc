#include "codegen/devectorizer.h"

#include <iostream>
#include <string>
#include <vector>

#include "codegen/testing/kernel_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "uop/uop.h"

namespace uopc {
namespace {

TEST(NoVectorizedAluTest, SplitsAVectorAddIntoScalars) {
  UOpPtr a = UOp::Vectorize({UOp::Variable("a", 0, 9), UOp::Variable("b", 0, 9)});
  UOpPtr sum = a + a;
  UOpPtr split = NoVectorizedAlu(sum);
  ASSERT_NE(split, nullptr);
  EXPECT_EQ(split->op(), Ops::VECTORIZE);
  ASSERT_EQ(split->num_src(), 2u);
  EXPECT_EQ(split->src(0)->op(), Ops::ADD);
  EXPECT_EQ(split->src(0)->dtype(), dtypes::kInt32);
  EXPECT_EQ(NoVectorizedAlu(UOp::Variable("a", 0, 9) + 1), nullptr);
}

// A lane of a swizzle is taken from the swizzled vector, as gep_pushing folds GEP(GEP(x, a), i) to
// GEP(x, a[i]): no GEP of a GEP is built for any lane.
TEST(NoVectorizedAluTest, TakesLanesThroughGeps) {
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, Arg(int64_t{0}));
  UOpPtr x = UOp::New(Ops::LOAD, dtypes::kFloat32.Vec(4), {buf.index(UOp::Variable("i", 0, 3))});
  UOpPtr swizzled = x.gep({3, 2, 1, 0});
  UOpPtr split = NoVectorizedAlu(swizzled + UOp::Const(dtypes::kFloat32, 1.0).broadcast(4));
  ASSERT_NE(split, nullptr);
  ASSERT_EQ(split->num_src(), 4u);
  for (int64_t lane = 0; lane < 4; ++lane) {
    const UOp* add = split->src(lane);
    ASSERT_EQ(add->op(), Ops::ADD);
    EXPECT_EQ(add->src(0), x.gep(3 - lane).get()) << "lane " << lane;
    EXPECT_EQ(add->src(1)->op(), Ops::CONST) << "lane " << lane;
  }
}

TEST(DevectorizeTest, AdjacentFloatLoadsFoldIntoOneVectorLoad) {
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, Arg(int64_t{0}));
  UOpPtr base = UOp::Variable("i", 0, 3) * 4;
  UOpPtr vec = UOp::Vectorize({base, base + 1, base + 2, base + 3});
  UOpPtr index = UOp::New(Ops::INDEX, dtypes::kFloat32.Ptr(16).Vec(4), {buf.broadcast(4), vec});
  UOpPtr load = UOp::New(Ops::LOAD, dtypes::kFloat32.Vec(4), {index});
  UOpPtr out = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, Arg(int64_t{1}));
  UOpPtr store = out.index(UOp::Variable("i", 0, 3)).store({load.gep(0) + load.gep(3)});
  ClangRenderer clang;
  absl::StatusOr<UOpPtr> got = RewriteDevectorize(UOp::Sink({store}), clang);
  ASSERT_TRUE(got.ok()) << got.status();
  int vector_loads = 0;
  for (const UOp* u : (*got)->Toposort()) {
    if (u->op() == Ops::LOAD && u->dtype() == dtypes::kFloat32.Vec(4)) ++vector_loads;
  }
  EXPECT_EQ(vector_loads, 1);
}

TEST(DevectorizeCorpusTest, EveryKernelMatchesTinygrad) {
  ClangRenderer clang;
  EXPECT_THAT(CorpusStepDifferences("remove_reduce", "devectorize",
                                    [&](const UOpPtr& g) { return RewriteDevectorize(g, clang); }),
              ::testing::IsEmpty());
}

}  // namespace
}  // namespace uopc
