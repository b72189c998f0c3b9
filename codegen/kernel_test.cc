#include "codegen/kernel.h"

#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/heuristic.h"
#include "codegen/opt.h"
#include "codegen/testing/kernel_corpus.h"
#include "codegen/testing/test_renderers.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "uop/kernel_info.h"
#include "uop/text_ir.h"

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

// ---------------------------------------------------------------- unit tests

UOpPtr CorpusAst(absl::string_view id) {
  for (const CorpusKernel& ck : KernelCorpus()) {
    if (ck.id == id) return ParseCorpusGraph(ck.ast);
  }
  ADD_FAILURE() << "no corpus kernel " << id;
  return nullptr;
}

Kernel Make(absl::string_view id, const Renderer& r) {
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst(id), r);
  EXPECT_TRUE(k.ok()) << k.status();
  return *std::move(k);
}

std::vector<int64_t> Ints(const SintVec& v) {
  std::vector<int64_t> out;
  for (const Sint& s : v) out.push_back(s.value());
  return out;
}

std::string Name(const Kernel& k) {
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  EXPECT_TRUE(ast.ok()) << ast.status();
  return ast.ok() ? KernelInfoOf(ast->get())->name : "";
}

int CountOps(const UOpPtr& root, Ops op) {
  int n = 0;
  for (const UOp* u : root->Toposort()) n += u->op() == op;
  return n;
}

// The opt fails with a message containing `why`, and leaves the kernel as it was.
void ExpectOptError(Kernel& k, const Opt& opt, absl::string_view why) {
  std::vector<ShapeTracker> sts = k.sts();
  std::vector<Opt> applied = k.applied_opts();
  int64_t upcasted = k.upcasted(), local_dims = k.local_dims(), group = k.group_for_reduces();
  absl::Status s = k.ApplyOpt(opt);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << opt.ToString() << ": " << s;
  EXPECT_NE(s.message().find(why), absl::string_view::npos) << "wanted \"" << why << "\" in: " << s.message();
  EXPECT_NE(s.message().find(opt.ToString()), absl::string_view::npos) << s.message();
  EXPECT_EQ(k.sts(), sts);
  EXPECT_EQ(k.applied_opts(), applied);
  EXPECT_EQ(k.upcasted(), upcasted);
  EXPECT_EQ(k.local_dims(), local_dims);
  EXPECT_EQ(k.group_for_reduces(), group);
}

constexpr std::optional<int64_t> kNone = std::nullopt;

TEST(KernelTest, ShapeAnalysisOfAMatmul) {
  ClangRenderer clang;
  Kernel k = Make("matmul_64/0", clang);
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{64, 64, 64}));
  EXPECT_EQ(Ints(k.output_shape()), (std::vector<int64_t>{64, 64, 1}));
  EXPECT_EQ(k.first_reduce(), 2);
  EXPECT_EQ(k.first_upcast(), 3);
  EXPECT_EQ(k.shape_len(), 3);
  EXPECT_EQ(k.global_dims(), 2);
  ASSERT_EQ(k.bufs().size(), 3u);
  EXPECT_EQ(k.bufs()[0]->op(), Ops::STORE);  // toposort order, reversed
  EXPECT_EQ(k.sts().size(), 3u + 2u + 1u);   // buffers, reduce out/in, full shape
  ASSERT_NE(k.reduceop(), nullptr);
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"blue", "blue", "red"}));
  EXPECT_EQ(k.axis_types(), (std::vector<AxisType>{AxisType::kGlobal, AxisType::kGlobal, AxisType::kReduce}));
  EXPECT_EQ(k.BaseName(), "r_64_64_64");
}

TEST(KernelTest, CreateMergesAdjacentDimsAndMovesReducesLast) {
  ClangRenderer clang;
  EXPECT_EQ(Ints(Make("mul_add_2d/0", clang).full_shape()), (std::vector<int64_t>{2145}));
  Kernel k = Make("sum_axis0/0", clang);  // reduces axis 0 of a 37x19 tensor
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{19, 37}));
  EXPECT_EQ(k.first_reduce(), 1);
}

TEST(KernelTest, CreateRejectsANonSink) {
  ClangRenderer clang;
  UOpPtr ast = CorpusAst("add_int3/0");
  EXPECT_FALSE(Kernel::Create(ast->src()[0], clang).ok());
  EXPECT_FALSE(Kernel::Create(nullptr, clang).ok());
}

