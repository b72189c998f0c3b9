// The LLVM device (tinygrad's runtime/ops_llvm.py): LLVM IR compiled and run in this process with LLVM 19,
// no external compiler.
//
// LLVMCompiler parses the IR (parseIR), verifies it, optimizes it with LLVM's default O2 pipeline (loop
// unrolling, loop and SLP vectorization, as tinygrad) and emits an ELF object for the host CPU, which goes
// through the compile cache like the CPU device's shared objects. LLVMDevice loads each object into its own
// JITDylib of one ORC LLJIT (JITLink), with nothing else to link against: a kernel that needs a runtime
// function (compiler-rt's half conversions, say) fails to load with LLVM's "symbols not found" message
// instead of calling a helper with a mismatched ABI.
//
// As on the CPU device, the host calls every kernel through one entry point the device appends to the IR,
//     define void @uopc_entry(ptr %bufs, ptr %vars, i32 %core_id) { ... call void @E_3(ptr %b0, i32 %v0) ...
//     }
// and the compiler checks that every direct call matches its callee's signature, so a spec that does not
// match the IR is a compile error, not undefined behaviour. Programs launch through CpuProgram
// (cpu_program.h), the CPU device's launch path: a kernel codegen split across cores runs its chunks on the
// device's thread pool (`Options::threads`).
//
// Only llvm_device.cc includes LLVM's headers (compiled with llvm-config's flags); this header does not.
//
//   absl::StatusOr<std::unique_ptr<Device>> llvm = MakeLLVMDevice();
//   absl::StatusOr<std::unique_ptr<Program>> p = (*llvm)->CreateProgram(spec);   // spec.src: LLVM IR
#ifndef UOPC_RUNTIME_LLVM_DEVICE_H_
#define UOPC_RUNTIME_LLVM_DEVICE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "renderer/llvmir.h"
#include "runtime/cpu_thread_pool.h"
#include "runtime/device.h"
#include "runtime/host_cpu.h"

namespace uopc {

// LLVM IR text to an ELF object file for the host CPU (the bytes of the .o).
class LLVMCompiler : public Compiler {
 public:
  explicit LLVMCompiler(CompileCache cache);

  std::string CacheName() const override { return "llvm_jit"; }
  // LLVM's version, the pipeline, the host's triple, CPU and features. Errors when LLVM knows no target for
  // this host.
  absl::StatusOr<std::string> CacheKey() const override;
  // Errors: IR that does not parse or verify (with LLVM's message), a call that does not match its callee,
  // a failure to emit code.
  absl::StatusOr<std::string> Compile(absl::string_view src) const override;
};

class LLVMDevice : public Device {
 public:
  struct Options {
    // nullopt: CompileCache::DefaultDirectory(); "": no cache.
    std::optional<std::string> cache_directory;
    // Worker threads, and the cores codegen splits a kernel across (renderer.h's CoreSplit); 1: no threads.
    int threads = CpuThreadPool::DefaultThreads();
    // The renderer's Renderer::vector_width (host_cpu.h: 16 unless UOPC_KERNELS=tinygrad).
    int vector_width = HostKernelVectorWidth();
  };

  // Errors when the JIT cannot be set up for this host.
  static absl::StatusOr<std::unique_ptr<LLVMDevice>> Create(Options options);
  ~LLVMDevice() override;

  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return &renderer_; }
  // spec.src and the entry point `uopc_entry` calling spec.name with spec.globals.size() buffers,
  // spec.vars.size() i32s and, when the kernel takes one (TakesCoreId), the core id. Errors: a name LLVM
  // cannot spell without quotes.
  absl::StatusOr<std::string> ProgramSource(const ProgramSpec& spec) const override;
  // Links the object into a JITDylib of its own, removed with the program.
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                       absl::string_view lib) override;

 private:
  class Jit;  // the ORC JIT; LLVM's types stay in llvm_device.cc
  LLVMDevice(Options options, std::unique_ptr<Jit> jit);

  HostAllocator allocator_;
  LLVMCompiler compiler_;
  LLVMRenderer renderer_;
  std::unique_ptr<Jit> jit_;
  std::shared_ptr<CpuThreadPool> pool_;
};

// An LLVM device with the default cache, for the registry.
absl::StatusOr<std::unique_ptr<Device>> MakeLLVMDevice();

}  // namespace uopc

#endif  // UOPC_RUNTIME_LLVM_DEVICE_H_
