// ShapeTracker speed: movement ops per second (the 65 corpus sequences of tinygrad's test_shapetracker.py,
// and generated sequences), and Simplify() + ToIndexedUops() per second on multi-view trackers.
// Run: ./bazelw run -c opt //shapetracker:shapetracker_benchmark
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "nlohmann/json.hpp"
#include "shapetracker/movement_ops.h"
#include "shapetracker/shapetracker.h"
#include "shapetracker/testing/differential.h"
#include "testdata/corpus_path.h"
#include "uop/check.h"

namespace uopc {
namespace {

struct Sequence {
  ShapeTracker start;
  std::vector<MovementOp> ops;
};

Sequence MakeSequence(const std::vector<int64_t>& start, std::vector<MovementOp> ops) {
  return {ShapeTracker::FromShape(SintVec(start.begin(), start.end())).value(), std::move(ops)};
}

const std::vector<Sequence>& CorpusSequences() {
  static const std::vector<Sequence>* sequences = [] {
    auto* out = new std::vector<Sequence>();
    std::ifstream in(CorpusPath("shapetracker_tests.jsonl"));
    std::string line;
    while (std::getline(in, line)) {
      nlohmann::json c = nlohmann::json::parse(line);
      out->push_back(
          MakeSequence(c["start_shape"].get<std::vector<int64_t>>(), ParseMovementOps(c["ops"]).value()));
    }
    UOPC_CHECK(out->size() == 65, "cannot read testdata/corpus/shapetracker_tests.jsonl");
    return out;
  }();
  return *sequences;
}

// Valid generated sequences (the differential test's generator, no invalid ops, no empty shapes).
const std::vector<Sequence>& GeneratedSequences() {
  static const std::vector<Sequence>* sequences = [] {
    auto* out = new std::vector<Sequence>();
    OpSequenceOptions options;
    options.invalid_percent = 0;
    // No empty shapes: Simplify() of some of them overflows the stack (see differential_test.cc).
    options.allow_empty = false;
    for (uint64_t seed = 0; out->size() < 1000; ++seed) {
      ChoiceSource choices(seed);
      OpSequence seq = RandomOpSequence(choices, options);
      Sequence s = MakeSequence(seq.start_shape, seq.ops);
      if (ApplyMovementOps(s.start, s.ops).ok()) out->push_back(std::move(s));
    }
    return out;
  }();
  return *sequences;
}

void ApplyAll(benchmark::State& state, const std::vector<Sequence>& sequences) {
  int64_t ops = 0;
  for (auto _ : state) {
    for (const Sequence& s : sequences) {
      ShapeTracker st = s.start;
      for (const MovementOp& op : s.ops) st = ApplyMovementOp(st, op).value();
      benchmark::DoNotOptimize(st);
      ops += s.ops.size();
    }
  }
  state.SetItemsProcessed(ops);
  state.counters["sequences"] = sequences.size();
}

void BM_MovementOpsCorpus(benchmark::State& state) { ApplyAll(state, CorpusSequences()); }
BENCHMARK(BM_MovementOpsCorpus);

void BM_MovementOpsGenerated(benchmark::State& state) { ApplyAll(state, GeneratedSequences()); }
BENCHMARK(BM_MovementOpsGenerated);

// Trackers that still have `min_views` or more views before simplification, from generated sequences.
std::vector<ShapeTracker> MultiViewTrackers(size_t min_views) {
  std::vector<ShapeTracker> out;
  for (const Sequence& s : GeneratedSequences()) {
    ShapeTracker st = ApplyMovementOps(s.start, s.ops).value();
    if (st.views().size() >= min_views) out.push_back(st);
  }
  return out;
}

void BM_SimplifyAndToIndexedUops(benchmark::State& state) {
  std::vector<ShapeTracker> trackers = MultiViewTrackers(state.range(0));
  int64_t n = 0;
  for (auto _ : state) {
    for (const ShapeTracker& st : trackers) {
      auto [idx, valid] = st.Simplify().ToIndexedUops();
      benchmark::DoNotOptimize(idx);
      benchmark::DoNotOptimize(valid);
      ++n;
    }
  }
  state.SetItemsProcessed(n);
  state.counters["trackers"] = trackers.size();
}
BENCHMARK(BM_SimplifyAndToIndexedUops)->Arg(2)->Arg(3);

void BM_SimplifyAndToIndexedUopsCorpus(benchmark::State& state) {
  std::vector<ShapeTracker> trackers;
  for (const Sequence& s : CorpusSequences()) trackers.push_back(ApplyMovementOps(s.start, s.ops).value());
  int64_t n = 0;
  for (auto _ : state) {
    for (const ShapeTracker& st : trackers) {
      auto [idx, valid] = st.Simplify().ToIndexedUops();
      benchmark::DoNotOptimize(idx);
      ++n;
    }
  }
  state.SetItemsProcessed(n);
}
BENCHMARK(BM_SimplifyAndToIndexedUopsCorpus);

// The same with ToIndexedUops' memo emptied before every tracker: the symbolic rewrites themselves.
void BM_SimplifyAndToIndexedUopsUncached(benchmark::State& state) {
  std::vector<ShapeTracker> trackers =
      state.range(0) == 0 ? std::vector<ShapeTracker>() : MultiViewTrackers(state.range(0));
  if (state.range(0) == 0) {
    for (const Sequence& s : CorpusSequences()) trackers.push_back(ApplyMovementOps(s.start, s.ops).value());
  }
  int64_t n = 0;
  for (auto _ : state) {
    for (const ShapeTracker& st : trackers) {
      ClearToIndexedUopsCache();
      auto [idx, valid] = st.Simplify().ToIndexedUops();
      benchmark::DoNotOptimize(idx);
      ++n;
    }
  }
  state.SetItemsProcessed(n);
  state.counters["trackers"] = trackers.size();
}
// 0: the 65 corpus trackers; 2, 3: generated trackers with at least that many views.
BENCHMARK(BM_SimplifyAndToIndexedUopsUncached)->Arg(0)->Arg(2)->Arg(3);

}  // namespace
}  // namespace uopc
