#include "rewrite/graph_rewrite.h"

#include <algorithm>
#include <deque>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rewrite/rewrite_recorder.h"
#include "uop/check.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// The memo of one call: node -> result (null while the node is being rewritten). Open addressing with
// linear probing and the key next to its value, so a lookup costs one cache line (absl's tables touch a
// control byte and a slot); nodes are never erased. Slot pointers stay valid until the table grows
// (capacity() changes).
class MemoTable {
 public:
  struct Slot {
    const UOp* key;
    const UOp* value;
  };

  MemoTable() { Rehash(64); }

  // The slot of `key`, or the empty slot where it would go (key null); Claim() fills it.
  Slot* Probe(const UOp* key) {
    size_t i = Index(key);
    while (true) {
      Slot& s = slots_[i];
      if (s.key == key || s.key == nullptr) return &s;
      i = (i + 1) & mask_;
    }
  }

  // Fills an empty slot from Probe(); returns the (possibly moved) slot.
  Slot* Claim(Slot* slot, const UOp* key) {
    slot->key = key;
    slot->value = nullptr;
    if (++size_ > MaxSize(capacity())) {
      Rehash(capacity() * 2);
      return Probe(key);
    }
    return slot;
  }

  void Reserve(size_t n) {
    size_t cap = capacity();
    while (MaxSize(cap) < n) cap *= 2;
    if (cap != capacity()) Rehash(cap);
  }

  size_t size() const { return size_; }
  size_t capacity() const { return mask_ + 1; }

 private:
  // Load factor at most 0.6: short probe sequences, and a table small enough to stay in cache longer.
  static size_t MaxSize(size_t capacity) { return capacity / 5 * 3; }

  size_t Index(const UOp* key) const {
    // Fibonacci hashing of the address; nodes are at least 16-byte aligned.
    return static_cast<size_t>((reinterpret_cast<uintptr_t>(key) >> 4) * 0x9E3779B97F4A7C15ull >> shift_);
  }

  void Rehash(size_t cap) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(cap, Slot{nullptr, nullptr});
    mask_ = cap - 1;
    shift_ = 64 - __builtin_ctzll(cap);
    for (const Slot& s : old) {
      if (s.key != nullptr) *Probe(s.key) = s;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  int shift_ = 64;
  size_t size_ = 0;
};

// The rewrite of one graph_rewrite call: tinygrad's RewriteContext with an explicit stack instead of
// recursion.
//
// A frame reaches its node through a `const UOpPtr*` handle that stays valid while the frame lives: a
// source's handle lives in its parent, the root's in the caller, and a node a rule or a rebuild creates (the
// frame's "pending" node) in `pending_`, a deque used as a stack (handles never move), until the frame that
// waits for its rewrite finishes. Results are plain pointers: a node that is its own result is alive while
// anything can ask for it, and a node that is another node's result is held by `results_` or `kept_`.
//
// The memo maps a node to its result (null while the node is being rewritten). It lives in the nodes'
// scratch slots when this engine gets the process's ScratchLease, else in a MemoTable; there a frame keeps a
// pointer to its memo value and writes the result through it, unless the table has grown since (then it looks
// up again). A memo in the nodes dies with them, so with the lease a pending node is dropped as soon as its
// rewrite is known: most are intermediates nothing else refers to, and freeing them while they are still in
// cache (and their memory goes back to the allocator for the next ones) is cheaper than freeing a few hundred
// thousand cold nodes at the end. An equal node built later is rewritten again, which gives the same result
// when the rules are functions of the node, but a rule that pushes a node down a shared graph (an IGNORE
// through the rounds of a threefry, each feeding two of the next) would then rewrite each pushed node once
// per path, exponentially many times. So the engine remembers the hashes of the nodes it dropped, and the
// first time it builds one again it stops dropping for the rest of the call. Rules given a context may keep
// state in it, so then, as in tinygrad, every node sees the rules once per call and pending nodes are kept
// (`kept_`) until the call ends.
// A table's keys are addresses, so without the lease pending nodes are kept too, and no key can be reused by
// a new node.
class Engine {
 public:
  Engine(const PatternMatcher& pm, const RewriteOptions& options)
      : pm_(pm),
        options_(options),
        lease_(ScratchLease::TryAcquire()),
        drop_pending_(lease_.has_value() && options.ctx == nullptr) {
    depth_ = size_hints.depth++;
    if (options_.trace != nullptr) {
      trace_index_ = options_.trace->rewrites.size();
      TracedRewrite& t = options_.trace->rewrites.emplace_back();
      t.name = std::string(options_.name);
      t.bottom_up = options_.bottom_up;
      t.depth = depth_;
    }
  }

