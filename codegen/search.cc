#include "codegen/search.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "codegen/codegen.h"
#include "rewrite/symbolic.h"
#include "shapetracker/shapetracker.h"
#include "uop/parallel_for.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

// The payload that marks an error as the search's end (its value is unused).
constexpr absl::string_view kEndsBeamSearchPayload = "uopc/ends_beam_search";

// The largest value a dim can take (its value when it is an integer).
int64_t DimMax(const Sint& s) { return s.is_int() ? s.value() : s.vmax(); }

// One kernel of a round on its way through codegen, compiling and timing.
struct Candidate {
  Kernel kernel;
  absl::StatusOr<ProgramSpec> program = absl::UnknownError("not rendered");
  // Set for the candidates that get compiled and timed.
  bool selected = false;
  ProgramSpec timing_program;
  double factor = 1;
  absl::StatusOr<std::string> binary = absl::UnknownError("not compiled");
  double seconds = kInf;
  bool timed = false;
};

struct BeamEntry {
  Kernel kernel;
  double seconds;
};

// Serializes progress calls and fills in the parts every call shares.
class ProgressReporter {
 public:
  ProgressReporter(const BeamSearchOptions& options, std::string kernel_name)
      : callback_(options.progress), kernel_name_(std::move(kernel_name)) {}

  void Report(int64_t round, absl::string_view phase, int64_t done, int64_t total, double best,
              bool finished = false) {
    if (!callback_) return;
    std::lock_guard<std::mutex> lock(mu_);
    BeamProgress p;
    p.kernel_name = kernel_name_;
    p.round = round;
    p.phase = phase;
    p.done = done;
    p.total = total;
    p.best_seconds = best;
    p.elapsed_seconds = SecondsSince(start_);
    p.finished = finished;
    callback_(p);
  }

 private:
  std::function<void(const BeamProgress&)> callback_;
  std::string kernel_name_;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  std::mutex mu_;
};

// A variable's value when candidates are timed: the midpoint of its range (tinygrad's).
int64_t TimingValue(const UOp& var) { return (var.vmin().AsInt64() + var.vmax().AsInt64()) / 2; }

// The test program of a candidate: the program with smaller launch dims (GPU targets) or with its leading
// global loops cut short (targets without launch dims), and the factor its work shrank by.
absl::Status MakeTimingProgram(Candidate& c, const BeamSearchOptions& options) {
  c.timing_program = *c.program;
  c.factor = 1;
  // Symbolic launch dims are timed at the values the kernel's variables are timed at.
  if (!c.timing_program.symbolic_launch_dims.empty()) {
    absl::flat_hash_map<std::string, int64_t> values;
    for (const UOpPtr& v : c.kernel.vars()) {
      if (v->op() == Ops::DEFINE_VAR) values[v->var_name()] = TimingValue(*v);
    }
    for (const auto& [dim, size] : c.timing_program.symbolic_launch_dims) {
      UOPC_ASSIGN_OR_RETURN(ConstValue value, SymInfer(size.get(), values));
      (dim < 3 ? *c.timing_program.global_size : *c.timing_program.local_size)[dim % 3] = value.AsInt64();
    }
    c.timing_program.symbolic_launch_dims.clear();
    c.timing_program.launch_vars.clear();
  }
  if (!options.allow_test_size) return absl::OkStatus();
  if (c.program->global_size.has_value()) {
    if (options.max_global_size > 0) {
      auto [global, factor] = TestGlobalSize(*c.program->global_size, options.max_global_size);
      c.timing_program.global_size = std::move(global);
      c.factor = factor;
    }
    return absl::OkStatus();
  }
  if (options.test_work_max <= 0) return absl::OkStatus();
  UOPC_ASSIGN_OR_RETURN(UOpPtr optimized, c.kernel.GetOptimizedAst(nullptr, "test"));
  auto [shrunk, factor] = ShrinkForTiming(optimized, c.kernel.global_dims(), options.test_work_max);
  if (factor == 1) return absl::OkStatus();
  UOPC_ASSIGN_OR_RETURN(c.timing_program, CompileOptimizedAst(shrunk, c.kernel.renderer()));
  c.factor = factor;
  return absl::OkStatus();
}

}  // namespace

