#include "renderer/ptx.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

std::string RenderProgram(const std::vector<UOpPtr>& uops) {
  std::vector<const UOp*> raw;
  for (const UOpPtr& u : uops) raw.push_back(u.get());
  absl::StatusOr<std::string> src = PTXRenderer("sm_80").Render(raw);
  return src.ok() ? *src : "error: " + std::string(src.status().message());
}

UOpPtr Sink(const UOpPtr& store, const std::string& name) {
  return UOp::Sink({store}, KernelInfoAsArg({.name = name}));
}

// data0[0] = <constant>, as the PTX matcher leaves it (the address is the buffer cast to int64): the line
// that sets the constant's register.
std::string ConstantLine(DType dt, ConstValue v) {
  UOpPtr d0 = UOp::New(Ops::DEFINE_GLOBAL, dt.Ptr(1), {}, Arg(0));
  UOpPtr c = UOp::Const(dt, v);
  UOpPtr address = UOp::New(Ops::CAST, dtypes::kInt64, {d0});
  UOpPtr st = UOp::New(Ops::STORE, dtypes::kVoid, {address, c});
  std::string src = RenderProgram({d0, c, address, st, Sink(st, "k")});
  for (absl::string_view line : absl::StrSplit(src, '\n')) {
    if (absl::StrContains(line, "%const_") && !absl::StartsWith(line, "\t.reg")) return std::string(line);
  }
  return src;
}

// Expected lines from tinygrad v0.10.3's PTXRenderer on the same programs.
TEST(PtxRendererTest, ConstantsOfEveryDtype) {
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ConstantLine(dtypes::kFloat32, ConstValue::Float(1.0)), "\tmov.b32\t\t%const_f32_0, 0f3F800000;");
  EXPECT_EQ(ConstantLine(dtypes::kFloat32, ConstValue::Float(inf)), "\tmov.b32\t\t%const_f32_0, 0f7F800000;");
  EXPECT_EQ(ConstantLine(dtypes::kFloat32, ConstValue::Float(-inf)),
            "\tmov.b32\t\t%const_f32_0, 0fFF800000;");
  EXPECT_EQ(ConstantLine(dtypes::kFloat32, ConstValue::Float(std::nan(""))),
            "\tmov.b32\t\t%const_f32_0, 0f7FC00000;");
  EXPECT_EQ(ConstantLine(dtypes::kFloat16, ConstValue::Float(1.5)), "\tmov.b16\t\t%const_f16_0, 0x3E00;");
  EXPECT_EQ(ConstantLine(dtypes::kFloat64, ConstValue::Float(0.1)),
            "\tmov.b64\t\t%const_f64_0, 0d3FB999999999999A;");
  EXPECT_EQ(ConstantLine(dtypes::kInt32, ConstValue::Int(-3)), "\tmov.b32\t\t%const_s32_0, -3;");
  EXPECT_EQ(ConstantLine(dtypes::kUInt32, ConstValue::Int(7)), "\tmov.b32\t\t%const_u32_0, 7U;");
  EXPECT_EQ(ConstantLine(dtypes::kInt64, ConstValue::Int(5)), "\tmov.b64\t\t%const_s64_0, 5;");
  EXPECT_EQ(ConstantLine(dtypes::kUInt8, ConstValue::Int(9)), "\tmov.b16\t\t%const_u16_0, 9U;");
  EXPECT_EQ(ConstantLine(dtypes::kInt8, ConstValue::Int(-2)), "\tmov.b16\t\t%const_s16_0, -2;");
  EXPECT_EQ(ConstantLine(dtypes::kBool, ConstValue::Bool(true)), "\tsetp.ne.s16\t%const_pred_0, 1, 0;");
}