TEST(KernelTest, Upcast) {
  ClangRenderer clang;
  Kernel k = Make("add_f32_1d/0", clang);
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kUpcast, 0, 4)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{256, 4}));
  EXPECT_EQ(k.upcasted(), 1);
  EXPECT_EQ(k.first_upcast(), 1);
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"blue", "yellow"}));
  EXPECT_EQ(k.axis_types(), (std::vector<AxisType>{AxisType::kGlobal, AxisType::kUpcast}));
  EXPECT_EQ(Name(k), "E_256_4");
  // An amount of 0 upcasts the whole axis; the axis of size 1 left is dropped.
  Kernel whole = Make("add_int3/0", clang);
  ASSERT_TRUE(whole.ApplyOpt(Opt(OptOps::kUpcast, 0, 0)).ok());
  EXPECT_EQ(Ints(whole.full_shape()), (std::vector<int64_t>{3}));
  EXPECT_EQ(whole.upcasted(), 1);
  EXPECT_EQ(whole.first_reduce(), 0);
}

TEST(KernelTest, Unroll) {
  ClangRenderer clang;
  Kernel k = Make("sum_all/0", clang);
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kUnroll, 0, 4)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{250, 4}));
  EXPECT_EQ(k.first_reduce(), 0);
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"red", "magenta"}));
  EXPECT_EQ(k.axis_types(), (std::vector<AxisType>{AxisType::kReduce, AxisType::kUnroll}));
  EXPECT_EQ(Name(k), "r_250_4");
  Kernel full = Make("sum_axis1/0", clang);
  ASSERT_TRUE(full.ApplyOpt(Opt(OptOps::kUnroll, 0, 0)).ok());
  EXPECT_EQ(Ints(full.full_shape()), (std::vector<int64_t>{37, 19}));
  EXPECT_EQ(full.upcasted(), 1);
}

TEST(KernelTest, LocalOnAGpuTarget) {
  DescriptionOnlyRenderer gpu = OpenClTarget();
  Kernel k = Make("add_f32_1d/0", gpu);
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kLocal, 0, 16)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{64, 16}));
  EXPECT_EQ(k.local_dims(), 1);
  EXPECT_EQ(k.global_dims(), 1);
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"blue", "cyan"}));
  EXPECT_EQ(k.axis_types(), (std::vector<AxisType>{AxisType::kGlobal, AxisType::kLocal}));
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  ASSERT_TRUE(ast.ok());
  EXPECT_EQ(KernelInfoOf(ast->get())->local_dims, 1);
}

TEST(KernelTest, GroupAndGroupTopUseALocalBuffer) {
  DescriptionOnlyRenderer gpu = OpenClTarget();
  for (OptOps op : {OptOps::kGroup, OptOps::kGroupTop}) {
    Kernel k = Make("sum_16x16/0", gpu);
    ASSERT_TRUE(k.ApplyOpt(Opt(op, 0, 16)).ok());
    EXPECT_EQ(k.group_for_reduces(), 1);
    EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{16, 16}));
    EXPECT_EQ(k.colors(), (std::vector<std::string>{"green", "red"}));
    EXPECT_EQ(k.axis_types(), (std::vector<AxisType>{AxisType::kGroupReduce, AxisType::kReduce}));
    KernelNameCounter names;
    absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
    ASSERT_TRUE(ast.ok()) << ast.status();
    EXPECT_EQ(CountOps(*ast, Ops::DEFINE_LOCAL), 1);
    EXPECT_EQ(CountOps(*ast, Ops::REDUCE_AXIS), 2);
  }
}

TEST(KernelTest, PadTo) {
  ClangRenderer clang;
  Kernel k = Make("matmul_odd/0", clang);  // 13 x 5 x 27
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kPadTo, 0, 16)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{16, 5, 27}));
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  ASSERT_TRUE(ast.ok());
  bool masked = false;
  for (const UOp* u : (*ast)->Toposort()) {
    if (const ShapeTracker* st = ShapeTrackerOf(u)) masked |= st->views().back().mask().has_value();
  }
  EXPECT_TRUE(masked);
  // A padded reduce axis (a sum, which pads with zeros).
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kPadTo, 2, 32)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{16, 5, 32}));
}

