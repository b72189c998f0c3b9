// PatternMatcher: an ordered list of rewrite rules (pattern -> callback), dispatched by the node's op.
//
// API summary (rewrite/upat.h has the patterns, rewrite/graph_rewrite.h applies matchers to whole graphs):
//
//   UPat x = UPat::Var("x"), c1 = UPat::Cvar("c1"), c2 = UPat::Cvar("c2");
//   PatternMatcher pm({
//     {x + 0, [](const Match& m) { return m["x"]; }},  // x+0 -> x
//     {(x * c1) * c2, [](const Match& m) { return m["x"] * (m["c1"] * m["c2"]); }},
//     {x.idiv(x), [](const Match& m) { return m["x"].const_like(1); }},
//     {UPat(Ops::CAST).src(UPat::Cvar("c")).named("root"),
//      [](const Match& m) -> UOpPtr { return m.root().dtype() == m["c"]->dtype() ? m["c"] : nullptr; }},
//   });
//   UOpPtr r = pm.Rewrite(node);  // one step: the first rule whose callback accepts, or null
//   PatternMatcher both = pm + other_pm;  // pm's rules, then other_pm's
//
// - A callback gets a Match: `m["x"]` is the node captured as "x" (a const UOpPtr&, no reference counting),
//   `m.root()` the node being rewritten, `m.ctx<T>()` the context passed to Rewrite/GraphRewrite. It returns
//   the replacement, or null (nullptr) to decline; returning the node itself also declines. When a callback
//   declines, the next way the same pattern matches is tried (other operand orders, other alternatives),
//   then the next rule.
// - Rules are tried in order among those registered for the node's op. A rule is skipped without matching
//   when the node's sources lack an op its pattern requires of a direct source (tinygrad's early_reject).
// - Each rule records where it was written (`file.cc:123`, the line its callback starts on); statistics,
//   traces and the non-termination errors of graph_rewrite name rules that way.
// - A rule is also skipped when the node's scalar type is not among those its root pattern accepts, and,
//   when its root has exactly two source patterns, when the node's two sources fit neither order: by their
//   ops, by the value of a small integer constant a source pattern names (`x + 0`, `x * 1`), and by whether
//   the two sources are one node when both source patterns use one capture name (`x + x`). For a node with
//   two sources and an op with several rules these tests are precomputed: a table by the two sources'
//   classes (op, or which required constant) and their sameness lists the rules to try.
// - Matching allocates nothing (short of a repeated-source pattern on a node with thousands of sources) and
//   touches no reference counts; backtracking happens only where several operand orders or alternatives
//   remain viable. A matcher is immutable and thread-safe. Per-rule statistics (attempts, matches, time) are
//   collected into a RewriteStats when one is passed.
// - Two engines find the same first match (docs/matcher.md): the compiled one (default) narrows a node's
//   candidate rules with one decision structure per root op, built when the matcher is; the interpreted one
//   (the reference) scans the op's rules with per-rule filters. `UOPC_MATCHER=interpreted` in the
//   environment, or SetMatcherEngine, selects the reference. Both fire the same rule with the same captures;
//   they differ only in how many attempts RewriteStats counts.
#ifndef UOPC_REWRITE_PATTERN_MATCHER_H_
#define UOPC_REWRITE_PATTERN_MATCHER_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "rewrite/upat.h"
#include "uop/check.h"
#include "uop/uop.h"

namespace uopc {

class Rule;
class RewriteStats;

// Which engine PatternMatcher::Rewrite uses (see the top of this file).
enum class MatcherEngine : uint8_t { kCompiled, kInterpreted };
// The process-wide default: kCompiled unless the environment says UOPC_MATCHER=interpreted. Setting it while
// other threads rewrite is safe (an atomic) but changes their engine between nodes; set it at start-up.
void SetMatcherEngine(MatcherEngine engine);
MatcherEngine GetMatcherEngine();

namespace internal {
struct CompiledPattern;
struct DecisionTables;
class MatchRun;

// A number a pattern requires of a node's arg (`UPat::Const(dtype, 0)`), compared as tinygrad's `==` does.
struct ConstTest {
  explicit ConstTest(ConstValue v);
  bool Matches(const UOp* u) const;

