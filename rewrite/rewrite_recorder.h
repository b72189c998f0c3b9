// The process-wide record of every graph_rewrite a compile makes, for VIZ (tinygrad's VIZ=1 and
// TRACK_MATCH_STATS=2): while recording is on, each graph_rewrite call that was not given its own
// RewriteOptions::trace is recorded, with its name, input and output graphs and every rule that fired.
//
// Calls are grouped by what the caller was doing: a `RewriteGroupScope` names the group ("schedule", a
// kernel's name) for the calls made on its thread while it lives, so kernels compiled in parallel land in
// groups of their own. A group also keeps text (a kernel's uop listing and source) for the page.
//
//   RewriteRecorder::SetEnabled(true);
//   { RewriteGroupScope g("kernel"); ...; g.SetLabel(program.name); RewriteRecorder::AddText("source", src);
//   } std::vector<RewriteGroup> groups = RewriteRecorder::Take();
//
// Off (the default), it costs one relaxed atomic load per graph_rewrite call and per scope.
#ifndef UOPC_REWRITE_REWRITE_RECORDER_H_
#define UOPC_REWRITE_REWRITE_RECORDER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "rewrite/graph_rewrite.h"

namespace uopc {

// What one group recorded: its graph_rewrite calls in the order they started, and named texts.
struct RewriteGroup {
  std::string label;
  int64_t sequence = 0;  // creation order across threads: groups are listed by it
  std::vector<TracedRewrite> rewrites;
  std::vector<std::pair<std::string, std::string>> texts;  // (title, text)
};

class RewriteRecorder {
 public:
  static bool Enabled();
  static void SetEnabled(bool enabled);

  // Attaches text to this thread's current group (dropped when no group is open or recording is off).
  static void AddText(absl::string_view title, std::string text);

  // Every finished group so far, by creation order; calls made outside any group come first, in a group
  // labelled "(outside any group)". Clears the record.
  static std::vector<RewriteGroup> Take();

  // The trace a graph_rewrite call without its own trace should record into on this thread, or null when
  // recording is off. Calls outside a group get a per-call trace that the recorder keeps (`Finish`).
  static RewriteTrace* TraceForThisThread();
  static void FinishCall(RewriteTrace* trace);
};

// Opens a group on this thread for its lifetime (nested scopes stack: the innermost gets the calls); a group
// in which nothing was recorded is dropped when its scope ends. With `join_open_group`, a scope opened while
// another is open on this thread joins that one instead (a kernel's opts and its codegen are one group when
// compiled together, two when a schedule runs them on different threads).
class RewriteGroupScope {
 public:
  explicit RewriteGroupScope(absl::string_view label, bool join_open_group = false);
  ~RewriteGroupScope();
  RewriteGroupScope(const RewriteGroupScope&) = delete;
  RewriteGroupScope& operator=(const RewriteGroupScope&) = delete;

  // Renames the group, or the group joined (a kernel is named only once its opts are known).
  void SetLabel(absl::string_view label);

 public:
  struct State;  // the recorder's per-scope record (rewrite_recorder.cc)

 private:
  State* state_ = nullptr;   // the group opened; null when recording was off or a group was joined
  State* joined_ = nullptr;  // the group joined
};

}  // namespace uopc

#endif  // UOPC_REWRITE_REWRITE_RECORDER_H_
