#include "rewrite/pattern_matcher.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <limits>
#include <numeric>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "uop/util.h"

namespace uopc {
namespace internal {

// A pattern flattened for matching. Node 0 is the root; each node's children and permutations are index
// ranges.
struct PNode {
  OpSet ops;           // accepted ops (every op when unconstrained; for UPat::Any, the alternatives' union)
  int16_t dtype = -1;  // index into CompiledPattern::dtypes, -1: any
  int16_t arg = -1;    // index into CompiledPattern::args, -1: any
  int8_t slot = -1;    // capture slot, -1: unnamed
  UPat::SrcKind kind = UPat::SrcKind::kNone;
  bool strict_len = false;
  uint16_t required_len = 0;
  uint16_t child_begin = 0;  // into CompiledPattern::children
  uint16_t child_count = 0;
  uint16_t perm_begin = 0;  // into CompiledPattern::perms, perm_count blocks of child_count node ids
  uint16_t perm_count = 0;
};

struct ArgPattern {
  std::optional<Arg> arg;
  std::optional<ConstTest> const_arg;
};

// How a pattern is searched. Most rules are one of the first two shapes; they are matched without the
// general search's pending stack.
enum class Shape : uint8_t {
  kLeaf,     // the root has no source constraint: `UPat(ops).named("x")`
  kShallow,  // the root has at most 3 sources, each a leaf or a node whose at most 3 sources are leaves:
             // `x + 0`, `(x + c1) + c2`, `x * c0 + x * c1`, `c.where(t, f)`
  kGeneral,  // anything else (deeper trees, UPat::Any, repeated sources, allow_any_len)
};

struct CompiledPattern {
  Shape shape = Shape::kGeneral;
  std::vector<PNode> nodes;
  std::vector<uint16_t> children;
  std::vector<uint16_t> perms;
  std::vector<DTypeSet> dtypes;
  std::vector<ArgPattern> args;
  std::vector<std::string> slot_names;
  std::vector<uint64_t> slot_keys;  // PackCaptureName of slot_names
};

namespace {

constexpr int kMaxSlots = 32;

bool SameConst(const std::optional<ConstValue>& a, const std::optional<ConstValue>& b) {
  if (a.has_value() != b.has_value()) return false;
  return !a.has_value() || a->Identical(*b);
}

// Structural equality: two patterns that match exactly the same way (so permutations that only swap them are
// the same permutation, like tinygrad's all_same on its cached UPat.var objects).
bool SamePattern(const UPat& a, const UPat& b) {
  const UPatNode& x = a.node();
  const UPatNode& y = b.node();
  if (&x == &y) return true;
  if (x.any_op != y.any_op || (!x.any_op && !(x.ops == y.ops)) || !(x.dtype == y.dtype) || x.arg != y.arg ||
      !SameConst(x.const_arg, y.const_arg) || x.name != y.name || x.src_kind != y.src_kind ||
      x.allow_any_len != y.allow_any_len ||
      x.custom_early_reject.has_value() != y.custom_early_reject.has_value() ||
      (x.custom_early_reject && !(*x.custom_early_reject == *y.custom_early_reject)) ||
      x.src.size() != y.src.size()) {
    return false;
  }
  for (size_t i = 0; i < x.src.size(); ++i) {
    if (!SamePattern(x.src[i], y.src[i])) return false;
  }
  return true;
}

// The scalar types a node matching `p` can have, as DTypeSet::ScalarTypes bits.
uint16_t PossibleScalarTypes(const UPat& p) {
  const UPatNode& n = p.node();
  if (n.src_kind != UPat::SrcKind::kAlternatives) return n.dtype.ScalarTypes();
  uint16_t all = 0;
  for (const UPat& alt : n.src) all |= PossibleScalarTypes(alt);
  return all;
}

// The ops a node matching `p` can have (an over-approximation for UPat::Any).
OpSet PossibleOps(const UPat& p) {
  const UPatNode& n = p.node();
  if (n.src_kind == UPat::SrcKind::kAlternatives) {
    OpSet all;
    for (const UPat& alt : n.src) all = all | PossibleOps(alt);
    return all;
  }
  return n.any_op ? AllOps() : n.ops;
}

class Compiler {
 public:
  explicit Compiler(CompiledPattern& out) : out_(out) {}

  uint16_t Compile(const UPat& p) {
    const UPatNode& n = p.node();
    uint16_t id = static_cast<uint16_t>(out_.nodes.size());
    UOPC_CHECK(out_.nodes.size() < 0xffff, "pattern too large");
    out_.nodes.emplace_back();
    PNode pn;
    pn.ops = PossibleOps(p);
    pn.kind = n.src_kind;
    if (!n.name.empty()) pn.slot = SlotFor(n.name);
    if (n.src_kind != UPat::SrcKind::kAlternatives) {
      if (!n.dtype.any()) {
        pn.dtype = static_cast<int16_t>(out_.dtypes.size());
        out_.dtypes.push_back(n.dtype);
      }
      if (n.arg || n.const_arg) {
        pn.arg = static_cast<int16_t>(out_.args.size());
        ArgPattern ap{n.arg, std::nullopt};
        if (n.const_arg) ap.const_arg.emplace(*n.const_arg);
        out_.args.push_back(std::move(ap));
      }
      bool repeat_or_none = n.src_kind == UPat::SrcKind::kNone || n.src_kind == UPat::SrcKind::kRepeat;
      pn.strict_len = !(n.allow_any_len || repeat_or_none);
      pn.required_len = repeat_or_none ? 0 : static_cast<uint16_t>(n.src.size());
    }
    std::vector<uint16_t> kids;
    for (const UPat& s : n.src) kids.push_back(Compile(s));
    pn.child_begin = static_cast<uint16_t>(out_.children.size());
    pn.child_count = static_cast<uint16_t>(kids.size());
    out_.children.insert(out_.children.end(), kids.begin(), kids.end());
    if (n.src_kind == UPat::SrcKind::kAnyOrder) AddPermutations(n.src, kids, pn);
    out_.nodes[id] = pn;
    return id;
  }

 private:
  int8_t SlotFor(const std::string& name) {
    for (size_t i = 0; i < out_.slot_names.size(); ++i) {
      if (out_.slot_names[i] == name) return static_cast<int8_t>(i);
    }
    UOPC_CHECK(out_.slot_names.size() < kMaxSlots, "a pattern may name at most 32 nodes");
    out_.slot_names.push_back(name);
    out_.slot_keys.push_back(PackCaptureName(name));
    return static_cast<int8_t>(out_.slot_names.size() - 1);
  }

  // itertools.permutations order, skipping orders that only swap structurally equal patterns.
  void AddPermutations(const std::vector<UPat>& src, const std::vector<uint16_t>& kids, PNode& pn) {
    size_t k = src.size();
    UOPC_CHECK(k <= 6, "src_any_order takes at most 6 sources");
    // Class of each source: the first index with an equal pattern.
    std::vector<size_t> cls(k);
    for (size_t i = 0; i < k; ++i) {
      cls[i] = i;
      for (size_t j = 0; j < i; ++j) {
        if (SamePattern(src[i], src[j])) {
          cls[i] = cls[j];
          break;
        }
      }
    }
    std::vector<size_t> order(k);
    std::iota(order.begin(), order.end(), 0);
    std::vector<std::vector<size_t>> seen;
    pn.perm_begin = static_cast<uint16_t>(out_.perms.size());
    do {
      std::vector<size_t> classes;
      for (size_t i : order) classes.push_back(cls[i]);
      if (std::find(seen.begin(), seen.end(), classes) != seen.end()) continue;
      seen.push_back(classes);
      for (size_t i : order) out_.perms.push_back(kids[i]);
      ++pn.perm_count;
    } while (std::next_permutation(order.begin(), order.end()));
  }

