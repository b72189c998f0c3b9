// libFuzzer target for the LLVM IR renderer: any graph (textual IR, the uops in toposort order as the
// program) renders to IR or gives an error Status, never a crash; rendering is deterministic.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "renderer/llvmir.h"
#include "uop/text_ir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<uopc::UOpPtr> root =
      uopc::ParseIrSingle(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!root.ok()) return 0;
  const std::vector<const uopc::UOp*> uops = (*root)->Toposort();
  static const uopc::LLVMRenderer* const llvm = new uopc::LLVMRenderer();
  absl::StatusOr<std::string> first = llvm->Render(uops), second = llvm->Render(uops);
  if (first.ok() != second.ok() || (first.ok() && *first != *second)) {
    std::fprintf(stderr, "rendering the same program twice gave different results\n");
    std::abort();
  }
  return 0;
}
