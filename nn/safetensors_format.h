// The safetensors header: parsing and checking it against the file, and writing it (no tensors involved,
// so the parser can be fuzzed on its own; nn/safetensors.h loads and saves tensors with it).
//
// A file is an 8-byte little-endian header length N, N bytes of a JSON object, then the tensor data. The
// object maps each tensor name to {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]} (offsets
// into the data after the header) and may hold "__metadata__", a map of strings. The parser trusts nothing
// in the file: a truncated file, a header that is not a JSON object of that form, an unknown dtype, offsets
// outside the data or a byte count that does not match the shape and dtype is an error naming the tensor and
// the problem, and no read ever goes outside the bytes given.
#ifndef UOPC_NN_SAFETENSORS_FORMAT_H_
#define UOPC_NN_SAFETENSORS_FORMAT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "uop/dtype.h"

namespace uopc::nn {

// One tensor of a safetensors header; `begin` and `end` are offsets into the data section.
struct SafetensorsEntry {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape;
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

// The 8 length bytes and the JSON header of `entries` as tinygrad's safe_save writes them: compact JSON,
// non-ASCII escaped as Python's json.dumps does, "__metadata__" first when there is any, padded with spaces
// to a multiple of 8. An entry of a dtype the format lacks is an error.
absl::StatusOr<std::string> SafetensorsHeaderBytes(
    const std::vector<SafetensorsEntry>& entries,
    const std::vector<std::pair<std::string, std::string>>& metadata);

// The safetensors dtype name ("F32", "BOOL", ...) of a dtype, or an error for one the format lacks.
absl::StatusOr<std::string> SafetensorsDTypeName(DType dtype);

}  // namespace uopc::nn

#endif  // UOPC_NN_SAFETENSORS_FORMAT_H_
