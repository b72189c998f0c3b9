// libFuzzer target for the PTX renderer: any graph (textual IR, the uops in toposort order as the program)
// renders to PTX or gives an error Status, never a crash; rendering is deterministic. Seeds: the C renderer's
// and the PTX target's final-rewrite graphs of corpus kernels.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "renderer/ptx.h"
#include "uop/text_ir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<uopc::UOpPtr> root =
      uopc::ParseIrSingle(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!root.ok()) return 0;
  const std::vector<const uopc::UOp*> uops = (*root)->Toposort();
  static const uopc::PTXRenderer* const ptx = new uopc::PTXRenderer("sm_80");
  absl::StatusOr<std::string> first = ptx->Render(uops), second = ptx->Render(uops);
  if (first.ok() != second.ok() || (first.ok() && *first != *second)) {
    std::fprintf(stderr, "rendering the same program twice gave different results\n");
    std::abort();
  }
  return 0;
}
