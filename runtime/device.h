// Devices: where compiled programs run (tinygrad's device.py: Buffer, Allocator, Compiler, Compiled).
//
// A Device bundles what running a kernel takes: an Allocator for its memory, a Compiler from source to a
// binary (with the shared on-disk cache), a way to load a binary as a Program, and the Renderer codegen
// targets. A Program is made from a ProgramSpec, which carries both the rendered source and the linear uops,
// so compiling devices (CPU: clang) and interpreting ones (INTERP: the uops) share one interface.
//
//   absl::StatusOr<Device*> cpu = GetDevice("CPU");                 // runtime/registry.h
//   ProgramSpec spec = ProgramSpec::FromUops(uops, src);            // or fill the fields by hand
//   absl::StatusOr<std::unique_ptr<Program>> program = (*cpu)->CreateProgram(spec);
//   absl::StatusOr<Buffer> out = Buffer::Allocate(**cpu, dtypes::kFloat32, 16);
//   absl::Status s = (*program)->Launch({&*out, &*in}, /*var_values=*/{}, LaunchParams{});
#ifndef UOPC_RUNTIME_DEVICE_H_
#define UOPC_RUNTIME_DEVICE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "codegen/program_spec.h"
#include "renderer/renderer.h"
#include "runtime/compile_cache.h"
#include "uop/dtype.h"
#include "uop/uop.h"

namespace uopc {

class Device;

// ---- memory ----

// Device memory, by opaque handle (a host pointer on the CPU).
class Allocator {
 public:
  virtual ~Allocator() = default;
  // At least `nbytes` bytes (0 is allowed and gives a valid, distinct handle).
  virtual absl::StatusOr<void*> Alloc(int64_t nbytes) = 0;
  virtual void Free(void* handle, int64_t nbytes) = 0;
  // Host bytes into the device memory at `dest`, and back; sizes are the spans'.
  virtual absl::Status CopyIn(void* dest, absl::Span<const uint8_t> src) = 0;
  virtual absl::Status CopyOut(absl::Span<uint8_t> dest, const void* src) = 0;
};

// Host memory (malloc), aligned for the widest vector loads: the CPU's and the interpreter's memory.
class HostAllocator : public Allocator {
 public:
  absl::StatusOr<void*> Alloc(int64_t nbytes) override;
  void Free(void* handle, int64_t nbytes) override;
  absl::Status CopyIn(void* dest, absl::Span<const uint8_t> src) override;
  absl::Status CopyOut(absl::Span<uint8_t> dest, const void* src) override;
};

// Bytes of device memory held by Buffers, all devices together (tinygrad's GlobalCounters.mem_used, which the
// DEBUG=2 line shows). Buffer::Allocate adds a buffer's nbytes() and its release subtracts them: every
// device's allocations go through Buffer, so every device is counted.
int64_t DeviceMemoryUsed();

// `size` elements of a scalar DType in one device's memory; frees it when destroyed. Move-only.
class Buffer {
 public:
  // Errors: a non-scalar or void dtype, a negative size, an allocation failure.
  static absl::StatusOr<Buffer> Allocate(Device& device, DType dtype, int64_t size);

  Buffer(Buffer&& other) noexcept;
  Buffer& operator=(Buffer&& other) noexcept;
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer();

  Device& device() const { return *device_; }
  DType dtype() const { return dtype_; }
  int64_t size() const { return size_; }
  int64_t nbytes() const { return size_ * dtype_.itemsize(); }
  // The allocator's handle: what a kernel's DEFINE_GLOBAL receives (a host pointer on the CPU).
  void* handle() const { return handle_; }

  // Copies exactly nbytes() bytes in or out; a different length is an error.
  absl::Status CopyIn(absl::Span<const uint8_t> bytes);
  absl::Status CopyOut(absl::Span<uint8_t> bytes) const;
  absl::StatusOr<std::vector<uint8_t>> ToBytes() const;

 private:
  Buffer(Device* device, DType dtype, int64_t size, void* handle)
      : device_(device), dtype_(dtype), size_(size), handle_(handle) {}
  void Release();

  Device* device_;
  DType dtype_;
  int64_t size_;
  void* handle_;
};

// ---- compiling ----

// Source to binary. Subclasses implement Compile and name themselves; CompileCached adds the disk cache.
class Compiler {
 public:
  struct Stats {
    int64_t cache_hits = 0;
    int64_t compiles = 0;  // calls of Compile (cache misses and uncached compiles)
  };

  // `cache` may be disabled (CompileCache("")).
  explicit Compiler(CompileCache cache) : cache_(std::move(cache)) {}
  virtual ~Compiler() = default;

