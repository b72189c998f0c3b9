// The GGUF header, with every read, count and size checked against the file, and GGML dequantization on the
// host in tinygrad's order of operations.
#include "nn/gguf_format.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "uop/status_macros.h"

namespace uopc::nn {
namespace {

// Arrays of arrays recurse; a file nesting deeper than this is refused rather than allowed to exhaust the
// stack (real files nest at most once).
constexpr int kMaxArrayDepth = 64;

absl::Status Corrupt(uint64_t offset, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("gguf: at byte ", offset, ": ", what));
}

// Bytes of one GGML block, and elements in it.
struct BlockSize {
  uint64_t elements, bytes;
};

std::optional<BlockSize> GgmlBlockSize(int32_t type) {
  switch (static_cast<GgmlType>(type)) {
    case GgmlType::kF32:
    case GgmlType::kI32:
      return BlockSize{1, 4};
    case GgmlType::kF16:
    case GgmlType::kI16:
      return BlockSize{1, 2};
    case GgmlType::kI8:
      return BlockSize{1, 1};
    case GgmlType::kQ4_0:
      return BlockSize{32, 18};
    case GgmlType::kQ4_1:
      return BlockSize{32, 20};
    case GgmlType::kQ8_0:
      return BlockSize{32, 34};
    case GgmlType::kQ6_K:
      return BlockSize{256, 210};
  }
  return std::nullopt;
}

// A cursor over the file that never reads past its end.
class Reader {
 public:
  explicit Reader(absl::Span<const uint8_t> bytes) : bytes_(bytes) {}

  uint64_t pos() const { return pos_; }
  uint64_t left() const { return bytes_.size() - pos_; }

  // `n` bytes for `what`, or an error saying how many were left.
  absl::StatusOr<const uint8_t*> Take(uint64_t n, absl::string_view what) {
    if (n > left()) {
      return Corrupt(pos_, absl::StrCat("truncated: ", what, " needs ", n, " bytes, ", left(), " left"));
    }
    const uint8_t* p = bytes_.data() + pos_;
    pos_ += n;
    return p;
  }

  template <typename T>
  absl::StatusOr<T> Read(absl::string_view what) {
    UOPC_ASSIGN_OR_RETURN(const uint8_t* p, Take(sizeof(T), what));
    T v;
    std::memcpy(&v, p, sizeof(T));  // the format and every host uopc runs on are little-endian
    return v;
  }

  absl::StatusOr<std::string> ReadString(absl::string_view what) {
    const uint64_t at = pos_;
    UOPC_ASSIGN_OR_RETURN(uint64_t n, Read<uint64_t>(what));
    if (n > left()) {
      return Corrupt(at, absl::StrCat("truncated: ", what, " of ", n, " bytes, ", left(), " left"));
    }
    UOPC_ASSIGN_OR_RETURN(const uint8_t* p, Take(n, what));
    return std::string(reinterpret_cast<const char*>(p), n);
  }