  ConstValue value;
  // value as an int64 when it is an integer that fits: an integer CONST's arg compares to it directly.
  std::optional<int64_t> int64_value;
};

// A capture name of at most 7 bytes as an integer (its length in the low byte, so never 0); 0 for a longer
// name.
constexpr uint64_t PackCaptureName(absl::string_view name) {
  if (name.empty() || name.size() > 7) return 0;
  uint64_t key = name.size();
  for (size_t i = 0; i < name.size(); ++i) {
    key |= uint64_t{static_cast<unsigned char>(name[i])} << (8 * (i + 1));
  }
  return key;
}

// For tests comparing the engines: when set, called on every rule application any matcher makes (`before`
// rewritten to `after` by `rule`), on the thread that made it. Not for production use: one process-wide
// observer; set it while no other thread rewrites.
using FireObserver = void (*)(void* arg, const Rule& rule, const UOp* before, const UOp* after);
void SetFireObserver(FireObserver observer, void* arg);

// For tests of the matcher: `rule` on `node` with the general search whatever the pattern's shape (the
// results must equal Rule::Apply's), and whether the rule's pattern has a search of its own (it is a single
// node, or at most two levels of fixed sources below the root).
UOpPtr ApplyWithGeneralSearch(const Rule& rule, const UOpPtr& node);
bool HasShapeSpecificSearch(const Rule& rule);

}  // namespace internal

// The captures of one match, handed to a rule's callback.
class Match {
 public:
  // The node captured under `name`; a null UOpPtr when the name is in the pattern but this match did not bind
  // it (a name inside one alternative of UPat::Any). A name the pattern does not contain is a bug in the rule
  // and CHECK-fails.
  const UOpPtr& operator[](absl::string_view name) const {
    // Callbacks look names up all the time: short names compare as one packed integer, folded at compile
    // time for a literal.
    if (const uint64_t key = internal::PackCaptureName(name); key != 0) {
      for (int i = 0; i < num_slots_; ++i) {
        if (slot_keys_[i] == key) return slots_[i] != nullptr ? *slots_[i] : kUnbound;
      }
    }
    return Lookup(name);
  }
  // Whether this match bound `name`.
  bool has(absl::string_view name) const;
  // The node the rule is applied to.
  const UOpPtr& root() const { return *root_; }
  // The context given to Rewrite / GraphRewrite (RewriteOptions::ctx), as a T. CHECK-fails when there is
  // none.
  template <typename T>
  T& ctx() const {
    UOPC_CHECK(ctx_ != nullptr, "this rule needs a ctx, and none was passed");
    return *static_cast<T*>(ctx_);
  }
  void* raw_ctx() const { return ctx_; }
  const Rule& rule() const { return *rule_; }
  // The pattern's capture names, in order of first appearance.
  const std::vector<std::string>& names() const;

 private:
  friend class internal::MatchRun;
  Match(const Rule* rule, const UOpPtr* root, const UOpPtr* const* slots, const uint64_t* slot_keys,
        int num_slots, void* ctx)
      : rule_(rule), root_(root), slots_(slots), slot_keys_(slot_keys), num_slots_(num_slots), ctx_(ctx) {}
  int SlotOf(absl::string_view name) const;
  // operator[] for long names, and the failure for a name the pattern lacks.
  const UOpPtr& Lookup(absl::string_view name) const;
  static const UOpPtr kUnbound;
  const Rule* rule_;
  const UOpPtr* root_;
  const UOpPtr* const* slots_;
  const uint64_t* slot_keys_;  // internal::PackCaptureName of each slot's name
  int num_slots_;
  void* ctx_;
};

// A rule's callback: any callable taking `const Match&` and returning something convertible to UOpPtr. It
// remembers the source line it was written on.
class RuleFn {
 public:
  template <typename F,
            typename = std::enable_if_t<std::is_invocable_v<const std::decay_t<F>&, const Match&> &&
                                        !std::is_same_v<std::decay_t<F>, RuleFn>>>
  RuleFn(F&& f, const char* file = __builtin_FILE(),
         int line = __builtin_LINE())  // NOLINT: implicit by design
      : file_(file), line_(line) {
    using Fn = std::decay_t<F>;
    if constexpr (std::is_empty_v<Fn> && std::is_default_constructible_v<Fn>) {
      // Capture-free lambdas carry no state: call a fresh one.
      invoke_ = [](const void*, const Match& m) -> UOpPtr { return UOpPtr(Fn{}(m)); };
    } else {
      state_ = std::make_shared<const Fn>(std::forward<F>(f));
      invoke_ = [](const void* s, const Match& m) -> UOpPtr {
        return UOpPtr((*static_cast<const Fn*>(s))(m));
      };
    }
  }
  UOpPtr operator()(const Match& m) const { return invoke_(state_.get(), m); }
  const char* file() const { return file_; }
  int line() const { return line_; }