  CompiledPattern& out_;
};

// A node whose sources are a fixed tuple (exact or any order) of at most 3 patterns.
bool HasFewFixedSources(const PNode& p) {
  return (p.kind == UPat::SrcKind::kTuple || p.kind == UPat::SrcKind::kAnyOrder) && p.strict_len &&
         p.child_count >= 1 && p.child_count <= 3;
}

Shape ShapeOf(const CompiledPattern& cp) {
  const PNode& root = cp.nodes[0];
  if (root.kind == UPat::SrcKind::kNone) return Shape::kLeaf;
  if (!HasFewFixedSources(root)) return Shape::kGeneral;
  auto is_leaf = [&](uint16_t i) { return cp.nodes[i].kind == UPat::SrcKind::kNone; };
  for (uint16_t i = 0; i < root.child_count; ++i) {
    const PNode& c = cp.nodes[cp.children[root.child_begin + i]];
    if (c.kind == UPat::SrcKind::kNone) continue;
    if (!HasFewFixedSources(c)) return Shape::kGeneral;
    for (uint16_t j = 0; j < c.child_count; ++j) {
      if (!is_leaf(cp.children[c.child_begin + j])) return Shape::kGeneral;
    }
  }
  return Shape::kShallow;
}

// tinygrad's early_reject: the single ops of the root's direct source patterns.
OpSet EarlyReject(const UPat& root) {
  const UPatNode& n = root.node();
  if (n.custom_early_reject) return *n.custom_early_reject;
  OpSet ops;
  if (n.src_kind == UPat::SrcKind::kTuple || n.src_kind == UPat::SrcKind::kAnyOrder ||
      n.src_kind == UPat::SrcKind::kRepeat) {
    for (const UPat& s : n.src) {
      const UPatNode& c = s.node();
      if (c.src_kind != UPat::SrcKind::kAlternatives && !c.any_op && c.ops.size() == 1) ops = ops | c.ops;
    }
  }
  return ops;
}

// The value `p` requires of a CONST, when p is a UPat::Const whose value is a small integer (so that a
// constant equals at most one of several such values, and equals it exactly when it matches p).
std::optional<ConstValue> RequiredSmallConst(const UPat& p) {
  const UPatNode& n = p.node();
  if (n.src_kind == UPat::SrcKind::kAlternatives || n.any_op || !(n.ops == OpSet{Ops::CONST}) ||
      !n.const_arg || n.arg) {
    return std::nullopt;
  }
  constexpr double kLimit = 1 << 30;
  const ConstValue& v = *n.const_arg;
  const double f = v.AsFloat();
  if (!(f >= -kLimit && f <= kLimit) || (v.is_float() && f != static_cast<double>(static_cast<int64_t>(f)))) {
    return std::nullopt;
  }
  return v;
}

bool IsNumber(const Arg& a) { return a.is_int() || a.is_float() || a.is_bool(); }

ConstValue NumberOf(const Arg& a) {
  if (a.is_bool()) return ConstValue::Bool(a.as_bool());
  if (a.is_float()) return ConstValue::Float(a.as_float());
  return ConstValue::Int(a.as_int());
}

// Python's `==` on args: numbers compare by value across int, float and bool; tuples element by element.
bool PyArgEquals(const Arg& pat, const Arg& val) {
  if (IsNumber(pat) && IsNumber(val)) return NumberOf(pat) == NumberOf(val);
  if (pat.is_tuple() && val.is_tuple()) {
    if (pat.size() != val.size()) return false;
    for (size_t i = 0; i < pat.size(); ++i) {
      if (!PyArgEquals(pat[i], val[i])) return false;
    }
    return true;
  }
  return pat == val;
}

bool ArgMatches(const ArgPattern& ap, const UOp* u) {
  return ap.const_arg ? ap.const_arg->Matches(u) : PyArgEquals(*ap.arg, u->arg());
}

absl::string_view BaseName(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

std::atomic<int> next_rule_id{0};

}  // namespace

ConstTest::ConstTest(ConstValue v) : value(v) {
  if (v.is_int() && v.AsInt() >= std::numeric_limits<int64_t>::min() &&
      v.AsInt() <= std::numeric_limits<int64_t>::max()) {
    int64_value = static_cast<int64_t>(v.AsInt());
  }
}

bool ConstTest::Matches(const UOp* u) const {
  const Arg& a = u->arg();
  // An integer CONST holds its value as an int64 (a uint64 one as its bit pattern: that takes the long way).
  if (int64_value && u->op() == Ops::CONST && a.is_int() && u->dtype().scalar_type() != ScalarType::kUInt64) {
    return a.as_int() == *int64_value;
  }
  if (!IsNumber(a)) return false;
  return (u->op() == Ops::CONST ? ConstFromArg(a, u->dtype()) : NumberOf(a)) == value;
}

// ---- the compiled engine's decision structure ----
//
// For each root op, the op's rules (in order) are the bits of a mask, and tables give, for what a node shows,
// the rules whose pattern can match such a node: by its scalar type, by its number of sources, and by its
// sources' classes. A source's class says what every rule of the op could test of it at once: its op, for a
// CONST which of the small constants the rules name it equals, and which of the ops the rules require among
// a source's own sources it has (`(x + c1) + c2` needs an ADD source with a CONST source). A two-source node
// (most ALU nodes) is looked up by both sources' classes together and whether they are one node, which is
// exact for commutative patterns; other nodes source by source. A node's candidates are the AND of those
// masks: each test is done once per node, however many rules make it. Every mask is a necessary condition of
// its rules' patterns, so a rule left out could not have matched; the candidates are then tried in rule order
// by the interpreted engine's search, which keeps first-match-wins, the operand orders, the captures and the
// callbacks' declines exactly.

struct OpDecision {
  uint32_t first_entry = 0;  // index in PatternMatcher::entries_ of the op's first rule
  uint32_t words = 0;        // 64-bit words of a mask
  // Tables of masks, `words` words per value; an empty table does not discriminate.
  std::vector<uint64_t> by_scalar;     // by the node's scalar type
  std::vector<uint64_t> by_num_src;    // by min(number of sources, 4)
  std::vector<uint64_t> by_pair;       // two sources: by (class 0, class 1, one node)
  std::vector<uint64_t> by_source[3];  // other counts: by the class of source i
  std::vector<uint64_t> all;           // every rule of the op
  std::vector<uint64_t> early_reject;  // rules whose early-reject set must be checked one by one
  // A source's class: class_of[(raw op) << child_bits | child mask], where the raw op is its op or, for a
  // CONST equal to consts[k], kNumOps + k, and the child mask has bit b when one of its sources has an op
  // whose child_bit is b (all bits when it has more than three sources).
  std::vector<ConstTest> consts;
  uint8_t child_bit[kNumOps];  // 0xff: an op no rule looks for among a source's sources
  uint32_t child_bits = 0;
  std::vector<uint16_t> class_of;
  uint32_t num_classes = 0;

