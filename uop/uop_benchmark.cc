// Benchmarks of the UOp core and the textual IR: interning throughput, toposort, PrintIr and ParseIr.
// Run: ./bazelw run -c opt //uop:uop_benchmark   (figures are recorded in docs/performance.md)
#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "uop/text_ir.h"
#include "uop/uop.h"

namespace uopc {
namespace {

constexpr int kNodes = 1'000'000;

// A random DAG of about `n` nodes that all lie under the returned root, mixing leaves with args (CONST,
// DEFINE_VAR), binary ALU ops, comparisons and WHERE, the way index expressions look.
UOpPtr RandomGraph(int n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<UOpPtr> nodes;
  nodes.reserve(n);
  for (int v = 0; v < 8; ++v) nodes.push_back(UOp::Variable(absl::StrCat("v", v), 0, 100 + v));
  UOpPtr prev = nodes.back();
  while (static_cast<int>(nodes.size()) < n) {
    UOpPtr other = nodes[rng() % nodes.size()];
    UOpPtr node;
    switch (rng() % 8) {
      case 0:
        node = UOp::New(Ops::CONST, dtypes::kInt32, {}, static_cast<int64_t>(rng() % 1'000'000'000));
        nodes.push_back(node);
        node = UOp::New(Ops::ADD, dtypes::kInt32, {prev, node});
        break;
      case 1:
        node = UOp::New(Ops::MUL, dtypes::kInt32, {prev, other});
        break;
      case 2: {
        UOpPtr cmp = UOp::New(Ops::CMPLT, dtypes::kBool, {prev, other});
        nodes.push_back(cmp);
        node = UOp::New(Ops::WHERE, dtypes::kInt32, {cmp, prev, other});
        break;
      }
      case 3:
        node = UOp::New(Ops::MAX, dtypes::kInt32, {other, prev});
        break;
      default:
        node = UOp::New(Ops::ADD, dtypes::kInt32, {prev, other});
        break;
    }
    nodes.push_back(node);
    prev = node;
  }
  return prev;
}

// Creates kNodes nodes per iteration: half are new (a chain of ADDs over 64 constants), half re-create nodes
// of the first half in random order, so they are found in the intern table.
void BM_Intern(benchmark::State& state) {
  std::vector<UOpPtr> leaves;
  for (int i = 0; i < 64; ++i) leaves.push_back(UOp::Const(dtypes::kInt32, i));
  std::mt19937_64 rng(1);
  std::vector<int> order(kNodes / 2);
  for (int i = 0; i < kNodes / 2; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), rng);
  for (auto _ : state) {
    std::vector<UOpPtr> made;
    made.reserve(kNodes / 2 + 1);
    made.push_back(UOp::Variable("x", 0, 10));
    for (int i = 0; i < kNodes / 2; ++i) {
      made.push_back(UOp::New(Ops::ADD, dtypes::kInt32, {made.back(), leaves[i % 64]}));
    }
    for (int i : order) {
      UOpPtr again = UOp::New(Ops::ADD, dtypes::kInt32, {made[i], leaves[i % 64]});
      benchmark::DoNotOptimize(again.get());
    }
    state.PauseTiming();
    made.clear();  // freeing is not what this measures
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
BENCHMARK(BM_Intern)->Unit(benchmark::kMillisecond);

void BM_Toposort(benchmark::State& state) {
  UOpPtr root = RandomGraph(kNodes, 2);
  size_t count = 0;
  for (auto _ : state) {
    std::vector<const UOp*> order = root->Toposort();
    count = order.size();
    benchmark::DoNotOptimize(order.data());
  }
  state.counters["nodes"] = static_cast<double>(count);
  state.SetItemsProcessed(state.iterations() * count);
}
BENCHMARK(BM_Toposort)->Unit(benchmark::kMillisecond);

void BM_PrintIr(benchmark::State& state) {
  UOpPtr root = RandomGraph(kNodes, 3);
  size_t bytes = 0;
  for (auto _ : state) {
    std::string text = PrintIr(root);
    bytes = text.size();
    benchmark::DoNotOptimize(text.data());
  }
  state.counters["MB"] = static_cast<double>(bytes) / 1e6;
  state.SetBytesProcessed(state.iterations() * bytes);
}
BENCHMARK(BM_PrintIr)->Unit(benchmark::kMillisecond);

// Parsing while the graph is alive: every node is found in the intern table.
void BM_ParseIrExisting(benchmark::State& state) {
  UOpPtr root = RandomGraph(kNodes, 3);
  std::string text = PrintIr(root);
  for (auto _ : state) {
    absl::StatusOr<UOpPtr> parsed = ParseIrSingle(text);
    if (!parsed.ok() || parsed->get() != root.get()) state.SkipWithError("parse failed");
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}
BENCHMARK(BM_ParseIrExisting)->Unit(benchmark::kMillisecond);

// Parsing a graph nobody holds: every node is created (freeing it afterwards is not timed).
void BM_ParseIrNew(benchmark::State& state) {
  std::string text = PrintIr(RandomGraph(kNodes, 3));
  for (auto _ : state) {
    absl::StatusOr<UOpPtr> parsed = ParseIrSingle(text);
    if (!parsed.ok()) state.SkipWithError("parse failed");
    state.PauseTiming();
    parsed = UOpPtr();
    state.ResumeTiming();
  }
  state.SetBytesProcessed(state.iterations() * text.size());
}
BENCHMARK(BM_ParseIrNew)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace uopc
