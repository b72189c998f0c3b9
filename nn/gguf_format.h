// The GGUF file format (llama.cpp's weights files, tinygrad's nn.state gguf_load), without tensors: parsing
// the header and metadata, and turning GGML tensor data into the values tinygrad's ggml_data_to_tensor gives.
// It is separate from nn/gguf.h so it can be fuzzed on its own.
//
// A file is "GGUF", an int32 version (2 or 3), int64 tensor and key/value counts, the key/value pairs (a
// string key, an int32 value type, the value; arrays hold an element type, a count and the elements), the
// tensor infos (name, uint32 dimension count, uint64 dimensions innermost first, int32 GGML type, uint64
// offset into the data), then the data, starting at the next multiple of "general.alignment" (default 32).
// Everything little-endian; strings are a uint64 length and that many bytes. The parser trusts nothing: a
// short read, a count larger than the bytes left could hold, an unknown value or GGML type, a size that
// overflows or data outside the file is an InvalidArgument error naming the byte offset or the tensor, and no
// read goes outside the bytes given.
#ifndef UOPC_NN_GGUF_FORMAT_H_
#define UOPC_NN_GGUF_FORMAT_H_

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/dtype.h"

namespace uopc::nn {

// GGUF's metadata value types; the numbers are the file's.
enum class GgufValueType : int32_t {
  kUInt8 = 0,
  kInt8 = 1,
  kUInt16 = 2,
  kInt16 = 3,
  kUInt32 = 4,
  kInt32 = 5,
  kFloat32 = 6,
  kBool = 7,
  kString = 8,
  kArray = 9,
  kUInt64 = 10,
  kInt64 = 11,
  kFloat64 = 12,
};

struct GgufValue;

// An array value. The element type is kept so that an empty array still says what it holds.
struct GgufArray {
  GgufValueType element_type = GgufValueType::kUInt8;
  std::vector<GgufValue> values;
};

// One metadata value. The variant's alternatives are in GgufValueType's order, so `value.index()` is the
// type. Strings are the file's bytes (GGUF says UTF-8; they are not checked).
struct GgufValue {
  std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool, std::string, GgufArray,
               uint64_t, int64_t, double>
      value;

  GgufValueType type() const { return static_cast<GgufValueType>(value.index()); }
};

// The key/value pairs in file order. A key given twice keeps its first place and takes the later value, as
// tinygrad's dict does.
using GgufMetadata = std::vector<std::pair<std::string, GgufValue>>;

// The value of `key`, or nullptr.
const GgufValue* FindGgufValue(const GgufMetadata& metadata, absl::string_view key);

// GGML's tensor types that tinygrad v0.10.3 loads; the numbers are ggml.h's.
enum class GgmlType : int32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ8_0 = 8,
  kQ6_K = 14,
  kI8 = 16,
  kI16 = 17,
  kI32 = 18,
};

// One tensor of the file, checked: its type is one of GgmlType's, its element count fills whole blocks and
// its data lies inside the file (a tensor of no elements may point anywhere: nothing is read).
struct GgufTensorInfo {
  std::string name;
  // As the file lists them, innermost first; the tensor's shape is the reverse.
  std::vector<int64_t> dims;
  GgmlType type = GgmlType::kF32;
  uint64_t offset = 0;  // into the data section
  uint64_t numel = 0;
  uint64_t nbytes = 0;  // of GGML data

  // The shape tinygrad gives the tensor: `dims` reversed.
  std::vector<int64_t> Shape() const { return {dims.rbegin(), dims.rend()}; }
};

struct GgufHeader {
  int32_t version = 0;
  GgufMetadata metadata;
  std::vector<GgufTensorInfo> tensors;
  uint64_t alignment = 32;
  // File offset of the data section; the file's size when the padding before it runs past the end, which
  // only a file whose tensors are all empty may do.
  uint64_t data_start = 0;
};

// Parses and checks the file `bytes` (the whole file: every tensor's data must lie inside it).
absl::StatusOr<GgufHeader> ParseGgufHeader(absl::Span<const uint8_t> bytes);

// The dtype a GGML type loads as: its own for F32, F16, I8, I16 and I32, float32 for the quantized ones.
DType GgmlLoadedDType(GgmlType type);

// The values of `numel` elements of GGML data `data` (exactly the type's size for them), as the bytes of
// GgmlLoadedDType(type): a copy for unquantized types, the dequantized float32s (computed in tinygrad's
// order, so bit for bit its values) for quantized ones. An error when `data` has the wrong size.
absl::StatusOr<std::vector<uint8_t>> GgmlToLoadedBytes(absl::Span<const uint8_t> data, GgmlType type,
                                                       uint64_t numel);

}  // namespace uopc::nn

#endif  // UOPC_NN_GGUF_FORMAT_H_
