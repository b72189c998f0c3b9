// The codegen driver: a kernel AST in, a program out (tinygrad v0.10.3's get_kernel + Kernel.to_program +
// full_rewrite).
//
// The steps run in tinygrad's order, each a graph rewrite with its own rules (one file each):
//   lowerer, initial symbolic, store_ignore, move_ignore, expander, remove_reduce, devectorize,
//   [pre_matcher, when the renderer has one], final rewrite, then the linearizer,
// and the renderer writes the linear program as source. Each step is also callable on its own (its header),
// and `CodegenSteps()` lists them by name for tools that stop after a step (`uopc compile --emit=stages`).
//
//   ClangRenderer clang;
//   KernelNameCounter names;
//   absl::StatusOr<ProgramSpec> p = CompileKernel(ast, clang, CompileOptions{}, &names);
//   // p->name == "E_3", p->src is the C function, p->uops the linear program.
#ifndef UOPC_CODEGEN_CODEGEN_H_
#define UOPC_CODEGEN_CODEGEN_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "codegen/program_spec.h"
#include "renderer/renderer.h"
#include "uop/uop.h"

namespace uopc {

// One codegen step: the graph after the previous step in, the graph after this one out.
struct CodegenStep {
  absl::string_view name;  // tinygrad's name for it ("lowerer", "final rewrite", ...)
  absl::StatusOr<UOpPtr> (*run)(const UOpPtr& sink, const Renderer& renderer);
};

// The steps between the optimized AST and the linearizer, in order, for `renderer` (a renderer with a
// pre_matcher gets a "pre_matcher" step before "final rewrite").
std::vector<CodegenStep> CodegenSteps(const Renderer& renderer);

// A graph after a step, for tools and tests that look inside the pipeline.
using CodegenStages = std::vector<std::pair<std::string, UOpPtr>>;

// tinygrad's full_rewrite: every step on an optimized AST (a SINK with KernelInfo), then the linearizer. When
// `stages` is given, it receives the graph after each step. With SPEC=1 (uop/spec.h) the optimized AST, the
// graph after each step and the linear program are verified, and a failure names the step that broke it.
absl::StatusOr<std::vector<UOpPtr>> FullRewrite(const UOpPtr& optimized_ast, const Renderer& renderer,
                                                CodegenStages* stages = nullptr);
// FullRewrite with `steps` in place of CodegenSteps(renderer): for tests of the pipeline and its checks.
absl::StatusOr<std::vector<UOpPtr>> RunCodegenSteps(const UOpPtr& optimized_ast, const Renderer& renderer,
                                                    absl::Span<const CodegenStep> steps,
                                                    CodegenStages* stages = nullptr);

// How the kernel is optimized before lowering.
struct CompileOptions {
  // tinygrad's default (no NOOPT): tensor cores where they apply, else hand-coded optimizations. False is
  // NOOPT=1. Ignored when `opts` is given.
  bool optimize = true;
  // Apply exactly these opts instead.
  std::optional<std::vector<Opt>> opts;
};

// The program of an optimized AST (Kernel::GetOptimizedAst's): every codegen step, the linearizer and the
// renderer (CompileKernel after the opts; BEAM search renders its candidates with it). `stages` as below;
// the program's applied_opts are left empty.
absl::StatusOr<ProgramSpec> CompileOptimizedAst(const UOpPtr& optimized_ast, const Renderer& renderer,
                                                CodegenStages* stages = nullptr);

// The kernel AST `ast` optimized, lowered, linearized and rendered for `renderer`. `names` numbers repeated
// kernel names (E_3, E_3n1, ...); `stages`, when given, receives the optimized AST ("optimized_ast") and the
// graph after each codegen step.
absl::StatusOr<ProgramSpec> CompileKernel(const UOpPtr& ast, const Renderer& renderer,
                                          const CompileOptions& options, KernelNameCounter* names,
                                          CodegenStages* stages = nullptr);

// CompileKernel in two halves, for drivers that compile many kernels at once (on threads): the kernel's name
// depends on its opts and its number on the kernels named before it, so a driver optimizes in parallel,
// numbers the names in its own order (`names->Next(kernel.BaseName())`), then compiles in parallel. Both
// halves only read shared state; each call may run on its own thread.
//
// The first half: the kernel with its opts applied.
absl::StatusOr<Kernel> OptimizeKernel(const UOpPtr& ast, const Renderer& renderer,
                                      const CompileOptions& options);
// The second half: the optimized kernel named `name`, lowered, linearized and rendered for its renderer, with
// its estimates (mem from the kernel's AST).
absl::StatusOr<ProgramSpec> CompileOptimizedKernel(const Kernel& kernel, const std::string& name,
                                                   CodegenStages* stages = nullptr);

}  // namespace uopc

#endif  // UOPC_CODEGEN_CODEGEN_H_
