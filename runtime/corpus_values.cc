#include "runtime/corpus_values.h"

#include <cmath>
#include <cstring>
#include <optional>

#include "absl/numeric/int128.h"
#include "absl/strings/str_cat.h"

namespace uopc {
namespace {

bool IsScalarValueType(DType dtype) { return !dtype.is_ptr() && dtype.count() == 1 && !dtype.is_void(); }

template <typename T>
void Put(std::vector<uint8_t>& bytes, int64_t j, T value) {
  std::memcpy(bytes.data() + j * sizeof(T), &value, sizeof(T));
}

template <typename T>
T Get(absl::Span<const uint8_t> bytes, int64_t j) {
  T value;
  std::memcpy(&value, bytes.data() + j * sizeof(T), sizeof(T));
  return value;
}

uint32_t FloatBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, sizeof(bits));
  return bits;
}

nlohmann::json FloatJson(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}

// A JSON element as a float: numbers, and the corpus's strings for NaN and the infinities.
std::optional<double> JsonFloat(const nlohmann::json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "nan") return std::nan("");
    if (s == "inf") return INFINITY;
    if (s == "-inf") return -INFINITY;
  }
  return std::nullopt;
}

std::optional<absl::int128> JsonInteger(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return absl::int128(v.get<uint64_t>());
  if (v.is_number_integer()) return absl::int128(v.get<int64_t>());
  return std::nullopt;
}

// Whether one element matches; `dtype` decides how it is read.
bool ElementMatches(DType dtype, const CorpusTolerance& tolerance, const nlohmann::json& got,
                    const nlohmann::json& want) {
  if (dtype.is_bool()) return got.is_boolean() && want.is_boolean() && got == want;
  if (dtype.is_int()) {
    std::optional<absl::int128> g = JsonInteger(got), w = JsonInteger(want);
    return g && w && *g == *w;
  }
  std::optional<double> g = JsonFloat(got), w = JsonFloat(want);
  if (!g || !w) return false;
  if (std::isnan(*g) || std::isnan(*w)) return std::isnan(*g) && std::isnan(*w);
  if (*g == *w) return true;
  // An infinity matches only itself (the tolerance of an infinite want is infinite too).
  if (std::isinf(*g) || std::isinf(*w)) return false;
  return std::fabs(*g - *w) <= tolerance.atol + tolerance.rtol * std::fabs(*w);
}

}  // namespace

absl::StatusOr<DType> CorpusDType(absl::string_view name) {
  std::optional<DType> dtype = DType::FromName(name);
  if (!dtype || dtype->is_void())
    return absl::InvalidArgumentError(absl::StrCat("unknown dtype '", name, "'"));
  return *dtype;
}

ConstValue CorpusInputValue(DType dtype, int64_t arg, int64_t j) {
  // Modulo 2^64 arithmetic, then modulo 2^32: the same as exact arithmetic modulo 2^32.
  uint64_t h =
      (static_cast<uint64_t>(j) * 2654435761u + static_cast<uint64_t>(arg) * 40503u + 12345u) & 0xffffffffu;
  uint64_t k = h >> 8;
  if (dtype.is_float()) {
    double v = (static_cast<double>(k % 2049) - 1024.0) / 512.0;  // exact in float16 and wider
    if (dtype.scalar_type() == ScalarType::kBFloat16) {
      return ConstValue::Float(
          BFloat16BitsToFloat(static_cast<uint16_t>(FloatBits(static_cast<float>(v)) >> 16)));
    }
    return ConstValue::Float(v);
  }
  if (dtype.is_bool()) return ConstValue::Bool(k % 2 == 1);
  if (dtype.is_unsigned()) return ConstValue::Int(static_cast<int64_t>(k % 201));
  return ConstValue::Int(static_cast<int64_t>(k % 201) - 100);
}

