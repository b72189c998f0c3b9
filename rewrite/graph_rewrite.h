// graph_rewrite: applies a PatternMatcher to a whole UOp graph until no rule fires (tinygrad's graph_rewrite,
// graph_rewrite_map and substitute, with the same visiting order).
//
//   UOpPtr out = GraphRewrite(root, pm);                                     // top-down, like tinygrad
//   UOpPtr out = GraphRewrite(root, pm, {.bottom_up = true, .ctx = &ctx});
//   absl::StatusOr<UOpPtr> out = TryGraphRewrite(root, pm, {.max_steps = 1000, .stats = &stats});
//
// Top-down (default): a node's sources are rewritten first; a node whose sources changed is rebuilt and
// visited again; a node whose sources did not change gets the rules, and a replacement is visited again; so
// each result is a fixpoint. Bottom-up: the rules are applied to a node until none fires, then its sources
// are rewritten, and the node is rebuilt and visited again if they changed. (tinygrad calls the second
// "bottom_up": rules see a node before its sources are simplified.) Every visited node is memoized for the
// call: a shared subgraph is rewritten once. Without a context (RewriteOptions::ctx), and with the memo in
// the nodes (see ScratchLease), a node a rule or a rebuild created is dropped once its rewrite is known
// instead of at the end of the call; an equal node built later is rewritten again, to the same result when
// the rules are functions of the node. With a context every node sees the rules once per call, as in
// tinygrad.
//
// The walk uses an explicit stack, so a chain a million nodes deep is fine. Non-termination becomes an error:
// re-entering a node that is still being rewritten is a certain cycle, reported at once with the rules on it;
// otherwise `max_steps` rule applications are the limit, reported with the rules that fired most recently.
// GraphRewrite CHECK-fails on those errors (a non-terminating rule set is a bug in the rules);
// TryGraphRewrite returns them (use it for rules from users).
#ifndef UOPC_REWRITE_GRAPH_REWRITE_H_
#define UOPC_REWRITE_GRAPH_REWRITE_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "rewrite/pattern_matcher.h"
#include "uop/uop.h"

namespace uopc {

// Rule applications allowed per call by default: several per node of a million-node graph, and few enough
// that a runaway rule set stops within seconds and a couple of GB (every node a call creates lives until it
// returns).
inline constexpr int64_t kDefaultMaxRewriteSteps = int64_t{1} << 23;

// One rule application: `before` became `after` by `rule`.
struct RewriteEvent {
  UOpPtr before;
  UOpPtr after;
  std::shared_ptr<const Rule> rule;
};

// The record of one graph_rewrite call.
struct TracedRewrite {
  std::string name;  // RewriteOptions::name
  bool bottom_up = false;
  // How many graph_rewrite calls enclose this one on its thread: a call made by a rule of another call (a
  // substitute inside the lowerer) is one deeper than that call.
  int depth = 0;
  UOpPtr input;
  UOpPtr output;  // null when the call failed
  std::vector<RewriteEvent> events;
};

// Collects the rule applications of every graph_rewrite call it is passed to (tinygrad's TRACK_MATCH_STATS=2
// record, for debugging and visualization). Calls nested inside rule callbacks get their own entries.
struct RewriteTrace {
  std::vector<TracedRewrite> rewrites;
  // Called on every event as it happens, when set.
  std::function<void(const TracedRewrite& call, const RewriteEvent& event)> on_event;
};

struct RewriteOptions {
  bool bottom_up = false;
  // Handed to callbacks as Match::ctx<T>().
  void* ctx = nullptr;
  // The most rule applications this call may make (0: no limit). Cycles are detected regardless.
  int64_t max_steps = kDefaultMaxRewriteSteps;
  // Per-rule statistics accumulate here when set.
  RewriteStats* stats = nullptr;
  // Every rule application is recorded here when set.
  RewriteTrace* trace = nullptr;
  // A label for the trace.
  absl::string_view name = {};
};

// Nodes to nodes. Keys are borrowed: the caller keeps them alive (they are nodes of the graph passed in).
using UOpMap = absl::flat_hash_map<const UOp*, UOpPtr>;

// The rewritten graph, or an error (kFailedPrecondition for a cycle, kResourceExhausted for the step limit)
// naming the rules involved as `file.cc:123`.
absl::StatusOr<UOpPtr> TryGraphRewrite(const UOpPtr& root, const PatternMatcher& pm,
                                       const RewriteOptions& options = {});
// The same; CHECK-fails on those errors.
UOpPtr GraphRewrite(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options = {});

// tinygrad's graph_rewrite_map: every node of root's graph mapped to its rewrite (one shared memo). With
// `input_map`, each of its keys k is also mapped, to the rewrite of input_map[k] (or input_map[k] itself when
// that is not in the graph).
absl::StatusOr<UOpMap> TryGraphRewriteMap(const UOpPtr& root, const PatternMatcher& pm,
                                          const RewriteOptions& options = {},
                                          const UOpMap* input_map = nullptr);
UOpMap GraphRewriteMap(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options = {},
                       const UOpMap* input_map = nullptr);

// tinygrad's UOp.substitute: a bottom-up rewrite that replaces each key of `replacements` by its value. As in
// tinygrad, replacements apply again to the values (a->b, b->c turns a into c) and inside them. A cyclic map
// (a->b, b->a) CHECK-fails. `name` labels the call (RewriteOptions::name).
UOpPtr Substitute(const UOpPtr& root, const UOpMap& replacements, absl::string_view name = "substitute");

}  // namespace uopc

#endif  // UOPC_REWRITE_GRAPH_REWRITE_H_