 private:
  UOpPtr (*invoke_)(const void*, const Match&);
  std::shared_ptr<const void> state_;
  const char* file_;
  int line_;
};

// What a PatternMatcher is written as: `{pattern, callback}`.
struct RuleSpec {
  UPat pattern;
  RuleFn fn;
};

// A compiled rule. Rules are shared by every matcher built from them (`a + b` shares a's and b's rules).
class Rule {
 public:
  explicit Rule(RuleSpec spec);
  ~Rule();
  Rule(const Rule&) = delete;
  Rule& operator=(const Rule&) = delete;

  const UPat& pattern() const { return pattern_; }
  const RuleFn& fn() const { return fn_; }
  // "pattern_matcher_test.cc:42": the file's base name and the line the callback starts on.
  const std::string& location() const { return location_; }
  // "pattern_matcher_test.cc:42 ADD{x, CONST(0)}".
  std::string ToString() const;
  // A process-wide number, dense from 0; RewriteStats indexes by it.
  int id() const { return id_; }
  // The ops a node must have for this rule to be tried.
  const OpSet& root_ops() const { return root_ops_; }
  // The ops the node's sources must include (tinygrad's early_reject).
  const OpSet& early_reject() const { return early_reject_; }
  // The scalar types the node's dtype may have (DTypeSet::ScalarTypes of the pattern's root).
  uint16_t root_scalar_types() const { return root_scalar_types_; }
  // For a root with exactly two source patterns (most binary-op rules): the ops each source may have, and
  // whether the pair may match in either order. A node with two sources whose ops fit no order is skipped
  // before matching; this implies the early reject.
  enum class PairKind : uint8_t { kNone, kOrdered, kEitherOrder };
  PairKind pair_kind() const { return pair_kind_; }
  const OpSet& pair_first() const { return pair_first_; }
  const OpSet& pair_second() const { return pair_second_; }
  // For a pair rule: the integral constant source i must equal, when its pattern is a UPat::Const (`x + 0`);
  // and whether the two sources must be one node, when their patterns share a capture name (`x + x`).
  const std::optional<ConstValue>& pair_const(int i) const { return pair_const_[i]; }
  bool pair_same() const { return pair_same_; }
  // This rule alone on `node`: the first accepted callback result, or null.
  UOpPtr Apply(const UOpPtr& node, void* ctx = nullptr) const;

 private:
  friend class internal::MatchRun;
  friend class Match;
  friend bool internal::HasShapeSpecificSearch(const Rule& rule);
  UPat pattern_;
  RuleFn fn_;
  std::string location_;
  int id_;
  OpSet root_ops_;
  OpSet early_reject_;
  uint16_t root_scalar_types_;
  PairKind pair_kind_ = PairKind::kNone;
  OpSet pair_first_, pair_second_;
  std::optional<ConstValue> pair_const_[2];
  bool pair_same_ = false;
  std::unique_ptr<const internal::CompiledPattern> compiled_;
};

// Counters of one rule: attempts (matching tried, after the skips listed at the top of this file), matches
// (callback accepted), time spent in attempts that matched and in all attempts.
struct RuleStats {
  int64_t attempts = 0;
  int64_t matches = 0;
  int64_t match_ns = 0;
  int64_t total_ns = 0;
};

// Per-rule statistics, filled by Rewrite/GraphRewrite calls that are given this object (not thread-safe: one
// object per thread). Rules are kept alive by the stats that mention them.
class RewriteStats {
 public:
  // Zeros for a rule never attempted.
  RuleStats Get(const Rule& rule) const;
  // Sum over all rules.
  RuleStats Total() const;
  // One line per attempted rule, slowest last, like tinygrad's PRINT_MATCH_STATS:
  //   "    12 /     40 --      0.01 /      0.05 ms -- file.cc:123            ADD{x, CONST(0)}"
  std::string Report() const;
  void Clear() { entries_.clear(); }

  // For matchers: the counters of `rule`, created on first use.
  RuleStats& At(const std::shared_ptr<const Rule>& rule) {
    if (static_cast<size_t>(rule->id()) >= entries_.size()) entries_.resize(rule->id() + 1);
    Entry& e = entries_[rule->id()];
    if (e.rule == nullptr) e.rule = rule;
    return e.stats;
  }

 private:
  struct Entry {
    std::shared_ptr<const Rule> rule;
    RuleStats stats;
  };
  std::vector<Entry> entries_;
};

class PatternMatcher {
 public:
  PatternMatcher(std::initializer_list<RuleSpec> rules);  // NOLINT: `PatternMatcher pm({...})` and `= {...}`
  explicit PatternMatcher(std::vector<RuleSpec> rules);
  explicit PatternMatcher(std::vector<std::shared_ptr<const Rule>> rules);

