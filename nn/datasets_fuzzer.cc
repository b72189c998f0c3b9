// Any bytes are an IDX array or a clear error: no crash, no read past the input, and what parses holds
// exactly the values that follow its header.
#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"
#include "nn/datasets.h"
#include "uop/check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<uopc::nn::ByteArray> array = uopc::nn::ParseIdx(absl::MakeConstSpan(data, size), "input");
  if (!array.ok()) return 0;
  // With a zero dimension there is no data; otherwise the product is the data's size, so no partial product
  // overflows.
  bool empty = false;
  uint64_t count = 1;
  for (int64_t d : array->shape) empty |= d == 0;
  if (!empty) {
    for (int64_t d : array->shape) count *= static_cast<uint64_t>(d);
  }
  UOPC_CHECK((empty ? 0 : count) == array->data.size());
  UOPC_CHECK(4 + 4 * array->shape.size() + array->data.size() == size);
  return 0;
}
