#include "shapetracker/shapetracker.h"

#include <algorithm>
#include <cctype>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/symbolic.h"
#include "rewrite/valid.h"
#include "uop/check.h"
#include "uop/print.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// tinygrad's pm_upcast: an int ALU node whose range leaves int32 becomes int64; a node that fits but has
// int64 sources is computed in int64 and cast back. An index constant is an int32 CONST whatever its value
// (a view's offset past 2^31, say); widened, it keeps its value, as tinygrad's folded cast does, where
// folding the cast of a CONST would first wrap it to int32.
UOpPtr HandleUpcast(const Match& m) {
  const UOpPtr& u = m.root();
  DType wide = u->dtype().count() > 1 ? dtypes::kInt64.Vec(u->dtype().count()) : dtypes::kInt64;
  auto widened = [&]() {
    std::vector<UOpPtr> src;
    for (const UOpPtr& x : u->src()) {
      src.push_back(x->op() == Ops::CONST && x->dtype() == dtypes::kInt32 ? UOp::Const(wide, x->const_value())
                                                                          : x.cast(wide));
    }
    return UOp::New(u->op(), wide, src, u->arg(), u->tag());
  };
  if (u->vmax() > DTypeMax(dtypes::kInt32) || u->vmin() < DTypeMin(dtypes::kInt32)) return widened();
  bool any_wide = std::any_of(u->src().begin(), u->src().end(),
                              [](const UOpPtr& x) { return x->dtype() == dtypes::kInt64; });
  if (any_wide) return widened().cast(u->dtype());
  return nullptr;
}

const PatternMatcher& SymbolicFlatUpcast() {
  static const PatternMatcher* pm = new PatternMatcher(
      SymbolicFlat() + PatternMatcher({{UPat(groups::kALU).dtype(dtypes::kInt32).named("u"), HandleUpcast}}));
  return *pm;
}

struct IndexKey {
  std::vector<View> views;
  std::vector<UOpPtr> idxs;
  bool has_idxs = false;
  friend bool operator==(const IndexKey& a, const IndexKey& b) {
    return a.has_idxs == b.has_idxs && a.views == b.views && a.idxs == b.idxs;
  }
  template <typename H>
  friend H AbslHashValue(H h, const IndexKey& k) {
    return H::combine(std::move(h), k.views, k.idxs, k.has_idxs);
  }
};

// tinygrad memoizes views_to_indexed_uops; a bounded cache keeps long-running processes from growing.
struct IndexCache {
  std::mutex mu;
  absl::flat_hash_map<IndexKey, std::pair<UOpPtr, UOpPtr>> map;
  static constexpr size_t kMaxEntries = 4096;
};
IndexCache& GetIndexCache() {
  static IndexCache* cache = new IndexCache;
  return *cache;
}

std::pair<UOpPtr, UOpPtr> ViewsToIndexedUopsUncached(absl::Span<const View> views,
                                                     std::optional<absl::Span<const UOpPtr>> idxs) {
  // Index arithmetic is exact until the upcast below types every node that leaves int32 as int64.
  ScopedIntegerSemantics exact(IntegerSemantics::kExact);
  auto [idx, valid] = views.back().ToIndexedUops(idxs);
  for (size_t i = views.size() - 1; i-- > 0;) {
    View view = views[i].Minify();
    std::vector<UOpPtr> unraveled;
    for (const Sint& s : Unravel(view.shape(), Sint::FromUOp(idx))) unraveled.push_back(s.ToUOp());
    std::tie(idx, valid) = view.ToIndexedUops(absl::MakeConstSpan(unraveled), valid);
  }
  UOpPtr sink = GraphRewrite(UOp::Sink({idx, valid}), SymbolicFlat(), {.name = "indexing sym @ 1"});
  idx = sink->src(0)->ref();
  valid = sink->src(1)->ref();
  if (UOpPtr new_valid = SimplifyValid(valid)) valid = new_valid;
  if (UOpPtr new_idx = UopGivenValid(valid, idx)) idx = new_idx;
  sink = GraphRewrite(UOp::Sink({idx, valid}), SymbolicFlatUpcast(), {.name = "indexing sym @ 2"});
  return {sink->src(0)->ref(), sink->src(1)->ref()};
}

