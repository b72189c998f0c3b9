// The safetensors file format (tinygrad's nn.state safe_load / safe_save).
//
// A file is an 8-byte little-endian header length N, N bytes of a JSON object, then the tensor data. The
// object maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets
// into the data after the header) and may hold "__metadata__", a map of strings. The parser trusts nothing
// in the file: a truncated file, a header that is not a JSON object of that form, an unknown dtype, offsets
// outside the data or a byte count that does not match the shape and dtype is an error naming the tensor and
// the problem, and no read ever goes outside the bytes given.
#ifndef UOPC_NN_SAFETENSORS_H_
#define UOPC_NN_SAFETENSORS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nn/state.h"
#include "tensor/tensor.h"

namespace uopc::nn {

// One tensor of a safetensors header; `begin` and `end` are offsets into the data section.
struct SafetensorsEntry {
  std::string name;
  DType dtype;
  Dims shape;
  uint64_t begin = 0, end = 0;
};

// The parsed header: entries in file order, the metadata (values that are not strings kept as their JSON
// text), and where the data section starts in the file.
struct SafetensorsHeader {
  std::vector<SafetensorsEntry> entries;
  std::vector<std::pair<std::string, std::string>> metadata;
  uint64_t data_start = 0;
};

// Parses and checks the header of the file `bytes` (the whole file: every entry's data must lie inside it).
absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::Span<const uint8_t> bytes);

// The safetensors dtype name ("F32", "BOOL", ...) of a dtype, or an error for one the format lacks.
absl::StatusOr<std::string> SafetensorsDTypeName(DType dtype);

// The tensors of a safetensors file in memory / on disk, in file order, as realized buffers on `device`
// ("" for the default device).
absl::StatusOr<StateDict> SafeLoadBytes(absl::Span<const uint8_t> bytes, const std::string& device = "");
absl::StatusOr<StateDict> SafeLoad(const std::string& path, const std::string& device = "");
// The metadata of a file without loading its tensors.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SafeLoadMetadata(const std::string& path);

// Realizes every tensor of `tensors` and writes them, in order, as tinygrad's safe_save does (compact JSON,
// header padded with spaces to a multiple of 8, `__metadata__` first when given). The file is written beside
// `path` and renamed over it, so a failure leaves any old file whole.
absl::StatusOr<std::vector<uint8_t>> SafeSaveBytes(
    const StateDict& tensors, const std::vector<std::pair<std::string, std::string>>& metadata = {});
absl::Status SafeSave(const StateDict& tensors, const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace uopc::nn

#endif  // UOPC_NN_SAFETENSORS_H_