// ---------------------------------------------------------------- failures

absl::Status EndBeamSearch(absl::Status error) {
  if (!error.ok()) error.SetPayload(kEndsBeamSearchPayload, absl::Cord());
  return error;
}

bool EndsBeamSearch(const absl::Status& error) {
  return !error.ok() && error.GetPayload(kEndsBeamSearchPayload).has_value();
}

// ---------------------------------------------------------------- actions

std::vector<Opt> BeamActions(const BeamActionConfig& config) {
  std::vector<Opt> a;
  auto add = [&](OptOps op, std::initializer_list<int64_t> amounts, int64_t axes) {
    for (int64_t amt : amounts) {
      for (int64_t axis = 0; axis < axes; ++axis) a.emplace_back(op, axis, amt);
    }
  };
  add(OptOps::kUpcast, {0, 2, 3, 4, 5, 7}, 6);
  add(OptOps::kUnroll, {0, 4, 7}, 5);
  add(OptOps::kLocal, {2, 3, 4, 8, 13, 16, 29}, 6);
  add(OptOps::kGroupTop, {13, 16, 28, 29, 32, 49, 64, 256}, 3);
  add(OptOps::kGroup, {0, 4, 8, 16}, 3);
  if (config.padto) add(OptOps::kPadTo, {32}, 7);
  a.emplace_back(OptOps::kLocal, 0, 32);
  a.emplace_back(OptOps::kLocal, 6, 2);
  a.emplace_back(OptOps::kTC, 0, Opt::TcArg{-1, 0, config.use_tensor_cores});
  // Covers resnet's kernels: three global and three reduce axes.
  for (int64_t axis = 0; axis < 9; ++axis) {
    a.emplace_back(OptOps::kTC, axis, Opt::TcArg{-1, config.tc_opt, config.use_tensor_cores});
  }
  for (int64_t a0 = 0; a0 < 5; ++a0) {
    for (int64_t a1 = a0 + 1; a1 < 5; ++a1) a.emplace_back(OptOps::kSwap, a0, a1);
  }
  if (config.nolocals) a.emplace_back(OptOps::kNoLocals, std::nullopt, std::nullopt);
  if (config.vector) a.emplace_back(OptOps::kVector, std::nullopt, std::nullopt);
  return a;
}

std::vector<KernelAction> KernelActions(const Kernel& k, absl::Span<const Opt> actions,
                                        const BeamLimits& limits) {
  // Tensor core opts must come first: on a kernel without opts, each TC action for "the default core"
  // becomes one per core. tinygrad does this while enumerating the list it splices, so the action after
  // each replaced one is skipped (not replaced); the indices of the actions after them follow from that.
  std::vector<Opt> all(actions.begin(), actions.end());
  if (limits.tc_search_over_shape && k.applied_opts().empty()) {
    const int64_t cores = static_cast<int64_t>(k.renderer().tensor_cores().size());
    for (size_t i = 0; i < all.size(); ++i) {
      const auto* tc = std::get_if<Opt::TcArg>(&all[i].arg);
      if (all[i].op != OptOps::kTC || tc == nullptr || (*tc)[0] != -1) continue;
      std::vector<Opt> per_core;
      for (int64_t select = 0; select < cores; ++select) {
        per_core.emplace_back(OptOps::kTC, *all[i].axis, Opt::TcArg{select, (*tc)[1], (*tc)[2]});
      }
      all.erase(all.begin() + i);
      all.insert(all.begin() + i, per_core.begin(), per_core.end());
    }
  }
  std::vector<KernelAction> out;
  for (size_t i = 0; i < all.size(); ++i) {
    const Opt& a = all[i];
    if (a.axis.has_value() && a.op != OptOps::kTC) {
      int64_t ax = k.RealAxis(a);
      if (ax >= k.shape_len()) continue;
      // An amount equal to the whole axis repeats the action with amount 0 (tinygrad looks for that action
      // at the real axis).
      if (ax >= 0 && a.has_int_arg() && k.full_shape()[ax] == Sint(a.int_arg()) &&
          std::find(all.begin(), all.end(), Opt(a.op, ax, int64_t{0})) != all.end()) {
        continue;
      }
    }
    Kernel next = k;
    if (!next.ApplyOpt(a).ok()) continue;
    int64_t up = 1, local = 1, tc_up = 1;
    if (const TensorCore* tc = next.tensor_core())
      tc_up = (tc->dims[0] * tc->dims[1] * tc->dims[2]) / tc->threads;
    std::vector<AxisType> types = next.axis_types();
    for (size_t d = 0; d < types.size(); ++d) {
      const AxisType t = types[d];
      if (t == AxisType::kUpcast || t == AxisType::kUnroll) up *= DimMax(next.full_shape()[d]);
      if (t == AxisType::kLocal || t == AxisType::kGroupReduce) local *= DimMax(next.full_shape()[d]);
    }
    if (up / tc_up > limits.upcast_max || local > limits.local_max) continue;
    out.push_back({static_cast<int64_t>(i) + 1, std::move(next)});
  }
  return out;
}