std::pair<UOpPtr, UOpPtr> ViewsToIndexedUops(absl::Span<const View> views,
                                             std::optional<absl::Span<const UOpPtr>> idxs) {
  IndexKey key{std::vector<View>(views.begin(), views.end()), {}, idxs.has_value()};
  if (idxs) key.idxs.assign(idxs->begin(), idxs->end());
  IndexCache& cache = GetIndexCache();
  {
    std::lock_guard<std::mutex> lock(cache.mu);
    auto it = cache.map.find(key);
    if (it != cache.map.end()) return it->second;
  }
  std::pair<UOpPtr, UOpPtr> result = ViewsToIndexedUopsUncached(views, idxs);
  std::lock_guard<std::mutex> lock(cache.mu);
  if (cache.map.size() >= IndexCache::kMaxEntries) cache.map.clear();
  cache.map.emplace(std::move(key), result);
  return result;
}

}  // namespace

void ClearToIndexedUopsCache() {
  IndexCache& cache = GetIndexCache();
  std::lock_guard<std::mutex> lock(cache.mu);
  cache.map.clear();
}

namespace {

// -------------------------------------------------------------------------------------------------------
// Parsing tinygrad's repr of a ShapeTracker, including symbolic values printed as UOp trees.

class Parser {
 public:
  explicit Parser(absl::string_view text) : text_(text) {}

  absl::StatusOr<ShapeTracker> ParseShapeTracker() {
    if (!Consume("ShapeTracker(")) return Error("'ShapeTracker('");
    if (!Consume("views=")) return Error("'views='");
    if (!Consume("(")) return Error("'('");
    std::vector<View> views;
    while (true) {
      SkipWs();
      if (Peek(')')) break;
      UOPC_ASSIGN_OR_RETURN(View v, ParseView());
      views.push_back(std::move(v));
      if (Consume(",")) continue;
      SkipWs();
      if (!Peek(')')) return Error("',' or ')'");
    }
    Consume(")");
    if (views.empty()) return Error("at least one View");
    if (!Consume(")")) return Error("')'");
    return ShapeTracker(std::move(views));
  }

  size_t pos() const { return pos_; }

