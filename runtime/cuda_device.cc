#include "runtime/cuda_device.h"

#include <dlfcn.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "renderer/gpu_cstyle.h"
#include "renderer/ptx.h"
#include "runtime/host_cpu.h"
#include "runtime/registry.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// ---- the driver API and NVRTC, declared here and resolved with dlsym ----

// The C types of cuda.h and nvrtc.h that the calls below use (handles are opaque pointers).
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;  // NOLINT(runtime/int): the driver API's type
using CUcontext = void*;
using CUmodule = void*;
using CUfunction = void*;
using CUevent = void*;
using CUstream = void*;
using nvrtcResult = int;
using nvrtcProgram = void*;

constexpr CUresult kCudaSuccess = 0;
constexpr int kComputeCapabilityMajor = 75;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
constexpr int kComputeCapabilityMinor = 76;  // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
constexpr int kJitErrorLogBuffer = 5;        // CU_JIT_ERROR_LOG_BUFFER
constexpr int kJitErrorLogBufferSize = 6;    // CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES

struct CudaApi {
  CUresult (*cuInit)(unsigned int);
  CUresult (*cuDriverGetVersion)(int*);
  CUresult (*cuDeviceGetCount)(int*);
  CUresult (*cuDeviceGet)(CUdevice*, int);
  CUresult (*cuDeviceGetName)(char*, int, CUdevice);
  CUresult (*cuDeviceGetAttribute)(int*, int, CUdevice);
  CUresult (*cuCtxCreate)(CUcontext*, unsigned int, CUdevice);
  CUresult (*cuCtxDestroy)(CUcontext);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuCtxSynchronize)();
  CUresult (*cuMemAlloc)(CUdeviceptr*, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoD)(CUdeviceptr, const void*, size_t);
  CUresult (*cuMemcpyDtoH)(void*, CUdeviceptr, size_t);
  CUresult (*cuModuleLoadDataEx)(CUmodule*, const void*, unsigned int, int*, void**);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction*, CUmodule, const char*);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int, unsigned int,
                             unsigned int, unsigned int, CUstream, void**, void**);
  CUresult (*cuEventCreate)(CUevent*, unsigned int);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventSynchronize)(CUevent);
  CUresult (*cuEventElapsedTime)(float*, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char**);
  CUresult (*cuGetErrorString)(CUresult, const char**);
};

struct NvrtcApi {
  nvrtcResult (*nvrtcVersion)(int*, int*);
  nvrtcResult (*nvrtcCreateProgram)(nvrtcProgram*, const char*, const char*, int, const char* const*,
                                    const char* const*);
  nvrtcResult (*nvrtcCompileProgram)(nvrtcProgram, int, const char* const*);
  nvrtcResult (*nvrtcGetProgramLogSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetProgramLog)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcGetPTXSize)(nvrtcProgram, size_t*);
  nvrtcResult (*nvrtcGetPTX)(nvrtcProgram, char*);
  nvrtcResult (*nvrtcDestroyProgram)(nvrtcProgram*);
  const char* (*nvrtcGetErrorString)(nvrtcResult);
};

// dlopen of the first library of `names` that loads; the first one's error when none does.
absl::StatusOr<void*> OpenFirst(const std::vector<std::string>& names) {
  std::string first_error;
  for (const std::string& name : names) {
    if (void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL)) return handle;
    const char* error = dlerror();
    if (first_error.empty()) first_error = error != nullptr ? error : name;
  }
  return absl::FailedPreconditionError(first_error);
}

// Resolves `symbol` into `*function`; false (and the symbol's name in `missing`) when absent.
template <typename F>
void Resolve(void* library, const char* symbol, F* function, std::vector<std::string>& missing) {
  *function = reinterpret_cast<F>(dlsym(library, symbol));
  if (*function == nullptr) missing.push_back(symbol);
}

