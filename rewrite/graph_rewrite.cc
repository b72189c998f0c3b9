#include "rewrite/graph_rewrite.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "uop/check.h"

namespace uopc {
namespace {

// The rewrite of one graph_rewrite call: tinygrad's RewriteContext with an explicit stack instead of recursion.
//
// Nodes are handled through `const UOpPtr*` handles that stay valid for the whole call: a source's handle lives in
// its parent, the root's in the caller, and every node a rule or a rebuild creates is kept in `kept_` (a deque, so
// handles never move). Nothing a call has seen is freed before it ends, so the memo's pointer keys cannot be reused
// by new nodes, and the hot path touches no reference counts.
class Engine {
 public:
  Engine(const PatternMatcher& pm, const RewriteOptions& options) : pm_(pm), options_(options) {
    memo_.reserve(256);
    if (options_.trace != nullptr) {
      trace_index_ = options_.trace->rewrites.size();
      TracedRewrite& t = options_.trace->rewrites.emplace_back();
      t.name = std::string(options_.name);
      t.bottom_up = options_.bottom_up;
    }
  }

  // The rewrite of `*root`; the handle stays valid while this engine lives.
  absl::StatusOr<const UOpPtr*> Run(const UOpPtr* root) {
    if (options_.trace != nullptr && options_.trace->rewrites[trace_index_].input == nullptr) {
      options_.trace->rewrites[trace_index_].input = *root;
    }
    size_t base = values_.size();
    absl::Status s = Visit(root, -1);
    while (s.ok() && !frames_.empty()) s = StepFrame();
    if (!s.ok()) {
      frames_.clear();
      values_.resize(base);
      return s;
    }
    UOPC_CHECK(values_.size() == base + 1);
    const UOpPtr* result = values_.back();
    values_.pop_back();
    return result;
  }

  void RecordOutput(const UOpPtr& out) {
    if (options_.trace != nullptr) options_.trace->rewrites[trace_index_].output = out;
  }

 private:
  enum class Stage : uint8_t {
    kFixpoint,  // bottom-up: apply the rules until none fires
    kSources,   // rewrite the sources of `cur` one by one
    kFinish,    // wait for the rewrite of a replacement; it is this node's result too
  };

  struct Frame {
    const UOpPtr* node;  // the node visited (the memo key)
    const UOpPtr* cur;   // the node whose sources are rewritten (bottom-up: the end of the rule chain)
    uint32_t memo;       // index into results_
    uint32_t next_src;
    uint32_t values_base;
    int32_t via_rule;    // the last rule that rewrote this node on this frame (-1: none), for cycle reports
    Stage stage;
  };

  const UOpPtr* Keep(UOpPtr n) { return &kept_.emplace_back(std::move(n)); }

  // Pushes `*h`'s result onto values_ when memoized, else a frame that computes it.
  absl::Status Visit(const UOpPtr* h, int32_t via_rule) {
    auto [it, inserted] = memo_.try_emplace(h->get(), static_cast<uint32_t>(results_.size()));
    if (!inserted) {
      const UOpPtr* r = results_[it->second];
      if (r == nullptr) return CycleError(*h, it->second, via_rule);
      values_.push_back(r);
      return absl::OkStatus();
    }
    results_.push_back(nullptr);
    frames_.push_back(Frame{h, h, it->second, 0, static_cast<uint32_t>(values_.size()), -1,
                            options_.bottom_up ? Stage::kFixpoint : Stage::kSources});
    return absl::OkStatus();
  }

  // One rule application: counts it against the limit and traces it.
  absl::Status Applied(const UOpPtr& before, const UOpPtr& after, int rule) {
    ++steps_;
    recent_[steps_ % kRecent] = rule;
    if (options_.trace != nullptr) {
      RewriteEvent e{before, after, pm_.rules()[rule]};
      RewriteTrace& trace = *options_.trace;
      trace.rewrites[trace_index_].events.push_back(e);
      if (trace.on_event) trace.on_event(trace.rewrites[trace_index_], e);
    }
    if (options_.max_steps > 0 && steps_ > options_.max_steps) return StepLimitError();
    return absl::OkStatus();
  }

