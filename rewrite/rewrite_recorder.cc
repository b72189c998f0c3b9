#include "rewrite/rewrite_recorder.h"

#include <algorithm>
#include <atomic>
#include <memory>
#include <mutex>

namespace uopc {

struct RewriteGroupScope::State {
  RewriteGroup group;
  RewriteTrace trace;  // the group's calls, moved into `group` when the scope ends
  State* outer = nullptr;
};

namespace {

std::atomic<bool> recording{false};
std::atomic<int64_t> next_sequence{0};

// std::mutex rather than absl::Mutex: ThreadSanitizer sees the former (Debian's Abseil is not instrumented).
struct Record {
  std::mutex mu;
  RewriteGroup outside;              // guarded by mu
  std::vector<RewriteGroup> groups;  // guarded by mu
};

Record& TheRecord() {
  static Record* const record = new Record;
  return *record;
}

thread_local RewriteGroupScope::State* current_group = nullptr;

}  // namespace

bool RewriteRecorder::Enabled() { return recording.load(std::memory_order_relaxed); }

void RewriteRecorder::SetEnabled(bool enabled) { recording.store(enabled, std::memory_order_relaxed); }

void RewriteRecorder::AddText(absl::string_view title, std::string text) {
  if (current_group == nullptr || !Enabled()) return;
  current_group->group.texts.emplace_back(std::string(title), std::move(text));
}

RewriteTrace* RewriteRecorder::TraceForThisThread() {
  if (!Enabled()) return nullptr;
  if (current_group != nullptr) return &current_group->trace;
  return new RewriteTrace;  // released by FinishCall
}

void RewriteRecorder::FinishCall(RewriteTrace* trace) {
  if (current_group != nullptr && trace == &current_group->trace) return;
  std::unique_ptr<RewriteTrace> owned(trace);
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mu);
  for (TracedRewrite& r : owned->rewrites) record.outside.rewrites.push_back(std::move(r));
}

std::vector<RewriteGroup> RewriteRecorder::Take() {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mu);
  std::vector<RewriteGroup> out;
  if (!record.outside.rewrites.empty()) {
    record.outside.label = "(outside any group)";
    record.outside.sequence = -1;
    out.push_back(std::move(record.outside));
    record.outside = RewriteGroup();
  }
  std::vector<RewriteGroup> groups = std::move(record.groups);
  record.groups.clear();
  std::stable_sort(groups.begin(), groups.end(),
                   [](const RewriteGroup& a, const RewriteGroup& b) { return a.sequence < b.sequence; });
  for (RewriteGroup& g : groups) out.push_back(std::move(g));
  return out;
}

RewriteGroupScope::RewriteGroupScope(absl::string_view label, bool join_open_group) {
  if (!RewriteRecorder::Enabled()) return;
  if (join_open_group && current_group != nullptr) {
    joined_ = current_group;
    return;
  }
  state_ = new State;
  state_->group.label = std::string(label);
  state_->group.sequence = next_sequence.fetch_add(1, std::memory_order_relaxed);
  state_->outer = current_group;
  current_group = state_;
}

void RewriteGroupScope::SetLabel(absl::string_view label) {
  if (state_ != nullptr) state_->group.label = std::string(label);
  if (joined_ != nullptr) joined_->group.label = std::string(label);
}

RewriteGroupScope::~RewriteGroupScope() {
  if (state_ == nullptr) return;
  current_group = state_->outer;
  std::unique_ptr<State> state(state_);
  // A group in which nothing was recorded has nothing to show (scopes are opened freely: one per tensor op).
  if (state->trace.rewrites.empty() && state->group.texts.empty()) return;
  state->group.rewrites = std::move(state->trace.rewrites);
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mu);
  record.groups.push_back(std::move(state->group));
}

}  // namespace uopc
