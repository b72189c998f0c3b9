// INTERP runs the GPU targets' programs: every corpus kernel compiled for OpenCL, Metal and CUDA (thread ids,
// local memory, barriers, tensor cores) and interpreted gives the corpus's outputs, so every GPU renderer's
// input is checked on any machine.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/gpu_cstyle.h"
#include "renderer/tensor_cores.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

// The corpus kernels each check runs: all 93, every Nth under the sanitizers (uop/testing/sample.h).
const std::vector<CorpusKernel>& SampledCorpus() {
  static const std::vector<CorpusKernel>* const sample =
      new std::vector<CorpusKernel>(TestSample(KernelCorpus()));
  return *sample;
}
int SampleSize() {
  EXPECT_GE(KernelCorpus().size(), 93u);
  return static_cast<int>(SampledCorpus().size());
}

// How many of the sampled corpus kernels, compiled for `renderer` and interpreted, give the corpus's outputs.
int CheckTarget(const Renderer& renderer, const std::string& target, std::vector<std::string>* failing) {
  absl::StatusOr<Device*> interp = GetDevice("INTERP");
  EXPECT_TRUE(interp.ok());
  int right = 0;
  for (const CorpusKernel& k : SampledCorpus()) {
    absl::StatusOr<nlohmann::json> out =
        RunOnCorpusInputs(ParseCorpusGraph(k.ast), nlohmann::json(), **interp, renderer, CompileOptions{});
    std::string diff;
    if (!out.ok()) {
      diff = out.status().ToString();
    } else {
      for (const CorpusBuffer& b : k.buffers) {
        const std::string arg = std::to_string(b.arg);
        if (!k.outputs.contains(arg)) continue;
        if (!out->contains(arg)) {
          diff = "buffer " + arg + " was not stored to";
          break;
        }
        absl::StatusOr<DType> dtype = CorpusDType(b.dtype);
        diff = dtype.ok() ? CorpusValuesMismatch(*dtype, (*out)[arg], k.outputs[arg]) : "bad dtype";
        if (!diff.empty()) break;
      }
    }
    if (diff.empty()) {
      ++right;
    } else {
      failing->push_back(k.id);
      if (failing->size() <= 2) ADD_FAILURE() << target << " " << k.id << ": " << diff;
    }
  }
  return right;
}

TEST(InterpGpuCorpusTest, OpenCL) {
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(OpenCLRenderer(), "opencl", &failing), SampleSize()) << absl::StrJoin(failing, " ");
}
TEST(InterpGpuCorpusTest, Metal) {
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(MetalRenderer(), "metal", &failing), SampleSize()) << absl::StrJoin(failing, " ");
}
TEST(InterpGpuCorpusTest, Cuda) {
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(CUDARenderer("sm_80"), "cuda", &failing), SampleSize())
      << absl::StrJoin(failing, " ");
}

// uopc's GPU opts (UOPC_KERNELS=fast on the CUDA device): the corpus's outputs, and the kernels whose opts
// they changed are counted, so the test fails if none is.
TEST(InterpGpuCorpusTest, CudaWithUopcGpuOpts) {
  CUDARenderer uopc_opts("sm_80");
  uopc_opts.set_uopc_gpu_opts(true);
  const CUDARenderer tinygrad_opts("sm_80");
  int changed = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    absl::StatusOr<ProgramSpec> ours =
        CompileKernel(ParseCorpusGraph(k.ast), uopc_opts, CompileOptions{}, nullptr);
    absl::StatusOr<ProgramSpec> theirs =
        CompileKernel(ParseCorpusGraph(k.ast), tinygrad_opts, CompileOptions{}, nullptr);
    ASSERT_TRUE(ours.ok() && theirs.ok()) << k.id;
    if (ours->src != theirs->src) ++changed;
  }
  std::vector<std::string> failing;
  EXPECT_GE(CheckTarget(uopc_opts, "cuda with uopc's GPU opts", &failing), SampleSize())
      << absl::StrJoin(failing, " ");
  std::printf("uopc's GPU opts changed %d corpus kernels\n", changed);
  EXPECT_GE(changed, 3);
}

