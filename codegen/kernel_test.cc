#include "codegen/kernel.h"

#include <iostream>
#include <string>
#include <vector>

#include "codegen/heuristic.h"
#include "codegen/kernel_info.h"
#include "codegen/opt.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"

namespace uopc {
namespace {

// Every corpus kernel, without opts (`clang_noopt`) and with tinygrad's opts (`clang`): the optimized AST and
// the kernel name are tinygrad's.
TEST(KernelCorpusTest, OptimizedAstAndNameMatchTinygrad) {
  ClangRenderer clang;
  int ast_ok[2] = {0, 0}, name_ok[2] = {0, 0};
  const char* targets[2] = {"clang_noopt", "clang"};
  for (const CorpusKernel& ck : KernelCorpus()) {
    for (int t = 0; t < 2; ++t) {
      const CorpusTarget& target = ck.target(targets[t]);
      absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), clang);
      ASSERT_TRUE(k.ok()) << ck.id << ": " << k.status();
      if (t == 1) {
        std::vector<Opt> opts;
        for (const std::string& repr : target.opts) {
          absl::StatusOr<Opt> o = ParseOpt(repr);
          ASSERT_TRUE(o.ok()) << o.status();
          opts.push_back(*o);
        }
        absl::Status applied = k->ApplyOpts(opts);
        ASSERT_TRUE(applied.ok()) << ck.id << ": " << applied;
      }
      KernelNameCounter names;
      absl::StatusOr<UOpPtr> ast = k->GetOptimizedAst(&names);
      ASSERT_TRUE(ast.ok()) << ck.id << ": " << ast.status();
      std::string diff = GraphDifference(*ast, *target.Stage("optimized_ast"));
      if (diff.empty()) {
        ++ast_ok[t];
      } else {
        ADD_FAILURE() << ck.id << " " << targets[t] << ": " << diff;
      }
      const KernelInfo* info = KernelInfoOf(ast->get());
      if (info != nullptr && info->name == target.name) {
        ++name_ok[t];
      } else {
        ADD_FAILURE() << ck.id << " " << targets[t] << ": name " << (info ? info->name : "?")
                      << " != " << target.name;
      }
    }
  }
  int n = static_cast<int>(KernelCorpus().size());
  std::cout << "optimized_ast equal: clang_noopt " << ast_ok[0] << "/" << n << ", clang " << ast_ok[1] << "/"
            << n << "; names equal: " << name_ok[0] << "/" << n << ", " << name_ok[1] << "/" << n << "\n";
  EXPECT_EQ(ast_ok[0], n);
  EXPECT_EQ(ast_ok[1], n);
  EXPECT_EQ(name_ok[0], n);
  EXPECT_EQ(name_ok[1], n);
}

}  // namespace
}  // namespace uopc
