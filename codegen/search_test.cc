#include "codegen/search.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <functional>
#include <limits>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "codegen/testing/kernel_corpus.h"
#include "codegen/testing/test_renderers.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "shapetracker/shapetracker.h"

namespace uopc {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

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

// Ranks candidates by a function of their program, taking no time; records what the search asked for.
class CostEvaluator : public CandidateEvaluator {
 public:
  explicit CostEvaluator(std::function<double(const ProgramSpec&)> cost) : cost_(std::move(cost)) {}

  // Compile failures, by program.
  std::function<bool(const ProgramSpec&)> fail_compile = [](const ProgramSpec&) { return false; };
  // Timing failures (a crash, a time limit), by program.
  std::function<bool(const ProgramSpec&)> fail_time = [](const ProgramSpec&) { return false; };

  // The errors of those failures.
  absl::Status compile_error = absl::InvalidArgumentError("refused by the test");
  absl::Status time_error = absl::DeadlineExceededError("refused by the test");

  absl::StatusOr<std::string> Compile(const ProgramSpec& program) override {
    if (fail_compile(program)) return compile_error;
    return program.src;
  }
  absl::StatusOr<std::vector<double>> Time(size_t job, int64_t runs, double early_stop) override {
    const ProgramSpec& p = *jobs()[job].program;
    EXPECT_EQ(*jobs()[job].binary, p.src);
    early_stops.push_back(early_stop);
    if (fail_time(p)) return time_error;
    double t = cost_(p);
    timed_sources.push_back(p.src);
    return std::vector<double>(static_cast<size_t>(runs), t);
  }
  void FinishTiming() override {
    ++finished;
    CandidateEvaluator::FinishTiming();
  }

  std::vector<double> early_stops;
  std::vector<std::string> timed_sources;
  int finished = 0;  // FinishTiming calls

 private:
  std::function<double(const ProgramSpec&)> cost_;
};

bool Has(const std::vector<Opt>& opts, OptOps op) {
  for (const Opt& o : opts) {
    if (o.op == op) return true;
  }
  return false;
}

// A cost made of the opts: the first UPCAST 4 on axis 1 halves it, the first UNROLL 4 on the reduce takes off
// a fifth, anything else (a repeat too) costs 10% more.
double OptsCost(const ProgramSpec& p) {
  double cost = 100;
  bool upcast = false, unroll = false;
  for (const Opt& o : p.applied_opts) {
    if (!upcast && o == Opt(OptOps::kUpcast, 1, int64_t{4})) {
      cost *= 0.5;
      upcast = true;
    } else if (!unroll && o == Opt(OptOps::kUnroll, 0, int64_t{4})) {
      cost *= 0.8;
      unroll = true;
    } else {
      cost *= 1.1;
    }
  }
  return cost;
}

// A seeded cost in [1, 2) from the program's source (FNV-1a of seed and source).
double SeededCost(uint64_t seed, const std::string& src) {
  uint64_t h = 1469598103934665603ull ^ seed;
  for (unsigned char c : src) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return 1.0 + static_cast<double>(h >> 11) / static_cast<double>(uint64_t{1} << 53);
}

// ---------------------------------------------------------------- the action space

TEST(BeamActionsTest, TinygradsActionList) {
  std::vector<Opt> a = BeamActions();
  ASSERT_EQ(a.size(), 158u);  // len(actions) in tinygrad v0.10.3 without NOLOCALS
  EXPECT_EQ(a[0], Opt(OptOps::kUpcast, 0, int64_t{0}));
  EXPECT_EQ(a[6], Opt(OptOps::kUpcast, 0, int64_t{2}));
  EXPECT_EQ(a[36], Opt(OptOps::kUnroll, 0, int64_t{0}));
  EXPECT_EQ(a[137], Opt(OptOps::kLocal, 6, int64_t{2}));
  EXPECT_EQ(a[138], Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}));
  EXPECT_EQ(a[139], Opt(OptOps::kTC, 0, Opt::TcArg{-1, 2, 1}));
  EXPECT_EQ(a[147], Opt(OptOps::kTC, 8, Opt::TcArg{-1, 2, 1}));
  EXPECT_EQ(a[157], Opt(OptOps::kSwap, 3, int64_t{4}));
  EXPECT_EQ(BeamActions({.padto = false}).size(), 151u);
  std::vector<Opt> with_nolocals = BeamActions({.nolocals = true});
  ASSERT_EQ(with_nolocals.size(), 159u);
  EXPECT_EQ(with_nolocals.back().op, OptOps::kNoLocals);
}