// ---------------------------------------------------------------- options

BeamSearchOptions BeamSearchOptions::FromEnvironment(int64_t beam_width) {
  BeamSearchOptions o;
  o.beam_width = beam_width;
  o.test_work_max = EnvInt("BEAM_TEST_WORK", o.test_work_max);
  o.min_progress_seconds = EnvDouble("BEAM_MIN_PROGRESS", 0.01) / 1e6;
  o.uops_max = EnvInt("BEAM_UOPS_MAX", o.uops_max);
  o.limits.upcast_max = EnvInt("BEAM_UPCAST_MAX", o.limits.upcast_max);
  o.limits.local_max = EnvInt("BEAM_LOCAL_MAX", o.limits.local_max);
  o.limits.tc_search_over_shape = EnvFlag("TC_SEARCH_OVER_SHAPE", true);
  o.actions.padto = EnvFlag("BEAM_PADTO", true);
  o.actions.use_tensor_cores = EnvInt("TC", 1);
  o.actions.tc_opt = EnvInt("TC_OPT", 2);
  o.actions.nolocals = EnvFlag("NOLOCALS");
  o.threads = static_cast<int>(EnvInt("PARALLEL", 0));
  return o;
}

// ---------------------------------------------------------------- test sizes, buffers, estimates

std::pair<std::vector<int64_t>, double> TestGlobalSize(std::vector<int64_t> global_size,
                                                       int64_t max_global_size) {
  double factor = 1;
  auto total = [&] {
    int64_t p = 1;
    for (int64_t g : global_size) p *= g;
    return p;
  };
  while (total() > max_global_size) {
    bool halved = false;
    for (size_t j = global_size.size(); j-- > 0;) {
      if (global_size[j] > 16) {
        global_size[j] /= 2;
        factor *= 2;
        halved = true;
        break;
      }
    }
    if (!halved) break;  // tinygrad would loop forever here
  }
  return {std::move(global_size), factor};
}