  absl::Status StepFrame() {
    Frame& f = frames_.back();
    switch (f.stage) {
      case Stage::kFixpoint: {
        const UOpPtr* cur = f.node;
        chain_.assign(1, cur->get());
        chain_rules_.clear();
        int rule;
        while (UOpPtr r = pm_.Rewrite(*cur, options_.ctx, options_.stats, &rule)) {
          if (absl::Status s = Applied(*cur, r, rule); !s.ok()) return s;
          const UOpPtr* next = Keep(std::move(r));
          chain_rules_.push_back(rule);
          // Only the last kChainScan nodes: longer loops are left to the step limit, keeping this linear.
          for (size_t i = chain_.size() > kChainScan ? chain_.size() - kChainScan : 0; i < chain_.size(); ++i) {
            if (chain_[i] == next->get()) {
              std::vector<int> rules(chain_rules_.begin() + i, chain_rules_.end());
              return CycleStatus(*next, rules);
            }
          }
          chain_.push_back(next->get());
          cur = next;
          f.via_rule = rule;
        }
        f.cur = cur;
        f.stage = Stage::kSources;
        f.values_base = static_cast<uint32_t>(values_.size());
        return absl::OkStatus();
      }
      case Stage::kSources: {
        const UOp* n = f.cur->get();
        if (f.next_src < n->num_src()) {
          const UOpPtr* s = &n->src()[f.next_src++];
          return Visit(s, -1);  // may reallocate frames_: f is not used after this
        }
        const size_t base = f.values_base;
        bool changed = false;
        for (size_t i = 0; i < n->num_src(); ++i) changed |= values_[base + i]->get() != n->src(i);
        if (changed) {
          new_src_.clear();
          for (size_t i = 0; i < n->num_src(); ++i) new_src_.push_back(*values_[base + i]);
          values_.resize(base);
          const UOpPtr* rebuilt = Keep(f.cur->replace_src(new_src_));
          f.stage = Stage::kFinish;
          return Visit(rebuilt, f.via_rule);
        }
        values_.resize(base);
        if (!options_.bottom_up) {
          int rule;
          if (UOpPtr r = pm_.Rewrite(*f.cur, options_.ctx, options_.stats, &rule)) {
            if (absl::Status s = Applied(*f.cur, r, rule); !s.ok()) return s;
            const UOpPtr* next = Keep(std::move(r));
            f.stage = Stage::kFinish;
            f.via_rule = rule;
            return Visit(next, rule);
          }
        }
        results_[f.memo] = f.cur;
        values_.push_back(f.cur);
        frames_.pop_back();
        return absl::OkStatus();
      }
      case Stage::kFinish: {
        // The replacement's result is on top of values_ and stays there as this node's result.
        results_[f.memo] = values_.back();
        frames_.pop_back();
        return absl::OkStatus();
      }
    }
    return absl::OkStatus();
  }

  std::string RuleList(const std::vector<int>& rules) const {
    std::vector<int> distinct;
    for (int r : rules) {
      if (r >= 0 && std::find(distinct.begin(), distinct.end(), r) == distinct.end()) distinct.push_back(r);
    }
    std::vector<std::string> names;
    for (int r : distinct) names.push_back(pm_.rule(r).ToString());
    return absl::StrJoin(names, "; ");
  }

  absl::Status CycleStatus(const UOpPtr& node, const std::vector<int>& rules) const {
    return absl::FailedPreconditionError(absl::StrCat(
        "graph_rewrite", options_.name.empty() ? "" : absl::StrCat(" '", options_.name, "'"),
        " does not terminate: a ", OpName(node->op()), " node is rewritten back into itself by the rules: ",
        RuleList(rules)));
  }

  // `node` is being rewritten already (memo slot `memo`): the rewrite loops. The rules on the loop are those
  // applied on the frames from its frame up.
  absl::Status CycleError(const UOpPtr& node, uint32_t memo, int32_t via_rule) const {
    std::vector<int> rules;
    if (via_rule >= 0) rules.push_back(via_rule);
    for (size_t i = frames_.size(); i-- > 0;) {
      if (frames_[i].via_rule >= 0) rules.push_back(frames_[i].via_rule);
      if (frames_[i].memo == memo) break;
    }
    std::reverse(rules.begin(), rules.end());
    return CycleStatus(node, rules);
  }