// tinygrad's get_kernel_actions on corpus kernels for three targets, with and without a first opt
// (testdata/beam_actions.jsonl, from harvest_beam_actions.py).
TEST(KernelActionsTest, SameAsTinygradOnCorpusKernels) {
  std::ifstream in("codegen/testdata/beam_actions.jsonl");
  ASSERT_TRUE(in) << "codegen/testdata/beam_actions.jsonl is missing";
  ClangRenderer clang;
  DescriptionOnlyRenderer opencl = OpenClTarget(), cuda = CudaSm80Target();
  const std::vector<Opt> actions = BeamActions();
  std::string line;
  int checked = 0, with_tc = 0;
  while (std::getline(in, line)) {
    nlohmann::json row = nlohmann::json::parse(line);
    const std::string target = row["target"];
    const Renderer& r = target == "clang"    ? static_cast<const Renderer&>(clang)
                        : target == "opencl" ? static_cast<const Renderer&>(opencl)
                                             : static_cast<const Renderer&>(cuda);
    absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst(row["id"]), r);
    ASSERT_TRUE(k.ok()) << k.status();
    for (const auto& o : row["prefix"]) {
      absl::StatusOr<Opt> opt = ParseOpt(o.get<std::string>());
      ASSERT_TRUE(opt.ok()) << opt.status();
      ASSERT_TRUE(k->ApplyOpt(*opt).ok());
    }
    std::vector<std::string> expected, got;
    for (const auto& a : row["actions"]) {
      std::vector<std::string> opts = a[1].get<std::vector<std::string>>();
      expected.push_back(absl::StrCat(a[0].get<int64_t>(), ": ", absl::StrJoin(opts, ", ")));
    }
    for (const KernelAction& a : KernelActions(*k, actions)) {
      std::vector<std::string> opts;
      for (const Opt& o : a.kernel.applied_opts()) opts.push_back(o.ToString());
      got.push_back(absl::StrCat(a.action_index, ": ", absl::StrJoin(opts, ", ")));
      if (Has(a.kernel.applied_opts(), OptOps::kTC)) ++with_tc;
    }
    EXPECT_EQ(got, expected) << row["id"] << " on " << target << " after " << row["prefix"];
    ++checked;
  }
  EXPECT_EQ(checked, 78);  // 13 kernels, 3 targets, 2 rows each
  EXPECT_GT(with_tc, 0);   // the CUDA rows include tensor core actions
}

// ---------------------------------------------------------------- the search, ranked by cost functions

TEST(BeamSearchTest, FindsTheCheapestOptsAndStopsWhenARoundDoesNotImprove) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok()) << k.status();
  CostEvaluator evaluator(OptsCost);
  BeamSearchOptions options;
  options.beam_width = 2;
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, options);
  ASSERT_TRUE(r.ok()) << r.status();
  // Round 1: UPCAST 1 4 (50), then UNROLL 0 4 (80). Round 2: both orders give one program (40), timed once.
  // Round 3: everything costs 10% more, so the search stops.
  EXPECT_EQ(Compact(r->opts), "UPCAST:1:4 UNROLL:0:4");
  EXPECT_DOUBLE_EQ(r->seconds, 40);
  EXPECT_EQ(r->rounds, 3);
  absl::flat_hash_set<std::string> unique(evaluator.timed_sources.begin(), evaluator.timed_sources.end());
  EXPECT_EQ(unique.size(), evaluator.timed_sources.size()) << "a program was timed twice";
  EXPECT_EQ(r->failed, 0);
}

TEST(BeamSearchTest, BeamWidthOneIsGreedy) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  CostEvaluator evaluator(OptsCost);
  BeamSearchOptions options;
  options.beam_width = 1;
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, options);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Compact(r->opts), "UPCAST:1:4 UNROLL:0:4");
}

