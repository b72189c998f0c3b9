#include "renderer/llvmir.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rewrite/pattern_matcher.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

// The expected texts below are what tinygrad v0.10.3's LLVMRenderer().render prints for the same uops.

std::string RenderProgram(const std::vector<UOpPtr>& uops, const LLVMRenderer& renderer = LLVMRenderer()) {
  std::vector<const UOp*> raw;
  for (const UOpPtr& u : uops) raw.push_back(u.get());
  absl::StatusOr<std::string> src = renderer.Render(raw);
  return src.ok() ? *src : "error: " + std::string(src.status().message());
}

UOpPtr Global(DType elem, int64_t size, int64_t arg) {
  return UOp::New(Ops::DEFINE_GLOBAL, elem.Ptr(size), {}, Arg(arg));
}
UOpPtr Sink(const UOpPtr& store, const std::string& name) {
  return UOp::Sink({store}, KernelInfoAsArg({.name = name}));
}

constexpr char kAttributes[] =
    "attributes #0 = { alwaysinline nounwind \"no-builtins\" \"no-trapping-math\"=\"true\" }";

TEST(LlvmTypeTest, ScalarsVectorsPointers) {
  EXPECT_EQ(LlvmType(dtypes::kFloat32), "float");
  EXPECT_EQ(LlvmType(dtypes::kUInt8), "i8");
  EXPECT_EQ(LlvmType(dtypes::kBool), "i1");
  EXPECT_EQ(LlvmType(dtypes::kBFloat16), "bfloat");
  EXPECT_EQ(LlvmType(dtypes::kFloat16.Vec(4)), "<4 x half>");
  EXPECT_EQ(LlvmType(dtypes::kInt32.Ptr(16)), "i32*");
  EXPECT_EQ(LlvmType(dtypes::kFloat32.Vec(4).Ptr(16)), "<4 x float>*");
}

TEST(LlvmConstTest, LikeTinygradsLconst) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(LlvmConst(ConstValue::Float(inf), dtypes::kFloat32), "0x7FF0000000000000");
  EXPECT_EQ(LlvmConst(ConstValue::Float(-inf), dtypes::kFloat16), "0xFFF0000000000000");
  EXPECT_EQ(LlvmConst(ConstValue::Float(std::nan("")), dtypes::kFloat64), "0x7FF8000000000000");
  EXPECT_EQ(LlvmConst(ConstValue::Float(0.1), dtypes::kFloat32), "0.10000000149011612");
  EXPECT_EQ(LlvmConst(ConstValue::Float(0.1), dtypes::kFloat16), "0.0999755859375");
  EXPECT_EQ(LlvmConst(ConstValue::Float(0.1), dtypes::kBFloat16), "0.099609375");  // chopped, not rounded
  EXPECT_EQ(LlvmConst(ConstValue::Float(0.1), dtypes::kFloat64), "0.1");
  // Where tinygrad's text is not IR (`1e-05`, `inf`), uopc writes what LLVM reads (docs/parity.md).
  EXPECT_EQ(LlvmConst(ConstValue::Float(1e-5), dtypes::kFloat64), "1.0e-05");
  EXPECT_EQ(LlvmConst(ConstValue::Float(1e16), dtypes::kFloat64), "1.0e+16");
  EXPECT_EQ(LlvmConst(ConstValue::Float(1e-5), dtypes::kFloat32), "9.999999747378752e-06");
  EXPECT_EQ(LlvmConst(ConstValue::Float(1e39), dtypes::kFloat32), "0x7FF0000000000000");
  EXPECT_EQ(LlvmConst(ConstValue::Float(-1e6), dtypes::kFloat16), "0xFFF0000000000000");
  EXPECT_EQ(LlvmConst(ConstValue::Float(2.0), dtypes::kFloat32), "2.0");
  EXPECT_EQ(LlvmConst(ConstValue::Int(0), dtypes::kFloat32), "0.0");
  EXPECT_EQ(LlvmConst(ConstValue::Bool(true), dtypes::kBool), "1");
  EXPECT_EQ(LlvmConst(ConstValue::Int(-3), dtypes::kInt8), "-3");
  EXPECT_EQ(LlvmConst(ConstValue::Int(-1), dtypes::kUInt64), "-1");  // as tinygrad: int(x), no wraparound
}