  // The rewrite of `*root`; the node stays alive while this engine lives.
  absl::StatusOr<const UOp*> Run(const UOpPtr* root) {
    if (options_.trace != nullptr && options_.trace->rewrites[trace_index_].input == nullptr) {
      options_.trace->rewrites[trace_index_].input = *root;
    }
    size_t base = values_.size();
    Visited v = Visit(root, -1);
    if (v == Visited::kError || (v == Visited::kFrame && !Loop())) {
      frames_.clear();
      values_.resize(base);
      pending_.clear();
      return std::move(error_);
    }
    UOPC_CHECK(values_.size() == base + 1);
    const UOp* result = values_.back();
    values_.pop_back();
    return result;
  }

  ~Engine() {
    --size_hints.depth;
    if (depth_ < kHintDepths) {
      size_hints.memo_size[depth_] = lease_.has_value() ? memo_entries_ : memo_.size();
    }
  }

  void RecordOutput(const UOpPtr& out) {
    if (options_.trace != nullptr) options_.trace->rewrites[trace_index_].output = out;
  }

 private:
  enum class Stage : uint8_t {
    kFixpoint,  // bottom-up: apply the rules until none fires
    kSources,   // rewrite the sources of `cur` one by one
    kRules,     // top-down: `cur`'s sources are results already; apply the rules once
    kFinish,    // wait for the rewrite of a replacement; it is this node's result too
  };

  struct Frame {
    const UOpPtr* node;     // the node visited (the memo key)
    const UOpPtr* cur;      // the node whose sources are rewritten (bottom-up: the end of the rule chain)
    MemoTable::Slot* memo;  // the node's table slot while the capacity is `memo_capacity` (null: lease)
    size_t memo_capacity;
    uint32_t next_src;
    uint32_t values_base;
    int32_t via_rule;  // the last rule that rewrote this node on this frame (-1: none), for cycle reports
    Stage stage;
  };

  // Sizes of the memos of the last calls, by nesting depth (rules may call graph_rewrite): a call that grows
  // past kReserveAt entries reserves what the previous call at its depth needed, instead of rehashing its way
  // there.
  static constexpr int kHintDepths = 8;
  static constexpr size_t kReserveAt = 4096;
  struct SizeHints {
    int depth = 0;
    size_t memo_size[kHintDepths] = {};
  };
  static thread_local SizeHints size_hints;

  const UOpPtr* Keep(UOpPtr n) { return &kept_.emplace_back(std::move(n)); }
  const UOpPtr* Pend(UOpPtr n) {
    if (drop_pending_ && !dropped_.empty() && dropped_.contains(n->hash())) drop_pending_ = false;
    return &pending_.emplace_back(std::move(n));
  }

  enum class Visited : uint8_t { kError, kValue, kFrame };