// The early cut: nothing in the first round until something is timed, then 3x the best known.
TEST(BeamSearchTest, EarlyStopIsThreeTimesTheBestSoFar) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  std::vector<double> costs;
  CostEvaluator evaluator([&](const ProgramSpec& p) {
    costs.push_back(OptsCost(p));
    return costs.back();
  });
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, BeamSearchOptions{});
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(evaluator.early_stops.size(), costs.size());
  ASSERT_FALSE(costs.empty());
  EXPECT_EQ(evaluator.early_stops[0], kInf);
  double best = kInf;
  for (size_t i = 0; i < costs.size(); ++i) {
    if (i > 0) {
      EXPECT_DOUBLE_EQ(evaluator.early_stops[i], best * 3) << "call " << i;
    }
    best = std::min(best, costs[i]);
  }
}

// Candidates that fail to compile or to run are dropped, and the search goes on without them.
TEST(BeamSearchTest, FailingCandidatesAreDropped) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  CostEvaluator evaluator(OptsCost);
  evaluator.fail_compile = [](const ProgramSpec& p) { return Has(p.applied_opts, OptOps::kUnroll); };
  evaluator.fail_time = [](const ProgramSpec& p) {
    return !p.applied_opts.empty() && p.applied_opts[0] == Opt(OptOps::kUpcast, 1, int64_t{4});
  };
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, BeamSearchOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->failed, 0);
  EXPECT_FALSE(Has(r->opts, OptOps::kUnroll)) << Compact(r->opts);
  ASSERT_FALSE(r->opts.empty());
  EXPECT_NE(r->opts[0], Opt(OptOps::kUpcast, 1, int64_t{4}));
}

// When every candidate fails, the kernel comes back as given.
TEST(BeamSearchTest, NothingTimedKeepsTheKernel) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("sum_all/0"), clang);
  ASSERT_TRUE(k.ok());
  CostEvaluator evaluator(OptsCost);
  evaluator.fail_compile = [](const ProgramSpec&) { return true; };
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, BeamSearchOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->opts.empty());
  EXPECT_EQ(r->rounds, 1);
  EXPECT_EQ(r->seconds, kInf);
}

// A plain serial beam search written from tinygrad's description, for the seeded comparisons below. A cost
// of infinity is a candidate that fails.
std::vector<Opt> ReferenceBeam(const Kernel& start, int64_t width,
                               const std::function<double(const std::string&)>& cost) {
  struct Entry {
    Kernel k;
    double t;
  };
  std::vector<Entry> beam = {{start, kInf}};
  absl::flat_hash_set<std::string> seen;
  const std::vector<Opt> actions = BeamActions();
  while (true) {
    std::vector<Entry> timed;
    for (const Entry& b : beam) {
      for (const KernelAction& a : KernelActions(b.k, actions)) {
        absl::StatusOr<UOpPtr> optimized = a.kernel.GetOptimizedAst(nullptr, "test");
        if (!optimized.ok()) continue;
        absl::StatusOr<ProgramSpec> p = CompileOptimizedAst(*optimized, a.kernel.renderer());
        if (!p.ok() || p->uops.size() >= 3000 || !seen.insert(p->src).second) continue;
        const double t = cost(p->src);
        if (std::isinf(t)) continue;  // a candidate that fails
        timed.push_back({a.kernel, t});
      }
    }
    std::stable_sort(timed.begin(), timed.end(), [](const Entry& a, const Entry& b) { return a.t < b.t; });
    bool exiting = timed.empty() || beam[0].t - timed[0].t < 0.01e-6;
    if (!exiting) {
      timed.erase(timed.begin() + std::min<size_t>(timed.size(), width), timed.end());
      beam = timed;
    } else {
      if (!timed.empty() && timed[0].t < beam[0].t) beam = {timed[0]};
      return beam[0].k.applied_opts();
    }
  }
}