// Loads a library's API once per process and path (libraries stay loaded: the driver does not support
// unloading). `load` runs under the lock.
template <typename Api>
absl::StatusOr<const Api*> LoadOnce(const std::string& library,
                                    absl::StatusOr<const Api*> (*load)(const std::string& library)) {
  static std::mutex mutex;
  static auto* loaded = new absl::flat_hash_map<std::string, absl::StatusOr<const Api*>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto it = loaded->find(library);
  if (it == loaded->end()) it = loaded->emplace(library, load(library)).first;
  return it->second;
}

// The driver API from `library`, or from libcuda.so.1 when empty.
absl::StatusOr<const CudaApi*> LoadCudaApi(const std::string& library) {
  return LoadOnce<CudaApi>(library, [](const std::string& library) -> absl::StatusOr<const CudaApi*> {
    absl::StatusOr<void*> lib =
        OpenFirst(library.empty() ? std::vector<std::string>{"libcuda.so.1", "libcuda.so"}
                                  : std::vector<std::string>{library});
    if (!lib.ok()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "CUDA is not available: cannot load the NVIDIA driver library (", lib.status().message(), ")"));
    }
    auto* a = new CudaApi();
    std::vector<std::string> missing;
    Resolve(*lib, "cuInit", &a->cuInit, missing);
    Resolve(*lib, "cuDriverGetVersion", &a->cuDriverGetVersion, missing);
    Resolve(*lib, "cuDeviceGetCount", &a->cuDeviceGetCount, missing);
    Resolve(*lib, "cuDeviceGet", &a->cuDeviceGet, missing);
    Resolve(*lib, "cuDeviceGetName", &a->cuDeviceGetName, missing);
    Resolve(*lib, "cuDeviceGetAttribute", &a->cuDeviceGetAttribute, missing);
    Resolve(*lib, "cuCtxCreate_v2", &a->cuCtxCreate, missing);
    Resolve(*lib, "cuCtxDestroy_v2", &a->cuCtxDestroy, missing);
    Resolve(*lib, "cuCtxSetCurrent", &a->cuCtxSetCurrent, missing);
    Resolve(*lib, "cuCtxSynchronize", &a->cuCtxSynchronize, missing);
    Resolve(*lib, "cuMemAlloc_v2", &a->cuMemAlloc, missing);
    Resolve(*lib, "cuMemFree_v2", &a->cuMemFree, missing);
    Resolve(*lib, "cuMemcpyHtoD_v2", &a->cuMemcpyHtoD, missing);
    Resolve(*lib, "cuMemcpyDtoH_v2", &a->cuMemcpyDtoH, missing);
    Resolve(*lib, "cuModuleLoadDataEx", &a->cuModuleLoadDataEx, missing);
    Resolve(*lib, "cuModuleUnload", &a->cuModuleUnload, missing);
    Resolve(*lib, "cuModuleGetFunction", &a->cuModuleGetFunction, missing);
    Resolve(*lib, "cuLaunchKernel", &a->cuLaunchKernel, missing);
    Resolve(*lib, "cuEventCreate", &a->cuEventCreate, missing);
    Resolve(*lib, "cuEventRecord", &a->cuEventRecord, missing);
    Resolve(*lib, "cuEventSynchronize", &a->cuEventSynchronize, missing);
    Resolve(*lib, "cuEventElapsedTime", &a->cuEventElapsedTime, missing);
    Resolve(*lib, "cuEventDestroy_v2", &a->cuEventDestroy, missing);
    Resolve(*lib, "cuGetErrorName", &a->cuGetErrorName, missing);
    Resolve(*lib, "cuGetErrorString", &a->cuGetErrorString, missing);
    if (!missing.empty()) {
      delete a;
      return absl::FailedPreconditionError(absl::StrCat("CUDA is not available: the driver library lacks ",
                                                        absl::StrJoin(missing, ", "), " (driver too old?)"));
    }
    return a;
  });
}

