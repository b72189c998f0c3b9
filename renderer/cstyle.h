// The C-style renderers (tinygrad's renderer/cstyle.py): CStyleRenderer writes a linear program as a C-like
// function, and ClangRenderer is the CPU target, whose output is tinygrad's byte for byte.
//
// tinygrad renders through a PatternMatcher whose callbacks return strings. uopc's matchers return UOps, so
// the rendering rules here are one function with a case per op instead (RenderOp), in tinygrad's rule order
// within each op; a later target (OpenCL, Metal, CUDA) changes the language options and overrides the few
// hooks (dtype names, casts, the kernel's signature) rather than the rules.
//
// The program is rendered in one pass, in the order of the uops. Each uop gets a name (`alu0`, `val1`,
// `acc0`, `ridx2`, `data0`; a counter per prefix advances only when a line is emitted) and either a line of
// its own or, when it is cheap and used once (constants, indexing, a single-use ALU op or cast), its
// expression inlined where it is used.
#ifndef UOPC_RENDERER_CSTYLE_H_
#define UOPC_RENDERER_CSTYLE_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "renderer/renderer.h"

namespace uopc {

// tinygrad's no_vectorized_alu: an ALU op on a vector as a VECTORIZE of the op on each lane (GEPs of the
// sources); null for a scalar. Shared by the renderers' extra matchers and codegen's devectorizer.
UOpPtr NoVectorizedAlu(const UOp* alu);

// Rules every C-style target adds to codegen's final rewrite (tinygrad's extra_pm): a NOOP before a BITCAST
// so that it is rendered, MAX as CMPLT + WHERE, and no vectorized bool ALU, bool casts or WHERE.
const PatternMatcher& CStyleExtraMatcher();

class CStyleRenderer : public Renderer {
 public:
  absl::StatusOr<std::string> Render(absl::Span<const UOp* const> uops) const override;
  const PatternMatcher* extra_matcher() const override { return &CStyleExtraMatcher(); }

  // A dtype as the language spells it: `float`, `float4`, `_Bool`, `float*` (pointers get the buffer or
  // shared-memory prefix).
  std::string RenderDType(DType dt) const;
  // `(dt)(val)`.
  virtual std::string RenderCast(DType dt, absl::string_view val) const;
  // A BITCAST of a rendered variable: `(*((float*)&val))` in C; OpenCL and Metal have builtins.
  virtual std::string RenderBitcast(DType dt, absl::string_view val) const;

 protected:
  // A kernel parameter: its name, its dtype, and whether the kernel stores to it.
  struct Param {
    std::string name;
    DType dtype;
    bool mutable_ = false;
  };

  // The language options (tinygrad's CStyleLanguage class attributes).
  std::string kernel_prefix_, buffer_prefix_, buffer_suffix_, smem_align_, smem_prefix_;
  bool smem_prefix_for_cast_ = true;
  std::string arg_int_prefix_ = "const int";
  std::string barrier_;
  std::string float4_;  // a vector constructor's prefix, e.g. "(float4)"
  std::string infinity_ = "INFINITY", nan_ = "NAN";
  absl::flat_hash_map<ScalarType, std::string> type_map_;
  // `gidx0`-style SPECIAL names to code, by their first letter: g (group), l (local), i (global); `{}` is
  // replaced by the dimension's digit, `{xyz}` by its letter.
  absl::flat_hash_map<char, std::string> code_for_workitem_;
  // Parameters after the buffers and variables (Metal's thread position arguments).
  std::vector<std::string> extra_args_;

  // tinygrad's code_for_op: the expression of ALU op `op` on rendered operands; nullopt for an op the target
  // does not render. Targets override it for their spellings (Clang: `__builtin_sqrtf`).
  virtual std::optional<std::string> RenderAlu(Ops op, DType dtype,
                                               absl::Span<const std::string> operands) const;
  // The whole source: the function around the kernel's lines.
  virtual std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                                   const std::vector<Param>& params, absl::Span<const UOp* const> uops) const;
  // Between `void ` and the name (CUDA's `__launch_bounds__(N) `).
  virtual std::string KernelModifier(absl::Span<const UOp* const> uops) const { return ""; }
  // The function itself: `void name(params) {` lines `}` (the kernel prefix and modifier included).
  std::string RenderFunction(const std::string& function_name, const std::vector<std::string>& lines,
                             const std::vector<Param>& params, absl::Span<const UOp* const> uops = {}) const;

 private:
  class Context;
  std::optional<std::string> RenderOp(const UOp* u, const Context& ctx) const;
  std::optional<std::string> RenderConst(const UOp* u) const;
};

// The C source for the CPU device: `void E_3(int* restrict data0, ...)`, compiled by clang. With a core split
// (renderer.h), a kernel split across cores takes `const int core_id` last and reads its chunk's number as
// `int gidx0 = core_id; /* 2 */`; every other kernel is tinygrad's source byte for byte.
class ClangRenderer : public CStyleRenderer {
 public:
  ClangRenderer() : ClangRenderer(CoreSplit{}) {}
  explicit ClangRenderer(CoreSplit split);
  // tinygrad's ClangRenderer.extra_matcher: double to half through float, no vectorized SQRT, and the
  // C-style rules.
  const PatternMatcher* extra_matcher() const override;

 protected:
  std::optional<std::string> RenderAlu(Ops op, DType dtype,
                                       absl::Span<const std::string> operands) const override;
  std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                           const std::vector<Param>& params,
                           absl::Span<const UOp* const> uops) const override;
};

}  // namespace uopc

#endif  // UOPC_RENDERER_CSTYLE_H_