  // This matcher's rules followed by `more`'s.
  PatternMatcher operator+(const PatternMatcher& more) const;

  // One rewrite step on `node`: the result of the first rule (in order) whose pattern matches and whose
  // callback returns a new node; null when none does.
  UOpPtr Rewrite(const UOpPtr& node, void* ctx = nullptr) const;
  // The same, recording statistics into `stats` (when not null) and the index in rules() of the rule that
  // fired into `*fired` (when not null; -1 when nothing fired).
  UOpPtr Rewrite(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired) const;
  // The same with a chosen engine instead of the process-wide one (for tests comparing the two).
  UOpPtr Rewrite(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired, MatcherEngine engine) const;

  // Whether any rule can apply to a node with this op.
  bool HasRulesFor(Ops op) const {
    return offsets_[static_cast<int>(op)] != offsets_[static_cast<int>(op) + 1];
  }

  size_t size() const { return rules_.size(); }
  const Rule& rule(size_t i) const { return *rules_[i]; }
  const std::vector<std::shared_ptr<const Rule>>& rules() const { return rules_; }

 private:
  void BuildDispatch();
  template <bool kStats>
  UOpPtr RewriteImpl(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired) const;
  template <bool kStats>
  UOpPtr RewriteCompiled(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired) const;
  template <bool kStats>
  UOpPtr Attempt(uint32_t entry, internal::MatchRun& run, RewriteStats* stats, int* fired) const;

  // What the dispatch table knows of a node with two sources: their ops, for a CONST source which of the
  // table's constants it equals (-1: none of them), and whether the two are one node.
  struct PairKey {
    Ops op[2];
    int test[2];
    bool same;
  };
  struct Entry {
    // kNone: the ops tinygrad's early reject requires among the sources; pair kinds: the first source's ops.
    OpSet required_or_first;
    OpSet second;  // pair kinds: the second source's ops
    const Rule* rule;
    uint32_t index;  // into rules_
    uint16_t root_scalar_types;
    Rule::PairKind pair_kind;

    // For a pair kind: whether the node's sources fit the rule's two source patterns in an order the rule
    // allows, given `fits(i, which)`: whether the node's source `which` can match source pattern i.
    template <typename SourceFits>
    bool SomeOrderFits(SourceFits fits) const;
    // Whether the node's sources can pass this entry's source filters.
    bool SourcesFit(bool two_sources, Ops op0, Ops op1, const OpSet& src_ops) const;
    // The same for a two-source node described by `key`, also testing the rule's constants and repeated
    // name; `tests` are the constants key.test indexes.
    bool PairFits(const PairKey& key, const std::vector<ConstValue>& tests) const;
  };
  // For an op with several rules, the entries a node with two sources can pass, precomputed for every pair
  // of source classes and whether the sources are one node. A source's class is its op's (ops that every
  // source filter of the op's rules treats alike share one) or, for a CONST equal to one of the constants
  // the op's rules require of a source (`x + 0`, `x * 1`), that constant's.
  struct PairTable {
    uint8_t class_of[kNumOps];  // an op's class as a source
    uint32_t num_op_classes;
    uint32_t num_classes;  // num_op_classes, then one per constant
    uint32_t first_test;   // into pair_tests_: the table's constants
    uint32_t first_cell;  // into pair_cells_; by (class of source 0, class of source 1, sources are one node)

    uint32_t ClassOf(const UOp* src, const internal::ConstTest* tests) const {
      if (src->op() == Ops::CONST) {
        for (uint32_t j = num_op_classes; j < num_classes; ++j) {
          if (tests[j - num_op_classes].Matches(src)) return j;
        }
      }
      return class_of[static_cast<int>(src->op())];
    }
  };
  struct Range {
    uint32_t begin, end;
  };
  void BuildPairTable(int op);

  std::vector<std::shared_ptr<const Rule>> rules_;
  std::vector<Entry> entries_;          // grouped by op
  std::vector<uint32_t> offsets_;       // entries_[offsets_[op] .. offsets_[op + 1]) are op's rules
  std::vector<int32_t> pair_table_of_;  // by op: index into pair_tables_, or -1
  std::vector<PairTable> pair_tables_;
  std::vector<internal::ConstTest> pair_tests_;
  std::vector<Range> pair_cells_;       // into pair_entries_
  std::vector<uint32_t> pair_entries_;  // indices into entries_, in rule order
  // The compiled engine's decision structure (pattern_matcher.cc), immutable once built.
  std::shared_ptr<const internal::DecisionTables> decisions_;
};

}  // namespace uopc

#endif  // UOPC_REWRITE_PATTERN_MATCHER_H_
