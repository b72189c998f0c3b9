#include "codegen/testing/kernel_check.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "renderer/cstyle.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

// GROUP and LOCAL need local memory, which the CPU lacks: the kernel rejects them, and the check covers that.
constexpr OptOps kCpuOps[] = {OptOps::kUpcast, OptOps::kUnroll, OptOps::kPadTo,
                              OptOps::kSwap,   OptOps::kGroup,  OptOps::kLocal};
constexpr int64_t kAmounts[] = {0, 2, 3, 4, 8};

std::string Describe(const RandomKernel& kernel, const std::vector<Opt>& opts) {
  std::vector<std::string> printed;
  for (const Opt& o : opts) printed.push_back(o.ToString());
  return absl::StrCat("opts: ", absl::StrJoin(printed, ";"), "\nast:\n", PrintIr(kernel.ast.get()));
}

}  // namespace

absl::StatusOr<nlohmann::json> RunIsolated(const std::function<absl::StatusOr<nlohmann::json>()>& run) {
  int fds[2];
  if (pipe(fds) != 0) return absl::InternalError(absl::StrCat("pipe: ", std::strerror(errno)));
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    close(fds[0]);
    // A crash is reported by the signal that ended the child, in every build: a sanitizer's handler would
    // turn it into an exit status (its report of a wild access in an uninstrumented kernel says no more).
    for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
    absl::StatusOr<nlohmann::json> r = run();
    // 'O' and the JSON, or 'E', the status code and the message.
    const std::string reply =
        r.ok() ? absl::StrCat("O", r->dump())
               : absl::StrCat("E", static_cast<int>(r.status().code()), " ", r.status().message());
    for (size_t done = 0; done < reply.size();) {
      const ssize_t n = write(fds[1], reply.data() + done, reply.size() - done);
      if (n <= 0) _exit(2);
      done += static_cast<size_t>(n);
    }
    _exit(0);
  }
  close(fds[1]);
  std::string reply;
  char chunk[4096];
  for (ssize_t n; (n = read(fds[0], chunk, sizeof chunk)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    reply.append(chunk, static_cast<size_t>(n));
  }
  close(fds[0]);
  int wstatus = 0;
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(wstatus)) {
    const int sig = WTERMSIG(wstatus);
    return absl::InternalError(absl::StrCat("the kernel crashed the process running it: signal ", sig,
                                            " (SIG", sigabbrev_np(sig) != nullptr ? sigabbrev_np(sig) : "?",
                                            ")"));
  }
  if (reply.empty() || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::InternalError(absl::StrCat("the process running the kernel exited with status ",
                                            WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : -1,
                                            " and no result"));
  }
  if (reply[0] == 'O') {
    nlohmann::json j = nlohmann::json::parse(reply.substr(1), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return absl::InternalError("the child's result is not JSON");
    return j;
  }
  const size_t space = reply.find(' ');
  int code = static_cast<int>(absl::StatusCode::kUnknown);
  if (space != std::string::npos) absl::SimpleAtoi(reply.substr(1, space - 1), &code);
  return absl::Status(static_cast<absl::StatusCode>(code),
                      space == std::string::npos ? reply.substr(1) : reply.substr(space + 1));
}

std::vector<Opt> RandomValidOpts(const UOpPtr& ast, ChoiceSource& choices, int max_opts,
                                 const std::string& device) {
  static const ClangRenderer* const clang = new ClangRenderer();
  const Renderer* renderer = clang;
  if (absl::StatusOr<Device*> d = GetDevice(device); d.ok() && (*d)->renderer() != nullptr)
    renderer = (*d)->renderer();
  std::vector<Opt> accepted;
  absl::StatusOr<Kernel> k = Kernel::Create(ast, *renderer);
  if (!k.ok()) return accepted;
  // Most random opts are invalid for a given kernel (the checks are the point of some of them): try several.
  const int wanted = static_cast<int>(choices.Below(max_opts + 1));
  for (int i = 0; i < 6 * max_opts && static_cast<int>(accepted.size()) < wanted; ++i) {
    const OptOps op = kCpuOps[choices.Below(std::size(kCpuOps))];
    const int64_t axis = static_cast<int64_t>(choices.Below(std::max<int64_t>(1, k->shape_len())));
    const int64_t amount = op == OptOps::kSwap ? static_cast<int64_t>(choices.Below(4))
                                               : kAmounts[choices.Below(std::size(kAmounts))];
    Opt opt(op, axis, amount);
    if (k->ApplyOpt(opt).ok()) accepted.push_back(opt);
  }
  return accepted;
}

std::optional<std::string> CheckKernel(const RandomKernel& kernel, const std::vector<Opt>& opts,
                                       const std::string& device, bool isolate) {
  absl::StatusOr<Device*> cpu = GetDevice(device), interp = GetDevice("INTERP");
  if (!cpu.ok() || !interp.ok()) return absl::StrCat("no ", device, " or INTERP device");
  CompileOptions reference_options;
  reference_options.optimize = false;
  absl::StatusOr<nlohmann::json> want = RunOnCorpusInputs(kernel.ast, nullptr, **interp, reference_options);
  if (!want.ok())
    return absl::StrCat("INTERP without opts failed: ", want.status().message(), "\n", Describe(kernel, {}));
  CompileOptions options;
  options.opts = opts;
  auto run_on_device = [&] { return RunOnCorpusInputs(kernel.ast, nullptr, **cpu, options); };
  const bool forkable = device == "CPU" || device == "LLVM";
  absl::StatusOr<nlohmann::json> got = isolate && forkable ? RunIsolated(run_on_device) : run_on_device();
  if (!got.ok() && absl::StrContains(got.status().message(), "cl_khr_fp16")) return std::nullopt;
  if (!got.ok())
    return absl::StrCat(device, " with opts failed: ", got.status().message(), "\n", Describe(kernel, opts));
  for (const auto& [arg, values] : want->items()) {
    if (!got->contains(arg))
      return absl::StrCat(device, " did not store buffer ", arg, "\n", Describe(kernel, opts));
    const DType dtype = kernel.buffers[std::stoll(arg)].dtype;
    if (std::string diff = CorpusValuesMismatch(dtype, (*got)[arg], values); !diff.empty()) {
      return absl::StrCat("buffer ", arg, ": ", device, " with opts vs INTERP without: ", diff, "\n",
                          Describe(kernel, opts));
    }
  }
  return std::nullopt;
}

}  // namespace uopc
