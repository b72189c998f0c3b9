// Loading GGUF files (llama.cpp's weights format): tinygrad's nn.state gguf_load. The metadata comes back as
// typed values and the tensors as a state dict, quantized ones dequantized to float32 with exactly the values
// tinygrad's ggml_data_to_tensor computes (F32, F16, Q4_0, Q4_1, Q8_0, Q6_K, I8, I16 and I32;
// nn/gguf_format.h has the format and its checks):
//
//   UOPC_ASSIGN_OR_RETURN(nn::GgufFile file, nn::GgufLoad("model.Q4_0.gguf"));
//   const nn::GgufValue* arch = nn::FindGgufValue(file.metadata, "general.architecture");
//   const Tensor* w = file.tensors.Find("token_embd.weight");  // shape: the file's dimensions reversed
//
// tinygrad builds the dequantization as a Tensor graph over the file's bytes; uopc dequantizes on the host
// (in tinygrad's float32 order of operations, so the values are the same bits) and hands back realized
// buffers.
#ifndef UOPC_NN_GGUF_H_
#define UOPC_NN_GGUF_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "nn/gguf_format.h"
#include "nn/state.h"

namespace uopc::nn {

// What gguf_load returns: (kv_data, state_dict).
struct GgufFile {
  GgufMetadata metadata;
  // In file order, as realized buffers on the loading device.
  StateDict tensors;
};

// The GGUF file in memory / on disk, its tensors on `device` ("" for the default device). A broken file is an
// InvalidArgument error naming the byte offset or the tensor.
absl::StatusOr<GgufFile> GgufLoadBytes(absl::Span<const uint8_t> bytes, const std::string& device = "");
absl::StatusOr<GgufFile> GgufLoad(const std::string& path, const std::string& device = "");

}  // namespace uopc::nn

#endif  // UOPC_NN_GGUF_H_
