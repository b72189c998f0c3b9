#include "codegen/testing/kernel_check.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "renderer/cstyle.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

// GROUP and LOCAL need local memory, which the CPU lacks: the kernel rejects them, and the check covers that.
constexpr OptOps kCpuOps[] = {OptOps::kUpcast, OptOps::kUnroll, OptOps::kPadTo,
                              OptOps::kSwap,   OptOps::kGroup,  OptOps::kLocal};
constexpr int64_t kAmounts[] = {0, 2, 3, 4, 8};

std::string Describe(const RandomKernel& kernel, const std::vector<Opt>& opts) {
  std::vector<std::string> printed;
  for (const Opt& o : opts) printed.push_back(o.ToString());
  return absl::StrCat("opts: ", absl::StrJoin(printed, ";"), "\nast:\n", PrintIr(kernel.ast.get()));
}

}  // namespace

std::vector<Opt> RandomValidOpts(const UOpPtr& ast, ChoiceSource& choices, int max_opts,
                                 const std::string& device) {
  static const ClangRenderer* const clang = new ClangRenderer();
  const Renderer* renderer = clang;
  if (absl::StatusOr<Device*> d = GetDevice(device); d.ok() && (*d)->renderer() != nullptr)
    renderer = (*d)->renderer();
  std::vector<Opt> accepted;
  absl::StatusOr<Kernel> k = Kernel::Create(ast, *renderer);
  if (!k.ok()) return accepted;
  // Most random opts are invalid for a given kernel (the checks are the point of some of them): try several.
  const int wanted = static_cast<int>(choices.Below(max_opts + 1));
  for (int i = 0; i < 6 * max_opts && static_cast<int>(accepted.size()) < wanted; ++i) {
    const OptOps op = kCpuOps[choices.Below(std::size(kCpuOps))];
    const int64_t axis = static_cast<int64_t>(choices.Below(std::max<int64_t>(1, k->shape_len())));
    const int64_t amount = op == OptOps::kSwap ? static_cast<int64_t>(choices.Below(4))
                                               : kAmounts[choices.Below(std::size(kAmounts))];
    Opt opt(op, axis, amount);
    if (k->ApplyOpt(opt).ok()) accepted.push_back(opt);
  }
  return accepted;
}

std::optional<std::string> CheckKernel(const RandomKernel& kernel, const std::vector<Opt>& opts,
                                       const std::string& device) {
  absl::StatusOr<Device*> cpu = GetDevice(device), interp = GetDevice("INTERP");
  if (!cpu.ok() || !interp.ok()) return absl::StrCat("no ", device, " or INTERP device");
  CompileOptions reference_options;
  reference_options.optimize = false;
  absl::StatusOr<nlohmann::json> want = RunOnCorpusInputs(kernel.ast, nullptr, **interp, reference_options);
  if (!want.ok())
    return absl::StrCat("INTERP without opts failed: ", want.status().message(), "\n", Describe(kernel, {}));
  CompileOptions options;
  options.opts = opts;
  absl::StatusOr<nlohmann::json> got = RunOnCorpusInputs(kernel.ast, nullptr, **cpu, options);
  if (!got.ok() && absl::StrContains(got.status().message(), "cl_khr_fp16")) return std::nullopt;
  if (!got.ok())
    return absl::StrCat(device, " with opts failed: ", got.status().message(), "\n", Describe(kernel, opts));
  for (const auto& [arg, values] : want->items()) {
    if (!got->contains(arg))
      return absl::StrCat(device, " did not store buffer ", arg, "\n", Describe(kernel, opts));
    const DType dtype = kernel.buffers[std::stoll(arg)].dtype;
    if (std::string diff = CorpusValuesMismatch(dtype, (*got)[arg], values); !diff.empty()) {
      return absl::StrCat("buffer ", arg, ": ", device, " with opts vs INTERP without: ", diff, "\n",
                          Describe(kernel, opts));
    }
  }
  return std::nullopt;
}

}  // namespace uopc
