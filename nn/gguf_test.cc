// GGUF: the file harvest_gguf.py wrote loads to exactly what tinygrad v0.10.3's gguf_load returned for it
// (every metadata type; F32, F16, I8, I16, I32 and the quantized Q4_0, Q4_1, Q8_0 and Q6_K, bit for bit), and
// broken files (bad magic, truncations, unknown types, lying counts and sizes) are clear errors.
#include "nn/gguf.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/gguf_format.h"

namespace uopc::nn {
namespace {

using ::testing::HasSubstr;

const char kFile[] = "nn/testdata/tiny.gguf";
const char kExpected[] = "nn/testdata/tiny_gguf.expected.json";

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A metadata value as the JSON tinygrad's value dumps to (harvest_gguf.py writes uint8s as numbers).
nlohmann::json ToJson(const GgufValue& v) {
  return std::visit(
      [](const auto& x) -> nlohmann::json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, GgufArray>) {
          nlohmann::json out = nlohmann::json::array();
          for (const GgufValue& e : x.values) out.push_back(ToJson(e));
          return out;
        } else if constexpr (std::is_same_v<T, float>) {
          return static_cast<double>(x);
        } else {
          return x;
        }
      },
      v.value);
}

// A tensor's values as the harvest stores them: floats as their bit patterns, integers as themselves.
std::vector<int64_t> StoredValues(const Tensor& t) {
  absl::StatusOr<std::vector<uint8_t>> bytes = t.ToBytes();
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  std::vector<int64_t> out;
  const size_t size = t.dtype().itemsize();
  for (size_t i = 0; bytes.ok() && i + size <= bytes->size(); i += size) {
    const uint8_t* p = bytes->data() + i;
    auto read = [&](auto v) {
      std::memcpy(&v, p, sizeof(v));
      return static_cast<int64_t>(v);
    };
    DType d = t.dtype();
    if (d == dtypes::kFloat32) {
      out.push_back(read(uint32_t{}));
    } else if (d == dtypes::kFloat16) {
      out.push_back(read(uint16_t{}));
    } else if (d == dtypes::kInt8) {
      out.push_back(read(int8_t{}));
    } else if (d == dtypes::kInt16) {
      out.push_back(read(int16_t{}));
    } else if (d == dtypes::kInt32) {
      out.push_back(read(int32_t{}));
    } else {
      ADD_FAILURE() << "unexpected dtype " << d;
    }
  }
  return out;
}

TEST(GgufTest, LoadsWhatTinygradLoads) {
  absl::StatusOr<GgufFile> file = GgufLoad(kFile);
  ASSERT_TRUE(file.ok()) << file.status();
  std::ifstream in(kExpected);
  nlohmann::json expected = nlohmann::json::parse(in);

  ASSERT_EQ(file->metadata.size(), expected["kv"].size());
  for (size_t i = 0; i < file->metadata.size(); ++i) {
    const auto& [key, value] = file->metadata[i];
    EXPECT_EQ(key, expected["kv"][i][0].get<std::string>());
    EXPECT_EQ(ToJson(value), expected["kv"][i][1]) << key;
  }
  // The value types the file wrote, which tinygrad's Python values do not show.
  const std::map<std::string, GgufValueType> types = {
      {"test.uint8", GgufValueType::kUInt8},       {"test.int8", GgufValueType::kInt8},
      {"test.uint16", GgufValueType::kUInt16},     {"test.int16", GgufValueType::kInt16},
      {"test.uint32", GgufValueType::kUInt32},     {"test.int32", GgufValueType::kInt32},
      {"test.float32", GgufValueType::kFloat32},   {"test.bool", GgufValueType::kBool},
      {"test.string", GgufValueType::kString},     {"test.uint64", GgufValueType::kUInt64},
      {"test.int64", GgufValueType::kInt64},       {"test.float64", GgufValueType::kFloat64},
      {"test.array.int32", GgufValueType::kArray},
  };
  for (const auto& [key, type] : types) {
    const GgufValue* v = FindGgufValue(file->metadata, key);
    ASSERT_NE(v, nullptr) << key;
    EXPECT_EQ(v->type(), type) << key;
  }
  const GgufValue* empty = FindGgufValue(file->metadata, "test.array.empty");
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(std::get<GgufArray>(empty->value).element_type, GgufValueType::kFloat32);
  EXPECT_EQ(FindGgufValue(file->metadata, "no.such.key"), nullptr);

  const std::map<std::string, DType> dtype_of = {{"float", dtypes::kFloat32},
                                                 {"half", dtypes::kFloat16},
                                                 {"signed char", dtypes::kInt8},
                                                 {"short", dtypes::kInt16},
                                                 {"int", dtypes::kInt32}};
  ASSERT_EQ(file->tensors.size(), expected["tensors"].size());
  for (size_t i = 0; i < file->tensors.size(); ++i) {
    const nlohmann::json& want = expected["tensors"][i];
    const auto& [name, t] = file->tensors.entries()[i];
    SCOPED_TRACE(name);
    EXPECT_EQ(name, want["name"].get<std::string>());
    EXPECT_EQ(t.dtype(), dtype_of.at(want["dtype"].get<std::string>()));
    EXPECT_EQ(t.Shape(), want["shape"].get<Dims>());
    EXPECT_EQ(StoredValues(t), want["values"].get<std::vector<int64_t>>());
  }
}

