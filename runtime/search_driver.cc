#include "runtime/search_driver.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codegen/kernel.h"
#include "runtime/beam_cache.h"
#include "runtime/compile_cache.h"
#include "runtime/exec_item.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// ---- the child's protocol: a command per candidate, replies per run ----

struct Command {
  int64_t job;
  int64_t runs;
  double early_stop;
};

enum ReplyKind : int32_t { kRunTime = 0, kDone = 1, kError = 2 };
struct Reply {
  int32_t kind;
  int32_t message_length;  // kError: the bytes of the message that follow
  double seconds;
};

bool SendAll(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    ssize_t n = send(fd, p, size, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

// Reads exactly `size` bytes, waiting at most until `deadline` (nullopt: forever). Returns 1 on success, 0 at
// end of file (the other side is gone), -1 on timeout or error.
int RecvAll(int fd, void* data, size_t size, std::optional<std::chrono::steady_clock::time_point> deadline) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    if (deadline) {
      double left = std::chrono::duration<double>(*deadline - std::chrono::steady_clock::now()).count();
      if (left <= 0) return -1;
      pollfd pfd{fd, POLLIN, 0};
      int ready = poll(&pfd, 1, static_cast<int>(std::ceil(std::min(left, 3600.0) * 1000)));
      if (ready < 0 && errno == EINTR) continue;
      if (ready < 0) return -1;
      if (ready == 0) continue;  // the deadline check above ends it
    }
    ssize_t n = recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n == 0) return 0;
    if (n < 0) return -1;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return 1;
}

void SendError(int fd, const std::string& message) {
  Reply r{kError, static_cast<int32_t>(message.size()), 0};
  if (SendAll(fd, &r, sizeof(r))) SendAll(fd, message.data(), message.size());
}

// ---- the progress line ----

class ProgressLine {
 public:
  ProgressLine(bool terminal, bool per_round) : terminal_(terminal), per_round_(per_round) {}

  void Update(const BeamProgress& p) {
    if (!terminal_ && !per_round_) return;
    std::string line =
        absl::StrFormat("BEAM %s  round %d  %s %d/%d  best %s  %.1fs", p.kernel_name, p.round, p.phase,
                        p.done, p.total, TimeToStr(p.best_seconds), p.elapsed_seconds);
    if (terminal_) {
      // At most 20 updates a second, but every end of a phase.
      auto now = std::chrono::steady_clock::now();
      if (p.done != p.total && now - last_ < std::chrono::milliseconds(50)) return;
      last_ = now;
      std::fprintf(stderr, "\r%s\033[K", line.c_str());
      if (p.finished) std::fputs("\n", stderr);
      std::fflush(stderr);
    } else if (p.phase == "done") {
      std::fprintf(stderr, "%s\n", line.c_str());
    }
  }

 private:
  bool terminal_, per_round_;
  std::chrono::steady_clock::time_point last_{};
};

// The device, its compiler and, where its renderer keeps vectors, how wide (UOPC_KERNELS=fast and =tinygrad
// search different candidates).
std::string DeviceIdentity(const Device& device) {
  absl::StatusOr<std::string> key = device.compiler().CacheKey();
  std::string identity = key.ok() ? absl::StrCat(device.name(), "\n", *key) : device.name();
  if (device.renderer() != nullptr && device.renderer()->vector_width() > 1) {
    absl::StrAppend(&identity, "\nvector_width=", device.renderer()->vector_width());
  }
  return identity;
}

}  // namespace

// ---------------------------------------------------------------- options

DeviceBeamOptions DeviceBeamOptions::FromEnvironment(int64_t beam_width, int debug) {
  DeviceBeamOptions o;
  o.search = BeamSearchOptions::FromEnvironment(beam_width);
  o.isolate = EnvFlag("BEAM_ISOLATE", true);
  o.timeout_seconds = static_cast<double>(EnvInt("BEAM_TIMEOUT_SEC", 10));
  o.read_cache = !EnvFlag("IGNORE_BEAM_CACHE");
  o.write_cache = true;
  if (EnvInt("CACHELEVEL", 2) < 1) o.read_cache = o.write_cache = false;
  o.debug = debug;
  return o;
}