  absl::StatusOr<Sint> ParseSint() {
    SkipWs();
    if (Peek('-') || (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])))) {
      UOPC_ASSIGN_OR_RETURN(int64_t v, ParseInt());
      return Sint(v);
    }
    refs_.clear();
    size_t start = pos_;
    UOPC_ASSIGN_OR_RETURN(UOpPtr u, ParseUOp(0));
    if (u->dtype() != dtypes::kInt32) {
      pos_ = start;
      return Error("an int UOp");
    }
    return Sint::FromUOp(u);
  }

 private:
  absl::Status Error(absl::string_view expected) const {
    size_t col = pos_ + 1;
    absl::string_view got = pos_ < text_.size() ? text_.substr(pos_, 12) : "end of text";
    return absl::InvalidArgumentError(
        absl::StrCat("ShapeTracker: col ", col, ": expected ", expected, ", got '", got, "'"));
  }
  void SkipWs() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool Peek(char c) const { return pos_ < text_.size() && text_[pos_] == c; }
  bool Consume(absl::string_view lit) {
    SkipWs();
    if (text_.substr(pos_, lit.size()) == lit) {
      pos_ += lit.size();
      return true;
    }
    return false;
  }
  absl::StatusOr<int64_t> ParseInt() {
    SkipWs();
    size_t start = pos_;
    if (Peek('-')) ++pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    int64_t v = 0;
    if (!absl::SimpleAtoi(text_.substr(start, pos_ - start), &v)) {
      pos_ = start;
      return Error("an integer");
    }
    return v;
  }
  absl::StatusOr<std::string> ParseName() {
    SkipWs();
    size_t start = pos_;
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) {
      ++pos_;
    }
    if (pos_ == start) return Error("a name");
    return std::string(text_.substr(start, pos_ - start));
  }

  absl::StatusOr<SintVec> ParseSintTuple() {
    if (!Consume("(")) return Error("'('");
    SintVec out;
    while (true) {
      SkipWs();
      if (Peek(')')) break;
      UOPC_ASSIGN_OR_RETURN(Sint s, ParseSint());
      out.push_back(std::move(s));
      if (Consume(",")) continue;
      SkipWs();
      if (!Peek(')')) return Error("',' or ')'");
    }
    Consume(")");
    return out;
  }

  absl::StatusOr<View> ParseView() {
    if (!Consume("View(")) return Error("'View('");
    if (!Consume("shape=")) return Error("'shape='");
    UOPC_ASSIGN_OR_RETURN(SintVec shape, ParseSintTuple());
    if (!Consume(",") || !Consume("strides=")) return Error("', strides='");
    UOPC_ASSIGN_OR_RETURN(SintVec strides, ParseSintTuple());
    if (!Consume(",") || !Consume("offset=")) return Error("', offset='");
    UOPC_ASSIGN_OR_RETURN(Sint offset, ParseSint());
    if (!Consume(",") || !Consume("mask=")) return Error("', mask='");
    std::optional<PairVec> mask;
    if (!Consume("None")) {
      if (!Consume("(")) return Error("'None' or '('");
      mask.emplace();
      while (true) {
        SkipWs();
        if (Peek(')')) break;
        if (!Consume("(")) return Error("'('");
        UOPC_ASSIGN_OR_RETURN(Sint b, ParseSint());
        if (!Consume(",")) return Error("','");
        UOPC_ASSIGN_OR_RETURN(Sint e, ParseSint());
        if (!Consume(")")) return Error("')'");
        mask->emplace_back(std::move(b), std::move(e));
        if (Consume(",")) continue;
        SkipWs();
        if (!Peek(')')) return Error("',' or ')'");
      }
      Consume(")");
    }
    if (!Consume(",") || !Consume("contiguous=")) return Error("', contiguous='");
    bool contiguous;
    if (Consume("True")) {
      contiguous = true;
    } else if (Consume("False")) {
      contiguous = false;
    } else {
      return Error("'True' or 'False'");
    }
    size_t end = pos_;
    if (!Consume(")")) return Error("')'");
    absl::StatusOr<View> v = View::FromFields(std::move(shape), std::move(strides), std::move(offset),
                                              std::move(mask), contiguous);
    if (!v.ok()) {
      pos_ = end;
      return absl::InvalidArgumentError(
          absl::StrCat("ShapeTracker: col ", end + 1, ": ", v.status().message()));
    }
    return v;
  }

  // A Python literal arg: None, True, False, integers, floats, 'strings', tuples.
  absl::StatusOr<Arg> ParseArg(int depth) {
    if (depth > kMaxDepth) return Error("a less deeply nested arg");
    SkipWs();
    if (Consume("None")) return Arg();
    if (Consume("True")) return Arg(true);
    if (Consume("False")) return Arg(false);
    if (Peek('\'')) {
      ++pos_;
      std::string s;
      while (pos_ < text_.size() && text_[pos_] != '\'') {
        if (text_[pos_] == '\\' && pos_ + 1 < text_.size()) ++pos_;
        s.push_back(text_[pos_++]);
      }
      if (!Peek('\'')) return Error("a closing quote");
      ++pos_;
      return Arg(std::move(s));
    }
    if (Peek('(')) {
      ++pos_;
      Arg::Tuple items;
      while (true) {
        SkipWs();
        if (Peek(')')) break;
        UOPC_ASSIGN_OR_RETURN(Arg a, ParseArg(depth + 1));
        items.push_back(std::move(a));
        if (Consume(",")) continue;
        SkipWs();
        if (!Peek(')')) return Error("',' or ')'");
      }
      ++pos_;
      return Arg(std::move(items));
    }
    size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) ||
                                   text_[pos_] == '-' || text_[pos_] == '+' || text_[pos_] == '.')) {
      ++pos_;
    }
    absl::string_view tok = text_.substr(start, pos_ - start);
    int64_t i;
    if (absl::SimpleAtoi(tok, &i)) return Arg(i);
    double d;
    if (absl::SimpleAtod(tok, &d)) return Arg(d);
    pos_ = start;
    return Error("an arg");
  }

  // `UOp(Ops.X, dtypes.y, arg=..., src=(...))`, `xN:=UOp(...)` or a back reference `xN`.
  absl::StatusOr<UOpPtr> ParseUOp(int depth) {
    if (depth > kMaxDepth) return Error("a less deeply nested UOp");
    SkipWs();
    std::string label;
    if (Peek('x')) {
      size_t start = pos_;
      UOPC_ASSIGN_OR_RETURN(std::string name, ParseName());
      if (!Consume(":=")) {
        auto it = refs_.find(name);
        if (it == refs_.end()) {
          pos_ = start;
          return Error("a UOp or a known xN reference");
        }
        return it->second;
      }
      label = name;
    }
    if (!Consume("UOp(")) return Error("'UOp('");
    if (!Consume("Ops.")) return Error("'Ops.'");
    size_t op_pos = pos_;
    UOPC_ASSIGN_OR_RETURN(std::string op_name, ParseName());
    std::optional<Ops> op = OpFromName(op_name);
    if (!op) {
      pos_ = op_pos;
      return Error("an op name");
    }
    if (!Consume(",") || !Consume("dtypes.")) return Error("', dtypes.'");
    size_t dt_pos = pos_;
    UOPC_ASSIGN_OR_RETURN(std::string dt_name, ParseName());
    std::optional<DType> dt = DType::FromName(dt_name);
    if (!dt) {
      pos_ = dt_pos;
      return Error("a scalar dtype name");
    }
    if (!Consume(",") || !Consume("arg=")) return Error("', arg='");
    UOPC_ASSIGN_OR_RETURN(Arg arg, ParseArg(depth + 1));
    if (!Consume(",") || !Consume("src=")) return Error("', src='");
    if (!Consume("(")) return Error("'('");
    std::vector<UOpPtr> src;
    while (true) {
      SkipWs();
      if (Peek(')')) break;
      UOPC_ASSIGN_OR_RETURN(UOpPtr s, ParseUOp(depth + 1));
      src.push_back(std::move(s));
      if (Consume(",")) continue;
      SkipWs();
      if (!Peek(')')) return Error("',' or ')'");
    }
    ++pos_;
    if (!Consume(")")) return Error("')'");
    Arg node_arg = std::move(arg);
    if (*op == Ops::CONST) node_arg = ArgFromConst(ConstFromArg(node_arg, *dt), *dt);
    UOpPtr u = UOp::New(*op, *dt, src, std::move(node_arg));
    if (!label.empty()) refs_[label] = u;
    return u;
  }

  static constexpr int kMaxDepth = 200;
  absl::string_view text_;
  size_t pos_ = 0;
  absl::flat_hash_map<std::string, UOpPtr> refs_;
};