// With a seeded, time-free cost, the parallel search (any number of threads) picks what a plain serial beam
// search picks.
TEST(BeamSearchTest, SeededCostsMatchASerialReference) {
  ClangRenderer clang;
  int compared = 0;
  for (const char* id : {"matmul_64/0", "bigger_sum/0"}) {
    absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst(id), clang);
    ASSERT_TRUE(k.ok());
    for (uint64_t seed : {1u, 2u}) {
      for (int64_t width : {1, 3}) {
        // The test program of a candidate is its program unless it is shrunk; keep them equal here.
        BeamSearchOptions options;
        options.beam_width = width;
        options.allow_test_size = false;
        std::vector<Opt> expected =
            ReferenceBeam(*k, width, [&](const std::string& src) { return SeededCost(seed, src); });
        for (int threads : {1, 3}) {
          options.threads = threads;
          CostEvaluator evaluator([&](const ProgramSpec& p) { return SeededCost(seed, p.src); });
          absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, options);
          ASSERT_TRUE(r.ok()) << r.status();
          EXPECT_EQ(Compact(r->opts), Compact(expected))
              << id << " seed " << seed << " width " << width << " threads " << threads;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 16);
}

// Candidates that fail to compile or to run, the best ones among them, leave the best of the rest: what a
// serial search that never saw the failing ones picks.
TEST(BeamSearchTest, PartlyFailingCandidatesLeaveTheBestOfTheRest) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  constexpr uint64_t kSeed = 3;
  // The cheaper half of the candidates fails: those with an odd-sized source to compile, the others to run.
  auto fails = [](const ProgramSpec& p) { return SeededCost(kSeed, p.src) < 1.5; };
  for (int64_t width : {1, 2}) {
    BeamSearchOptions options;
    options.beam_width = width;
    options.allow_test_size = false;
    CostEvaluator evaluator([](const ProgramSpec& p) { return SeededCost(kSeed, p.src); });
    evaluator.fail_compile = [&](const ProgramSpec& p) { return fails(p) && p.src.size() % 2 == 1; };
    evaluator.fail_time = [&](const ProgramSpec& p) { return fails(p) && p.src.size() % 2 == 0; };
    absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, options);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GT(r->failed, 0);
    EXPECT_FALSE(r->first_failure.ok());
    EXPECT_EQ(r->first_failure.message(), "refused by the test");
    ASSERT_GT(r->timed, 0);
    EXPECT_FALSE(r->opts.empty());
    EXPECT_GE(r->seconds, 1.5);
    std::vector<Opt> expected = ReferenceBeam(*k, width, [](const std::string& src) {
      const double t = SeededCost(kSeed, src);
      return t < 1.5 ? kInf : t;
    });
    EXPECT_EQ(Compact(r->opts), Compact(expected)) << "width " << width;
  }
}

// An evaluator's error marked EndBeamSearch (the device is lost) is not the candidate's: the search stops
// and returns it, from the compile phase or from timing.
TEST(BeamSearchTest, AnErrorMarkedEndBeamSearchEndsTheSearch) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  const absl::Status lost = EndBeamSearch(absl::UnavailableError("the device is lost"));
  {
    CostEvaluator evaluator(OptsCost);
    evaluator.time_error = lost;
    evaluator.fail_time = [&](const ProgramSpec&) { return evaluator.timed_sources.size() == 2; };
    absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, BeamSearchOptions{});
    EXPECT_EQ(r.status(), lost);
    EXPECT_EQ(evaluator.timed_sources.size(), 2u);  // nothing timed after it
    EXPECT_EQ(evaluator.finished, 1);               // the round's timing was finished
  }
  {
    CostEvaluator evaluator(OptsCost);
    evaluator.compile_error = lost;
    evaluator.fail_compile = [](const ProgramSpec& p) { return Has(p.applied_opts, OptOps::kUnroll); };
    absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, BeamSearchOptions{});
    EXPECT_EQ(r.status(), lost);
    EXPECT_TRUE(evaluator.timed_sources.empty());
  }
  // Unmarked, the same errors drop their candidates.
  CostEvaluator evaluator(OptsCost);
  evaluator.time_error = absl::UnavailableError("the device is lost");
  evaluator.fail_time = [&](const ProgramSpec&) { return evaluator.timed_sources.size() == 2; };
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, BeamSearchOptions{});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_GT(r->failed, 0);
}

TEST(EndBeamSearchTest, MarksAnErrorAndKeepsItsCodeAndMessage) {
  absl::Status lost = EndBeamSearch(absl::UnavailableError("lost"));
  EXPECT_TRUE(EndsBeamSearch(lost));
  EXPECT_EQ(lost.code(), absl::StatusCode::kUnavailable);
  EXPECT_EQ(lost.message(), "lost");
  EXPECT_FALSE(EndsBeamSearch(absl::UnavailableError("lost")));
  EXPECT_FALSE(EndsBeamSearch(EndBeamSearch(absl::OkStatus())));
}

