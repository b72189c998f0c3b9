// BEAM search: the opts of a kernel chosen by timing candidates (tinygrad v0.10.3's engine/search.py).
//
// A round expands every kernel of the beam by each of tinygrad's `actions` (UPCAST, UNROLL, LOCAL, GROUP,
// GROUPTOP, PADTO, SWAP, NOLOCALS, TC) that applies to it, drops the ones tinygrad drops (an opt the kernel
// refuses, more than BEAM_UPCAST_MAX upcasted or BEAM_LOCAL_MAX local elements, BEAM_UOPS_MAX uops or more,
// a program seen before, 1000x the operations of the leanest), times the rest and keeps the `beam_width`
// fastest; the search stops when a round does not improve on the best time.
//
// Codegen and compiling run on a thread pool (oneTBB); the timing runs one candidate at a time. What a
// device does is behind `CandidateEvaluator` (compile a program, time it), so codegen stays below the
// runtime layer and tests can rank candidates with a cost function that takes no time. The runtime's
// evaluator and the on-disk cache of the winners (runtime/beam_cache.h) are wired up by
// runtime/search_driver.h.
//
// Departures from tinygrad, on purpose:
//  - Devices without launch dims (the CPU) time a "test size" too: the leading global loops of the program
//    are cut short (every VIEW of the AST shrunk on those axes) until the kernel does at most `test_work_max`
//    iterations, and the time is scaled back up; tinygrad only shrinks GPU launch sizes.
//  - The early cut uses the best time known so far, this round's included; tinygrad uses only the previous
//    round's best (none in the first round).
//  - Programs are told apart by their source (before compiling), tinygrad compares the binaries.
//
//   BeamSearchOptions options = BeamSearchOptions::FromEnvironment(/*beam_width=*/2);
//   ASSIGN_OR_RETURN(Kernel k, Kernel::Create(ast, renderer));
//   ASSIGN_OR_RETURN(BeamResult best, BeamSearch(k, evaluator, options));   // best.opts
#ifndef UOPC_CODEGEN_SEARCH_H_
#define UOPC_CODEGEN_SEARCH_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "codegen/program_spec.h"
#include "uop/dtype.h"
#include "uop/uop.h"

namespace uopc {

// ---- the action space ----

// The knobs tinygrad reads when it builds `actions` (BEAM_PADTO, TC, TC_OPT, NOLOCALS).
struct BeamActionConfig {
  bool padto = true;
  int64_t use_tensor_cores = 1;
  int64_t tc_opt = 2;
  bool nolocals = false;
  // uopc's VECTOR last (BeamSearch sets it when the kernel's target keeps vectors).
  bool vector = false;
};

// tinygrad's `actions`, in its order.
std::vector<Opt> BeamActions(const BeamActionConfig& config = {});

struct BeamLimits {
  int64_t upcast_max = 256;  // BEAM_UPCAST_MAX: upcasted elements (over a tensor core's own)
  int64_t local_max = 1024;  // BEAM_LOCAL_MAX: local and group elements
  // TC_SEARCH_OVER_SHAPE: on a kernel without opts, a TC action with tc_select -1 becomes one per core.
  bool tc_search_over_shape = true;
};

// One kernel reachable from another by one action: the action's index in `actions` and the kernel.
struct KernelAction {
  int64_t action_index = 0;
  Kernel kernel;
};

// tinygrad's get_kernel_actions(include_0=False): `k` with each action of `actions` applied, in order,
// leaving out the actions `k` refuses, the ones that repeat another (an amount equal to the whole axis when
// the amount 0 is also an action) and the kernels over the limits.
std::vector<KernelAction> KernelActions(const Kernel& k, absl::Span<const Opt> actions,
                                        const BeamLimits& limits = {});

// ---- what the search needs from a device ----

// A compiled candidate to time: its test program, its binary and the values of its variables.
struct TimingJob {
  const ProgramSpec* program = nullptr;
  const std::string* binary = nullptr;
  std::vector<int64_t> var_values;  // for program->vars
};

// A failure's scope. A candidate that fails (codegen refuses its opts, the compiler its source; it crashes,
// or runs past the time limit) is dropped and the search goes on without it. An error that is not the
// candidate's doing and would fail every candidate after it (the device is lost, the timing process cannot
// start) ends the search instead: an evaluator marks it with EndBeamSearch, and BeamSearch returns it.
absl::Status EndBeamSearch(absl::Status error);
// Whether `error` was marked by EndBeamSearch.
bool EndsBeamSearch(const absl::Status& error);

class CandidateEvaluator {
 public:
  virtual ~CandidateEvaluator() = default;
  // The binary of `program` (a candidate's test program); called concurrently from the pool's threads. An
  // error drops the candidate, unless EndsBeamSearch(error).
  virtual absl::StatusOr<std::string> Compile(const ProgramSpec& program) = 0;
  // A round's timing: StartTiming with every job of the round (they stay valid until FinishTiming), then
  // Time for each job in order, from one thread. Time runs jobs[job] on scratch buffers up to `runs` times,
  // stopping once its fastest run took longer than `early_stop` seconds, and returns the run times (at
  // least one). An error (a crash, a run past the time limit) drops the candidate, unless
  // EndsBeamSearch(error).
  virtual void StartTiming(absl::Span<const TimingJob> jobs) { jobs_.assign(jobs.begin(), jobs.end()); }
  virtual absl::StatusOr<std::vector<double>> Time(size_t job, int64_t runs, double early_stop) = 0;
  virtual void FinishTiming() { jobs_.clear(); }

