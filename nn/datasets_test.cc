#include "nn/datasets.h"

#include <zlib.h>

#include <array>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uopc::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string TempPath(const std::string& name) {
  const char* dir = std::getenv("TEST_TMPDIR");
  return std::string(dir != nullptr ? dir : "/tmp") + "/" + name;
}

void WriteGz(const std::string& path, const std::vector<uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  if (!bytes.empty()) {
    ASSERT_EQ(gzwrite(f, bytes.data(), bytes.size()), static_cast<int>(bytes.size()));
  }
  gzclose(f);
}

std::vector<uint8_t> Idx(std::vector<uint32_t> dims, size_t data_bytes, uint8_t type = 0x08) {
  std::vector<uint8_t> out = {0, 0, type, static_cast<uint8_t>(dims.size())};
  for (uint32_t d : dims) {
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<uint8_t>(d >> shift));
  }
  for (size_t i = 0; i < data_bytes; ++i) out.push_back(static_cast<uint8_t>(i % 251));
  return out;
}

TEST(ParseIdxTest, ReadsShapeAndValues) {
  absl::StatusOr<ByteArray> a = ParseIdx(Idx({2, 3}, 6));
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_THAT(a->shape, ElementsAre(2, 3));
  EXPECT_THAT(a->data, ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(ParseIdxTest, BadHeadersAreErrorsNamingTheProblem) {
  EXPECT_THAT(ParseIdx({0, 0, 8}, "f").status().message(), HasSubstr("f: 3 bytes, too short"));
  EXPECT_THAT(ParseIdx({1, 0, 8, 1, 0, 0, 0, 0}, "f").status().message(), HasSubstr("not an IDX file"));
  EXPECT_THAT(ParseIdx(Idx({2}, 2, 0x0D)).status().message(), HasSubstr("element type 0x0d"));
  EXPECT_THAT(ParseIdx({0, 0, 8, 0}).status().message(), HasSubstr("0 dimensions"));
  EXPECT_THAT(ParseIdx({0, 0, 8, 2, 0, 0, 0, 1}).status().message(), HasSubstr("truncated header (8 of 12"));
  // A header that claims more (or fewer) values than follow.
  EXPECT_THAT(ParseIdx(Idx({2, 3}, 5)).status().message(),
              HasSubstr("shape (2, 3) does not match the 5 bytes"));
  EXPECT_THAT(ParseIdx(Idx({2, 3}, 7)).status().message(), HasSubstr("7 bytes"));
  // Dimensions whose product overflows 64 bits are not believed.
  EXPECT_THAT(ParseIdx(Idx({0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF}, 3)).status().message(),
              HasSubstr("does not match"));
  EXPECT_TRUE(ParseIdx(Idx({4, 0}, 0)).ok());
}

TEST(ReadGzipFileTest, MissingNotGzipAndTruncatedFilesAreErrors) {
  EXPECT_EQ(ReadGzipFile(TempPath("absent.gz")).status().code(), absl::StatusCode::kNotFound);
  const std::string plain = TempPath("plain.gz");
  std::ofstream(plain) << "just text";
  EXPECT_THAT(ReadGzipFile(plain).status().message(), HasSubstr("not a gzip file"));

  const std::string good = TempPath("good.gz");
  WriteGz(good, Idx({100}, 100));
  absl::StatusOr<ByteArray> a = ReadIdxGz(good);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_EQ(a->data.size(), 100u);

  std::ifstream in(good, std::ios::binary);
  std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string truncated = TempPath("truncated.gz");
  std::ofstream(truncated, std::ios::binary) << bytes.substr(0, bytes.size() - 12);
  absl::StatusOr<std::vector<uint8_t>> t = ReadGzipFile(truncated);
  EXPECT_EQ(t.status().code(), absl::StatusCode::kDataLoss) << t.status();
  std::string flipped = bytes;
  flipped[flipped.size() / 2] ^= 0x5A;
  const std::string corrupt = TempPath("corrupt.gz");
  std::ofstream(corrupt, std::ios::binary) << flipped;
  EXPECT_FALSE(ReadIdxGz(corrupt).ok());
  EXPECT_EQ(ReadGzipFile(good, 50).status().code(), absl::StatusCode::kResourceExhausted);
}

TEST(LoadMnistTest, ChecksTheFilesFitTogether) {
  const std::string dir = TempPath("mnist");
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  EXPECT_THAT(LoadMnist(dir).status().message(), HasSubstr("dataset-fashion-mnist"));
  std::vector<uint8_t> labels = Idx({3}, 0);
  for (uint8_t l : {7, 0, 9}) labels.push_back(l);
  WriteGz(dir + "/train-images-idx3-ubyte.gz", Idx({3, 28, 28}, 3 * 784));
  WriteGz(dir + "/train-labels-idx1-ubyte.gz", labels);
  WriteGz(dir + "/t10k-images-idx3-ubyte.gz", Idx({2, 28, 28}, 2 * 784));
  WriteGz(dir + "/t10k-labels-idx1-ubyte.gz", labels);
  EXPECT_THAT(LoadMnist(dir).status().message(), HasSubstr("2 images but 3 labels"));
  labels[9] = 10;  // label 1 (after the 8-byte header)
  WriteGz(dir + "/t10k-labels-idx1-ubyte.gz", labels);
  EXPECT_THAT(LoadMnist(dir).status().message(), HasSubstr("label 1 is 10"));
  std::vector<uint8_t> two = Idx({2}, 0);
  two.push_back(1);
  two.push_back(2);
  WriteGz(dir + "/t10k-labels-idx1-ubyte.gz", two);
  absl::StatusOr<MnistData> data = LoadMnist(dir);
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->train_images.shape, ElementsAre(3, 1, 28, 28));
  EXPECT_THAT(data->test_labels.data, ElementsAre(1, 2));
  WriteGz(dir + "/t10k-images-idx3-ubyte.gz", Idx({2, 28, 27}, 2 * 28 * 27));
  EXPECT_THAT(LoadMnist(dir).status().message(), HasSubstr("not (N, 28, 28)"));
}

TEST(LoadMnistTest, DebiansFashionMnist) {
  absl::StatusOr<MnistData> data = LoadMnist(kFashionMnistDir);
  if (absl::IsNotFound(data.status())) {
    GTEST_SKIP() << data.status() << "; install it with ./bazelw (as root) or apt-get install dataset-fashion-mnist";
  }
  ASSERT_TRUE(data.ok()) << data.status();
  EXPECT_THAT(data->train_images.shape, ElementsAre(60000, 1, 28, 28));
  EXPECT_THAT(data->test_images.shape, ElementsAre(10000, 1, 28, 28));
  // Fashion-MNIST is balanced: 6,000 training and 1,000 test images of each class.
  std::array<int, 10> train{}, test{};
  for (uint8_t l : data->train_labels.data) ++train[l];
  for (uint8_t l : data->test_labels.data) ++test[l];
  for (int c = 0; c < 10; ++c) {
    EXPECT_EQ(train[c], 6000) << c;
    EXPECT_EQ(test[c], 1000) << c;
  }
  Tensor t = ToTensor(data->test_images);
  EXPECT_EQ(t.dtype(), dtypes::kUInt8);
  EXPECT_THAT(t.Shape(), ElementsAre(10000, 1, 28, 28));
}

}  // namespace
}  // namespace uopc::nn