// NVRTC from `library`, or from its usual names when empty.
absl::StatusOr<const NvrtcApi*> LoadNvrtcApi(const std::string& library) {
  return LoadOnce<NvrtcApi>(library, [](const std::string& library) -> absl::StatusOr<const NvrtcApi*> {
    // Unversioned first (a CUDA toolkit's development link), then the sonames of recent releases.
    std::vector<std::string> names = {"libnvrtc.so"};
    for (const char* version : {"13", "12", "11.2", "11.1", "11.0"})
      names.push_back(absl::StrCat("libnvrtc.so.", version));
    if (!library.empty()) names = {library};
    absl::StatusOr<void*> lib = OpenFirst(names);
    if (!lib.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("CUDA is not available: cannot load NVRTC, which compiles CUDA C (",
                       lib.status().message(), "; tried ", absl::StrJoin(names, ", "), ")"));
    }
    auto* a = new NvrtcApi();
    std::vector<std::string> missing;
    Resolve(*lib, "nvrtcVersion", &a->nvrtcVersion, missing);
    Resolve(*lib, "nvrtcCreateProgram", &a->nvrtcCreateProgram, missing);
    Resolve(*lib, "nvrtcCompileProgram", &a->nvrtcCompileProgram, missing);
    Resolve(*lib, "nvrtcGetProgramLogSize", &a->nvrtcGetProgramLogSize, missing);
    Resolve(*lib, "nvrtcGetProgramLog", &a->nvrtcGetProgramLog, missing);
    Resolve(*lib, "nvrtcGetPTXSize", &a->nvrtcGetPTXSize, missing);
    Resolve(*lib, "nvrtcGetPTX", &a->nvrtcGetPTX, missing);
    Resolve(*lib, "nvrtcDestroyProgram", &a->nvrtcDestroyProgram, missing);
    Resolve(*lib, "nvrtcGetErrorString", &a->nvrtcGetErrorString, missing);
    if (!missing.empty()) {
      delete a;
      return absl::FailedPreconditionError(
          absl::StrCat("CUDA is not available: NVRTC lacks ", absl::StrJoin(missing, ", ")));
    }
    return a;
  });
}

std::string CudaErrorText(const CudaApi& api, CUresult code) {
  const char* name = nullptr;
  const char* text = nullptr;
  api.cuGetErrorName(code, &name);
  api.cuGetErrorString(code, &text);
  return absl::StrCat(name != nullptr ? name : absl::StrCat("CUDA error ", code), text != nullptr ? " (" : "",
                      text != nullptr ? text : "", text != nullptr ? ")" : "");
}

// ---- the shared context ----

struct CudaContext {
  const CudaApi* api = nullptr;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name, arch;
  int driver_version = 0;

  ~CudaContext() {
    if (context != nullptr) api->cuCtxDestroy(context);
  }
  absl::Status Check(CUresult result, absl::string_view what) const {
    if (result == kCudaSuccess) return absl::OkStatus();
    return absl::InternalError(absl::StrCat(what, " failed: ", CudaErrorText(*api, result)));
  }
  // The driver keeps a current context per thread: every call that uses ours makes it current first.
  absl::Status MakeCurrent() const { return Check(api->cuCtxSetCurrent(context), "cuCtxSetCurrent"); }
};

// ---- memory ----

class CudaAllocator : public Allocator {
 public:
  explicit CudaAllocator(std::shared_ptr<CudaContext> context) : context_(std::move(context)) {}