TEST(KernelTest, PadToMasksAConstWithAValid) {
  ClangRenderer clang;
  Kernel k = Make("unary_math/0", clang);  // 128 elements, with CONSTs
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kPadTo, 0, 96)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{192}));
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  ASSERT_TRUE(ast.ok());
  EXPECT_GT(CountOps(*ast, Ops::VALID), 0);
}

TEST(KernelTest, Swap) {
  ClangRenderer clang;
  Kernel k = Make("transpose_add/0", clang);
  ASSERT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{30, 20}));
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kSwap, 0, 1)).ok());
  EXPECT_EQ(Ints(k.full_shape()), (std::vector<int64_t>{20, 30}));
  EXPECT_EQ(Name(k), "E_20_30");
}

TEST(KernelTest, NoLocals) {
  DescriptionOnlyRenderer gpu = OpenClTarget();
  Kernel k = Make("add_f32_1d/0", gpu);
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kNoLocals, kNone, kNone)).ok());
  EXPECT_TRUE(k.dont_use_locals());
  EXPECT_EQ(k.colors(), (std::vector<std::string>{"BLUE"}));
  EXPECT_EQ(k.axis_types(), std::vector<AxisType>{AxisType::kGlobal});
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  ASSERT_TRUE(ast.ok());
  EXPECT_TRUE(KernelInfoOf(ast->get())->dont_use_locals);
  EXPECT_EQ(KernelInfoOf(ast->get())->name, "E_1024");
  ExpectOptError(k, Opt(OptOps::kLocal, 0, 4), "not using locals");
  ExpectOptError(k, Opt(OptOps::kNoLocals, kNone, kNone), "NOLOCALS is meaningless");
}

TEST(KernelTest, TensorCoresOnCuda) {
  DescriptionOnlyRenderer cuda = CudaSm80Target();
  Kernel k = Make("matmul_half/0", cuda);
  ASSERT_TRUE(k.ApplyTensorCores());
  ASSERT_NE(k.tensor_core(), nullptr);
  EXPECT_EQ(k.applied_opts()[0], Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}));
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  ASSERT_TRUE(ast.ok()) << ast.status();
  EXPECT_EQ(CountOps(*ast, Ops::WMMA), 1);
  EXPECT_EQ(CountOps(*ast, Ops::CONTRACT), 2);
  EXPECT_EQ(CountOps(*ast, Ops::UNROLL), 1);
  ExpectOptError(k, Opt(OptOps::kGroup, 0, 2), "can't group with tensor cores");
  ExpectOptError(k, Opt(OptOps::kUpcast, k.global_dims(), 2), "can't upcast TC locals");
  ExpectOptError(k, Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}), "tensor core opts must be first");

  // TC=3 emulates the warp with local buffers: no WMMA.
  Kernel emulated = Make("matmul_half/0", cuda);
  ASSERT_TRUE(emulated.ApplyOpt(Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 3})).ok());
  absl::StatusOr<UOpPtr> east = emulated.GetOptimizedAst(&names);
  ASSERT_TRUE(east.ok()) << east.status();
  EXPECT_EQ(CountOps(*east, Ops::WMMA), 0);
  EXPECT_EQ(CountOps(*east, Ops::DEFINE_LOCAL), 2);
  // TC=2 does the shape ops only.
  Kernel shape_only = Make("matmul_half/0", cuda);
  ASSERT_TRUE(shape_only.ApplyOpt(Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 2})).ok());
  absl::StatusOr<UOpPtr> sast = shape_only.GetOptimizedAst(&names);
  ASSERT_TRUE(sast.ok());
  EXPECT_EQ(CountOps(*sast, Ops::WMMA), 0);
}

TEST(KernelTest, TensorCoresOnMetalForAFloatMatmul) {
  DescriptionOnlyRenderer metal = MetalTarget(true);
  Kernel k = Make("matmul_64/0", metal);
  ASSERT_TRUE(k.ApplyTensorCores());
  KernelNameCounter names;
  absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
  ASSERT_TRUE(ast.ok()) << ast.status();
  EXPECT_EQ(CountOps(*ast, Ops::WMMA), 1);
  // No tensor core takes float inputs on CUDA (without TF32), and none exists on the CPU.
  DescriptionOnlyRenderer cuda = CudaSm80Target();
  Kernel no_tc = Make("matmul_64/0", cuda);
  EXPECT_FALSE(no_tc.ApplyTensorCores());
  EXPECT_TRUE(no_tc.applied_opts().empty());
}

