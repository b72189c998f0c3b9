// Every candidate of BEAM's first round compiles for every GPU target, or fails with a clean error.
//
// The kernels are the mnist step's (codegen/testdata/mnist_step_kernels.jsonl, written by
// //examples:mnist_step_kernels) and the codegen corpus's; the targets are cuda, ptx, opencl and metal,
// compiled here without a device (renderer/targets.h). Each kernel without opts gets every action of
// tinygrad's list that applies (KernelActions, as BEAM's first round), and each candidate goes through
// CompileKernel with its opts, as realize compiles a search's winner. A clean error is one that says the
// target cannot take the kernel; a rewrite past its step limit, a cycle or an internal error is a uopc bug
// (move_ignore once ran away on the mnist step's random-number kernels with PADTO, and ended `BEAM=2
// examples/mnist --device=CUDA`).
//
// The candidates are compiled one at a time on the test's thread, which gets graph_rewrite's scratch lease:
// the path of realize's final compile, where that runaway happened, and which the search's pool threads
// take only now and then.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "codegen/opt.h"
#include "codegen/search.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/targets.h"
#include "uop/check.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

constexpr const char* kMnistKernels = "codegen/testdata/mnist_step_kernels.jsonl";
constexpr const char* kTargets[] = {"cuda", "ptx", "opencl", "metal"};
// Kernels per test case, so that Bazel's shards split the work evenly.
constexpr int64_t kKernelsPerCase = 16;

const std::vector<CorpusKernel>& MnistKernels() {
  static const auto* const kernels = [] {
    absl::StatusOr<std::vector<CorpusKernel>> k = LoadKernelCorpus(kMnistKernels);
    UOPC_CHECK(k.ok(), "cannot read the mnist step's kernels");
    return new std::vector<CorpusKernel>(*std::move(k));
  }();
  return *kernels;
}

const std::vector<CorpusKernel>& Kernels(absl::string_view set) {
  return set == "mnist" ? MnistKernels() : KernelCorpus();
}

// Errors that say the target cannot take a kernel with these opts. Anything else (kResourceExhausted: a
// rewrite past its step limit; kFailedPrecondition: a rewrite cycle; kInternal) is a uopc bug.
bool IsCleanError(const absl::Status& s) {
  return s.code() == absl::StatusCode::kInvalidArgument || s.code() == absl::StatusCode::kUnimplemented ||
         s.code() == absl::StatusCode::kOutOfRange;
}

struct Count {
  int64_t kernels = 0;
  int64_t candidates = 0;  // actions that apply, as KernelActions gives them (in the test's sample)
  int64_t compiled = 0;
  int64_t refused = 0;  // clean errors
};

// The first-round candidates of kernels [first, last) of `set` for `target`, each compiled.
Count CompileCandidates(absl::string_view target, absl::string_view set, int64_t first, int64_t last) {
  absl::StatusOr<std::unique_ptr<Renderer>> renderer = MakeRendererForTarget(target);
  UOPC_CHECK(renderer.ok(), "no renderer for a known target");
  const std::vector<Opt> actions = BeamActions();
  const std::vector<CorpusKernel>& kernels = Kernels(set);
  Count count;
  for (int64_t i = first; i < last && i < static_cast<int64_t>(kernels.size()); ++i) {
    const CorpusKernel& ck = kernels[i];
    const UOpPtr ast = ParseCorpusGraph(ck.ast);
    absl::StatusOr<Kernel> k = Kernel::Create(ast, **renderer);
    if (!k.ok()) {
      ADD_FAILURE() << ck.id << " on " << target << ": " << k.status();
      continue;
    }
    ++count.kernels;
    int64_t index = 0;
    for (const KernelAction& action : KernelActions(*k, actions)) {
      if (!InTestSample(index++)) continue;
      ++count.candidates;
      CompileOptions options;
      options.opts = action.kernel.applied_opts();
      KernelNameCounter names;
      absl::StatusOr<ProgramSpec> program = CompileKernel(ast, **renderer, options, &names);
      if (program.ok()) {
        ++count.compiled;
      } else if (IsCleanError(program.status())) {
        ++count.refused;
      } else {
        ADD_FAILURE() << ck.id << " on " << target << " with [" << OptListToCompactString(*options.opts)
                      << "]: " << program.status();
      }
    }
  }
  return count;
}

struct Case {
  const char* target;
  const char* set;  // "mnist" or "corpus"
  int64_t first;    // kernels [first, first + kKernelsPerCase)
};

void PrintTo(const Case& c, std::ostream* os) { *os << c.target << " " << c.set << " from " << c.first; }

class BeamCandidatesTest : public testing::TestWithParam<Case> {};

TEST_P(BeamCandidatesTest, CompileOrFailCleanly) {
  const Case& c = GetParam();
  Count count = CompileCandidates(c.target, c.set, c.first, c.first + kKernelsPerCase);
  // Every candidate was compiled or refused, and there were some.
  EXPECT_GT(count.kernels, 0);
  EXPECT_GT(count.candidates, 0);
  EXPECT_EQ(count.compiled + count.refused, count.candidates);
  std::printf("%s %s [%lld, %lld): %lld kernels, %lld candidates, %lld compiled, %lld refused\n", c.target,
              c.set, static_cast<long long>(c.first), static_cast<long long>(c.first + kKernelsPerCase),
              static_cast<long long>(count.kernels), static_cast<long long>(count.candidates),
              static_cast<long long>(count.compiled), static_cast<long long>(count.refused));
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  for (const char* target : kTargets) {
    for (const char* set : {"mnist", "corpus"}) {
      for (int64_t first = 0; first < static_cast<int64_t>(Kernels(set).size()); first += kKernelsPerCase) {
        cases.push_back({target, set, first});
      }
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(All, BeamCandidatesTest, testing::ValuesIn(AllCases()),
                         [](const testing::TestParamInfo<Case>& info) {
                           return absl::StrCat(info.param.target, "_", info.param.set, "_", info.param.first);
                         });

// The cases above cover every kernel, and the candidates they compile are BEAM's whole first round: the
// counts of tinygrad's action space on these kernels (none lost to a change in KernelActions or the files).
TEST(BeamCandidatesCountTest, EveryKernelAndCandidateIsCovered) {
  EXPECT_EQ(MnistKernels().size(), 146u);
  EXPECT_EQ(KernelCorpus().size(), 93u);
  const std::vector<Opt> actions = BeamActions();
  for (const char* target : kTargets) {
    absl::StatusOr<std::unique_ptr<Renderer>> renderer = MakeRendererForTarget(target);
    ASSERT_TRUE(renderer.ok());
    for (const char* set : {"mnist", "corpus"}) {
      int64_t candidates = 0;
      for (const CorpusKernel& ck : Kernels(set)) {
        absl::StatusOr<Kernel> k = Kernel::Create(ParseCorpusGraph(ck.ast), **renderer);
        ASSERT_TRUE(k.ok()) << k.status();
        candidates += static_cast<int64_t>(KernelActions(*k, actions).size());
      }
      const bool opencl_like = std::string(target) == "opencl" || std::string(target) == "metal";
      const int64_t expected = std::string(set) == "mnist" ? 2109 : (opencl_like ? 903 : 907);
      EXPECT_EQ(candidates, expected) << target << " " << set;
    }
  }
}

}  // namespace
}  // namespace uopc
