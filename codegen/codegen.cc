#include "codegen/codegen.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "codegen/devectorizer.h"
#include "codegen/expander.h"
#include "codegen/final_rewrite.h"
#include "codegen/heuristic.h"
#include "codegen/ignore.h"
#include "codegen/linearize.h"
#include "codegen/lowerer.h"
#include "codegen/remove_reduce.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/rewrite_recorder.h"
#include "uop/kernel_info.h"
#include "uop/print.h"
#include "uop/spec.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

absl::StatusOr<UOpPtr> RewritePreMatcher(const UOpPtr& sink, const Renderer& renderer) {
  return TryGraphRewrite(sink, *renderer.pre_matcher(), {.name = "pre_matcher"});
}

// Prefixes a step's error with its name, so that a failure says where in the pipeline it happened.
absl::Status InStep(absl::string_view step, const absl::Status& s) {
  return absl::Status(s.code(), absl::StrCat(step, ": ", s.message()));
}

}  // namespace

std::vector<CodegenStep> CodegenSteps(const Renderer& renderer) {
  std::vector<CodegenStep> steps = {
      {"lowerer", &RewriteLowerer},          {"initial symbolic", &RewriteInitialSymbolic},
      {"store_ignore", &RewriteStoreIgnore}, {"move_ignore", &RewriteMoveIgnore},
      {"expander", &RewriteExpander},        {"remove_reduce", &RewriteRemoveReduce},
      {"devectorize", &RewriteDevectorize},
  };
  if (renderer.pre_matcher() != nullptr) steps.push_back({"pre_matcher", &RewritePreMatcher});
  steps.push_back({"final rewrite", &RewriteFinal});
  return steps;
}

absl::StatusOr<std::vector<UOpPtr>> FullRewrite(const UOpPtr& optimized_ast, const Renderer& renderer,
                                                CodegenStages* stages) {
  return RunCodegenSteps(optimized_ast, renderer, CodegenSteps(renderer), stages);
}

absl::StatusOr<std::vector<UOpPtr>> RunCodegenSteps(const UOpPtr& optimized_ast, const Renderer& renderer,
                                                    absl::Span<const CodegenStep> steps,
                                                    CodegenStages* stages) {
  const bool spec = SpecChecksEnabled();
  // tinygrad verifies the optimized AST (Kernel.get_optimized_ast's modified_ast) against its spec.
  if (spec) {
    if (absl::Status s = VerifyKernelAst(optimized_ast.get()); !s.ok()) {
      return SpecStepError("codegen", "optimized_ast", s);
    }
  }
  UOpPtr sink = optimized_ast;
  for (const CodegenStep& step : steps) {
    absl::StatusOr<UOpPtr> next = step.run(sink, renderer);
    if (!next.ok()) return InStep(step.name, next.status());
    sink = *std::move(next);
    if (stages != nullptr) stages->emplace_back(std::string(step.name), sink);
    if (spec) {
      if (absl::Status s = VerifyCodegenGraph(sink.get()); !s.ok())
        return SpecStepError("codegen", step.name, s);
    }
  }
  absl::StatusOr<std::vector<UOpPtr>> uops = Linearize(sink);
  if (!uops.ok()) return InStep("linearizer", uops.status());
  // tinygrad verifies the linear program (linearize.py's type_verify).
  if (spec) {
    std::vector<const UOp*> raw(uops->size());
    std::transform(uops->begin(), uops->end(), raw.begin(), [](const UOpPtr& u) { return u.get(); });
    if (absl::Status s = VerifyProgram(raw); !s.ok()) return SpecStepError("codegen", "linearizer", s);
  }
  return uops;
}

absl::StatusOr<Kernel> OptimizeKernel(const UOpPtr& ast, const Renderer& renderer,
                                      const CompileOptions& options) {
  // VIZ: the opts' rewrites join the kernel's group when CompileKernel opened one, else form their own.
  RewriteGroupScope viz_group("opts", /*join_open_group=*/true);
  if (SpecChecksEnabled()) {
    if (absl::Status s = VerifyKernelAst(ast.get()); !s.ok()) {
      return absl::Status(s.code(),
                          absl::StrCat("SPEC: the kernel AST given to codegen is invalid: ", s.message()));
    }
  }
  UOPC_ASSIGN_OR_RETURN(Kernel kernel, Kernel::Create(ast, renderer));
  if (options.opts.has_value()) {
    for (const Opt& opt : *options.opts) {
      UOPC_RETURN_IF_ERROR(kernel.ApplyOpt(opt));
    }
  } else if (options.optimize) {
    UOPC_RETURN_IF_ERROR(ApplyDefaultOptimizations(kernel));
  }
  return kernel;
}

absl::StatusOr<ProgramSpec> CompileOptimizedAst(const UOpPtr& optimized_ast, const Renderer& renderer,
                                                CodegenStages* stages) {
  UOPC_ASSIGN_OR_RETURN(std::vector<UOpPtr> uops, FullRewrite(optimized_ast, renderer, stages));
  if (uops.empty() || uops.back()->op() != Ops::SINK) {
    return absl::InternalError("the linear program does not end in its SINK");
  }
  std::vector<const UOp*> raw(uops.size());
  std::transform(uops.begin(), uops.end(), raw.begin(), [](const UOpPtr& u) { return u.get(); });
  absl::StatusOr<std::string> src = renderer.Render(raw);
  if (!src.ok()) return InStep("render", src.status());

  UOPC_ASSIGN_OR_RETURN(ProgramSpec p, ProgramSpec::FromUops(std::move(uops), *std::move(src)));
  // tinygrad launches a program for a target with local dims on [1, 1, 1] when it has no SPECIAL.
  if (renderer.has_local() && !p.global_size.has_value()) {
    p.global_size = p.local_size = std::vector<int64_t>{1, 1, 1};
  }
  if (RewriteRecorder::Enabled()) {
    RewriteRecorder::AddText("uops", PrintUOpsListing(raw));
    RewriteRecorder::AddText("source", p.src);
  }
  return p;
}

absl::StatusOr<ProgramSpec> CompileOptimizedKernel(const Kernel& kernel, const std::string& name,
                                                   CodegenStages* stages) {
  RewriteGroupScope viz_group(name, /*join_open_group=*/true);  // VIZ: one group per kernel
  viz_group.SetLabel(name);
  UOPC_ASSIGN_OR_RETURN(UOpPtr optimized, kernel.GetOptimizedAst(nullptr, name));
  if (stages != nullptr) stages->emplace_back("optimized_ast", optimized);
  UOPC_ASSIGN_OR_RETURN(ProgramSpec p, CompileOptimizedAst(optimized, kernel.renderer(), stages));
  p.applied_opts = kernel.applied_opts();
  p.estimates.mem = Estimates::MemOfAst(*kernel.ast());
  return p;
}

absl::StatusOr<ProgramSpec> CompileKernel(const UOpPtr& ast, const Renderer& renderer,
                                          const CompileOptions& options, KernelNameCounter* names,
                                          CodegenStages* stages) {
  RewriteGroupScope viz_group("kernel");  // VIZ: the opts and codegen of this kernel, one group
  UOPC_ASSIGN_OR_RETURN(Kernel kernel, OptimizeKernel(ast, renderer, options));
  const std::string base = kernel.BaseName();
  return CompileOptimizedKernel(kernel, names != nullptr ? names->Next(base) : base, stages);
}

}  // namespace uopc
