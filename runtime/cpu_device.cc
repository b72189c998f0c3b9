#include "runtime/cpu_device.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "runtime/cpu_program.h"
#include "runtime/host_cpu.h"
#include "runtime/registry.h"
#include "uop/status_macros.h"
#include "uop/util.h"

extern char** environ;

namespace uopc {
namespace {

// ---- files and processes ----

// A private temporary directory, removed with everything in it.
class TempDir {
 public:
  static absl::StatusOr<TempDir> Create() {
    std::string pattern = absl::StrCat(EnvString("TMPDIR", "/tmp"), "/uopc-XXXXXX");
    if (mkdtemp(pattern.data()) == nullptr) {
      return absl::InternalError(
          absl::StrCat("cannot create a temporary directory ", pattern, ": ", std::strerror(errno)));
    }
    return TempDir(std::move(pattern));
  }
  TempDir(TempDir&& other) noexcept : path_(std::exchange(other.path_, "")) {}
  TempDir& operator=(TempDir&&) = delete;
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  std::string File(absl::string_view name) const { return absl::StrCat(path_, "/", name); }

 private:
  explicit TempDir(std::string path) : path_(std::move(path)) {}
  std::string path_;
};

absl::Status WriteFile(const std::string& path, absl::string_view contents) {
  std::ofstream out(path, std::ios::binary);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) return absl::InternalError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

// Runs argv (looked up in $PATH) with stdin from /dev/null and stdout, stderr into files; returns the exit
// status (128 + signal for a killed process). Files instead of pipes: nothing to deadlock on, whatever the
// compiler prints.
absl::StatusOr<int> RunProcess(const std::vector<std::string>& argv, const std::string& stdout_path,
                               const std::string& stderr_path) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, stdout_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  int error = posix_spawnp(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) {
    return absl::FailedPreconditionError(absl::StrCat("cannot run ", argv[0], ": ", std::strerror(error)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return absl::InternalError(absl::StrCat("waitpid: ", std::strerror(errno)));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return 128 + WTERMSIG(status);
}

bool IsCIdentifier(absl::string_view name) {
  if (name.empty() || absl::ascii_isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

// ---- loading ----

// The shared object `lib` loaded from memory, and its entry point; the handle closes it when dropped.
absl::StatusOr<std::pair<std::shared_ptr<void>, CpuEntryFunction>> LoadSharedObject(const ProgramSpec& spec,
                                                                                    absl::string_view lib) {
  // dlopen needs a path: an anonymous in-memory file leaves nothing behind on disk. It stays open while the
  // library is loaded, so no later program gets the same /proc/self/fd path (glibc would hand back the
  // loaded library for a path it already knows).
  int fd = memfd_create(absl::StrCat("uopc:", spec.name).c_str(), MFD_CLOEXEC);
  if (fd < 0) return absl::InternalError(absl::StrCat("memfd_create: ", std::strerror(errno)));
  for (size_t written = 0; written < lib.size();) {
    ssize_t n = write(fd, lib.data() + written, lib.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      close(fd);
      return absl::InternalError(absl::StrCat("writing the program to memory: ", std::strerror(errno)));
    }
    written += static_cast<size_t>(n);
  }
  std::string path = absl::StrCat("/proc/self/fd/", fd);
  void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    close(fd);
    return absl::InvalidArgumentError(absl::StrCat("cannot load the program ", spec.name, ": ",
                                                   error != nullptr ? error : "dlopen failed"));
  }
  std::shared_ptr<void> loaded(handle, [fd](void* h) {
    dlclose(h);
    close(fd);
  });
  auto entry = reinterpret_cast<CpuEntryFunction>(dlsym(handle, kCpuEntryName));
  if (entry == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("the program ", spec.name, " has no ", kCpuEntryName,
                                                   ": compile CpuDevice::ProgramSource(spec), not spec.src"));
  }
  return std::make_pair(std::move(loaded), entry);
}

}  // namespace

// ---- ClangCompiler ----

const std::vector<std::string>& ClangCompiler::Flags() {
  static const auto* flags = new std::vector<std::string>{
      // tinygrad's ClangJITCompiler flags; -fno-math-errno lets __builtin_sqrt be an instruction.
      "-x", "c", "-O2", "-march=native", "-ffreestanding", "-fno-math-errno", "-nostdlib", "-fno-ident",
      // A shared object for dlopen, with every symbol resolved inside it (see cpu_device.h).
      "-fPIC", "-shared", "-Wl,-z,defs",
      // The entry point calls the kernel by name: a misspelt name must not become an implicit declaration.
      "-Werror=implicit-function-declaration"};
  return *flags;
}

std::string ClangCompiler::DefaultCompilerPath() { return EnvString("UOPC_CC", "clang"); }

ClangCompiler::ClangCompiler(std::string compiler_path, CompileCache cache)
    : Compiler(std::move(cache)), compiler_path_(std::move(compiler_path)) {}

absl::StatusOr<std::string> ClangCompiler::CacheKey() const {
  std::call_once(key_once_, [this] {
    key_ = [this]() -> absl::StatusOr<std::string> {
      UOPC_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create());
      UOPC_ASSIGN_OR_RETURN(
          int exit_code, RunProcess({compiler_path_, "--version"}, dir.File("version"), dir.File("stderr")));
      if (exit_code != 0) {
        return absl::FailedPreconditionError(absl::StrCat(compiler_path_, " --version failed (exit ",
                                                          exit_code,
                                                          "): ", ReadFileOrEmpty(dir.File("stderr"))));
      }
      return absl::StrCat(ReadFileOrEmpty(dir.File("version")), "\n", absl::StrJoin(Flags(), " "), "\n",
                          HostCpuIdentity());
    }();
  });
  return key_;
}

absl::StatusOr<std::string> ClangCompiler::Compile(absl::string_view src) const {
  UOPC_ASSIGN_OR_RETURN(TempDir dir, TempDir::Create());
  std::string source = dir.File("kernel.c"), output = dir.File("kernel.so"), diagnostics = dir.File("stderr");
  UOPC_RETURN_IF_ERROR(WriteFile(source, src));
  std::vector<std::string> argv = {compiler_path_};
  argv.insert(argv.end(), Flags().begin(), Flags().end());
  argv.insert(argv.end(), {"-o", output, source});
  UOPC_ASSIGN_OR_RETURN(int exit_code, RunProcess(argv, dir.File("stdout"), diagnostics));
  if (exit_code != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(compiler_path_, " failed (exit ", exit_code, "):\n", ReadFileOrEmpty(diagnostics)));
  }
  std::string lib = ReadFileOrEmpty(output);
  if (lib.empty()) return absl::InternalError(absl::StrCat(compiler_path_, " wrote no output"));
  return lib;
}

// ---- CpuDevice ----

CpuDevice::CpuDevice(Options options)
    : Device("CPU"),
      compiler_(std::move(options.compiler_path),
                CompileCache(options.cache_directory.value_or(CompileCache::DefaultDirectory()))),
      renderer_(CoreSplit{.cores = std::max(1, options.threads)}, options.vector_width),
      pool_(std::make_shared<CpuThreadPool>(std::max(1, options.threads))) {}

absl::StatusOr<std::string> CpuDevice::ProgramSource(const ProgramSpec& spec) const {
  if (!IsCIdentifier(spec.name)) {
    return absl::InvalidArgumentError(absl::StrCat("kernel name '", spec.name, "' is not a C identifier"));
  }
  std::vector<std::string> args;
  for (size_t i = 0; i < spec.globals.size(); ++i) args.push_back(absl::StrCat("bufs[", i, "]"));
  for (size_t i = 0; i < spec.vars.size(); ++i) args.push_back(absl::StrCat("vars[", i, "]"));
  if (TakesCoreId(spec)) args.push_back("core_id");
  return absl::StrCat(spec.src, "\n/* uopc: the host calls every kernel through this one signature */\n",
                      "void ", kCpuEntryName, "(void* const* bufs, const int* vars, int core_id) {\n  ",
                      spec.name, "(", absl::StrJoin(args, ", "), ");\n}\n");
}

absl::StatusOr<std::unique_ptr<Program>> CpuDevice::LoadProgram(const ProgramSpec& spec,
                                                                absl::string_view lib) {
  UOPC_ASSIGN_OR_RETURN(auto loaded, LoadSharedObject(spec, lib));
  return std::unique_ptr<Program>(new CpuProgram(*this, spec, loaded.second, std::move(loaded.first), pool_));
}

namespace {

// Linking //runtime:cpu is what makes "CPU" a device of the program (runtime/registry.h).
const bool cpu_registered = RegisterDevice(
    "CPU", []() -> absl::StatusOr<std::unique_ptr<Device>> { return std::make_unique<CpuDevice>(); });

}  // namespace
}  // namespace uopc
