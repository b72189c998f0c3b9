// The OPENCL device (tinygrad's runtime/ops_gpu.py): OpenCL C built and run through the OpenCL ICD loader, on
// whatever platform is installed (POCL on the CPU here).
//
// OpenCLCompiler builds a program from source for the device and returns the device binary
// (CL_PROGRAM_BINARIES), so the compile cache can skip the front end next time; OpenCLProgram loads the
// binary and launches the kernel with tinygrad's launch convention: the ProgramSpec's global size counts
// work-groups, so the NDRange's global size is global * local, element by element.
//
// Half precision: OpenCL C may only use `half` arithmetic with `cl_khr_fp16`. The device reads its extension
// list and refuses a source that uses `half` when the extension is missing, with one error naming
// `cl_khr_fp16`, instead of passing on whatever the implementation's build log says (POCL on x86 has no
// fp16).
//
//   absl::StatusOr<std::unique_ptr<Device>> cl = MakeOpenCLDevice();   // an error when no platform exists
#ifndef UOPC_RUNTIME_OPENCL_DEVICE_H_
#define UOPC_RUNTIME_OPENCL_DEVICE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "renderer/renderer.h"
#include "runtime/device.h"

namespace uopc {

struct OpenCLDeviceOptions {
  // (Initializers everywhere, so designated initializers may leave fields out without warnings.)
  // nullopt: CompileCache::DefaultDirectory(); "": no cache.
  std::optional<std::string> cache_directory = std::nullopt;
  // The codegen target the device reports (the OpenCL renderer lives in renderer/; the device does not need
  // it to run sources). May be null.
  std::shared_ptr<const Renderer> renderer = nullptr;
};

// The OpenCL objects every buffer and program of a device shares (defined in opencl_device.cc).
struct OpenCLContext;

class OpenCLDevice : public Device {
 public:
  ~OpenCLDevice() override;

  Allocator& allocator() override { return *allocator_; }
  const Compiler& compiler() const override { return *compiler_; }
  const Renderer* renderer() const override { return renderer_.get(); }
  // A timed launch waits for its profiling event.
  bool TimingWaits() const override { return true; }
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec& spec,
                                                       absl::string_view lib) override;
  // clFinish on the device's queue.
  absl::Status Synchronize() override;

  // CL_DEVICE_NAME and CL_DEVICE_EXTENSIONS (space separated), as the implementation reports them.
  const std::string& device_name() const;
  const std::string& extensions() const;
  bool HasExtension(absl::string_view extension) const;

 private:
  friend absl::StatusOr<std::unique_ptr<Device>> MakeOpenCLDevice(OpenCLDeviceOptions options);
  OpenCLDevice(std::shared_ptr<OpenCLContext> context, OpenCLDeviceOptions options);

  std::shared_ptr<OpenCLContext> context_;
  std::unique_ptr<Allocator> allocator_;
  std::unique_ptr<Compiler> compiler_;
  std::shared_ptr<const Renderer> renderer_;
};

// The first device of the first OpenCL platform. Errors: no platform or no device (FailedPrecondition, with
// a message saying which and what to install), or a failing OpenCL call.
absl::StatusOr<std::unique_ptr<Device>> MakeOpenCLDevice(OpenCLDeviceOptions options = {});

// Whether an OpenCL C source uses the `half` type (as a whole word): such a source needs cl_khr_fp16.
bool OpenCLSourceUsesHalf(absl::string_view src);

// The name of an OpenCL error code ("CL_BUILD_PROGRAM_FAILURE"), or "OpenCL error N" for an unknown one.
std::string OpenCLErrorName(int code);

}  // namespace uopc

#endif  // UOPC_RUNTIME_OPENCL_DEVICE_H_
