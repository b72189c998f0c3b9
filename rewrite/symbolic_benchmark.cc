// graph_rewrite with the symbolic rules on the corpus graphs tinygrad was timed on (input nodes per second), and
// Simplify() of small index expressions. Run: ./bazelw run -c opt //rewrite:symbolic_benchmark
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/rewrite_graph_corpus.h"
#include "rewrite/symbolic.h"
#include "testdata/corpus_path.h"
#include "uop/check.h"

namespace uopc {
namespace {

void RewriteCorpus(benchmark::State& state, const char* file, const PatternMatcher& (*rules)()) {
  absl::StatusOr<RewriteGraphCorpus> corpus = LoadRewriteGraphCorpus(CorpusPath(file));
  UOPC_CHECK(corpus.ok(), "cannot load the corpus");
  size_t in_nodes = CountNodes(corpus->sink.get());
  size_t out_nodes = 0;
  for (auto _ : state) {
    UOpPtr out = GraphRewrite(corpus->sink, rules());
    state.PauseTiming();
    out_nodes = CountNodes(out.get());
    out = nullptr;  // freeing the result is not part of the rewrite
    state.ResumeTiming();
  }
  state.counters["in_nodes"] = in_nodes;
  state.counters["out_nodes"] = out_nodes;
  state.counters["tinygrad_out_nodes"] = corpus->out_nodes;
  state.counters["nodes_per_s"] = benchmark::Counter(static_cast<double>(in_nodes) * state.iterations(),
                                                     benchmark::Counter::kIsRate);
}

void BM_Sym10k(benchmark::State& state) { RewriteCorpus(state, "rewrite_graph_10000.jsonl", Sym); }
void BM_Sym100k(benchmark::State& state) { RewriteCorpus(state, "rewrite_graph_100000.jsonl", Sym); }
void BM_Symbolic100k(benchmark::State& state) { RewriteCorpus(state, "rewrite_graph_100000.jsonl", Symbolic); }
BENCHMARK(BM_Sym10k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Sym100k)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Symbolic100k)->Unit(benchmark::kMillisecond);

// The floors under BM_Sym100k: the engine's walk over the input graph with no rules (memo and stack only),
// and `sym` on its own output, where every rule is tried and none fires (the matcher's cost on a real rule
// set).
void BM_WalkNoRules100k(benchmark::State& state) {
  absl::StatusOr<RewriteGraphCorpus> corpus =
      LoadRewriteGraphCorpus(CorpusPath("rewrite_graph_100000.jsonl"));
  UOPC_CHECK(corpus.ok(), "cannot load the corpus");
  static const PatternMatcher* const kNoRules = new PatternMatcher(std::vector<RuleSpec>{});
  for (auto _ : state) benchmark::DoNotOptimize(GraphRewrite(corpus->sink, *kNoRules));
  state.counters["nodes_per_s"] = benchmark::Counter(
      static_cast<double>(CountNodes(corpus->sink.get())) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_WalkNoRules100k)->Unit(benchmark::kMillisecond);

void BM_SymFixpoint100k(benchmark::State& state) {
  absl::StatusOr<RewriteGraphCorpus> corpus =
      LoadRewriteGraphCorpus(CorpusPath("rewrite_graph_100000.jsonl"));
  UOPC_CHECK(corpus.ok(), "cannot load the corpus");
  UOpPtr simplified = GraphRewrite(corpus->sink, Sym());
  for (auto _ : state) benchmark::DoNotOptimize(GraphRewrite(simplified, Sym()));
  state.counters["nodes_per_s"] = benchmark::Counter(
      static_cast<double>(CountNodes(simplified.get())) * state.iterations(), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_SymFixpoint100k)->Unit(benchmark::kMillisecond);

void BM_SimplifyIndex(benchmark::State& state) {
  UOpPtr a = UOp::Variable("a", 0, 255), b = UOp::Variable("b", 0, 3);
  for (auto _ : state) {
    UOpPtr e = ((a * 4 + b) % 1024).idiv(4) + (a * 4 + b).idiv(1024) * 7;
    benchmark::DoNotOptimize(Simplify(e));
  }
}
BENCHMARK(BM_SimplifyIndex);

}  // namespace
}  // namespace uopc
