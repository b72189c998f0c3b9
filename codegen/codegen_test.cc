// The codegen driver's steps and SPEC=1's checks between them: with the checks on, a step that leaves an
// invalid graph is named in the error; every corpus kernel passes them (the corpus tests run with SPEC=1).
#include "codegen/codegen.h"

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "codegen/testing/kernel_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "uop/spec.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class CodegenStepsTest : public ::testing::Test {
 protected:
  void TearDown() override { SetSpecChecks(false); }
  ClangRenderer clang_;
};

TEST_F(CodegenStepsTest, TheStepsInOrder) {
  std::vector<std::string> names;
  for (const CodegenStep& s : CodegenSteps(clang_)) names.emplace_back(s.name);
  EXPECT_THAT(names, ElementsAre("lowerer", "initial symbolic", "store_ignore", "move_ignore", "expander",
                                 "remove_reduce", "devectorize", "final rewrite"));
}

// A step that adds an int to the first stored value, whatever its dtype.
absl::StatusOr<UOpPtr> AddAnInt(const UOpPtr& sink, const Renderer&) {
  UOpPtr store = sink->src()[0];
  UOpPtr value = store->src()[1];
  UOpPtr bad = UOp::New(Ops::ADD, value->dtype(), {value, UOp::Const(dtypes::kInt64, 1)});
  std::vector<UOpPtr> src(sink->src().begin(), sink->src().end());
  src[0] = store.replace_src({store->src()[0], bad});
  return sink.replace_src(src);
}

absl::StatusOr<UOpPtr> OptimizedAst(const Renderer& renderer) {
  UOPC_ASSIGN_OR_RETURN(Kernel k,
                        OptimizeKernel(ParseCorpusGraph(KernelCorpus()[0].ast), renderer, CompileOptions{}));
  return k.GetOptimizedAst(nullptr, "E_test");
}

TEST_F(CodegenStepsTest, ABrokenStepIsNamed) {
  SetSpecChecks(true);
  absl::StatusOr<UOpPtr> ast = OptimizedAst(clang_);
  ASSERT_TRUE(ast.ok()) << ast.status();
  ASSERT_TRUE(FullRewrite(*ast, clang_).ok());
  std::vector<CodegenStep> steps;
  for (const CodegenStep& s : CodegenSteps(clang_)) {
    steps.push_back(s);
    if (s.name == "expander") steps.push_back({"add_an_int", &AddAnInt});
  }
  absl::StatusOr<std::vector<UOpPtr>> uops = RunCodegenSteps(*ast, clang_, steps);
  ASSERT_FALSE(uops.ok());
  EXPECT_EQ(uops.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(
      uops.status().message(),
      HasSubstr("SPEC: codegen step 'add_an_int' left an invalid graph: codegen graph spec violation"));
  EXPECT_THAT(uops.status().message(), HasSubstr("ALU source 1 has dtype dtypes.long"));
}

TEST_F(CodegenStepsTest, TheOptimizedAstAndTheInputAreChecked) {
  SetSpecChecks(true);
  absl::StatusOr<UOpPtr> ast = OptimizedAst(clang_);
  ASSERT_TRUE(ast.ok()) << ast.status();
  absl::StatusOr<UOpPtr> broken = AddAnInt(*ast, clang_);
  ASSERT_TRUE(broken.ok());
  absl::StatusOr<std::vector<UOpPtr>> uops = FullRewrite(*broken, clang_);
  ASSERT_FALSE(uops.ok());
  EXPECT_THAT(
      uops.status().message(),
      HasSubstr("SPEC: codegen step 'optimized_ast' left an invalid graph: kernel AST spec violation"));
  KernelNameCounter names;
  absl::StatusOr<ProgramSpec> p = CompileKernel(*broken, clang_, CompileOptions{}, &names);
  ASSERT_FALSE(p.ok());
  EXPECT_THAT(p.status().message(), HasSubstr("SPEC: the kernel AST given to codegen is invalid: "));
}

}  // namespace
}  // namespace uopc