namespace {

// Element j of `bytes` holding a value of `dtype`.
void PutValue(std::vector<uint8_t>& bytes, DType dtype, int64_t j, const ConstValue& v) {
  switch (dtype.scalar_type()) {
    case ScalarType::kBool:
      Put<uint8_t>(bytes, j, v.b() ? 1 : 0);
      break;
    case ScalarType::kInt8:
      Put<int8_t>(bytes, j, static_cast<int8_t>(v.AsInt64()));
      break;
    case ScalarType::kUInt8:
      Put<uint8_t>(bytes, j, static_cast<uint8_t>(v.AsInt64()));
      break;
    case ScalarType::kInt16:
      Put<int16_t>(bytes, j, static_cast<int16_t>(v.AsInt64()));
      break;
    case ScalarType::kUInt16:
      Put<uint16_t>(bytes, j, static_cast<uint16_t>(v.AsInt64()));
      break;
    case ScalarType::kInt32:
      Put<int32_t>(bytes, j, static_cast<int32_t>(v.AsInt64()));
      break;
    case ScalarType::kUInt32:
      Put<uint32_t>(bytes, j, static_cast<uint32_t>(v.AsInt64()));
      break;
    case ScalarType::kInt64:
      Put<int64_t>(bytes, j, v.AsInt64());
      break;
    case ScalarType::kUInt64:
      Put<uint64_t>(bytes, j, static_cast<uint64_t>(v.AsInt()));  // (AsInt64 saturates above 2**63 - 1)
      break;
    // Both conversions are exact: the values have at most 11 significant bits (bfloat16's were cut above).
    case ScalarType::kFloat16:
      Put<uint16_t>(bytes, j, FloatToHalfBits(static_cast<float>(v.f())));
      break;
    case ScalarType::kBFloat16:
      Put<uint16_t>(bytes, j, FloatToBFloat16Bits(static_cast<float>(v.f())));
      break;
    case ScalarType::kFloat32:
      Put<float>(bytes, j, static_cast<float>(v.f()));
      break;
    case ScalarType::kFloat64:
      Put<double>(bytes, j, v.f());
      break;
    case ScalarType::kVoid:
      break;
  }
}

}  // namespace

std::vector<uint8_t> CorpusInputBytes(DType dtype, int64_t arg, int64_t size) {
  std::vector<uint8_t> bytes(static_cast<size_t>(size) * dtype.itemsize());
  for (int64_t j = 0; j < size; ++j) PutValue(bytes, dtype, j, CorpusInputValue(dtype, arg, j));
  return bytes;
}

absl::StatusOr<std::vector<uint8_t>> CorpusBytesFromJson(DType dtype, const nlohmann::json& values,
                                                         int64_t size) {
  if (!IsScalarValueType(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("no corpus values of type ", dtype.ToString()));
  }
  if (!values.is_array() || static_cast<int64_t>(values.size()) != size) {
    return absl::InvalidArgumentError(absl::StrCat("expected an array of ", size, " ", dtype.ToString(),
                                                   " values, got ", values.dump().substr(0, 80)));
  }
  std::vector<uint8_t> bytes(static_cast<size_t>(size) * dtype.itemsize());
  for (int64_t j = 0; j < size; ++j) {
    const nlohmann::json& x = values[j];
    ConstValue v;
    if (x.is_boolean() && dtype.is_bool()) {
      v = ConstValue::Bool(x.get<bool>());
    } else if (x.is_number_integer() && !dtype.is_bool()) {
      v = dtype.is_float()         ? ConstValue::Float(x.get<double>())
          : x.is_number_unsigned() ? ConstValue::Int(absl::int128(x.get<uint64_t>()))
                                   : ConstValue::Int(x.get<int64_t>());
    } else if (dtype.is_float() && x.is_number()) {
      v = ConstValue::Float(x.get<double>());
    } else if (dtype.is_float() && x.is_string() && (x == "nan" || x == "inf" || x == "-inf")) {
      v = ConstValue::Float(x == "nan" ? std::nan("") : x == "inf" ? HUGE_VAL : -HUGE_VAL);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("element ", j, " (", x.dump(), ") is not a ", dtype.ToString(), " value"));
    }
    if (!dtype.is_float() && !dtype.is_bool() && Truncate(v, dtype).i() != v.i()) {
      return absl::InvalidArgumentError(
          absl::StrCat("element ", j, " (", x.dump(), ") does not fit in ", dtype.ToString()));
    }
    PutValue(bytes, dtype, j, v);
  }
  return bytes;
}