  absl::Status StepLimitError() const {
    // The rules that fired in the last steps, most frequent first.
    absl::flat_hash_map<int, int64_t> counts;
    int64_t window = std::min<int64_t>(steps_, kRecent);
    for (int64_t i = 0; i < window; ++i) ++counts[recent_[(steps_ - i) % kRecent]];
    std::vector<std::pair<int, int64_t>> sorted(counts.begin(), counts.end());
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::vector<std::string> names;
    for (const auto& [rule, n] : sorted) names.push_back(absl::StrCat(pm_.rule(rule).ToString(), " (", n, "x)"));
    return absl::ResourceExhaustedError(absl::StrCat(
        "graph_rewrite", options_.name.empty() ? "" : absl::StrCat(" '", options_.name, "'"), " exceeded ",
        options_.max_steps,
        " rule applications (max_steps); likely a non-terminating rule set. Rules applied in the last ",
        window, " steps: ", absl::StrJoin(names, "; ")));
  }

  static constexpr int64_t kRecent = 1024;
  static constexpr size_t kChainScan = 64;

  const PatternMatcher& pm_;
  const RewriteOptions& options_;
  size_t trace_index_ = 0;
  absl::flat_hash_map<const UOp*, uint32_t> memo_;
  std::vector<const UOpPtr*> results_;  // by memo slot; null while the node is being rewritten
  std::vector<Frame> frames_;
  std::vector<const UOpPtr*> values_;  // results of finished visits, consumed by the frame that asked
  std::deque<UOpPtr> kept_;
  std::vector<const UOp*> chain_;
  std::vector<int> chain_rules_;
  absl::InlinedVector<UOpPtr, 4> new_src_;
  int64_t steps_ = 0;
  int recent_[kRecent] = {};
};

}  // namespace

absl::StatusOr<UOpPtr> TryGraphRewrite(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options) {
  Engine engine(pm, options);
  absl::StatusOr<const UOpPtr*> r = engine.Run(&root);
  if (!r.ok()) return r.status();
  engine.RecordOutput(**r);
  return **r;
}

UOpPtr GraphRewrite(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options) {
  absl::StatusOr<UOpPtr> r = TryGraphRewrite(root, pm, options);
  if (!r.ok()) internal::CheckFailed(__FILE__, __LINE__, "TryGraphRewrite(...).ok()", r.status().ToString().c_str());
  return *std::move(r);
}

absl::StatusOr<UOpMap> TryGraphRewriteMap(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options,
                                          const UOpMap* input_map) {
  Engine engine(pm, options);
  UOpMap out;
  std::vector<const UOp*> order = root->Toposort();
  out.reserve(order.size() + (input_map != nullptr ? input_map->size() : 0));
  // Root first, like tinygrad's reversed toposort. The handles of inner nodes live in their parents.
  absl::flat_hash_map<const UOp*, const UOpPtr*> handles;
  handles.reserve(order.size());
  handles[root.get()] = &root;
  for (const UOp* n : order) {
    for (const UOpPtr& s : n->src()) handles.try_emplace(s.get(), &s);
  }
  for (size_t i = order.size(); i-- > 0;) {
    absl::StatusOr<const UOpPtr*> r = engine.Run(handles.at(order[i]));
    if (!r.ok()) return r.status();
    out[order[i]] = **r;
  }
  engine.RecordOutput(out.at(root.get()));
  if (input_map != nullptr) {
    for (const auto& [k, v] : *input_map) {
      auto it = out.find(v.get());
      UOpPtr target = it != out.end() ? it->second : v;
      out[k] = std::move(target);
    }
  }
  return out;
}

UOpMap GraphRewriteMap(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options,
                       const UOpMap* input_map) {
  absl::StatusOr<UOpMap> r = TryGraphRewriteMap(root, pm, options, input_map);
  if (!r.ok()) internal::CheckFailed(__FILE__, __LINE__, "TryGraphRewriteMap(...).ok()", r.status().ToString().c_str());
  return *std::move(r);
}

UOpPtr Substitute(const UOpPtr& root, const UOpMap& replacements) {
  if (replacements.empty()) return root;
  static const PatternMatcher* const kSubstitute = new PatternMatcher({
      {UPat(AllOps()), [](const Match& m) -> UOpPtr {
         const UOpMap& map = m.ctx<const UOpMap>();
         auto it = map.find(m.root().get());
         return it == map.end() ? nullptr : it->second;
       }},
  });
  return GraphRewrite(root, *kSubstitute,
                      {.bottom_up = true, .ctx = const_cast<UOpMap*>(&replacements), .name = "substitute"});
}

}  // namespace uopc
