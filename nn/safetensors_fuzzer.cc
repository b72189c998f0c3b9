// Fuzzes the safetensors header parser: any bytes either parse to entries that all lie inside the file, and
// writing those entries' header back gives a file that parses to the same entries, or give an error; nothing
// crashes or reads outside the input (ASan checks under --config=fuzz).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "nn/safetensors_format.h"

namespace {

bool SameEntries(const uopc::nn::SafetensorsHeader& a, const uopc::nn::SafetensorsHeader& b) {
  if (a.entries.size() != b.entries.size() || a.metadata != b.metadata) return false;
  for (size_t i = 0; i < a.entries.size(); ++i) {
    const uopc::nn::SafetensorsEntry &x = a.entries[i], &y = b.entries[i];
    if (x.name != y.name || x.dtype != y.dtype || x.shape != y.shape || x.begin != y.begin ||
        x.end != y.end) {
      return false;
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Keep the input in its own allocation so ASan catches a read one byte past it.
  std::vector<uint8_t> bytes(data, data + size);
  absl::StatusOr<uopc::nn::SafetensorsHeader> header = uopc::nn::ParseSafetensorsHeader(bytes);
  if (!header.ok()) return 0;
  if (header->data_start > size) std::abort();
  const uint64_t data_size = size - header->data_start;
  for (const uopc::nn::SafetensorsEntry& e : header->entries) {
    if (e.begin > e.end || e.end > data_size) std::abort();
  }
  // The same entries over the same data section, under a header we write.
  absl::StatusOr<std::string> written = uopc::nn::SafetensorsHeaderBytes(header->entries, header->metadata);
  if (!written.ok()) std::abort();
  std::vector<uint8_t> again(written->begin(), written->end());
  again.insert(again.end(), bytes.begin() + header->data_start, bytes.end());
  absl::StatusOr<uopc::nn::SafetensorsHeader> reparsed = uopc::nn::ParseSafetensorsHeader(again);
  if (!reparsed.ok() || !SameEntries(*header, *reparsed)) std::abort();
  return 0;
}