// ---------------------------------------------------------------- the evaluator

absl::StatusOr<std::unique_ptr<DeviceEvaluator>> DeviceEvaluator::Create(
    Device& device, const std::vector<TimingBuffer>& buffers, bool isolate, double timeout_seconds) {
  std::vector<Buffer> allocated;
  for (const TimingBuffer& b : buffers) {
    UOPC_ASSIGN_OR_RETURN(Buffer buffer, Buffer::Allocate(device, b.dtype, b.size));
    std::vector<uint8_t> zeros(static_cast<size_t>(buffer.nbytes()));
    UOPC_RETURN_IF_ERROR(buffer.CopyIn(zeros));
    allocated.push_back(std::move(buffer));
  }
  // Forking is for host memory only: a GPU driver's state does not survive it.
  bool host_memory = dynamic_cast<HostAllocator*>(&device.allocator()) != nullptr;
  return std::unique_ptr<DeviceEvaluator>(
      new DeviceEvaluator(device, std::move(allocated), isolate && host_memory, timeout_seconds));
}

DeviceEvaluator::DeviceEvaluator(Device& device, std::vector<Buffer> buffers, bool isolate,
                                 double timeout_seconds)
    : device_(device), buffers_(std::move(buffers)), isolate_(isolate), timeout_seconds_(timeout_seconds) {}

DeviceEvaluator::~DeviceEvaluator() { StopChild(); }

absl::StatusOr<std::string> DeviceEvaluator::Compile(const ProgramSpec& program) {
  UOPC_ASSIGN_OR_RETURN(std::string src, device_.ProgramSource(program));
  return device_.compiler().Compile(src);
}

void DeviceEvaluator::StartTiming(absl::Span<const TimingJob> jobs) {
  StopChild();
  CandidateEvaluator::StartTiming(jobs);
}

void DeviceEvaluator::FinishTiming() {
  StopChild();
  CandidateEvaluator::FinishTiming();
}

absl::StatusOr<std::vector<double>> DeviceEvaluator::Time(size_t job, int64_t runs, double early_stop) {
  if (job >= jobs().size()) return absl::InvalidArgumentError("no such timing job");
  if (runs < 1) runs = 1;
  return isolate_ ? TimeInChild(job, runs, early_stop) : TimeInProcess(jobs()[job], runs, early_stop);
}

absl::Status DeviceEvaluator::RunFailure(absl::Status error) {
  if (absl::Status device = device_.Synchronize(); !device.ok()) {
    return EndBeamSearch(absl::Status(
        device.code(), absl::StrCat("BEAM: device ", device_.name(), " failed after a candidate's run (",
                                    error.message(), ") and does not recover: ", device.message())));
  }
  return error;
}

absl::StatusOr<std::vector<double>> DeviceEvaluator::TimeInProcess(const TimingJob& job, int64_t runs,
                                                                   double early_stop) {
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, device_.LoadProgram(*job.program, *job.binary));
  std::vector<Buffer*> params;
  for (int64_t g : job.program->globals) {
    if (g < 0 || g >= static_cast<int64_t>(buffers_.size()))
      return absl::InternalError("a global out of range");
    params.push_back(&buffers_[g]);
  }
  UOPC_ASSIGN_OR_RETURN(const LaunchParams launch, LaunchDims(*job.program));
  std::vector<double> times;
  for (int64_t r = 0; r < runs; ++r) {
    double seconds = 0;
    absl::Status ran = program->Launch(params, job.var_values, launch, &seconds);
    if (ran.ok()) ran = device_.Synchronize();
    if (!ran.ok()) return RunFailure(std::move(ran));
    times.push_back(seconds);
    if (*std::min_element(times.begin(), times.end()) > early_stop) break;
  }
  return times;
}

