// The on-disk cache of compiled programs (tinygrad's diskcache for `compile_cached`), shared by every uopc
// process of a user.
//
// An entry is one file, `<dir>/compile/<name>/<sha256(key, source)>`, holding a checksummed copy of the
// compiler's output. `key` names the compiler and everything that changes its output (version, flags, host
// CPU), so two compilers never share an entry. The cache is best effort: a missing, unreadable, truncated or
// corrupt entry is a miss, and a failed write is dropped, so it can slow compilation down but never break it.
// Entries are written atomically (uop/util.h's WriteFileAtomically), so concurrent processes, and a process
// after a crash, see either nothing or a whole entry.
//
//   CompileCache cache(CompileCache::DefaultDirectory());
//   if (std::optional<std::string> lib = cache.Get("clang_jit", key, src)) return *lib;
#ifndef UOPC_RUNTIME_COMPILE_CACHE_H_
#define UOPC_RUNTIME_COMPILE_CACHE_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"

namespace uopc {

class CompileCache {
 public:
  // `$XDG_CACHE_HOME/uopc`, else `$HOME/.cache/uopc`; empty (no cache) when neither variable is set.
  static std::string DefaultDirectory();

  // A cache under `directory`; an empty directory caches nothing.
  explicit CompileCache(std::string directory) : directory_(std::move(directory)) {}

  bool enabled() const { return !directory_.empty(); }
  const std::string& directory() const { return directory_; }

  // The entry's path (whether it exists or not); empty when disabled. `name` is a readable folder name for
  // the compiler ("clang_jit"); `key` is its full identity.
  std::string EntryPath(absl::string_view name, absl::string_view key, absl::string_view source) const;
  // The stored output, or nullopt on a miss (including an entry that fails its checksum).
  std::optional<std::string> Get(absl::string_view name, absl::string_view key,
                                 absl::string_view source) const;
  // Stores `output`; returns whether it was written (callers may ignore failure).
  bool Put(absl::string_view name, absl::string_view key, absl::string_view source,
           absl::string_view output) const;

 private:
  std::string directory_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_COMPILE_CACHE_H_
