#include "renderer/targets.h"

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "renderer/cstyle.h"
#include "renderer/gpu_cstyle.h"
#include "renderer/llvmir.h"
#include "renderer/ptx.h"

namespace uopc {

const std::vector<std::string>& KnownTargets() {
  static const std::vector<std::string>* const targets =
      new std::vector<std::string>{"clang", "opencl", "metal", "cuda", "ptx", "llvm"};
  return *targets;
}

absl::StatusOr<std::unique_ptr<Renderer>> MakeRendererForTarget(absl::string_view name) {
  std::pair<absl::string_view, absl::string_view> parts = absl::StrSplit(name, absl::MaxSplits(':', 1));
  const absl::string_view base = parts.first;
  const std::string arch = parts.second.empty() ? "sm_80" : std::string(parts.second);
  if ((base == "clang" || base == "llvm") && !parts.second.empty()) {
    // clang:vecN and llvm:vecN, the CPU and LLVM devices' kernels with UOPC_KERNELS=fast (N = 16): float32
    // vectors of N lanes kept.
    int width = 0;
    if (!absl::StartsWith(arch, "vec") || !absl::SimpleAtoi(arch.substr(3), &width) || width < 1 ||
        width > 16 || (width & (width - 1)) != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "bad ", base, " variant '", arch, "' (expected vecN, N a power of two up to 16, e.g. vec16)"));
    }
    if (base == "llvm") return std::make_unique<LLVMRenderer>(CoreSplit{}, width);
    return std::make_unique<ClangRenderer>(CoreSplit{}, width);
  }
  if (!parts.second.empty() && base != "cuda" && base != "ptx") {
    return absl::InvalidArgumentError(absl::StrCat("target ", base, " takes no arch"));
  }
  if (!parts.second.empty()) {
    int sm = 0;
    if (!absl::StartsWith(arch, "sm_") || !absl::SimpleAtoi(arch.substr(3), &sm)) {
      return absl::InvalidArgumentError(absl::StrCat("bad arch '", arch, "' (expected sm_XY, e.g. sm_80)"));
    }
  }
  if (base == "clang") return std::make_unique<ClangRenderer>();
  if (base == "opencl") return MakeOpenCLRenderer();
  if (base == "metal") return MakeMetalRenderer();
  if (base == "cuda") return MakeCUDARenderer(arch);
  if (base == "ptx") return std::make_unique<PTXRenderer>(arch);
  if (base == "llvm") return MakeLLVMRenderer();
  return absl::InvalidArgumentError(
      absl::StrCat("unknown target '", name, "' (known: ", absl::StrJoin(KnownTargets(), ", "), ")"));
}

}  // namespace uopc
