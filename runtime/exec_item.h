// ExecItem: one unit of device work, ready to run (tinygrad v0.10.3's ExecItem with its CompiledRunner and
// BufferCopy runners, engine/realize.py).
//
// An ExecItem is either a compiled program with its buffers (in the program's parameter order), the values of
// its variables and its launch dims, or a copy between two buffers of one size. Each buffer is named by its
// BUFFER node, which the item holds (so the memory stays allocated while the item lives) and by which a run
// may swap in other memory. RunSchedule (runtime/realize.h) lowers each schedule item to an ExecItem and runs
// it; a capture (CapturedRuns, for TinyJit) keeps the items and runs them again on new inputs. Run is the one
// place a run is timed, counted and printed at DEBUG=2, and LaunchDims the one place launch dims come from a
// ProgramSpec (BEAM's timing and the corpus runners launch with it too).
//
//   ASSIGN_OR_RETURN(ExecItem item, ExecItem::ForProgram(program, device, nodes, buffers, var_values));
//   ASSIGN_OR_RETURN(KernelRun run, item.Run({}, {.debug = 2}));      // prints the DEBUG=2 line
//   ASSIGN_OR_RETURN(run, item.Run({{nodes[1].get(), other_buffer}}));  // the same, reading other memory
#ifndef UOPC_RUNTIME_EXEC_ITEM_H_
#define UOPC_RUNTIME_EXEC_ITEM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "codegen/program_spec.h"
#include "runtime/collective.h"
#include "runtime/device.h"
#include "uop/uop.h"

namespace uopc {

// The launch dims of a program (tinygrad's ProgramSpec.launch_dims): its global and local sizes as rendered,
// 1 in the dims it leaves out (all of them on the CPU), a symbolic dim evaluated for `var_values` (by
// name). Errors: a symbolic dim whose variable has no value, or whose value is not positive.
absl::StatusOr<LaunchParams> LaunchDims(const ProgramSpec& spec,
                                        const absl::flat_hash_map<std::string, int64_t>& var_values = {});

// What one run did (RunSchedule's result, its listener's argument and the DEBUG=2 line). The compile time and
// source are the lowering's: RunSchedule fills them, ExecItem::Run leaves them empty.
struct KernelRun {
  std::string name;
  std::string device;
  double compile_seconds = 0;  // 0 when the kernel came from the cache
  double run_seconds = 0;
  // The program's Estimates for this run's variable values: operations, the unique-memory estimate of the
  // bytes moved (its `mem`, at most `lds`), and the bytes loaded and stored. A copy moves `bytes` = `lds`.
  double flops = 0;
  double bytes = 0;
  double lds = 0;
  // DeviceMemoryUsed() after the run: the bytes of all allocated device buffers.
  int64_t mem_used = 0;
  int num_buffers = 0;
  // The rendered source (empty for copies).
  std::string src;
};

// tinygrad's DEBUG=2 line for a run: the kernel's number in the process, its name, the device memory in use,
// its time and the running total, GFLOPS and GB/s (unique memory | loads and stores).
std::string KernelRunLine(const KernelRun& run, int64_t number, double total_seconds);

// Appends DEBUG output to `out`, or writes it to stderr when `out` is null.
void EmitDebugText(absl::string_view text, std::string* out);

// Memory to use instead of an item's own, by BUFFER node: of the same dtype and size, on the same device.
using BufferReplacements = absl::flat_hash_map<const UOp*, Buffer*>;

struct ExecOptions {
  // Waits for the run to finish and measures it (KernelRun::run_seconds, else 0).
  bool timed = true;
  // tinygrad's DEBUG: from 2 the run prints its line (KernelRunLine), numbered and its time summed across the
  // process's runs, to `debug_out` (stderr when null).
  int debug = 0;
  std::string* debug_out = nullptr;
  // Values for the program's variables by name, instead of those the item was made with (a variable it does
  // not name keeps its value): a replay of a symbolic step at a new position. The caller checks the ranges
  // (the variables' binds do).
  const absl::flat_hash_map<std::string, int64_t>* var_values = nullptr;
};

// An all-reduce item that has started (ExecItem::StartAllReduce): its source is read and the collective is in
// flight; Finish writes its output buffer, which nothing may touch until then.
class StartedAllReduce {
 public:
  // The buffer Finish writes.
  Buffer* output() const { return output_; }
  // Lets the collective advance; true when Finish will not wait.
  absl::StatusOr<bool> Ready() { return pending_->Test(); }
  // Waits for the collective and writes the output. The run's time is the host's in the item: reading the
  // source and starting, then waiting and writing (not the items run in between); it is printed at DEBUG=2
  // as ExecItem::Run prints. Call it once.
  absl::StatusOr<KernelRun> Finish(const ExecOptions& options = {});