  // A short folder name for this compiler's cache entries ("clang_jit").
  virtual std::string CacheName() const = 0;
  // Everything that determines the output besides the source (compiler version, flags, target CPU); an error
  // when the compiler cannot be identified (not installed). An empty key disables caching.
  virtual absl::StatusOr<std::string> CacheKey() const = 0;
  // The binary for `src`; a compile error carries the compiler's diagnostics.
  virtual absl::StatusOr<std::string> Compile(absl::string_view src) const = 0;

  // Compile through the cache: a hit skips the compiler; a miss compiles and stores the result. The cache
  // never turns a good compile into an error.
  absl::StatusOr<std::string> CompileCached(absl::string_view src) const;

  const CompileCache& cache() const { return cache_; }
  Stats stats() const { return {cache_hits_.load(), compiles_.load()}; }

 private:
  CompileCache cache_;
  mutable std::atomic<int64_t> cache_hits_{0};
  mutable std::atomic<int64_t> compiles_{0};
};

// tinygrad's default Compiler: the "binary" is the source itself, uncached. For devices that read the source
// or the uops directly (INTERP).
class SourceCompiler : public Compiler {
 public:
  SourceCompiler() : Compiler(CompileCache("")) {}
  std::string CacheName() const override { return "source"; }
  absl::StatusOr<std::string> CacheKey() const override { return std::string(); }
  absl::StatusOr<std::string> Compile(absl::string_view src) const override { return std::string(src); }
};

// ---- programs ----

// Launch dims in (x, y, z) order (devices without threads, like the CPU, take only 1s).
struct LaunchParams {
  std::array<int64_t, 3> global_size = {1, 1, 1};
  std::array<int64_t, 3> local_size = {1, 1, 1};
};

class Program {
 public:
  virtual ~Program() = default;
  const ProgramSpec& spec() const { return spec_; }

  // Runs the kernel once. `buffers[i]` is parameter i (spec().globals[i]'s buffer), `var_values[i]` is
  // spec().vars[i]'s value. With `seconds`, waits for the kernel to finish and stores its wall time.
  // Errors: wrong counts, buffers of another device, values or dims the device cannot take.
  virtual absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                              const LaunchParams& params, double* seconds = nullptr) = 0;

 protected:
  explicit Program(ProgramSpec spec) : spec_(std::move(spec)) {}
  // The count, device and size checks every Launch needs (a buffer smaller than its DEFINE_GLOBAL's
  // pointer size is an error).
  absl::Status CheckArguments(const Device& device, absl::Span<Buffer* const> buffers,
                              absl::Span<const int64_t> var_values) const;

 private:
  ProgramSpec spec_;
};

// ---- devices ----

class Device {
 public:
  virtual ~Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  // Canonical name: "CPU", "INTERP"; "CPU:1" for another instance of a kind (runtime/registry.h).
  const std::string& name() const { return name_; }
  virtual Allocator& allocator() = 0;
  virtual const Compiler& compiler() const = 0;
  // The codegen target this device runs, or nullptr.
  virtual const Renderer* renderer() const = 0;
  // Makes a program from the compiler's output for ProgramSource(spec) (tinygrad's `runtime(name, lib)`).
  virtual absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                               absl::string_view lib) = 0;
  // Waits for everything launched so far.
  virtual absl::Status Synchronize() { return absl::OkStatus(); }
  // Whether measuring a run (ExecOptions::timed) makes the host wait for it: a GPU's launches are
  // asynchronous, and a timed one is a synchronization after every kernel. Replays time only the kernels of
  // devices where it costs nothing (CapturedRuns::Replay).
  virtual bool TimingWaits() const { return false; }

  // The source the compiler gets for `spec`: spec.src, plus whatever glue the device's loader needs (the CPU
  // appends an entry point).
  virtual absl::StatusOr<std::string> ProgramSource(const ProgramSpec& spec) const { return spec.src; }

  // Whether the device itself stops a load or store outside its buffer (INTERP does); the others run native
  // code that cannot, so their programs are proven in bounds first (codegen/bounds_check.h).
  virtual bool TrapsOutOfBounds() const { return false; }

  // CheckProgramBounds(spec) unless the device traps out-of-bounds accesses itself, then
  // compiler().CompileCached(ProgramSource(spec)), then LoadProgram. A program with an access that cannot be
  // proven in bounds is an InvalidArgument error naming the kernel, the buffer and the index range.
  absl::StatusOr<std::unique_ptr<Program>> CreateProgram(const ProgramSpec& spec);

 protected:
  explicit Device(std::string name) : name_(std::move(name)) {}

 private:
  // The registry names the instances it makes of a kind ("CPU:1") after the factory has made them.
  friend absl::StatusOr<Device*> GetDevice(absl::string_view name);

  std::string name_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_DEVICE_H_