 protected:
  const std::vector<TimingJob>& jobs() const { return jobs_; }

 private:
  std::vector<TimingJob> jobs_;
};

// ---- the search ----

// Where the search is, for progress lines. `phase` is "compile" or "time".
struct BeamProgress {
  std::string kernel_name;
  int64_t round = 0;
  absl::string_view phase;
  int64_t done = 0;
  int64_t total = 0;
  double best_seconds = std::numeric_limits<double>::infinity();
  double elapsed_seconds = 0;
  bool finished = false;  // the last call, after the search
};

struct BeamSearchOptions {
  int64_t beam_width = 2;  // BEAM=n
  // Shrink the work timed (GPU launch sizes; on devices without launch dims, the leading global loops).
  bool allow_test_size = true;
  int64_t max_global_size = 65536;           // GPU: launch at most this many threads
  int64_t test_work_max = int64_t{1} << 24;  // BEAM_TEST_WORK, elsewhere: at most this many iterations
  int64_t timing_runs = 3;
  double min_progress_seconds = 0.01e-6;  // BEAM_MIN_PROGRESS (given in microseconds)
  int64_t uops_max = 3000;                // BEAM_UOPS_MAX (0: no limit)
  BeamLimits limits;
  BeamActionConfig actions;
  int threads = 0;  // PARALLEL: codegen and compile threads (0: one per core)
  // Called with the search's progress, from any thread but never from two at once.
  std::function<void(const BeamProgress&)> progress;

  // The knobs above from tinygrad's environment variables (BEAM_UPCAST_MAX, BEAM_LOCAL_MAX, BEAM_UOPS_MAX,
  // BEAM_MIN_PROGRESS, BEAM_PADTO, TC, TC_OPT, NOLOCALS, TC_SEARCH_OVER_SHAPE, PARALLEL) and uopc's
  // BEAM_TEST_WORK.
  static BeamSearchOptions FromEnvironment(int64_t beam_width);
};

struct BeamResult {
  std::vector<Opt> opts;  // the winner's applied opts (empty: no candidate beat the kernel as given)
  double seconds = std::numeric_limits<double>::infinity();  // its time (full size)
  int64_t rounds = 0;
  int64_t candidates = 0;  // kernels considered, over all rounds
  int64_t compiled = 0;    // unique programs compiled
  int64_t timed = 0;       // programs timed
  int64_t failed = 0;      // dropped: codegen, compile or timing failed
  // The first dropped candidate's error (OK when none was dropped).
  absl::Status first_failure;
  // Wall time of each phase, over all rounds: expanding and rendering candidates, making the test programs
  // and compiling them, timing them.
  double render_seconds = 0;
  double compile_seconds = 0;
  double timing_seconds = 0;
};

// tinygrad's beam_search from `kernel` (usually without opts). Candidates that fail are dropped and counted;
// the errors are a beam width below 1 and an evaluator's error marked EndBeamSearch.
absl::StatusOr<BeamResult> BeamSearch(const Kernel& kernel, CandidateEvaluator& evaluator,
                                      const BeamSearchOptions& options);

// ---- the pieces, public for the runtime and for tests ----

// A DEFINE_GLOBAL's scratch buffer for timing (tinygrad's bufs_from_lin): its scalar dtype and the elements
// its views reach (at least 1).
struct TimingBuffer {
  int64_t index = 0;  // the DEFINE_GLOBAL's number
  DType dtype;
  int64_t size = 1;
  bool written = false;  // a STORE writes it
};
// One per DEFINE_GLOBAL of the kernel AST `ast`, by index.
absl::StatusOr<std::vector<TimingBuffer>> TimingBuffers(const UOpPtr& ast);

// The midpoint of each variable's range, tinygrad's var_vals for timing, in the order of `vars` (names).
std::vector<int64_t> TimingVarValues(const Kernel& kernel, absl::Span<const std::string> vars);

// An optimized AST (Kernel::GetOptimizedAst's) with its leading global axes cut short so that the kernel
// does at most `work_max` iterations (the product of its full shape), and the factor its work shrank by (1:
// the AST unchanged, e.g. symbolic or already small). `global_dims` is the kernel's global_dims().
std::pair<UOpPtr, double> ShrinkForTiming(const UOpPtr& optimized_ast, int64_t global_dims, int64_t work_max);

// tinygrad's _get_test_global_size: launch sizes halved (from the last dim over 16) until at most
// `max_global_size` threads, and the factor.
std::pair<std::vector<int64_t>, double> TestGlobalSize(std::vector<int64_t> global_size,
                                                       int64_t max_global_size);

// tinygrad's Estimates.ops of a linear program (ALU ops times the trip counts around them; index math not
// counted).
double EstimateOps(const ProgramSpec& program);

}  // namespace uopc

#endif  // UOPC_CODEGEN_SEARCH_H_