  uint32_t ClassOf(const UOp* s) const {
    uint32_t raw = static_cast<uint32_t>(s->op());
    if (s->op() == Ops::CONST) {
      for (size_t k = 0; k < consts.size(); ++k) {
        if (consts[k].Matches(s)) {
          raw = kNumOps + static_cast<uint32_t>(k);
          break;
        }
      }
    }
    uint32_t mask = 0;
    if (child_bits != 0) {
      const size_t n = s->num_src();
      if (n > 3) {
        mask = (1u << child_bits) - 1;
      } else {
        for (size_t i = 0; i < n; ++i) {
          const uint8_t bit = child_bit[static_cast<int>(s->src(i)->op())];
          if (bit != 0xff) mask |= 1u << bit;
        }
      }
    }
    return class_of[raw << child_bits | mask];
  }
};

struct DecisionTables {
  static constexpr uint32_t kMaxWords = 8;  // more than 512 rules for one op: the interpreted engine
  static constexpr int32_t kNoRules = -1;
  static constexpr int32_t kInterpret = -2;
  int32_t of_op[kNumOps];  // index into ops, or kNoRules / kInterpret
  std::vector<OpDecision> ops;
};

namespace {

constexpr int kMaxPositions = 3;  // sources the per-source tables look at
constexpr uint32_t kMaxChildBits = 4;

// The patterns that may sit at source position i of a node matched by `p` (an empty list with
// `*unconstrained` set when p does not constrain that source).
std::vector<UPat> PatternsAt(const UPat& p, int i, bool* unconstrained) {
  const UPatNode& n = p.node();
  *unconstrained = false;
  switch (n.src_kind) {
    case UPat::SrcKind::kNone:
    case UPat::SrcKind::kAlternatives:
      break;
    case UPat::SrcKind::kRepeat:
      return {n.src[0]};
    case UPat::SrcKind::kTuple:
      if (static_cast<size_t>(i) < n.src.size()) return {n.src[i]};
      break;
    case UPat::SrcKind::kAnyOrder:
      if (static_cast<size_t>(i) < n.src.size()) return n.src;
      break;
  }
  *unconstrained = true;
  return {};
}

// Whether a node with `num_src` sources (4: four or more) can match p's source count.
bool CountFits(const UPat& p, int num_src) {
  const UPatNode& n = p.node();
  if (n.src_kind != UPat::SrcKind::kTuple && n.src_kind != UPat::SrcKind::kAnyOrder) return true;
  const int want = static_cast<int>(n.src.size());
  if (n.allow_any_len) return num_src >= want || (num_src == 4 && want >= 4);
  return num_src == 4 ? want >= 4 : num_src == want;
}

// What one source pattern requires of a source, as far as a source's class tells.
struct SourceTest {
  OpSet ops;
  std::optional<ConstValue> small_const;  // a CONST must equal this (RequiredSmallConst)
  std::vector<OpSet> child_ops;           // for each: some source of the source has one of these ops