absl::Status DeviceEvaluator::StartChild() {
  int sockets[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sockets) != 0) {
    return absl::InternalError(absl::StrCat("socketpair: ", std::strerror(errno)));
  }
  std::fflush(nullptr);  // nothing buffered is written twice
  pid_t pid = fork();
  if (pid < 0) {
    close(sockets[0]);
    close(sockets[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(sockets[0]);
    ChildMain(sockets[1]);
  }
  close(sockets[1]);
  child_pid_ = pid;
  child_socket_ = sockets[0];
  ++children_started_;
  return absl::OkStatus();
}

void DeviceEvaluator::StopChild() {
  if (child_pid_ <= 0) return;
  close(child_socket_);
  kill(child_pid_, SIGKILL);
  int status = 0;
  while (waitpid(child_pid_, &status, 0) < 0 && errno == EINTR) {
  }
  child_pid_ = -1;
  child_socket_ = -1;
}

void DeviceEvaluator::ChildMain(int socket) {
  // Die with the parent; leave the parent's terminal signals to it.
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  signal(SIGINT, SIG_IGN);
  // A crashing candidate ends the child with its signal in every build (a sanitizer's handler would make it
  // an exit status and a report that says nothing about the uninstrumented kernel).
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) signal(sig, SIG_DFL);
  // The first write to each page would copy it from the parent, inside the first timed run: copy them now.
  for (Buffer& b : buffers_) std::memset(b.handle(), 0, static_cast<size_t>(b.nbytes()));
  while (true) {
    Command command;
    if (RecvAll(socket, &command, sizeof(command), std::nullopt) != 1) _exit(0);
    if (command.job < 0 || command.job >= static_cast<int64_t>(jobs().size())) {
      SendError(socket, "no such timing job");
      continue;
    }
    const TimingJob& job = jobs()[command.job];
    absl::StatusOr<std::unique_ptr<Program>> program = device_.LoadProgram(*job.program, *job.binary);
    if (!program.ok()) {
      SendError(socket, program.status().ToString());
      continue;
    }
    std::vector<Buffer*> params;
    for (int64_t g : job.program->globals) {
      params.push_back(g >= 0 && g < static_cast<int64_t>(buffers_.size()) ? &buffers_[g] : nullptr);
    }
    if (std::find(params.begin(), params.end(), nullptr) != params.end()) {
      SendError(socket, "a global out of range");
      continue;
    }
    absl::StatusOr<LaunchParams> launch_dims = LaunchDims(*job.program);
    if (!launch_dims.ok()) {
      SendError(socket, launch_dims.status().ToString());
      continue;
    }
    const LaunchParams launch = *launch_dims;
    double best = kInf;
    absl::Status status;
    for (int64_t r = 0; r < command.runs && status.ok(); ++r) {
      double seconds = 0;
      status = (*program)->Launch(params, job.var_values, launch, &seconds);
      if (!status.ok()) break;
      Reply reply{kRunTime, 0, seconds};
      if (!SendAll(socket, &reply, sizeof(reply))) _exit(0);
      best = std::min(best, seconds);
      if (best > command.early_stop) break;
    }
    if (!status.ok()) {
      SendError(socket, status.ToString());
      continue;
    }
    Reply done{kDone, 0, 0};
    if (!SendAll(socket, &done, sizeof(done))) _exit(0);
  }
}

absl::StatusOr<std::vector<double>> DeviceEvaluator::TimeInChild(size_t job, int64_t runs,
                                                                 double early_stop) {
  if (child_pid_ <= 0) {
    // No process to time in: every candidate after this one would fail the same way.
    if (absl::Status started = StartChild(); !started.ok()) return EndBeamSearch(std::move(started));
  }
  Command command{static_cast<int64_t>(job), runs, early_stop};
  if (!SendAll(child_socket_, &command, sizeof(command))) {
    StopChild();
    return absl::InternalError("the timing process is gone");
  }
  // The early cut kills a run that takes far longer than the cut; the time limit holds for every run.
  const double limit =
      std::isfinite(early_stop) ? std::min(timeout_seconds_, early_stop * 2 + 0.25) : timeout_seconds_;
  const auto sent = std::chrono::steady_clock::now();
  std::vector<double> times;
  while (true) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                           std::chrono::duration<double>(limit));
    Reply reply;
    int got = RecvAll(child_socket_, &reply, sizeof(reply), deadline);
    if (got == -1) {
      StopChild();
      if (!times.empty()) return times;
      // Cut: slower than the cut by far; what it ran is a lower bound on its time.
      if (std::isfinite(early_stop) && limit < timeout_seconds_)
        return std::vector<double>{SecondsSince(sent)};
      return absl::DeadlineExceededError(absl::StrCat("the candidate ran past ", limit, " s"));
    }
    if (got == 0) {
      int status = 0;
      waitpid(child_pid_, &status, 0);
      close(child_socket_);
      child_pid_ = child_socket_ = -1;
      return absl::InternalError(WIFSIGNALED(status)
                                     ? absl::StrCat("the candidate crashed (signal ", WTERMSIG(status), ")")
                                     : absl::StrCat("the timing process exited (", WEXITSTATUS(status), ")"));
    }
    if (reply.kind == kRunTime) {
      times.push_back(reply.seconds);
    } else if (reply.kind == kDone) {
      return times;
    } else {
      std::string message(static_cast<size_t>(std::max(reply.message_length, 0)), '\0');
      if (RecvAll(child_socket_, message.data(), message.size(), deadline) != 1) StopChild();
      return absl::InternalError(absl::StrCat("timing failed: ", message));
    }
  }
}

