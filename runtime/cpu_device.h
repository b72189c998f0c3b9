// The CPU device (tinygrad's runtime/ops_cpu.py): C compiled by the system clang and run in this process.
//
// ClangCompiler runs clang with tinygrad's flags (-O2 -march=native -ffreestanding -fno-math-errno -nostdlib)
// and links a position-independent shared object with no dependencies; CpuProgram loads it with dlopen from
// an in-memory file, and CpuProgram (cpu_program.h, shared with the LLVM device) launches it: on the calling
// thread, or, for a kernel codegen split across cores, its chunks on the device's thread pool
// (`Options::threads`, by default $CPU_THREADS or one per core; 1 renders and runs exactly as before).
//
// Departures from tinygrad, on purpose:
//  - tinygrad links the object itself (its ELF loader) and calls the kernel through ctypes with its real
//    parameter list. Here the device appends a small C entry point to the source,
//        void uopc_entry(void* const* bufs, const int* vars, int core_id) { E_3(bufs[0], bufs[1], bufs[2]); }
//    and the host always calls that one signature. The compiler, which sees the kernel's prototype, then
//    checks the argument count and converts each argument to the parameter's type, so a spec that does not
//    match the source is a compile error instead of undefined behaviour, and no per-arity function-pointer
//    casts exist.
//  - The compiler is $UOPC_CC, else `clang` (tinygrad reads $CC, which often names gcc; gcc has no `__fp16`
//    on x86).
//  - `-Wl,-z,defs`: a kernel that needs a runtime helper (clang 14 calls libgcc's `__truncdfhf2` for a
//    double to half cast, with a mismatched ABI) fails to link, with the linker's message, instead of loading
//    and computing garbage.
#ifndef UOPC_RUNTIME_CPU_DEVICE_H_
#define UOPC_RUNTIME_CPU_DEVICE_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "renderer/cstyle.h"
#include "runtime/cpu_thread_pool.h"
#include "runtime/device.h"
#include "runtime/host_cpu.h"

namespace uopc {

// C source to a shared object (the bytes of the .so file).
class ClangCompiler : public Compiler {
 public:
  // The flags, after the compiler's path and before `-o OUT SRC`.
  static const std::vector<std::string>& Flags();
  // $UOPC_CC when set, else "clang" (looked up in $PATH).
  static std::string DefaultCompilerPath();

  ClangCompiler(std::string compiler_path, CompileCache cache);

  const std::string& compiler_path() const { return compiler_path_; }
  std::string CacheName() const override { return "clang_jit"; }
  // `<compiler> --version`'s output, the flags and the host CPU's model and feature flags (-march=native
  // depends on them). Errors when the compiler cannot be run.
  absl::StatusOr<std::string> CacheKey() const override;
  absl::StatusOr<std::string> Compile(absl::string_view src) const override;

 private:
  std::string compiler_path_;
  mutable std::once_flag key_once_;
  mutable absl::StatusOr<std::string> key_;
};

class CpuDevice : public Device {
 public:
  struct Options {
    std::string compiler_path = ClangCompiler::DefaultCompilerPath();
    // nullopt: CompileCache::DefaultDirectory(); "": no cache.
    std::optional<std::string> cache_directory;
    // Worker threads, and the cores codegen splits a kernel across (renderer.h's CoreSplit); 1: no threads.
    int threads = CpuThreadPool::DefaultThreads();
    // The renderer's Renderer::vector_width (host_cpu.h: 16 unless UOPC_KERNELS=tinygrad).
    int vector_width = HostKernelVectorWidth();
  };

  CpuDevice() : CpuDevice(Options{}) {}
  explicit CpuDevice(Options options);

  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return &renderer_; }
  // spec.src and the entry point `uopc_entry` calling spec.name with spec.globals.size() buffers,
  // spec.vars.size() ints and, when the kernel takes one (TakesCoreId), the core id. Errors: a name that is
  // not a C identifier.
  absl::StatusOr<std::string> ProgramSource(const ProgramSpec& spec) const override;
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                       absl::string_view lib) override;

 private:
  HostAllocator allocator_;
  ClangCompiler compiler_;
  ClangRenderer renderer_;
  std::shared_ptr<CpuThreadPool> pool_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_CPU_DEVICE_H_
