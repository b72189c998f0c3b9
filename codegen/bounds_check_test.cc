#include "codegen/bounds_check.h"

#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/targets.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// tinygrad's E_3 (a + b on int[3]) with the view's shape replaced: `shape` elements on buffers of 3.
UOpPtr AddKernel(int64_t shape) {
  const std::string view = absl::StrCat("ShapeTracker(views=(View(shape=(", shape,
                                        ",), strides=(1,), offset=0, ", "mask=None, contiguous=True),))");
  absl::StatusOr<UOpPtr> ast = ParseIrSingle(absl::StrCat(R"(
%0 = DEFINE_GLOBAL : int32.ptr(3) arg=0
%1 = VIEW : void arg=)",
                                                          view, R"(
%2 = DEFINE_GLOBAL : int32.ptr(3) arg=1
%3 = LOAD : int32 (%2, %1)
%4 = DEFINE_GLOBAL : int32.ptr(3) arg=2
%5 = LOAD : int32 (%4, %1)
%6 = ADD : int32 (%3, %5)
%7 = STORE : void (%0, %1, %6)
%8 = SINK : void (%7)
return %8
)"));
  EXPECT_TRUE(ast.ok()) << ast.status();
  return *ast;
}

const Renderer& Target(absl::string_view name) {
  static auto* renderers = new absl::flat_hash_map<std::string, std::unique_ptr<Renderer>>();
  auto& r = (*renderers)[name];
  if (r == nullptr) r = *MakeRendererForTarget(name);
  return *r;
}

TEST(BoundsCheckTest, NoCorpusKernelIsRefused) {
  int checked = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    UOpPtr ast = ParseCorpusGraph(k.ast);
    EXPECT_TRUE(CheckKernelAstBounds(ast.get()).ok()) << k.id << ": " << CheckKernelAstBounds(ast.get());
    for (absl::string_view target : {"clang", "opencl", "llvm"}) {
      for (bool optimize : {true, false}) {
        KernelNameCounter names;
        absl::StatusOr<ProgramSpec> p =
            CompileKernel(ast, Target(target), {.optimize = optimize, .opts = std::nullopt}, &names);
        ASSERT_TRUE(p.ok()) << k.id << "@" << target << ": " << p.status();
        absl::Status s = CheckProgramBounds(p->uops, p->name);
        EXPECT_TRUE(s.ok()) << k.id << "@" << target << (optimize ? "" : " (noopt)") << ": " << s;
        ++checked;
      }
    }
  }
  EXPECT_EQ(checked, 93 * 6);
}

TEST(BoundsCheckTest, AThousandElementsOnThreeAreRefused) {
  UOpPtr ast = AddKernel(1000);
  EXPECT_THAT(CheckKernelAstBounds(ast.get()).message(),
              AllOf(HasSubstr("load of buffer 1 (data1) of 3 dtypes.int elements"), HasSubstr("[0, 999]"),
                    HasSubstr("outside [0, 3)")));
  for (bool optimize : {true, false}) {
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> p =
        CompileKernel(ast, Target("clang"), {.optimize = optimize, .opts = std::nullopt}, &names);
    ASSERT_TRUE(p.ok()) << p.status();
    absl::Status s = CheckProgramBounds(p->uops, p->name);
    EXPECT_THAT(s.message(), AllOf(HasSubstr(absl::StrCat("kernel ", p->name, ": load of buffer 1")),
                                   HasSubstr("of 3 dtypes.int elements"), HasSubstr("outside [0, 3)"),
                                   HasSubstr("refusing to run it")))
        << s;
  }
}

TEST(BoundsCheckTest, OneElementOverIsRefused) {
  UOpPtr ast = AddKernel(4);
  EXPECT_THAT(CheckKernelAstBounds(ast.get()).message(), HasSubstr("[0, 3], outside [0, 3)"));
  KernelNameCounter names;
  absl::StatusOr<ProgramSpec> p = CompileKernel(ast, Target("clang"), {}, &names);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_THAT(CheckProgramBounds(p->uops, p->name).message(), HasSubstr("outside [0, 3)"));
  EXPECT_TRUE(CheckKernelAstBounds(AddKernel(3).get()).ok());
}

TEST(BoundsCheckTest, VectorAccessesCountTheirWidth) {
  // A float4 load at index 0 of a buffer of 3 reads element 3.
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(3), {}, Arg(int64_t{0}));
  UOpPtr idx = buf.index(UOp::Const(dtypes::kInt32, 0));
  UOpPtr load = idx.cast(dtypes::kFloat32.Vec(4).Ptr(3)).load();
  EXPECT_THAT(CheckProgramBounds(load.sink().get(), "k").message(), HasSubstr("[0, 3], outside [0, 3)"));
  UOpPtr buf4 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(4), {}, Arg(int64_t{0}));
  UOpPtr load4 = buf4.index(UOp::Const(dtypes::kInt32, 0)).cast(dtypes::kFloat32.Vec(4).Ptr(4)).load();
  EXPECT_TRUE(CheckProgramBounds(load4.sink().get(), "k").ok());
}