  static SourceTest Of(const UPat& q) {
    SourceTest t;
    t.ops = PossibleOps(q);
    t.small_const = RequiredSmallConst(q);
    const UPatNode& n = q.node();
    if (n.src_kind == UPat::SrcKind::kTuple || n.src_kind == UPat::SrcKind::kAnyOrder) {
      for (const UPat& g : n.src) {
        const UPatNode& gn = g.node();
        if (gn.src_kind != UPat::SrcKind::kAlternatives && !gn.any_op) t.child_ops.push_back(gn.ops);
      }
    }
    return t;
  }
  static SourceTest Any() {
    SourceTest t;
    t.ops = AllOps();
    return t;
  }
};

// Which sources a rule accepts at one place: a source fits when one of the tests passes.
using SourceTests = std::vector<SourceTest>;

// One rule's pattern, summarized for the tables.
struct RuleSummary {
  bool count_fits[5];
  SourceTests at[kMaxPositions];  // every pattern that may sit at source position i
  SourceTests pair[2];            // pair rules: each of the two source patterns
};

RuleSummary Summarize(const Rule& rule) {
  RuleSummary sum;
  const UPat& p = rule.pattern();
  for (int n = 0; n < 5; ++n) sum.count_fits[n] = CountFits(p, n);
  for (int i = 0; i < kMaxPositions; ++i) {
    bool unconstrained;
    for (const UPat& q : PatternsAt(p, i, &unconstrained)) sum.at[i].push_back(SourceTest::Of(q));
    if (unconstrained) sum.at[i].push_back(SourceTest::Any());
  }
  if (rule.pair_kind() != Rule::PairKind::kNone) {
    for (int k = 0; k < 2; ++k) sum.pair[k].push_back(SourceTest::Of(p.node().src[k]));
  }
  return sum;
}

// A source's class as the tables see it: raw op (kNumOps + k: a CONST equal to consts[k]) and child mask.
struct SourceClass {
  uint32_t raw;
  uint32_t child_mask;
};

// A SourceTest with its source-op requirements as child-mask bits (those the mask can read).
struct ReadyTest {
  OpSet ops;
  std::optional<ConstValue> small_const;
  std::vector<uint32_t> child_bits;  // for each: the mask must have one of these bits
};
using ReadyTests = std::vector<ReadyTest>;

ReadyTests Ready(const SourceTests& tests, const OpDecision& d) {
  ReadyTests out;
  for (const SourceTest& t : tests) {
    ReadyTest r{t.ops, t.small_const, {}};
    for (const OpSet& want : t.child_ops) {
      uint32_t bits = 0;
      bool readable = true;
      want.ForEach([&](Ops o) {
        const uint8_t b = d.child_bit[static_cast<int>(o)];
        if (b == 0xff) {
          readable = false;
        } else {
          bits |= 1u << b;
        }
      });
      if (readable) r.child_bits.push_back(bits);
    }
    out.push_back(std::move(r));
  }
  return out;
}

bool Passes(const ReadyTest& t, const SourceClass& c, const std::vector<ConstValue>& consts) {
  const Ops op = c.raw < kNumOps ? static_cast<Ops>(c.raw) : Ops::CONST;
  if (!t.ops.contains(op)) return false;
  if (op == Ops::CONST && t.small_const) {
    if (c.raw < kNumOps || !(consts[c.raw - kNumOps] == *t.small_const)) return false;
  }
  for (uint32_t bits : t.child_bits) {
    if ((c.child_mask & bits) == 0) return false;
  }
  return true;
}

std::shared_ptr<const DecisionTables> BuildDecisionTables(const std::vector<const Rule*>& rules,
                                                          const std::vector<uint32_t>& offsets) {
  auto tables = std::make_shared<DecisionTables>();
  absl::flat_hash_map<const Rule*, RuleSummary> summaries;
  for (const Rule* r : rules) {
    if (!summaries.contains(r)) summaries.emplace(r, Summarize(*r));
  }
  for (int op = 0; op < kNumOps; ++op) {
    const uint32_t begin = offsets[op], end = offsets[op + 1];
    const uint32_t count = end - begin;
    if (count == 0) {
      tables->of_op[op] = DecisionTables::kNoRules;
      continue;
    }
    const uint32_t words = (count + 63) / 64;
    if (words > DecisionTables::kMaxWords) {
      tables->of_op[op] = DecisionTables::kInterpret;
      continue;
    }
    OpDecision d;
    d.first_entry = begin;
    d.words = words;
    d.all.assign(words, 0);
    d.early_reject.assign(words, 0);
    std::vector<const RuleSummary*> sum(count);
    for (uint32_t r = 0; r < count; ++r) {
      d.all[r / 64] |= uint64_t{1} << (r % 64);
      const Rule& rule = *rules[begin + r];
      sum[r] = &summaries.at(&rule);
      if (rule.pair_kind() == Rule::PairKind::kNone && !rule.early_reject().empty()) {
        d.early_reject[r / 64] |= uint64_t{1} << (r % 64);
      }
    }
    // The small constants and the sources' source ops the rules test, each once; the ops most often
    // required among a source's sources get the child bits.
    std::vector<ConstValue> consts;
    std::vector<int> wanted(kNumOps, 0);
    for (uint32_t r = 0; r < count; ++r) {
      for (const SourceTests* tests :
           {&sum[r]->at[0], &sum[r]->at[1], &sum[r]->at[2], &sum[r]->pair[0], &sum[r]->pair[1]}) {
        for (const SourceTest& t : *tests) {
          if (t.small_const && std::find(consts.begin(), consts.end(), *t.small_const) == consts.end()) {
            consts.push_back(*t.small_const);
          }
          for (const OpSet& want : t.child_ops) {
            if (want.size() <= 2) want.ForEach([&](Ops o) { ++wanted[static_cast<int>(o)]; });
          }
        }
      }
    }
    for (const ConstValue& v : consts) d.consts.emplace_back(v);
    std::fill(std::begin(d.child_bit), std::end(d.child_bit), 0xff);
    for (uint32_t b = 0; b < kMaxChildBits; ++b) {
      const int best = static_cast<int>(std::max_element(wanted.begin(), wanted.end()) - wanted.begin());
      if (wanted[best] == 0) break;
      d.child_bit[best] = static_cast<uint8_t>(b);
      wanted[best] = 0;
      d.child_bits = b + 1;
    }
    // Each rule's tests at source positions 0..2 and of its pair patterns, as indices into the op's distinct
    // tests (rules share most of them: `x`, `c`, `x * c`).
    std::vector<ReadyTest> distinct;
    std::vector<std::array<std::vector<uint32_t>, kMaxPositions + 2>> ready(count);
    auto ids_of = [&](const SourceTests& tests) {
      std::vector<uint32_t> ids;
      for (ReadyTest& t : Ready(tests, d)) {
        size_t k = 0;
        while (k < distinct.size() &&
               !(distinct[k].ops == t.ops && SameConst(distinct[k].small_const, t.small_const) &&
                 distinct[k].child_bits == t.child_bits)) {
          ++k;
        }
        if (k == distinct.size()) distinct.push_back(std::move(t));
        ids.push_back(static_cast<uint32_t>(k));
      }
      return ids;
    };
    for (uint32_t r = 0; r < count; ++r) {
      for (int i = 0; i < kMaxPositions; ++i) ready[r][i] = ids_of(sum[r]->at[i]);
      for (int k = 0; k < 2; ++k) ready[r][kMaxPositions + k] = ids_of(sum[r]->pair[k]);
    }
    // Classes: raw source classes every distinct test treats alike share one; passes[class][test]. A test
    // asks of the raw op (op and constant) and, separately, of the child mask, so a raw class's signature is
    // the AND of the two halves' signatures, each computed once instead of once per raw class.
    const uint32_t num_raw_ops = kNumOps + static_cast<uint32_t>(consts.size());
    const uint32_t num_masks = 1u << d.child_bits;
    const uint32_t num_raw = num_raw_ops << d.child_bits;
    const size_t test_words = (distinct.size() + 63) / 64;
    std::vector<uint64_t> op_passes(num_raw_ops * test_words, 0), mask_passes(num_masks * test_words, 0);
    for (size_t t = 0; t < distinct.size(); ++t) {
      const uint64_t bit = uint64_t{1} << (t % 64);
      const ReadyTest op_part{distinct[t].ops, distinct[t].small_const, {}};
      for (uint32_t raw = 0; raw < num_raw_ops; ++raw) {
        if (Passes(op_part, SourceClass{raw, 0}, consts)) op_passes[raw * test_words + t / 64] |= bit;
      }
      const ReadyTest mask_part{AllOps(), std::nullopt, distinct[t].child_bits};
      for (uint32_t mask = 0; mask < num_masks; ++mask) {
        if (Passes(mask_part, SourceClass{0, mask}, consts)) mask_passes[mask * test_words + t / 64] |= bit;
      }
    }
    d.class_of.assign(num_raw, 0);
    std::vector<std::vector<uint64_t>> passes;  // per class, one bit per distinct test
    {
      absl::flat_hash_map<std::vector<uint64_t>, uint16_t> class_of_signature;
      std::vector<uint64_t> signature(test_words);
      for (uint32_t v = 0; v < num_raw; ++v) {
        const uint64_t* by_op = &op_passes[(v >> d.child_bits) * test_words];
        const uint64_t* by_mask = &mask_passes[(v & (num_masks - 1)) * test_words];
        for (size_t w = 0; w < test_words; ++w) signature[w] = by_op[w] & by_mask[w];
        auto [it, inserted] = class_of_signature.try_emplace(signature, passes.size());
        if (inserted) passes.push_back(signature);
        d.class_of[v] = it->second;
      }
    }
    const uint32_t n = static_cast<uint32_t>(passes.size());
    d.num_classes = n;
    // For each rule and place (source positions, then the pair patterns): the classes that pass one of its
    // tests there, as a bit per class, so that filling the tables below is bit lookups.
    const size_t class_words = (n + 63) / 64;
    std::vector<uint64_t> fits_at(size_t{count} * (kMaxPositions + 2) * class_words, 0);
    for (uint32_t r = 0; r < count; ++r) {
      for (int place = 0; place < kMaxPositions + 2; ++place) {
        uint64_t* bits = &fits_at[(size_t{r} * (kMaxPositions + 2) + place) * class_words];
        for (uint32_t cls = 0; cls < n; ++cls) {
          for (uint32_t id : ready[r][place]) {
            if ((passes[cls][id / 64] >> (id % 64) & 1) != 0) {
              bits[cls / 64] |= uint64_t{1} << (cls % 64);
              break;
            }
          }
        }
      }
    }
    // Whether a source of class `cls` passes one of rule r's tests at `place`.
    auto some_passes = [&](uint32_t r, int place, uint32_t cls) {
      return (fits_at[(size_t{r} * (kMaxPositions + 2) + place) * class_words + cls / 64] >> (cls % 64) &
              1) != 0;
    };
    // A table of `num_values` masks, or none when every value keeps every rule.
    auto table = [&](uint32_t num_values, auto fits) {
      std::vector<uint64_t> t(size_t{num_values} * words, 0);
      bool discriminates = false;
      for (uint32_t v = 0; v < num_values; ++v) {
        for (uint32_t r = 0; r < count; ++r) {
          if (fits(r, v)) {
            t[v * words + r / 64] |= uint64_t{1} << (r % 64);
          } else {
            discriminates = true;
          }
        }
      }
      if (!discriminates) t.clear();
      return t;
    };
    d.by_scalar = table(kNumScalarTypes, [&](uint32_t r, uint32_t v) {
      return (rules[begin + r]->root_scalar_types() >> v & 1) != 0;
    });
    d.by_num_src = table(5, [&](uint32_t r, uint32_t v) { return sum[r]->count_fits[v]; });
    if (n <= 256) {
      d.by_pair = table(n * n * 2, [&](uint32_t r, uint32_t key) {
        const uint32_t c0 = key / 2 / n, c1 = key / 2 % n;
        const bool same = key % 2 == 1;
        const Rule& rule = *rules[begin + r];
        if (!sum[r]->count_fits[2]) return false;
        auto fits = [&](int k, uint32_t c) { return some_passes(r, kMaxPositions + k, c); };
        switch (rule.pair_kind()) {
          case Rule::PairKind::kNone:
            return some_passes(r, 0, c0) && some_passes(r, 1, c1);
          case Rule::PairKind::kOrdered:
            return (same || !rule.pair_same()) && fits(0, c0) && fits(1, c1);
          case Rule::PairKind::kEitherOrder:
            return (same || !rule.pair_same()) &&
                   ((fits(0, c0) && fits(1, c1)) || (fits(0, c1) && fits(1, c0)));
        }
        return true;
      });
    }
    for (int i = 0; i < kMaxPositions; ++i) {
      d.by_source[i] = table(n, [&](uint32_t r, uint32_t v) { return some_passes(r, i, v); });
    }
    tables->of_op[op] = static_cast<int32_t>(tables->ops.size());
    tables->ops.push_back(std::move(d));
  }
  return tables;
}

}  // namespace

// One attempt to match a rule's pattern against a node, calling the callback on every match until it accepts.
//
// Matching is a depth-first search over a stack of pending (pattern, node) pairs. Deterministic steps (exact
// tuples, repeated sources) run in a loop; only real choices (several viable operand orders or alternatives)
// recurse, each on a copy of the pending stack, undoing their captures through a trail when they fail.
// Matches are found in tinygrad's order: permutations in itertools order, the first source's choices
// outermost.
//
// One MatchRun serves every rule tried on a node: each Run leaves the captures empty again.
class MatchRun {
 public:
  MatchRun(const UOpPtr& root, void* ctx) : root_(root), ctx_(ctx) {}

