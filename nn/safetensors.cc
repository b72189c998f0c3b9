// Loading and saving tensors in safetensors files.
#include "nn/safetensors.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nn/read_file.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc::nn {

absl::StatusOr<StateDict> SafeLoadBytes(absl::Span<const uint8_t> bytes, const std::string& device) {
  UOPC_ASSIGN_OR_RETURN(SafetensorsHeader header, ParseSafetensorsHeader(bytes));
  StateDict out;
  for (const SafetensorsEntry& e : header.entries) {
    const uint8_t* data = bytes.data() + header.data_start;
    std::vector<uint8_t> values(data + e.begin, data + e.end);
    Tensor t = Tensor::FromBytes(std::move(values), e.shape, e.dtype, device);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors: tensor \"", e.name, "\": ", t.status().message()));
    }
    out.Set(e.name, std::move(t));
  }
  return out;
}

absl::StatusOr<StateDict> SafeLoad(const std::string& path, const std::string& device) {
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path, "safetensors"));
  absl::StatusOr<StateDict> out = SafeLoadBytes(bytes, device);
  if (!out.ok()) return WithPath(out.status(), path);
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SafeLoadMetadata(const std::string& path) {
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path, "safetensors"));
  absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsHeader(bytes);
  if (!header.ok()) return WithPath(header.status(), path);
  return header->metadata;
}

absl::StatusOr<std::vector<uint8_t>> SafeSaveBytes(
    const StateDict& tensors, const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::vector<Tensor> all;
  for (const auto& [name, t] : tensors) {
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SafeSave: tensor \"", name, "\" has an error: ", t.status().message()));
    }
    all.push_back(t);
  }
  if (!all.empty()) {
    UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(all));
  }
  std::vector<SafetensorsEntry> entries;
  std::vector<std::vector<uint8_t>> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, t.ToBytes());
    entries.push_back({name, t.dtype(), t.Shape(), offset, offset + bytes.size()});
    offset += bytes.size();
    data.push_back(std::move(bytes));
  }
  UOPC_ASSIGN_OR_RETURN(std::string header, SafetensorsHeaderBytes(entries, metadata));
  std::vector<uint8_t> out(header.begin(), header.end());
  out.reserve(header.size() + offset);
  for (const std::vector<uint8_t>& d : data) out.insert(out.end(), d.begin(), d.end());
  return out;
}

absl::Status SafeSave(const StateDict& tensors, const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, SafeSaveBytes(tensors, metadata));
  absl::Status written =
      WriteFileAtomically(path, absl::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
  if (!written.ok()) return absl::Status(written.code(), absl::StrCat("SafeSave: ", written.message()));
  return absl::OkStatus();
}

}  // namespace uopc::nn
