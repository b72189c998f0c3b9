// The CUDA device (tinygrad's runtime/ops_cuda.py): kernels on an NVIDIA GPU through the CUDA driver API.
//
// Nothing of CUDA is needed to build uopc: the driver (libcuda.so.1) and NVRTC (libnvrtc.so*) are loaded
// with dlopen when a device is made, and the few types and functions used are declared in cuda_device.cc.
// On a machine without the driver or a GPU, MakeCudaDevice returns one FailedPrecondition error that starts
// with "CUDA is not available" and says what is missing; tests skip with that message.
//
// Two source languages, as tinygrad's CUDA device with and without PTX=1:
//  - kCudaC: CUDA C (the CUDA renderer's output) compiled to PTX by NVRTC for the device's sm_XY, with
//    tinygrad's include paths ($CUDA_PATH/include, else /usr/local/cuda/include, /usr/include,
//    /opt/cuda/include); the PTX goes through the compile cache.
//  - kPtx: PTX (the PTX renderer's output) loaded as it is, after tinygrad's PTXCompiler substitution of the
//    `TARGET` and `VERSION` placeholders (PtxForArch).
// Either way the driver JIT-compiles the PTX for the GPU in cuModuleLoadData. Launches follow tinygrad: the
// global size counts blocks and the local size threads per block.
//
//   absl::StatusOr<std::unique_ptr<Device>> cuda = MakeCudaDevice();
//   if (!cuda.ok()) std::cerr << cuda.status().message();   // "CUDA is not available: ..."
#ifndef UOPC_RUNTIME_CUDA_DEVICE_H_
#define UOPC_RUNTIME_CUDA_DEVICE_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "renderer/renderer.h"
#include "runtime/device.h"

namespace uopc {

struct CudaDeviceOptions {
  enum class Language { kCudaC, kPtx };
  // (Initializers everywhere, so designated initializers may leave fields out without warnings.)
  Language language = Language::kCudaC;
  int device_ordinal = 0;
  // nullopt: CompileCache::DefaultDirectory(); "": no cache.
  std::optional<std::string> cache_directory = std::nullopt;
  // The driver and NVRTC libraries to load; empty: libcuda.so.1, and libnvrtc.so or a versioned soname.
  // (Tests point them at stand-ins.)
  std::string driver_library = "";
  std::string nvrtc_library = "";
  // The codegen target the device reports. Null: for kPtx, PTXRenderer for the GPU's arch; for kCudaC, none
  // (the CUDA C renderer is given by whoever makes the device).
  std::shared_ptr<const Renderer> renderer = nullptr;
};

// The GPU `options.device_ordinal`, named "CUDA". Errors: FailedPrecondition "CUDA is not available: ..."
// when the driver library, a GPU or (for CUDA C) NVRTC is missing; a failing driver call otherwise.
absl::StatusOr<std::unique_ptr<Device>> MakeCudaDevice(CudaDeviceOptions options = {});

// tinygrad's PTXCompiler: the renderer's `TARGET` and `VERSION` placeholders replaced by `arch` ("sm_80") and
// the PTX ISA version (7.8 from sm_89 on, else 7.5).
std::string PtxForArch(absl::string_view src, absl::string_view arch);

// "sm_80" for compute capability 8.0.
std::string CudaArch(int major, int minor);

}  // namespace uopc

#endif  // UOPC_RUNTIME_CUDA_DEVICE_H_