  UOpPtr Run(const Rule& rule) {
    rule_ = &rule;
    cp_ = rule.compiled_.get();
    // Slots are cleared once per MatchRun, as far as the rules tried need; each Run leaves them cleared.
    for (; cleared_ < cp_->slot_names.size(); ++cleared_) slots_[cleared_] = nullptr;
    switch (cp_->shape == Shape::kShallow && general_only_ ? Shape::kGeneral : cp_->shape) {
      case Shape::kLeaf:
        // A pattern of one node (`UPat(ops).named("x")`, common for rules that look at every node): no
        // search.
        if (Head(cp_->nodes[0], &root_)) Fire();
        break;
      case Shape::kShallow:
        MatchShallow();
        break;
      case Shape::kGeneral:
        stack_[0] = Pending{0, &root_};
        Solve(0, 1);
        break;
    }
    Undo(0);
    return std::move(result_);
  }

  // For tests: search shallow patterns the general way.
  void set_general_only() { general_only_ = true; }

 private:
  struct Pending {
    uint32_t pat;
    const UOpPtr* node;
  };
  static constexpr size_t kInlineStack = 32;

  // Makes stack_[0, n) addressable. Only huge repeated-source nodes (a SINK of thousands) leave the inline
  // array.
  void EnsureSize(size_t n) {
    if (n <= capacity_) return;
    size_t cap = std::max(n, 2 * capacity_);
    if (stack_ == inline_) {
      heap_.resize(cap);
      std::copy_n(inline_, capacity_, heap_.begin());
    } else {
      heap_.resize(cap);
    }
    stack_ = heap_.data();
    capacity_ = cap;
  }

  void Undo(int mark) {
    while (ntrail_ > mark) slots_[trail_[--ntrail_]] = nullptr;
  }

  // Tries the pending items stack_[base, base + n) under the current captures.
  bool Solve(size_t base, size_t n) {
    const CompiledPattern& cp = *cp_;
    const PNode* nodes = cp.nodes.data();
    const uint16_t* children = cp.children.data();
    while (n > 0) {
      const Pending t = stack_[base + n - 1];
      --n;
      const PNode& p = nodes[t.pat];
      const UOp* u = t.node->get();
      const Ops op = u->op();
      // (An alternatives node constrains only its op and name here; its alternatives do the rest.)
      if (!Head(p, t.node)) return false;
      if (p.kind == UPat::SrcKind::kAlternatives) {
        int viable = 0;
        uint16_t only = 0;
        for (uint16_t i = 0; i < p.child_count; ++i) {
          uint16_t c = children[p.child_begin + i];
          if (nodes[c].ops.contains(op)) {
            ++viable;
            only = c;
          }
        }
        if (viable == 0) return false;
        if (viable == 1) {
          stack_[base + n++] = Pending{only, t.node};
          continue;
        }
        for (uint16_t i = 0; i < p.child_count; ++i) {
          uint16_t c = children[p.child_begin + i];
          if (!nodes[c].ops.contains(op)) continue;
          size_t nb = base + n;
          EnsureSize(nb + n + 1);
          std::copy_n(stack_ + base, n, stack_ + nb);
          stack_[nb + n] = Pending{c, t.node};
          int mark = ntrail_;
          if (Solve(nb, n + 1)) return true;
          Undo(mark);
        }
        return false;
      }
      const size_t ns = u->num_src();
      const UOpPtr* src = u->src().data();
      switch (p.kind) {
        case UPat::SrcKind::kNone:
        case UPat::SrcKind::kAlternatives:
          break;
        case UPat::SrcKind::kTuple: {
          // Every source's op first: cheap, and most failures show here.
          const size_t k = p.child_count;
          for (size_t i = 0; i < k; ++i) {
            if (!nodes[children[p.child_begin + i]].ops.contains(src[i]->op())) return false;
          }
          EnsureSize(base + n + k);
          for (size_t i = k; i-- > 0;) {
            if (!MatchOrPush(children[p.child_begin + i], &src[i], base, n)) return false;
          }
          break;
        }
        case UPat::SrcKind::kRepeat: {
          uint16_t c = children[p.child_begin];
          for (size_t i = 0; i < ns; ++i) {
            if (!nodes[c].ops.contains(src[i]->op())) return false;
          }
          EnsureSize(base + n + ns);
          for (size_t i = ns; i-- > 0;) stack_[base + n++] = Pending{c, &src[i]};
          break;
        }
        case UPat::SrcKind::kAnyOrder: {
          const size_t k = p.child_count;
          const uint16_t* perms = cp.perms.data() + p.perm_begin;
          auto viable = [&](int j) {
            for (size_t i = 0; i < k; ++i) {
              if (!nodes[perms[j * k + i]].ops.contains(src[i]->op())) return false;
            }
            return true;
          };
          int count = 0, first = -1;
          for (int j = 0; j < p.perm_count && count < 2; ++j) {
            if (viable(j)) {
              ++count;
              if (first < 0) first = j;
            }
          }
          if (count == 0) return false;
          if (count == 1) {
            EnsureSize(base + n + k);
            for (size_t i = k; i-- > 0;) {
              if (!MatchOrPush(perms[first * k + i], &src[i], base, n)) return false;
            }
            break;
          }
          for (int j = first; j < p.perm_count; ++j) {
            if (!viable(j)) continue;
            size_t nb = base + n;
            EnsureSize(nb + n + k);
            std::copy_n(stack_ + base, n, stack_ + nb);
            size_t m = n;
            for (size_t i = k; i-- > 0;) stack_[nb + m++] = Pending{perms[j * k + i], &src[i]};
            int mark = ntrail_;
            if (Solve(nb, m)) return true;
            Undo(mark);
          }
          return false;
        }
      }
    }
    return Fire();
  }

  // Whether *node passes p's own tests (op, name, dtype, arg, number of sources); binds p's name.
  ABSL_ATTRIBUTE_ALWAYS_INLINE bool Head(const PNode& p, const UOpPtr* node) {
    const UOp* u = node->get();
    if (!p.ops.contains(u->op())) return false;
    if (p.slot >= 0 && !Bind(p.slot, node)) return false;
    if (p.dtype >= 0 && !cp_->dtypes[p.dtype].Matches(u->dtype())) return false;
    if (p.arg >= 0 && !ArgMatches(cp_->args[p.arg], u)) return false;
    const size_t ns = u->num_src();
    return ns >= p.required_len && (!p.strict_len || ns == p.required_len);
  }

  // ---- shallow patterns (Shape::kShallow) ----
  //
  // The same matches in the same order as Solve, by nested loops instead of a pending stack: the root's
  // operand orders outermost, then, source by source, each source pattern's orders. Leaves involve no choice.

  int NumOrders(const PNode& p) const { return p.kind == UPat::SrcKind::kAnyOrder ? p.perm_count : 1; }

  // The source patterns of p in its order j.
  const uint16_t* Order(const PNode& p, int j) const {
    return p.kind == UPat::SrcKind::kAnyOrder ? cp_->perms.data() + p.perm_begin + j * p.child_count
                                              : cp_->children.data() + p.child_begin;
  }

  bool OpsFit(const uint16_t* order, const UOpPtr* src, int count) const {
    for (int i = 0; i < count; ++i) {
      if (!cp_->nodes[order[i]].ops.contains(src[i]->op())) return false;
    }
    return true;
  }

  bool MatchShallow() {
    const PNode& root = cp_->nodes[0];
    if (!Head(root, &root_)) return false;  // Run undoes the captures
    const UOpPtr* src = root_->src().data();
    for (int j = 0; j < NumOrders(root); ++j) {
      const uint16_t* order = Order(root, j);
      if (!OpsFit(order, src, root.child_count)) continue;
      const int mark = ntrail_;
      if (MatchSources(order, src, 0, root.child_count)) return true;
      Undo(mark);
    }
    return false;
  }

  // Source patterns order[i..count) against src[i..count), then Fire.
  bool MatchSources(const uint16_t* order, const UOpPtr* src, int i, int count) {
    if (i == count) return Fire();
    const PNode& p = cp_->nodes[order[i]];
    if (!Head(p, &src[i])) return false;
    if (p.kind == UPat::SrcKind::kNone) return MatchSources(order, src, i + 1, count);
    return MatchLeaves(p, src[i]->src().data(), [&] { return MatchSources(order, src, i + 1, count); });
  }