std::pair<UOpPtr, double> ShrinkForTiming(const UOpPtr& optimized_ast, int64_t global_dims,
                                          int64_t work_max) {
  std::vector<const UOp*> views;
  for (const UOp* u : optimized_ast->Toposort()) {
    if (u->op() == Ops::VIEW && ShapeTrackerOf(u) != nullptr) views.push_back(u);
  }
  if (views.empty() || global_dims <= 0) return {optimized_ast, 1};
  const size_t ndims = ShapeTrackerOf(views[0])->shape().size();
  std::vector<int64_t> full(ndims, 1);
  for (const UOp* v : views) {
    const SintVec& shape = ShapeTrackerOf(v)->shape();
    if (shape.size() != ndims || !AllInt(shape)) return {optimized_ast, 1};
    for (size_t i = 0; i < ndims; ++i) full[i] = std::max(full[i], shape[i].value());
  }
  double work = 1;
  for (int64_t d : full) work *= static_cast<double>(d);
  const double original = work;
  std::vector<int64_t> cut = full;
  for (int64_t i = 0; i < global_dims && i < static_cast<int64_t>(ndims) && work > work_max; ++i) {
    int64_t keep = std::max<int64_t>(1, static_cast<int64_t>(full[i] * (work_max / work)));
    work = work / full[i] * keep;
    cut[i] = keep;
  }
  if (cut == full) return {optimized_ast, 1};
  absl::flat_hash_map<const UOp*, UOpPtr> replacements;
  for (const UOp* v : views) {
    const ShapeTracker& st = *ShapeTrackerOf(v);
    std::vector<SintPair> bounds;
    for (size_t i = 0; i < ndims; ++i) {
      // A global axis has its full size in every view; anything else is not a kernel this understands.
      if (cut[i] != full[i] && st.shape()[i] != Sint(full[i])) return {optimized_ast, 1};
      bounds.emplace_back(Sint(0), cut[i] != full[i] ? Sint(cut[i]) : st.shape()[i]);
    }
    absl::StatusOr<ShapeTracker> shrunk = st.Shrink(bounds);
    if (!shrunk.ok()) return {optimized_ast, 1};
    replacements[v] = v->ref().replace_arg(shrunk->ToUOp()->arg());
  }
  return {optimized_ast->Substitute(replacements), original / work};
}

absl::StatusOr<std::vector<TimingBuffer>> TimingBuffers(const UOpPtr& ast) {
  absl::flat_hash_map<int64_t, TimingBuffer> by_index;
  for (const UOp* u : ast->Toposort()) {
    if (u->op() != Ops::DEFINE_GLOBAL) continue;
    if (!u->arg().is_int() || !u->dtype().is_ptr()) {
      return absl::InvalidArgumentError("a DEFINE_GLOBAL without an int index or a pointer type");
    }
    TimingBuffer& b = by_index[u->arg().as_int()];
    b.index = u->arg().as_int();
    b.dtype = u->dtype().base();
  }
  for (const UOp* u : ast->Toposort()) {
    if ((u->op() != Ops::LOAD && u->op() != Ops::STORE) || u->num_src() < 2) continue;
    if (u->src(0)->op() != Ops::DEFINE_GLOBAL) continue;
    const ShapeTracker* st = ShapeTrackerOf(u->src(1));
    if (st == nullptr) return absl::InvalidArgumentError("a buffer op without a VIEW");
    TimingBuffer& b = by_index[u->src(0)->arg().as_int()];
    b.size = std::max(b.size, st->RealSize());
    if (u->op() == Ops::STORE) b.written = true;
  }
  std::vector<TimingBuffer> out;
  for (auto& [index, b] : by_index) out.push_back(b);
  std::sort(out.begin(), out.end(),
            [](const TimingBuffer& a, const TimingBuffer& b) { return a.index < b.index; });
  for (size_t i = 0; i < out.size(); ++i) {
    if (out[i].index != static_cast<int64_t>(i)) {
      return absl::InvalidArgumentError(absl::StrCat("DEFINE_GLOBAL ", i, " is missing"));
    }
  }
  return out;
}

std::vector<int64_t> TimingVarValues(const Kernel& kernel, absl::Span<const std::string> vars) {
  std::vector<int64_t> values;
  for (const std::string& name : vars) {
    int64_t value = 0;
    for (const UOpPtr& v : kernel.vars()) {
      if (v->op() == Ops::DEFINE_VAR && v->var_name() == name) value = TimingValue(*v);
    }
    values.push_back(value);
  }
  return values;
}

