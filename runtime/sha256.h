// SHA-256 (FIPS 180-4), for the compile cache's file names and entry checksums.
//
// The cache outlives processes and is shared by every uopc on the machine, so its keys need a hash that is
// stable across builds and runs (absl::Hash is neither) and whose collisions never happen in practice.
#ifndef UOPC_RUNTIME_SHA256_H_
#define UOPC_RUNTIME_SHA256_H_

#include <array>
#include <cstdint>
#include <string>

#include "absl/strings/string_view.h"

namespace uopc {

class Sha256 {
 public:
  Sha256();
  // Feeds more bytes; any split of the input gives the same digest.
  void Update(absl::string_view bytes);
  // The digest of everything fed; the object must not be used afterwards.
  std::array<uint8_t, 32> Finish();

 private:
  void Block(const uint8_t* block);
  std::array<uint32_t, 8> state_;
  std::array<uint8_t, 64> buffer_;
  uint64_t length_ = 0;  // bytes fed
};

std::array<uint8_t, 32> Sha256Digest(absl::string_view bytes);
// Lower-case hexadecimal, 64 characters.
std::string Sha256Hex(absl::string_view bytes);

}  // namespace uopc

#endif  // UOPC_RUNTIME_SHA256_H_
