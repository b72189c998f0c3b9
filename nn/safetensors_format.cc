// The safetensors header, with every size and offset checked against the file.
#include "nn/safetensors_format.h"

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "uop/status_macros.h"

namespace uopc::nn {
namespace {

using ordered_json = nlohmann::ordered_json;

struct DTypeName {
  const char* name;
  DType dtype;
};

// tinygrad's safe_dtypes.
constexpr DTypeName kDTypeNames[] = {
    {"BOOL", dtypes::kBool},   {"I8", dtypes::kInt8},       {"U8", dtypes::kUInt8},
    {"I16", dtypes::kInt16},   {"U16", dtypes::kUInt16},    {"I32", dtypes::kInt32},
    {"U32", dtypes::kUInt32},  {"I64", dtypes::kInt64},     {"U64", dtypes::kUInt64},
    {"F16", dtypes::kFloat16}, {"BF16", dtypes::kBFloat16}, {"F32", dtypes::kFloat32},
    {"F64", dtypes::kFloat64},
};

absl::Status Corrupt(absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat("safetensors: ", what));
}

absl::Status EntryError(absl::string_view name, absl::string_view what) {
  return Corrupt(absl::StrCat("tensor \"", name, "\": ", what));
}

// A JSON number that is a non-negative integer.
bool AsUnsigned(const ordered_json& v, uint64_t* out) {
  if (v.is_number_unsigned()) {
    *out = v.get<uint64_t>();
    return true;
  }
  if (v.is_number_integer() && v.get<int64_t>() >= 0) {
    *out = static_cast<uint64_t>(v.get<int64_t>());
    return true;
  }
  return false;
}

absl::StatusOr<SafetensorsEntry> ParseEntry(const std::string& name, const ordered_json& v,
                                            uint64_t data_size) {
  if (!v.is_object()) return EntryError(name, "the header value is not an object");
  auto dtype_it = v.find("dtype");
  auto shape_it = v.find("shape");
  auto offsets_it = v.find("data_offsets");
  if (dtype_it == v.end() || shape_it == v.end() || offsets_it == v.end()) {
    return EntryError(name, "needs \"dtype\", \"shape\" and \"data_offsets\"");
  }
  SafetensorsEntry entry;
  entry.name = name;
  if (!dtype_it->is_string()) return EntryError(name, "\"dtype\" is not a string");
  const std::string& dtype_name = dtype_it->get_ref<const std::string&>();
  bool found = false;
  for (const DTypeName& d : kDTypeNames) {
    if (dtype_name == d.name) {
      entry.dtype = d.dtype;
      found = true;
    }
  }
  if (!found) return EntryError(name, absl::StrCat("unsupported dtype \"", dtype_name, "\""));
  if (!shape_it->is_array()) return EntryError(name, "\"shape\" is not an array");
  // The element count, checked for overflow: every size must fit the data anyway.
  uint64_t numel = 1;
  bool overflow = false, has_zero = false;
  for (const ordered_json& d : *shape_it) {
    uint64_t size;
    if (!AsUnsigned(d, &size) || size > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return EntryError(name, "a size in \"shape\" is not a non-negative integer");
    }
    entry.shape.push_back(static_cast<int64_t>(size));
    has_zero |= size == 0;
    if (!overflow && __builtin_mul_overflow(numel, size, &numel)) overflow = true;
  }
  if (!offsets_it->is_array() || offsets_it->size() != 2 || !AsUnsigned((*offsets_it)[0], &entry.begin) ||
      !AsUnsigned((*offsets_it)[1], &entry.end)) {
    return EntryError(name, "\"data_offsets\" is not two non-negative integers");
  }
  if (entry.begin > entry.end || entry.end > data_size) {
    return EntryError(name, absl::StrCat("data_offsets [", entry.begin, ", ", entry.end,
                                         "] are outside the data section of ", data_size, " bytes"));
  }
  uint64_t nbytes = 0;
  if (has_zero) {  // a zero size anywhere makes the count 0 whatever came before
    overflow = false;
    numel = 0;
  }
  if (overflow || __builtin_mul_overflow(numel, static_cast<uint64_t>(entry.dtype.itemsize()), &nbytes) ||
      nbytes != entry.end - entry.begin) {
    return EntryError(name, absl::StrCat("data_offsets [", entry.begin, ", ", entry.end, "] hold ",
                                         entry.end - entry.begin, " bytes, the shape and dtype need ",
                                         overflow ? std::string("more than 2^64") : absl::StrCat(nbytes)));
  }
  return entry;
}

}  // namespace