// tinygrad's optimized ASTs on GPU targets (codegen/testdata/generate_gpu_asts.py): tensor cores as WMMA
// (TC=1) and as the local-memory emulation (TC=3) on CUDA sm_80 and Metal's 8x8x8 float core; and the corpus
// kernels OpenCL's hand-coded opts group through local memory.
TEST(KernelTest, GpuAstsMatchTinygrad) {
  std::ifstream in("codegen/testdata/gpu_asts.json");
  ASSERT_TRUE(in.good());
  nlohmann::json cases = nlohmann::json::parse(in);
  ASSERT_EQ(cases.size(), 17u);
  DescriptionOnlyRenderer cuda = CudaSm80Target(), metal = MetalTarget(true), opencl = OpenClTarget();
  for (const nlohmann::json& c : cases) {
    const Renderer& r = c["target"] == "cuda" ? cuda : c["target"] == "metal" ? metal : opencl;
    Kernel k = Make(c["id"].get<std::string>(), r);
    if (int64_t use = c["use_tensor_cores"].get<int64_t>(); use != 0) {
      ASSERT_TRUE(k.ApplyTensorCores(use));
    } else {
      ASSERT_TRUE(ApplyDefaultOptimizations(k).ok());
    }
    std::vector<std::string> opts;
    for (const Opt& o : k.applied_opts()) opts.push_back(o.ToString());
    EXPECT_EQ(opts, c["opts"].get<std::vector<std::string>>());
    KernelNameCounter names;
    absl::StatusOr<UOpPtr> ast = k.GetOptimizedAst(&names);
    ASSERT_TRUE(ast.ok()) << ast.status();
    EXPECT_EQ(GraphDifference(*ast, c["ast"].get<std::string>()), "") << c["id"] << " " << c["target"];
  }
}

TEST(KernelTest, TensorCoreErrors) {
  ClangRenderer clang;
  Kernel cpu = Make("matmul_half/0", clang);
  ExpectOptError(cpu, Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}), "must have tensor cores");
  EXPECT_FALSE(cpu.ApplyTensorCores());
  DescriptionOnlyRenderer cuda = CudaSm80Target();
  Kernel k = Make("matmul_half/0", cuda);
  Opt no_axis(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1});
  no_axis.axis.reset();
  ExpectOptError(k, no_axis, "must have an axis");
  ExpectOptError(k, Opt(OptOps::kTC, 0, 1), "must have valid arg");
  ExpectOptError(k, Opt(OptOps::kTC, 0, Opt::TcArg{9, 0, 1}), "valid tc_select");
  ExpectOptError(k, Opt(OptOps::kTC, 0, Opt::TcArg{-1, 3, 1}), "valid tc_opt");
  ExpectOptError(k, Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 0}), "use_tensor_cores value is not valid");
  ExpectOptError(k, Opt(OptOps::kTC, 5, Opt::TcArg{-1, 0, 1}), "no tensor core available");
  Kernel elementwise = Make("half_add/0", cuda);
  ExpectOptError(elementwise, Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}), "no tensor core available");
}

TEST(KernelTest, AxisAndAmountErrors) {
  ClangRenderer clang;
  Kernel k = Make("add_f32_1d/0", clang);
  ExpectOptError(k, Opt(OptOps::kUpcast, 1, 4), "invalid axis");
  ExpectOptError(k, Opt(OptOps::kUpcast, -1, 4), "invalid axis");
  ExpectOptError(k, Opt(OptOps::kUpcast, kNone, 4), "invalid axis");
  ExpectOptError(k, Opt(OptOps::kUpcast, 0, 1), "1 or symbolic amount is meaningless");
  ExpectOptError(k, Opt(OptOps::kUpcast, 0, -4), "must be positive");
  ExpectOptError(k, Opt(OptOps::kUpcast, 0, 7), "no longer valid shift");
  ExpectOptError(k, Opt(OptOps::kUpcast, 0, 32), "don't upcast more than 16");
  ExpectOptError(k, Opt(OptOps::kUpcast, 0, Opt::TcArg{1, 2, 3}), "arg should be int");
  ExpectOptError(k, Opt(OptOps::kSwap, 0, kNone), "needs an amount");
  ExpectOptError(k, Opt(OptOps::kUnroll, 0, 4), "invalid axis");  // no reduce axis
}