TEST(LlvmCastTest, LikeTinygradsLcast) {
  auto cast = [](DType a, DType b) {
    absl::StatusOr<std::string> s = LlvmCastInstruction(a, b);
    return s.ok() ? *s : "error";
  };
  EXPECT_EQ(cast(dtypes::kFloat32, dtypes::kFloat64), "fpext");
  EXPECT_EQ(cast(dtypes::kFloat32, dtypes::kFloat16), "fptrunc");
  EXPECT_EQ(cast(dtypes::kFloat32, dtypes::kUInt8), "fptoui");
  EXPECT_EQ(cast(dtypes::kFloat32, dtypes::kInt64), "fptosi");
  EXPECT_EQ(cast(dtypes::kBool, dtypes::kFloat32), "uitofp");
  EXPECT_EQ(cast(dtypes::kBool, dtypes::kInt32), "zext");
  EXPECT_EQ(cast(dtypes::kUInt32, dtypes::kUInt8), "trunc");
  EXPECT_EQ(cast(dtypes::kInt8, dtypes::kInt32), "sext");
  EXPECT_EQ(cast(dtypes::kInt32, dtypes::kFloat32), "sitofp");
  EXPECT_EQ(cast(dtypes::kFloat32, dtypes::kBool), "error");
}

TEST(LlvmRendererTest, DescribesTinygradsTarget) {
  LLVMRenderer llvm;
  EXPECT_EQ(llvm.device(), "LLVM");
  EXPECT_FALSE(llvm.has_local());
  EXPECT_TRUE(llvm.supports_float4());
  EXPECT_FALSE(llvm.global_max().has_value());
  EXPECT_TRUE(llvm.supported_ops().empty());
  EXPECT_TRUE(llvm.tensor_cores().empty());
  EXPECT_EQ(MakeLLVMRenderer()->device(), "LLVM");
}

// A loop with an accumulator: the counter's and the accumulator's phis, the assigned value named %assign0.
TEST(LlvmRendererTest, ReductionLoop) {
  const DType f = dtypes::kFloat32;
  UOpPtr d0 = Global(f, 1, 0), d1 = Global(f, 16, 1);
  UOpPtr zero_f = UOp::Const(f, 0.0), zero = UOp::Const(dtypes::kInt32, 0),
         end = UOp::Const(dtypes::kInt32, 16);
  UOpPtr r = UOp::Range(end, 0);
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, f, {zero_f, r}, Arg(Arg::Tuple{Arg(0)}));
  UOpPtr v = d1.index(r).load(), sum = acc + v, assign = acc.assign(sum);
  UOpPtr st = d0.index(zero).store({assign});
  UOpPtr endr = UOp::New(Ops::ENDRANGE, dtypes::kVoid, {r});
  EXPECT_EQ(
      RenderProgram({d0, d1, zero_f, zero, end, acc, r, d1.index(r), v, sum, assign, endr, d0.index(zero), st,
                     Sink(st, "r_16")}),
      std::string("define void @r_16(float* noalias align 32 %data0, float* noalias align 32 %data1) #0\n"
                  "{\n"
                  "  br label %loop_entry_0\n"
                  "loop_entry_0:\n"
                  "  br label %loop_body_0\n"
                  "loop_body_0:\n"
                  "  %v1 = phi i32 [ 0, %loop_entry_0 ], [ %v1phi, %loop_latch_0 ]\n"
                  "  %acc2 = phi float [ 0.0, %loop_entry_0 ], [ %assign0, %loop_latch_0 ]\n"
                  "  %v3 = getelementptr inbounds float, float* %data1, i32 %v1\n"
                  "  %v4 = load float, float* %v3\n"
                  "  %assign0 = fadd nsz arcp contract afn float %acc2, %v4\n"
                  "  br label %loop_latch_0\n"
                  "loop_latch_0:\n"
                  "  %v1phi = add i32 %v1, 1\n"
                  "  %v5 = icmp ult i32 %v1phi, 16\n"
                  "  br i1 %v5, label %loop_body_0, label %loop_exit_0\n"
                  "loop_exit_0:\n"
                  "  %v6 = getelementptr inbounds float, float* %data0, i32 0\n"
                  "  store float %assign0, float* %v6\n"
                  "  ret void\n"
                  "}\n") +
          kAttributes);
}

