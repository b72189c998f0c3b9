// Reading a whole weights file into memory, for the loaders of nn (safetensors, GGUF): a file that cannot be
// opened or read is an error naming the format and the path.
#ifndef UOPC_NN_READ_FILE_H_
#define UOPC_NN_READ_FILE_H_

#include <cstdint>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"

namespace uopc::nn {

// The bytes of the file `path`; `format` ("safetensors", "gguf") starts the error messages.
inline absl::StatusOr<std::vector<uint8_t>> ReadFileBytes(const std::string& path, absl::string_view format) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(format, ": cannot open ", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat(format, ": error reading ", path));
  return bytes;
}

// `s` with `path: ` in front of its message.
inline absl::Status WithPath(const absl::Status& s, const std::string& path) {
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

}  // namespace uopc::nn

#endif  // UOPC_NN_READ_FILE_H_
