#include "codegen/final_rewrite.h"

#include <iostream>
#include <string>
#include <vector>

#include "codegen/testing/kernel_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "uop/uop.h"

namespace uopc {
namespace {

TEST(LateRewriteTest, PowersOfTwoBecomeShiftsAndMasks) {
  PatternMatcher late = LateRewritePatterns(ClangRenderer().supported_ops());
  UOpPtr x = UOp::Variable("x", 0, 100);
  EXPECT_EQ(GraphRewrite(x % 8, late), x & 7);
  EXPECT_EQ(GraphRewrite(x.idiv(8), late), x >> 3);
  EXPECT_EQ(GraphRewrite(x * 4, late), x << 2);
  UOpPtr y = UOp::Variable("y", -5, 100);
  // A possibly negative dividend keeps its division by 8 (a shift would floor).
  EXPECT_EQ(GraphRewrite(y.idiv(8), late), y.idiv(8));
  // Nor is its remainder a mask: C's -3 % 8 is -3, -3 & 7 is 5 (tinygrad masks it anyway; the kernel fuzzer
  // found it on the LLVM device, whose IR keeps `srem`).
  EXPECT_NE(GraphRewrite(y % 8, late), y & 7);
  EXPECT_EQ(GraphRewrite(y * -1, late), y.alu(Ops::NEG));
}

// In a valid, a mod whose dividend the other clauses keep non-negative is a mask, as tinygrad renders it (the
// taps of a grouped stride-2 transposed convolution); without those clauses it stays a mod.
TEST(LateRewriteTest, ModInAValidIsAMaskWhereTheOtherClausesKeepItsDividendNonNegative) {
  PatternMatcher late = LateRewritePatterns(OpSet{Ops::AND});
  UOpPtr a = UOp::Variable("a", 0, 56), c = UOp::Variable("c", 0, 18);
  UOpPtr x = a * 56 + c * 3 + -114;
  UOpPtr given = a.ge(2).bitwise_and(c.ge(1));
  UOpPtr valid = given.bitwise_and((x % 2).lt(1));
  EXPECT_EQ(GraphRewrite(valid, late), given.bitwise_and((x & 1).lt(1)));
  // c = 0, a = 2 gives x = -2: C's -2 % 2 is 0 like -2 & 1, but -1 % 2 is -1 where -1 & 1 is 1.
  UOpPtr open = a.ge(2).bitwise_and((x % 2).lt(1));
  EXPECT_EQ(GraphRewrite(open, late), open);
}

TEST(LateRewriteTest, DivisionByAConstantIsAMultiplyAndShift) {
  PatternMatcher late = LateRewritePatterns(ClangRenderer().supported_ops());
  UOpPtr x = UOp::Variable("x", 0, 1000);
  UOpPtr got = GraphRewrite(x.idiv(7), late);
  EXPECT_NE(got, x.idiv(7));
  bool has_shr = false;
  for (const UOp* u : got->Toposort()) has_shr |= u->op() == Ops::SHR;
  EXPECT_TRUE(has_shr);
}

TEST(LateRewriteTest, MulaccAndSubWhereTheTargetHasThem) {
  UOpPtr a = UOp::Variable("a", 0, 9), b = UOp::Variable("b", 0, 9), c = UOp::Variable("c", 0, 9);
  PatternMatcher with_mulacc = LateRewritePatterns(OpSet{Ops::MULACC});
  EXPECT_EQ(GraphRewrite(a * b + c, with_mulacc), a.alu(Ops::MULACC, {b, c}));
  PatternMatcher with_sub = LateRewritePatterns(OpSet{Ops::NEG, Ops::SUB});
  EXPECT_EQ(GraphRewrite(a - b, with_sub), a.alu(Ops::SUB, {b}));
  // Without SHR nothing becomes a shift.
  EXPECT_EQ(GraphRewrite(a.idiv(4), with_sub), a.idiv(4));
}

TEST(RenderPatternsTest, VectorConstantBecomesVectorize) {
  UOpPtr c = UOp::Const(dtypes::kFloat32.Vec(4), 1.5);
  UOpPtr got = GraphRewrite(c, RenderPatterns());
  EXPECT_EQ(got->op(), Ops::VECTORIZE);
  EXPECT_EQ(got->num_src(), 4u);
}

// With ClangRenderer's extra matcher, the step gives tinygrad's graph on every corpus kernel.
TEST(FinalRewriteCorpusTest, EveryKernelMatchesTinygrad) {
  ClangRenderer clang;
  EXPECT_THAT(CorpusStepDifferences("devectorize", "final rewrite",
                                    [&](const UOpPtr& g) { return RewriteFinal(g, clang); }),
              ::testing::IsEmpty());
}

}  // namespace
}  // namespace uopc
