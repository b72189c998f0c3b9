// CoalescedReduceOptimizations: which kernels get uopc's GPU reduction opts, and which GROUPs. The programs'
// values are checked on INTERP over the whole corpus (runtime/interp_gpu_corpus_test.cc).
#include "codegen/gpu_heuristic.h"

#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/heuristic.h"
#include "codegen/kernel.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "renderer/gpu_cstyle.h"

namespace uopc {
namespace {

// A batch-norm gradient statistic of the mnist step (its first half, split by the scheduler): 8,192 outputs,
// each a sum over 2 images of 20 x 20 pixels; the largest input is contiguous along the pixels.
constexpr char kSplitBatchNormSum[] = R"(%0 = DEFINE_GLOBAL : float32.ptr(8192) arg=0
%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(1, 32, 1, 1, 256), strides=(0, 256, 0, 0, 1), offset=0, mask=None, contiguous=True),))
%2 = VIEW : void arg=ShapeTracker(views=(View(shape=(2, 32, 20, 20, 256), strides=(0, 0, 0, 0, 0), offset=0, mask=None, contiguous=False),))
%3 = CONST : float32 (%2) arg=0.0
%4 = DEFINE_GLOBAL : float32.ptr(6553600) arg=1
%5 = VIEW : void arg=ShapeTracker(views=(View(shape=(2, 32, 20, 20, 256), strides=(12800, 400, 20, 1, 25600), offset=0, mask=None, contiguous=False),))
%6 = LOAD : float32 (%4, %5)
%7 = CMPLT : bool (%3, %6)
%8 = WHERE : float32 (%7, %6, %3)
%9 = DEFINE_GLOBAL : float32.ptr(32) arg=2
%10 = VIEW : void arg=ShapeTracker(views=(View(shape=(2, 32, 20, 20, 256), strides=(0, 1, 0, 0, 0), offset=0, mask=None, contiguous=False),))
%11 = LOAD : float32 (%9, %10)
%12 = CONST : float32 (%2) arg=-1.0
%13 = MUL : float32 (%11, %12)
%14 = ADD : float32 (%8, %13)
%15 = DEFINE_GLOBAL : float32.ptr(32) arg=3
%16 = LOAD : float32 (%15, %10)
%17 = MUL : float32 (%14, %16)
%18 = DEFINE_GLOBAL : float32.ptr(1638400) arg=4
%19 = VIEW : void arg=ShapeTracker(views=(View(shape=(512, 32, 10, 2, 10, 2), strides=(3200, 100, 10, 0, 1, 0), offset=0, mask=None, contiguous=False), View(shape=(2, 32, 20, 20, 256), strides=(12800, 400, 20, 1, 25600), offset=0, mask=None, contiguous=False)))
%20 = LOAD : float32 (%18, %19)
%21 = CMPNE : bool (%17, %20)
%22 = CONST : bool (%2) arg=True
%23 = CMPNE : bool (%21, %22)
%24 = CAST : float32 (%23)
%25 = DEFINE_GLOBAL : float32.ptr(1638400) arg=5
%26 = LOAD : float32 (%25, %19)
%27 = MUL : float32 (%24, %26)
%28 = DEFINE_GLOBAL : float32.ptr(1638400) arg=6
%29 = LOAD : float32 (%28, %19)
%30 = MUL : float32 (%27, %29)
%31 = MUL : float32 (%14, %30)
%32 = REDUCE_AXIS : float32 (%31) arg=(Ops.ADD, (0, 2, 3))
%33 = STORE : void (%0, %1, %32)
%34 = SINK : void (%33)
return %34)";

// A 3x3 convolution's weight gradient over groups of 16 images (tensor/tensor_nn.cc's rule): 32 x 64 x 3 x 3
// weights per group, each a sum over 16 images of 8 x 8 positions.
constexpr char kConvWeightGradient[] = R"(%0 = DEFINE_GLOBAL : float32.ptr(589824) arg=0
%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(32, 32, 64, 3, 3, 1, 1, 1), strides=(18432, 576, 9, 3, 1, 0, 0, 0), offset=0, mask=None, contiguous=True),))
%2 = DEFINE_GLOBAL : float32.ptr(1638400) arg=1
%3 = VIEW : void arg=ShapeTracker(views=(View(shape=(32, 32, 64, 3, 3, 16, 8, 8), strides=(100, 51200, 0, 10, 1, 3200, 10, 1), offset=0, mask=None, contiguous=False),))
%4 = LOAD : float32 (%2, %3)
%5 = DEFINE_GLOBAL : float32.ptr(2097152) arg=2
%6 = VIEW : void arg=ShapeTracker(views=(View(shape=(32, 32, 64, 3, 3, 16, 8, 8), strides=(0, 65536, 64, 0, 0, 4096, 8, 1), offset=0, mask=None, contiguous=False),))
%7 = LOAD : float32 (%5, %6)
%8 = MUL : float32 (%4, %7)
%9 = REDUCE_AXIS : float32 (%8) arg=(Ops.ADD, (5, 6, 7))
%10 = STORE : void (%0, %1, %9)
%11 = SINK : void (%10)
return %11)";