TEST(GgufTest, EveryTruncationIsAnError) {
  std::vector<uint8_t> bytes = ReadBytes(kFile);
  absl::StatusOr<GgufHeader> whole = ParseGgufHeader(bytes);
  ASSERT_TRUE(whole.ok()) << whole.status();
  // The file pads after its last tensor; cutting the padding off leaves a whole file.
  uint64_t end = 0;
  for (const GgufTensorInfo& t : whole->tensors) end = std::max(end, whole->data_start + t.offset + t.nbytes);
  ASSERT_LT(end, bytes.size());
  EXPECT_TRUE(ParseGgufHeader(absl::Span<const uint8_t>(bytes.data(), end)).ok());
  for (size_t n = 0; n < end; ++n) {
    absl::StatusOr<GgufHeader> h = ParseGgufHeader(absl::Span<const uint8_t>(bytes.data(), n));
    EXPECT_FALSE(h.ok()) << "prefix of " << n << " bytes";
  }
}

// Writes GGUF files field by field, so a test can write any of them wrong.
class GgufWriter {
 public:
  GgufWriter& Raw(const std::string& s) {
    bytes_.insert(bytes_.end(), s.begin(), s.end());
    return *this;
  }
  template <typename T>
  GgufWriter& Put(T v) {
    uint8_t b[sizeof(T)];
    std::memcpy(b, &v, sizeof(T));
    bytes_.insert(bytes_.end(), b, b + sizeof(T));
    return *this;
  }
  GgufWriter& Str(const std::string& s) { return Put<uint64_t>(s.size()).Raw(s); }
  GgufWriter& Header(int64_t n_tensors, int64_t n_kv, int32_t version = 3) {
    return Raw("GGUF").Put<int32_t>(version).Put<int64_t>(n_tensors).Put<int64_t>(n_kv);
  }
  GgufWriter& TensorInfo(const std::string& name, const std::vector<uint64_t>& dims, int32_t type,
                         uint64_t offset) {
    Str(name).Put<uint32_t>(dims.size());
    for (uint64_t d : dims) Put<uint64_t>(d);
    return Put<int32_t>(type).Put<uint64_t>(offset);
  }
  // Pads to `alignment`, then appends `n` data bytes of value `fill`.
  GgufWriter& Data(size_t n, uint8_t fill = 0, size_t alignment = 32) {
    bytes_.resize((bytes_.size() + alignment - 1) / alignment * alignment);
    bytes_.resize(bytes_.size() + n, fill);
    return *this;
  }
  const std::vector<uint8_t>& bytes() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

std::string Error(const GgufWriter& w) {
  absl::StatusOr<GgufFile> f = GgufLoadBytes(w.bytes());
  return f.ok() ? "ok" : std::string(f.status().message());
}

TEST(GgufTest, WrittenFilesLoad) {
  // Q8_0 with d = 1.0 (half 0x3c00) and the quants 0, 1, ..., 31 as int8; a duplicate key keeps its first
  // place and its last value; alignment 8.
  GgufWriter w;
  w.Header(1, 3).Str("general.alignment").Put<int32_t>(4).Put<uint32_t>(8);
  w.Str("k").Put<int32_t>(5).Put<int32_t>(1).Str("k").Put<int32_t>(8).Str("two");
  w.TensorInfo("q", {32}, 8, 0).Data(0, 0, 8).Put<uint16_t>(0x3c00);
  for (int i = 0; i < 32; ++i) w.Put<int8_t>(i - 16);
  absl::StatusOr<GgufFile> f = GgufLoadBytes(w.bytes());
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->metadata.size(), 2);
  EXPECT_EQ(f->metadata[1].first, "k");
  EXPECT_EQ(std::get<std::string>(f->metadata[1].second.value), "two");
  const Tensor* q = f->tensors.Find("q");
  ASSERT_NE(q, nullptr);
  EXPECT_EQ(q->Shape(), Dims{32});
  std::vector<float> want;
  for (int i = 0; i < 32; ++i) want.push_back(i - 16);
  EXPECT_EQ(*q->ToVector<float>(), want);
  // No tensors at all, and a zero-size tensor.
  EXPECT_EQ(Error(GgufWriter().Header(0, 0)), "ok");
  EXPECT_EQ(Error(GgufWriter().Header(1, 0).TensorInfo("z", {0, 4}, 2, 1000)), "ok");
}

