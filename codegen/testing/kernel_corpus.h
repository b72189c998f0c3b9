// The codegen corpus: tinygrad v0.10.3's kernels with every codegen stage, per target (testdata/corpus/
// codegen_kernels.jsonl; the format is section 6 of shared/reference/tinygrad-v0.10.3/corpus/README.md).
//
// Tests of each codegen pass read it: a pass run on one stage's graph must give the next stage's graph, and
// the whole pipeline must give tinygrad's opts, listing, source and outputs.
#ifndef UOPC_CODEGEN_TESTING_KERNEL_CORPUS_H_
#define UOPC_CODEGEN_TESTING_KERNEL_CORPUS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"
#include "uop/uop.h"

namespace uopc {

// One target's results (`clang`, `clang_noopt`, `opencl`, ...).
struct CorpusTarget {
  std::vector<std::string> opts;  // as tinygrad prints them: "Opt(op=OptOps.UPCAST, axis=1, arg=4)"
  std::string name;               // the kernel's function name
  std::optional<std::vector<int64_t>> global_size, local_size;
  std::string uops;  // print_uops listing; empty for targets without one
  std::string src;   // rendered source
  // (step name, graph in textual IR) after each codegen step; only for `clang` and `clang_noopt`.
  std::vector<std::pair<std::string, std::string>> stages;

  // The text of stage `name`, or nullptr.
  const std::string* Stage(absl::string_view name) const;
};

struct CorpusBuffer {
  int64_t arg = 0;    // the DEFINE_GLOBAL's arg
  std::string dtype;  // "float32", "int32", "bool", ...
  int64_t size = 0;   // elements
};

struct CorpusKernel {
  std::string id;  // "PROGRAM/K"
  std::string program;
  std::string ast;  // the kernel AST in textual IR
  absl::flat_hash_map<std::string, CorpusTarget> targets;
  std::vector<CorpusBuffer> buffers;
  // {"arg": [values]} for every buffer the kernel stores to; floats as numbers or "nan", "inf", "-inf".
  nlohmann::json outputs;

  const CorpusTarget& target(absl::string_view name) const;
};

// The step names of the corpus's `stages`, in pipeline order.
inline constexpr const char* kCorpusStageNames[] = {"optimized_ast", "lowerer",     "initial symbolic",
                                                    "store_ignore",  "move_ignore", "expander",
                                                    "remove_reduce", "devectorize", "final rewrite"};

absl::StatusOr<std::vector<CorpusKernel>> ParseKernelCorpus(absl::string_view jsonl);
absl::StatusOr<std::vector<CorpusKernel>> LoadKernelCorpus(const std::string& path);
// testdata/corpus/codegen_kernels.jsonl, loaded once (tests run from the runfiles root); CHECK-fails when it
// is missing or malformed.
const std::vector<CorpusKernel>& KernelCorpus();

// Parses a graph in textual IR; CHECK-fails on malformed text (the corpus is ours).
UOpPtr ParseCorpusGraph(absl::string_view text);
// The AST of the corpus kernel `id` ("reduce_sum/0"); CHECK-fails when the corpus has none.
UOpPtr CorpusKernelAst(absl::string_view id);

// One codegen step, as the corpus tests call it.
using CorpusStep = std::function<absl::StatusOr<UOpPtr>(const UOpPtr&)>;

// Runs `step` on stage `before` of every corpus kernel, for both CPU targets (`clang`, `clang_noopt`), and
// compares with stage `after`. Returns "ID@target" for each graph that differs (empty: all 186 equal) and
// prints the first difference. A kernel lacking either stage is a test failure.
std::vector<std::string> CorpusStepDifferences(absl::string_view before, absl::string_view after,
                                               const CorpusStep& step);

// Empty when `got` is the graph `expected_text` describes (interned nodes compared by pointer); else a
// message with both graphs' text and the first line where they differ.
std::string GraphDifference(const UOpPtr& got, absl::string_view expected_text);

}  // namespace uopc

#endif  // UOPC_CODEGEN_TESTING_KERNEL_CORPUS_H_
