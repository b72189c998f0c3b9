#include "uop/util.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"

namespace uopc {
namespace {

// The value of `name`, or null when it is unset or empty (both mean "use the default").
const char* EnvValue(absl::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr && value[0] != '\0' ? value : nullptr;
}

// One line on stderr the first time each variable is found malformed.
void WarnMalformed(absl::string_view name, const char* value, absl::string_view expected,
                   const std::string& default_value) {
  static std::mutex* mu = new std::mutex();
  static absl::flat_hash_set<std::string>* warned = new absl::flat_hash_set<std::string>();
  std::lock_guard<std::mutex> lock(*mu);
  if (!warned->insert(std::string(name)).second) return;
  std::fprintf(stderr, "uopc: ignoring %s=\"%s\" (not %s); using %s\n", std::string(name).c_str(), value,
               std::string(expected).c_str(), default_value.c_str());
}

// The directory `path` is in ("." for a bare file name).
std::string DirectoryOf(const std::string& path) {
  size_t slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

// Creates `<path>.tmp.<unique>` with O_EXCL; returns its descriptor, or -1 with errno set.
int CreateTemporaryBeside(const std::string& path, std::string& temp) {
  static std::atomic<uint64_t> counter{0};
  const uint64_t seed = static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  for (int attempt = 0; attempt < 100; ++attempt) {
    temp = absl::StrFormat("%s.tmp.%d.%x", path, getpid(),
                           seed ^ (counter.fetch_add(1) * 0x9e3779b97f4a7c15ull));
    int fd = open(temp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

absl::Status WriteAll(int fd, absl::string_view data) {
  while (!data.empty()) {
    ssize_t n = write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::ErrnoToStatus(errno, "write");
    if (n == 0) return absl::DataLossError("write: no progress");
    data.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t EnvInt(absl::string_view name, int64_t default_value) {
  const char* value = EnvValue(name);
  if (value == nullptr) return default_value;
  int64_t parsed = 0;
  if (absl::SimpleAtoi(value, &parsed)) return parsed;
  WarnMalformed(name, value, "an integer", absl::StrCat(default_value));
  return default_value;
}

double EnvDouble(absl::string_view name, double default_value) {
  const char* value = EnvValue(name);
  if (value == nullptr) return default_value;
  double parsed = 0;
  if (absl::SimpleAtod(value, &parsed)) return parsed;
  WarnMalformed(name, value, "a number", absl::StrCat(default_value));
  return default_value;
}

bool EnvFlag(absl::string_view name, bool default_value) { return EnvInt(name, default_value ? 1 : 0) != 0; }

std::string EnvString(absl::string_view name, absl::string_view default_value) {
  const char* value = EnvValue(name);
  return value != nullptr ? std::string(value) : std::string(default_value);
}

std::string TimeToStr(double seconds, int width) {
  if (std::isinf(seconds)) return width > 0 ? absl::StrFormat("%*s", width + 2, "-") : "-";
  if (seconds > 10) return absl::StrFormat("%*.2fs ", width, seconds);
  if (seconds > 10e-3) return absl::StrFormat("%*.2fms", width, seconds * 1e3);
  return absl::StrFormat("%*.2fus", width, seconds * 1e6);
}

absl::Status WriteFileAtomically(const std::string& path, absl::string_view contents) {
  std::string temp;
  const int fd = CreateTemporaryBeside(path, temp);
  if (fd < 0) return absl::ErrnoToStatus(errno, absl::StrCat("cannot create a temporary file beside ", path));
  absl::Status written = WriteAll(fd, contents);
  if (written.ok() && fsync(fd) != 0) written = absl::ErrnoToStatus(errno, "fsync");
  if (close(fd) != 0 && written.ok()) written = absl::ErrnoToStatus(errno, "close");
  if (written.ok() && std::rename(temp.c_str(), path.c_str()) != 0) {
    written = absl::ErrnoToStatus(errno, absl::StrCat("rename from ", temp));
  }
  if (!written.ok()) {
    unlink(temp.c_str());
    return absl::Status(written.code(), absl::StrCat("cannot write ", path, ": ", written.message()));
  }
  // The rename is durable once the directory's entry is: fsync the directory too. File systems that cannot
  // fsync a directory say EINVAL; the file is in place, so that is not a failure.
  const std::string directory = DirectoryOf(path);
  const int dir_fd = open(directory.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0)
    return absl::ErrnoToStatus(errno, absl::StrCat("wrote ", path, " but cannot open ", directory));
  const bool synced = fsync(dir_fd) == 0 || errno == EINVAL;
  const int fsync_errno = errno;
  close(dir_fd);
  if (!synced)
    return absl::ErrnoToStatus(fsync_errno, absl::StrCat("wrote ", path, " but fsync of ", directory));
  return absl::OkStatus();
}

}  // namespace uopc
