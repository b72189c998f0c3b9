// The PTX renderer writes only instructions PTX defines. tinygrad's writes `.approx` for every float, and
// PTX has approximate rcp, sqrt, ex2, lg2 and sin for f32 only (ex2 for f16 too): its double_ops/0 kernel,
// `sqrt.approx.f64`, does not assemble. uopc writes the correctly rounded f64 forms (`sqrt.rn.f64`,
// `rcp.rn.f64`) and has codegen compute f64 exp2, log2 and sin with its fallbacks (docs/parity.md).
//
// Every render is checked against the table of legal combinations (renderer/ptx_isa.h), and, where this
// machine has ptxas ($PTXAS or /usr/local/cuda/bin/ptxas), assembled for sm_80; the table itself is checked
// against ptxas too. Without ptxas those parts skip: the lead's GPU run is then
// `./bazelw test //runtime:ptx_isa_test //runtime:cuda_corpus_test` on a machine with the CUDA toolkit.
#include "renderer/ptx_isa.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/ptx.h"
#include "runtime/cuda_device.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

constexpr char kArch[] = "sm_80";

absl::StatusOr<std::string> RenderPtx(const UOpPtr& ast) {
  PTXRenderer ptx(kArch);
  KernelNameCounter names;
  UOPC_ASSIGN_OR_RETURN(ProgramSpec p, CompileKernel(ast, ptx, CompileOptions{}, &names));
  return p.src;
}

// "" when `src` uses only legal instructions (and assembles, where there is ptxas); else what is wrong.
std::string PtxProblems(const std::string& src) {
  std::vector<std::string> illegal = IllegalPtxInstructions(src);
  if (!illegal.empty()) return absl::StrCat("illegal: ", absl::StrJoin(illegal, ", "));
  if (const std::string ptxas = FindPtxas(); !ptxas.empty())
    return PtxasErrors(ptxas, PtxForArch(src, kArch), kArch);
  return "";
}

// out = op(a[, b]) on `n` elements of `dtype`, as a kernel AST in textual IR.
UOpPtr ElementwiseKernel(const std::string& op, const std::string& dtype, int operands) {
  std::string text = absl::StrCat(
      "%0 = DEFINE_GLOBAL : ", dtype, ".ptr(16) arg=0\n",
      "%1 = VIEW : void arg=ShapeTracker(views=(View(shape=(16,), strides=(1,), offset=0, mask=None, "
      "contiguous=True),))\n",
      "%2 = DEFINE_GLOBAL : ", dtype, ".ptr(16) arg=1\n%3 = LOAD : ", dtype, " (%2, %1)\n",
      "%4 = DEFINE_GLOBAL : ", dtype, ".ptr(16) arg=2\n%5 = LOAD : ", dtype, " (%4, %1)\n", "%6 = ", op,
      " : ", dtype, operands == 1 ? " (%3)\n" : " (%3, %5)\n",
      "%7 = STORE : void (%0, %1, %6)\n%8 = SINK : void (%7)\nreturn %8\n");
  absl::StatusOr<UOpPtr> ast = ParseIrSingle(text);
  EXPECT_TRUE(ast.ok()) << ast.status();
  return ast.ok() ? *ast : nullptr;
}

TEST(PtxIsaTest, TableRejectsWhatPtxLacks) {
  for (const char* illegal : {"sqrt.approx.f64", "rcp.approx.f64", "ex2.approx.f64", "lg2.approx.f64",
                              "sin.approx.f64", "lg2.approx.f16", "sqrt.approx.f16", "rcp.approx.f16",
                              "div.rn.f16", "rcp.s32", "max.pred", "add.pred", "mov.f16", "selp.f16",
                              "neg.u32", "shl.bred", "cvt.f32.f64", "cvt.rn.f64.f32", "cvt.f32.s32"}) {
    EXPECT_FALSE(IsLegalPtxMnemonic(illegal)) << illegal;
  }
  for (const char* legal : {"sqrt.rn.f64", "rcp.rn.f64", "div.rn.f64", "sqrt.approx.f32", "rcp.approx.f32",
                            "ex2.approx.f16", "ex2.approx.f32", "sin.approx.f32", "fma.rn.f64", "neg.s32",
                            "cvt.rn.f32.f64", "cvt.f64.f32", "cvt.rzi.s32.f32", "cvt.rn.bf16.f32",
                            "ld.global.v4.f32", "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32"}) {
    EXPECT_TRUE(IsLegalPtxMnemonic(legal)) << legal;
  }
  EXPECT_EQ(
      absl::StrJoin(IllegalPtxInstructions("\t@%p1 sqrt.approx.f64\t%a, %b;\n\tsqrt.rn.f64\t%a, %b;"), ","),
      "sqrt.approx.f64 (line 1)");
}

