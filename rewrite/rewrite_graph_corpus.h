// Reads the rewrite_graph_*.jsonl corpora: the random expression DAGs tinygrad's graph_rewrite speed was measured
// on (../shared/reference/tinygrad-v0.10.3/corpus/README.md §5). All expressions go into one SINK, hash-consed, as
// tinygrad built it, so the input node count can be compared with the corpus header's.
#ifndef UOPC_REWRITE_REWRITE_GRAPH_CORPUS_H_
#define UOPC_REWRITE_REWRITE_GRAPH_CORPUS_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "uop/uop.h"

namespace uopc {

struct RewriteGraphCorpus {
  std::vector<UOpPtr> exprs;                  // in file order
  std::vector<std::string> tinygrad_renders;  // tinygrad's render of each expression after sym
  UOpPtr sink;                                // SINK of all expressions
  int64_t in_nodes = 0;                       // from the header: tinygrad's unique node count of the input
  int64_t out_nodes = 0;                      // from the header: tinygrad's count after the rewrite
};

// Parses the text of a corpus file; errors name the line.
absl::StatusOr<RewriteGraphCorpus> ParseRewriteGraphCorpus(absl::string_view text);
absl::StatusOr<RewriteGraphCorpus> LoadRewriteGraphCorpus(const std::string& path);

// Unique nodes reachable from root (including root).
size_t CountNodes(const UOp* root);

}  // namespace uopc

#endif  // UOPC_REWRITE_REWRITE_GRAPH_CORPUS_H_