  // Pushes `*h`'s result onto values_ when it is known, else a frame that computes it.
  Visited Visit(const UOpPtr* h, int32_t via_rule) {
    const UOp* u = h->get();
    MemoTable::Slot* slot = nullptr;
    const void* known;
    if (lease_.has_value() ? lease_->Get(u, &known) : FindInTable(u, &slot, &known)) {
      const UOp* r = static_cast<const UOp*>(known);
      if (r == nullptr) return Fail(CycleError(*h, via_rule));
      values_.push_back(r);
      return Visited::kValue;
    }
    // A leaf no rule can touch is its own result: it needs no memo entry (most CONSTs).
    if (u->num_src() == 0 && !pm_.HasRulesFor(u->op())) {
      values_.push_back(u);
      return Visited::kValue;
    }
    if (lease_.has_value()) {
      lease_->Set(u, nullptr);
      ++memo_entries_;
    } else {
      slot = ClaimInTable(slot, u);
    }
    for (const UOpPtr& s : u->src()) s->Prefetch();  // visited next
    frames_.push_back(Frame{h, h, slot, memo_.capacity(), 0, static_cast<uint32_t>(values_.size()), -1,
                            options_.bottom_up ? Stage::kFixpoint : Stage::kSources});
    return Visited::kFrame;
  }

  // The memo table's entry for u (when this engine has no lease): false when there is none, and *slot is
  // where it would go.
  bool FindInTable(const UOp* u, MemoTable::Slot** slot, const void** value) {
    *slot = memo_.Probe(u);
    if ((*slot)->key == nullptr) return false;
    *value = (*slot)->value;
    return true;
  }

  // Enters u (not yet computed) in the memo table at the empty `slot`; returns its slot after any growth.
  MemoTable::Slot* ClaimInTable(MemoTable::Slot* slot, const UOp* u) {
    slot = memo_.Claim(slot, u);
    if (memo_.size() == kReserveAt && depth_ < kHintDepths && size_hints.memo_size[depth_] > kReserveAt) {
      memo_.Reserve(size_hints.memo_size[depth_]);
      slot = memo_.Probe(u);
    }
    return slot;
  }

  Visited Fail(absl::Status s) {
    error_ = std::move(s);
    return Visited::kError;
  }

  // The memo entry of f's node. A result other than the node itself is alive for the whole call already: it
  // is a pending node moved to results_ (kFinish), or was kept for the same reason by an earlier frame.
  void SetResult(const Frame& f, const UOp* result) {
    if (lease_.has_value()) {
      lease_->Set(f.node->get(), result);
      return;
    }
    MemoTable::Slot* slot = memo_.capacity() == f.memo_capacity ? f.memo : memo_.Probe(f.node->get());
    slot->value = result;
  }

  // One rule application: counts it against the limit and traces it. False (and error_ set) past the limit.
  bool Applied(const UOpPtr& before, const UOpPtr& after, int rule) {
    ++steps_;
    recent_[steps_ % kRecent] = rule;
    if (options_.trace != nullptr) {
      RewriteEvent e{before, after, pm_.rules()[rule]};
      RewriteTrace& trace = *options_.trace;
      trace.rewrites[trace_index_].events.push_back(e);
      if (trace.on_event) trace.on_event(trace.rewrites[trace_index_], e);
    }
    if (options_.max_steps > 0 && steps_ > options_.max_steps) {
      error_ = StepLimitError();
      return false;
    }
    return true;
  }

