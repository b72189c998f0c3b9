#include "runtime/beam_cache.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/opt.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

UOpPtr CorpusAst(const std::string& id) {
  for (const CorpusKernel& ck : KernelCorpus()) {
    if (ck.id == id) return ParseCorpusGraph(ck.ast);
  }
  ADD_FAILURE() << "no corpus kernel " << id;
  return nullptr;
}

std::string Compact(const std::vector<Opt>& opts) {
  std::vector<std::string> parts;
  for (const Opt& o : opts) parts.push_back(o.ToCompactString());
  return absl::StrJoin(parts, " ");
}

std::string TempDirectory(const std::string& name) {
  const char* base = std::getenv("TEST_TMPDIR");
  std::string dir = absl::StrCat(base != nullptr ? base : "/tmp", "/beam_cache_", name);
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(BeamCacheTest, RoundTrips) {
  const std::string dir = TempDirectory("round_trip");
  BeamCache cache(dir);
  UOpPtr ast = CorpusAst("matmul_64/0");
  std::string key = BeamCache::Key(ast, 2, true, "CPU");
  EXPECT_FALSE(cache.Get(key).has_value());
  std::vector<Opt> opts = {Opt(OptOps::kUpcast, 1, int64_t{4}), Opt(OptOps::kUnroll, 0, int64_t{4}),
                           Opt(OptOps::kTC, 0, Opt::TcArg{-1, 2, 1})};
  ASSERT_TRUE(cache.Put(key, opts));
  std::optional<std::vector<Opt>> got = cache.Get(key);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(*got, opts);
  // An empty list (nothing beat the kernel without opts) is an answer too.
  std::string other = BeamCache::Key(ast, 3, true, "CPU");
  ASSERT_TRUE(cache.Put(other, {}));
  ASSERT_TRUE(cache.Get(other).has_value());
  EXPECT_TRUE(cache.Get(other)->empty());
  EXPECT_EQ(*cache.Get(key), opts);
  // Keys differ by every part.
  EXPECT_NE(BeamCache::Key(ast, 2, false, "CPU"), key);
  EXPECT_NE(BeamCache::Key(ast, 2, true, "LLVM"), key);
  EXPECT_NE(BeamCache::Key(CorpusAst("matmul_odd/0"), 2, true, "CPU"), key);
  // No temporary files left behind.
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    EXPECT_EQ(entry.path().string().find(".tmp"), std::string::npos) << entry.path();
    ++files;
  }
  EXPECT_EQ(files, 2);
}

TEST(BeamCacheTest, IgnoresCorruptAndHalfWrittenEntries) {
  BeamCache cache(TempDirectory("corrupt"));
  std::string key = BeamCache::Key(CorpusAst("sum_all/0"), 2, true, "CPU");
  ASSERT_TRUE(cache.Put(key, {Opt(OptOps::kUpcast, 0, int64_t{4})}));
  std::string path = cache.EntryPath(key);
  std::string whole;
  {
    std::ifstream in(path, std::ios::binary);
    whole.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  auto write = [&](const std::string& text) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << text;
  };
  // Every proper prefix (a write cut short) is a miss.
  int prefixes = 0;
  for (size_t n = 0; n < whole.size(); ++n) {
    write(whole.substr(0, n));
    EXPECT_FALSE(cache.Get(key).has_value()) << "prefix of " << n << " bytes";
    ++prefixes;
  }
  EXPECT_EQ(prefixes, static_cast<int>(whole.size()));
  // Garbage opts, another key in this file, trailing bytes: misses.
  std::string bad_opt = whole;
  bad_opt.replace(bad_opt.find("UPCAST:0:4"), 10, "UPCAST:x:4");
  write(bad_opt);
  EXPECT_FALSE(cache.Get(key).has_value());
  write(whole + "x");
  EXPECT_FALSE(cache.Get(key).has_value());
  std::string other_key = BeamCache::Key(CorpusAst("sum_all/0"), 4, true, "CPU");
  std::string other = whole;
  other.replace(other.find(key), key.size(), other_key);
  write(other);
  EXPECT_FALSE(cache.Get(key).has_value());
  // And the whole entry reads again; a new Put replaces a corrupt one.
  write(whole);
  ASSERT_TRUE(cache.Get(key).has_value());
  write("garbage");
  ASSERT_TRUE(cache.Put(key, {Opt(OptOps::kUnroll, 0, int64_t{4})}));
  EXPECT_EQ(Compact(*cache.Get(key)), "UNROLL:0:4");
}

TEST(BeamCacheTest, DisabledCachesNothing) {
  BeamCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_FALSE(cache.Put("k", {}));
  EXPECT_FALSE(cache.Get("k").has_value());
}

}  // namespace
}  // namespace uopc
