#include "runtime/corpus_values.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using json = nlohmann::json;

template <typename T>
std::vector<T> As(const std::vector<uint8_t>& bytes) {
  std::vector<T> values(bytes.size() / sizeof(T));
  std::memcpy(values.data(), bytes.data(), bytes.size());
  return values;
}

template <typename T>
std::vector<uint8_t> Bytes(const std::vector<T>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

// Expected values from the corpus README's formula, evaluated in Python.
TEST(CorpusValuesTest, InputFormula) {
  EXPECT_THAT(As<float>(CorpusInputBytes(dtypes::kFloat32, 1, 4)),
              ElementsAre(-1.59765625f, 0.2578125f, -1.8984375f, -0.04296875f));
  EXPECT_THAT(As<double>(CorpusInputBytes(dtypes::kFloat64, 1, 2)), ElementsAre(-1.59765625, 0.2578125));
  EXPECT_THAT(As<int32_t>(CorpusInputBytes(dtypes::kInt32, 2, 4)), ElementsAre(63, -34, -78, 25));
  EXPECT_THAT(As<int64_t>(CorpusInputBytes(dtypes::kInt64, 2, 2)), ElementsAre(63, -34));
  EXPECT_THAT(As<int8_t>(CorpusInputBytes(dtypes::kInt8, 2, 2)), ElementsAre(63, -34));
  EXPECT_THAT(As<uint8_t>(CorpusInputBytes(dtypes::kUInt8, 0, 4)), ElementsAre(48, 151, 107, 10));
  EXPECT_THAT(As<uint32_t>(CorpusInputBytes(dtypes::kUInt32, 0, 4)), ElementsAre(48, 151, 107, 10));
  EXPECT_THAT(As<uint8_t>(CorpusInputBytes(dtypes::kBool, 3, 6)), ElementsAre(0, 0, 0, 1, 1, 1));
  // float16: the exact value's bits (0.5859375 is 0x38b0).
  EXPECT_EQ(As<uint16_t>(CorpusInputBytes(dtypes::kFloat16, 5, 8))[7], 0x38b0);
  // bfloat16: the float32 value's top 16 bits, which cut 1.794921875 (0x3fe5c000) to 1.7890625, where
  // rounding would give 1.796875.
  EXPECT_EQ(As<uint16_t>(CorpusInputBytes(dtypes::kBFloat16, 0, 3))[2], 0x3fe5);
  EXPECT_EQ(CorpusInputValue(dtypes::kBFloat16, 0, 2).f(), 1.7890625);
  EXPECT_EQ(CorpusInputValue(dtypes::kFloat32, 0, 2).f(), 1.794921875);
  // Large indices wrap modulo 2^32 like the exact formula.
  EXPECT_EQ(CorpusInputValue(dtypes::kInt32, 7, int64_t{1} << 40).AsInt64(),
            CorpusInputValue(dtypes::kInt32, 7, 0).AsInt64());
  // Every float value lies in [-2, 2] in steps of 1/512.
  for (const ConstValue& v :
       {CorpusInputValue(dtypes::kFloat32, 9, 1234), CorpusInputValue(dtypes::kFloat16, 3, 77)}) {
    EXPECT_LE(std::fabs(v.f()), 2.0);
    EXPECT_EQ(v.f() * 512, std::floor(v.f() * 512));
  }
}

TEST(CorpusValuesTest, DTypeNames) {
  EXPECT_EQ(CorpusDType("float32").value(), dtypes::kFloat32);
  EXPECT_EQ(CorpusDType("bfloat16").value(), dtypes::kBFloat16);
  EXPECT_EQ(CorpusDType("uint8").value(), dtypes::kUInt8);
  EXPECT_EQ(CorpusDType("bool").value(), dtypes::kBool);
  EXPECT_FALSE(CorpusDType("void").ok());
  EXPECT_FALSE(CorpusDType("float8").ok());
}

TEST(CorpusValuesTest, BytesToJson) {
  float inf = std::numeric_limits<float>::infinity();
  json floats =
      CorpusJsonFromBytes(dtypes::kFloat32, Bytes<float>({1.5f, 0.1f, NAN, inf, -inf, -0.0f})).value();
  EXPECT_EQ(CorpusJsonText(floats), R"([1.5, 0.10000000149011612, "nan", "inf", "-inf", -0.0])");
  json halfs =
      CorpusJsonFromBytes(dtypes::kFloat16, Bytes<uint16_t>({0x38b0, 0x7c00, 0x7e00, 0x3c00})).value();
  EXPECT_EQ(CorpusJsonText(halfs), R"([0.5859375, "inf", "nan", 1.0])");
  json bf16 = CorpusJsonFromBytes(dtypes::kBFloat16, Bytes<uint16_t>({0x3fe5})).value();
  EXPECT_EQ(CorpusJsonText(bf16), "[1.7890625]");
  json doubles = CorpusJsonFromBytes(dtypes::kFloat64, Bytes<double>({1e-5, 1e16, 1e15, 123456.789})).value();
  EXPECT_EQ(CorpusJsonText(doubles), "[1e-05, 1e+16, 1000000000000000.0, 123456.789]");
  json ints =
      CorpusJsonFromBytes(dtypes::kInt64, Bytes<int64_t>({-9499993, std::numeric_limits<int64_t>::min()}))
          .value();
  EXPECT_EQ(CorpusJsonText(ints), "[-9499993, -9223372036854775808]");
  json uints =
      CorpusJsonFromBytes(dtypes::kUInt64, Bytes<uint64_t>({std::numeric_limits<uint64_t>::max()})).value();
  EXPECT_EQ(CorpusJsonText(uints), "[18446744073709551615]");
  json bytes = CorpusJsonFromBytes(dtypes::kInt8, Bytes<int8_t>({-128, 127})).value();
  EXPECT_EQ(CorpusJsonText(bytes), "[-128, 127]");
  json bools = CorpusJsonFromBytes(dtypes::kBool, Bytes<uint8_t>({1, 0})).value();
  EXPECT_EQ(CorpusJsonText(bools), "[true, false]");
  EXPECT_EQ(CorpusJsonText(json::parse(R"({"0": [1, 2.5]})")), R"({"0": [1, 2.5]})");

  EXPECT_FALSE(CorpusJsonFromBytes(dtypes::kFloat32, Bytes<uint8_t>({1, 2, 3})).ok());
  EXPECT_FALSE(CorpusJsonFromBytes(dtypes::kFloat32.Vec(4), Bytes<float>({1, 2, 3, 4})).ok());
  EXPECT_TRUE(CorpusJsonFromBytes(dtypes::kFloat32, {}).value().empty());
}

TEST(CorpusValuesTest, RoundTripThroughJsonText) {
  // The text parses back to the same JSON, so `uopc run --jsonl` output compares like the corpus.
  std::vector<uint8_t> bytes = CorpusInputBytes(dtypes::kFloat32, 4, 100);
  json values = CorpusJsonFromBytes(dtypes::kFloat32, bytes).value();
  EXPECT_EQ(json::parse(CorpusJsonText(values)), values);
  EXPECT_EQ(CorpusValuesMismatch(dtypes::kFloat32, json::parse(CorpusJsonText(values)), values), "");
}

// "" when the one-element or longer arrays match, "differ" when they do not (never the shape errors, which
// would make these checks vacuous).
std::string mismatch(DType dtype, std::initializer_list<json> got, std::initializer_list<json> want) {
  json got_array = json::array(), want_array = json::array();
  for (const json& v : got) got_array.push_back(v);
  for (const json& v : want) want_array.push_back(v);
  std::string message = CorpusValuesMismatch(dtype, got_array, want_array);
  return message.empty() ? "" : message.find("differ") != std::string::npos ? "differ" : message;
}

TEST(CorpusValuesTest, FloatTolerances) {
  // float32: 1e-4 + 1e-4 |want|.
  EXPECT_EQ(mismatch(dtypes::kFloat32, {100.0100}, {100.0}), "");
  EXPECT_EQ(mismatch(dtypes::kFloat32, {100.0102}, {100.0}), "differ");
  EXPECT_EQ(mismatch(dtypes::kFloat64, {0.00009}, {0.0}), "");
  EXPECT_EQ(mismatch(dtypes::kFloat64, {0.00011}, {0.0}), "differ");
  // float16 and bfloat16: 1e-2 + 1e-2 |want|.
  EXPECT_EQ(mismatch(dtypes::kFloat16, {2.029}, {2.0}), "");
  EXPECT_EQ(mismatch(dtypes::kFloat16, {2.031}, {2.0}), "differ");
  EXPECT_EQ(mismatch(dtypes::kBFloat16, {-2.029}, {-2.0}), "");
  // NaN equals NaN only; infinities equal themselves only.
  EXPECT_EQ(mismatch(dtypes::kFloat32, {"nan", "inf", "-inf"}, {"nan", "inf", "-inf"}), "");
  EXPECT_EQ(mismatch(dtypes::kFloat32, {"nan"}, {1.0}), "differ");
  EXPECT_EQ(mismatch(dtypes::kFloat32, {1.0}, {"nan"}), "differ");
  EXPECT_EQ(mismatch(dtypes::kFloat32, {"inf"}, {"-inf"}), "differ");
  EXPECT_EQ(mismatch(dtypes::kFloat32, {"inf"}, {1e38}), "differ");
  EXPECT_EQ(mismatch(dtypes::kFloat32, {"Infinity"}, {"inf"}), "differ");
  // Integers are fine as float values (JSON does not tell 1 from 1.0 for floats).
  EXPECT_EQ(mismatch(dtypes::kFloat32, {1}, {1.0}), "");
}

TEST(CorpusValuesTest, ExactTypes) {
  EXPECT_EQ(mismatch(dtypes::kInt32, {-5, 7}, {-5, 7}), "");
  EXPECT_EQ(mismatch(dtypes::kInt32, {-5, 8}, {-5, 7}), "differ");
  EXPECT_EQ(mismatch(dtypes::kInt32, {7.0}, {7}), "differ") << "an int buffer prints ints";
  EXPECT_EQ(mismatch(dtypes::kUInt64, {uint64_t{18446744073709551615u}}, {uint64_t{18446744073709551615u}}),
            "");
  EXPECT_EQ(mismatch(dtypes::kUInt64, {uint64_t{18446744073709551615u}}, {-1}), "differ");
  EXPECT_EQ(mismatch(dtypes::kBool, {true, false}, {true, false}), "");
  EXPECT_EQ(mismatch(dtypes::kBool, {true, false}, {true, true}), "differ");
  EXPECT_EQ(mismatch(dtypes::kBool, {1}, {true}), "differ");
}

TEST(CorpusValuesTest, MismatchMessage) {
  std::string message = CorpusValuesMismatch(dtypes::kFloat32, json::array({1.0, 2.0, "nan", 4.0}),
                                             json::array({1.0, 2.5, 3.0, 4.0}));
  EXPECT_THAT(message, HasSubstr("2 of 4 dtypes.float values differ"));
  EXPECT_THAT(message, HasSubstr("[1] got 2.0, want 2.5"));
  EXPECT_THAT(message, HasSubstr("[2] got \"nan\", want 3.0"));
  EXPECT_THAT(CorpusValuesMismatch(dtypes::kInt32, json::array({1, 2}), json::array({1})),
              HasSubstr("got 2 values, want 1"));
  EXPECT_THAT(CorpusValuesMismatch(dtypes::kInt32, json::object(), json::array({1})), HasSubstr("arrays"));
  json many_got = json::array(), many_want = json::array();
  for (int i = 0; i < 20; ++i) {
    many_got.push_back(i);
    many_want.push_back(i + 1);
  }
  message = CorpusValuesMismatch(dtypes::kInt32, many_got, many_want);
  EXPECT_THAT(message, HasSubstr("20 of 20"));
  EXPECT_THAT(message, HasSubstr("..."));
  EXPECT_THAT(message, ::testing::Not(HasSubstr("[19]")));
}

}  // namespace
}  // namespace uopc