TEST(GgufTest, BrokenFilesAreClearErrors) {
  EXPECT_THAT(Error(GgufWriter().Raw("GGUX").Put<int32_t>(3).Put<int64_t>(0).Put<int64_t>(0)),
              HasSubstr("at byte 0: not a GGUF file"));
  EXPECT_THAT(Error(GgufWriter().Raw("GG")),
              HasSubstr("at byte 0: truncated: the magic needs 4 bytes, 2 left"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 0, 1)), HasSubstr("at byte 4: GGUF version 1 is not supported"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 1).Str("k").Put<int32_t>(13).Put<uint8_t>(0)),
              HasSubstr("at byte 33: unknown metadata value type 13"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 1).Str("k").Put<int32_t>(9).Put<int32_t>(-1).Put<uint64_t>(0)),
              HasSubstr("unknown array element type -1"));
  // Counts larger than the file could hold are refused before anything is allocated for them.
  EXPECT_THAT(Error(GgufWriter().Header(0, int64_t{1} << 62).Data(64)),
              HasSubstr("at byte 16: key/value count"));
  EXPECT_THAT(Error(GgufWriter().Header(int64_t{1} << 62, 0).Data(64)), HasSubstr("at byte 8: tensor count"));
  EXPECT_THAT(Error(GgufWriter().Header(-1, 0)), HasSubstr("tensor count -1 is negative"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 1).Str("k").Put<int32_t>(9).Put<int32_t>(8).Put<uint64_t>(
                  uint64_t{1} << 60)),
              HasSubstr("at byte 41: truncated: an array of 1152921504606846976 elements"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 1).Str("k").Put<int32_t>(8).Put<uint64_t>(uint64_t{1} << 63)),
              HasSubstr("at byte 37: truncated: a string value of 9223372036854775808 bytes, 0 left"));
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).Str("t").Put<uint32_t>(0xffffffff).Data(64)),
              HasSubstr("tensor \"t\" has 4294967295 dimensions"));
  // Arrays nested deeper than any real file are refused rather than recursed into.
  GgufWriter deep;
  deep.Header(0, 1).Str("k").Put<int32_t>(9);
  for (int i = 0; i < 100; ++i) deep.Put<int32_t>(9).Put<uint64_t>(1);
  EXPECT_THAT(Error(deep.Data(64)), HasSubstr("arrays nested more than 64 deep"));
  // Tensor infos that lie.
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).TensorInfo("t", {32}, 12, 0).Data(144)),
              HasSubstr("tensor \"t\": GGML type 12 is not supported"));
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).TensorInfo("t", {31}, 2, 0).Data(18)),
              HasSubstr("31 elements do not fill whole blocks of 32"));
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).TensorInfo("t", {uint64_t{1} << 62, 8}, 0, 0)),
              HasSubstr("the element count overflows"));
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).TensorInfo("t", {uint64_t{1} << 63}, 0, 0)),
              HasSubstr("dimension 9223372036854775808 is too large"));
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).TensorInfo("t", {4}, 0, 0).Data(15)),
              HasSubstr("tensor \"t\": its 16 bytes at data offset 0 (byte 64 + 0) are outside the data "
                        "section of 15 bytes"));
  EXPECT_THAT(Error(GgufWriter().Header(1, 0).TensorInfo("t", {1}, 0, ~uint64_t{0}).Data(4)),
              HasSubstr("outside the data section"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 1).Str("general.alignment").Put<int32_t>(4).Put<uint32_t>(0)),
              HasSubstr("\"general.alignment\" is not a positive integer"));
  EXPECT_THAT(Error(GgufWriter().Header(0, 1).Str("general.alignment").Put<int32_t>(8).Str("32")),
              HasSubstr("\"general.alignment\" is not a positive integer"));
  EXPECT_THAT(std::string(GgufLoad("/nonexistent/x.gguf").status().message()),
              HasSubstr("gguf: cannot open"));
  absl::Status in_file = GgufLoadBytes(GgufWriter().Raw("GGUX").bytes()).status();
  EXPECT_EQ(in_file.code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace uopc::nn
