#include "renderer/cstyle.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

std::string RenderProgram(const std::vector<UOpPtr>& uops) {
  std::vector<const UOp*> raw;
  for (const UOpPtr& u : uops) raw.push_back(u.get());
  absl::StatusOr<std::string> src = ClangRenderer().Render(raw);
  return src.ok() ? *src : "error: " + std::string(src.status().message());
}

UOpPtr Global(DType elem, int64_t size, int64_t arg) {
  return UOp::New(Ops::DEFINE_GLOBAL, elem.Ptr(size), {}, Arg(arg));
}
UOpPtr Sink(const UOpPtr& store, const std::string& name) {
  return UOp::Sink({store}, KernelInfoAsArg({.name = name}));
}

// data0[0] = <constant>: the constant's C spelling.
std::string ConstantSpelling(DType dt, ConstValue v) {
  UOpPtr d0 = Global(dt, 1, 0), zero = UOp::Const(dtypes::kInt32, 0), c = UOp::Const(dt, v);
  UOpPtr st = d0.index(zero).store({c});
  std::string src = RenderProgram({d0, zero, c, d0.index(zero), st, Sink(st, "k")});
  const size_t at = src.find("*(data0+0) = ");
  return at == std::string::npos ? src : src.substr(at + 13, src.find(";\n", at) - at - 13);
}

TEST(ClangRendererTest, ConstantsOfEveryDtype) {
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat32, ConstValue::Float(1.0)), "1.0f");
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat32, ConstValue::Float(1e-05)), "1e-05f");
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat64, ConstValue::Float(0.5)), "0.5");
  EXPECT_EQ(ConstantSpelling(dtypes::kInt32, ConstValue::Int(-3)), "-3");
  EXPECT_EQ(ConstantSpelling(dtypes::kInt64, ConstValue::Int(7)), "7ll");
  EXPECT_EQ(ConstantSpelling(dtypes::kUInt64, ConstValue::Int(7)), "7ull");
  EXPECT_EQ(ConstantSpelling(dtypes::kUInt32, ConstValue::Int(7)), "7u");
  EXPECT_EQ(ConstantSpelling(dtypes::kUInt8, ConstValue::Int(7)), "((unsigned char)(7u))");
  EXPECT_EQ(ConstantSpelling(dtypes::kInt8, ConstValue::Int(-7)), "((signed char)(-7))");
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat16, ConstValue::Float(1.5)), "((__fp16)(1.5f))");
  EXPECT_EQ(ConstantSpelling(dtypes::kBool, ConstValue::Bool(true)), "1");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat32, ConstValue::Float(inf)), "((float)(__builtin_inff()))");
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat32, ConstValue::Float(-inf)), "((float)(-__builtin_inff()))");
  EXPECT_EQ(ConstantSpelling(dtypes::kFloat32, ConstValue::Float(std::nan(""))),
            "((float)(__builtin_nanf(\"\")))");
}

// A loop with a reduction: names (ridx, acc, val, alu), inlining of single-use ALU ops, indentation.
TEST(ClangRendererTest, ReductionLoop) {
  const DType f = dtypes::kFloat32;
  UOpPtr d0 = Global(f, 1, 0), d1 = Global(f, 16, 1);
  UOpPtr zero_f = UOp::Const(f, 0.0), zero = UOp::Const(dtypes::kInt32, 0),
         end = UOp::Const(dtypes::kInt32, 16);
  UOpPtr r = UOp::Range(end, 0);
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, f, {zero_f, r}, Arg(Arg::Tuple{Arg(0)}));
  UOpPtr v = d1.index(r).load(), sum = acc + v, assign = acc.assign(sum);
  UOpPtr st = d0.index(zero).store({assign});
  UOpPtr endr = UOp::New(Ops::ENDRANGE, dtypes::kVoid, {r});
  EXPECT_EQ(RenderProgram({d0, d1, zero_f, zero, end, acc, r, d1.index(r), v, sum, assign, endr,
                           d0.index(zero), st, Sink(st, "r_16")}),
            "\nvoid r_16(float* restrict data0, float* restrict data1) {\n"
            "  float acc0 = 0.0f;\n"
            "  for (int ridx0 = 0; ridx0 < 16; ridx0++) {\n"
            "    float val0 = *(data1+ridx0);\n"
            "    acc0 = (acc0+val0);\n"
            "  }\n"
            "  *(data0+0) = acc0;\n"
            "}\n");
}

TEST(ClangRendererTest, GatedLoadAndVectorTypedef) {
  const DType f = dtypes::kFloat32, f4 = f.Vec(4);
  UOpPtr d0 = Global(f, 8, 0), d1 = Global(f, 8, 1), i = UOp::Variable("i", 0, 7),
         two = UOp::Const(dtypes::kInt32, 2);
  UOpPtr gate = i.lt(two), alt = UOp::Const(f, 0.0);
  UOpPtr ld = d1.index(i, gate).load({alt}), st = d0.index(i).store({ld});
  std::string src =
      RenderProgram({d0, d1, i, two, alt, gate, d1.index(i, gate), ld, d0.index(i), st, Sink(st, "g")});
  EXPECT_THAT(src, HasSubstr("float val0 = ((i<2)?*(data1+i):0.0f);"));
  EXPECT_THAT(src, HasSubstr("void g(float* restrict data0, float* restrict data1, const int i)"));
  UOpPtr vec = UOp::New(Ops::CAST, f4.Ptr(8), {d1.index(UOp::Const(dtypes::kInt32, 0))}).load();
  std::string vsrc =
      RenderProgram({d1, UOp::Const(dtypes::kInt32, 0), d1.index(UOp::Const(dtypes::kInt32, 0)),
                     vec->src(0)->ref(), vec, Sink(d1, "v")});
  EXPECT_THAT(vsrc, HasSubstr("typedef float float4 __attribute__((aligned(16),vector_size(16)));"));
}

TEST(ClangRendererTest, WhatTheTargetCannotRenderIsAnError) {
  UOpPtr x = UOp::Variable("x", 0, 7, dtypes::kFloat32);
  UOpPtr e = x.exp2();  // the CPU target has no exp2: codegen's fallback replaces it first
  EXPECT_THAT(RenderProgram({x, e, Sink(e, "k")}), HasSubstr("error: cannot render uop 1 (EXP2"));
  UOpPtr later = UOp::Variable("y", 0, 7);
  EXPECT_THAT(RenderProgram({later + 1, later}), HasSubstr("not rendered before its use"));
}

}  // namespace
}  // namespace uopc
