#include "runtime/opencl_device.h"

#include <CL/cl.h>

#include <chrono>
#include <climits>
#include <fstream>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "renderer/gpu_cstyle.h"
#include "runtime/host_cpu.h"
#include "runtime/registry.h"
#include "uop/status_macros.h"

namespace uopc {

// ---- the shared OpenCL objects ----

struct OpenCLContext {
  cl_platform_id platform = nullptr;
  cl_device_id device = nullptr;
  cl_context context = nullptr;
  cl_command_queue queue = nullptr;
  std::string platform_name, platform_version, device_name, device_version, driver_version, extensions;

  ~OpenCLContext() {
    if (queue != nullptr) clReleaseCommandQueue(queue);
    if (context != nullptr) clReleaseContext(context);
  }
};

namespace {

absl::Status ClError(cl_int code, absl::string_view what) {
  return absl::InternalError(absl::StrCat(what, " failed: ", OpenCLErrorName(code)));
}

std::string PlatformString(cl_platform_id platform, cl_platform_info param) {
  size_t size = 0;
  if (clGetPlatformInfo(platform, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  if (clGetPlatformInfo(platform, param, size, value.data(), nullptr) != CL_SUCCESS) return "";
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::string DeviceString(cl_device_id device, cl_device_info param) {
  size_t size = 0;
  if (clGetDeviceInfo(device, param, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string value(size, '\0');
  if (clGetDeviceInfo(device, param, size, value.data(), nullptr) != CL_SUCCESS) return "";
  while (!value.empty() && value.back() == '\0') value.pop_back();
  return value;
}

std::string BuildLog(cl_program program, cl_device_id device) {
  size_t size = 0;
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS)
    return "";
  std::string log(size, '\0');
  if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS)
    return "";
  while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
  return log;
}

// ---- memory ----

// Buffers are cl_mem objects; the handle is the cl_mem itself. Copies block (tinygrad's are asynchronous
// on a device queue; here the host waits, which keeps the interface simple and is what the callers need).
class OpenCLAllocator : public Allocator {
 public:
  explicit OpenCLAllocator(std::shared_ptr<OpenCLContext> context) : context_(std::move(context)) {}

  absl::StatusOr<void*> Alloc(int64_t nbytes) override {
    if (nbytes < 0) return absl::InvalidArgumentError(absl::StrCat("negative buffer size ", nbytes));
    cl_int error = CL_SUCCESS;
    // OpenCL has no empty buffers: a zero-byte buffer gets one byte, so it still has its own handle.
    cl_mem mem = clCreateBuffer(context_->context, CL_MEM_READ_WRITE,
                                static_cast<size_t>(std::max<int64_t>(nbytes, 1)), nullptr, &error);
    if (error != CL_SUCCESS) return ClError(error, absl::StrCat("clCreateBuffer(", nbytes, " bytes)"));
    return static_cast<void*>(mem);
  }
  void Free(void* handle, int64_t nbytes) override {
    if (handle != nullptr) clReleaseMemObject(static_cast<cl_mem>(handle));
  }
  absl::Status CopyIn(void* dest, absl::Span<const uint8_t> src) override {
    if (src.empty()) return absl::OkStatus();
    cl_int error = clEnqueueWriteBuffer(context_->queue, static_cast<cl_mem>(dest), CL_TRUE, 0, src.size(),
                                        src.data(), 0, nullptr, nullptr);
    return error == CL_SUCCESS ? absl::OkStatus() : ClError(error, "clEnqueueWriteBuffer");
  }
  absl::Status CopyOut(absl::Span<uint8_t> dest, const void* src) override {
    if (dest.empty()) return absl::OkStatus();
    cl_int error = clEnqueueReadBuffer(context_->queue, static_cast<cl_mem>(const_cast<void*>(src)), CL_TRUE,
                                       0, dest.size(), dest.data(), 0, nullptr, nullptr);
    return error == CL_SUCCESS ? absl::OkStatus() : ClError(error, "clEnqueueReadBuffer");
  }

 private:
  std::shared_ptr<OpenCLContext> context_;
};

// ---- compiling ----

// OpenCL C to the device's program binary (tinygrad's CLCompiler).
class OpenCLCompiler : public Compiler {
 public:
  // The cache key is the implementation and device, their versions, and the host CPU (which a CPU
  // implementation such as POCL compiles for).
  OpenCLCompiler(std::shared_ptr<OpenCLContext> context, CompileCache cache)
      : Compiler(std::move(cache)),
        context_(std::move(context)),
        key_(absl::StrCat(context_->platform_name, "\n", context_->platform_version, "\n",
                          context_->device_name, "\n", context_->device_version, "\n",
                          context_->driver_version, "\n", context_->extensions, "\n", HostCpuIdentity())) {}

  std::string CacheName() const override { return "opencl"; }
  absl::StatusOr<std::string> CacheKey() const override { return key_; }

  absl::StatusOr<std::string> Compile(absl::string_view src) const override {
    if (OpenCLSourceUsesHalf(src) && !HasExtension(context_->extensions, "cl_khr_fp16")) {
      return absl::FailedPreconditionError(
          absl::StrCat("the OpenCL device ", context_->device_name,
                       " does not support cl_khr_fp16: kernels using half cannot be built on it"));
    }
    const char* text = src.data();
    size_t length = src.size();
    cl_int error = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context_->context, 1, &text, &length, &error);
    if (error != CL_SUCCESS) return ClError(error, "clCreateProgramWithSource");
    absl::StatusOr<std::string> binary = BuildAndGetBinary(program);
    clReleaseProgram(program);
    return binary;
  }

  static bool HasExtension(absl::string_view extensions, absl::string_view extension) {
    for (absl::string_view e : absl::StrSplit(extensions, ' ', absl::SkipEmpty())) {
      if (e == extension) return true;
    }
    return false;
  }

 private:
  absl::StatusOr<std::string> BuildAndGetBinary(cl_program program) const {
    cl_int error = clBuildProgram(program, 1, &context_->device, nullptr, nullptr, nullptr);
    if (error != CL_SUCCESS) {
      return absl::InvalidArgumentError(absl::StrCat("OpenCL build failed (", OpenCLErrorName(error), "):\n",
                                                     BuildLog(program, context_->device)));
    }
    size_t size = 0;
    error = clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(size), &size, nullptr);
    if (error != CL_SUCCESS) return ClError(error, "clGetProgramInfo(CL_PROGRAM_BINARY_SIZES)");
    if (size == 0) return absl::InternalError("the OpenCL implementation returned an empty program binary");
    std::string binary(size, '\0');
    unsigned char* pointer = reinterpret_cast<unsigned char*>(binary.data());
    error = clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(pointer), &pointer, nullptr);
    if (error != CL_SUCCESS) return ClError(error, "clGetProgramInfo(CL_PROGRAM_BINARIES)");
    return binary;
  }

  std::shared_ptr<OpenCLContext> context_;
  std::string key_;
};

// ---- programs ----

class OpenCLProgram : public Program {
 public:
  static absl::StatusOr<std::unique_ptr<Program>> Load(Device& device, std::shared_ptr<OpenCLContext> context,
                                                       const ProgramSpec& spec, absl::string_view lib) {
    const unsigned char* binary = reinterpret_cast<const unsigned char*>(lib.data());
    size_t length = lib.size();
    cl_int binary_status = CL_SUCCESS, error = CL_SUCCESS;
    cl_program program = clCreateProgramWithBinary(context->context, 1, &context->device, &length, &binary,
                                                   &binary_status, &error);
    if (error != CL_SUCCESS || binary_status != CL_SUCCESS) {
      if (program != nullptr) clReleaseProgram(program);
      return absl::InvalidArgumentError(
          absl::StrCat("cannot load the OpenCL binary of ", spec.name, ": ",
                       OpenCLErrorName(error != CL_SUCCESS ? error : binary_status)));
    }
    error = clBuildProgram(program, 1, &context->device, nullptr, nullptr, nullptr);
    if (error != CL_SUCCESS) {
      std::string log = BuildLog(program, context->device);
      clReleaseProgram(program);
      return absl::InvalidArgumentError(absl::StrCat("building the OpenCL binary of ", spec.name, " failed (",
                                                     OpenCLErrorName(error), "):\n", log));
    }
    cl_kernel kernel = clCreateKernel(program, spec.name.c_str(), &error);
    if (error != CL_SUCCESS) {
      clReleaseProgram(program);
      return absl::InvalidArgumentError(
          absl::StrCat("the OpenCL program has no kernel '", spec.name, "': ", OpenCLErrorName(error)));
    }
    return std::unique_ptr<Program>(new OpenCLProgram(device, std::move(context), spec, program, kernel));
  }