absl::StatusOr<nlohmann::json> CorpusJsonFromBytes(DType dtype, absl::Span<const uint8_t> bytes) {
  if (!IsScalarValueType(dtype)) {
    return absl::InvalidArgumentError(absl::StrCat("no corpus values of type ", dtype.ToString()));
  }
  size_t itemsize = dtype.itemsize();
  if (bytes.size() % itemsize != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(bytes.size(), " bytes are not a whole number of ", dtype.ToString(), " elements"));
  }
  nlohmann::json values = nlohmann::json::array();
  for (int64_t j = 0; j < static_cast<int64_t>(bytes.size() / itemsize); ++j) {
    switch (dtype.scalar_type()) {
      case ScalarType::kBool:
        values.push_back(Get<uint8_t>(bytes, j) != 0);
        break;
      case ScalarType::kInt8:
        values.push_back(Get<int8_t>(bytes, j));
        break;
      case ScalarType::kUInt8:
        values.push_back(Get<uint8_t>(bytes, j));
        break;
      case ScalarType::kInt16:
        values.push_back(Get<int16_t>(bytes, j));
        break;
      case ScalarType::kUInt16:
        values.push_back(Get<uint16_t>(bytes, j));
        break;
      case ScalarType::kInt32:
        values.push_back(Get<int32_t>(bytes, j));
        break;
      case ScalarType::kUInt32:
        values.push_back(Get<uint32_t>(bytes, j));
        break;
      case ScalarType::kInt64:
        values.push_back(Get<int64_t>(bytes, j));
        break;
      case ScalarType::kUInt64:
        values.push_back(Get<uint64_t>(bytes, j));
        break;
      case ScalarType::kFloat16:
        values.push_back(FloatJson(HalfBitsToFloat(Get<uint16_t>(bytes, j))));
        break;
      case ScalarType::kBFloat16:
        values.push_back(FloatJson(BFloat16BitsToFloat(Get<uint16_t>(bytes, j))));
        break;
      case ScalarType::kFloat32:
        values.push_back(FloatJson(Get<float>(bytes, j)));
        break;
      case ScalarType::kFloat64:
        values.push_back(FloatJson(Get<double>(bytes, j)));
        break;
      case ScalarType::kVoid:
        break;
    }
  }
  return values;
}

std::string CorpusJsonText(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::number_float:
      return PythonFloatRepr(value.get<double>());
    case nlohmann::json::value_t::array: {
      std::string out = "[";
      for (size_t i = 0; i < value.size(); ++i)
        absl::StrAppend(&out, i == 0 ? "" : ", ", CorpusJsonText(value[i]));
      return out + "]";
    }
    case nlohmann::json::value_t::object: {
      std::string out = "{";
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        absl::StrAppend(&out, first ? "" : ", ", nlohmann::json(key).dump(), ": ", CorpusJsonText(item));
        first = false;
      }
      return out + "}";
    }
    default:
      return value.dump();
  }
}

CorpusTolerance CorpusToleranceFor(DType dtype) {
  switch (dtype.scalar_type()) {
    case ScalarType::kFloat32:
    case ScalarType::kFloat64:
      return {1e-4, 1e-4};
    case ScalarType::kFloat16:
    case ScalarType::kBFloat16:
      return {1e-2, 1e-2};
    default:
      return {0, 0};
  }
}

std::string CorpusValuesMismatch(DType dtype, const nlohmann::json& got, const nlohmann::json& want) {
  if (!got.is_array() || !want.is_array()) return "got and want must both be JSON arrays";
  if (got.size() != want.size()) return absl::StrCat("got ", got.size(), " values, want ", want.size());
  CorpusTolerance tolerance = CorpusToleranceFor(dtype);
  constexpr int kShown = 8;
  std::string shown;
  int64_t differing = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (ElementMatches(dtype, tolerance, got[i], want[i])) continue;
    if (++differing <= kShown) {
      absl::StrAppend(&shown, "\n  [", i, "] got ", CorpusJsonText(got[i]), ", want ",
                      CorpusJsonText(want[i]));
    }
  }
  if (differing == 0) return "";
  std::string rule = dtype.is_float()
                         ? absl::StrCat("|got - want| <= ", tolerance.atol, " + ", tolerance.rtol, " |want|")
                         : "exact";
  return absl::StrCat(differing, " of ", got.size(), " ", dtype.ToString(), " values differ (", rule, ")",
                      shown, differing > kShown ? "\n  ..." : "");
}

}  // namespace uopc
