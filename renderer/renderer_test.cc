#include "renderer/renderer.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "renderer/gpu_cstyle.h"
#include "renderer/targets.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

std::string RenderFor(const Renderer& r, const std::vector<UOpPtr>& uops) {
  std::vector<const UOp*> raw;
  for (const UOpPtr& u : uops) raw.push_back(u.get());
  absl::StatusOr<std::string> src = r.Render(raw);
  return src.ok() ? *src : "error: " + std::string(src.status().message());
}

UOpPtr Sink(const UOpPtr& last) { return UOp::Sink({last}, KernelInfoAsArg({.name = "k"})); }

// The CPU targets that keep vectors (uopc's kernels) by name, and the names that are not targets.
TEST(RendererTest, VectorTargetsByName) {
  for (const char* name : {"clang:vec16", "llvm:vec16", "llvm:vec8"}) {
    absl::StatusOr<std::unique_ptr<Renderer>> r = MakeRendererForTarget(name);
    ASSERT_TRUE(r.ok()) << name << ": " << r.status();
    EXPECT_EQ((*r)->vector_width(), absl::EndsWith(name, "8") ? 8 : 16) << name;
    EXPECT_EQ((*r)->device(), absl::StartsWith(name, "llvm") ? "LLVM" : "CPU") << name;
  }
  EXPECT_EQ((*MakeRendererForTarget("llvm"))->vector_width(), 1);
  for (const char* bad : {"llvm:vec3", "clang:vec32", "llvm:sm_80", "opencl:vec16"}) {
    EXPECT_FALSE(MakeRendererForTarget(bad).ok()) << bad;
  }
}

// What Render checks for every target before the target's loop reads the uops: the same error everywhere,
// naming the uop.
TEST(RendererTest, EveryTargetRefusesTheSameBadArgs) {
  const UOpPtr i = UOp::Variable("i", 0, 7);
  const UOpPtr bad_global = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(4), {}, Arg("data0"));
  const UOpPtr bad_var = UOp::New(Ops::DEFINE_VAR, dtypes::kInt32, {}, Arg(int64_t{3}));
  const UOpPtr nameless = UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg::Tuple{Arg(""), Arg(int64_t{4})});
  const UOpPtr sizeless = UOp::New(Ops::SPECIAL, dtypes::kInt32, {}, Arg::Tuple{Arg("gidx0")});
  const UOpPtr unary_add = UOp::New(Ops::ADD, dtypes::kInt32, {i});
  const UOpPtr binary_neg = UOp::New(Ops::NEG, dtypes::kInt32, {i, i});
  for (const std::string& target : KnownTargets()) {
    SCOPED_TRACE(target);
    std::unique_ptr<Renderer> r = *MakeRendererForTarget(target);
    EXPECT_THAT(
        RenderFor(*r, {bad_global, Sink(bad_global)}),
        HasSubstr(
            "error: cannot render uop 0 (DEFINE_GLOBAL dtypes.float.ptr(4)): a DEFINE_GLOBAL needs a buffer "
            "number"));
    EXPECT_THAT(RenderFor(*r, {bad_var, Sink(bad_var)}),
                HasSubstr("uop 0 (DEFINE_VAR dtypes.int): a DEFINE_VAR needs"));
    EXPECT_THAT(RenderFor(*r, {nameless, Sink(nameless)}),
                HasSubstr("uop 0 (SPECIAL dtypes.int): a SPECIAL's arg"));
    EXPECT_THAT(RenderFor(*r, {sizeless, Sink(sizeless)}),
                HasSubstr("uop 0 (SPECIAL dtypes.int): a SPECIAL's arg"));
    EXPECT_THAT(RenderFor(*r, {i, unary_add, Sink(unary_add)}),
                HasSubstr("uop 1 (ADD dtypes.int): an ALU op with the wrong number of sources"));
    EXPECT_THAT(RenderFor(*r, {i, binary_neg, Sink(binary_neg)}),
                HasSubstr("uop 1 (NEG dtypes.int): an ALU op with the wrong number of sources"));
  }
}

// The C-style targets' ALU ops are tinygrad's code_for_op keys: CStyleLanguage's on the GPUs, without EXP2,
// LOG2 and SIN on the CPU, which the C loop then refuses although the shared rules spell them.
TEST(RendererTest, CStyleOpSetsAreTinygradsCodeForOp) {
  const OpSet cstyle{Ops::SQRT,  Ops::RECIP, Ops::NEG, Ops::EXP2,  Ops::LOG2, Ops::SIN, Ops::AND,
                     Ops::XOR,   Ops::OR,    Ops::ADD, Ops::SUB,   Ops::MUL,  Ops::MOD, Ops::IDIV,
                     Ops::CMPNE, Ops::SHR,   Ops::SHL, Ops::CMPLT, Ops::WHERE};
  const OpSet transcendentals{Ops::EXP2, Ops::LOG2, Ops::SIN};
  EXPECT_TRUE(OpenCLRenderer().supported_ops() == cstyle);
  EXPECT_TRUE(MetalRenderer().supported_ops() == cstyle);
  EXPECT_TRUE(CUDARenderer("sm_80").supported_ops() == cstyle);
  EXPECT_TRUE(ClangRenderer().supported_ops() == cstyle - transcendentals);

  // data0[0] = op(x).
  const UOpPtr d0 = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(1), {}, Arg(int64_t{0}));
  const UOpPtr zero = UOp::Const(dtypes::kInt32, 0), x = UOp::Variable("x", 0, 7, dtypes::kFloat32);
  auto store = [&](const UOpPtr& value) {
    const UOpPtr st = d0.index(zero).store({value});
    return std::vector<UOpPtr>{d0, zero, x, value, d0.index(zero), st, Sink(st)};
  };
  transcendentals.ForEach([&](Ops op) {
    SCOPED_TRACE(OpName(op));
    const std::vector<UOpPtr> program = store(UOp::New(op, dtypes::kFloat32, {x}));
    EXPECT_THAT(
        RenderFor(ClangRenderer(), program),
        HasSubstr(absl::StrCat("uop 3 (", OpName(op), " dtypes.float): the target has no rendering")));
    EXPECT_THAT(RenderFor(OpenCLRenderer(), program), HasSubstr("(x);"));
  });
  // FDIV is rendered though no target lists it (codegen makes none for C; a hand-written kernel may).
  EXPECT_THAT(RenderFor(ClangRenderer(), store(UOp::New(Ops::FDIV, dtypes::kFloat32, {x, x}))),
              HasSubstr("*(data0+0) = (x/x);"));
}

}  // namespace
}  // namespace uopc
