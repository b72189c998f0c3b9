// The LLVM IR target (tinygrad v0.10.3's renderer/llvmir.py): a CPU target without locals whose linear
// program is written as one LLVM IR function, tinygrad's text byte for byte.
//
// The IR is SSA: every value-producing uop gets a name `%vN` from one counter (`%assignN` for the values an
// accumulator is assigned, `%accN` for the loop phis that carry an accumulator), constants and same-width
// casts are used in place, loops become entry/body/latch/exit blocks with a phi for the counter, and a
// masked load becomes a branch around the load with a phi of the loaded and the alternative value.
// Pointers are spelled `float*` as tinygrad does; only opaque-pointer LLVM (17 and later) reads that IR,
// since vector loads go through a pointer to the scalar.
//
//   LLVMRenderer llvm;
//   absl::StatusOr<std::string> ir = llvm.Render(uops);   // "define void @E_3(float* noalias align 32 ..."
#ifndef UOPC_RENDERER_LLVMIR_H_
#define UOPC_RENDERER_LLVMIR_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"
#include "uop/dtype.h"

namespace uopc {

// tinygrad's ldt: a dtype as LLVM spells it (`float`, `<4 x float>`, `i32*`, `<4 x float>*`; unsigned
// ints are plain `iN`).
std::string LlvmType(DType dt);
// tinygrad's lconst: a constant of a scalar dtype in IR. Floats are rounded to the dtype and written with
// Python's repr (`2.5`, `0.10000000149011612`, but `1.0e-05` where Python writes `1e-05`); infinities and
// NaNs as the hex of their double bits; integers and bools as integers.
std::string LlvmConst(ConstValue v, DType dt);
// tinygrad's lcast: the cast instruction from one scalar kind to another (`sitofp`, `fptrunc`, `zext`,
// ...). Errors for a cast LLVM has no single instruction for (to bool; tinygrad rewrites those first).
absl::StatusOr<std::string> LlvmCastInstruction(DType from, DType to);

// With a core split (renderer.h), a kernel split across cores takes `i32 %core_id` last and uses it as its
// SPECIAL `gidx0`; every other kernel is tinygrad's IR byte for byte. With a `vector_width` above 1
// (Renderer::vector_width, uopc's kernels) float32 arithmetic stays in vectors of up to that many lanes,
// which LLVM's vector types express directly, and vector loads and stores promise only their element's
// alignment.
class LLVMRenderer : public Renderer {
 public:
  LLVMRenderer() : LLVMRenderer(CoreSplit{}) {}
  explicit LLVMRenderer(CoreSplit split, int vector_width = 1);

  // RECIP as FDIV, a cast to bool as `!= 0`, MAX as CMPLT + WHERE, and bfloat16 math and casts through
  // float (tinygrad's LLVMRenderer.extra_matcher).
  const PatternMatcher* extra_matcher() const override;

 protected:
  // The module text: the kernel function, then its attribute group. Errors for a uop without an LLVM
  // rendering (tinygrad raises for those too): SPECIAL, WMMA, unary math, an op a dtype has no instruction
  // for.
  absl::StatusOr<std::string> RenderProgram(absl::Span<const UOp* const> uops) const override;
};

std::unique_ptr<Renderer> MakeLLVMRenderer();

}  // namespace uopc

#endif  // UOPC_RENDERER_LLVMIR_H_