 private:
  absl::Span<const uint8_t> bytes_;
  uint64_t pos_ = 0;
};

// The fewest bytes a value of `type` takes, to bound counts before anything is allocated for them.
uint64_t MinValueBytes(GgufValueType type) {
  switch (type) {
    case GgufValueType::kUInt8:
    case GgufValueType::kInt8:
    case GgufValueType::kBool:
      return 1;
    case GgufValueType::kUInt16:
    case GgufValueType::kInt16:
      return 2;
    case GgufValueType::kUInt32:
    case GgufValueType::kInt32:
    case GgufValueType::kFloat32:
      return 4;
    case GgufValueType::kString:
    case GgufValueType::kUInt64:
    case GgufValueType::kInt64:
    case GgufValueType::kFloat64:
      return 8;
    case GgufValueType::kArray:
      return 12;  // element type and count
  }
  return 1;
}

absl::StatusOr<GgufValueType> ReadValueType(Reader& r, absl::string_view what) {
  const uint64_t at = r.pos();
  UOPC_ASSIGN_OR_RETURN(int32_t type, r.Read<int32_t>(what));
  if (type < 0 || type > static_cast<int32_t>(GgufValueType::kFloat64)) {
    return Corrupt(at, absl::StrCat("unknown ", what, " ", type));
  }
  return static_cast<GgufValueType>(type);
}

absl::StatusOr<GgufValue> ReadValue(Reader& r, GgufValueType type, int depth) {
  GgufValue v;
  switch (type) {
    case GgufValueType::kUInt8: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<uint8_t>("a uint8 value"));
      break;
    }
    case GgufValueType::kInt8: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<int8_t>("an int8 value"));
      break;
    }
    case GgufValueType::kUInt16: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<uint16_t>("a uint16 value"));
      break;
    }
    case GgufValueType::kInt16: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<int16_t>("an int16 value"));
      break;
    }
    case GgufValueType::kUInt32: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<uint32_t>("a uint32 value"));
      break;
    }
    case GgufValueType::kInt32: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<int32_t>("an int32 value"));
      break;
    }
    case GgufValueType::kFloat32: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<float>("a float32 value"));
      break;
    }
    case GgufValueType::kBool: {
      // tinygrad's struct "?" reads any nonzero byte as true.
      UOPC_ASSIGN_OR_RETURN(uint8_t b, r.Read<uint8_t>("a bool value"));
      v.value = b != 0;
      break;
    }
    case GgufValueType::kString: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.ReadString("a string value"));
      break;
    }
    case GgufValueType::kUInt64: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<uint64_t>("a uint64 value"));
      break;
    }
    case GgufValueType::kInt64: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<int64_t>("an int64 value"));
      break;
    }
    case GgufValueType::kFloat64: {
      UOPC_ASSIGN_OR_RETURN(v.value, r.Read<double>("a float64 value"));
      break;
    }
    case GgufValueType::kArray: {
      const uint64_t at = r.pos();
      if (depth >= kMaxArrayDepth) {
        return Corrupt(at, absl::StrCat("arrays nested more than ", kMaxArrayDepth, " deep"));
      }
      GgufArray array;
      UOPC_ASSIGN_OR_RETURN(array.element_type, ReadValueType(r, "array element type"));
      const uint64_t count_at = r.pos();
      UOPC_ASSIGN_OR_RETURN(uint64_t count, r.Read<uint64_t>("an array count"));
      // Every element takes at least MinValueBytes, so a count the rest of the file cannot hold is refused
      // before anything is reserved for it.
      if (count > r.left() / MinValueBytes(array.element_type)) {
        return Corrupt(count_at, absl::StrCat("truncated: an array of ", count, " elements needs at least ",
                                              MinValueBytes(array.element_type), " bytes each, ", r.left(),
                                              " bytes left"));
      }
      array.values.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        UOPC_ASSIGN_OR_RETURN(GgufValue element, ReadValue(r, array.element_type, depth + 1));
        array.values.push_back(std::move(element));
      }
      v.value = std::move(array);
      break;
    }
  }
  return v;
}

// `v` as an unsigned integer, when it is a non-negative value of an integer type.
std::optional<uint64_t> AsUnsigned(const GgufValue& v) {
  return std::visit(
      [](const auto& x) -> std::optional<uint64_t> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
          if (x < 0) return std::nullopt;
          return static_cast<uint64_t>(x);
        } else {
          return std::nullopt;
        }
      },
      v.value);
}

absl::StatusOr<GgufTensorInfo> ReadTensorInfo(Reader& r) {
  const uint64_t at = r.pos();
  GgufTensorInfo info;
  UOPC_ASSIGN_OR_RETURN(info.name, r.ReadString("a tensor name"));
  const uint64_t dims_at = r.pos();
  UOPC_ASSIGN_OR_RETURN(uint32_t n_dims, r.Read<uint32_t>("a tensor's dimension count"));
  if (n_dims > r.left() / 8) {
    return Corrupt(dims_at, absl::StrCat("truncated: tensor \"", info.name, "\" has ", n_dims,
                                         " dimensions, ", r.left(), " bytes left"));
  }
  info.numel = 1;
  bool overflow = false;
  for (uint32_t i = 0; i < n_dims; ++i) {
    const uint64_t dim_at = r.pos();
    UOPC_ASSIGN_OR_RETURN(uint64_t dim, r.Read<uint64_t>("a tensor dimension"));
    if (dim > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return Corrupt(dim_at, absl::StrCat("tensor \"", info.name, "\": dimension ", dim, " is too large"));
    }
    info.dims.push_back(static_cast<int64_t>(dim));
    overflow |= __builtin_mul_overflow(info.numel, dim, &info.numel);
  }
  const uint64_t type_at = r.pos();
  UOPC_ASSIGN_OR_RETURN(int32_t type, r.Read<int32_t>("a tensor's GGML type"));
  std::optional<BlockSize> block = GgmlBlockSize(type);
  if (!block.has_value()) {
    return Corrupt(type_at, absl::StrCat("tensor \"", info.name, "\": GGML type ", type,
                                         " is not supported (tinygrad loads F32, F16, Q4_0, Q4_1, Q8_0, "
                                         "Q6_K, I8, I16 and I32)"));
  }
  info.type = static_cast<GgmlType>(type);
  UOPC_ASSIGN_OR_RETURN(info.offset, r.Read<uint64_t>("a tensor's data offset"));
  if (std::find(info.dims.begin(), info.dims.end(), 0) != info.dims.end()) {  // a zero size wins
    overflow = false;
    info.numel = 0;
  }
  if (overflow || info.numel % block->elements != 0 ||
      __builtin_mul_overflow(info.numel / block->elements, block->bytes, &info.nbytes)) {
    return Corrupt(at,
                   absl::StrCat("tensor \"", info.name, "\": ",
                                overflow ? std::string("the element count overflows")
                                         : absl::StrCat(info.numel, " elements do not fill whole blocks of ",
                                                        block->elements, " (or overflow)")));
  }
  return info;
}

}  // namespace

