#include "uop/util.h"

#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

// Sets a variable for the scope (unset when `value` is null) and restores it after.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

TEST(EnvTest, UnsetAndEmptyGiveTheDefault) {
  ScopedEnv unset("UOPC_UTIL_TEST_KNOB", nullptr);
  EXPECT_EQ(EnvInt("UOPC_UTIL_TEST_KNOB", 7), 7);
  EXPECT_EQ(EnvDouble("UOPC_UTIL_TEST_KNOB", 0.5), 0.5);
  EXPECT_TRUE(EnvFlag("UOPC_UTIL_TEST_KNOB", true));
  EXPECT_FALSE(EnvFlag("UOPC_UTIL_TEST_KNOB"));
  EXPECT_EQ(EnvString("UOPC_UTIL_TEST_KNOB", "dflt"), "dflt");
  ScopedEnv empty("UOPC_UTIL_TEST_KNOB", "");
  EXPECT_EQ(EnvInt("UOPC_UTIL_TEST_KNOB", 7), 7);
  EXPECT_EQ(EnvString("UOPC_UTIL_TEST_KNOB", "dflt"), "dflt");
}

TEST(EnvTest, ParsesIntegersLikePython) {
  ScopedEnv knob("UOPC_UTIL_TEST_KNOB", " -12 ");
  EXPECT_EQ(EnvInt("UOPC_UTIL_TEST_KNOB", 0), -12);
  EXPECT_TRUE(EnvFlag("UOPC_UTIL_TEST_KNOB"));
  EXPECT_EQ(EnvString("UOPC_UTIL_TEST_KNOB"), " -12 ");
  ScopedEnv zero("UOPC_UTIL_TEST_KNOB", "0");
  EXPECT_FALSE(EnvFlag("UOPC_UTIL_TEST_KNOB", true));
  ScopedEnv real("UOPC_UTIL_TEST_KNOB", "2.5e-3");
  EXPECT_EQ(EnvDouble("UOPC_UTIL_TEST_KNOB", 0), 2.5e-3);
}

TEST(EnvTest, MalformedValuesGiveTheDefaultAndOneWarning) {
  ScopedEnv knob("UOPC_UTIL_TEST_BAD", "3x");
  testing::internal::CaptureStderr();
  EXPECT_EQ(EnvInt("UOPC_UTIL_TEST_BAD", 4), 4);
  EXPECT_EQ(EnvInt("UOPC_UTIL_TEST_BAD", 4), 4);
  EXPECT_TRUE(EnvFlag("UOPC_UTIL_TEST_BAD", true));
  EXPECT_EQ(EnvDouble("UOPC_UTIL_TEST_BAD", 1.5), 1.5);
  EXPECT_EQ(testing::internal::GetCapturedStderr(),
            "uopc: ignoring UOPC_UTIL_TEST_BAD=\"3x\" (not an integer); using 4\n");
}

TEST(TimeToStrTest, FollowsTinygrad) {
  EXPECT_EQ(TimeToStr(12.5), "12.50s ");
  EXPECT_EQ(TimeToStr(0.0125), "12.50ms");
  EXPECT_EQ(TimeToStr(0.0000125), "12.50us");
  EXPECT_EQ(TimeToStr(0.01), "10000.00us");  // the boundaries are exclusive, as tinygrad's
  EXPECT_EQ(TimeToStr(0.0125, 9), "    12.50ms");
  EXPECT_EQ(TimeToStr(std::numeric_limits<double>::infinity()), "-");
  EXPECT_EQ(TimeToStr(std::numeric_limits<double>::infinity(), 9), std::string(10, ' ') + "-");
}

TEST(SecondsSinceTest, CountsUp) {
  const auto start = std::chrono::steady_clock::now();
  EXPECT_GE(SecondsSince(start), 0);
  EXPECT_LT(SecondsSince(start + std::chrono::hours(1)), 0);
}