TEST(BoundsCheckTest, TheGateNarrowsTheIndex) {
  // data0[r - 1] for r in [0, 4), gated on r >= 1: in bounds of 3 only where the gate holds.
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, Arg(int64_t{0}));
  UOpPtr r = UOp::Range(dtypes::kInt32, 4, 0);
  UOpPtr i = r.add(UOp::Const(dtypes::kInt32, -1));
  UOpPtr gated = buf.index(i, r.lt(1).logical_not()).load();
  EXPECT_TRUE(CheckProgramBounds(gated.sink().get(), "k").ok());
  UOpPtr ungated = buf.index(i).load();
  EXPECT_THAT(CheckProgramBounds(ungated.sink().get(), "k").message(), HasSubstr("[-1, 2]"));
}

// Small loops are enumerated: r < 2 ? r + 1 : r - 2 for r in [0, 4) is in [0, 2], while the ranges of the two
// branches give [-2, 4].
TEST(BoundsCheckTest, SmallLoopsAreEnumerated) {
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, Arg(int64_t{0}));
  UOpPtr r = UOp::Range(dtypes::kInt32, 4, 0);
  UOpPtr i = r.lt(2).where(r.add(UOp::Const(dtypes::kInt32, 1)), r.add(UOp::Const(dtypes::kInt32, -2)));
  EXPECT_TRUE(CheckProgramBounds(buf.index(i).store({UOp::Const(dtypes::kInt32, 7)}).sink().get(), "k").ok());
  UOpPtr j = r.lt(2).where(r.add(UOp::Const(dtypes::kInt32, 2)), r.add(UOp::Const(dtypes::kInt32, -2)));
  EXPECT_THAT(
      CheckProgramBounds(buf.index(j).store({UOp::Const(dtypes::kInt32, 7)}).sink().get(), "k").message(),
      AllOf(HasSubstr("enumerating the loops found an access outside it: ridx0=1, index=3")));
}

// A loop too long to enumerate, whose index range analysis cannot bound but z3 can: r < 2 ? r + 1 : (r - 2) %
// 3 for r in [0, 2^30) is in [0, 2]; the ranges give [-2, 2].
TEST(BoundsCheckTest, WhatRangesCannotProveNeedsTheProver) {
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(3), {}, Arg(int64_t{0}));
  UOpPtr r = UOp::Range(dtypes::kInt32, int64_t{1} << 30, 0);
  UOpPtr c3 = UOp::Const(dtypes::kInt32, 3);
  UOpPtr i =
      r.lt(2).where(r.add(UOp::Const(dtypes::kInt32, 1)), r.add(UOp::Const(dtypes::kInt32, -2)).mod(c3));
  UOpPtr sink = buf.index(i).store({UOp::Const(dtypes::kInt32, 7)}).sink();
#ifndef UOPC_TEST_WITH_Z3
  // As a build with --define=uopc_z3=0 has it (//codegen links z3 by default).
  const IndexProver* linked = BuiltinIndexProver();
  RegisterBuiltinIndexProver(nullptr);
#endif
  absl::Status s = CheckProgramBounds(sink.get(), "k");
#ifdef UOPC_TEST_WITH_Z3
  ASSERT_NE(BuiltinIndexProver(), nullptr);
  EXPECT_TRUE(s.ok()) << s;
  // r + 2 in the first branch: at r = 1 the index is 3.
  UOpPtr j =
      r.lt(2).where(r.add(UOp::Const(dtypes::kInt32, 2)), r.add(UOp::Const(dtypes::kInt32, -2)).mod(c3));
  EXPECT_THAT(
      CheckProgramBounds(buf.index(j).store({UOp::Const(dtypes::kInt32, 7)}).sink().get(), "k").message(),
      AllOf(HasSubstr("z3 found an access outside it"), HasSubstr("ridx0=1"), HasSubstr("index=3")));
#else
  EXPECT_THAT(s.message(), HasSubstr("no prover is built in"));
  RegisterBuiltinIndexProver(linked);
#endif
  EXPECT_THAT(CheckProgramBounds(sink.get(), "k", nullptr).message(),
              AllOf(HasSubstr("outside [0, 3)"), HasSubstr("range analysis cannot prove it")));
}

TEST(BoundsCheckTest, AnIndexThatWrapsProvesNothing) {
  // r * 3 for r in [0, 1e9): beyond int32, so the device computes a wrapped index.
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(-1), {}, Arg(int64_t{0}));
  UOpPtr sized = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kInt32.Ptr(int64_t{4} << 30), {}, Arg(int64_t{1}));
  UOpPtr r = UOp::Range(dtypes::kInt32, 1000000000, 0);
  UOpPtr i = r.mul(UOp::Const(dtypes::kInt32, 3));
  EXPECT_TRUE(CheckProgramBounds(buf.index(i).load().sink().get(), "k", nullptr).ok())
      << "unsized: unchecked";
  EXPECT_THAT(CheckProgramBounds(sized.index(i).load().sink().get(), "k", nullptr).message(),
              HasSubstr("beyond its dtypes.int"));
}

}  // namespace
}  // namespace uopc