double EstimateOps(const ProgramSpec& program) {
  absl::flat_hash_set<const UOp*> index_math;
  for (const UOpPtr& u : program.uops) {
    if (u->op() == Ops::LOAD || u->op() == Ops::STORE) {
      for (const UOp* x : u->src(0)->Toposort()) index_math.insert(x);
      if (u->num_src() > 2) {
        for (const UOp* x : u->src(2)->Toposort()) index_math.insert(x);
      }
    } else if (u->op() == Ops::IF) {
      for (const UOp* x : u->src(0)->Toposort()) index_math.insert(x);
    }
  }
  double ops = 0, mults = 1;
  std::vector<double> stack;
  for (const UOpPtr& u : program.uops) {
    if (u->op() == Ops::RANGE) {
      stack.push_back(mults);
      // A symbolic trip count counts as its largest value.
      mults *= static_cast<double>(u->src(0)->vmax().AsInt64());
    } else if (u->op() == Ops::ENDRANGE) {
      if (!stack.empty()) {
        mults = stack.back();
        stack.pop_back();
      }
    } else if (u->op() == Ops::SPECIAL) {
      // A symbolic launch dim counts as its largest value.
      if (u->arg().is_tuple() && u->arg().as_tuple().size() > 1) {
        mults *= static_cast<double>(u->vmax().AsInt64() + 1);
      }
    } else if (groups::kALU.contains(u->op()) && !index_math.contains(u.get())) {
      ops += mults * (u->op() == Ops::MULACC ? 2 : 1) * u->dtype().count();
    }
  }
  return ops;
}

// ---------------------------------------------------------------- the search