  ~OpenCLProgram() override {
    clReleaseKernel(kernel_);
    clReleaseProgram(program_);
  }

  absl::Status Launch(absl::Span<Buffer* const> buffers, absl::Span<const int64_t> var_values,
                      const LaunchParams& params, double* seconds) override {
    UOPC_RETURN_IF_ERROR(CheckArguments(device_, buffers, var_values));
    size_t global[3], local[3];
    for (int i = 0; i < 3; ++i) {
      int64_t g = params.global_size[i], l = params.local_size[i];
      if (g < 1 || l < 1 || g > INT32_MAX || l > INT32_MAX) {
        return absl::InvalidArgumentError(
            absl::StrCat("launch dims must be positive 32-bit sizes; got global ", g, " and local ", l,
                         " in dimension ", i));
      }
      // tinygrad's convention: the global size counts work-groups.
      global[i] = static_cast<size_t>(g * l);
      local[i] = static_cast<size_t>(l);
    }
    // Kernel arguments are state of the cl_kernel: one launch at a time sets them and enqueues.
    std::lock_guard<std::mutex> lock(mutex_);
    cl_uint index = 0;
    for (Buffer* buffer : buffers) {
      cl_mem mem = static_cast<cl_mem>(buffer->handle());
      cl_int error = clSetKernelArg(kernel_, index++, sizeof(mem), &mem);
      if (error != CL_SUCCESS) return ClError(error, absl::StrCat("clSetKernelArg(", index - 1, ")"));
    }
    for (size_t i = 0; i < var_values.size(); ++i) {
      if (var_values[i] < INT_MIN || var_values[i] > INT_MAX) {
        return absl::OutOfRangeError(absl::StrCat("variable ", spec().vars[i], " = ", var_values[i],
                                                  " does not fit the kernel's int"));
      }
      cl_int value = static_cast<cl_int>(var_values[i]);
      cl_int error = clSetKernelArg(kernel_, index++, sizeof(value), &value);
      if (error != CL_SUCCESS) return ClError(error, absl::StrCat("clSetKernelArg(", index - 1, ")"));
    }
    cl_event event = nullptr;
    cl_int error = clEnqueueNDRangeKernel(context_->queue, kernel_, 3, nullptr, global, local, 0, nullptr,
                                          seconds != nullptr ? &event : nullptr);
    if (error != CL_SUCCESS) return ClError(error, absl::StrCat("launching ", spec().name));
    if (seconds == nullptr) return absl::OkStatus();
    error = clWaitForEvents(1, &event);
    cl_ulong start = 0, end = 0;
    if (error == CL_SUCCESS) {
      error = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_START, sizeof(start), &start, nullptr);
    }
    if (error == CL_SUCCESS) {
      error = clGetEventProfilingInfo(event, CL_PROFILING_COMMAND_END, sizeof(end), &end, nullptr);
    }
    clReleaseEvent(event);
    if (error != CL_SUCCESS) return ClError(error, absl::StrCat("waiting for ", spec().name));
    *seconds = static_cast<double>(end - start) * 1e-9;
    return absl::OkStatus();
  }

