// CpuProgram: a kernel compiled to host machine code and run in this process, the one launch path of both
// CPU devices (CPU: clang and dlopen; LLVM: LLVM's ORC JIT), as tinygrad's CPU and LLVM devices share one
// CPUProgram. The devices differ only in how they compile and load the code; they hand CpuProgram the
// kernel's entry point and whatever keeps the code loaded.
//
// Every CPU kernel is called through one signature, which each device appends to the source in its own
// language (cpu_device.h, llvm_device.h):
//     void uopc_entry(void* const* bufs, const int* vars, int core_id);
// It calls the kernel with its buffers, its variables and, for a kernel split across cores (its spec has
// launch dims; see renderer.h's CoreSplit), `core_id` last.
//
// A launch with global size (n, 1, 1) runs the entry for core ids 0 .. n - 1 on the device's thread pool
// (cpu_thread_pool.h) and returns when all are done; a kernel that is not split takes only 1s and runs on
// the calling thread.
#ifndef UOPC_RUNTIME_CPU_PROGRAM_H_
#define UOPC_RUNTIME_CPU_PROGRAM_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "codegen/program_spec.h"
#include "runtime/cpu_thread_pool.h"
#include "runtime/device.h"

namespace uopc {

// The name and type of the entry point every CPU program exports.
inline constexpr char kCpuEntryName[] = "uopc_entry";
using CpuEntryFunction = void (*)(void* const* bufs, const int* vars, int core_id);

// Whether `spec`'s kernel takes a core id as its last parameter: it has launch dims (codegen gives a kernel
// split across cores global size (chunks, 1, 1); tinygrad's CPU sources have none).
bool TakesCoreId(const ProgramSpec& spec);

class CpuProgram : public Program {
 public:
  // `loaded` keeps `entry`'s code alive as long as the program; `pool` runs its chunks.
  CpuProgram(Device& device, ProgramSpec spec, CpuEntryFunction entry, std::shared_ptr<void> loaded,
             std::shared_ptr<CpuThreadPool> pool)
      : Program(std::move(spec)),
        device_(device),
        entry_(entry),
        loaded_(std::move(loaded)),
        pool_(std::move(pool)) {}

  // Errors: wrong counts, buffers of another device, a variable outside int, local sizes other than 1, a
  // global size other than (n, 1, 1) with n >= 1 for a split kernel or (1, 1, 1) for one that is not.
  absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                      const LaunchParams& params, double* seconds) override;

 private:
  Device& device_;
  CpuEntryFunction entry_;
  std::shared_ptr<void> loaded_;
  std::shared_ptr<CpuThreadPool> pool_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_CPU_PROGRAM_H_