  // Runs frames until the stack is empty; false (and error_ set) on an error.
  bool Loop() {
    while (!frames_.empty()) {
      Frame& f = frames_.back();
      switch (f.stage) {
        case Stage::kFixpoint: {
          const UOpPtr* cur = f.node;
          chain_.assign(1, cur->get());
          chain_rules_.clear();
          int rule;
          while (UOpPtr r = pm_.Rewrite(*cur, options_.ctx, options_.stats, &rule)) {
            if (!Applied(*cur, r, rule)) return false;
            const UOpPtr* next = Keep(std::move(r));
            chain_rules_.push_back(rule);
            // Only the last kChainScan nodes: longer loops are left to the step limit, keeping this linear.
            for (size_t i = chain_.size() > kChainScan ? chain_.size() - kChainScan : 0; i < chain_.size();
                 ++i) {
              if (chain_[i] == next->get()) {
                error_ = CycleStatus(*next, std::vector<int>(chain_rules_.begin() + i, chain_rules_.end()));
                return false;
              }
            }
            chain_.push_back(next->get());
            cur = next;
            f.via_rule = rule;
          }
          f.cur = cur;
          f.stage = Stage::kSources;
          f.values_base = static_cast<uint32_t>(values_.size());
          break;
        }
        case Stage::kSources: {
          const UOp* n = f.cur->get();
          const size_t ns = n->num_src();
          Visited v = Visited::kValue;
          while (v == Visited::kValue && f.next_src < ns) v = Visit(&n->src()[f.next_src++], -1);
          if (v == Visited::kError) return false;
          if (v == Visited::kFrame) break;  // frames_ grew: f is stale; come back when the source is done
          const size_t base = f.values_base;
          bool changed = false;
          for (size_t i = 0; i < ns; ++i) changed |= values_[base + i] != n->src(i);
          if (changed) {
            new_src_.clear();
            for (size_t i = 0; i < ns; ++i) new_src_.push_back(values_[base + i]->ref());
            values_.resize(base);
            const UOpPtr* rebuilt = Pend(UOp::WithSources(**f.cur, std::move(new_src_)));
            f.stage = Stage::kFinish;
            Visited rv = Visit(rebuilt, f.via_rule);
            if (rv == Visited::kError) return false;
            // The rebuilt node's sources are results, and a result rewrites to itself: visiting them again
            // would only find them in the memo.
            if (rv == Visited::kFrame && !options_.bottom_up) frames_.back().stage = Stage::kRules;
            break;
          }
          values_.resize(base);
          if (options_.bottom_up) {
            SetResult(f, f.cur->get());
            values_.push_back(f.cur->get());
            frames_.pop_back();
            break;
          }
          f.stage = Stage::kRules;
          [[fallthrough]];
        }
        case Stage::kRules: {
          int rule;
          if (UOpPtr r = pm_.Rewrite(*f.cur, options_.ctx, options_.stats, &rule)) {
            if (!Applied(*f.cur, r, rule)) return false;
            const UOpPtr* next = Pend(std::move(r));
            f.stage = Stage::kFinish;
            f.via_rule = rule;
            if (Visit(next, rule) == Visited::kError) return false;
            break;
          }
          SetResult(f, f.cur->get());
          values_.push_back(f.cur->get());
          frames_.pop_back();
          break;
        }
        case Stage::kFinish: {
          // The pending node's result is on top of values_ and stays there as this node's result. A pending
          // node that is its own result is kept; one rewritten further is dropped (see the class comment).
          SetResult(f, values_.back());
          if (values_.back() == pending_.back().get()) {
            results_.push_back(std::move(pending_.back()));
          } else if (!drop_pending_) {
            Keep(std::move(pending_.back()));
          } else {
            dropped_.insert(pending_.back()->hash());
          }
          pending_.pop_back();
          frames_.pop_back();
          break;
        }
      }
    }
    return true;
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
    return absl::FailedPreconditionError(
        absl::StrCat("graph_rewrite", options_.name.empty() ? "" : absl::StrCat(" '", options_.name, "'"),
                     " does not terminate: a ", OpName(node->op()),
                     " node is rewritten back into itself by the rules: ", RuleList(rules)));
  }