 private:
  friend class ExecItem;
  StartedAllReduce() = default;
  std::unique_ptr<PendingAllReduce> pending_;
  Buffer* output_ = nullptr;
  KernelRun run_;
  double start_seconds_ = 0;  // the host's time in StartAllReduce
};

class ExecItem {
 public:
  // A program of `device` launched on `buffers` (its parameters, in order; `nodes` their BUFFER nodes) with
  // `var_values` for program->spec().vars and `launch_var_values` for its launch_vars (those only its
  // symbolic launch dims read), its launch dims and Estimates evaluated for them. Errors: counts that do not
  // match the program's, a launch variable without a value, a dim or estimate that cannot be evaluated.
  static absl::StatusOr<ExecItem> ForProgram(
      std::shared_ptr<Program> program, Device& device, std::vector<UOpPtr> nodes,
      std::vector<Buffer*> buffers, std::vector<int64_t> var_values,
      absl::flat_hash_map<std::string, int64_t> launch_var_values = {});
  // A copy of buffers[1] into buffers[0] (`nodes` their BUFFER nodes). Errors: not two buffers of one size.
  // With `all_reduce`, the bytes pass through the communicator's all-reduce on the way (the communicator is
  // looked up when the item runs).
  static absl::StatusOr<ExecItem> ForCopy(std::vector<UOpPtr> nodes, std::vector<Buffer*> buffers,
                                          std::optional<AllReduceSpec> all_reduce = std::nullopt);

  // Runs the item once, on its own buffers but for those `replace` names. Errors: the device's.
  absl::StatusOr<KernelRun> Run(const BufferReplacements& replace = {},
                                const ExecOptions& options = {}) const;
  // An all-reduce item's run in two halves: reads the source and starts the collective; the result's Finish
  // writes the output. Run is the two at once. Errors: not an all-reduce, the communicator's.
  absl::StatusOr<StartedAllReduce> StartAllReduce(const BufferReplacements& replace = {}) const;
  // The memory the item reads and writes: its buffers, but for those `replace` names.
  std::vector<Buffer*> BuffersWith(const BufferReplacements& replace) const;

  bool is_copy() const { return program_ == nullptr; }
  bool is_all_reduce() const { return all_reduce_.has_value(); }
  // The kernel's name, "copy N, DEST <- SRC", or "all_reduce N, COMMUNICATOR ADD".
  const std::string& name() const { return name_; }
  // The device it runs on.
  const std::string& device() const { return device_; }
  // The BUFFER nodes of the buffers, in the item's order.
  const std::vector<UOpPtr>& nodes() const { return nodes_; }
  const std::vector<Buffer*>& buffers() const { return buffers_; }
  const std::vector<int64_t>& var_values() const { return var_values_; }
  const LaunchParams& launch() const { return launch_; }

 private:
  ExecItem() = default;
  // A run's record before it runs: name, device, estimates.
  KernelRun RunRecord(int num_buffers) const;

  std::shared_ptr<Program> program_;         // null for a copy
  std::optional<AllReduceSpec> all_reduce_;  // a copy through an all-reduce
  std::string name_;
  std::string device_;
  std::vector<UOpPtr> nodes_;
  std::vector<Buffer*> buffers_;
  std::vector<int64_t> var_values_;
  absl::flat_hash_map<std::string, int64_t> launch_var_values_;
  LaunchParams launch_;  // for var_values_ and launch_var_values_
  // KernelRun's estimates, for var_values_.
  double flops_ = 0, bytes_ = 0, lds_ = 0;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_EXEC_ITEM_H_
