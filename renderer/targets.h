// The codegen targets by name, as `uopc --target` and tests spell them (the corpus's target names): clang,
// opencl, metal, cuda, ptx, llvm. CUDA and PTX are for sm_80 unless the name gives the arch (`cuda:sm_75`);
// `clang:vec16` and `llvm:vec16` keep float32 vectors of 16 lanes (Renderer::vector_width), the CPU and LLVM
// devices' defaults.
#ifndef UOPC_RENDERER_TARGETS_H_
#define UOPC_RENDERER_TARGETS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "renderer/renderer.h"

namespace uopc {

// An InvalidArgument listing the known names for an unknown one.
absl::StatusOr<std::unique_ptr<Renderer>> MakeRendererForTarget(absl::string_view name);
const std::vector<std::string>& KnownTargets();

}  // namespace uopc

#endif  // UOPC_RENDERER_TARGETS_H_