  // `node` is being rewritten already: the rewrite loops. The rules on the loop are those applied on the
  // frames from its frame up.
  absl::Status CycleError(const UOpPtr& node, int32_t via_rule) const {
    std::vector<int> rules;
    if (via_rule >= 0) rules.push_back(via_rule);
    for (size_t i = frames_.size(); i-- > 0;) {
      if (frames_[i].via_rule >= 0) rules.push_back(frames_[i].via_rule);
      if (frames_[i].node->get() == node.get()) break;
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
    for (const auto& [rule, n] : sorted)
      names.push_back(absl::StrCat(pm_.rule(rule).ToString(), " (", n, "x)"));
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
  int depth_;
  // The memo: in the nodes when this engine holds the scratch lease, else in memo_.
  std::optional<ScratchLease> lease_;
  // Whether pending nodes are dropped once rewritten (see the class comment); off for the rest of the call
  // once a dropped node is built again.
  bool drop_pending_;
  // The hashes of the pending nodes dropped so far.
  absl::flat_hash_set<size_t> dropped_;
  size_t memo_entries_ = 0;
  MemoTable memo_;
  std::vector<Frame> frames_;
  std::vector<const UOp*> values_;  // results of finished visits, consumed by the frame that asked
  std::deque<UOpPtr> pending_;      // the nodes frames in Stage::kFinish wait for, innermost last
  // Nodes kept until the call ends: bottom-up rule chains, and pending nodes when they are not dropped.
  std::deque<UOpPtr> kept_;
  std::vector<UOpPtr> results_;  // pending nodes that are their own result
  std::vector<const UOp*> chain_;
  std::vector<int> chain_rules_;
  UOp::SrcVector new_src_;
  int64_t steps_ = 0;
  int recent_[kRecent] = {};
  absl::Status error_;
};

thread_local Engine::SizeHints Engine::size_hints;

}  // namespace

absl::StatusOr<UOpPtr> TryGraphRewrite(const UOpPtr& root, const PatternMatcher& pm,
                                       const RewriteOptions& options) {
  if (options.trace == nullptr && RewriteRecorder::Enabled()) [[unlikely]] {
    RewriteOptions recorded = options;
    recorded.trace = RewriteRecorder::TraceForThisThread();
    absl::StatusOr<UOpPtr> out = TryGraphRewrite(root, pm, recorded);
    RewriteRecorder::FinishCall(recorded.trace);
    return out;
  }
  Engine engine(pm, options);
  UOPC_ASSIGN_OR_RETURN(const UOp* r, engine.Run(&root));
  UOpPtr out = r->ref();
  engine.RecordOutput(out);
  return out;
}

UOpPtr GraphRewrite(const UOpPtr& root, const PatternMatcher& pm, const RewriteOptions& options) {
  absl::StatusOr<UOpPtr> r = TryGraphRewrite(root, pm, options);
  if (!r.ok())
    internal::CheckFailed(__FILE__, __LINE__, "TryGraphRewrite(...).ok()", r.status().ToString().c_str());
  return *std::move(r);
}

absl::StatusOr<UOpMap> TryGraphRewriteMap(const UOpPtr& root, const PatternMatcher& pm,
                                          const RewriteOptions& options, const UOpMap* input_map) {
  if (options.trace == nullptr && RewriteRecorder::Enabled()) [[unlikely]] {
    RewriteOptions recorded = options;
    recorded.trace = RewriteRecorder::TraceForThisThread();
    absl::StatusOr<UOpMap> out = TryGraphRewriteMap(root, pm, recorded, input_map);
    RewriteRecorder::FinishCall(recorded.trace);
    return out;
  }
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
    UOPC_ASSIGN_OR_RETURN(const UOp* r, engine.Run(handles.at(order[i])));
    out[order[i]] = r->ref();
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
  if (!r.ok())
    internal::CheckFailed(__FILE__, __LINE__, "TryGraphRewriteMap(...).ok()", r.status().ToString().c_str());
  return *std::move(r);
}

UOpPtr Substitute(const UOpPtr& root, const UOpMap& replacements, absl::string_view name) {
  if (replacements.empty()) return root;
  static const PatternMatcher* const kSubstitute = new PatternMatcher({
      {UPat(AllOps()),
       [](const Match& m) -> UOpPtr {
         const UOpMap& map = m.ctx<const UOpMap>();
         auto it = map.find(m.root().get());
         return it == map.end() ? nullptr : it->second;
       }},
  });
  return GraphRewrite(root, *kSubstitute,
                      {.bottom_up = true, .ctx = const_cast<UOpMap*>(&replacements), .name = name});
}

}  // namespace uopc