absl::StatusOr<BeamResult> BeamSearch(const Kernel& kernel, CandidateEvaluator& evaluator,
                                      const BeamSearchOptions& options) {
  if (options.beam_width < 1)
    return absl::InvalidArgumentError("BEAM search needs a beam width of at least 1");
  BeamActionConfig action_config = options.actions;
  action_config.vector = kernel.renderer().vector_width() > 1;
  const std::vector<Opt> actions = BeamActions(action_config);
  ProgressReporter progress(options, kernel.BaseName());
  BeamResult result;
  std::vector<BeamEntry> beam = {{kernel, kInf}};
  absl::flat_hash_set<std::string> seen_sources;
  // A candidate's failure drops it (codegen's errors are always the candidate's); the first one is kept.
  auto drop = [&result](const absl::Status& error) {
    if (result.failed++ == 0) result.first_failure = error;
  };

  while (true) {
    const int64_t round = ++result.rounds;
    auto phase_start = std::chrono::steady_clock::now();
    // Expand every kernel of the beam by every action, in the beam's order, then the actions' order.
    std::vector<std::vector<KernelAction>> expanded(beam.size());
    ParallelFor(static_cast<int64_t>(beam.size()), options.threads,
                [&](int64_t i) { expanded[i] = KernelActions(beam[i].kernel, actions, options.limits); });
    std::vector<Candidate> candidates;
    for (std::vector<KernelAction>& list : expanded) {
      for (KernelAction& a : list) candidates.push_back(Candidate{std::move(a.kernel)});
    }
    result.candidates += static_cast<int64_t>(candidates.size());

    // Render every candidate (the pool).
    std::atomic<int64_t> rendered{0};
    const int64_t n = static_cast<int64_t>(candidates.size());
    ParallelFor(n, options.threads, [&](int64_t i) {
      Candidate& c = candidates[i];
      absl::StatusOr<UOpPtr> optimized = c.kernel.GetOptimizedAst(nullptr, "test");
      c.program = optimized.ok() ? CompileOptimizedAst(*optimized, c.kernel.renderer()) : optimized.status();
      progress.Report(round, "render", ++rendered, n, beam[0].seconds);
    });

    result.render_seconds += SecondsSince(phase_start);

    // Choose what to compile, in order: drop failures, too many uops, programs seen before (this round or an
    // earlier one) and kernels with 1000x the operations of the leanest.
    double least_ops = kInf;
    std::vector<int64_t> selected;
    for (int64_t i = 0; i < n; ++i) {
      Candidate& c = candidates[i];
      if (!c.program.ok()) {
        drop(c.program.status());
        continue;
      }
      if (options.uops_max > 0 && static_cast<int64_t>(c.program->uops.size()) >= options.uops_max) continue;
      if (seen_sources.contains(c.program->src)) continue;
      double ops = EstimateOps(*c.program);
      least_ops = std::min(least_ops, ops);
      if (least_ops * 1000 < ops) continue;
      seen_sources.insert(c.program->src);
      c.selected = true;
      selected.push_back(i);
    }

    // Make the test programs and compile them (the pool).
    phase_start = std::chrono::steady_clock::now();
    std::atomic<int64_t> compiled{0};
    const int64_t m = static_cast<int64_t>(selected.size());
    ParallelFor(m, options.threads, [&](int64_t j) {
      Candidate& c = candidates[selected[j]];
      if (absl::Status s = MakeTimingProgram(c, options); !s.ok()) {
        c.binary = s;
      } else {
        c.timing_program.applied_opts = c.kernel.applied_opts();
        c.binary = evaluator.Compile(c.timing_program);
      }
      progress.Report(round, "compile", ++compiled, m, beam[0].seconds);
    });
    result.compiled += m;
    result.compile_seconds += SecondsSince(phase_start);
    phase_start = std::chrono::steady_clock::now();

    // Time them one at a time, in order.
    std::vector<TimingJob> jobs;
    std::vector<int64_t> job_candidate;
    for (int64_t i : selected) {
      Candidate& c = candidates[i];
      if (EndsBeamSearch(c.binary.status())) return c.binary.status();
      if (!c.binary.ok()) {
        drop(c.binary.status());
        continue;
      }
      jobs.push_back({&c.timing_program, &*c.binary, TimingVarValues(c.kernel, c.timing_program.vars)});
      job_candidate.push_back(i);
    }
    double best = beam[0].seconds;
    if (!jobs.empty()) {
      evaluator.StartTiming(jobs);
      for (size_t j = 0; j < jobs.size(); ++j) {
        Candidate& c = candidates[job_candidate[j]];
        // Stop timing a candidate once it is 3x slower than the best known (in test-size units).
        double early_stop = best < kInf ? best * 3 / c.factor : kInf;
        absl::StatusOr<std::vector<double>> times = evaluator.Time(j, options.timing_runs, early_stop);
        if (EndsBeamSearch(times.status())) {
          evaluator.FinishTiming();
          return times.status();
        }
        if (!times.ok() || times->empty()) {
          drop(times.ok() ? absl::InternalError("the evaluator returned no run times") : times.status());
        } else {
          c.seconds = *std::min_element(times->begin(), times->end()) * c.factor;
          c.timed = true;
          ++result.timed;
          best = std::min(best, c.seconds);
        }
        progress.Report(round, "time", static_cast<int64_t>(j) + 1, static_cast<int64_t>(jobs.size()), best);
      }
      evaluator.FinishTiming();
    }
    result.timing_seconds += SecondsSince(phase_start);

    // Keep the fastest; stop when the round did not improve on the beam's best.
    std::vector<int64_t> timed;
    for (int64_t i = 0; i < n; ++i) {
      if (candidates[i].timed) timed.push_back(i);
    }
    std::stable_sort(timed.begin(), timed.end(),
                     [&](int64_t a, int64_t b) { return candidates[a].seconds < candidates[b].seconds; });
    auto keep = [&](size_t count) {
      std::vector<BeamEntry> next;
      for (size_t i = 0; i < count && i < timed.size(); ++i) {
        next.push_back({std::move(candidates[timed[i]].kernel), candidates[timed[i]].seconds});
      }
      beam = std::move(next);
    };
    const bool exiting = timed.empty() || candidates[timed[0]].seconds < options.min_progress_seconds ||
                         beam[0].seconds - candidates[timed[0]].seconds < options.min_progress_seconds;
    if (!exiting) {
      keep(static_cast<size_t>(options.beam_width));
    } else if (!timed.empty() && candidates[timed[0]].seconds < beam[0].seconds) {
      keep(1);
    }
    progress.Report(round, "done", n, n, beam[0].seconds, exiting);
    if (exiting) break;
  }
  result.opts = beam[0].kernel.applied_opts();
  result.seconds = beam[0].seconds;
  return result;
}

}  // namespace uopc