const GgufValue* FindGgufValue(const GgufMetadata& metadata, absl::string_view key) {
  for (const auto& [k, v] : metadata) {
    if (k == key) return &v;
  }
  return nullptr;
}

absl::StatusOr<GgufHeader> ParseGgufHeader(absl::Span<const uint8_t> bytes) {
  Reader r(bytes);
  GgufHeader out;
  UOPC_ASSIGN_OR_RETURN(const uint8_t* magic, r.Take(4, "the magic"));
  if (std::memcmp(magic, "GGUF", 4) != 0) return Corrupt(0, "not a GGUF file (the magic is not \"GGUF\")");
  UOPC_ASSIGN_OR_RETURN(out.version, r.Read<int32_t>("the version"));
  if (out.version != 2 && out.version != 3) {
    return Corrupt(4, absl::StrCat("GGUF version ", out.version, " is not supported (2 and 3 are)"));
  }
  UOPC_ASSIGN_OR_RETURN(int64_t n_tensors, r.Read<int64_t>("the tensor count"));
  UOPC_ASSIGN_OR_RETURN(int64_t n_kv, r.Read<int64_t>("the key/value count"));
  // A key/value pair takes at least 13 bytes (key length, type, a 1-byte value), a tensor info 24 (name
  // length, dimension count, type, offset): counts are bounded by the bytes left before anything is reserved.
  if (n_tensors < 0 || static_cast<uint64_t>(n_tensors) > r.left() / 24) {
    return Corrupt(8, absl::StrCat("tensor count ", n_tensors, " is negative or more than the ", r.left(),
                                   " bytes left could hold"));
  }
  if (n_kv < 0 || static_cast<uint64_t>(n_kv) > r.left() / 13) {
    return Corrupt(16, absl::StrCat("key/value count ", n_kv, " is negative or more than the ", r.left(),
                                    " bytes left could hold"));
  }
  absl::flat_hash_map<std::string, size_t> index;
  for (int64_t i = 0; i < n_kv; ++i) {
    UOPC_ASSIGN_OR_RETURN(std::string key, r.ReadString("a metadata key"));
    UOPC_ASSIGN_OR_RETURN(GgufValueType type, ReadValueType(r, "metadata value type"));
    UOPC_ASSIGN_OR_RETURN(GgufValue value, ReadValue(r, type, 0));
    auto [it, inserted] = index.try_emplace(key, out.metadata.size());
    if (inserted) {
      out.metadata.emplace_back(std::move(key), std::move(value));
    } else {
      out.metadata[it->second].second = std::move(value);
    }
  }
  out.tensors.reserve(n_tensors);
  for (int64_t i = 0; i < n_tensors; ++i) {
    UOPC_ASSIGN_OR_RETURN(GgufTensorInfo info, ReadTensorInfo(r));
    out.tensors.push_back(std::move(info));
  }
  if (const GgufValue* alignment = FindGgufValue(out.metadata, "general.alignment")) {
    std::optional<uint64_t> a = AsUnsigned(*alignment);
    if (!a.has_value() || *a == 0) {
      return Corrupt(r.pos(), "\"general.alignment\" is not a positive integer");
    }
    out.alignment = *a;
  }
  const uint64_t pad = (out.alignment - r.pos() % out.alignment) % out.alignment;
  // tinygrad slices past the end of the file to nothing, so the padding may run past it when no tensor
  // has data to read.
  const bool any_data = std::any_of(out.tensors.begin(), out.tensors.end(),
                                    [](const GgufTensorInfo& t) { return t.nbytes > 0; });
  if (pad > r.left()) {
    if (any_data) {
      return Corrupt(r.pos(), absl::StrCat("truncated: the data section starts ", pad, " bytes on, ",
                                           r.left(), " bytes left"));
    }
    out.data_start = bytes.size();
  } else {
    out.data_start = r.pos() + pad;
  }
  const uint64_t data_size = bytes.size() - out.data_start;
  for (const GgufTensorInfo& t : out.tensors) {
    if (t.nbytes == 0) continue;  // nothing is read, wherever it points
    if (t.offset > data_size || t.nbytes > data_size - t.offset) {
      return absl::InvalidArgumentError(absl::StrCat(
          "gguf: tensor \"", t.name, "\": its ", t.nbytes, " bytes at data offset ", t.offset, " (byte ",
          out.data_start, " + ", t.offset, ") are outside the data section of ", data_size, " bytes"));
    }
  }
  return out;
}