  absl::StatusOr<void*> Alloc(int64_t nbytes) override {
    if (nbytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative buffer size ", nbytes));
    UOPC_RETURN_IF_ERROR(context_->MakeCurrent());
    CUdeviceptr pointer = 0;
    // cuMemAlloc refuses zero bytes: an empty buffer gets one, so it still has its own handle.
    UOPC_RETURN_IF_ERROR(context_->Check(
        context_->api->cuMemAlloc(&pointer, static_cast<size_t>(std::max<int64_t>(nbytes, 1))),
        absl::StrCat("cuMemAlloc(", nbytes, " bytes)")));
    return reinterpret_cast<void*>(static_cast<uintptr_t>(pointer));
  }
  void Free(void* handle, int64_t nbytes) override {
    if (handle == nullptr || !context_->MakeCurrent().ok()) return;
    context_->api->cuMemFree(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(handle)));
  }
  absl::Status CopyIn(void* dest, absl::Span<const uint8_t> src) override {
    if (src.empty()) return absl::OkStatus();
    UOPC_RETURN_IF_ERROR(context_->MakeCurrent());
    return context_->Check(
        context_->api->cuMemcpyHtoD(static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(dest)), src.data(),
                                    src.size()),
        "cuMemcpyHtoD");
  }
  absl::Status CopyOut(absl::Span<uint8_t> dest, const void* src) override {
    if (dest.empty()) return absl::OkStatus();
    UOPC_RETURN_IF_ERROR(context_->MakeCurrent());
    return context_->Check(
        context_->api->cuMemcpyDtoH(dest.data(), static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(src)),
                                    dest.size()),
        "cuMemcpyDtoH");
  }

 private:
  std::shared_ptr<CudaContext> context_;
};

// ---- compilers ----

// CUDA C to PTX with NVRTC (tinygrad's CUDACompiler).
class NvrtcCompiler : public Compiler {
 public:
  NvrtcCompiler(const NvrtcApi* nvrtc, std::string arch, CompileCache cache)
      : Compiler(std::move(cache)), nvrtc_(nvrtc), arch_(std::move(arch)) {
    options_.push_back(absl::StrCat("--gpu-architecture=", arch_));
    if (const std::string cuda_path = EnvString("CUDA_PATH"); !cuda_path.empty()) {
      options_.push_back(absl::StrCat("-I", cuda_path, "/include"));
    } else {
      options_.insert(options_.end(), {"-I/usr/local/cuda/include", "-I/usr/include", "-I/opt/cuda/include"});
    }
    nvrtc_->nvrtcVersion(&major_, &minor_);
    // Leaves out the device runtime headers NVRTC would otherwise include (faster; tinygrad does the same).
    if (major_ > 12 || (major_ == 12 && minor_ >= 4)) options_.push_back("--minimal");
  }

  std::string CacheName() const override { return absl::StrCat("cuda_", arch_); }
  absl::StatusOr<std::string> CacheKey() const override {
    return absl::StrCat("nvrtc ", major_, ".", minor_, "\n", absl::StrJoin(options_, " "));
  }

  absl::StatusOr<std::string> Compile(absl::string_view src) const override {
    std::string source(src);
    nvrtcProgram program = nullptr;
    nvrtcResult result = nvrtc_->nvrtcCreateProgram(&program, source.c_str(), "<null>", 0, nullptr, nullptr);
    if (result != 0) return Error("nvrtcCreateProgram", result, nullptr);
    std::vector<const char*> options;
    for (const std::string& o : options_) options.push_back(o.c_str());
    result = nvrtc_->nvrtcCompileProgram(program, static_cast<int>(options.size()), options.data());
    absl::StatusOr<std::string> ptx = [&]() -> absl::StatusOr<std::string> {
      if (result != 0) return Error("NVRTC compilation", result, program);
      size_t size = 0;
      if (nvrtcResult r = nvrtc_->nvrtcGetPTXSize(program, &size); r != 0)
        return Error("nvrtcGetPTXSize", r, nullptr);
      std::string out(size, '\0');
      if (nvrtcResult r = nvrtc_->nvrtcGetPTX(program, out.data()); r != 0)
        return Error("nvrtcGetPTX", r, nullptr);
      // The PTX is a C string: the module loader needs its terminating NUL, which `size` counts.
      return out;
    }();
    nvrtc_->nvrtcDestroyProgram(&program);
    return ptx;
  }

