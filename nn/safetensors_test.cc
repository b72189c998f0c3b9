// safetensors: tinygrad's file loads exactly, saving reproduces it byte for byte, and broken files are
// errors.
#include "nn/safetensors.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/state.h"

namespace uopc::nn {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> ReadBytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in) << path;
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

const char kFile[] = "nn/testdata/tiny_model.safetensors";
const char kExpected[] = "nn/testdata/tiny_model.expected.json";

double HalfToDouble(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 31, mantissa = h & 1023;
  double v = exponent == 0    ? std::ldexp(mantissa, -24)
             : exponent == 31 ? (mantissa ? NAN : INFINITY)
                              : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -v : v;
}

// The values of a realized tensor as doubles, whatever its dtype.
std::vector<double> Values(const Tensor& t) {
  absl::StatusOr<std::vector<uint8_t>> bytes = t.ToBytes();
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  std::vector<double> out;
  const int size = t.dtype().itemsize();
  for (size_t i = 0; bytes.ok() && i + size <= bytes->size(); i += size) {
    const uint8_t* p = bytes->data() + i;
    auto read = [&](auto v) {
      std::memcpy(&v, p, sizeof(v));
      return static_cast<double>(v);
    };
    DType d = t.dtype();
    if (d == dtypes::kFloat32)
      out.push_back(read(float{}));
    else if (d == dtypes::kFloat16)
      out.push_back(HalfToDouble(static_cast<uint16_t>(read(uint16_t{}))));
    else if (d == dtypes::kInt32)
      out.push_back(read(int32_t{}));
    else if (d == dtypes::kInt64)
      out.push_back(read(int64_t{}));
    else if (d == dtypes::kBool || d == dtypes::kUInt8)
      out.push_back(read(uint8_t{}));
    else
      ADD_FAILURE() << "unexpected dtype " << d;
  }
  return out;
}

TEST(SafetensorsTest, LoadsTinygradsFileExactly) {
  absl::StatusOr<StateDict> state = SafeLoad(kFile);
  ASSERT_TRUE(state.ok()) << state.status();
  std::ifstream in(kExpected);
  nlohmann::ordered_json expected = nlohmann::ordered_json::parse(in);
  const std::map<std::string, DType> dtype_of = {{"float", dtypes::kFloat32}, {"half", dtypes::kFloat16},
                                                 {"int", dtypes::kInt32},     {"long", dtypes::kInt64},
                                                 {"bool", dtypes::kBool},     {"uchar", dtypes::kUInt8}};
  ASSERT_EQ(state->size(), expected["tensors"].size());
  size_t i = 0;
  for (auto& [name, want] : expected["tensors"].items()) {
    SCOPED_TRACE(name);
    EXPECT_EQ(state->entries()[i++].first, name);  // file order
    const Tensor* t = state->Find(name);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(t->dtype(), dtype_of.at(want["dtype"].get<std::string>()));
    EXPECT_EQ(t->Shape(), want["shape"].get<Dims>());
    std::vector<double> values = Values(*t);
    ASSERT_EQ(values.size(), want["values"].size());
    for (size_t k = 0; k < values.size(); ++k) {
      const auto& w = want["values"][k];
      EXPECT_EQ(values[k], w.is_boolean() ? (w.get<bool>() ? 1.0 : 0.0) : w.get<double>()) << k;
    }
  }
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> metadata = SafeLoadMetadata(kFile);
  ASSERT_TRUE(metadata.ok()) << metadata.status();
  std::vector<std::pair<std::string, std::string>> want_meta;
  for (auto& [k, v] : expected["metadata"].items()) want_meta.emplace_back(k, v.get<std::string>());
  EXPECT_EQ(*metadata, want_meta);
}

TEST(SafetensorsTest, SavingReproducesTinygradsBytes) {
  absl::StatusOr<StateDict> state = SafeLoad(kFile);
  ASSERT_TRUE(state.ok()) << state.status();
  absl::StatusOr<std::vector<std::pair<std::string, std::string>>> metadata = SafeLoadMetadata(kFile);
  ASSERT_TRUE(metadata.ok());
  absl::StatusOr<std::vector<uint8_t>> saved = SafeSaveBytes(*state, *metadata);
  ASSERT_TRUE(saved.ok()) << saved.status();
  EXPECT_EQ(*saved, ReadBytes(kFile));
}

TEST(SafetensorsTest, SaveThenLoadRoundTrips) {
  StateDict state;
  state.Set("a.weight", Tensor::FromVector<float>({1.5f, -2, 3, 4, 5, 6}, {2, 3}));
  state.Set("a.bias", Tensor::FromVector<int64_t>({7, -8}, {2}));
  state.Set("scalar", Tensor::FromVector<float>({42}, {}));
  state.Set("computed", Tensor::FromVector<float>({1, 2}, {2}) * 3 + 1);  // realized on save
  state.Set("empty", Tensor::FromVector<float>({}, {0, 3}));
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/round_trip.safetensors";
  ASSERT_TRUE(SafeSave(state, path, {{"note", "ünïcode"}}).ok());
  absl::StatusOr<StateDict> loaded = SafeLoad(path);
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  ASSERT_EQ(loaded->size(), state.size());
  for (size_t i = 0; i < state.size(); ++i) {
    const auto& [name, want] = state.entries()[i];
    const auto& [got_name, got] = loaded->entries()[i];
    EXPECT_EQ(got_name, name);
    EXPECT_EQ(got.Shape(), want.Shape()) << name;
    EXPECT_EQ(got.dtype(), want.dtype()) << name;
    EXPECT_EQ(*got.ToBytes(), *want.ToBytes()) << name;
  }
  EXPECT_EQ(*SafeLoadMetadata(path), (std::vector<std::pair<std::string, std::string>>{{"note", "ünïcode"}}));
}

