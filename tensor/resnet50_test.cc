// ResNet-50 through the Tensor API, as tinygrad's compile benchmark builds it, against the kernels tinygrad
// made for it (codegen/testdata/resnet50_kernels.jsonl): the schedule's length, its unique kernels' ASTs in
// order, and, compiled as the benchmark compiles them, their names, linear program lengths and C source.
#include "tensor/testing/resnet50.h"

#include <string>
#include <vector>

#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "tensor/testing/compile_phases.h"

namespace uopc {
namespace {

const std::vector<CorpusKernel>& TinygradKernels() {
  static const auto* kernels = [] {
    absl::StatusOr<std::vector<CorpusKernel>> k = LoadKernelCorpus("codegen/testdata/resnet50_kernels.jsonl");
    if (!k.ok()) ADD_FAILURE() << k.status();
    return new std::vector<CorpusKernel>(k.ok() ? *std::move(k) : std::vector<CorpusKernel>{});
  }();
  return *kernels;
}

absl::StatusOr<CompilePhases> CompileResnet50(int threads) {
  Resnet50 model = Resnet50::WithEmptyWeights();
  Tensor images = Tensor::Empty({64, 3, 224, 224});
  ClangRenderer clang;
  return MeasureCompilePhases([&] { return model.Forward(images); }, clang,
                              {.threads = threads, .render = true});
}

TEST(Resnet50Test, ModelHasTorchvisionsParameters) {
  Resnet50 model = Resnet50::WithEmptyWeights();
  std::vector<Tensor> params = model.Parameters();
  ASSERT_EQ(params.size(), 267u);
  int64_t count = 0;
  for (const Tensor& p : params) count += p.numel();
  EXPECT_EQ(count, 25610152);  // tinygrad's state dict without num_batches_tracked (25,557,032 trainable)
  EXPECT_EQ(params.front().Shape(), (Dims{64, 3, 7, 7}));
  EXPECT_EQ(params.back().Shape(), (Dims{1000}));
  Tensor logits = model.Forward(Tensor::Empty({2, 3, 224, 224}));
  ASSERT_TRUE(logits.ok()) << logits.status();
  EXPECT_EQ(logits.Shape(), (Dims{2, 1000}));
}

TEST(Resnet50Test, KernelsAreTinygrads) {
  ASSERT_EQ(TinygradKernels().size(), 32u);
  absl::StatusOr<CompilePhases> p = CompileResnet50(/*threads=*/1);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->schedule_items, 56);
  ASSERT_EQ(p->unique_asts.size(), 32u);
  int same_ast = 0, same_name = 0, same_src = 0;
  for (size_t i = 0; i < 32; ++i) {
    const CorpusKernel& want = TinygradKernels()[i];
    std::string diff = GraphDifference(p->unique_asts[i], want.ast);
    if (diff.empty()) {
      ++same_ast;
    } else {
      ADD_FAILURE() << want.id << ": the AST differs\n" << diff;
    }
    same_name += p->names[i] == want.target("clang").name;
    EXPECT_EQ(p->names[i], want.target("clang").name) << want.id;
    if (p->sources[i] == want.target("clang").src) {
      ++same_src;
    } else {
      ADD_FAILURE() << want.id << " " << want.target("clang").name << ": the C source differs";
    }
  }
  EXPECT_EQ(same_ast, 32);
  EXPECT_EQ(same_name, 32);
  EXPECT_EQ(same_src, 32);
  EXPECT_EQ(p->total_uops(), 19686);  // what tinygrad's benchmark prints
}

// The per-kernel phases on threads give the same kernels, in the same order, with the same names.
TEST(Resnet50Test, ThreadsGiveTheSameKernels) {
  absl::StatusOr<CompilePhases> serial = CompileResnet50(1);
  absl::StatusOr<CompilePhases> parallel = CompileResnet50(4);
  ASSERT_TRUE(serial.ok()) << serial.status();
  ASSERT_TRUE(parallel.ok()) << parallel.status();
  ASSERT_EQ(parallel->unique_asts.size(), 32u);
  EXPECT_EQ(parallel->unique_asts, serial->unique_asts);
  EXPECT_EQ(parallel->names, serial->names);
  EXPECT_EQ(parallel->uop_counts, serial->uop_counts);
  EXPECT_EQ(parallel->sources, serial->sources);
}

}  // namespace
}  // namespace uopc
