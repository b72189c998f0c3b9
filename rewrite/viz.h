// VIZ: every graph rewrite of a compile as one self-contained HTML page (tinygrad's VIZ=1, without a server).
//
// The page lists the recorded groups (the scheduler's steps, then each kernel's), each group's graph rewrites
// (the step's name and every rule that fired: its `file.cc:line`, the node it matched and the node it returned),
// and draws the selected step's output graph with the nodes the step created highlighted. Graphs are laid out
// with Graphviz's `dot` when the page is written and embedded as SVG, so the file opens from disk; graphs past
// `max_graph_nodes` are not drawn (the page says so), which keeps pages of large compiles quick to write and
// to open. A kernel's texts (its uop listing and source) are shown under its steps.
//
// Any program linking //rewrite:viz records when started with VIZ=1 and writes the page when it exits
// (VIZ_PATH names the file; default `$TMPDIR/uopc_viz_<pid>.html`), saying where on stderr.
#ifndef UOPC_REWRITE_VIZ_H_
#define UOPC_REWRITE_VIZ_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "rewrite/rewrite_recorder.h"
#include "uop/uop.h"

namespace uopc {

struct VizOptions {
  std::string title = "uopc VIZ";
  int64_t max_graph_nodes = 600;  // larger graphs are listed, not drawn
  int64_t max_events_per_step = 300;
  std::string dot_binary = "dot";
};

// What a written page holds, for the caller's message.
struct VizSummary {
  int64_t groups = 0;
  int64_t steps = 0;
  int64_t events = 0;
  int64_t graphs_drawn = 0;
  int64_t graphs_capped = 0;
  int64_t bytes = 0;
  bool dot_missing = false;
};

// The graph under `root` in Graphviz's DOT language: one node per UOp (op, dtype, arg), an edge from each
// source to its user; nodes in `highlight` drawn in red.
std::string UOpGraphToDot(const UOp* root, const absl::flat_hash_set<const UOp*>& highlight = {},
                          absl::string_view graph_name = "uops");

// The page's HTML for `groups`. An empty record is an error (there is nothing to show).
absl::StatusOr<std::string> RenderVizPage(const std::vector<RewriteGroup>& groups, const VizOptions& options,
                                          VizSummary* summary = nullptr);

// RenderVizPage written to `path`.
absl::StatusOr<VizSummary> WriteVizPage(const std::vector<RewriteGroup>& groups, const std::string& path,
                                        const VizOptions& options = {});

// Reads VIZ from the environment: true when it asks for recording (VIZ=1 or more).
bool VizRequestedByEnvironment();

}  // namespace uopc

#endif  // UOPC_REWRITE_VIZ_H_