TEST(BeamSearchTest, ReportsProgress) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  CostEvaluator evaluator(OptsCost);
  BeamSearchOptions options;
  std::vector<BeamProgress> seen;
  options.progress = [&](const BeamProgress& p) { seen.push_back(p); };
  absl::StatusOr<BeamResult> r = BeamSearch(*k, evaluator, options);
  ASSERT_TRUE(r.ok());
  ASSERT_FALSE(seen.empty());
  EXPECT_EQ(seen.front().kernel_name, "r_64_64_64");
  EXPECT_TRUE(seen.back().finished);
  EXPECT_EQ(seen.back().round, r->rounds);
  EXPECT_DOUBLE_EQ(seen.back().best_seconds, 40);
  int timing = 0;
  for (const BeamProgress& p : seen) {
    EXPECT_LE(p.done, p.total);
    if (p.phase == "time") ++timing;
  }
  EXPECT_EQ(timing, r->timed);
}

// ---------------------------------------------------------------- test sizes, buffers

TEST(ShrinkForTimingTest, CutsTheLeadingGlobalAxesAndSaysByHowMuch) {
  ClangRenderer clang;
  absl::StatusOr<Kernel> k = Kernel::Create(CorpusAst("matmul_64/0"), clang);
  ASSERT_TRUE(k.ok());
  ASSERT_TRUE(k->ApplyOpt(Opt(OptOps::kUpcast, 1, int64_t{4})).ok());  // 64 16 64 4
  absl::StatusOr<UOpPtr> optimized = k->GetOptimizedAst(nullptr, "test");
  ASSERT_TRUE(optimized.ok());
  // 262144 iterations to at most 2048: the first axis (64) to 0.5 -> 1, the work 4096, then the second
  // axis (16) to 8.
  auto [shrunk, factor] = ShrinkForTiming(*optimized, k->global_dims(), 2048);
  EXPECT_DOUBLE_EQ(factor, 128);
  int views = 0;
  for (const UOp* u : shrunk->Toposort()) {
    if (const ShapeTracker* st = ShapeTrackerOf(u)) {
      EXPECT_EQ(st->shape()[0], Sint(1));
      EXPECT_EQ(st->shape()[1], Sint(8));
      ++views;
    }
  }
  EXPECT_EQ(views, 3);
  absl::StatusOr<ProgramSpec> full = CompileOptimizedAst(*optimized, clang);
  absl::StatusOr<ProgramSpec> test = CompileOptimizedAst(shrunk, clang);
  ASSERT_TRUE(full.ok() && test.ok()) << test.status();
  EXPECT_DOUBLE_EQ(EstimateOps(*full), EstimateOps(*test) * factor);

  // Small enough already: unchanged.
  auto [same, one] = ShrinkForTiming(*optimized, k->global_dims(), 1 << 20);
  EXPECT_EQ(same, *optimized);
  EXPECT_EQ(one, 1);
}

TEST(TestGlobalSizeTest, HalvesFromTheLastDimAsTinygrad) {
  auto [size, factor] = TestGlobalSize({1024, 1024, 1}, 65536);
  EXPECT_EQ(size, (std::vector<int64_t>{1024, 64, 1}));
  EXPECT_EQ(factor, 16);
  auto [small, one] = TestGlobalSize({16, 16, 16}, 64);  // nothing over 16 left to halve
  EXPECT_EQ(small, (std::vector<int64_t>{16, 16, 16}));
  EXPECT_EQ(one, 1);
}

TEST(TimingBuffersTest, OnePerDefineGlobalSizedByItsViews) {
  absl::StatusOr<std::vector<TimingBuffer>> bufs = TimingBuffers(CorpusAst("matmul_64/0"));
  ASSERT_TRUE(bufs.ok()) << bufs.status();
  ASSERT_EQ(bufs->size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ((*bufs)[i].index, i);
    EXPECT_EQ((*bufs)[i].size, 64 * 64);
    EXPECT_EQ((*bufs)[i].dtype, dtypes::kFloat32);
    EXPECT_EQ((*bufs)[i].written, i == 0);
  }
}

}  // namespace
}  // namespace uopc
