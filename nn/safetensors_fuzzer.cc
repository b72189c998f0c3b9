// Fuzzes the safetensors parser: any bytes either load (and then save back to a file that loads to the same
// tensors) or give an error; nothing crashes or reads outside the input (ASan checks under --config=fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/types/span.h"
#include "nn/safetensors.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Keep the input in its own allocation so ASan catches a read one byte past it.
  std::vector<uint8_t> bytes(data, data + size);
  absl::Span<const uint8_t> input(bytes.data(), bytes.size());
  absl::StatusOr<uopc::nn::SafetensorsHeader> header = uopc::nn::ParseSafetensorsHeader(input);
  absl::StatusOr<uopc::nn::StateDict> state = uopc::nn::SafeLoadBytes(input);
  if (header.ok() != state.ok()) std::abort();  // the loader accepts exactly what the parser accepts
  if (!state.ok()) return 0;
  if (state->size() > header->entries.size()) std::abort();
  // Saving what loaded gives a file that parses to the same shapes and dtypes.
  absl::StatusOr<std::vector<uint8_t>> saved = uopc::nn::SafeSaveBytes(*state, header->metadata);
  if (!saved.ok()) std::abort();
  absl::StatusOr<uopc::nn::SafetensorsHeader> again = uopc::nn::ParseSafetensorsHeader(*saved);
  if (!again.ok() || again->entries.size() != state->size()) std::abort();
  for (size_t i = 0; i < again->entries.size(); ++i) {
    const uopc::Tensor& t = state->entries()[i].second;
    if (again->entries[i].shape != t.Shape() || again->entries[i].dtype != t.dtype()) std::abort();
  }
  return 0;
}
