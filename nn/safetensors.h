// Loading and saving tensors in safetensors files (tinygrad's nn.state safe_load / safe_save). The format and
// its checks are in nn/safetensors_format.h: a broken or lying file is an error, never a read out of bounds.
#ifndef UOPC_NN_SAFETENSORS_H_
#define UOPC_NN_SAFETENSORS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nn/safetensors_format.h"
#include "nn/state.h"
#include "tensor/tensor.h"

namespace uopc::nn {

// The tensors of a safetensors file in memory / on disk, in file order, as realized buffers on `device`
// ("" for the default device).
absl::StatusOr<StateDict> SafeLoadBytes(absl::Span<const uint8_t> bytes, const std::string& device = "");
absl::StatusOr<StateDict> SafeLoad(const std::string& path, const std::string& device = "");
// The metadata of a file without loading its tensors.
absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SafeLoadMetadata(const std::string& path);

// Realizes every tensor of `tensors` and writes them, in order, as tinygrad's safe_save does (compact JSON,
// header padded with spaces to a multiple of 8, `__metadata__` first when given). The file is written
// atomically (uop/util.h's WriteFileAtomically), so a failure or a crash leaves any old file whole.
absl::StatusOr<std::vector<uint8_t>> SafeSaveBytes(
    const StateDict& tensors, const std::vector<std::pair<std::string, std::string>>& metadata = {});
absl::Status SafeSave(const StateDict& tensors, const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& metadata = {});

}  // namespace uopc::nn

#endif  // UOPC_NN_SAFETENSORS_H_
