// BEAM search on a device (tinygrad's beam_search as realize calls it): codegen/search.h's search with
// candidates compiled by the device's compiler and timed on the device, the on-disk cache of winners, and
// the progress line.
//
// Timing. Each candidate runs on scratch buffers sized from the kernel AST (tinygrad's bufs_from_lin; zeroed,
// so no denormals or NaNs skew a run), up to 3 times, the minimum counting. On devices whose memory is host
// memory (CPU, LLVM, INTERP) the runs happen in a child process, forked once per round after the round's
// candidates are compiled (so the child already holds them): a candidate that crashes kills only the child,
// and one that runs past its limit is killed; either is dropped and the next candidate gets a new child. The
// limit is BEAM_TIMEOUT_SEC (10 s), or, once a candidate has been timed, a little over the early cut (3x the
// best time), so a far slower candidate costs little. What is not isolated: codegen and the LLVM compiler run
// in this process (their errors are Status values, but a crash there is a crash of the process), and GPU
// devices time in process (their driver state does not survive fork). The child calls Program::Launch only;
// a device whose Launch needs threads started before the fork must start them again in the child, or run
// with BEAM_ISOLATE=0.
//
// Environment (tinygrad's names): BEAM=n, IGNORE_BEAM_CACHE=1 (search even when the cache has an answer;
// the answer is still stored), CACHELEVEL=0 (no cache), BEAM_TIMEOUT_SEC, the knobs of
// BeamSearchOptions::FromEnvironment; uopc's BEAM_ISOLATE=0 (time in process) and BEAM_TEST_WORK.
//
//   ASSIGN_OR_RETURN(DeviceBeamResult r,
//                    BeamSearchOnDevice(ast, device, DeviceBeamOptions::FromEnvironment(/*beam=*/2, debug)));
//   CompileOptions options;
//   options.opts = r.opts;
#ifndef UOPC_RUNTIME_SEARCH_DRIVER_H_
#define UOPC_RUNTIME_SEARCH_DRIVER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "codegen/opt.h"
#include "codegen/search.h"
#include "runtime/device.h"
#include "uop/uop.h"

namespace uopc {

struct DeviceBeamOptions {
  BeamSearchOptions search;
  bool isolate = true;          // BEAM_ISOLATE: time in a child process where the device allows it
  double timeout_seconds = 10;  // BEAM_TIMEOUT_SEC: the most one candidate may run
  bool read_cache = true;       // IGNORE_BEAM_CACHE=1 turns it off
  bool write_cache = true;      // CACHELEVEL=0 turns both off
  // Where the winners are kept; empty: CompileCache::DefaultDirectory() + "/beam".
  std::string cache_directory;
  // The progress line: on stderr when it is a terminal, or (one line a round) when debug >= 1.
  int debug = 0;
  enum class Progress { kAuto, kNever };
  Progress progress = Progress::kAuto;

  static DeviceBeamOptions FromEnvironment(int64_t beam_width, int debug);
};

struct DeviceBeamResult {
  std::vector<Opt> opts;
  bool from_cache = false;
  BeamResult search;        // empty when from the cache
  double wall_seconds = 0;  // the whole search (or cache lookup)
};

// The opts BEAM search picks for the kernel AST `ast` on `device` (the device's renderer and compiler).
// Errors: a device without a renderer, an AST codegen cannot analyze, scratch buffers that cannot be
// allocated.
absl::StatusOr<DeviceBeamResult> BeamSearchOnDevice(const UOpPtr& ast, Device& device,
                                                    const DeviceBeamOptions& options);

// The evaluator BeamSearchOnDevice uses (public for tests): compiles with the device's compiler (uncached,
// as tinygrad) and times on scratch buffers, in a child process when `isolate` and the device's memory is
// host memory. A candidate's compile error, crash, time-out or refused launch drops the candidate; the
// errors that end the search (EndsBeamSearch) are a timing process that cannot be started and a device that
// no longer synchronizes after a candidate's run failed.
class DeviceEvaluator : public CandidateEvaluator {
 public:
  static absl::StatusOr<std::unique_ptr<DeviceEvaluator>> Create(Device& device,
                                                                 const std::vector<TimingBuffer>& buffers,
                                                                 bool isolate, double timeout_seconds);
  ~DeviceEvaluator() override;

  absl::StatusOr<std::string> Compile(const ProgramSpec& program) override;
  void StartTiming(absl::Span<const TimingJob> jobs) override;
  absl::StatusOr<std::vector<double>> Time(size_t job, int64_t runs, double early_stop) override;
  void FinishTiming() override;

  bool isolated() const { return isolate_; }
  // Child processes started so far (one per round, plus one after each crash or kill).
  int64_t children_started() const { return children_started_; }

 private:
  DeviceEvaluator(Device& device, std::vector<Buffer> buffers, bool isolate, double timeout_seconds);
  absl::StatusOr<std::vector<double>> TimeInProcess(const TimingJob& job, int64_t runs, double early_stop);
  // A run that failed in process: the candidate's failure, or, when the device no longer synchronizes (a
  // GPU's context lost to a fault), the device's, which ends the search.
  absl::Status RunFailure(absl::Status error);
  absl::StatusOr<std::vector<double>> TimeInChild(size_t job, int64_t runs, double early_stop);
  absl::Status StartChild();
  void StopChild();
  [[noreturn]] void ChildMain(int socket);

  Device& device_;
  std::vector<Buffer> buffers_;
  bool isolate_;
  double timeout_seconds_;
  int child_pid_ = -1;
  int child_socket_ = -1;
  int64_t children_started_ = 0;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_SEARCH_DRIVER_H_