// A gated store inside IF/ENDIF, and a variable parameter.
TEST(LlvmRendererTest, GatedStoreAndVariable) {
  const DType f = dtypes::kFloat32;
  UOpPtr d0 = Global(f, 8, 0), d1 = Global(f, 8, 1), i = UOp::Variable("i", 0, 7);
  UOpPtr two = UOp::Const(dtypes::kInt32, 2), c = UOp::Const(f, 0.1);
  UOpPtr gate = i.lt(two), ld = d1.index(i).load(), m = ld * c, idx0 = d0.index(i, gate);
  UOpPtr iff = UOp::New(Ops::IF, dtypes::kVoid, {gate});
  UOpPtr st = UOp::New(Ops::STORE, dtypes::kVoid, {idx0, m, iff});
  UOpPtr endif = UOp::New(Ops::ENDIF, dtypes::kVoid, {iff});
  EXPECT_EQ(
      RenderProgram({d0, d1, i, two, c, gate, d1.index(i), ld, m, idx0, iff, st, endif, Sink(st, "gated")}),
      std::string(
          "define void @gated(float* noalias align 32 %data0, float* noalias align 32 %data1, i32 %i) #0\n"
          "{\n"
          "  %v0 = icmp slt i32 %i, 2\n"
          "  %v1 = getelementptr inbounds float, float* %data1, i32 %i\n"
          "  %v2 = load float, float* %v1\n"
          "  %v3 = fmul nsz arcp contract afn float %v2, 0.10000000149011612\n"
          "  %v4 = getelementptr inbounds float, float* %data0, i32 %i\n"
          "  br i1 %v0, label %ifbody_v5, label %ifskip_v5\n"
          "ifbody_v5:\n"
          "  store float %v3, float* %v4\n"
          "  br label %ifskip_v5\n"
          "ifskip_v5:\n"
          "  ret void\n"
          "}\n") +
          kAttributes);
}

// A VECTORIZE of one value four times is a shuffle; a vector store through a cast pointer (the cast is
// the pointer itself).
TEST(LlvmRendererTest, BroadcastAndVectorStore) {
  const DType f = dtypes::kFloat32, f4 = f.Vec(4);
  UOpPtr d0 = Global(f, 8, 0), d1 = Global(f, 8, 1), i = UOp::Variable("i", 0, 7);
  UOpPtr zero = UOp::Const(dtypes::kInt32, 0), ld = d1.index(i).load();
  UOpPtr v = UOp::New(Ops::VECTORIZE, f4, {ld, ld, ld, ld});
  UOpPtr cst = UOp::New(Ops::CAST, f4.Ptr(8), {d0.index(zero)});
  UOpPtr st = cst.store({v});
  EXPECT_EQ(
      RenderProgram({d0, d1, i, zero, d1.index(i), ld, v, d0.index(zero), cst, st, Sink(st, "bcast")}),
      std::string("define void @bcast(float* noalias align 32 %data0, float* noalias align 32 %data1, i32 "
                  "%i) #0\n"
                  "{\n"
                  "  %v0 = getelementptr inbounds float, float* %data1, i32 %i\n"
                  "  %v1 = load float, float* %v0\n"
                  "  %v2_z = insertelement <1 x float> poison, float %v1, i32 0\n"
                  "  %v2 = shufflevector <1 x float> %v2_z, <1 x float> poison, <4 x i32> zeroinitializer\n"
                  "  %v3 = getelementptr inbounds float, float* %data0, i32 0\n"
                  "  store <4 x float> %v2, <4 x float>* %v3\n"
                  "  ret void\n"
                  "}\n") +
          kAttributes);
}