// x[o, a, b] reduced over a and b by `op` (ADD or MAX), x read through a view that strides `o`, `a` and `b`
// as given (o_stride 0: a * b, the outputs' runs one after the other), for `outputs` outputs.
std::string Reduction(int64_t outputs, int64_t a, int64_t b, int64_t a_stride, int64_t b_stride,
                      absl::string_view op, int64_t o_stride = 0) {
  const int64_t size = outputs * a * b;
  return absl::StrCat("%0 = DEFINE_GLOBAL : float32.ptr(", outputs, ") arg=0\n",
                      "%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(", outputs,
                      ", 1, 1), strides=(1, 0, 0), offset=0, mask=None, contiguous=True),))\n",
                      "%2 = DEFINE_GLOBAL : float32.ptr(", size, ") arg=1\n",
                      "%3 = VIEW : void arg=ShapeTracker(views=(View(shape=(", outputs, ", ", a, ", ", b,
                      "), strides=(", o_stride == 0 ? a * b : o_stride, ", ", a_stride, ", ", b_stride,
                      "), offset=0, mask=None, contiguous=False),))\n", "%4 = LOAD : float32 (%2, %3)\n",
                      "%5 = REDUCE_AXIS : float32 (%4) arg=(Ops.", op, ", (1, 2))\n",
                      "%6 = STORE : void (%0, %1, %5)\n", "%7 = SINK : void (%6)\n", "return %7\n");
}

// The mnist step's linear layer's weight gradient (10 x 576 sums over the batch of 512): its outputs are the
// contiguous ones, so it takes LOCAL and GROUP (r_10_16_36_16_32).
constexpr char kLinearWeightGradient[] = R"(%0 = DEFINE_GLOBAL : float32.ptr(5760) arg=0
%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(1, 10, 576), strides=(0, 576, 1), offset=0, mask=None, contiguous=True),))
%2 = DEFINE_GLOBAL : float32.ptr(294912) arg=1
%3 = VIEW : void arg=ShapeTracker(views=(View(shape=(512, 10, 576), strides=(576, 0, 1), offset=0, mask=None, contiguous=False),))
%4 = LOAD : float32 (%2, %3)
%5 = DEFINE_GLOBAL : float32.ptr(5120) arg=2
%6 = VIEW : void arg=ShapeTracker(views=(View(shape=(512, 10, 576), strides=(10, 1, 0), offset=0, mask=None, contiguous=False),))
%7 = LOAD : float32 (%5, %6)
%8 = MUL : float32 (%4, %7)
%9 = REDUCE_AXIS : float32 (%8) arg=(Ops.ADD, (0,))
%10 = STORE : void (%0, %1, %9)
%11 = SINK : void (%10)
return %11)";

