// Writes the kernels of examples/mnist's first training step (weights' initialisation, forward, backward and
// Adam's update, batch 512) as the BEAM tests read them (codegen/testdata/mnist_step_kernels.jsonl): one JSON
// object a line, {"id": "mnist_step/N", "ast": "<the kernel AST in textual IR>"}, each unique kernel once, in
// schedule order, as the CPU device schedules them (LLVM's are the same; CUDA splits the weight gradients'
// batch into other groups, and the other devices get tinygrad's gradient graphs), without running anything.
// Given a file, it checks that the file holds them instead (//examples:mnist_step_kernels_test).
//
//   ./bazelw run //examples:mnist_step_kernels > codegen/testdata/mnist_step_kernels.jsonl
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "examples/mnist_model.h"
#include "nlohmann/json.hpp"
#include "nn/optim.h"
#include "nn/state.h"
#include "schedule/schedule.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

absl::StatusOr<std::string> StepKernels() {
  constexpr int64_t kBatch = 512;  // examples/mnist's --batch default
  Tensor::ManualSeed(42);
  MnistModel model;
  nn::Adam opt(nn::GetParameters(model));
  UOPC_RETURN_IF_ERROR(opt.status());
  Tensor x = Tensor::Empty({kBatch, 1, 28, 28}, dtypes::kUInt8);
  Tensor y = Tensor::Empty({kBatch}, dtypes::kUInt8);
  std::vector<UOpPtr> roots;
  {
    Tensor::Train training;
    opt.ZeroGrad();
    Tensor loss = model(x).SparseCategoricalCrossentropy(y);
    UOPC_RETURN_IF_ERROR(loss.Backward());
    UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> updates, opt.ScheduleStep());
    updates.insert(updates.begin(), loss);
    for (const Tensor& t : updates) {
      UOPC_RETURN_IF_ERROR(t.status());
      roots.push_back(t.uop());
    }
  }
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(UOp::Sink(roots)));
  absl::flat_hash_set<const UOp*> seen;
  std::string out;
  int64_t n = 0;
  for (const ScheduleItem& item : schedule.items) {
    if (item.ast->op() != Ops::SINK || !seen.insert(item.ast.get()).second) continue;
    nlohmann::json line = {{"id", absl::StrCat("mnist_step/", n++)}, {"ast", PrintIr(item.ast.get())}};
    absl::StrAppend(&out, line.dump(), "\n");
  }
  return out;
}

absl::Status Run(int argc, char** argv) {
  UOPC_ASSIGN_OR_RETURN(std::string kernels, StepKernels());
  if (argc < 2) {
    std::fputs(kernels.c_str(), stdout);
    return absl::OkStatus();
  }
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", argv[1]));
  std::stringstream file;
  file << in.rdbuf();
  if (file.str() != kernels) {
    return absl::FailedPreconditionError(absl::StrCat(
        argv[1], " is not the mnist step's kernels any more; write it again with ",
        "./bazelw run //examples:mnist_step_kernels > codegen/testdata/mnist_step_kernels.jsonl"));
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  absl::Status status = uopc::Run(argc, argv);
  if (!status.ok()) {
    std::fprintf(stderr, "error: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
