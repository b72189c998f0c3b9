#include "runtime/compile_cache.h"

#include <array>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "runtime/sha256.h"
#include "uop/util.h"

namespace uopc {
namespace {

// Entry layout: the magic line, the payload's SHA-256 (32 bytes), its length (8 bytes, little-endian), the
// payload. The checksum catches truncated and overwritten files; the magic, files from another format.
constexpr absl::string_view kMagic = "uopc compile cache v1\n";
constexpr size_t kHeaderSize = kMagic.size() + 32 + 8;

std::string Header(absl::string_view payload) {
  std::string header(kMagic);
  std::array<uint8_t, 32> digest = Sha256Digest(payload);
  header.append(reinterpret_cast<const char*>(digest.data()), digest.size());
  uint64_t length = payload.size();
  for (int i = 0; i < 8; ++i) header.push_back(static_cast<char>(length >> (8 * i)));
  return header;
}

// Folder names come from code, but keep them to a safe alphabet anyway: a stray '/' or ".." must not escape.
std::string SafeName(absl::string_view name) {
  std::string out;
  for (char c : name)
    out.push_back(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_');
  return out.empty() ? "default" : out;
}

}  // namespace

std::string CompileCache::DefaultDirectory() {
  if (std::string xdg = EnvString("XDG_CACHE_HOME"); !xdg.empty()) return absl::StrCat(xdg, "/uopc");
  if (std::string home = EnvString("HOME"); !home.empty()) return absl::StrCat(home, "/.cache/uopc");
  return "";
}

std::string CompileCache::EntryPath(absl::string_view name, absl::string_view key,
                                    absl::string_view source) const {
  if (!enabled()) return "";
  // The key's length goes first, so that no (key, source) pair can be shifted into another.
  Sha256 sha;
  sha.Update(absl::StrCat(key.size(), ":"));
  sha.Update(key);
  sha.Update(source);
  std::array<uint8_t, 32> digest = sha.Finish();
  std::string hex;
  for (uint8_t b : digest) absl::StrAppend(&hex, absl::Hex(b, absl::kZeroPad2));
  return absl::StrCat(directory_, "/compile/", SafeName(name), "/", hex);
}

std::optional<std::string> CompileCache::Get(absl::string_view name, absl::string_view key,
                                             absl::string_view source) const {
  if (!enabled()) return std::nullopt;
  std::ifstream in(EntryPath(name, key, source), std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream contents;
  contents << in.rdbuf();
  if (in.bad()) return std::nullopt;
  std::string entry = std::move(contents).str();
  if (entry.size() < kHeaderSize || absl::string_view(entry).substr(0, kMagic.size()) != kMagic)
    return std::nullopt;
  absl::string_view payload = absl::string_view(entry).substr(kHeaderSize);
  if (absl::string_view(entry).substr(0, kHeaderSize) != Header(payload)) return std::nullopt;
  return std::string(payload);
}

bool CompileCache::Put(absl::string_view name, absl::string_view key, absl::string_view source,
                       absl::string_view output) const {
  if (!enabled()) return false;
  std::filesystem::path path = EntryPath(name, key, source);
  std::error_code error;
  std::filesystem::create_directories(path.parent_path(), error);
  if (error) return false;
  std::string data = Header(output);
  absl::StrAppend(&data, output);
  return WriteFileAtomically(path.string(), data).ok();
}

}  // namespace uopc
