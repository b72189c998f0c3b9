#include "runtime/sha256.h"

#include <string>

#include "gtest/gtest.h"

namespace uopc {
namespace {

// FIPS 180-4 / NIST example vectors.
TEST(Sha256Test, KnownDigests) {
  EXPECT_EQ(Sha256Hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(Sha256Hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(Sha256Hex(std::string(1000000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

// Padding crosses a block boundary at 56 bytes; every split of the input gives the same digest.
TEST(Sha256Test, SplitsAndBoundaries) {
  for (size_t n : {55u, 56u, 57u, 63u, 64u, 65u, 127u, 128u, 200u}) {
    std::string data;
    for (size_t i = 0; i < n; ++i) data.push_back(static_cast<char>(i * 7 + 3));
    std::string whole = Sha256Hex(data);
    for (size_t split = 0; split <= n; split += 13) {
      Sha256 sha;
      sha.Update(absl::string_view(data).substr(0, split));
      sha.Update(absl::string_view(data).substr(split));
      std::array<uint8_t, 32> digest = sha.Finish();
      EXPECT_EQ(digest, Sha256Digest(data)) << "n=" << n << " split=" << split;
    }
    EXPECT_EQ(whole.size(), 64u);
  }
}

}  // namespace
}  // namespace uopc