 private:
  absl::Status Error(absl::string_view what, nvrtcResult result, nvrtcProgram program) const {
    std::string log;
    size_t size = 0;
    if (program != nullptr && nvrtc_->nvrtcGetProgramLogSize(program, &size) == 0 && size > 0) {
      log.resize(size);
      if (nvrtc_->nvrtcGetProgramLog(program, log.data()) != 0) log.clear();
      while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    }
    return absl::InvalidArgumentError(
        absl::StrCat(what, " failed: ", nvrtc_->nvrtcGetErrorString(result), log.empty() ? "" : "\n", log));
  }

  const NvrtcApi* nvrtc_;
  std::string arch_;
  std::vector<std::string> options_;
  int major_ = 0, minor_ = 0;
};

// PTX as it is, with its placeholders filled (tinygrad's PTXCompiler); too cheap to cache.
class PtxCompiler : public Compiler {
 public:
  explicit PtxCompiler(std::string arch) : Compiler(CompileCache("")), arch_(std::move(arch)) {}
  std::string CacheName() const override { return absl::StrCat("ptx_", arch_); }
  absl::StatusOr<std::string> CacheKey() const override { return std::string(); }
  absl::StatusOr<std::string> Compile(absl::string_view src) const override {
    std::string ptx = PtxForArch(src, arch_);
    ptx.push_back('\0');  // the module loader reads PTX as a C string
    return ptx;
  }

 private:
  std::string arch_;
};

// ---- programs ----

class CudaProgram : public Program {
 public:
  static absl::StatusOr<std::unique_ptr<Program>> Load(Device& device, std::shared_ptr<CudaContext> context,
                                                       const ProgramSpec& spec, absl::string_view lib) {
    UOPC_RETURN_IF_ERROR(context->MakeCurrent());
    std::string image(lib);
    if (image.empty() || image.back() != '\0') image.push_back('\0');
    // The JIT's error log says why PTX does not assemble.
    std::string error_log(8192, '\0');
    int options[] = {kJitErrorLogBuffer, kJitErrorLogBufferSize};
    void* values[] = {error_log.data(), reinterpret_cast<void*>(static_cast<uintptr_t>(error_log.size()))};
    CUmodule module = nullptr;
    CUresult result = context->api->cuModuleLoadDataEx(&module, image.data(), 2, options, values);
    if (result != kCudaSuccess) {
      error_log.resize(error_log.find('\0'));
      return absl::InvalidArgumentError(absl::StrCat("cannot load the module of ", spec.name, ": ",
                                                     CudaErrorText(*context->api, result),
                                                     error_log.empty() ? "" : "\n", error_log));
    }
    CUfunction function = nullptr;
    result = context->api->cuModuleGetFunction(&function, module, spec.name.c_str());
    if (result != kCudaSuccess) {
      context->api->cuModuleUnload(module);
      return absl::InvalidArgumentError(absl::StrCat("the CUDA module has no kernel '", spec.name,
                                                     "': ", CudaErrorText(*context->api, result)));
    }
    return std::unique_ptr<Program>(new CudaProgram(device, std::move(context), spec, module, function));
  }

  ~CudaProgram() override {
    if (context_->MakeCurrent().ok()) context_->api->cuModuleUnload(module_);
  }

  absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                      const LaunchParams& params, double* seconds) override {
    UOPC_RETURN_IF_ERROR(CheckArguments(device_, buffers, var_values));
    unsigned int grid[3], block[3];
    for (int i = 0; i < 3; ++i) {
      int64_t g = params.global_size[i], l = params.local_size[i];
      if (g < 1 || l < 1 || g > INT32_MAX || l > INT32_MAX) {
        return absl::InvalidArgumentError(
            absl::StrCat("launch dims must be positive 32-bit sizes; got global ", g, " and local ", l,
                         " in dimension ", i));
      }
      grid[i] = static_cast<unsigned int>(g);
      block[i] = static_cast<unsigned int>(l);
    }
    // kernelParams: a pointer to each argument's value, buffers first, then the int variables.
    std::vector<CUdeviceptr> pointers(buffers.size());
    std::vector<int> ints(var_values.size());
    std::vector<void*> args;
    for (size_t i = 0; i < buffers.size(); ++i) {
      pointers[i] = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(buffers[i]->handle()));
      args.push_back(&pointers[i]);
    }
    for (size_t i = 0; i < var_values.size(); ++i) {
      if (var_values[i] < INT_MIN || var_values[i] > INT_MAX) {
        return absl::OutOfRangeError(absl::StrCat("variable ", spec().vars[i], " = ", var_values[i],
                                                  " does not fit the kernel's int"));
      }
      ints[i] = static_cast<int>(var_values[i]);
      args.push_back(&ints[i]);
    }
    const CudaApi& api = *context_->api;
    UOPC_RETURN_IF_ERROR(context_->MakeCurrent());
    CUevent events[2] = {nullptr, nullptr};
    if (seconds != nullptr) {
      for (CUevent& e : events) {
        UOPC_RETURN_IF_ERROR(context_->Check(api.cuEventCreate(&e, 0), "cuEventCreate"));
      }
      api.cuEventRecord(events[0], nullptr);
    }
    absl::Status launched =
        context_->Check(api.cuLaunchKernel(function_, grid[0], grid[1], grid[2], block[0], block[1], block[2],
                                           0, nullptr, args.data(), nullptr),
                        absl::StrCat("launching ", spec().name));
    if (seconds != nullptr) {
      float milliseconds = 0;
      if (launched.ok()) {
        api.cuEventRecord(events[1], nullptr);
        launched = context_->Check(api.cuEventSynchronize(events[1]), "cuEventSynchronize");
        if (launched.ok()) api.cuEventElapsedTime(&milliseconds, events[0], events[1]);
      }
      for (CUevent e : events) api.cuEventDestroy(e);
      *seconds = milliseconds * 1e-3;
    }
    return launched;
  }

 private:
  CudaProgram(Device& device, std::shared_ptr<CudaContext> context, ProgramSpec spec, CUmodule module,
              CUfunction function)
      : Program(std::move(spec)),
        device_(device),
        context_(std::move(context)),
        module_(module),
        function_(function) {}

  Device& device_;
  std::shared_ptr<CudaContext> context_;
  CUmodule module_;
  CUfunction function_;
};

// ---- the device ----

class CudaDevice : public Device {
 public:
  CudaDevice(std::shared_ptr<CudaContext> context, std::unique_ptr<Compiler> compiler,
             std::shared_ptr<const Renderer> renderer)
      : Device("CUDA"),
        context_(context),
        allocator_(context),
        compiler_(std::move(compiler)),
        renderer_(std::move(renderer)) {}

  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return *compiler_; }
  const Renderer* renderer() const override { return renderer_.get(); }
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                       absl::string_view lib) override {
    return CudaProgram::Load(*this, context_, spec, lib);
  }
  bool TimingWaits() const override { return true; }
  absl::Status Synchronize() override {
    UOPC_RETURN_IF_ERROR(context_->MakeCurrent());
    return context_->Check(context_->api->cuCtxSynchronize(), "cuCtxSynchronize");
  }

 private:
  std::shared_ptr<CudaContext> context_;
  CudaAllocator allocator_;
  std::unique_ptr<Compiler> compiler_;
  std::shared_ptr<const Renderer> renderer_;
};

}  // namespace

