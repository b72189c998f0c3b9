// TinyJit: a captured step (tinygrad v0.10.3's engine/jit.py).
//
// A TinyJit wraps a function of tensors that returns tensors, such as a training step. Its first call runs
// the function as usual (graphs built, scheduled, compiled and run, so one-time state such as optimizer
// moments exists); its second runs it again while recording every kernel and copy its realizes run
// (runtime/realize.h's CapturedRuns); every later call replays that recording with the new inputs' buffers in
// place of the captured inputs' buffers, without building a graph, scheduling or compiling, and returns the
// tensors the capturing call returned, whose buffers the replay rewrote.
//
//   TinyJit step([&](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
//     opt.ZeroGrad();
//     Tensor loss = model(in[0]).SparseCategoricalCrossentropy(in[1]);
//     UOPC_RETURN_IF_ERROR(loss.Backward());
//     UOPC_RETURN_IF_ERROR(opt.Step());
//     return std::vector<Tensor>{loss};
//   });
//   for (...) { ASSIGN_OR_RETURN(std::vector<Tensor> out, step({x, y})); ... out[0].Item<float>() ... }
//
// The contract is tinygrad's: what a replay repeats is the kernels, so
//  - data must come in through the inputs: a tensor made from host values inside the function, a Python-side
//    counter, or anything read on the host is frozen at its captured value (random numbers are fine: their
//    counter is a device tensor the kernels advance);
//  - every call's inputs have the captured shapes, dtypes and devices; others are an error naming the input
//    (call `Reset()` to capture again);
//  - the returned tensors are the same objects on every replay: read them before the next call;
//  - a returned tensor may not be an input, nor a view of one (its buffer would not be the replay's).
// JIT=0 in the environment (tinygrad's switch) makes every call run the function.
//
// A symbolic step (tinygrad's jitted forward with a Variable argument) takes bound variables beside its
// tensors: the function builds its graph with them (a KV cache shrunk to start_pos + 1), the kernels take the
// variables as parameters, and a replay runs them with the values the call binds. Each call must bind the
// captured variables (same names and ranges), in the same order.
//
//   TinyJit step([&](absl::Span<const Tensor> in, absl::Span<const Sint> vars) { return Forward(in[0],
//   vars[0]); }); for (int pos = ...) { ASSIGN_OR_RETURN(Sint sp, Bind(start_pos, pos));
//   ASSIGN_OR_RETURN(auto out, step({tok}, {sp})); }
#ifndef UOPC_TENSOR_JIT_H_
#define UOPC_TENSOR_JIT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/realize.h"
#include "tensor/tensor.h"
#include "uop/uop.h"

namespace uopc {

class TinyJit {
 public:
  using Function = std::function<absl::StatusOr<std::vector<Tensor>>(absl::Span<const Tensor>)>;
  using SymbolicFunction =
      std::function<absl::StatusOr<std::vector<Tensor>>(absl::Span<const Tensor>, absl::Span<const Sint>)>;

  explicit TinyJit(Function function);
  explicit TinyJit(SymbolicFunction function);

  // Runs, captures or replays (see above). Inputs are realized first; each must be a tensor of a fixed shape
  // (not an error).
  absl::StatusOr<std::vector<Tensor>> operator()(absl::Span<const Tensor> inputs);
  absl::StatusOr<std::vector<Tensor>> operator()(std::initializer_list<Tensor> inputs) {
    return (*this)(absl::Span<const Tensor>(inputs.begin(), inputs.size()));
  }
  // With bound variables (each a Bind result), for a SymbolicFunction.
  absl::StatusOr<std::vector<Tensor>> operator()(absl::Span<const Tensor> inputs,
                                                 absl::Span<const Sint> vars);
  absl::StatusOr<std::vector<Tensor>> operator()(std::initializer_list<Tensor> inputs,
                                                 std::initializer_list<Sint> vars) {
    return (*this)(absl::Span<const Tensor>(inputs.begin(), inputs.size()),
                   absl::Span<const Sint>(vars.begin(), vars.size()));
  }

  // Calls so far (failed ones included), and whether the next call replays.
  int64_t calls() const { return calls_; }
  bool captured() const { return captured_; }
  // The recording: kernel count and names.
  const CapturedRuns& captured_runs() const { return runs_; }
  // The kernels' execution time in the last replay, as the devices measured it (0 before one; a GPU's
  // kernels count 0, since timing them would wait for each: Device::TimingWaits).
  double last_kernel_seconds() const { return last_kernel_seconds_; }
  // Forgets the capture: the next call runs the function, the one after captures again.
  void Reset();

 private:
  // An input's shape, dtype and device, for checking replays.
  struct Signature {
    Dims shape;
    DType dtype;
    std::string device;
    bool operator==(const Signature& o) const {
      return shape == o.shape && dtype == o.dtype && device == o.device;
    }
  };
  // The inputs as whole realized buffers (an input that is not one is replaced by a realized contiguous
  // copy, which the function is then given), and their BUFFER nodes, in input order.
  struct StagedInputs {
    std::vector<Tensor> tensors;
    std::vector<UOpPtr> buffers;
  };
  static absl::StatusOr<StagedInputs> StageInputs(absl::Span<const Tensor> inputs);
  absl::StatusOr<std::vector<Tensor>> RunFunction(absl::Span<const Tensor> inputs,
                                                  absl::Span<const Sint> vars);
  absl::StatusOr<std::vector<Tensor>> Capture(absl::Span<const Tensor> inputs, absl::Span<const Sint> vars);
  absl::StatusOr<std::vector<Tensor>> Replay(absl::Span<const Tensor> inputs, absl::Span<const Sint> vars);

  SymbolicFunction function_;
  bool enabled_;
  int64_t calls_ = 0;
  bool captured_ = false;
  CapturedRuns runs_;
  std::vector<Signature> signatures_;
  std::vector<UOpPtr> captured_inputs_;  // BUFFER nodes, in input order
  std::vector<UOpPtr> captured_vars_;    // the DEFINE_VARs the capture bound, in order
  std::vector<Tensor> outputs_;
  double last_kernel_seconds_ = 0;
};

}  // namespace uopc

#endif  // UOPC_TENSOR_JIT_H_