  // p's source patterns (all leaves) against src, in each of p's orders, then `next`.
  template <typename Next>
  bool MatchLeaves(const PNode& p, const UOpPtr* src, Next&& next) {
    for (int j = 0; j < NumOrders(p); ++j) {
      const uint16_t* order = Order(p, j);
      if (!OpsFit(order, src, p.child_count)) continue;
      const int mark = ntrail_;
      bool fits = true;
      for (int i = 0; i < p.child_count && fits; ++i) fits = Head(cp_->nodes[order[i]], &src[i]);
      if (fits && next()) return true;
      Undo(mark);
    }
    return false;
  }

  // Captures `node` as slot: false when the slot already holds another node.
  bool Bind(int slot, const UOpPtr* node) {
    const UOpPtr* have = slots_[slot];
    if (have == nullptr) {
      slots_[slot] = node;
      trail_[ntrail_++] = static_cast<int8_t>(slot);
      return true;
    }
    return have->get() == node->get();
  }

  // A pattern with no source constraint (most leaves: x, c, CONST(0)) is matched here and now; any other is
  // pushed onto the pending stack. Either way the outcome is the same: leaves involve no choice.
  bool MatchOrPush(uint16_t pat, const UOpPtr* node, size_t base, size_t& n) {
    const PNode& p = cp_->nodes[pat];
    if (p.kind != UPat::SrcKind::kNone) {
      stack_[base + n++] = Pending{pat, node};
      return true;
    }
    return Head(p, node);
  }

  bool Fire() {
    Match m(rule_, &root_, slots_, cp_->slot_keys.data(), static_cast<int>(cp_->slot_keys.size()), ctx_);
    UOpPtr r = rule_->fn_(m);
    if (r == nullptr || r.get() == root_.get()) return false;
    result_ = std::move(r);
    return true;
  }

