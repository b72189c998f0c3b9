// The on-disk cache of BEAM's winners (tinygrad's diskcache for `beam_search`), beside the compile cache
// (runtime/compile_cache.h): the search driver (runtime/search_driver.h) looks a kernel up before it
// searches and stores what the search chose.
//
// An entry is `<directory>/<hash>`, one small text file per (AST, beam width, test size, device) holding the
// opts. A missing, unreadable, half-written or corrupt entry is a miss, so the cache can cost a search but
// never break one; entries are written atomically (uop/util.h's WriteFileAtomically), so a reader never sees
// half of one.
//
//   BeamCache cache(directory);
//   const std::string key = BeamCache::Key(ast, beam_width, allow_test_size, device_identity);
//   if (std::optional<std::vector<Opt>> opts = cache.Get(key)) return *opts;
#ifndef UOPC_RUNTIME_BEAM_CACHE_H_
#define UOPC_RUNTIME_BEAM_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "codegen/opt.h"
#include "uop/uop.h"

namespace uopc {

class BeamCache {
 public:
  // An empty directory caches nothing.
  explicit BeamCache(std::string directory) : directory_(std::move(directory)) {}

  // The identity of a search: the AST's text, the beam width, the test size flag and the device (its name
  // and whatever else decides its speed, such as its compiler's identity).
  static std::string Key(const UOpPtr& ast, int64_t beam_width, bool allow_test_size,
                         absl::string_view device);

  bool enabled() const { return !directory_.empty(); }
  std::string EntryPath(absl::string_view key) const;
  std::optional<std::vector<Opt>> Get(absl::string_view key) const;
  // Returns whether the entry was written.
  bool Put(absl::string_view key, absl::Span<const Opt> opts) const;

 private:
  std::string directory_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_BEAM_CACHE_H_