// C's `!=` is true when an operand is NaN, PTX's `setp.ne` false: floats compare with the unordered `neu`
// (tinygrad v0.10.3 writes `ne`, so its PTX isnan is never true; docs/parity.md). Integers keep `ne`.
TEST(PtxRendererTest, FloatInequalityIsUnordered) {
  auto compare_line = [](DType dt) {
    UOpPtr d0 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kBool.Ptr(1), {}, Arg(0));
    UOpPtr v = UOp::New(Ops::DEFINE_VAR, dt, {}, Arg{Arg("v"), Arg(0), Arg(9)});
    UOpPtr ne = v.ne(v);
    UOpPtr address = UOp::New(Ops::CAST, dtypes::kInt64, {d0});
    UOpPtr st = UOp::New(Ops::STORE, dtypes::kVoid, {address, ne});
    std::string src = RenderProgram({d0, v, ne, address, st, Sink(st, "k")});
    for (absl::string_view line : absl::StrSplit(src, '\n')) {
      if (absl::StrContains(line, "setp.") && !absl::StrContains(line, "%const_")) return std::string(line);
    }
    return src;
  };
  EXPECT_THAT(compare_line(dtypes::kFloat32), HasSubstr("setp.neu.f32"));
  EXPECT_THAT(compare_line(dtypes::kFloat64), HasSubstr("setp.neu.f64"));
  EXPECT_THAT(compare_line(dtypes::kFloat16), HasSubstr("setp.neu.f16"));
  EXPECT_THAT(compare_line(dtypes::kInt32), HasSubstr("setp.ne.s32"));
}