absl::StatusOr<std::unique_ptr<Device>> MakeCudaDevice(CudaDeviceOptions options) {
  UOPC_ASSIGN_OR_RETURN(const CudaApi* api, LoadCudaApi(options.driver_library));
  const CudaApi& cu = *api;
  if (CUresult r = cu.cuInit(0); r != kCudaSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("CUDA is not available: cuInit failed: ", CudaErrorText(cu, r)));
  }
  int count = 0;
  if (CUresult r = cu.cuDeviceGetCount(&count); r != kCudaSuccess || count == 0) {
    return absl::FailedPreconditionError("CUDA is not available: the driver reports no GPU");
  }
  if (options.device_ordinal < 0 || options.device_ordinal >= count) {
    return absl::FailedPreconditionError(absl::StrCat(
        "CUDA is not available: no GPU ", options.device_ordinal, " (the driver reports ", count, ")"));
  }
  auto context = std::make_shared<CudaContext>();
  context->api = &cu;
  UOPC_RETURN_IF_ERROR(
      context->Check(cu.cuDeviceGet(&context->device, options.device_ordinal), "cuDeviceGet"));
  char name[256] = {};
  cu.cuDeviceGetName(name, sizeof(name) - 1, context->device);
  context->name = name;
  int major = 0, minor = 0;
  UOPC_RETURN_IF_ERROR(context->Check(
      cu.cuDeviceGetAttribute(&major, kComputeCapabilityMajor, context->device), "cuDeviceGetAttribute"));
  UOPC_RETURN_IF_ERROR(context->Check(
      cu.cuDeviceGetAttribute(&minor, kComputeCapabilityMinor, context->device), "cuDeviceGetAttribute"));
  context->arch = CudaArch(major, minor);
  cu.cuDriverGetVersion(&context->driver_version);

  std::unique_ptr<Compiler> compiler;
  if (options.language == CudaDeviceOptions::Language::kPtx) {
    compiler = std::make_unique<PtxCompiler>(context->arch);
    if (options.renderer == nullptr) options.renderer = std::make_shared<PTXRenderer>(context->arch);
  } else {
    UOPC_ASSIGN_OR_RETURN(const NvrtcApi* nvrtc, LoadNvrtcApi(options.nvrtc_library));
    compiler = std::make_unique<NvrtcCompiler>(
        nvrtc, context->arch,
        CompileCache(options.cache_directory.value_or(CompileCache::DefaultDirectory())));
  }
  UOPC_RETURN_IF_ERROR(context->Check(cu.cuCtxCreate(&context->context, 0, context->device), "cuCtxCreate"));
  return std::unique_ptr<Device>(
      new CudaDevice(std::move(context), std::move(compiler), std::move(options.renderer)));
}

std::string PtxForArch(absl::string_view src, absl::string_view arch) {
  // The ISA version must know the target: PTX 7.8 (CUDA 11.8) is the first with sm_89 and sm_90.
  int sm = 0;
  if (absl::StartsWith(arch, "sm_")) {
    for (char c : arch.substr(3)) {
      if (c < '0' || c > '9') break;
      sm = sm * 10 + (c - '0');
    }
  }
  return absl::StrReplaceAll(src, {{"TARGET", arch}, {"VERSION", sm >= 89 ? "7.8" : "7.5"}});
}

std::string CudaArch(int major, int minor) { return absl::StrCat("sm_", major, minor); }

namespace {

// Linking //runtime:cuda is what makes "CUDA" a device of the program (runtime/registry.h): CUDA C for sm_80
// (tinygrad's tensor cores need it), or $UOPC_CUDA_ARCH; uopc's GPU opts unless UOPC_KERNELS=tinygrad.
const bool cuda_registered = RegisterDevice("CUDA", [] {
  CudaDeviceOptions options;
  std::unique_ptr<Renderer> renderer = MakeCUDARenderer(EnvString("UOPC_CUDA_ARCH", "sm_80"));
  renderer->set_uopc_gpu_opts(HostKernelVectorWidth() > 1);
  options.renderer = std::shared_ptr<const Renderer>(std::move(renderer));
  return MakeCudaDevice(options);
});

}  // namespace
}  // namespace uopc