// uopc's kernels (llvm:vec16): vector loads and stores, at any float's address, promise only a float's
// alignment; vector arithmetic is LLVM's own. tinygrad's target keeps its implicit alignment.
TEST(LlvmRendererTest, VectorsKeptWholePromiseOnlyTheElementsAlignment) {
  const DType f = dtypes::kFloat32, f16 = f.Vec(16);
  UOpPtr d0 = Global(f, 64, 0), d1 = Global(f, 64, 1), i = UOp::Variable("i", 0, 7);
  UOpPtr src = UOp::New(Ops::CAST, f16.Ptr(64), {d1.index(i)});
  UOpPtr ld = src.load();
  UOpPtr sum = ld + ld;
  UOpPtr dst = UOp::New(Ops::CAST, f16.Ptr(64), {d0.index(i)});
  UOpPtr st = dst.store({sum});
  const std::vector<UOpPtr> program = {d0,  d1,          i,   d1.index(i), src,          ld,
                                       sum, d0.index(i), dst, st,          Sink(st, "v")};
  const std::string vec16 = RenderProgram(program, LLVMRenderer(CoreSplit{}, 16));
  EXPECT_THAT(vec16, HasSubstr("  %v1 = load <16 x float>, <16 x float>* %v0, align 4\n"
                               "  %v2 = fadd nsz arcp contract afn <16 x float> %v1, %v1\n"));
  EXPECT_THAT(vec16, HasSubstr("  store <16 x float> %v2, <16 x float>* %v3, align 4\n"));
  const std::string tinygrads = RenderProgram(program);
  EXPECT_THAT(tinygrads, HasSubstr("  %v1 = load <16 x float>, <16 x float>* %v0\n"));
  EXPECT_THAT(tinygrads, HasSubstr("  store <16 x float> %v2, <16 x float>* %v3\n"));
  EXPECT_EQ(LLVMRenderer(CoreSplit{}, 16).vector_width(), 16);
}

TEST(LlvmRendererTest, MaskedLoadBranchesAroundTheLoad) {
  const DType f = dtypes::kFloat32;
  UOpPtr d0 = Global(f, 8, 0), d1 = Global(f, 8, 1), i = UOp::Variable("i", 0, 7);
  UOpPtr two = UOp::Const(dtypes::kInt32, 2), alt = UOp::Const(f, 0.0);
  UOpPtr gate = i.lt(two), ld = d1.index(i, gate).load({alt}), st = d0.index(i).store({ld});
  std::string src =
      RenderProgram({d0, d1, i, two, alt, gate, d1.index(i, gate), ld, d0.index(i), st, Sink(st, "g")});
  EXPECT_THAT(src, HasSubstr("  br label %v2_entry\n"
                             "v2_entry:\n"
                             "  br i1 %v0, label %v2_load, label %v2_exit\n"
                             "v2_load:\n"
                             "  %v2_yes = load float, float* %v1\n"
                             "  br label %v2_exit\n"
                             "v2_exit:\n"
                             "  %v2 = phi float [%v2_yes, %v2_load], [0.0, %v2_entry]\n"));
}

TEST(LlvmRendererTest, WhatTheTargetCannotRenderIsAnError) {
  UOpPtr x = UOp::Variable("x", 0, 7, dtypes::kFloat32);
  UOpPtr e = x.sqrt();  // codegen decomposes SQRT for this target
  EXPECT_THAT(RenderProgram({x, e, Sink(e, "k")}), HasSubstr("error: cannot render uop 1 (SQRT"));
  UOpPtr s = x.lshift(x);  // no shift instruction in tinygrad's table
  EXPECT_THAT(RenderProgram({x, s, Sink(s, "k")}), HasSubstr("no rendering"));
  UOpPtr later = UOp::Variable("y", 0, 7);
  EXPECT_THAT(RenderProgram({later + later, later}), HasSubstr("not rendered before its use"));
}

TEST(LlvmRendererTest, ExtraRules) {
  const PatternMatcher* pm = LLVMRenderer().extra_matcher();
  ASSERT_NE(pm, nullptr);
  UOpPtr x = UOp::Variable("x", 0, 7, dtypes::kFloat32);
  UOpPtr recip = pm->Rewrite(x.reciprocal());
  ASSERT_TRUE(recip);
  EXPECT_EQ(recip->op(), Ops::FDIV);
  EXPECT_EQ(recip->src(0)->const_value(), ConstValue::Float(1.0));
  UOpPtr to_bool = pm->Rewrite(x.cast(dtypes::kBool));
  ASSERT_TRUE(to_bool);
  EXPECT_EQ(to_bool->op(), Ops::CMPNE);
  UOpPtr bf = UOp::Variable("b", 0, 7, dtypes::kBFloat16);
  UOpPtr to_int = pm->Rewrite(bf.cast(dtypes::kInt32));
  ASSERT_TRUE(to_int);
  EXPECT_EQ(to_int->src(0)->dtype(), dtypes::kFloat32);
  EXPECT_FALSE(pm->Rewrite(bf.cast(dtypes::kFloat32)));
}

}  // namespace
}  // namespace uopc