TEST(TupleStringTest, PrintsPythonTuples) {
  EXPECT_EQ(TupleString({}), "()");
  EXPECT_EQ(TupleString({3}), "(3,)");
  EXPECT_EQ(TupleString({3, -1}), "(3, -1)");
  EXPECT_EQ(TupleString(std::vector<int64_t>{1, 2, 3}), "(1, 2, 3)");
  std::vector<std::pair<int, int>> pairs = {{0, 2}};
  auto pair = [](std::string* out, const std::pair<int, int>& p) {
    absl::StrAppend(out, "(", p.first, ", ", p.second, ")");
  };
  EXPECT_EQ(TupleString(pairs, pair), "((0, 2),)");
}

class WriteFileAtomicallyTest : public testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::string(std::getenv("TEST_TMPDIR")) + "/" +
           testing::UnitTest::GetInstance()->current_test_info()->name();
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  static std::string Read(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  std::vector<std::string> Entries() const {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_)) names.push_back(e.path().filename());
    std::sort(names.begin(), names.end());
    return names;
  }
  std::string dir_;
};

TEST_F(WriteFileAtomicallyTest, WritesAndOverwrites) {
  const std::string path = dir_ + "/f";
  ASSERT_TRUE(WriteFileAtomically(path, std::string("a\0b", 3)).ok());
  EXPECT_EQ(Read(path), std::string("a\0b", 3));
  ASSERT_TRUE(WriteFileAtomically(path, "second").ok());
  EXPECT_EQ(Read(path), "second");
  ASSERT_TRUE(WriteFileAtomically(path, "").ok());
  EXPECT_EQ(Read(path), "");
  EXPECT_EQ(Entries(), std::vector<std::string>{"f"});
  // A plain create's permissions (the umask applies), not mkstemp's 0600.
  const mode_t mask = umask(0);
  umask(mask);
  struct stat st;
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0666 & ~mask);
}

TEST_F(WriteFileAtomicallyTest, MissingDirectoryIsAnErrorNamingThePath) {
  const std::string path = dir_ + "/missing/f";
  absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
  EXPECT_THAT(s.message(), HasSubstr(path));
  EXPECT_THAT(s.message(), HasSubstr("No such file or directory"));
}

TEST_F(WriteFileAtomicallyTest, DirectoryThatIsAFileIsAnError) {
  ASSERT_TRUE(WriteFileAtomically(dir_ + "/file", "x").ok());
  absl::Status s = WriteFileAtomically(dir_ + "/file/f", "x");
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;  // ENOTDIR
  EXPECT_THAT(s.message(), HasSubstr(dir_ + "/file/f"));
  EXPECT_EQ(Entries(), std::vector<std::string>{"file"});
}

TEST_F(WriteFileAtomicallyTest, UnwritableDirectoryIsAnError) {
  if (geteuid() == 0) GTEST_SKIP() << "root writes to read-only directories";
  ASSERT_EQ(chmod(dir_.c_str(), 0500), 0);
  absl::Status s = WriteFileAtomically(dir_ + "/f", "x");
  chmod(dir_.c_str(), 0700);
  EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << s;
  EXPECT_THAT(s.message(), HasSubstr(dir_ + "/f"));
  EXPECT_TRUE(Entries().empty());
}

TEST_F(WriteFileAtomicallyTest, FailedRenameLeavesNoTemporaryFile) {
  // The target is a non-empty directory: the temporary file is written, the rename fails.
  const std::string path = dir_ + "/target";
  std::filesystem::create_directories(path + "/inside");
  absl::Status s = WriteFileAtomically(path, "x");
  EXPECT_FALSE(s.ok());
  EXPECT_THAT(s.message(), HasSubstr(path));
  EXPECT_EQ(Entries(), std::vector<std::string>{"target"});
}

TEST_F(WriteFileAtomicallyTest, BareFileNameUsesTheWorkingDirectory) {
  const std::filesystem::path old = std::filesystem::current_path();
  std::filesystem::current_path(dir_);
  absl::Status s = WriteFileAtomically("bare", "x");
  std::filesystem::current_path(old);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Read(dir_ + "/bare"), "x");
}

}  // namespace
}  // namespace uopc
