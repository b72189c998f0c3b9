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