// A tensor-core multiply (8x16x16, half in, float out) stored as one float4: packing, mma.sync, unpacking.
// The corpus's one WMMA kernel does not reach the renderer yet (codegen lowers no WMMA), so this is the
// check of that rendering.
TEST(PtxRendererTest, WmmaMatchesTinygrad) {
  const DType h = dtypes::kFloat16, f = dtypes::kFloat32;
  UOpPtr d0 = UOp::New(Ops::DEFINE_GLOBAL, f.Ptr(4), {}, Arg(0));
  std::vector<UOpPtr> a, b, c;
  for (int i = 0; i < 8; ++i) a.push_back(UOp::Const(h, 1.0 + i));
  for (int i = 0; i < 4; ++i) b.push_back(UOp::Const(h, 0.5));  // one interned node, rendered four times
  for (int i = 0; i < 4; ++i) c.push_back(UOp::Const(f, 2.0 + i));
  UOpPtr va = UOp::New(Ops::VECTORIZE, h.Vec(8), a), vb = UOp::New(Ops::VECTORIZE, h.Vec(4), b),
         vc = UOp::New(Ops::VECTORIZE, f.Vec(4), c);
  Arg arg = Arg::Tuple{Arg("WMMA_8_16_16_half_float"),
                       Arg::IntTuple({8, 16, 16}),
                       Arg(h),
                       Arg(f),
                       Arg("CUDA"),
                       Arg(32),
                       Arg::Tuple{},
                       Arg::Tuple{}};
  UOpPtr wmma = UOp::New(Ops::WMMA, f.Vec(4), {va, vb, vc}, arg);
  UOpPtr address = UOp::New(Ops::CAST, dtypes::kInt64, {d0});
  std::vector<UOpPtr> lanes;
  for (int i = 0; i < 4; ++i) lanes.push_back(wmma.gep(i));
  UOpPtr out = UOp::New(Ops::VECTORIZE, f.Vec(4), lanes);
  UOpPtr st = UOp::New(Ops::STORE, dtypes::kVoid, {address, out});
  std::vector<UOpPtr> program = {d0};
  program.insert(program.end(), a.begin(), a.end());
  program.insert(program.end(), b.begin(), b.end());
  program.insert(program.end(), c.begin(), c.end());
  program.insert(program.end(), {va, vb, vc, wmma, address});
  program.insert(program.end(), lanes.begin(), lanes.end());
  program.insert(program.end(), {out, st, Sink(st, "wmma_test")});
  EXPECT_EQ(
      RenderProgram(program),
      ".version VERSION\n.target TARGET\n.address_size 64\n.visible .entry wmma_test(\n\t.param .u64 "
      "data0\n)\n"
      "{\n"
      "\t.reg\t\t.u64 %dat_u64_<1>;\n"
      "\t.reg\t\t.f16 %const_f16_<12>;\n"
      "\t.reg\t\t.f32 %const_f32_<4>;\n"
      "\t.reg\t\t.b32 %wmma_in_b32_<6>;\n"
      "\t.reg\t\t.b32 %wmma_acc_b32_<4>;\n"
      "\t.reg\t\t.f32 %wmma_f32_<4>;\n"
      "\tld.param.u64\t%dat_u64_0, [data0+0];\n"
      "\tmov.b16\t\t%const_f16_0, 0x3C00;\n"
      "\tmov.b16\t\t%const_f16_1, 0x4000;\n"
      "\tmov.b16\t\t%const_f16_2, 0x4200;\n"
      "\tmov.b16\t\t%const_f16_3, 0x4400;\n"
      "\tmov.b16\t\t%const_f16_4, 0x4500;\n"
      "\tmov.b16\t\t%const_f16_5, 0x4600;\n"
      "\tmov.b16\t\t%const_f16_6, 0x4700;\n"
      "\tmov.b16\t\t%const_f16_7, 0x4800;\n"
      "\tmov.b16\t\t%const_f16_8, 0x3800;\n"
      "\tmov.b16\t\t%const_f16_9, 0x3800;\n"
      "\tmov.b16\t\t%const_f16_10, 0x3800;\n"
      "\tmov.b16\t\t%const_f16_11, 0x3800;\n"
      "\tmov.b32\t\t%const_f32_0, 0f40000000;\n"
      "\tmov.b32\t\t%const_f32_1, 0f40400000;\n"
      "\tmov.b32\t\t%const_f32_2, 0f40800000;\n"
      "\tmov.b32\t\t%const_f32_3, 0f40A00000;\n"
      "\tmov.b32\t\t%wmma_in_b32_0, {%const_f16_0, %const_f16_1};\n"
      "\tmov.b32\t\t%wmma_in_b32_1, {%const_f16_2, %const_f16_3};\n"
      "\tmov.b32\t\t%wmma_in_b32_2, {%const_f16_4, %const_f16_5};\n"
      "\tmov.b32\t\t%wmma_in_b32_3, {%const_f16_6, %const_f16_7};\n"
      "\tmov.b32\t\t%wmma_in_b32_4, {%const_f16_11, %const_f16_11};\n"
      "\tmov.b32\t\t%wmma_in_b32_5, {%const_f16_11, %const_f16_11};\n"
      "\tmov.b32\t\t%wmma_acc_b32_0, %const_f32_0;\n"
      "\tmov.b32\t\t%wmma_acc_b32_1, %const_f32_1;\n"
      "\tmov.b32\t\t%wmma_acc_b32_2, %const_f32_2;\n"
      "\tmov.b32\t\t%wmma_acc_b32_3, %const_f32_3;\n"
      "\tmma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32\t           {%wmma_acc_b32_0, %wmma_acc_b32_1, "
      "%wmma_acc_b32_2, %wmma_acc_b32_3}, {%wmma_in_b32_0, %wmma_in_b32_1, %wmma_in_b32_2, %wmma_in_b32_3}, "
      "{%wmma_in_b32_4, %wmma_in_b32_5}, {%wmma_acc_b32_0, %wmma_acc_b32_1, %wmma_acc_b32_2, "
      "%wmma_acc_b32_3};\n"
      "\tmov.b32\t\t%wmma_f32_0, %wmma_acc_b32_0;\n"
      "\tmov.b32\t\t%wmma_f32_1, %wmma_acc_b32_1;\n"
      "\tmov.b32\t\t%wmma_f32_2, %wmma_acc_b32_2;\n"
      "\tmov.b32\t\t%wmma_f32_3, %wmma_acc_b32_3;\n"
      "\tst.global.v4.f32\t[%dat_u64_0+0], {%wmma_f32_0, %wmma_f32_1, %wmma_f32_2, %wmma_f32_3};\n"
      "\tret;\n"
      "}");
}

