// Data sets on disk: MNIST-format IDX files, gzipped (tinygrad's nn.datasets.mnist, without the download).
//
// Debian's `dataset-fashion-mnist` package (which `bazelw` installs) puts Fashion-MNIST's four files under
// /usr/share/datasets/fashion-mnist/; MNIST itself has the same layout and file names. An IDX file is a
// 4-byte magic (two zero bytes, a type code, the number of dimensions), one big-endian uint32 per dimension,
// then the values in row-major order. Only unsigned bytes (type 0x08), which both data sets use, are read.
// A missing file, a file that is not gzip, a corrupt or truncated stream, or a header that disagrees with the
// data that follows is an error naming the file; nothing reads past what the file holds.
//
//   ASSIGN_OR_RETURN(nn::MnistData data, nn::LoadMnist(nn::kFashionMnistDir));
//   Tensor x = nn::ToTensor(data.train_images);  // uint8, (60000, 1, 28, 28)
#ifndef UOPC_NN_DATASETS_H_
#define UOPC_NN_DATASETS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "tensor/tensor.h"

namespace uopc::nn {

inline constexpr char kFashionMnistDir[] = "/usr/share/datasets/fashion-mnist";

// An array of unsigned bytes with its shape.
struct ByteArray {
  Dims shape;
  std::vector<uint8_t> data;  // row-major, the product of `shape` long
};

// The IDX array in `bytes` (already decompressed). Errors name `name`.
absl::StatusOr<ByteArray> ParseIdx(absl::Span<const uint8_t> bytes, const std::string& name = "IDX data");
// The decompressed contents of a gzip file (at most `max_bytes`, an error beyond).
absl::StatusOr<std::vector<uint8_t>> ReadGzipFile(const std::string& path, size_t max_bytes = size_t{1} << 31);
// ReadGzipFile then ParseIdx.
absl::StatusOr<ByteArray> ReadIdxGz(const std::string& path);

// The four arrays of MNIST or Fashion-MNIST: images (N, 1, 28, 28) and labels (N,) in 0..9.
struct MnistData {
  ByteArray train_images, train_labels, test_images, test_labels;
};
// Reads {train,t10k}-{images-idx3,labels-idx1}-ubyte.gz from `dir` and checks they fit together (image size
// 28x28, as many labels as images, labels below 10). Images get tinygrad's (N, 1, 28, 28) shape.
absl::StatusOr<MnistData> LoadMnist(const std::string& dir = kFashionMnistDir);

// A uint8 tensor of the array's values and shape.
Tensor ToTensor(const ByteArray& array, const std::string& device = "");

}  // namespace uopc::nn

#endif  // UOPC_NN_DATASETS_H_