absl::StatusOr<PayloadParse> ParseShapeTrackerPayload(absl::string_view text) {
  Parser p(text);
  UOPC_ASSIGN_OR_RETURN(ShapeTracker st, p.ParseShapeTracker());
  return PayloadParse{std::make_shared<const ShapeTrackerArg>(std::move(st)), p.pos()};
}

absl::StatusOr<PayloadParse> ParseSintPayload(absl::string_view text) {
  Parser p(text);
  UOPC_ASSIGN_OR_RETURN(Sint s, p.ParseSint());
  if (s.is_int()) return absl::InvalidArgumentError("UOp: a symbolic int folded to a constant");
  return PayloadParse{std::make_shared<const UOpArg>(s.uop()), p.pos()};
}

const bool kPayloadParserRegistered = [] {
  RegisterPayloadParser(ShapeTrackerArg::kTypeName, &ParseShapeTrackerPayload);
  RegisterPayloadParser(UOpArg::kTypeName, &ParseSintPayload);
  return true;
}();

}  // namespace

ShapeTracker::ShapeTracker(std::vector<View> views) : views_(std::move(views)) {
  UOPC_CHECK(!views_.empty(), "a ShapeTracker needs at least one view");
}

absl::StatusOr<ShapeTracker> ShapeTracker::FromShape(absl::Span<const Sint> shape,
                                                     std::optional<SintVec> strides) {
  UOPC_ASSIGN_OR_RETURN(View v, View::Create(SintVec(shape.begin(), shape.end()), std::move(strides)));
  return ShapeTracker({std::move(v)});
}

