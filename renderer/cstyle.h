// The C-style renderers (tinygrad's renderer/cstyle.py): CStyleRenderer writes a linear program as a C-like
// function, and ClangRenderer is the CPU target, whose output is tinygrad's byte for byte.
//
// What each op is written as is a table of render rules (renderer/render_rules.h, tinygrad's string_rewrite):
// a target's own rules (its code_for_op spellings, its bitcasts) come first, then the rules every C-style
// target shares. The formats name the context's names for the sources (`{0}`), the uop's own name (`{x}`)
// and the fields CStyleContext offers (`{dtype}`, `{barrier}`, ...). A later target (OpenCL, Metal, CUDA)
// changes the language options, puts its rules first and overrides the few hooks (dtype names, casts, the
// kernel's signature).
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
#include "renderer/render_rules.h"
#include "renderer/renderer.h"

namespace uopc {

// tinygrad's no_vectorized_alu: an ALU op on a vector as a VECTORIZE of the op on each lane (GEPs of the
// sources); null for a scalar. Shared by the renderers' extra matchers and codegen's devectorizer.
UOpPtr NoVectorizedAlu(const UOp* alu);

// Rules every C-style target adds to codegen's final rewrite (tinygrad's extra_pm): a NOOP before a BITCAST
// so that it is rendered, MAX as CMPLT + WHERE, and no vectorized bool ALU, bool casts or WHERE.
const PatternMatcher& CStyleExtraMatcher();

class CStyleRenderer;

// One C-style render: the names given so far (a constant's or an inlined uop's name is its expression) and
// how often each uop is used. A lookup of a uop without a name is recorded; the render then fails.
class CStyleContext {
 public:
  explicit CStyleContext(const CStyleRenderer& renderer) : r(renderer) {}

  const std::string& Name(const UOp* u) const;
  // Source i's name as an operand of u: an ADD, MUL or XOR of the same op drops its parentheses.
  absl::string_view Src(const UOp* u, int i) const;
  // The formats' fields: {dtype} (u's dtype as the language spells it), {base} (its pointer's element type),
  // {size} (its pointer's length), {barrier}, {smem} (the alignment and prefix of shared memory).
  static const RenderFields<CStyleContext>& Fields();

  const CStyleRenderer& r;
  absl::flat_hash_map<const UOp*, std::string> names;
  absl::flat_hash_map<const UOp*, int> uses;
  mutable bool missing = false;
};

using CStyleRules = RenderRules<CStyleContext>;

class CStyleRenderer : public Renderer {
 public:
  // supported_ops: the ALU ops of tinygrad's CStyleLanguage code_for_op (the keys of the shared table of
  // their spellings); a target that leaves some to codegen's fallbacks removes them in its constructor.
  CStyleRenderer();
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

  // Writes the program in one pass. An ALU op is written only if supported_ops has it, or it is FDIV (which
  // codegen never makes for C, but a hand-written kernel may hold).
  absl::StatusOr<std::string> RenderProgram(absl::Span<const UOp* const> uops) const override;
  // The text rules: the target's, then the shared ones (SharedRules()).
  virtual const CStyleRules& rules() const;
  // The rules every C-style target shares, then tinygrad's CStyleLanguage code_for_op.
  static CStyleRules SharedRules();
  // The whole source: the function around the kernel's lines.
  virtual std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                                   const std::vector<Param>& params, absl::Span<const UOp* const> uops) const;
  // Between `void ` and the name (CUDA's `__launch_bounds__(N) `).
  virtual std::string KernelModifier(absl::Span<const UOp* const> uops) const { return ""; }
  // The function itself: `void name(params) {` lines `}` (the kernel prefix and modifier included).
  std::string RenderFunction(const std::string& function_name, const std::vector<std::string>& lines,
                             const std::vector<Param>& params, absl::Span<const UOp* const> uops = {}) const;

 private:
  friend class CStyleContext;
};

// The C source for the CPU device: `void E_3(int* restrict data0, ...)`, compiled by clang. With a core split
// (renderer.h), a kernel split across cores takes `const int core_id` last and reads its chunk's number as
// `int gidx0 = core_id; /* 2 */`; every other kernel is tinygrad's source byte for byte.
class ClangRenderer : public CStyleRenderer {
 public:
  ClangRenderer() : ClangRenderer(CoreSplit{}) {}
  // `vector_width` as Renderer::vector_width (1: tinygrad's kernels; a power of two up to 16).
  explicit ClangRenderer(CoreSplit split, int vector_width = 1);
  // tinygrad's ClangRenderer.extra_matcher: double to half through float, no vectorized SQRT, and the
  // C-style rules.
  const PatternMatcher* extra_matcher() const override;

 protected:
  const CStyleRules& rules() const override;
  std::string RenderKernel(const std::string& function_name, const std::vector<std::string>& lines,
                           const std::vector<Param>& params,
                           absl::Span<const UOp* const> uops) const override;
};

}  // namespace uopc

#endif  // UOPC_RENDERER_CSTYLE_H_