 private:
  OpenCLProgram(Device& device, std::shared_ptr<OpenCLContext> context, ProgramSpec spec, cl_program program,
                cl_kernel kernel)
      : Program(std::move(spec)),
        device_(device),
        context_(std::move(context)),
        program_(program),
        kernel_(kernel) {}

  Device& device_;
  std::shared_ptr<OpenCLContext> context_;
  cl_program program_;
  cl_kernel kernel_;
  std::mutex mutex_;
};

}  // namespace

// ---- OpenCLDevice ----

OpenCLDevice::OpenCLDevice(std::shared_ptr<OpenCLContext> context, OpenCLDeviceOptions options)
    : Device("OPENCL"),
      context_(context),
      allocator_(std::make_unique<OpenCLAllocator>(context)),
      compiler_(std::make_unique<OpenCLCompiler>(
          context, CompileCache(options.cache_directory.value_or(CompileCache::DefaultDirectory())))),
      renderer_(std::move(options.renderer)) {}

OpenCLDevice::~OpenCLDevice() = default;

absl::StatusOr<std::unique_ptr<Program>> OpenCLDevice::LoadProgram(const ProgramSpec& spec,
                                                                   absl::string_view lib) {
  return OpenCLProgram::Load(*this, context_, spec, lib);
}

absl::Status OpenCLDevice::Synchronize() {
  cl_int error = clFinish(context_->queue);
  return error == CL_SUCCESS ? absl::OkStatus() : ClError(error, "clFinish");
}