DType GgmlLoadedDType(GgmlType type) {
  switch (type) {
    case GgmlType::kF32:
      return dtypes::kFloat32;
    case GgmlType::kF16:
      return dtypes::kFloat16;
    case GgmlType::kI8:
      return dtypes::kInt8;
    case GgmlType::kI16:
      return dtypes::kInt16;
    case GgmlType::kI32:
      return dtypes::kInt32;
    case GgmlType::kQ4_0:
    case GgmlType::kQ4_1:
    case GgmlType::kQ8_0:
    case GgmlType::kQ6_K:
      break;
  }
  return dtypes::kFloat32;
}

namespace {

float HalfAt(const uint8_t* p) { return HalfBitsToFloat(static_cast<uint16_t>(p[0] | (p[1] << 8))); }

// Element j of a 4-bit block's 16 bytes: the low nibbles are elements 0-15, the high ones 16-31.
int Nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }

// One block of `type` into `out` (block-size floats). tinygrad computes in float32 in this order:
//   Q4_0: (q - 8) * d;  Q4_1: q * d + m;  Q8_0: d * q;  Q6_K: d * (q - 32) * scale.
void DequantizeBlock(GgmlType type, const uint8_t* b, float* out) {
  switch (type) {
    case GgmlType::kQ4_0: {
      const float d = HalfAt(b);
      for (int j = 0; j < 32; ++j) out[j] = static_cast<float>(Nibble(b + 2, j) - 8) * d;
      return;
    }
    case GgmlType::kQ4_1: {
      const float d = HalfAt(b), m = HalfAt(b + 2);
      for (int j = 0; j < 32; ++j) {
        // Two statements, so the multiply and the add round apart as tinygrad's do (a compiler may fuse
        // them into one fused multiply-add only within one expression).
        const float scaled = static_cast<float>(Nibble(b + 4, j)) * d;
        out[j] = scaled + m;
      }
      return;
    }
    case GgmlType::kQ8_0: {
      const float d = HalfAt(b);
      for (int j = 0; j < 32; ++j) out[j] = d * static_cast<float>(static_cast<int8_t>(b[2 + j]));
      return;
    }
    case GgmlType::kQ6_K: {
      // 128 bytes of low nibbles, 64 of 2-bit high parts, 16 int8 scales (one per 16 elements), then d.
      const uint8_t *ql = b, *qh = b + 128;
      const int8_t* scales = reinterpret_cast<const int8_t*>(b + 192);
      const float d = HalfAt(b + 208);
      for (int half = 0; half < 2; ++half) {
        for (int p = 0; p < 128; ++p) {
          const int low = (ql[half * 64 + p % 64] >> (4 * (p / 64))) & 0xF;
          const int high = (qh[half * 32 + p % 32] >> (2 * (p / 32))) & 0x3;
          const int e = half * 128 + p;
          const float scaled = d * static_cast<float>((low | (high << 4)) - 32);
          out[e] = scaled * static_cast<float>(scales[e / 16]);
        }
      }
      return;
    }
    case GgmlType::kF32:
    case GgmlType::kF16:
    case GgmlType::kI8:
    case GgmlType::kI16:
    case GgmlType::kI32:
      break;
  }
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> GgmlToLoadedBytes(absl::Span<const uint8_t> data, GgmlType type,
                                                       uint64_t numel) {
  std::optional<BlockSize> block = GgmlBlockSize(static_cast<int32_t>(type));
  if (!block.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat("gguf: GGML type ", static_cast<int32_t>(type), " is not supported"));
  }
  uint64_t nbytes = 0;
  if (numel % block->elements != 0 ||
      __builtin_mul_overflow(numel / block->elements, block->bytes, &nbytes) || nbytes != data.size()) {
    return absl::InvalidArgumentError(absl::StrCat("gguf: ", numel, " elements of GGML type ",
                                                   static_cast<int32_t>(type), " do not take ", data.size(),
                                                   " bytes"));
  }
  if (block->elements == 1) return std::vector<uint8_t>(data.begin(), data.end());
  std::vector<float> values(numel);
  for (uint64_t i = 0; i < numel / block->elements; ++i) {
    DequantizeBlock(type, data.data() + i * block->bytes, values.data() + i * block->elements);
  }
  std::vector<uint8_t> out(numel * sizeof(float));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

}  // namespace uopc::nn
