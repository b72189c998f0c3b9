// The phases of tinygrad's compile benchmark (test/external/external_benchmark_schedule.py), timed one by one
// for any model: build the tensor graph, schedule it, optimize every unique kernel (the hand-coded opts),
// "prep" (name each kernel and write its optimized AST) and "rewrite" (every codegen step and the
// linearizer), with the total count of linearized uops tinygrad prints. Unique kernels are the schedule's
// SINK ASTs in order of first appearance, as tinygrad's dict of `ast.key` keeps them; names are numbered in
// that order.
//
// With `threads` > 1 the opts, prep and rewrite phases run on a oneTBB arena of that many threads; names are
// still numbered in kernel order, so the kernels are the same as with one thread.
//
//   absl::StatusOr<CompilePhases> p = MeasureCompilePhases([] { return MyModel(); }, clang, {});
//   std::cout << p->Report();
#ifndef UOPC_TENSOR_TESTING_COMPILE_PHASES_H_
#define UOPC_TENSOR_TESTING_COMPILE_PHASES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "renderer/renderer.h"
#include "tensor/tensor.h"
#include "uop/uop.h"

namespace uopc {

struct CompilePhasesOptions {
  // 1: every kernel in turn, as tinygrad. More: the per-kernel phases on that many threads.
  int threads = 1;
  // Also render every kernel's source (not part of tinygrad's benchmark; timed on its own).
  bool render = false;
};

struct CompilePhases {
  // Seconds per phase: the tensor graph, the schedule, the opts, prep, rewrite, and render (0 unless asked).
  double tensor = 0, schedule = 0, opts = 0, prep = 0, rewrite = 0, render = 0;
  int64_t schedule_items = 0;
  std::vector<UOpPtr> unique_asts;   // in order of first appearance
  std::vector<std::string> names;    // one per unique kernel
  std::vector<int64_t> uop_counts;   // linearized uops per unique kernel
  std::vector<std::string> sources;  // rendered source per kernel, when asked
  int64_t total_uops() const;
  // tinygrad's five lines, the uop count and the total, e.g. "***** model schedule in    3.21 ms".
  std::string Report() const;
};

// Runs the phases once on the tensor `build` returns, for `renderer`'s target.
absl::StatusOr<CompilePhases> MeasureCompilePhases(const std::function<Tensor()>& build,
                                                   const Renderer& renderer,
                                                   const CompilePhasesOptions& options = {});

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_COMPILE_PHASES_H_