bool ShapeTracker::contiguous() const { return views_.size() == 1 && views_[0].contiguous(); }

bool ShapeTracker::consecutive() const {
  return views_.size() == 1 && !views_[0].mask() && views_[0].strides() == StridesForShape(views_[0].shape());
}

namespace {
ShapeTracker WithLast(const std::vector<View>& views, View last) {
  std::vector<View> out(views.begin(), views.end() - 1);
  out.push_back(std::move(last));
  return ShapeTracker(std::move(out));
}
}  // namespace

absl::StatusOr<ShapeTracker> ShapeTracker::Reshape(absl::Span<const Sint> new_shape) const {
  UOPC_ASSIGN_OR_RETURN(std::optional<View> v, views_.back().Reshape(new_shape));
  if (v.has_value()) return WithLast(views_, *v);
  UOPC_ASSIGN_OR_RETURN(View fresh, View::Create(SintVec(new_shape.begin(), new_shape.end())));
  std::vector<View> views = views_;
  views.push_back(std::move(fresh));
  return ShapeTracker(std::move(views));
}

absl::StatusOr<ShapeTracker> ShapeTracker::Permute(absl::Span<const int64_t> order) const {
  UOPC_ASSIGN_OR_RETURN(View v, views_.back().Permute(order));
  return WithLast(views_, std::move(v));
}
absl::StatusOr<ShapeTracker> ShapeTracker::Expand(absl::Span<const Sint> new_shape) const {
  UOPC_ASSIGN_OR_RETURN(View v, views_.back().Expand(new_shape));
  return WithLast(views_, std::move(v));
}
absl::StatusOr<ShapeTracker> ShapeTracker::Pad(absl::Span<const SintPair> before_after) const {
  UOPC_ASSIGN_OR_RETURN(View v, views_.back().Pad(before_after));
  return WithLast(views_, std::move(v));
}
absl::StatusOr<ShapeTracker> ShapeTracker::Shrink(absl::Span<const SintPair> begin_end) const {
  UOPC_ASSIGN_OR_RETURN(View v, views_.back().Shrink(begin_end));
  return WithLast(views_, std::move(v));
}
absl::StatusOr<ShapeTracker> ShapeTracker::Flip(absl::Span<const bool> flip_axis) const {
  UOPC_ASSIGN_OR_RETURN(View v, views_.back().Flip(flip_axis));
  return WithLast(views_, std::move(v));
}

ShapeTracker ShapeTracker::Simplify() const {
  std::vector<View> views = views_;
  while (views.size() >= 2) {
    std::optional<View> merged = views[views.size() - 2].Merge(views.back());
    if (!merged) break;
    views.pop_back();
    views.back() = *std::move(merged);
  }
  return ShapeTracker(std::move(views));
}

ShapeTracker ShapeTracker::Compose(const ShapeTracker& top) const {
  ShapeTracker ret = *this;
  for (const View& v : top.views_) {
    std::vector<View> views = ret.views_;
    views.push_back(v);
    ret = ShapeTracker(std::move(views)).Simplify();
  }
  return ret;
}

