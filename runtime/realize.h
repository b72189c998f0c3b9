// Realize: running a schedule on its devices (tinygrad v0.10.3's engine/realize.py and the buffers of
// `UOp.buffer`).
//
// The memory of a tensor-level BUFFER node lives in the process-wide `BufferStore`, keyed by the node: a
// Tensor made from values writes them there, a kernel's outputs are allocated there when it first runs, and
// reading a tensor back reads them. `RunSchedule` compiles each kernel through the codegen stages for its
// device's renderer (once per AST and device: a per-process kernel cache), allocates the buffers it needs,
// and lowers each item to an ExecItem (runtime/exec_item.h: a kernel's program, or a COPY between devices)
// that it runs, in order. A BUFFER nobody holds any more (only the store) is freed by `BufferStore::Collect`,
// which RunSchedule calls first.
//
//   ASSIGN_OR_RETURN(Schedule s, CreateSchedule(sink));
//   RETURN_IF_ERROR(RunSchedule(s, {.debug = 2}));
//   ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, BufferStore::Global().Read(buffer_node));
#ifndef UOPC_RUNTIME_REALIZE_H_
#define UOPC_RUNTIME_REALIZE_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/device.h"
#include "runtime/exec_item.h"
#include "schedule/schedule.h"
#include "uop/uop.h"

namespace uopc {

// Device memory of BUFFER nodes. Thread safe.
class BufferStore {
 public:
  static BufferStore& Global();

  // The node's memory, allocated on its device (DEVICE source) on first use.
  absl::StatusOr<Buffer*> GetOrAllocate(const UOpPtr& buffer);
  // nullptr when the node has no memory yet.
  Buffer* Find(const UOp* buffer);
  bool IsAllocated(const UOp* buffer) { return Find(buffer) != nullptr; }
  // Host bytes in and out (exactly the buffer's size in bytes).
  absl::Status Write(const UOpPtr& buffer, absl::Span<const uint8_t> bytes);
  absl::StatusOr<std::vector<uint8_t>> Read(const UOpPtr& buffer);
  // Frees the memory of nodes nothing but the store holds.
  void Collect();
  size_t size();

 private:
  struct Entry {
    UOpPtr node;
    std::unique_ptr<Buffer> buffer;
  };
  std::mutex mu_;
  absl::flat_hash_map<const UOp*, Entry> entries_;  // guarded by mu_
};

struct RealizeOptions {
  // tinygrad's DEBUG: 2 prints a line per kernel run (name, time, GFLOPS, GB/s), 3 adds its buffers and opts,
  // 4 its source, 6 its uop listing.
  int debug = 0;
  // NOOPT=1: no opts (the kernels as the scheduler wrote them).
  bool noopt = false;
  // Threads that compile a schedule's kernels (opts, codegen and the device's compiler) before they run:
  // 0 is one per core (oneTBB's default), 1 compiles each kernel when it first runs. The programs, their
  // names and the order of the runs are the same either way. UOPC_COMPILE_THREADS sets it.
  int compile_threads = 0;
  // BEAM=n: each kernel's opts chosen by BEAM search of width n (runtime/search_driver.h), once per process
  // and kernel, and kept in the disk cache; 0: the hand-coded opts. NOOPT wins over it, as in tinygrad.
  int beam = 0;
  // Where DEBUG output goes (stderr when null).
  std::string* debug_out = nullptr;

  // DEBUG, NOOPT, BEAM and UOPC_COMPILE_THREADS from the environment, as tinygrad reads them.
  static RealizeOptions FromEnvironment();
};

// Called after every kernel run with what it did (for programs that report their kernels, like the
// quickstart); an empty function removes it. Set it before running, not while.
void SetKernelRunListener(std::function<void(const KernelRun&)> listener);

// Runs the schedule's items in order, and returns (and reports to the listener) their runs. An all-reduce
// (Tensor::AllReduce) starts where it stands and finishes before the first later item that reads or writes
// its output, or at the end: the items between overlap its collective, and its run comes when it finishes.
absl::StatusOr<std::vector<KernelRun>> RunSchedule(const Schedule& schedule,
                                                   const RealizeOptions& options = {});

// A recording of the work RunSchedule did: the ExecItems it ran, in order (tinygrad's captured jit_cache).
// `Replay` runs them again without scheduling, codegen or the kernel cache, on the same buffers or, where a
// BUFFER node is replaced, on another buffer of the same dtype, size and device: what TinyJit (tensor/jit.h)
// replays. The items hold their BUFFER nodes, so their memory stays allocated as long as the recording lives.
// Variables are bound to the values they had when recorded.
class CapturedRuns {
 public:
  void Add(ExecItem item) { items_.push_back(std::move(item)); }

  // Runs the recorded items in order. `replace` maps recorded BUFFER nodes to the nodes to use instead
  // (their memory must exist, with the same dtype, size and device). `kernel_seconds`, when given, receives
  // the summed execution time of the kernels as the devices measure it, where measuring does not make the
  // host wait for each kernel (Device::TimingWaits: a GPU's kernels count 0).
  // `var_values` gives the variables (by name) new values for this replay; others keep their recorded ones.
  // Between two copies the items of different devices touch disjoint memory: each device's run of them goes
  // on a thread of its own, concurrently (sharded tensors); the kernel seconds count the longest of them.
  // All-reduces overlap the items after them as in RunSchedule.
  absl::Status Replay(const absl::flat_hash_map<const UOp*, UOpPtr>& replace = {},
                      double* kernel_seconds = nullptr,
                      const absl::flat_hash_map<std::string, int64_t>& var_values = {}) const;
  const std::vector<ExecItem>& items() const { return items_; }
  // The number of recorded items, and of them kernels (the others are copies).
  size_t size() const { return items_.size(); }
  size_t kernel_count() const;
  // Every BUFFER node the items use, each once, in order of first use.
  std::vector<UOpPtr> Buffers() const;
  // The recorded kernels' names, in order ("copy" for copies).
  std::vector<std::string> Names() const;

 private:
  std::vector<ExecItem> items_;
};

// While alive, every RunSchedule on this thread appends what it runs to `runs` (as well as running it).
// An inner capture takes over until it ends.
class ScopedRunCapture {
 public:
  explicit ScopedRunCapture(CapturedRuns* runs);
  ~ScopedRunCapture();
  ScopedRunCapture(const ScopedRunCapture&) = delete;
  ScopedRunCapture& operator=(const ScopedRunCapture&) = delete;

 private:
  CapturedRuns* previous_;
};

// Empties the per-process kernel cache and restarts the numbering of kernel names, so that a test can compile
// the same kernels twice (serially and in parallel). No schedule may be running.
void ResetKernelCacheForTesting();

}  // namespace uopc

#endif  // UOPC_RUNTIME_REALIZE_H_
