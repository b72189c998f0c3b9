// The gradient programs of tinygrad's grad corpus (tensor/testdata/grad_programs.jsonl), written with the C++
// Tensor API, plus the programs of our own that tensor/testdata/harvest_grad_graphs.py adds (their tinygrad
// graphs, kernel counts, losses and gradients are in grad_graphs.jsonl). Shared by the tests that check their
// graphs, kernel counts and values (grad_programs_test) and their schedules on every target
// (schedule_targets_test).
//
// Building a program touches no device: its inputs are buffers with host data waiting to be uploaded (as
// tinygrad has them after realizing), on the default device (Tensor::SetDefaultDevice), so a program can be
// built and scheduled for a device this machine cannot open.
#ifndef UOPC_TENSOR_TESTING_GRAD_PROGRAMS_H_
#define UOPC_TENSOR_TESTING_GRAD_PROGRAMS_H_

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "tensor/tensor.h"

namespace uopc {

// A program's inputs (differentiated, in order) and its scalar loss.
struct GradProgramTensors {
  std::vector<Tensor> inputs;
  Tensor loss;
};

struct GradProgram {
  std::string name;  // the corpus's `program`
  std::function<GradProgramTensors()> build;
};

// The corpus's 34 programs in its order, then the programs of our own.
const std::vector<GradProgram>& GradPrograms();

// How many of GradPrograms() come from tinygrad's corpus (the first ones).
inline constexpr int kCorpusGradPrograms = 34;

// The loss followed by its gradient with respect to each input, unrealized, or the first error.
absl::StatusOr<std::vector<Tensor>> LossAndGradients(const GradProgram& program);

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_GRAD_PROGRAMS_H_