std::optional<ShapeTracker> ShapeTracker::Invert(absl::Span<const Sint> out_shape) const {
  std::vector<View> inverted;
  for (size_t k = views_.size(); k-- > 0;) {
    absl::Span<const Sint> s = k > 0 ? absl::MakeConstSpan(views_[k - 1].shape()) : out_shape;
    std::optional<View> inv = views_[k].Invert(s);
    if (!inv) return std::nullopt;
    inverted.push_back(*std::move(inv));
  }
  absl::StatusOr<ShapeTracker> out = ShapeTracker(std::move(inverted)).Reshape(out_shape);
  if (!out.ok()) return std::nullopt;
  return *std::move(out);
}

std::pair<UOpPtr, UOpPtr> ShapeTracker::ToIndexedUops(std::optional<absl::Span<const UOpPtr>> idxs) const {
  return ViewsToIndexedUops(views_, idxs);
}

int64_t ShapeTracker::RealSize() const {
  for (const Sint& s : shape()) {
    if (s == Sint(0)) return 0;
  }
  View view = views_[0];
  if (view.mask()) {
    // A parsed view's mask may lie outside its shape; then the unshrunk view is the bound.
    absl::StatusOr<View> shrunk = view.Shrink(*view.mask());
    if (shrunk.ok()) view = *std::move(shrunk);
  }
  UOpPtr idx = ViewsToIndexedUops(absl::MakeConstSpan(&view, 1), std::nullopt).first;
  return idx->vmax().AsInt64() + 1;
}

std::vector<std::optional<Sint>> ShapeTracker::RealStrides(bool ignore_valid) const {
  const View& last = views_.back();
  std::vector<std::optional<Sint>> ret(last.shape().size());
  if (views_.size() == 1 && !last.mask()) {
    for (size_t i = 0; i < ret.size(); ++i) ret[i] = last.strides()[i];
    return ret;
  }
  auto [idx, valid] = ToIndexedUops();
  auto set = [&](const UOp* range, const UOp* c) {
    int64_t axis = range->arg().as_int();
    if (axis >= 0 && axis < static_cast<int64_t>(ret.size())) ret[axis] = Sint(c->const_value().AsInt64());
  };
  for (const UOpPtr& c : SplitUop(idx, Ops::ADD)) {
    if (c->op() == Ops::RANGE) {
      int64_t axis = c->arg().as_int();
      if (axis >= 0 && axis < static_cast<int64_t>(ret.size())) ret[axis] = Sint(1);
    }
    if (c->op() == Ops::MUL && c->src(0)->op() == Ops::RANGE && c->src(1)->op() == Ops::CONST) {
      set(c->src(0), c->src(1));
    }
    if (c->op() == Ops::MUL && c->src(1)->op() == Ops::RANGE && c->src(0)->op() == Ops::CONST) {
      set(c->src(1), c->src(0));
    }
  }
  absl::flat_hash_set<int64_t> used;
  for (const UOp* x : idx->Toposort()) {
    if (x->op() == Ops::RANGE) used.insert(x->arg().as_int());
  }
  for (size_t i = 0; i < ret.size(); ++i) {
    if (!used.contains(static_cast<int64_t>(i))) ret[i] = Sint(0);
  }
  if (!ignore_valid) {
    for (const UOp* x : valid->Toposort()) {
      if (x->op() == Ops::RANGE && x->arg().as_int() >= 0 &&
          x->arg().as_int() < static_cast<int64_t>(ret.size())) {
        ret[x->arg().as_int()] = std::nullopt;
      }
    }
  }
  return ret;
}

std::vector<int64_t> ShapeTracker::UnitStrideAxes(bool ignore_valid) const {
  std::vector<int64_t> out;
  std::vector<std::optional<Sint>> strides = RealStrides(ignore_valid);
  for (size_t i = 0; i < strides.size(); ++i) {
    if (strides[i] && *strides[i] == Sint(1)) out.push_back(static_cast<int64_t>(i));
  }
  return out;
}