const std::string& OpenCLDevice::device_name() const { return context_->device_name; }
const std::string& OpenCLDevice::extensions() const { return context_->extensions; }
bool OpenCLDevice::HasExtension(absl::string_view extension) const {
  return OpenCLCompiler::HasExtension(context_->extensions, extension);
}

absl::StatusOr<std::unique_ptr<Device>> MakeOpenCLDevice(OpenCLDeviceOptions options) {
  constexpr char kInstallHint[] =
      " (on Debian: apt-get install ocl-icd-libopencl1 pocl-opencl-icd for OpenCL on the CPU)";
  cl_uint platform_count = 0;
  cl_int error = clGetPlatformIDs(0, nullptr, &platform_count);
  // The ICD loader answers CL_PLATFORM_NOT_FOUND_KHR (-1001) when no implementation is installed.
  if (error == -1001 || (error == CL_SUCCESS && platform_count == 0)) {
    return absl::FailedPreconditionError(absl::StrCat("no OpenCL platform is installed", kInstallHint));
  }
  if (error != CL_SUCCESS) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot list OpenCL platforms: ", OpenCLErrorName(error), kInstallHint));
  }
  std::vector<cl_platform_id> platforms(platform_count);
  error = clGetPlatformIDs(platform_count, platforms.data(), nullptr);
  if (error != CL_SUCCESS) return ClError(error, "clGetPlatformIDs");

  auto context = std::make_shared<OpenCLContext>();
  for (cl_platform_id platform : platforms) {
    cl_uint device_count = 0;
    if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &context->device, &device_count) == CL_SUCCESS &&
        device_count > 0) {
      context->platform = platform;
      break;
    }
  }
  if (context->platform == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("no OpenCL platform has a device (", platform_count, " platforms)", kInstallHint));
  }
  context->platform_name = PlatformString(context->platform, CL_PLATFORM_NAME);
  context->platform_version = PlatformString(context->platform, CL_PLATFORM_VERSION);
  context->device_name = DeviceString(context->device, CL_DEVICE_NAME);
  context->device_version = DeviceString(context->device, CL_DEVICE_VERSION);
  context->driver_version = DeviceString(context->device, CL_DRIVER_VERSION);
  context->extensions = DeviceString(context->device, CL_DEVICE_EXTENSIONS);

  context->context = clCreateContext(nullptr, 1, &context->device, nullptr, nullptr, &error);
  if (error != CL_SUCCESS) return ClError(error, "clCreateContext");
  context->queue = clCreateCommandQueue(context->context, context->device, CL_QUEUE_PROFILING_ENABLE, &error);
  if (error != CL_SUCCESS) return ClError(error, "clCreateCommandQueue");
  return std::unique_ptr<Device>(new OpenCLDevice(std::move(context), std::move(options)));
}

