#include "runtime/compile_cache.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gtest/gtest.h"

namespace uopc {
namespace {

std::string TestDir(const std::string& name) {
  std::string dir = std::string(std::getenv("TEST_TMPDIR")) + "/" + name;
  std::filesystem::remove_all(dir);
  return dir;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void WriteAll(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
}

TEST(CompileCacheTest, DefaultDirectoryFollowsXdgThenHome) {
  const char* old_xdg = std::getenv("XDG_CACHE_HOME");
  const char* old_home = std::getenv("HOME");
  std::string saved_xdg = old_xdg ? old_xdg : "", saved_home = old_home ? old_home : "";
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/home/u", 1);
  EXPECT_EQ(CompileCache::DefaultDirectory(), "/x/cache/uopc");
  unsetenv("XDG_CACHE_HOME");
  EXPECT_EQ(CompileCache::DefaultDirectory(), "/home/u/.cache/uopc");
  setenv("XDG_CACHE_HOME", "", 1);  // empty counts as unset, as in the XDG spec
  EXPECT_EQ(CompileCache::DefaultDirectory(), "/home/u/.cache/uopc");
  unsetenv("XDG_CACHE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(CompileCache::DefaultDirectory(), "");
  if (old_xdg) setenv("XDG_CACHE_HOME", saved_xdg.c_str(), 1);
  if (old_home) setenv("HOME", saved_home.c_str(), 1);
}

TEST(CompileCacheTest, HitAndMiss) {
  CompileCache cache(TestDir("hit_miss"));
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt);
  std::string binary(
      "\x7f"
      "ELF\0\1\2 binary",
      14);
  ASSERT_TRUE(cache.Put("cc", "key", "src", binary));
  EXPECT_EQ(cache.Get("cc", "key", "src"), binary);
  // Every part of the identity matters.
  EXPECT_EQ(cache.Get("cc", "key2", "src"), std::nullopt);
  EXPECT_EQ(cache.Get("cc", "key", "src2"), std::nullopt);
  EXPECT_EQ(cache.Get("other", "key", "src"), std::nullopt);
  // (key, source) pairs that concatenate alike are different entries.
  EXPECT_NE(cache.EntryPath("cc", "ab", "c"), cache.EntryPath("cc", "a", "bc"));
  // An empty output is a valid entry.
  ASSERT_TRUE(cache.Put("cc", "key", "empty", ""));
  EXPECT_EQ(cache.Get("cc", "key", "empty"), "");
  // Overwriting replaces.
  ASSERT_TRUE(cache.Put("cc", "key", "src", "new"));
  EXPECT_EQ(cache.Get("cc", "key", "src"), "new");
}

TEST(CompileCacheTest, EntryLivesUnderTheDirectory) {
  std::string dir = TestDir("layout");
  CompileCache cache(dir);
  std::string path = cache.EntryPath("clang_jit", "k", "s");
  EXPECT_EQ(path.rfind(dir + "/compile/clang_jit/", 0), 0u) << path;
  ASSERT_TRUE(cache.Put("clang_jit", "k", "s", "lib"));
  EXPECT_TRUE(std::filesystem::exists(path));
  // A name with path characters stays inside its folder.
  EXPECT_EQ(cache.EntryPath("../x", "k", "s").find(".."), std::string::npos);
}

TEST(CompileCacheTest, CorruptEntriesAreMisses) {
  CompileCache cache(TestDir("corrupt"));
  ASSERT_TRUE(cache.Put("cc", "key", "src", "the library bytes"));
  std::string path = cache.EntryPath("cc", "key", "src");
  std::string good = ReadAll(path);

  std::string flipped = good;
  flipped.back() ^= 1;
  WriteAll(path, flipped);
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt) << "a flipped payload bit";

  WriteAll(path, good.substr(0, good.size() - 3));
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt) << "truncated";

  WriteAll(path, good.substr(0, 10));
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt) << "truncated inside the header";

  WriteAll(path, "");
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt) << "empty";

  WriteAll(path, good + "extra");
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt) << "trailing bytes";

  // The entry is a directory: unreadable, and not writable either.
  std::filesystem::remove(path);
  std::filesystem::create_directories(path);
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt);
  EXPECT_FALSE(cache.Put("cc", "key", "src", "x"));
  std::filesystem::remove_all(path);

  // A new Put repairs the entry.
  WriteAll(path, "garbage");
  ASSERT_TRUE(cache.Put("cc", "key", "src", "the library bytes"));
  EXPECT_EQ(cache.Get("cc", "key", "src"), "the library bytes");
}

TEST(CompileCacheTest, UnwritableDirectoryIsHarmless) {
  std::string file = TestDir("a_file");
  WriteAll(file, "not a directory");
  CompileCache cache(file + "/cache");  // below a regular file: nothing can be created
  EXPECT_FALSE(cache.Put("cc", "key", "src", "lib"));
  EXPECT_EQ(cache.Get("cc", "key", "src"), std::nullopt);
  // No temporary files are left behind in a writable directory after a failed rename either.
  std::string dir = TestDir("no_temp");
  CompileCache ok(dir);
  ASSERT_TRUE(ok.Put("cc", "key", "src", "lib"));
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir))
    files += entry.is_regular_file();
  EXPECT_EQ(files, 1);
}

TEST(CompileCacheTest, DisabledCacheStoresNothing) {
  CompileCache cache("");
  EXPECT_FALSE(cache.enabled());
  EXPECT_EQ(cache.EntryPath("cc", "k", "s"), "");
  EXPECT_FALSE(cache.Put("cc", "k", "s", "lib"));
  EXPECT_EQ(cache.Get("cc", "k", "s"), std::nullopt);
}

}  // namespace
}  // namespace uopc
