#include "codegen/testing/random_kernel.h"

#include "absl/container/flat_hash_set.h"
#include "gtest/gtest.h"
#include "uop/spec.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

// Every generated AST is a well-typed kernel (tinygrad's kernel spec), survives the textual IR, and names
// its buffers 0..n-1 with the sizes the views need.
TEST(RandomKernelTest, KernelsAreValidAsts) {
  absl::flat_hash_set<std::string> distinct;
  int reduces = 0;
  for (uint64_t seed = 0; seed < 300; ++seed) {
    ChoiceSource choices(seed);
    RandomKernel k = MakeRandomKernel(choices);
    ASSERT_TRUE(VerifyKernelAst(k.ast.get()).ok()) << VerifyKernelAst(k.ast.get()) << "\n"
                                                   << PrintIr(k.ast.get());
    const std::string text = PrintIr(k.ast.get());
    absl::StatusOr<UOpPtr> back = ParseIrSingle(text);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, k.ast);
    distinct.insert(text);
    for (const UOp* u : k.ast->Toposort()) {
      if (u->op() == Ops::REDUCE_AXIS) ++reduces;
      if (u->op() != Ops::DEFINE_GLOBAL) continue;
      const int64_t arg = u->arg().as_int();
      ASSERT_LT(arg, static_cast<int64_t>(k.buffers.size()));
      EXPECT_EQ(k.buffers[arg].size, u->dtype().ptr_size());
      EXPECT_EQ(k.buffers[arg].dtype, u->dtype().base());
    }
  }
  EXPECT_GT(distinct.size(), 290u);
  EXPECT_GT(reduces, 60);
}

}  // namespace
}  // namespace uopc
