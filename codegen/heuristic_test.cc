#include "codegen/heuristic.h"

#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "codegen/testing/kernel_corpus.h"
#include "codegen/testing/test_renderers.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

std::vector<std::string> Reprs(const std::vector<Opt>& opts) {
  std::vector<std::string> out;
  for (const Opt& o : opts) out.push_back(o.ToString());
  return out;
}

// Every corpus kernel: the hand-coded opts on the CPU target are tinygrad's `clang` opts.
TEST(HeuristicCorpusTest, ClangOptsMatchTinygrad) {
  ClangRenderer clang;
  int matched = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& ck : KernelCorpus()) {
    absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), clang);
    if (!k.ok()) {
      failing.push_back(ck.id + " (create: " + std::string(k.status().message()) + ")");
      continue;
    }
    absl::StatusOr<std::vector<Opt>> opts = HandCodedOptimizations(*k);
    if (!opts.ok()) {
      failing.push_back(ck.id + " (" + std::string(opts.status().message()) + ")");
      continue;
    }
    if (Reprs(*opts) == ck.target("clang").opts) {
      ++matched;
    } else {
      failing.push_back(ck.id + " got " + OptListToString(*opts));
    }
  }
  std::cout << "hand-coded opts equal to tinygrad's clang opts: " << matched << "/" << KernelCorpus().size()
            << "\n";
  for (const std::string& f : failing) ADD_FAILURE() << "opts differ: " << f;
  EXPECT_EQ(matched, static_cast<int>(KernelCorpus().size()));
}

// The whole step, as a driver calls it: tinygrad's optimized AST for `clang` (default opts) and
// `clang_noopt`.
TEST(HeuristicCorpusTest, OptimizeKernelAstGivesTheOptimizedAstStage) {
  ClangRenderer clang;
  int matched = 0;
  for (const CorpusKernel& ck : KernelCorpus()) {
    for (bool noopt : {false, true}) {
      KernelNameCounter names;
      absl::StatusOr<UOpPtr> ast =
          OptimizeKernelAst(ParseCorpusGraph(ck.ast), clang, &names,
                            noopt ? std::optional<std::vector<Opt>>(std::vector<Opt>{}) : std::nullopt);
      ASSERT_TRUE(ast.ok()) << ck.id << ": " << ast.status();
      std::string diff =
          GraphDifference(*ast, *ck.target(noopt ? "clang_noopt" : "clang").Stage("optimized_ast"));
      if (diff.empty()) {
        ++matched;
      } else {
        ADD_FAILURE() << ck.id << (noopt ? " noopt" : "") << ": " << diff;
      }
    }
  }
  EXPECT_EQ(matched, 2 * static_cast<int>(KernelCorpus().size()));
}

TEST(HeuristicTest, OptimizeKernelAstReportsBadOpts) {
  ClangRenderer clang;
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = OptimizeKernelAst(ParseCorpusGraph(KernelCorpus()[0].ast), clang, &names,
                                                 std::vector<Opt>{Opt(OptOps::kLocal, 0, 3)});
  EXPECT_TRUE(absl::IsInvalidArgument(ast.status())) << ast.status();
  EXPECT_FALSE(OptimizeKernelAst(nullptr, clang, &names).ok());
}

TEST(HeuristicTest, LeavesTheKernelUnchanged) {
  DescriptionOnlyRenderer gpu = OpenClTarget();
  for (const char* id : {"matvec/0", "matmul_64/0", "sum_16x16/0"}) {
    UOpPtr ast;
    for (const CorpusKernel& ck : KernelCorpus()) {
      if (ck.id == id) ast = ParseCorpusGraph(ck.ast);
    }
    absl::StatusOr<Kernel> k = Kernel::Create(ast, gpu);
    ASSERT_TRUE(k.ok());
    std::vector<ShapeTracker> before = k->sts();
    absl::StatusOr<std::vector<Opt>> opts = HandCodedOptimizations(*k);
    ASSERT_TRUE(opts.ok());
    EXPECT_FALSE(opts->empty()) << id;
    EXPECT_EQ(k->sts(), before) << id;
    EXPECT_TRUE(k->applied_opts().empty()) << id;
    // Applying the returned list gives the same kernel the heuristic built.
    ASSERT_TRUE(k->ApplyOpts(*opts).ok());
    EXPECT_EQ(k->applied_opts(), *opts);
  }
}

TEST(HeuristicTest, MatrixVectorGetsGroupLocalUpcast) {
  DescriptionOnlyRenderer gpu = OpenClTarget();
  UOpPtr ast;
  for (const CorpusKernel& ck : KernelCorpus()) {
    if (ck.id == "matvec/0") ast = ParseCorpusGraph(ck.ast);
  }
  absl::StatusOr<Kernel> k = Kernel::Create(ast, gpu);
  ASSERT_TRUE(k.ok());
  absl::StatusOr<std::vector<Opt>> opts = HandCodedOptimizations(*k);
  ASSERT_TRUE(opts.ok());
  ASSERT_EQ(opts->size(), 3u);
  EXPECT_EQ((*opts)[0].op, OptOps::kGroup);
  EXPECT_EQ((*opts)[1].op, OptOps::kLocal);
  EXPECT_EQ((*opts)[2].op, OptOps::kUpcast);
}

// Every corpus kernel on every target tinygrad recorded: tensor cores when they apply, else the hand-coded
// opts (what tinygrad does without BEAM) give the target's opts and name.
TEST(HeuristicCorpusTest, DefaultOptimizationsMatchEveryTarget) {
  ClangRenderer clang;
  DescriptionOnlyRenderer opencl = OpenClTarget(), metal = MetalTarget(false), cuda = CudaSm80Target(),
                          llvm = LlvmTarget();
  const std::vector<std::pair<std::string, const Renderer*>> targets = {
      {"clang", &clang}, {"opencl", &opencl}, {"metal", &metal},
      {"cuda", &cuda},   {"ptx", &cuda},      {"llvm", &llvm}};
  for (const auto& [name, renderer] : targets) {
    int opts_ok = 0, names_ok = 0;
    for (const CorpusKernel& ck : KernelCorpus()) {
      const CorpusTarget& target = ck.target(name);
      absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), *renderer);
      ASSERT_TRUE(k.ok()) << ck.id << ": " << k.status();
      absl::Status s = ApplyDefaultOptimizations(*k);
      ASSERT_TRUE(s.ok()) << ck.id << " " << name << ": " << s;
      if (Reprs(k->applied_opts()) == target.opts) {
        ++opts_ok;
      } else {
        ADD_FAILURE() << ck.id << " " << name << ": got " << OptListToString(k->applied_opts())
                      << ", tinygrad [" << absl::StrJoin(target.opts, ", ") << "]";
      }
      KernelNameCounter names;
      absl::StatusOr<UOpPtr> ast = k->GetOptimizedAst(&names);
      ASSERT_TRUE(ast.ok()) << ck.id << " " << name << ": " << ast.status();
      if (KernelInfoOf(ast->get())->name == target.name) {
        ++names_ok;
      } else {
        ADD_FAILURE() << ck.id << " " << name << ": name " << KernelInfoOf(ast->get())->name
                      << " != " << target.name;
      }
    }
    std::cout << name << ": opts " << opts_ok << "/" << KernelCorpus().size() << ", names " << names_ok << "/"
              << KernelCorpus().size() << "\n";
    EXPECT_EQ(opts_ok, static_cast<int>(KernelCorpus().size())) << name;
    EXPECT_EQ(names_ok, static_cast<int>(KernelCorpus().size())) << name;
  }
}

}  // namespace
}  // namespace uopc