// Coalesced reductions over shapes that group whole axes, part of one, or nothing: the sums and maxima on
// INTERP equal those of the unoptimized program, and most of the shapes take the GROUPs.
TEST(InterpGpuCorpusTest, CoalescedReductionsKeepTheirValues) {
  absl::StatusOr<Device*> interp = GetDevice("INTERP");
  ASSERT_TRUE(interp.ok()) << interp.status();
  CUDARenderer renderer("sm_80");
  renderer.set_uopc_gpu_opts(true);
  const CUDARenderer tinygrad_opts("sm_80");
  struct Case {
    int64_t outputs, a, b, a_stride, b_stride, o_stride = 0;
  };
  const Case cases[] = {
      {32, 20, 20, 20, 1},   // 20 columns whole, then 10 of the rows (the batch-norm statistics)
      {8, 7, 37, 37, 1},     // 37 columns whole, then 7 rows: 259 > 256, so 37 alone
      {4, 300, 1, 1, 1},     // 300 contiguous: 150 of them
      {16, 64, 3, 3, 1},     // 3 columns, then 64 rows: 3 x 64 = 192
      {4, 100, 20, 1, 100},  // transposed: the rows are contiguous (b's stride 100 breaks the chain at once)
      {64, 8, 4, 4, 1},      // 32 values an output: too short
      {256, 16, 8, 2048, 256,
       1},  // the outputs contiguous: 8 of them a workgroup, 8 threads each (LOCAL, GROUP)
      {2304, 64, 1, 2304, 1,
       1},  // 18 neighbouring outputs, 32 threads each (the batch-norm statistics of 6x6)
  };
  int grouped = 0;
  for (const Case& c : cases) {
    for (absl::string_view op : {"ADD", "MAX"}) {
      const std::string text = Reduction(c.outputs, c.a, c.b, c.a_stride, c.b_stride, op, c.o_stride);
      const UOpPtr ast = ParseCorpusGraph(text);
      absl::StatusOr<ProgramSpec> program = CompileKernel(ast, renderer, CompileOptions{}, nullptr);
      ASSERT_TRUE(program.ok()) << program.status() << "\n" << text;
      absl::StatusOr<ProgramSpec> theirs = CompileKernel(ast, tinygrad_opts, CompileOptions{}, nullptr);
      ASSERT_TRUE(theirs.ok()) << theirs.status();
      if (program->src != theirs->src) ++grouped;
      absl::StatusOr<nlohmann::json> fast = RunOnCorpusInputs(ast, nlohmann::json(), **interp, renderer, {});
      absl::StatusOr<nlohmann::json> plain =
          RunOnCorpusInputs(ast, nlohmann::json(), **interp, renderer, CompileOptions{.optimize = false});
      ASSERT_TRUE(fast.ok()) << fast.status() << "\n" << text;
      ASSERT_TRUE(plain.ok()) << plain.status();
      EXPECT_EQ(CorpusValuesMismatch(dtypes::kFloat32, (*fast)["0"], (*plain)["0"]), "") << text;
    }
  }
  EXPECT_EQ(grouped, 12);

  const UOpPtr linear = ParseCorpusGraph(kLinearWeightGradient);
  absl::StatusOr<ProgramSpec> program = CompileKernel(linear, renderer, CompileOptions{}, nullptr);
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_EQ(program->name, "r_10_16_36_16_32");
  absl::StatusOr<nlohmann::json> fast = RunOnCorpusInputs(linear, nlohmann::json(), **interp, renderer, {});
  absl::StatusOr<nlohmann::json> plain =
      RunOnCorpusInputs(linear, nlohmann::json(), **interp, renderer, CompileOptions{.optimize = false});
  ASSERT_TRUE(fast.ok()) << fast.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(CorpusValuesMismatch(dtypes::kFloat32, (*fast)["0"], (*plain)["0"]), "");
}

// A 3x3 convolution's weight gradient as tensor/tensor_nn.cc's rule makes it (x's channels as the batch,
// groups of images as channels, dy's positions as the kernel), small: 8 input and 16 output channels, 2
// groups of 4 images, 8 x 8 output positions. tinygrad's first choice of tensor-core axes is the 3 x 3
// window; uopc's GPU opts take the channels instead (codegen/gpu_heuristic_test.cc), and the sums must not
// change.
std::string SmallConvWeightGradient() {
  constexpr int64_t c = 8, g = 2, o = 16, i = 4;
  auto view = [&](const std::string& strides) {
    return absl::StrCat("VIEW : void arg=ShapeTracker(views=(View(shape=(", c, ", ", g, ", ", o, ", 3, 3, ",
                        i, ", 8, 8), strides=", strides, ", offset=0, mask=None, contiguous=False),))\n");
  };
  return absl::StrCat("%0 = DEFINE_GLOBAL : float32.ptr(", c * g * o * 9, ") arg=0\n",
                      "%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(", c, ", ", g, ", ", o,
                      ", 3, 3, 1, 1, 1), strides=(", g * o * 9, ", ", o * 9,
                      ", 9, 3, 1, 0, 0, 0), offset=0, mask=None, contiguous=True),))\n",
                      "%2 = DEFINE_GLOBAL : float32.ptr(", g * i * c * 100, ") arg=1\n",
                      "%3 = ", view(absl::StrCat("(100, ", i * c * 100, ", 0, 10, 1, ", c * 100, ", 10, 1)")),
                      "%4 = LOAD : float32 (%2, %3)\n", "%5 = DEFINE_GLOBAL : float32.ptr(", g * i * o * 64,
                      ") arg=2\n",
                      "%6 = ", view(absl::StrCat("(0, ", i * o * 64, ", 64, 0, 0, ", o * 64, ", 8, 1)")),
                      "%7 = LOAD : float32 (%5, %6)\n", "%8 = MUL : float32 (%4, %7)\n",
                      "%9 = REDUCE_AXIS : float32 (%8) arg=(Ops.ADD, (5, 6, 7))\n",
                      "%10 = STORE : void (%0, %1, %9)\n", "%11 = SINK : void (%10)\n", "return %11\n");
}

