// Random kernel ASTs for fuzzing codegen: small elementwise and reduce kernels over buffers read through
// random views (permuted, expanded, padded, shrunk, flipped, reshaped), with constants, masks, several dtypes
// and the ALU ops each dtype supports.
//
// One generator serves the gtest seed run (choices from a seeded PRNG) and the libFuzzer target (choices from
// the fuzz input), so a kernel either finds can be replayed by the other; a failure prints the AST as textual
// IR, ready for `uopc compile`.
//
//   ChoiceSource choices(/*seed=*/7);
//   RandomKernel k = MakeRandomKernel(choices);
//   // k.ast: SINK(STORE(DEFINE_GLOBAL 0, VIEW, value)); k.buffers: every DEFINE_GLOBAL, by arg.
#ifndef UOPC_CODEGEN_TESTING_RANDOM_KERNEL_H_
#define UOPC_CODEGEN_TESTING_RANDOM_KERNEL_H_

#include <cstdint>
#include <vector>

#include "shapetracker/testing/differential.h"
#include "uop/dtype.h"
#include "uop/uop.h"

namespace uopc {

struct RandomKernelOptions {
  int max_rank = 3;
  int max_depth = 3;     // of the ALU tree
  int max_view_ops = 3;  // movement ops behind one load's view
  int reduce_percent = 40;
};

struct RandomKernelBuffer {
  int64_t arg = 0;
  DType dtype;  // scalar
  int64_t size = 0;
};

struct RandomKernel {
  UOpPtr ast;
  std::vector<RandomKernelBuffer> buffers;  // index i holds DEFINE_GLOBAL i; 0 is the output
};

RandomKernel MakeRandomKernel(ChoiceSource& choices, const RandomKernelOptions& options = {});

}  // namespace uopc

#endif  // UOPC_CODEGEN_TESTING_RANDOM_KERNEL_H_
