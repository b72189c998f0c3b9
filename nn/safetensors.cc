// safetensors reading and writing, with every size and offset of the header checked against the file.
#include "nn/safetensors.h"

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
      absl::StatusOr<SafetensorsEntry> entry = ParseEntry(it.key(), it.value(), data_size);
      if (!entry.ok()) return entry.status();
      out.entries.push_back(*std::move(entry));
    }
  } catch (const std::exception& e) {  // a type the checks above missed
    return Corrupt(absl::StrCat("malformed header: ", e.what()));
  }
  return out;
}

absl::StatusOr<StateDict> SafeLoadBytes(absl::Span<const uint8_t> bytes, const std::string& device) {
  absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsHeader(bytes);
  if (!header.ok()) return header.status();
  StateDict out;
  for (const SafetensorsEntry& e : header->entries) {
    const uint8_t* data = bytes.data() + header->data_start;
    std::vector<uint8_t> values(data + e.begin, data + e.end);
    Tensor t = Tensor::FromBytes(std::move(values), e.shape, e.dtype, device);
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("safetensors: tensor \"", e.name, "\": ", t.status().message()));
    }
    out.Set(e.name, std::move(t));
  }
  return out;
}

namespace {

absl::StatusOr<std::vector<uint8_t>> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("safetensors: cannot open ", path));
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return absl::DataLossError(absl::StrCat("safetensors: error reading ", path));
  return bytes;
}

absl::Status WithPath(const absl::Status& s, const std::string& path) {
  return absl::Status(s.code(), absl::StrCat(path, ": ", s.message()));
}

}  // namespace

absl::StatusOr<StateDict> SafeLoad(const std::string& path, const std::string& device) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<StateDict> out = SafeLoadBytes(*bytes, device);
  if (!out.ok()) return WithPath(out.status(), path);
  return out;
}

absl::StatusOr<std::vector<std::pair<std::string, std::string>>> SafeLoadMetadata(const std::string& path) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<SafetensorsHeader> header = ParseSafetensorsHeader(*bytes);
  if (!header.ok()) return WithPath(header.status(), path);
  return header->metadata;
}

absl::StatusOr<std::vector<uint8_t>> SafeSaveBytes(
    const StateDict& tensors, const std::vector<std::pair<std::string, std::string>>& metadata) {
  std::vector<Tensor> all;
  for (const auto& [name, t] : tensors) {
    if (!t.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("SafeSave: tensor \"", name, "\" has an error: ", t.status().message()));
    }
    all.push_back(t);
  }
  if (!all.empty()) {
    absl::Status realized = Tensor::RealizeAll(all);
    if (!realized.ok()) return realized;
  }
  ordered_json header = ordered_json::object();
  if (!metadata.empty()) {
    ordered_json meta = ordered_json::object();
    for (const auto& [k, v] : metadata) meta[k] = v;
    header["__metadata__"] = std::move(meta);
  }
  std::vector<std::vector<uint8_t>> data;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    absl::StatusOr<std::string> dtype_name = SafetensorsDTypeName(t.dtype());
    if (!dtype_name.ok())
      return absl::InvalidArgumentError(
          absl::StrCat(dtype_name.status().message(), " (tensor \"", name, "\")"));
    absl::StatusOr<std::vector<uint8_t>> bytes = t.ToBytes();
    if (!bytes.ok()) return bytes.status();
    ordered_json entry = ordered_json::object();
    entry["dtype"] = *dtype_name;
    entry["shape"] = t.Shape();
    entry["data_offsets"] = {offset, offset + bytes->size()};
    offset += bytes->size();
    header[name] = std::move(entry);
    data.push_back(*std::move(bytes));
  }
  // Python's json.dumps(separators=(',', ':')) escapes non-ASCII as \uXXXX; so does ensure_ascii.
  std::string text = header.dump(-1, ' ', /*ensure_ascii=*/true);
  text.append((8 - text.size() % 8) % 8, ' ');
  std::vector<uint8_t> out;
  out.reserve(8 + text.size() + offset);
  uint64_t n = text.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<uint8_t>(n >> (8 * i)));
  out.insert(out.end(), text.begin(), text.end());
  for (const std::vector<uint8_t>& d : data) out.insert(out.end(), d.begin(), d.end());
  return out;
}

absl::Status SafeSave(const StateDict& tensors, const std::string& path,
                      const std::vector<std::pair<std::string, std::string>>& metadata) {
  absl::StatusOr<std::vector<uint8_t>> bytes = SafeSaveBytes(tensors, metadata);
  if (!bytes.ok()) return bytes.status();
  const std::string temp = path + ".tmp";
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) return absl::PermissionDeniedError(absl::StrCat("SafeSave: cannot write ", temp));
    out.write(reinterpret_cast<const char*>(bytes->data()), static_cast<std::streamsize>(bytes->size()));
    out.close();
    if (!out) {
      std::remove(temp.c_str());
      return absl::DataLossError(absl::StrCat("SafeSave: error writing ", temp));
    }
  }
  std::error_code ec;
  std::filesystem::rename(temp, path, ec);
  if (ec) {
    std::remove(temp.c_str());
    return absl::InternalError(
        absl::StrCat("SafeSave: cannot rename ", temp, " to ", path, ": ", ec.message()));
  }
  return absl::OkStatus();
}

}  // namespace uopc::nn