bool ShapeTracker::AxisIsMasked(int64_t axis) const {
  // Without a mask the valid is the constant true: nothing to build (the heuristic asks for every small axis
  // of every buffer, and building the index is most of what it costs).
  if (std::none_of(views_.begin(), views_.end(), [](const View& v) { return v.mask().has_value(); })) {
    return false;
  }
  UOpPtr valid = GraphRewrite(ToIndexedUops().second, SymbolicFlat(), {.name = "axis_is_masked"});
  for (const UOp* x : valid->Toposort()) {
    if (x->op() == Ops::RANGE && x->arg().as_int() == axis) return true;
  }
  return false;
}

SintVec ShapeTracker::Reduce(absl::Span<const int64_t> axes) const {
  SintVec out;
  for (size_t i = 0; i < shape().size(); ++i) {
    bool reduced = std::find(axes.begin(), axes.end(), static_cast<int64_t>(i)) != axes.end();
    out.push_back(reduced ? Sint(1) : shape()[i]);
  }
  return out;
}

std::vector<UOpPtr> ShapeTracker::Vars() const {
  std::vector<UOpPtr> out;
  absl::flat_hash_set<const UOp*> seen;
  for (const View& v : views_) {
    for (UOpPtr& u : v.Vars()) {
      if (seen.insert(u.get()).second) out.push_back(std::move(u));
    }
  }
  return out;
}

std::pair<ShapeTracker, absl::flat_hash_map<UOpPtr, int64_t>> ShapeTracker::Unbind() const {
  std::vector<View> views;
  absl::flat_hash_map<UOpPtr, int64_t> values;
  for (const View& v : views_) {
    auto [unbound, vals] = v.Unbind();
    views.push_back(std::move(unbound));
    for (auto& [var, val] : vals) values[var] = val;
  }
  if (values.empty()) return {*this, {}};
  return {ShapeTracker(std::move(views)), std::move(values)};
}

std::string ShapeTracker::ToString() const {
  std::vector<std::string> parts;
  for (const View& v : views_) parts.push_back(v.ToString());
  return absl::StrCat("ShapeTracker(views=(", absl::StrJoin(parts, ", "), views_.size() == 1 ? ",))" : "))");
}

absl::StatusOr<ShapeTracker> ShapeTracker::Parse(absl::string_view text) {
  Parser p(text);
  UOPC_ASSIGN_OR_RETURN(ShapeTracker st, p.ParseShapeTracker());
  size_t end = p.pos();
  while (end < text.size() && std::isspace(static_cast<unsigned char>(text[end]))) ++end;
  if (end != text.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ShapeTracker: col ", end + 1, ": expected end of text, got '", text.substr(end, 12), "'"));
  }
  return st;
}

UOpPtr ShapeTracker::ToUOp() const {
  (void)kPayloadParserRegistered;
  return UOp::New(Ops::VIEW, dtypes::kVoid, {}, Arg(std::make_shared<const ShapeTrackerArg>(*this)));
}

size_t ShapeTrackerArg::Hash() const { return absl::Hash<ShapeTracker>()(st_); }

bool ShapeTrackerArg::Equals(const ArgPayload& other) const {
  return static_cast<const ShapeTrackerArg&>(other).st_ == st_;
}

Arg SintToArg(const Sint& s) {
  if (s.is_int()) return Arg(s.value());
  return Arg(std::make_shared<const UOpArg>(s.uop()));
}

absl::StatusOr<Sint> SintFromArg(const Arg& a) {
  if (a.is_int()) return Sint(a.as_int());
  if (const UOpArg* s = a.payload_as<UOpArg>()) return Sint::FromUOp(s->uop());
  return absl::InvalidArgumentError(absl::StrCat("expected an int or a symbolic int, got ", a.ToString()));
}

const ShapeTracker* ShapeTrackerOf(const UOp* u) {
  if (u == nullptr) return nullptr;
  const ShapeTrackerArg* a = u->arg().payload_as<ShapeTrackerArg>();
  return a ? &a->tracker() : nullptr;
}

}  // namespace uopc
