// The compiled pattern-matcher engine against the interpreted one (the reference) on every rule set the
// corpora exercise: sym, symbolic, symbolic_flat and symbolic_simple on tinygrad's random expression DAGs,
// and every codegen pass (clang with hand-coded opts and without) on the 93 corpus kernels. Each run records
// every rule application (rule, op and dtype before and after) and its outputs; both engines must make the
// same applications in the same order and produce the same graphs, programs and source. An unrecorded run
// comes first and its outputs stay alive through both recorded ones: which intermediates the engine rewrites
// again depends on which nodes are alive elsewhere (a dropped node that is still held keeps its memo), so
// both recorded runs must start from the same live nodes, and the first one's outputs, interned, are the
// second's.
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/rewrite_graph_corpus.h"
#include "rewrite/symbolic.h"
#include "uop/uop.h"

namespace uopc {
namespace {

// One rule application, as far as it can be compared between runs (nodes freed in between may be rebuilt at
// other addresses).
struct Application {
  int rule_id;
  Ops before_op, after_op;
  DType before_dtype, after_dtype;
  friend bool operator==(const Application& a, const Application& b) {
    return std::tie(a.rule_id, a.before_op, a.after_op) == std::tie(b.rule_id, b.before_op, b.after_op) &&
           a.before_dtype == b.before_dtype && a.after_dtype == b.after_dtype;
  }
};

// Records the applications made while it lives, under one engine.
class Recorder {
 public:
  explicit Recorder(MatcherEngine engine) : saved_(GetMatcherEngine()) {
    SetMatcherEngine(engine);
    internal::SetFireObserver(&Recorder::Observe, this);
  }
  ~Recorder() {
    internal::SetFireObserver(nullptr, nullptr);
    SetMatcherEngine(saved_);
  }
  const std::vector<Application>& applications() const { return applications_; }

 private:
  static void Observe(void* self, const Rule& rule, const UOp* before, const UOp* after) {
    static_cast<Recorder*>(self)->applications_.push_back(
        Application{rule.id(), before->op(), after->op(), before->dtype(), after->dtype()});
  }
  MatcherEngine saved_;
  std::vector<Application> applications_;
};

// Where two application lists first differ, or "" when they are equal.
std::string FirstDifference(const std::vector<Application>& compiled,
                            const std::vector<Application>& reference) {
  for (size_t i = 0; i < compiled.size() && i < reference.size(); ++i) {
    if (!(compiled[i] == reference[i])) {
      return absl::StrCat("application ", i, ": compiled fired rule ", compiled[i].rule_id, " on ",
                          OpName(compiled[i].before_op), ", the reference rule ", reference[i].rule_id,
                          " on ", OpName(reference[i].before_op));
    }
  }
  if (compiled.size() != reference.size()) {
    return absl::StrCat(compiled.size(), " applications compiled, ", reference.size(), " by the reference");
  }
  return "";
}

TEST(MatcherEnginesTest, SymbolicRuleSetsOnTheRewriteGraphCorpus) {
  absl::StatusOr<RewriteGraphCorpus> corpus =
      LoadRewriteGraphCorpus("testdata/corpus/rewrite_graph_10000.jsonl");
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  const std::vector<std::pair<std::string, const PatternMatcher*>> rule_sets = {
      {"sym", &Sym()},
      {"symbolic", &Symbolic()},
      {"symbolic_flat", &SymbolicFlat()},
      {"symbolic_simple", &SymbolicSimple()},
  };
  for (const auto& [name, pm] : rule_sets) {
    for (bool bottom_up : {false, true}) {
      RewriteOptions options;
      options.bottom_up = bottom_up;
      const UOpPtr warm_out = GraphRewrite(corpus->sink, *pm, options);
      UOpPtr compiled_out, reference_out;
      std::vector<Application> compiled, reference;
      {
        Recorder r(MatcherEngine::kCompiled);
        compiled_out = GraphRewrite(corpus->sink, *pm, options);
        compiled = r.applications();
      }
      {
        Recorder r(MatcherEngine::kInterpreted);
        reference_out = GraphRewrite(corpus->sink, *pm, options);
        reference = r.applications();
      }
      EXPECT_EQ(compiled_out, reference_out) << name;
      EXPECT_EQ(FirstDifference(compiled, reference), "") << name << (bottom_up ? " bottom-up" : "");
      EXPECT_GT(reference.size(), 1000u) << name;
    }
  }
}

// What one kernel compiles to, as far as the engines must agree.
struct Compiled {
  std::string status;
  std::string name, src;
  std::vector<UOpPtr> uops;
  CodegenStages stages;
  std::vector<Application> applications;
};

Compiled CompileWith(MatcherEngine engine, const UOpPtr& ast, bool optimize) {
  ClangRenderer clang;
  KernelNameCounter names;
  CompileOptions options;
  options.optimize = optimize;
  Compiled out;
  Recorder r(engine);
  absl::StatusOr<ProgramSpec> p = CompileKernel(ast, clang, options, &names, &out.stages);
  out.applications = r.applications();
  if (!p.ok()) {
    out.status = p.status().ToString();
    return out;
  }
  out.name = p->name;
  out.src = p->src;
  out.uops = p->uops;
  return out;
}

TEST(MatcherEnginesTest, CodegenOfEveryCorpusKernel) {
  int kernels = 0;
  size_t applications = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    const UOpPtr ast = ParseCorpusGraph(k.ast);
    for (bool optimize : {true, false}) {
      // Once first, unrecorded: the process's caches (memoized index expressions, kernel opts) then hold what
      // this kernel needs for both recorded runs alike, and its stages keep the same nodes alive for both.
      const Compiled warm = CompileWith(MatcherEngine::kInterpreted, ast, optimize);
      const Compiled c = CompileWith(MatcherEngine::kCompiled, ast, optimize);
      const Compiled ref = CompileWith(MatcherEngine::kInterpreted, ast, optimize);
      const std::string what = absl::StrCat(k.id, optimize ? " (opts)" : " (no opts)");
      EXPECT_EQ(c.status, ref.status) << what;
      EXPECT_EQ(c.name, ref.name) << what;
      EXPECT_EQ(c.src, ref.src) << what;
      EXPECT_EQ(c.uops, ref.uops) << what;
      ASSERT_EQ(c.stages.size(), ref.stages.size()) << what;
      for (size_t i = 0; i < c.stages.size(); ++i) {
        EXPECT_EQ(c.stages[i].first, ref.stages[i].first) << what;
        EXPECT_EQ(c.stages[i].second, ref.stages[i].second) << what << " after " << ref.stages[i].first;
      }
      EXPECT_EQ(FirstDifference(c.applications, ref.applications), "") << what;
      applications += ref.applications.size();
    }
    ++kernels;
  }
  EXPECT_EQ(kernels, 93);
  EXPECT_GT(applications, 9000u);  // a floor that shows the engines did the work (9,958)
}

}  // namespace
}  // namespace uopc