TEST(KernelTest, UpcastAndUnrollErrors) {
  ClangRenderer clang;
  Kernel k = Make("sum_axis1/0", clang);  // 37 x 19, reduce last
  ExpectOptError(k, Opt(OptOps::kUpcast, 1, 19), "upcast is for non-reduce");
  Kernel big = Make("sum_all/0", clang);
  ExpectOptError(big, Opt(OptOps::kUnroll, 0, 0), "don't unroll more than 32");
  ASSERT_TRUE(big.ApplyOpt(Opt(OptOps::kUnroll, 0, 4)).ok());  // 250 x 4
  ExpectOptError(big, Opt(OptOps::kUnroll, 1, 4), "can't upcasted already upcasted");
}

TEST(KernelTest, LocalErrors) {
  ClangRenderer clang;
  Kernel cpu = Make("add_f32_1d/0", clang);
  ExpectOptError(cpu, Opt(OptOps::kLocal, 0, 4), "target does not support local");
  DescriptionOnlyRenderer gpu = OpenClTarget();
  Kernel k = Make("sum_axis1/0", gpu);
  ExpectOptError(k, Opt(OptOps::kLocal, 1, 19), "local is for globals");
}

TEST(KernelTest, GroupErrors) {
  ClangRenderer clang;
  Kernel cpu = Make("sum_16x16/0", clang);
  ExpectOptError(cpu, Opt(OptOps::kGroup, 0, 16), "target does not support local or shared mem");
  DescriptionOnlyRenderer gpu = OpenClTarget();
  Kernel elementwise = Make("add_f32_1d/0", gpu);
  ExpectOptError(elementwise, Opt(OptOps::kGroupTop, 0, 16), "invalid axis");  // no reduce axis
  Kernel unrolled = Make("sum_all/0", gpu);
  ASSERT_TRUE(unrolled.ApplyOpt(Opt(OptOps::kUnroll, 0, 4)).ok());  // 250 x 4, the 4 upcasted
  ExpectOptError(unrolled, Opt(OptOps::kGroupTop, 1, 2), "must be reduce axis to group");
  Kernel big = Make("bigger_sum/0", gpu);  // 256 x 256
  ASSERT_TRUE(big.ApplyOpt(Opt(OptOps::kLocal, 0, 256)).ok());
  ExpectOptError(big, Opt(OptOps::kGroupTop, 0, 256), "exceeds maximum shared memory size");
}

TEST(KernelTest, GroupRefusesParallelReduces) {
  // sum(x) + max(x) over the same axis: two reduces of axis 1.
  absl::StatusOr<UOpPtr> ast = ParseIrSingle(R"(
%0 = DEFINE_GLOBAL : float32.ptr(4) arg=0
%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(4, 1), strides=(1, 0), offset=0, mask=None, contiguous=True),))
%2 = DEFINE_GLOBAL : float32.ptr(64) arg=1
%3 = VIEW : void arg=ShapeTracker(views=(View(shape=(4, 16), strides=(16, 1), offset=0, mask=None, contiguous=True),))
%4 = LOAD : float32 (%2, %3)
%5 = REDUCE_AXIS : float32 (%4) arg=(Ops.ADD, (1,))
%6 = REDUCE_AXIS : float32 (%4) arg=(Ops.MAX, (1,))
%7 = ADD : float32 (%5, %6)
%8 = STORE : void (%0, %1, %7)
%9 = SINK : void (%8)
return %9
)");
  ASSERT_TRUE(ast.ok()) << ast.status();
  DescriptionOnlyRenderer gpu = OpenClTarget();
  absl::StatusOr<Kernel> k = Kernel::Create(*ast, gpu);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->reduceops().size(), 2u);
  ExpectOptError(*k, Opt(OptOps::kGroup, 0, 4), "can't group with parallel reduces");
}

TEST(KernelTest, NoLocalsErrors) {
  ClangRenderer clang;
  Kernel cpu = Make("add_f32_1d/0", clang);
  ExpectOptError(cpu, Opt(OptOps::kNoLocals, kNone, kNone), "NOLOCALS is meaningless");
  DescriptionOnlyRenderer gpu = OpenClTarget();
  Kernel k = Make("add_f32_1d/0", gpu);
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kLocal, 0, 4)).ok());
  ExpectOptError(k, Opt(OptOps::kNoLocals, kNone, kNone), "can't have no locals with locals");
}

TEST(KernelTest, SwapErrors) {
  ClangRenderer clang;
  Kernel k = Make("transpose_add/0", clang);
  ExpectOptError(k, Opt(OptOps::kSwap, 1, 0), "swap is only for globals");
  ExpectOptError(k, Opt(OptOps::kSwap, 0, 2), "swap is only for globals");
}