TEST(InterpGpuCorpusTest, ConvWeightGradientOnTheTf32CoreWithUopcGpuOpts) {
  absl::StatusOr<Device*> interp = GetDevice("INTERP");
  ASSERT_TRUE(interp.ok()) << interp.status();
  setenv("ALLOW_TF32", "1", 1);
  CUDARenderer renderer("sm_80");
  unsetenv("ALLOW_TF32");
  renderer.set_uopc_gpu_opts(true);
  setenv("TC_OPT", "2", 1);
  const UOpPtr ast = ParseCorpusGraph(SmallConvWeightGradient());
  absl::StatusOr<ProgramSpec> program = CompileKernel(ast, renderer, CompileOptions{}, nullptr);
  absl::StatusOr<nlohmann::json> fast = RunOnCorpusInputs(ast, nlohmann::json(), **interp, renderer, {});
  unsetenv("TC_OPT");
  ASSERT_TRUE(program.ok()) << program.status();
  EXPECT_TRUE(absl::StrContains(program->src, ".tf32.tf32.")) << program->src;
  absl::StatusOr<nlohmann::json> plain =
      RunOnCorpusInputs(ast, nlohmann::json(), **interp, renderer, CompileOptions{.optimize = false});
  ASSERT_TRUE(fast.ok()) << fast.status();
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(CorpusValuesMismatch(dtypes::kFloat32, (*fast)["0"], (*plain)["0"]), "");
}

// With ALLOW_TF32=1 the float32 reductions of products that fit a tensor core take CUDA's TF32 core (its own
// operand layout), and with TC_OPT=2 so do those with several reduce axes or sizes to pad (convolutions).
// INTERP multiplies the operands in float32, so the corpus's outputs still come out exactly where the layout
// is right; the kernels that took the core are counted, so the test fails if none does.
TEST(InterpGpuCorpusTest, CudaTf32TensorCores) {
  setenv("ALLOW_TF32", "1", 1);
  CUDARenderer renderer("sm_80");
  unsetenv("ALLOW_TF32");
  ASSERT_FALSE(renderer.tensor_cores().empty());
  EXPECT_EQ(renderer.tensor_cores().back().dtype_in, dtypes::kFloat32);
  EXPECT_EQ(CUDARenderer("sm_80").tensor_cores().size(), renderer.tensor_cores().size() - 1);
  // tinygrad's opts, then uopc's GPU opts (which try more choices of the core's axes).
  for (const char* tc_opt : {"0", "2", "2 with uopc's GPU opts"}) {
    renderer.set_uopc_gpu_opts(absl::StrContains(tc_opt, "uopc"));
    setenv("TC_OPT", std::string(1, tc_opt[0]).c_str(), 1);
    int on_tf32_cores = 0;
    for (const CorpusKernel& k : KernelCorpus()) {
      absl::StatusOr<ProgramSpec> p =
          CompileKernel(ParseCorpusGraph(k.ast), renderer, CompileOptions{}, nullptr);
      if (p.ok() && absl::StrContains(p->src, ".tf32.tf32.")) ++on_tf32_cores;
    }
    std::vector<std::string> failing;
    EXPECT_GE(CheckTarget(renderer, "cuda with TF32", &failing), SampleSize())
        << "TC_OPT=" << tc_opt << ": " << absl::StrJoin(failing, " ");
    unsetenv("TC_OPT");
    EXPECT_GE(on_tf32_cores, tc_opt[0] == '0' ? 1 : 2) << "TC_OPT=" << tc_opt;
    std::printf("TC_OPT=%s: %d corpus kernels on the TF32 core\n", tc_opt, on_tf32_cores);
  }
}

}  // namespace
}  // namespace uopc