// ---------------------------------------------------------------- the driver

absl::StatusOr<DeviceBeamResult> BeamSearchOnDevice(const UOpPtr& ast, Device& device,
                                                    const DeviceBeamOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  const Renderer* renderer = device.renderer();
  if (renderer == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat("device ", device.name(), " cannot run kernels"));
  }
  UOPC_ASSIGN_OR_RETURN(Kernel kernel, Kernel::Create(ast, *renderer));
  DeviceBeamResult result;

  std::string directory = options.cache_directory;
  if (directory.empty()) {
    std::string base = CompileCache::DefaultDirectory();
    if (!base.empty()) directory = base + "/beam";
  }
  BeamCache cache(options.read_cache || options.write_cache ? directory : "");
  const std::string key =
      BeamCache::Key(ast, options.search.beam_width, options.search.allow_test_size, DeviceIdentity(device));
  if (options.read_cache) {
    if (std::optional<std::vector<Opt>> cached = cache.Get(key)) {
      // Opts that no longer apply (a uopc change) are searched again.
      Kernel check = kernel;
      if (check.ApplyOpts(*cached).ok()) {
        result.opts = *cached;
        result.from_cache = true;
        result.wall_seconds = SecondsSince(start);
        return result;
      }
    }
  }

  UOPC_ASSIGN_OR_RETURN(std::vector<TimingBuffer> buffers, TimingBuffers(ast));
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<DeviceEvaluator> evaluator,
                        DeviceEvaluator::Create(device, buffers, options.isolate, options.timeout_seconds));
  BeamSearchOptions search = options.search;
  const bool terminal = options.progress == DeviceBeamOptions::Progress::kAuto && isatty(STDERR_FILENO);
  const bool per_round = options.progress == DeviceBeamOptions::Progress::kAuto && options.debug >= 1;
  ProgressLine line(terminal, per_round);
  if (terminal || per_round) {
    auto user = search.progress;
    search.progress = [&line, user](const BeamProgress& p) {
      line.Update(p);
      if (user) user(p);
    };
  }
  UOPC_ASSIGN_OR_RETURN(result.search, BeamSearch(kernel, *evaluator, search));
  result.opts = result.search.opts;
  result.wall_seconds = SecondsSince(start);
  if (options.write_cache) cache.Put(key, result.opts);
  if (terminal || per_round) {
    std::fprintf(stderr, "BEAM %s: %s in %.2fs (%d rounds, %d programs timed, %d dropped): [%s]\n",
                 kernel.BaseName().c_str(), TimeToStr(result.search.seconds).c_str(), result.wall_seconds,
                 static_cast<int>(result.search.rounds), static_cast<int>(result.search.timed),
                 static_cast<int>(result.search.failed), OptListToCompactString(result.opts).c_str());
    // Codegen failing a candidate is a kernel the target cannot take, or a uopc bug worth a look.
    if (options.debug >= 1 && !result.search.first_failure.ok()) {
      std::fprintf(stderr, "BEAM %s: the first candidate dropped: %s\n", kernel.BaseName().c_str(),
                   result.search.first_failure.ToString().c_str());
    }
  }
  return result;
}

}  // namespace uopc
