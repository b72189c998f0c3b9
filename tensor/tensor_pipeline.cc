// Tensor methods around the realize pipeline that tinygrad keeps beside it: the FUSE mark, the in-place
// device move, and tensors whose values come from outside the graph (host memory, a file).
#include <cstring>
#include <fstream>
#include <iterator>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "schedule/tensor_uop.h"
#include "tensor/tensor.h"
#include "tensor/tensor_internal.h"

namespace uopc {

using tensor_internal::Error;

Tensor Tensor::Fuse() const {
  UOPC_TENSOR_PROPAGATE(this);
  return Tensor(Alu(Ops::FUSE, {uop()}));
}

Tensor Tensor::To_(const std::string& device) const {
  UOPC_TENSOR_PROPAGATE(this);
  Tensor moved = To(device.empty() ? DefaultDevice() : device);
  UOPC_TENSOR_PROPAGATE(&moved);
  if (std::optional<Tensor> grad = Grad(); grad.has_value() && grad->ok()) {
    Tensor moved_grad = grad->To(moved.Device());
    UOPC_TENSOR_PROPAGATE(&moved_grad);
    grad->SetUOp(moved_grad.uop());
  }
  SetUOp(moved.uop());
  return *this;
}

Tensor Tensor::FromBlob(const void* ptr, const Dims& shape, DType dtype, const std::string& device) {
  Tensor t = Empty(shape, dtype, device);
  UOPC_TENSOR_PROPAGATE(&t);
  const int64_t size = tensor_internal::NumElements(shape) * dtype.itemsize();
  if (ptr == nullptr && size > 0) return Error("FromBlob", "the pointer is null");
  // Empty is BUFFER, or RESHAPE(BUFFER): the bytes go to that BUFFER at the next realize.
  UOpPtr buffer = t.uop();
  while (buffer->op() != Ops::BUFFER) buffer = buffer->src()[0];
  std::vector<uint8_t> bytes(size);
  if (size > 0) std::memcpy(bytes.data(), ptr, size);
  tensor_internal::AddHostData(buffer, std::move(bytes));
  return t;
}

Tensor Tensor::FromUrl(const std::string& url, bool gunzip, DType dtype, const std::string& device) {
  std::string path = url;
  if (absl::StartsWith(url, "file://")) {
    path = url.substr(std::strlen("file://"));
  } else if (absl::StrContains(url, "://")) {
    return FromError(absl::UnimplementedError(
        absl::StrCat("FromUrl: only file:// URLs and paths can be read here (no network), not ", url)));
  }
  if (gunzip) return FromError(absl::UnimplementedError("FromUrl: gunzip is not supported (no zlib here)"));
  if (dtype.itemsize() < 1) return Error("FromUrl", "dtype " + dtype.ToString() + " has no size");
  std::ifstream file(path, std::ios::binary);
  if (!file) return FromError(absl::NotFoundError(absl::StrCat("FromUrl: cannot open ", path)));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (file.bad()) return FromError(absl::DataLossError(absl::StrCat("FromUrl: cannot read ", path)));
  // As tinygrad's DISK tensor of the file: its size divided by the dtype's, the rest left out.
  const int64_t n = static_cast<int64_t>(bytes.size()) / dtype.itemsize();
  bytes.resize(n * dtype.itemsize());
  return FromBytes(std::move(bytes), {n}, dtype, device);
}

}  // namespace uopc
