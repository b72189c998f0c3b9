#include "renderer/renderer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace uopc {

std::string TensorCore::ToString() const {
  return absl::StrCat("WMMA_", absl::StrJoin(dims, "_"), "_", dtype_in.name(), "_", dtype_out.name());
}

}  // namespace uopc