// What PTX cannot express is an error naming the uop, never a crash.
TEST(PtxRendererTest, UnrenderableUopsAreErrors) {
  UOpPtr d0 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(4), {}, Arg(0));
  UOpPtr address = UOp::New(Ops::CAST, dtypes::kInt64, {d0});
  // PTX has no f64 exp2 (codegen computes it with its fallback before rendering), and no integer square root.
  UOpPtr d = UOp::Const(dtypes::kFloat64, 1.0);
  UOpPtr exp2 = UOp::New(Ops::EXP2, dtypes::kFloat64, {d});
  UOpPtr st = UOp::New(Ops::STORE, dtypes::kVoid, {address, exp2});
  EXPECT_THAT(RenderProgram({d0, d, address, exp2, st, Sink(st, "k")}),
              HasSubstr("error: cannot render uop 3 (EXP2"));
  UOpPtr i = UOp::Const(dtypes::kInt32, 4);
  UOpPtr sqrt = UOp::New(Ops::SQRT, dtypes::kInt32, {i});
  UOpPtr st0 = UOp::New(Ops::STORE, dtypes::kVoid, {address, sqrt});
  EXPECT_THAT(RenderProgram({d0, i, address, sqrt, st0, Sink(st0, "k")}),
              HasSubstr("error: cannot render uop 3 (SQRT"));
  UOpPtr x = UOp::Const(dtypes::kFloat32, 1.0);
  // A load must read an int64 address (the PTX matcher's pointer arithmetic).
  UOpPtr load = UOp::New(Ops::LOAD, dtypes::kFloat32, {d0});
  UOpPtr st2 = UOp::New(Ops::STORE, dtypes::kVoid, {address, load});
  EXPECT_THAT(RenderProgram({d0, load, address, st2, Sink(st2, "k")}), HasSubstr("int64 address"));
  // A source that was never rendered.
  UOpPtr st3 = UOp::New(Ops::STORE, dtypes::kVoid, {address, x});
  EXPECT_THAT(RenderProgram({d0, address, st3, Sink(st3, "k")}), HasSubstr("no register"));
  // A vector ALU op (the devectorizer splits them for PTX).
  UOpPtr v = UOp::New(Ops::VECTORIZE, dtypes::kFloat32.Vec(2), {x, x});
  UOpPtr add = UOp::New(Ops::ADD, dtypes::kFloat32.Vec(2), {v, v});
  UOpPtr st4 = UOp::New(Ops::STORE, dtypes::kVoid, {address, add});
  EXPECT_THAT(RenderProgram({d0, x, v, address, add, st4, Sink(st4, "k")}),
              HasSubstr("error: cannot render"));
}

TEST(PtxRendererTest, TargetDescription) {
  PTXRenderer sm80("sm_80"), sm75("sm_75"), sm70("sm_70");
  EXPECT_EQ(sm80.device(), "CUDA");
  EXPECT_EQ(sm80.tensor_cores().size(), 4u);  // CUDA's sm_80 cores without bfloat16
  for (const TensorCore& tc : sm80.tensor_cores()) EXPECT_EQ(tc.dtype_in, dtypes::kFloat16);
  EXPECT_EQ(sm80.tensor_cores()[0].ToString(), "WMMA_8_16_16_half_float");
  EXPECT_EQ(sm75.tensor_cores().size(), 2u);
  EXPECT_TRUE(sm70.tensor_cores().empty());
  EXPECT_TRUE(sm80.supported_ops().contains(Ops::MULACC));
  // The renderer writes NEG and SUB, but codegen must not aim at them (tinygrad's kernels would change).
  EXPECT_FALSE(sm80.supported_ops().contains(Ops::NEG));
  EXPECT_FALSE(sm80.supported_ops().contains(Ops::SUB));
  EXPECT_EQ(sm80.transcendental_fallback_dtypes(), std::vector<DType>{dtypes::kFloat64});
}

}  // namespace
}  // namespace uopc
