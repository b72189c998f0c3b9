#include "codegen/ignore.h"

#include "codegen/expander.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

// A store masked by x < 8 whose value is `x < 8 ? float(x) * 2 : 2`, and what tinygrad v0.10.3's
// store_ignore, move_ignore and expander steps make of it: where the store happens the mask is true, so the
// WHERE folds away.
constexpr const char* kMaskedStore = R"(%g = DEFINE_GLOBAL : float32.ptr(16) arg=0
%x = DEFINE_VAR : int32 arg=('x', 0, 15)
%c8 = CONST : int32 arg=8
%gate = CMPLT : bool (%x, %c8)
%pg = INDEX : float32.ptr(16) (%g, %x, %gate)
%f = CAST : float32 (%x)
%two = CONST : float32 arg=2.0
%m = MUL : float32 (%f, %two)
%w = WHERE : float32 (%gate, %m, %two)
%st = STORE : void (%pg, %w)
%sink = SINK : void (%st)
return %sink
)";
constexpr const char* kAfterStoreIgnore = R"(%0 = DEFINE_GLOBAL : float32.ptr(16) arg=0
%1 = DEFINE_VAR : int32 arg=('x', 0, 15)
%2 = CONST : int32 arg=8
%3 = CMPLT : bool (%1, %2)
%4 = INDEX : float32.ptr(16) (%0, %1, %3)
%5 = CAST : float32 (%1)
%6 = CONST : float32 arg=2.0
%7 = MUL : float32 (%5, %6)
%8 = WHERE : float32 (%3, %7, %6)
%9 = IGNORE : void (%8, %3)
%10 = STORE : void (%4, %9)
%11 = SINK : void (%10)
return %11
)";
constexpr const char* kAfterMoveIgnore = R"(%0 = DEFINE_GLOBAL : float32.ptr(16) arg=0
%1 = DEFINE_VAR : int32 arg=('x', 0, 15)
%2 = CONST : int32 arg=8
%3 = CMPLT : bool (%1, %2)
%4 = INDEX : float32.ptr(16) (%0, %1, %3)
%5 = CONST : bool arg=True
%6 = IGNORE : int32 (%1, %3)
%7 = CAST : float32 (%6)
%8 = CONST : float32 arg=2.0
%9 = MUL : float32 (%7, %8)
%10 = WHERE : float32 (%5, %9, %8)
%11 = STORE : void (%4, %10)
%12 = SINK : void (%11)
return %12
)";
constexpr const char* kAfterExpander = R"(%0 = DEFINE_GLOBAL : float32.ptr(16) arg=0
%1 = DEFINE_VAR : int32 arg=('x', 0, 15)
%2 = CONST : int32 arg=8
%3 = CMPLT : bool (%1, %2)
%4 = INDEX : float32.ptr(16) (%0, %1, %3)
%5 = CAST : float32 (%1)
%6 = CONST : float32 arg=2.0
%7 = MUL : float32 (%5, %6)
%8 = STORE : void (%4, %7)
%9 = SINK : void (%8)
return %9
)";

UOpPtr Parse(const char* text) {
  absl::StatusOr<UOpPtr> g = ParseIrSingle(text);
  UOPC_CHECK(g.ok(), "bad test graph");
  return *g;
}

TEST(IgnoreTest, MaskedStoreValueIsWrappedOnce) {
  ClangRenderer clang;
  absl::StatusOr<UOpPtr> got = RewriteStoreIgnore(Parse(kMaskedStore), clang);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(GraphDifference(*got, kAfterStoreIgnore), "");
  // Running the step again wraps nothing more.
  got = RewriteStoreIgnore(*got, clang);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(GraphDifference(*got, kAfterStoreIgnore), "");
}

TEST(IgnoreTest, IgnoresMoveToTheLeavesWhereTheMaskIsTrue) {
  ClangRenderer clang;
  absl::StatusOr<UOpPtr> got = RewriteMoveIgnore(Parse(kAfterStoreIgnore), clang);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(GraphDifference(*got, kAfterMoveIgnore), "");
}

TEST(IgnoreTest, TheExpanderDeletesWhatIsLeft) {
  ClangRenderer clang;
  absl::StatusOr<UOpPtr> got = RewriteExpander(Parse(kAfterMoveIgnore), clang);
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(GraphDifference(*got, kAfterExpander), "");
}

TEST(IgnoreTest, UnmaskedStoresAreUntouched) {
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(4), {}, Arg(0));
  UOpPtr x = UOp::Variable("x", 0, 3);
  UOpPtr sink = UOp::Sink({buf.index(x).store({x})});
  EXPECT_EQ(GraphRewrite(sink, PmStoreIgnore()), sink);
}

TEST(IgnoreTest, IgnoreOfAConstantIsTheConstant) {
  UOpPtr mask = UOp::Variable("x", 0, 3).lt(2);
  UOpPtr c = UOp::Const(dtypes::kFloat32, 1.5);
  EXPECT_EQ(GraphRewrite(UOp::New(Ops::IGNORE, dtypes::kFloat32, {c, mask}), PmMoveIgnore()), c);
  EXPECT_EQ(GraphRewrite(UOp::New(Ops::IGNORE, dtypes::kBool, {mask, mask}), PmMoveIgnore()),
            UOp::Const(dtypes::kBool, true));
}

// THREEFRY's rounds under a padded store (a BEAM candidate of the mnist step's random kernels, PADTO 0 32):
// each value of a round feeds two of the next, so a node deep down has exponentially many paths from the
// store. As in tinygrad, each IGNORE(node, mask) is rewritten once, whatever the paths to it; rewriting it
// once per path (2^40 here) exceeds the step's bound at once.
TEST(IgnoreTest, ASharedSubgraphIsRewrittenOncePerMask) {
  ClangRenderer clang;
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(16), {}, Arg(0));
  UOpPtr x = UOp::Variable("x", 0, 15);
  UOpPtr gate = x.lt(8);
  UOpPtr a = x, b = x + 1;
  for (int round = 0; round < 40; ++round) {
    UOpPtr next_a = a + b;
    b = a * b;
    a = next_a;
  }
  UOpPtr value = a ^ b;
  UOpPtr sink = UOp::Sink({buf.index(x, gate).store({value})});
  absl::StatusOr<UOpPtr> stored = RewriteStoreIgnore(sink, clang);
  ASSERT_TRUE(stored.ok()) << stored.status();
  absl::StatusOr<UOpPtr> moved = RewriteMoveIgnore(*stored, clang);
  ASSERT_TRUE(moved.ok()) << moved.status();
  // The IGNORE ends at the one leaf that is not a constant.
  UOpPtr ignored_x = UOp::New(Ops::IGNORE, dtypes::kInt32, {x, gate});
  UOpPtr expected = UOp::Sink({buf.index(x, gate).store({value->Substitute({{x.get(), ignored_x}})})});
  EXPECT_EQ(*moved, expected);
}

}  // namespace
}  // namespace uopc
