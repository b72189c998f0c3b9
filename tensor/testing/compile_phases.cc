#include "tensor/testing/compile_phases.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "rewrite/rewrite_recorder.h"
#include "schedule/schedule.h"
#include "uop/parallel_for.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// f(0) ... f(n-1): in turn with one thread, else on `threads` threads, one kernel per task.
void ForEachKernel(size_t n, int threads, absl::FunctionRef<void(size_t)> f) {
  ParallelFor(static_cast<int64_t>(n), std::max(1, threads), [&](int64_t i) { f(static_cast<size_t>(i)); });
}

// The first error of `statuses` in kernel order, naming the kernel.
absl::Status FirstError(const std::vector<absl::Status>& statuses, absl::string_view phase) {
  for (size_t i = 0; i < statuses.size(); ++i) {
    if (!statuses[i].ok()) {
      return absl::Status(statuses[i].code(),
                          absl::StrCat(phase, " of unique kernel ", i, ": ", statuses[i].message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t CompilePhases::total_uops() const {
  int64_t total = 0;
  for (int64_t n : uop_counts) total += n;
  return total;
}

std::string CompilePhases::Report() const {
  auto line = [](absl::string_view what, double seconds) {
    return absl::StrFormat("***** model %-12s%8.2f ms\n", what, seconds * 1e3);
  };
  std::string out = line("tensor in", tensor) + line("schedule in", schedule) +
                    line(absl::StrFormat("opts(%2d) in", unique_asts.size()), opts) + line("prep in", prep) +
                    line("rewrite in", rewrite);
  if (render > 0) out += line("render in", render);
  absl::StrAppendFormat(&out, "%d uops in %d unique kernels (%d schedule items)\n", total_uops(),
                        unique_asts.size(), schedule_items);
  absl::StrAppendFormat(&out, "all %.2f ms\n", (tensor + schedule + opts + prep + rewrite + render) * 1e3);
  return out;
}

absl::StatusOr<CompilePhases> MeasureCompilePhases(const std::function<Tensor()>& build,
                                                   const Renderer& renderer,
                                                   const CompilePhasesOptions& options) {
  CompilePhases p;
  auto start = std::chrono::steady_clock::now();
  Tensor out = build();
  p.tensor = SecondsSince(start);
  UOPC_RETURN_IF_ERROR(out.status());

  start = std::chrono::steady_clock::now();
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(UOp::Sink({out.uop()})));
  p.schedule = SecondsSince(start);
  p.schedule_items = static_cast<int64_t>(schedule.items.size());
  absl::flat_hash_set<const UOp*> seen;
  for (const ScheduleItem& item : schedule.items) {
    if (item.ast->op() == Ops::SINK && seen.insert(item.ast.get()).second) p.unique_asts.push_back(item.ast);
  }
  const size_t n = p.unique_asts.size();
  std::vector<absl::Status> statuses(n);

  start = std::chrono::steady_clock::now();
  std::vector<std::optional<Kernel>> kernels(n);
  ForEachKernel(n, options.threads, [&](size_t i) {
    absl::StatusOr<Kernel> k = OptimizeKernel(p.unique_asts[i], renderer, CompileOptions{});
    if (k.ok()) {
      kernels[i].emplace(*std::move(k));
    } else {
      statuses[i] = k.status();
    }
  });
  p.opts = SecondsSince(start);
  UOPC_RETURN_IF_ERROR(FirstError(statuses, "opts"));

  start = std::chrono::steady_clock::now();
  KernelNameCounter counter;
  for (size_t i = 0; i < n; ++i) p.names.push_back(counter.Next(kernels[i]->BaseName()));
  std::vector<UOpPtr> optimized(n);
  ForEachKernel(n, options.threads, [&](size_t i) {
    absl::StatusOr<UOpPtr> ast = kernels[i]->GetOptimizedAst(nullptr, p.names[i]);
    if (ast.ok()) {
      optimized[i] = *std::move(ast);
    } else {
      statuses[i] = ast.status();
    }
  });
  p.prep = SecondsSince(start);
  UOPC_RETURN_IF_ERROR(FirstError(statuses, "prep"));

  start = std::chrono::steady_clock::now();
  std::vector<std::vector<UOpPtr>> programs(n);
  ForEachKernel(n, options.threads, [&](size_t i) {
    RewriteGroupScope viz_group(p.names[i]);  // VIZ: each kernel's codegen steps as one group
    absl::StatusOr<std::vector<UOpPtr>> uops = FullRewrite(optimized[i], renderer);
    if (uops.ok()) {
      programs[i] = *std::move(uops);
    } else {
      statuses[i] = uops.status();
    }
  });
  p.rewrite = SecondsSince(start);
  UOPC_RETURN_IF_ERROR(FirstError(statuses, "rewrite"));
  for (const std::vector<UOpPtr>& program : programs)
    p.uop_counts.push_back(static_cast<int64_t>(program.size()));

  if (options.render) {
    start = std::chrono::steady_clock::now();
    p.sources.resize(n);
    ForEachKernel(n, options.threads, [&](size_t i) {
      std::vector<const UOp*> raw;
      raw.reserve(programs[i].size());
      for (const UOpPtr& u : programs[i]) raw.push_back(u.get());
      absl::StatusOr<std::string> src = renderer.Render(raw);
      if (src.ok()) {
        p.sources[i] = *std::move(src);
      } else {
        statuses[i] = src.status();
      }
    });
    p.render = SecondsSince(start);
    UOPC_RETURN_IF_ERROR(FirstError(statuses, "render"));
  }
  return p;
}

}  // namespace uopc