// Every combination the table allows assembles, and what it rejects above does not.
TEST(PtxIsaTest, TableAgreesWithPtxas) {
  const std::string ptxas = FindPtxas();
  if (ptxas.empty()) GTEST_SKIP() << "no ptxas here";
  // A register of each type, named by it: %r_f32, %r_pred.
  const std::vector<std::string> types = {"s8",  "u8",  "s16", "u16", "s32", "u32", "s64", "u64",
                                          "b16", "b32", "b64", "f16", "f32", "f64", "pred"};
  std::string head = ".version 7.5\n.target sm_80\n.address_size 64\n.visible .entry k()\n{\n";
  for (const std::string& t : types) absl::StrAppend(&head, ".reg .", t, " %r_", t, ";\n");
  auto instruction = [](const std::string& mnemonic) {
    std::vector<std::string> parts = absl::StrSplit(mnemonic, '.');
    const std::string& op = parts[0];
    auto reg = [](std::string t) { return absl::StrCat("%r_", t == "bf16" ? "b16" : t); };
    if (op == "cvt")
      return absl::StrCat(mnemonic, " ", reg(parts[parts.size() - 2]), ", ", reg(parts.back()), ";");
    const std::string t = reg(parts.back());
    if (op == "setp") return absl::StrCat(mnemonic, " %r_pred, ", t, ", ", t, ";");
    if (op == "selp") return absl::StrCat(mnemonic, " ", t, ", ", t, ", ", t, ", %r_pred;");
    if (op == "shl" || op == "shr") return absl::StrCat(mnemonic, " ", t, ", ", t, ", %r_u32;");
    if (op == "mad" || op == "fma") return absl::StrCat(mnemonic, " ", t, ", ", t, ", ", t, ", ", t, ";");
    for (const char* unary : {"rcp", "sqrt", "ex2", "lg2", "sin", "cos", "neg", "not", "mov"}) {
      if (op == unary) return absl::StrCat(mnemonic, " ", t, ", ", t, ";");
    }
    return absl::StrCat(mnemonic, " ", t, ", ", t, ", ", t, ";");
  };
  std::string body;
  for (const std::string& m : LegalPtxMnemonics()) absl::StrAppend(&body, instruction(m), "\n");
  EXPECT_EQ(PtxasErrors(ptxas, absl::StrCat(head, body, "ret;\n}\n"), kArch), "");
  for (const char* illegal : {"sqrt.approx.f64", "rcp.approx.f64", "ex2.approx.f64", "lg2.approx.f64",
                              "sin.approx.f64", "div.rn.f16", "max.pred", "add.pred", "mov.f16", "selp.f16",
                              "neg.u32", "cvt.f32.f64", "cvt.rn.f64.f32", "cvt.f32.s32"}) {
    EXPECT_NE(PtxasErrors(ptxas, absl::StrCat(head, instruction(illegal), "\nret;\n}\n"), kArch), "")
        << illegal;
  }
}

// uopc's PTX for every corpus kernel.
TEST(PtxIsaTest, CorpusKernelsUseLegalInstructions) {
  for (const CorpusKernel& k : KernelCorpus()) {
    absl::StatusOr<std::string> src = RenderPtx(ParseCorpusGraph(k.ast));
    ASSERT_TRUE(src.ok()) << k.id << ": " << src.status();
    EXPECT_EQ(PtxProblems(*src), "") << k.id;
  }
}