// A sum of n x n float32 values along `axis` into n outputs, the input read every `step` elements.
std::string SumAxis(int64_t n, int axis, int64_t step = 1) {
  const std::string strides =
      axis == 1 ? absl::StrCat("(", n * step, ", ", step, ")") : absl::StrCat("(", step, ", ", n * step, ")");
  return absl::StrCat(
      "%0 = DEFINE_GLOBAL : float32.ptr(", n, ") arg=0\n",
      "%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(", n,
      ", 1), strides=(1, 0), offset=0, mask=None, contiguous=True),))\n", "%2 = DEFINE_GLOBAL : float32.ptr(",
      n * n * step, ") arg=1\n", "%3 = VIEW : void arg=ShapeTracker(views=(View(shape=(", n, ", ", n,
      "), strides=", strides, ", offset=0, mask=None, contiguous=", axis == 1 && step == 1 ? "True" : "False",
      "),))\n", "%4 = LOAD : float32 (%2, %3)\n", "%5 = REDUCE_AXIS : float32 (%4) arg=(Ops.ADD, (1,))\n",
      "%6 = STORE : void (%0, %1, %5)\n", "%7 = SINK : void (%6)\n", "return %7\n");
}

std::optional<std::vector<std::string>> Opts(const std::string& ast, const Renderer& renderer) {
  absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ast), renderer);
  EXPECT_TRUE(k.ok()) << k.status();
  if (!k.ok()) return std::nullopt;
  std::optional<std::vector<Opt>> opts = CoalescedReduceOptimizations(*k);
  if (!opts) return std::nullopt;
  std::vector<std::string> out;
  for (const Opt& o : *opts) out.push_back(o.ToString());
  return out;
}

TEST(CoalescedReduceTest, GroupsTheContiguousPixelsOfASplitBatchNormSum) {
  const CUDARenderer cuda("sm_80");
  // The 20 columns whole, then 10 of the 20 rows: 200 threads reading 200 neighbouring floats.
  EXPECT_EQ(Opts(kSplitBatchNormSum, cuda),
            (std::vector<std::string>{"Opt(op=OptOps.GROUP, axis=2, arg=20)",
                                      "Opt(op=OptOps.GROUP, axis=1, arg=10)"}));
}

TEST(CoalescedReduceTest, GroupsARowSumAlongTheRow) {
  EXPECT_EQ(Opts(SumAxis(1024, 1), CUDARenderer("sm_80")),
            (std::vector<std::string>{"Opt(op=OptOps.GROUP, axis=0, arg=256)"}));
}

// A column sum: the outputs are the contiguous ones, so 8 neighbouring outputs a workgroup (1024 outputs
// leave 128 workgroups), each summed by 32 threads.
TEST(CoalescedReduceTest, GroupsAColumnSumAcrossNeighbouringColumns) {
  EXPECT_EQ(Opts(SumAxis(1024, 0), CUDARenderer("sm_80")),
            (std::vector<std::string>{"Opt(op=OptOps.LOCAL, axis=0, arg=8)",
                                      "Opt(op=OptOps.GROUP, axis=0, arg=32)"}));
}

TEST(CoalescedReduceTest, LeavesOtherKernelsToTinygradsHeuristic) {
  // A sum along a strided axis into outputs that are strided too.
  EXPECT_EQ(Opts(SumAxis(1024, 0, /*step=*/2), CUDARenderer("sm_80")), std::nullopt);
  // Outputs enough to fill the GPU.
  EXPECT_EQ(Opts(SumAxis(1 << 17, 1), CUDARenderer("sm_80")), std::nullopt);
  // A short reduction.
  EXPECT_EQ(Opts(SumAxis(32, 1), CUDARenderer("sm_80")), std::nullopt);
  // No locals.
  EXPECT_EQ(Opts(kSplitBatchNormSum, ClangRenderer()), std::nullopt);
}

// The default opts take them only where the renderer says so; otherwise they stay tinygrad's.
TEST(CoalescedReduceTest, DefaultOptsTakeThemOnlyWithUopcGpuOpts) {
  CUDARenderer cuda("sm_80");
  for (bool on : {false, true}) {
    cuda.set_uopc_gpu_opts(on);
    absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(SumAxis(1024, 1)), cuda);
    ASSERT_TRUE(k.ok()) << k.status();
    ASSERT_TRUE(ApplyDefaultOptimizations(*k).ok());
    ASSERT_FALSE(k->applied_opts().empty());
    EXPECT_EQ(k->applied_opts()[0].ToString() == "Opt(op=OptOps.GROUP, axis=0, arg=256)", on);
  }
}

// tinygrad's first choice of tensor-core axes for the weight gradient is the 3 x 3 window, which no core
// fits; uopc's GPU opts go on to the channels (with ALLOW_TF32, float32 products on the TF32 core).
TEST(TensorCoreAxesTest, UopcGpuOptsTryTheNextAxesWhereTheFirstDoNotFit) {
  setenv("ALLOW_TF32", "1", 1);
  setenv("TC_OPT", "2", 1);
  CUDARenderer cuda("sm_80");
  for (bool on : {false, true}) {
    cuda.set_uopc_gpu_opts(on);
    absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(kConvWeightGradient), cuda);
    ASSERT_TRUE(k.ok()) << k.status();
    ASSERT_TRUE(ApplyDefaultOptimizations(*k).ok());
    EXPECT_EQ(k->tensor_core() != nullptr, on) << OptListToString(k->applied_opts());
  }
  unsetenv("TC_OPT");
  unsetenv("ALLOW_TF32");
}

}  // namespace
}  // namespace uopc