TEST(KernelTest, PadToErrors) {
  ClangRenderer clang;
  Kernel k = Make("matmul_odd/0", clang);  // 13 x 5 x 27
  ExpectOptError(k, Opt(OptOps::kPadTo, 0, 64), "pad adds more than quadruple the work");
  ExpectOptError(k, Opt(OptOps::kPadTo, 0, 13), "nothing was padded");
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kUpcast, 1, 5)).ok());
  ExpectOptError(k, Opt(OptOps::kPadTo, 2, 8), "cannot pad upcasted");
  Kernel up = Make("add_f32_1d/0", clang);
  ASSERT_TRUE(up.ApplyOpt(Opt(OptOps::kUpcast, 0, 4)).ok());
  ExpectOptError(up, Opt(OptOps::kPadTo, 1, 8), "cannot pad upcasted");
  // exp2 does not map 0 to 0, so a sum over it cannot be padded.
  absl::StatusOr<UOpPtr> ast = ParseIrSingle(R"(
%0 = DEFINE_GLOBAL : float32.ptr(1) arg=0
%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(1,), strides=(0,), offset=0, mask=None, contiguous=True),))
%2 = DEFINE_GLOBAL : float32.ptr(30) arg=1
%3 = VIEW : void arg=ShapeTracker(views=(View(shape=(30,), strides=(1,), offset=0, mask=None, contiguous=True),))
%4 = LOAD : float32 (%2, %3)
%5 = EXP2 : float32 (%4)
%6 = REDUCE_AXIS : float32 (%5) arg=(Ops.ADD, (0,))
%7 = STORE : void (%0, %1, %6)
%8 = SINK : void (%7)
return %8
)");
  ASSERT_TRUE(ast.ok()) << ast.status();
  absl::StatusOr<Kernel> exp_sum = Kernel::Create(*ast, clang);
  ASSERT_TRUE(exp_sum.ok());
  ExpectOptError(*exp_sum, Opt(OptOps::kPadTo, 0, 32), "cannot pad");
}

TEST(KernelTest, NamesCountRepeatsPerCounter) {
  ClangRenderer clang;
  Kernel k = Make("add_int3/0", clang);
  KernelNameCounter names, other;
  std::vector<std::string> got;
  for (int i = 0; i < 3; ++i) got.push_back(KernelInfoOf(k.GetOptimizedAst(&names)->get())->name);
  EXPECT_EQ(got, (std::vector<std::string>{"E_3", "E_3n1", "E_3n2"}));
  EXPECT_EQ(KernelInfoOf(k.GetOptimizedAst(&other)->get())->name, "E_3");
  EXPECT_EQ(KernelInfoOf(k.GetOptimizedAst(nullptr)->get())->name, "E_3");
  EXPECT_EQ(KernelInfoOf(k.GetOptimizedAst(&names, "custom")->get())->name, "custom");
  EXPECT_EQ(KernelInfoOf(k.GetOptimizedAst(&names)->get())->name, "E_3n3");  // the override did not count
}

TEST(KernelTest, ColoredNameAndFunctionName) {
  ClangRenderer clang;
  Kernel k = Make("matmul_64/0", clang);
  ASSERT_TRUE(k.ApplyOpt(Opt(OptOps::kUpcast, 0, 4)).ok());
  std::string colored = k.ColoredName();
  EXPECT_NE(colored.find("\x1b["), std::string::npos);
  EXPECT_EQ(ToFunctionName(colored), "r_16_64_64_4");
  EXPECT_EQ(k.BaseName(), "r_16_64_64_4");
  EXPECT_EQ(ToFunctionName("a-b.c"), "a2Db2Ec");
  EXPECT_FALSE(k.ColoredShape().empty());
}

TEST(KernelTest, MultiOutputKernelNameCountsStores) {
  ClangRenderer clang;
  for (const CorpusKernel& ck : KernelCorpus()) {
    UOpPtr ast = ParseCorpusGraph(ck.ast);
    if (ast->num_src() < 2) continue;
    Kernel k = Make(ck.id, clang);
    EXPECT_EQ(k.BaseName().substr(0, 2), absl::StrCat("E", ast->num_src()).substr(0, 2)) << ck.id;
  }
}

}  // namespace
}  // namespace uopc
