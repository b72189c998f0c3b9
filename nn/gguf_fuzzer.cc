// Fuzzes the GGUF parser and the GGML dequantizer: any bytes either parse to tensors whose data lies inside
// the file and turns into exactly their element count of values, or give an error; nothing crashes, reads
// outside the input (ASan checks under --config=fuzz) or allocates more than the input's size allows.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "absl/types/span.h"
#include "nn/gguf_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Keep the input in its own allocation so ASan catches a read one byte past it.
  std::vector<uint8_t> bytes(data, data + size);
  absl::StatusOr<uopc::nn::GgufHeader> header = uopc::nn::ParseGgufHeader(bytes);
  if (!header.ok()) return 0;
  if (header->data_start > size) std::abort();
  for (const uopc::nn::GgufTensorInfo& t : header->tensors) {
    if (t.nbytes > 0 &&
        (header->data_start % header->alignment != 0 || t.offset > size - header->data_start ||
         t.nbytes > size - header->data_start - t.offset)) {
      std::abort();
    }
    uint64_t numel = 1;
    for (int64_t d : t.dims) numel *= static_cast<uint64_t>(d);
    if (numel != t.numel) std::abort();
    absl::Span<const uint8_t> ggml_data;
    if (t.nbytes > 0)
      ggml_data = absl::Span<const uint8_t>(bytes).subspan(header->data_start + t.offset, t.nbytes);
    absl::StatusOr<std::vector<uint8_t>> values = uopc::nn::GgmlToLoadedBytes(ggml_data, t.type, t.numel);
    if (!values.ok() || values->size() != t.numel * uopc::nn::GgmlLoadedDType(t.type).itemsize())
      std::abort();
  }
  return 0;
}
