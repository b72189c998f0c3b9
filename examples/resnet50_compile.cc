// tinygrad's compile benchmark (test/external/external_benchmark_schedule.py), in C++: ResNet-50's forward
// pass on a batch of 64 224x224 images with Tensor::Empty weights, for the CPU target. It builds the tensor
// graph, schedules it, and codegens every unique kernel (hand-coded opts, optimized AST, every rewrite and
// the linearizer), printing the time of each phase as tinygrad does, and the total count of linearized uops
// (tinygrad: 19686 in 32 unique kernels). Nothing is compiled by clang or run.
//
//   ./bazelw run -c opt //examples:resnet50_compile                    # one run, as tinygrad's script
//   ./bazelw run -c opt //examples:resnet50_compile -- --threads=2 --runs=5 --render
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "renderer/cstyle.h"
#include "tensor/testing/compile_phases.h"
#include "tensor/testing/resnet50.h"

ABSL_FLAG(int, threads, 1, "threads for the per-kernel phases (opts, prep, rewrite); 1 is tinygrad's loop");
ABSL_FLAG(int, runs, 1, "runs in this process: the first is cold, the others warm");
ABSL_FLAG(bool, render, false,
          "also render every kernel's C source (timed apart; tinygrad's script does not)");

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  uopc::ClangRenderer clang;
  uopc::CompilePhasesOptions options{.threads = absl::GetFlag(FLAGS_threads),
                                     .render = absl::GetFlag(FLAGS_render)};
  // The model and its input exist before the clock starts, as in tinygrad's script.
  uopc::Resnet50 model = uopc::Resnet50::WithEmptyWeights();
  uopc::Tensor images = uopc::Tensor::Empty({64, 3, 224, 224});
  for (int run = 0; run < absl::GetFlag(FLAGS_runs); ++run) {
    absl::StatusOr<uopc::CompilePhases> p =
        uopc::MeasureCompilePhases([&] { return model.Forward(images); }, clang, options);
    if (!p.ok()) {
      std::cerr << "error: " << p.status() << "\n";
      return 1;
    }
    std::cout << (run == 0 ? "cold" : "warm") << " run, " << options.threads << " thread(s)\n" << p->Report();
  }
  return 0;
}