// tinygrad's double_ops/0 with the one instruction that does not assemble made legal, and nothing else.
TEST(PtxIsaTest, DoubleOpsDepartsFromTinygradOnlyInItsSquareRoot) {
  for (const CorpusKernel& k : KernelCorpus()) {
    if (k.id != "double_ops/0") continue;
    const std::string& tinygrad = k.target("ptx").src;
    ASSERT_NE(tinygrad.find("sqrt.approx.f64"), std::string::npos);
    absl::StatusOr<std::string> src = RenderPtx(ParseCorpusGraph(k.ast));
    ASSERT_TRUE(src.ok()) << src.status();
    EXPECT_EQ(*src, absl::StrReplaceAll(tinygrad, {{"sqrt.approx.f64", "sqrt.rn.f64"}}));
    return;
  }
  FAIL() << "the corpus has no double_ops/0";
}

// Float ops of every width: f64 gets the correctly rounded instructions and codegen's fallbacks, f32 keeps
// tinygrad's approximate ones, halfs compute in float where PTX has no half instruction.
TEST(PtxIsaTest, FloatOpsUseLegalInstructions) {
  struct Want {
    std::string op, dtype;
    int operands;
    std::vector<std::string> has, lacks;
  };
  const std::vector<Want> wants = {
      {"SQRT", "float64", 1, {"sqrt.rn.f64"}, {".approx"}},
      {"RECIP", "float64", 1, {"rcp.rn.f64"}, {".approx"}},
      {"FDIV", "float64", 2, {"div.rn.f64"}, {".approx"}},
      {"EXP2", "float64", 1, {}, {"ex2", ".approx"}},
      {"LOG2", "float64", 1, {}, {"lg2", ".approx"}},
      {"SIN", "float64", 1, {}, {"sin.", ".approx"}},
      {"POW", "float64", 2, {}, {".approx"}},
      {"SQRT", "float32", 1, {"sqrt.approx.f32"}, {}},
      {"RECIP", "float32", 1, {"rcp.approx.f32"}, {}},
      {"EXP2", "float32", 1, {"ex2.approx.f32"}, {}},
      {"LOG2", "float32", 1, {"lg2.approx.f32"}, {}},
      {"SIN", "float32", 1, {"sin.approx.f32"}, {}},
      {"FDIV", "float32", 2, {"div.rn.f32"}, {}},
      {"EXP2", "float16", 1, {"ex2.approx.f16"}, {}},
      {"SQRT", "float16", 1, {"sqrt.approx.f32"}, {"sqrt.approx.f16"}},
      {"RECIP", "float16", 1, {"rcp.approx.f32"}, {"rcp.approx.f16"}},
      {"LOG2", "float16", 1, {"lg2.approx.f32"}, {}},
      {"SIN", "float16", 1, {"sin.approx.f32"}, {}},
      {"FDIV", "float16", 2, {"div.rn.f32"}, {}},
      {"SUB", "float16", 2, {"sub.f16"}, {}},
      {"NEG", "float64", 1, {"neg.f64"}, {}},
      {"SQRT", "bfloat16", 1, {"cvt.f32.bf16", "sqrt.approx.f32", "cvt.rn.bf16.f32"}, {}},
      {"ADD", "bfloat16", 2, {"add.f32"}, {}},
  };
  for (const Want& w : wants) {
    const std::string what = absl::StrCat(w.op, " ", w.dtype);
    absl::StatusOr<std::string> src = RenderPtx(ElementwiseKernel(w.op, w.dtype, w.operands));
    ASSERT_TRUE(src.ok()) << what << ": " << src.status();
    for (const std::string& s : w.has) EXPECT_NE(src->find(s), std::string::npos) << what << " lacks " << s;
    for (const std::string& s : w.lacks) EXPECT_EQ(src->find(s), std::string::npos) << what << " has " << s;
    EXPECT_EQ(PtxProblems(*src), "") << what << "\n" << *src;
  }
}

}  // namespace
}  // namespace uopc