absl::StatusOr<std::string> SafetensorsDTypeName(DType dtype) {
  for (const DTypeName& d : kDTypeNames) {
    if (d.dtype == dtype) return std::string(d.name);
  }
  return absl::InvalidArgumentError(absl::StrCat("safetensors: no safetensors dtype for ", dtype.ToString()));
}

absl::StatusOr<SafetensorsHeader> ParseSafetensorsHeader(absl::Span<const uint8_t> bytes) {
  if (bytes.size() < 8) {
    return Corrupt(
        absl::StrCat("the file has ", bytes.size(), " bytes, fewer than the 8 of the header length"));
  }
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | bytes[i];
  if (header_size > bytes.size() - 8) {
    return Corrupt(absl::StrCat("the header length ", header_size, " is more than the ", bytes.size() - 8,
                                " bytes after it (truncated file?)"));
  }
  const char* text = reinterpret_cast<const char*>(bytes.data() + 8);
  ordered_json header;
  try {
    header = ordered_json::parse(text, text + header_size, nullptr, /*allow_exceptions=*/false);
  } catch (const std::exception& e) {  // parse should not throw with exceptions off; be sure
    return Corrupt(absl::StrCat("the header is not valid JSON: ", e.what()));
  }
  if (header.is_discarded()) return Corrupt("the header is not valid JSON");
  if (!header.is_object()) return Corrupt("the header is not a JSON object");
  SafetensorsHeader out;
  out.data_start = 8 + header_size;
  const uint64_t data_size = bytes.size() - out.data_start;
  try {
    for (auto it = header.begin(); it != header.end(); ++it) {
      if (it.key() == "__metadata__") {
        if (!it.value().is_object()) return Corrupt("\"__metadata__\" is not an object");
        for (auto m = it.value().begin(); m != it.value().end(); ++m) {
          out.metadata.emplace_back(m.key(),
                                    m.value().is_string() ? m.value().get<std::string>() : m.value().dump());
        }
        continue;
      }
      UOPC_ASSIGN_OR_RETURN(SafetensorsEntry entry, ParseEntry(it.key(), it.value(), data_size));
      out.entries.push_back(std::move(entry));
    }
  } catch (const std::exception& e) {  // a type the checks above missed
    return Corrupt(absl::StrCat("malformed header: ", e.what()));
  }
  return out;
}

absl::StatusOr<std::string> SafetensorsHeaderBytes(
    const std::vector<SafetensorsEntry>& entries,
    const std::vector<std::pair<std::string, std::string>>& metadata) {
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json meta = ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  for (const SafetensorsEntry& e : entries) {
    absl::StatusOr<std::string> dtype_name = SafetensorsDTypeName(e.dtype);
    if (!dtype_name.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(dtype_name.status().message(), " (tensor \"", e.name, "\")"));
    }
    ordered_json entry = ordered_json::object();
    entry["dtype"] = *dtype_name;
    entry["shape"] = e.shape;
    entry["data_offsets"] = {e.begin, e.end};
    header[e.name] = std::move(entry);
  }
  // Python's json.dumps(separators=(',', ':')) escapes non-ASCII as \uXXXX; so does ensure_ascii. Invalid
  // UTF-8 in a name is replaced rather than thrown on.
  std::string text = header.dump(-1, ' ', /*ensure_ascii=*/true, ordered_json::error_handler_t::replace);
  text.append((8 - text.size() % 8) % 8, ' ');
  std::string out(8, '\0');
  const uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out[i] = static_cast<char>(n >> (8 * i));
  return out + text;
}

}  // namespace uopc::nn