  const Rule* rule_ = nullptr;
  const CompiledPattern* cp_ = nullptr;
  const UOpPtr& root_;
  void* ctx_;
  bool general_only_ = false;
  const UOpPtr* slots_[kMaxSlots];
  size_t cleared_ = 0;  // slots_[0, cleared_) are null between runs
  int8_t trail_[kMaxSlots];
  int ntrail_ = 0;
  Pending* stack_ = inline_;
  size_t capacity_ = kInlineStack;
  Pending inline_[kInlineStack];
  std::vector<Pending> heap_;
  UOpPtr result_;
};

}  // namespace internal

// ---- Match ----

int Match::SlotOf(absl::string_view name) const {
  const std::vector<std::string>& names = rule_->compiled_->slot_names;
  for (size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<int>(i);
  }
  return -1;
}

const UOpPtr Match::kUnbound;

const UOpPtr& Match::Lookup(absl::string_view name) const {
  int slot = SlotOf(name);
  if (slot < 0) {
    std::string msg = absl::StrCat("rule ", rule_->ToString(), " has no capture named '", name, "'");
    internal::CheckFailed(__FILE__, __LINE__, "slot >= 0", msg.c_str());
  }
  return slots_[slot] != nullptr ? *slots_[slot] : kUnbound;
}

const std::vector<std::string>& Match::names() const { return rule_->compiled_->slot_names; }

bool Match::has(absl::string_view name) const {
  int slot = SlotOf(name);
  return slot >= 0 && slots_[slot] != nullptr;
}

// ---- Rule ----

Rule::Rule(RuleSpec spec)
    : pattern_(std::move(spec.pattern)),
      fn_(std::move(spec.fn)),
      location_(absl::StrCat(internal::BaseName(fn_.file()), ":", fn_.line())),
      id_(internal::next_rule_id.fetch_add(1, std::memory_order_relaxed)),
      root_ops_(internal::PossibleOps(pattern_)),
      early_reject_(internal::EarlyReject(pattern_)),
      root_scalar_types_(internal::PossibleScalarTypes(pattern_)) {
  const internal::UPatNode& root = pattern_.node();
  if ((root.src_kind == UPat::SrcKind::kTuple || root.src_kind == UPat::SrcKind::kAnyOrder) &&
      root.src.size() == 2 && !root.allow_any_len && !root.custom_early_reject) {
    pair_kind_ = root.src_kind == UPat::SrcKind::kTuple ? PairKind::kOrdered : PairKind::kEitherOrder;
    pair_first_ = internal::PossibleOps(root.src[0]);
    pair_second_ = internal::PossibleOps(root.src[1]);
    for (int i = 0; i < 2; ++i) pair_const_[i] = internal::RequiredSmallConst(root.src[i]);
    pair_same_ = !root.src[0].name().empty() && root.src[0].name() == root.src[1].name();
  }
  auto cp = std::make_unique<internal::CompiledPattern>();
  internal::Compiler(*cp).Compile(pattern_);
  cp->shape = internal::ShapeOf(*cp);
  compiled_ = std::move(cp);
}

Rule::~Rule() = default;

std::string Rule::ToString() const { return absl::StrCat(location_, " ", pattern_.ToString()); }

UOpPtr Rule::Apply(const UOpPtr& node, void* ctx) const { return internal::MatchRun(node, ctx).Run(*this); }

namespace internal {
UOpPtr ApplyWithGeneralSearch(const Rule& rule, const UOpPtr& node) {
  MatchRun run(node, nullptr);
  run.set_general_only();
  return run.Run(rule);
}

bool HasShapeSpecificSearch(const Rule& rule) { return rule.compiled_->shape != Shape::kGeneral; }
}  // namespace internal

// ---- RewriteStats ----

RuleStats RewriteStats::Get(const Rule& rule) const {
  if (static_cast<size_t>(rule.id()) >= entries_.size()) return {};
  return entries_[rule.id()].stats;
}

RuleStats RewriteStats::Total() const {
  RuleStats t;
  for (const Entry& e : entries_) {
    t.attempts += e.stats.attempts;
    t.matches += e.stats.matches;
    t.match_ns += e.stats.match_ns;
    t.total_ns += e.stats.total_ns;
  }
  return t;
}

std::string RewriteStats::Report() const {
  std::vector<const Entry*> used;
  for (const Entry& e : entries_) {
    if (e.rule != nullptr && e.stats.attempts > 0) used.push_back(&e);
  }
  std::stable_sort(used.begin(), used.end(),
                   [](const Entry* a, const Entry* b) { return a->stats.total_ns < b->stats.total_ns; });
  std::string out;
  auto line = [&](const RuleStats& s, absl::string_view where, absl::string_view what) {
    absl::StrAppendFormat(&out, "%6d / %7d -- %9.2f / %9.2f ms -- %-20s %s\n", s.matches, s.attempts,
                          s.match_ns / 1e6, s.total_ns / 1e6, where, what);
  };
  for (const Entry* e : used) line(e->stats, e->rule->location(), e->rule->pattern().ToString());
  line(Total(), "TOTAL", "");
  return out;
}

// ---- PatternMatcher ----

namespace {
std::vector<std::shared_ptr<const Rule>> CompileAll(std::vector<RuleSpec> specs) {
  std::vector<std::shared_ptr<const Rule>> rules;
  rules.reserve(specs.size());
  for (RuleSpec& s : specs) rules.push_back(std::make_shared<const Rule>(std::move(s)));
  return rules;
}
}  // namespace

PatternMatcher::PatternMatcher(std::initializer_list<RuleSpec> rules)
    : PatternMatcher(std::vector<RuleSpec>(rules.begin(), rules.end())) {}

PatternMatcher::PatternMatcher(std::vector<RuleSpec> rules) : rules_(CompileAll(std::move(rules))) {
  BuildDispatch();
}

PatternMatcher::PatternMatcher(std::vector<std::shared_ptr<const Rule>> rules) : rules_(std::move(rules)) {
  BuildDispatch();
}

PatternMatcher PatternMatcher::operator+(const PatternMatcher& more) const {
  std::vector<std::shared_ptr<const Rule>> all = rules_;
  all.insert(all.end(), more.rules_.begin(), more.rules_.end());
  return PatternMatcher(std::move(all));
}

void PatternMatcher::BuildDispatch() {
  entries_.clear();
  offsets_.assign(kNumOps + 1, 0);
  for (int op = 0; op < kNumOps; ++op) {
    offsets_[op] = static_cast<uint32_t>(entries_.size());
    for (size_t i = 0; i < rules_.size(); ++i) {
      const Rule& r = *rules_[i];
      if (!r.root_ops().contains(static_cast<Ops>(op))) continue;
      const bool pair = r.pair_kind() != Rule::PairKind::kNone;
      entries_.push_back(Entry{pair ? r.pair_first() : r.early_reject(), r.pair_second(), &r,
                               static_cast<uint32_t>(i), r.root_scalar_types(), r.pair_kind()});
    }
  }
  offsets_[kNumOps] = static_cast<uint32_t>(entries_.size());
  pair_table_of_.assign(kNumOps, -1);
  pair_tables_.clear();
  pair_tests_.clear();
  pair_cells_.clear();
  pair_entries_.clear();
  std::vector<const Rule*> entry_rules;
  entry_rules.reserve(entries_.size());
  for (const Entry& e : entries_) entry_rules.push_back(e.rule);
  decisions_ = internal::BuildDecisionTables(entry_rules, offsets_);
  // The interpreted engine's pair tables are only a filter (without one an op's rules are filtered one by
  // one, with the same result), and they cost more to build than the compiled tables: a process compiling
  // one small kernel would spend most of its time here. So they are built only where the interpreted engine
  // is the process's engine when the matcher is built, or where the compiled tables send an op to it.
  const bool interpreted = GetMatcherEngine() == MatcherEngine::kInterpreted;
  for (int op = 0; op < kNumOps; ++op) {
    if (interpreted || decisions_->of_op[op] == internal::DecisionTables::kInterpret) BuildPairTable(op);
  }
}

template <typename SourceFits>
bool PatternMatcher::Entry::SomeOrderFits(SourceFits fits) const {
  switch (pair_kind) {
    case Rule::PairKind::kNone:
      break;
    case Rule::PairKind::kOrdered:
      return fits(0, 0) && fits(1, 1);
    case Rule::PairKind::kEitherOrder:
      return (fits(0, 0) && fits(1, 1)) || (fits(0, 1) && fits(1, 0));
  }
  return true;
}

bool PatternMatcher::Entry::SourcesFit(bool two_sources, Ops op0, Ops op1, const OpSet& src_ops) const {
  if (pair_kind == Rule::PairKind::kNone) return src_ops.ContainsAll(required_or_first);
  const Ops ops[2] = {op0, op1};
  return two_sources && SomeOrderFits([&](int i, int which) {
           return (i == 0 ? required_or_first : second).contains(ops[which]);
         });
}

bool PatternMatcher::Entry::PairFits(const PairKey& key, const std::vector<ConstValue>& tests) const {
  const Rule& r = *rule;
  // Source `which` of the node against source pattern `i` of the rule.
  auto fits = [&](int i, int which) {
    const OpSet& ops = i == 0 ? required_or_first : second;
    if (!ops.contains(key.op[which])) return false;
    const std::optional<ConstValue>& want = r.pair_const(i);
    return !want || (key.test[which] >= 0 && tests[key.test[which]] == *want);
  };
  if (pair_kind == Rule::PairKind::kNone) return OpSet{key.op[0], key.op[1]}.ContainsAll(required_or_first);
  return (key.same || !r.pair_same()) && SomeOrderFits(fits);
}

void PatternMatcher::BuildPairTable(int op) {
  // Below this many rules the filters cost less than the lookup.
  constexpr uint32_t kMinEntries = 4;
  const uint32_t begin = offsets_[op], end = offsets_[op + 1];
  if (end - begin < kMinEntries) return;
  // The sets the filters test a source op against (an op required among the sources is its own set), and
  // the constants they require, each once.
  std::vector<OpSet> op_tests;
  std::vector<ConstValue> consts;
  for (uint32_t i = begin; i < end; ++i) {
    const Entry& e = entries_[i];
    if (e.pair_kind == Rule::PairKind::kNone) {
      e.required_or_first.ForEach([&](Ops o) { op_tests.push_back(OpSet{o}); });
      continue;
    }
    op_tests.push_back(e.required_or_first);
    op_tests.push_back(e.second);
    for (int k = 0; k < 2; ++k) {
      const std::optional<ConstValue>& want = e.rule->pair_const(k);
      if (want && std::find(consts.begin(), consts.end(), *want) == consts.end()) consts.push_back(*want);
    }
  }
  // Ops in the same sets are alike to every filter: one class.
  PairTable table;
  std::vector<std::pair<Ops, int>> representative;  // (op, index into consts or -1) of each class
  absl::flat_hash_map<std::vector<bool>, uint8_t> class_of_signature;
  for (int o = 0; o < kNumOps; ++o) {
    std::vector<bool> signature;
    signature.reserve(op_tests.size());
    for (const OpSet& t : op_tests) signature.push_back(t.contains(static_cast<Ops>(o)));
    auto [it, inserted] = class_of_signature.try_emplace(std::move(signature), representative.size());
    if (inserted) {
      if (representative.size() == 256) return;  // too many classes for a byte: no table
      representative.emplace_back(static_cast<Ops>(o), -1);
    }
    table.class_of[o] = it->second;
  }
  table.num_op_classes = static_cast<uint32_t>(representative.size());
  for (size_t j = 0; j < consts.size(); ++j) representative.emplace_back(Ops::CONST, static_cast<int>(j));
  if (representative.size() > 256) return;
  table.num_classes = static_cast<uint32_t>(representative.size());
  table.first_test = static_cast<uint32_t>(pair_tests_.size());
  for (const ConstValue& v : consts) pair_tests_.emplace_back(v);
  table.first_cell = static_cast<uint32_t>(pair_cells_.size());
  // Equal lists are stored once.
  absl::flat_hash_map<std::vector<uint32_t>, Range> stored;
  for (auto [op0, test0] : representative) {
    for (auto [op1, test1] : representative) {
      for (bool same : {false, true}) {
        const PairKey key{{op0, op1}, {test0, test1}, same};
        std::vector<uint32_t> fit;
        for (uint32_t i = begin; i < end; ++i) {
          if (entries_[i].PairFits(key, consts)) fit.push_back(i);
        }
        auto [it, inserted] = stored.try_emplace(fit);
        if (inserted) {
          it->second.begin = static_cast<uint32_t>(pair_entries_.size());
          pair_entries_.insert(pair_entries_.end(), fit.begin(), fit.end());
          it->second.end = static_cast<uint32_t>(pair_entries_.size());
        }
        pair_cells_.push_back(it->second);
      }
    }
  }
  pair_table_of_[op] = static_cast<int32_t>(pair_tables_.size());
  pair_tables_.push_back(table);
}

template <bool kStats>
UOpPtr PatternMatcher::RewriteImpl(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired) const {
  const UOp* u = node.get();
  const int op = static_cast<int>(u->op());
  const uint32_t begin = offsets_[op], end = offsets_[op + 1];
  if (begin == end) return nullptr;
  internal::MatchRun run(node, ctx);
  const uint16_t scalar_bit = static_cast<uint16_t>(1u << static_cast<int>(u->dtype().scalar_type()));
  // The rule of entry i on the node, when its scalar types allow.
  auto attempt = [&](uint32_t i) -> UOpPtr {
    const Entry& e = entries_[i];
    if ((e.root_scalar_types & scalar_bit) == 0) return nullptr;
    if constexpr (kStats) {
      RuleStats& s = stats->At(rules_[e.index]);
      auto start = std::chrono::steady_clock::now();
      UOpPtr r = run.Run(*e.rule);
      int64_t ns =
          std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
              .count();
      ++s.attempts;
      s.total_ns += ns;
      if (r != nullptr) {
        ++s.matches;
        s.match_ns += ns;
      }
      if (r != nullptr && fired != nullptr) *fired = static_cast<int>(e.index);
      return r;
    } else {
      UOpPtr r = run.Run(*e.rule);
      if (r != nullptr && fired != nullptr) *fired = static_cast<int>(e.index);
      return r;
    }
  };
  const bool two_sources = u->num_src() == 2;
  if (two_sources && pair_table_of_[op] >= 0) {
    const PairTable& t = pair_tables_[pair_table_of_[op]];
    const UOp* s0 = u->src(0);
    const UOp* s1 = u->src(1);
    const internal::ConstTest* tests = pair_tests_.data() + t.first_test;
    const Range cell =
        pair_cells_[t.first_cell + 2 * (t.ClassOf(s0, tests) * t.num_classes + t.ClassOf(s1, tests)) +
                    (s0 == s1)];
    for (uint32_t k = cell.begin; k < cell.end; ++k) {
      if (UOpPtr r = attempt(pair_entries_[k])) return r;
    }
    return nullptr;
  }
  OpSet src_ops;
  for (const UOpPtr& s : u->src()) src_ops.Insert(s->op());
  const Ops op0 = two_sources ? u->src(0)->op() : Ops::NOOP, op1 = two_sources ? u->src(1)->op() : Ops::NOOP;
  for (uint32_t i = begin; i < end; ++i) {
    if (!entries_[i].SourcesFit(two_sources, op0, op1, src_ops)) continue;
    if (UOpPtr r = attempt(i)) return r;
  }
  return nullptr;
}

template <bool kStats>
UOpPtr PatternMatcher::Attempt(uint32_t entry, internal::MatchRun& run, RewriteStats* stats,
                               int* fired) const {
  const Entry& e = entries_[entry];
  if constexpr (kStats) {
    RuleStats& s = stats->At(rules_[e.index]);
    auto start = std::chrono::steady_clock::now();
    UOpPtr r = run.Run(*e.rule);
    int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
            .count();
    ++s.attempts;
    s.total_ns += ns;
    if (r != nullptr) {
      ++s.matches;
      s.match_ns += ns;
    }
    if (r != nullptr && fired != nullptr) *fired = static_cast<int>(e.index);
    return r;
  } else {
    UOpPtr r = run.Run(*e.rule);
    if (r != nullptr && fired != nullptr) *fired = static_cast<int>(e.index);
    return r;
  }
}

namespace internal {
namespace {
std::atomic<FireObserver> fire_observer{nullptr};
void* fire_observer_arg = nullptr;

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void NotifyFire(const Rule& rule, const UOp* before, const UOp* after) {
  if (FireObserver f = fire_observer.load(std::memory_order_relaxed); ABSL_PREDICT_FALSE(f != nullptr)) {
    f(fire_observer_arg, rule, before, after);
  }
}
}  // namespace

void SetFireObserver(FireObserver observer, void* arg) {
  fire_observer_arg = arg;
  fire_observer.store(observer, std::memory_order_relaxed);
}
}  // namespace internal

template <bool kStats>
UOpPtr PatternMatcher::RewriteCompiled(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired) const {
  using internal::DecisionTables;
  const UOp* u = node.get();
  const int32_t which = decisions_->of_op[static_cast<int>(u->op())];
  if (which == DecisionTables::kNoRules) return nullptr;
  if (which == DecisionTables::kInterpret) return RewriteImpl<kStats>(node, ctx, stats, fired);
  const internal::OpDecision& d = decisions_->ops[which];
  const uint32_t words = d.words;
  const size_t ns = u->num_src();
  // The tables that apply to this node, and the value each reads.
  const uint64_t* tables[2 + internal::kMaxPositions];
  int num_tables = 0;
  if (!d.by_scalar.empty()) {
    tables[num_tables++] = d.by_scalar.data() + static_cast<size_t>(u->dtype().scalar_type()) * words;
  }
  if (!d.by_num_src.empty()) tables[num_tables++] = d.by_num_src.data() + (ns < 4 ? ns : 4) * words;
  if (ns == 2 && !d.by_pair.empty()) {
    const UOp* s0 = u->src(0);
    const UOp* s1 = u->src(1);
    const size_t key = (size_t{d.ClassOf(s0)} * d.num_classes + d.ClassOf(s1)) * 2 + (s0 == s1);
    tables[num_tables++] = d.by_pair.data() + key * words;
  } else {
    for (size_t i = 0; i < internal::kMaxPositions && i < ns; ++i) {
      if (!d.by_source[i].empty())
        tables[num_tables++] = d.by_source[i].data() + d.ClassOf(u->src(i)) * words;
    }
  }
  uint64_t mask[DecisionTables::kMaxWords];
  for (uint32_t w = 0; w < words; ++w) {
    uint64_t m = d.all[w];
    for (int t = 0; t < num_tables; ++t) m &= tables[t][w];
    mask[w] = m;
  }
  internal::MatchRun run(node, ctx);
  OpSet src_ops;
  bool have_src_ops = false;
  for (uint32_t w = 0; w < words; ++w) {
    for (uint64_t bits = mask[w]; bits != 0; bits &= bits - 1) {
      const int bit = __builtin_ctzll(bits);
      const uint32_t entry = d.first_entry + w * 64 + bit;
      if ((d.early_reject[w] >> bit & 1) != 0) {
        // tinygrad's early reject (including a custom one), as the interpreted engine applies it.
        if (!have_src_ops) {
          for (const UOpPtr& s : u->src()) src_ops.Insert(s->op());
          have_src_ops = true;
        }
        if (!src_ops.ContainsAll(entries_[entry].required_or_first)) continue;
      }
      if (UOpPtr r = Attempt<kStats>(entry, run, stats, fired)) return r;
    }
  }
  return nullptr;
}

namespace {

MatcherEngine EngineFromEnvironment() {
  return EnvString("UOPC_MATCHER") == "interpreted" ? MatcherEngine::kInterpreted : MatcherEngine::kCompiled;
}

std::atomic<MatcherEngine> matcher_engine{EngineFromEnvironment()};

}  // namespace

void SetMatcherEngine(MatcherEngine engine) { matcher_engine.store(engine, std::memory_order_relaxed); }

MatcherEngine GetMatcherEngine() { return matcher_engine.load(std::memory_order_relaxed); }

UOpPtr PatternMatcher::Rewrite(const UOpPtr& node, void* ctx) const {
  return Rewrite(node, ctx, nullptr, nullptr, GetMatcherEngine());
}

UOpPtr PatternMatcher::Rewrite(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired) const {
  return Rewrite(node, ctx, stats, fired, GetMatcherEngine());
}

UOpPtr PatternMatcher::Rewrite(const UOpPtr& node, void* ctx, RewriteStats* stats, int* fired,
                               MatcherEngine engine) const {
  if (fired != nullptr) *fired = -1;
  if (ABSL_PREDICT_FALSE(internal::fire_observer.load(std::memory_order_relaxed) != nullptr)) {
    // Knowing which rule fired takes `fired`.
    int which = -1;
    UOpPtr r;
    if (engine == MatcherEngine::kCompiled) {
      r = stats != nullptr ? RewriteCompiled<true>(node, ctx, stats, &which)
                           : RewriteCompiled<false>(node, ctx, nullptr, &which);
    } else {
      r = stats != nullptr ? RewriteImpl<true>(node, ctx, stats, &which)
                           : RewriteImpl<false>(node, ctx, nullptr, &which);
    }
    if (fired != nullptr) *fired = which;
    if (r != nullptr) internal::NotifyFire(*rules_[which], node.get(), r.get());
    return r;
  }
  if (engine == MatcherEngine::kCompiled) {
    return stats != nullptr ? RewriteCompiled<true>(node, ctx, stats, fired)
                            : RewriteCompiled<false>(node, ctx, nullptr, fired);
  }
  return stats != nullptr ? RewriteImpl<true>(node, ctx, stats, fired)
                          : RewriteImpl<false>(node, ctx, nullptr, fired);
}

}  // namespace uopc