TEST(SafetensorsTest, SaveIntoAMissingDirectoryIsAnErrorNamingThePath) {
  StateDict state;
  state.Set("w", Tensor::FromVector<float>({1, 2}, {2}));
  const std::string path = std::string(getenv("TEST_TMPDIR")) + "/no_such_dir/w.safetensors";
  absl::Status saved = SafeSave(state, path);
  EXPECT_EQ(saved.code(), absl::StatusCode::kNotFound) << saved;
  EXPECT_THAT(saved.message(), HasSubstr(absl::StrCat("SafeSave: cannot write ", path)));
}

TEST(SafetensorsTest, EveryTruncationIsAnError) {
  std::vector<uint8_t> bytes = ReadBytes(kFile);
  ASSERT_TRUE(ParseSafetensorsHeader(bytes).ok());
  for (size_t n = 0; n < bytes.size(); ++n) {
    absl::StatusOr<SafetensorsHeader> h = ParseSafetensorsHeader(absl::Span<const uint8_t>(bytes.data(), n));
    EXPECT_FALSE(h.ok()) << "prefix of " << n << " bytes";
  }
}

// A file of one header text and `data_size` zero bytes of data.
std::vector<uint8_t> FileWithHeader(const std::string& header, size_t data_size) {
  std::vector<uint8_t> out(8);
  for (int i = 0; i < 8; ++i) out[i] = static_cast<uint8_t>(static_cast<uint64_t>(header.size()) >> (8 * i));
  out.insert(out.end(), header.begin(), header.end());
  out.resize(out.size() + data_size);
  return out;
}

std::string ParseError(const std::string& header, size_t data_size) {
  absl::StatusOr<StateDict> s = SafeLoadBytes(FileWithHeader(header, data_size));
  return s.ok() ? "ok" : std::string(s.status().message());
}

TEST(SafetensorsTest, LyingHeadersAreClearErrors) {
  EXPECT_EQ(ParseError(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 8), "ok");
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})", 7),
              HasSubstr("outside the data section"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", 8),
              HasSubstr("the shape and dtype need 12"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F33","shape":[2],"data_offsets":[0,8]}})", 8),
              HasSubstr("unsupported dtype \"F33\""));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[-2],"data_offsets":[0,8]}})", 8),
              HasSubstr("not a non-negative integer"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[2.5],"data_offsets":[0,8]}})", 8),
              HasSubstr("not a non-negative integer"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[8,0]}})", 8),
              HasSubstr("outside the data section"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0]}})", 8),
              HasSubstr("not two non-negative integers"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"F32","shape":[4294967296,4294967296],"data_offsets":[0,0]}})", 8),
              HasSubstr("more than 2^64"));
  EXPECT_THAT(ParseError(R"({"t":{"dtype":"U8","shape":[2],"data_offsets":[18446744073709551615,2]}})", 8),
              HasSubstr("outside the data section"));
  EXPECT_THAT(ParseError(R"({"t":{"shape":[2],"data_offsets":[0,8]}})", 8), HasSubstr("needs \"dtype\""));
  EXPECT_THAT(ParseError(R"({"t":[1,2]})", 8), HasSubstr("not an object"));
  EXPECT_THAT(ParseError(R"({"__metadata__":3})", 0), HasSubstr("\"__metadata__\" is not an object"));
  EXPECT_THAT(ParseError(R"([1,2])", 0), HasSubstr("not a JSON object"));
  EXPECT_THAT(ParseError(R"({"t":)", 0), HasSubstr("not valid JSON"));
  // A header length past the end of the file.
  std::vector<uint8_t> huge = FileWithHeader("{}", 0);
  huge[7] = 0xff;
  EXPECT_THAT(std::string(ParseSafetensorsHeader(huge).status().message()), HasSubstr("truncated file"));
  // Zero-size tensors are fine.
  EXPECT_EQ(ParseError(R"({"t":{"dtype":"F32","shape":[0,4294967296],"data_offsets":[0,0]}})", 0), "ok");
  EXPECT_THAT(std::string(SafeLoad("/nonexistent/x.safetensors").status().message()),
              HasSubstr("cannot open"));
}

TEST(SafetensorsTest, DTypeNamesAreTinygrads) {
  EXPECT_EQ(*SafetensorsDTypeName(dtypes::kFloat32), "F32");
  EXPECT_EQ(*SafetensorsDTypeName(dtypes::kBFloat16), "BF16");
  EXPECT_EQ(*SafetensorsDTypeName(dtypes::kBool), "BOOL");
  EXPECT_FALSE(SafetensorsDTypeName(dtypes::kVoid).ok());
}

}  // namespace
}  // namespace uopc::nn
