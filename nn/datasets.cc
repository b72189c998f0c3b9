#include "nn/datasets.h"

#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc::nn {
namespace {

constexpr uint8_t kUnsignedByte = 0x08;

uint32_t BigEndian32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};

}  // namespace

absl::StatusOr<ByteArray> ParseIdx(absl::Span<const uint8_t> bytes, const std::string& name) {
  if (bytes.size() < 4) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", bytes.size(), " bytes, too short for an IDX header (4 bytes at least)"));
  }
  if (bytes[0] != 0 || bytes[1] != 0) {
    return absl::InvalidArgumentError(absl::StrCat(name,
                                                   ": not an IDX file (its magic does not start with "
                                                   "two zero bytes)"));
  }
  if (bytes[2] != kUnsignedByte) {
    return absl::UnimplementedError(absl::StrCat(name, ": IDX element type 0x",
                                                 absl::Hex(bytes[2], absl::kZeroPad2),
                                                 "; only unsigned bytes (0x08) are read"));
  }
  const int ndim = bytes[3];
  if (ndim < 1 || ndim > 8) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", ndim, " dimensions (1 to 8 are read)"));
  }
  const size_t header = 4 + 4 * static_cast<size_t>(ndim);
  if (bytes.size() < header) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": truncated header (", bytes.size(), " of ", header, " bytes)"));
  }
  ByteArray out;
  // The element count, checked against the bytes present as it grows, so it cannot overflow.
  const uint64_t available = bytes.size() - header;
  uint64_t count = 1;
  for (int i = 0; i < ndim; ++i) {
    const uint32_t d = BigEndian32(bytes.data() + 4 + 4 * i);
    out.shape.push_back(static_cast<int64_t>(d));
    count = d == 0 ? 0 : (count > available ? count : count * d);
  }
  if (count != available) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": the header's shape ", TupleString(out.shape),
                                                   " does not match the ", available,
                                                   " bytes of data that follow it"));
  }
  out.data.assign(bytes.begin() + header, bytes.end());
  return out;
}

absl::StatusOr<std::vector<uint8_t>> ReadGzipFile(const std::string& path, size_t max_bytes) {
  errno = 0;
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (file == nullptr) {
    const int err = errno;
    if (err == ENOENT) return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    return absl::UnavailableError(
        absl::StrCat(path, ": cannot open: ", err ? std::strerror(err) : "no memory"));
  }
  gzbuffer(file.get(), 1 << 17);
  std::vector<uint8_t> out;
  std::vector<uint8_t> chunk(1 << 20);
  for (;;) {
    const int n = gzread(file.get(), chunk.data(), static_cast<unsigned>(chunk.size()));
    if (n < 0) break;  // gzerror below says why
    if (gzdirect(file.get())) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not a gzip file"));
    }
    if (n == 0) break;
    if (out.size() + n > max_bytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": decompresses to more than ", max_bytes, " bytes"));
    }
    out.insert(out.end(), chunk.begin(), chunk.begin() + n);
  }
  int code = Z_OK;
  const char* message = gzerror(file.get(), &code);
  if (code != Z_OK && code != Z_STREAM_END) {
    return absl::DataLossError(absl::StrCat(path, ": corrupt gzip data (", message, ")"));
  }
  return out;
}

absl::StatusOr<ByteArray> ReadIdxGz(const std::string& path) {
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, ReadGzipFile(path));
  return ParseIdx(bytes, path);
}

absl::StatusOr<MnistData> LoadMnist(const std::string& dir) {
  MnistData data;
  struct Part {
    const char* file;
    ByteArray* array;
    bool images;
  };
  const Part parts[] = {{"train-images-idx3-ubyte.gz", &data.train_images, true},
                        {"train-labels-idx1-ubyte.gz", &data.train_labels, false},
                        {"t10k-images-idx3-ubyte.gz", &data.test_images, true},
                        {"t10k-labels-idx1-ubyte.gz", &data.test_labels, false}};
  for (const Part& part : parts) {
    const std::string path = absl::StrCat(dir, "/", part.file);
    absl::StatusOr<ByteArray> array = ReadIdxGz(path);
    if (absl::IsNotFound(array.status())) {
      return absl::NotFoundError(absl::StrCat(array.status().message(),
                                              " (Fashion-MNIST comes with Debian's dataset-fashion-mnist "
                                              "package; ./bazelw installs it)"));
    }
    UOPC_RETURN_IF_ERROR(array.status());
    const Dims& shape = array->shape;
    if (part.images && (shape.size() != 3 || shape[1] != 28 || shape[2] != 28)) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, ": images of shape ", TupleString(shape), ", not (N, 28, 28)"));
    }
    if (!part.images) {
      if (shape.size() != 1) {
        return absl::InvalidArgumentError(
            absl::StrCat(path, ": labels of shape ", TupleString(shape), ", not (N,)"));
      }
      for (size_t i = 0; i < array->data.size(); ++i) {
        if (array->data[i] > 9) {
          return absl::InvalidArgumentError(
              absl::StrCat(path, ": label ", i, " is ", array->data[i], ", not a class 0 to 9"));
        }
      }
    }
    *part.array = *std::move(array);
  }
  for (auto [images, labels] :
       {std::pair{&data.train_images, &data.train_labels}, std::pair{&data.test_images, &data.test_labels}}) {
    if (images->shape[0] != labels->shape[0]) {
      return absl::InvalidArgumentError(
          absl::StrCat(dir, ": ", images->shape[0], " images but ", labels->shape[0], " labels"));
    }
    images->shape = {images->shape[0], 1, 28, 28};
  }
  return data;
}

Tensor ToTensor(const ByteArray& array, const std::string& device) {
  return Tensor::FromBytes(array.data, array.shape, dtypes::kUInt8, device);
}

}  // namespace uopc::nn
