// Parallel codegen of a schedule (RealizeOptions::compile_threads): the kernels compiled on a thread pool are
// the ones compiled one by one (same names, same source, same order of runs, same results), and threads
// running schedules at once share the per-process kernel cache safely (run under --config=tsan too).
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "rewrite/graph_rewrite.h"
#include "runtime/corpus_values.h"
#include "runtime/realize.h"
#include "schedule/tensor_uop.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

using nlohmann::json;

// A graph of schedule/testdata/benchmark_graphs.jsonl with its inputs.
struct Program {
  UOpPtr graph;
  json inputs;  // UNIQUE arg -> {"arg": the corpus formula's buffer argument}
};

Program LoadBenchmarkGraph(const std::string& name) {
  std::ifstream in("schedule/testdata/benchmark_graphs.jsonl");
  for (std::string line; std::getline(in, line);) {
    json j = json::parse(line);
    if (j["program"] != name) continue;
    absl::StatusOr<UOpPtr> graph = ParseIrSingle(j["graph"].get<std::string>());
    if (!graph.ok()) break;
    return Program{*graph, j["inputs"]};
  }
  ADD_FAILURE() << "no benchmark graph " << name;
  return {};
}

// The same program on buffers of its own: every UNIQUE's arg moved up by `offset`.
Program WithOwnBuffers(const Program& p, int64_t offset) {
  UOpMap rep;
  json inputs;
  for (const UOp* u : p.graph->Toposort()) {
    if (u->op() != Ops::UNIQUE) continue;
    const int64_t id = u->arg().as_int();
    rep[u] = UOp::New(Ops::UNIQUE, dtypes::kVoid, {}, Arg(id + offset));
    if (p.inputs.contains(std::to_string(id)))
      inputs[std::to_string(id + offset)] = p.inputs[std::to_string(id)];
  }
  return Program{Substitute(p.graph, rep), inputs};
}

struct Result {
  std::vector<std::string> names, sources;
  std::vector<std::vector<uint8_t>> outputs;
};

absl::StatusOr<Result> RunProgram(const Program& p, int compile_threads) {
  for (const UOp* u : p.graph->Toposort()) {
    if (u->op() != Ops::BUFFER) continue;
    const std::string unique = std::to_string(u->src(0)->arg().as_int());
    if (!p.inputs.contains(unique)) continue;
    std::vector<uint8_t> bytes =
        CorpusInputBytes(u->dtype(), p.inputs[unique]["arg"].get<int64_t>(), u->arg().as_int());
    UOPC_RETURN_IF_ERROR(BufferStore::Global().Write(u->ref(), bytes));
  }
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(p.graph));
  RealizeOptions options;
  options.compile_threads = compile_threads;
  UOPC_ASSIGN_OR_RETURN(std::vector<KernelRun> runs, RunSchedule(schedule, options));
  Result r;
  for (const KernelRun& run : runs) {
    r.names.push_back(run.name);
    r.sources.push_back(run.src);
  }
  for (const UOpPtr& out : p.graph->src()) {
    auto it = schedule.becomes_map.find(out.get());
    if (it == schedule.becomes_map.end()) return absl::InternalError("an output has no buffer");
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, BufferStore::Global().Read(BaseOf(it->second)));
    r.outputs.push_back(std::move(bytes));
  }
  return r;
}

TEST(RealizeParallelTest, ThreadPoolCompilesWhatTheSerialPathCompiles) {
  int kernels = 0;
  for (const char* name : {"mlp_784_512_512_10", "attention_block"}) {
    Program p = LoadBenchmarkGraph(name);
    ASSERT_NE(p.graph, nullptr);
    ResetKernelCacheForTesting();
    absl::StatusOr<Result> serial = RunProgram(p, 1);
    ASSERT_TRUE(serial.ok()) << name << ": " << serial.status();
    ResetKernelCacheForTesting();
    absl::StatusOr<Result> parallel = RunProgram(WithOwnBuffers(p, 1000), 4);
    ASSERT_TRUE(parallel.ok()) << name << ": " << parallel.status();
    EXPECT_EQ(parallel->names, serial->names) << name;
    EXPECT_EQ(parallel->sources, serial->sources) << name;
    EXPECT_EQ(parallel->outputs, serial->outputs) << name;
    kernels += static_cast<int>(serial->names.size());
  }
  EXPECT_EQ(kernels, 3 + 9);
}

// Names keep counting across schedules in the order kernels were named: a kernel compiled in a parallel batch
// takes the next number after those named before it.
TEST(RealizeParallelTest, NamesCountOnAcrossSchedules) {
  Program p = LoadBenchmarkGraph("mlp_784_512_512_10");
  ResetKernelCacheForTesting();
  absl::StatusOr<Result> first = RunProgram(p, 1);
  ASSERT_TRUE(first.ok()) << first.status();
  // The same kernels again come from the cache, under the same names.
  absl::StatusOr<Result> again = RunProgram(WithOwnBuffers(p, 2000), 4);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->names, first->names);
  EXPECT_EQ(again->outputs, first->outputs);
}

// Threads running copies of one schedule at once (each on its own buffers, its kernels compiled on a pool of
// 2) compile each kernel once between them and all get the serial path's results.
TEST(RealizeParallelTest, ThreadsShareTheKernelCache) {
  Program p = LoadBenchmarkGraph("attention_block");
  ASSERT_NE(p.graph, nullptr);
  ResetKernelCacheForTesting();
  constexpr int kThreads = 4;
  std::vector<absl::StatusOr<Result>> results(kThreads, absl::UnknownError("not run"));
  {
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] { results[t] = RunProgram(WithOwnBuffers(p, 3000 + 1000 * t), 2); });
    }
    for (std::thread& t : threads) t.join();
  }
  ResetKernelCacheForTesting();
  absl::StatusOr<Result> serial = RunProgram(WithOwnBuffers(p, 9000), 1);
  ASSERT_TRUE(serial.ok()) << serial.status();
  ASSERT_EQ(serial->names.size(), 9u);
  for (int t = 0; t < kThreads; ++t) {
    ASSERT_TRUE(results[t].ok()) << "thread " << t << ": " << results[t].status();
    EXPECT_EQ(results[t]->sources, serial->sources) << "thread " << t;
    EXPECT_EQ(results[t]->outputs, serial->outputs) << "thread " << t;
    EXPECT_EQ(results[t]->names, results[0]->names) << "thread " << t;
  }
}

}  // namespace
}  // namespace uopc
