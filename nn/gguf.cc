// Loading GGUF files into tensors.
#include "nn/gguf.h"

#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nn/read_file.h"
#include "uop/status_macros.h"

namespace uopc::nn {

absl::StatusOr<GgufFile> GgufLoadBytes(absl::Span<const uint8_t> bytes, const std::string& device) {
  UOPC_ASSIGN_OR_RETURN(GgufHeader header, ParseGgufHeader(bytes));
  GgufFile out;
  out.metadata = std::move(header.metadata);
  for (const GgufTensorInfo& info : header.tensors) {
    // ParseGgufHeader checked that the data lies inside the file; an empty tensor's offset may not.
    absl::Span<const uint8_t> data = info.nbytes == 0
                                         ? absl::Span<const uint8_t>()
                                         : bytes.subspan(header.data_start + info.offset, info.nbytes);
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> values, GgmlToLoadedBytes(data, info.type, info.numel));
    Tensor t = Tensor::FromBytes(std::move(values), info.Shape(), GgmlLoadedDType(info.type), device);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("gguf: tensor \"", info.name, "\": ", t.status().message()));
    }
    out.tensors.Set(info.name, std::move(t));
  }
  return out;
}

absl::StatusOr<GgufFile> GgufLoad(const std::string& path, const std::string& device) {
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadFileBytes(path, "gguf"));
  absl::StatusOr<GgufFile> out = GgufLoadBytes(bytes, device);
  if (!out.ok()) return WithPath(out.status(), path);
  return out;
}

}  // namespace uopc::nn