bool OpenCLSourceUsesHalf(absl::string_view src) {
  auto is_word_char = [](char c) { return absl::ascii_isalnum(static_cast<unsigned char>(c)) || c == '_'; };
  for (size_t at = src.find("half"); at != absl::string_view::npos; at = src.find("half", at + 1)) {
    bool starts = at == 0 || !is_word_char(src[at - 1]);
    size_t end = at + 4;
    // `half`, and the vector types `half2` ... `half16`.
    while (end < src.size() && absl::ascii_isdigit(static_cast<unsigned char>(src[end]))) ++end;
    bool ends = end == src.size() || !is_word_char(src[end]);
    if (starts && ends) return true;
  }
  return false;
}

std::string OpenCLErrorName(int code) {
  switch (code) {
#define UOPC_CL_ERROR(name) \
  case name:                \
    return #name;
    UOPC_CL_ERROR(CL_SUCCESS)
    UOPC_CL_ERROR(CL_DEVICE_NOT_FOUND)
    UOPC_CL_ERROR(CL_DEVICE_NOT_AVAILABLE)
    UOPC_CL_ERROR(CL_COMPILER_NOT_AVAILABLE)
    UOPC_CL_ERROR(CL_MEM_OBJECT_ALLOCATION_FAILURE)
    UOPC_CL_ERROR(CL_OUT_OF_RESOURCES)
    UOPC_CL_ERROR(CL_OUT_OF_HOST_MEMORY)
    UOPC_CL_ERROR(CL_PROFILING_INFO_NOT_AVAILABLE)
    UOPC_CL_ERROR(CL_BUILD_PROGRAM_FAILURE)
    UOPC_CL_ERROR(CL_INVALID_VALUE)
    UOPC_CL_ERROR(CL_INVALID_DEVICE)
    UOPC_CL_ERROR(CL_INVALID_BINARY)
    UOPC_CL_ERROR(CL_INVALID_BUILD_OPTIONS)
    UOPC_CL_ERROR(CL_INVALID_PROGRAM)
    UOPC_CL_ERROR(CL_INVALID_PROGRAM_EXECUTABLE)
    UOPC_CL_ERROR(CL_INVALID_KERNEL_NAME)
    UOPC_CL_ERROR(CL_INVALID_KERNEL)
    UOPC_CL_ERROR(CL_INVALID_ARG_INDEX)
    UOPC_CL_ERROR(CL_INVALID_ARG_VALUE)
    UOPC_CL_ERROR(CL_INVALID_ARG_SIZE)
    UOPC_CL_ERROR(CL_INVALID_KERNEL_ARGS)
    UOPC_CL_ERROR(CL_INVALID_WORK_DIMENSION)
    UOPC_CL_ERROR(CL_INVALID_WORK_GROUP_SIZE)
    UOPC_CL_ERROR(CL_INVALID_WORK_ITEM_SIZE)
    UOPC_CL_ERROR(CL_INVALID_GLOBAL_OFFSET)
    UOPC_CL_ERROR(CL_INVALID_MEM_OBJECT)
    UOPC_CL_ERROR(CL_INVALID_BUFFER_SIZE)
    UOPC_CL_ERROR(CL_INVALID_COMMAND_QUEUE)
    UOPC_CL_ERROR(CL_INVALID_CONTEXT)
    UOPC_CL_ERROR(CL_INVALID_EVENT)
    UOPC_CL_ERROR(CL_INVALID_OPERATION)
    UOPC_CL_ERROR(CL_INVALID_GLOBAL_WORK_SIZE)
#undef UOPC_CL_ERROR
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return absl::StrCat("OpenCL error ", code);
  }
}

namespace {

// Linking //runtime:opencl is what makes "OPENCL" a device of the program (runtime/registry.h).
const bool opencl_registered = RegisterDevice("OPENCL", [] {
  OpenCLDeviceOptions options;
  options.renderer = std::shared_ptr<const Renderer>(MakeOpenCLRenderer());
  return MakeOpenCLDevice(options);
});

}  // namespace
}  // namespace uopc
