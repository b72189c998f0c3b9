#include "codegen/linearize.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <optional>
#include <queue>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "codegen/python_sort.h"
#include "uop/ops.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// A RANGE/IF context: the enclosing RANGE and IF nodes, deduplicated and in tuplize order (tinygrad's
// _sort_ctx). Contexts are a handful of nodes, so vectors with linear search beat any set.
using Ctx = std::vector<const UOp*>;

bool InCtx(const Ctx& ctx, const UOp* u) { return std::find(ctx.begin(), ctx.end(), u) != ctx.end(); }

// Python's `<` on two different dtypes: DType.__lt__ compares (priority, itemsize, name, fmt, count) only, so
// pointers differing in size, address space or vector width are neither less nor greater.
bool DTypeLess(const DType& a, const DType& b) {
  auto key = [](const DType& d) { return std::make_tuple(d.priority(), d.itemsize(), d.name(), d.count()); };
  return key(a) < key(b);
}

// Python's comparison of two args: kUnordered where neither `<` nor `>` holds (a NaN, dtypes DTypeLess
// cannot tell apart).
enum class Order { kLess, kEqual, kGreater, kUnordered };

Order ArgOrder(const Arg& a, const Arg& b) {
  // The common cases first: no args (ALU nodes), int args.
  if (a.is_none() && b.is_none()) return Order::kEqual;
  if (a.is_int() && b.is_int()) {
    return a.as_int() < b.as_int() ? Order::kLess : a.as_int() > b.as_int() ? Order::kGreater : Order::kEqual;
  }
  if (a == b) return Order::kEqual;
  auto numeric = [](const Arg& v) { return v.is_int() || v.is_float() || v.is_bool(); };
  if (numeric(a) && numeric(b)) {
    if ((a.is_float() && std::isnan(a.as_float())) || (b.is_float() && std::isnan(b.as_float()))) {
      return Order::kUnordered;
    }
    auto to_const = [](const Arg& v) {
      return v.is_int()     ? ConstValue::Int(v.as_int())
             : v.is_float() ? ConstValue::Float(v.as_float())
                            : ConstValue::Bool(v.as_bool());
    };
    ConstValue x = to_const(a), y = to_const(b);
    return x < y ? Order::kLess : y < x ? Order::kGreater : Order::kEqual;
  }
  if (a.is_tuple() && b.is_tuple()) {
    const Arg::Tuple& x = a.as_tuple();
    const Arg::Tuple& y = b.as_tuple();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (Order o = ArgOrder(x[i], y[i]); o != Order::kEqual) return o;
    }
    return x.size() < y.size() ? Order::kLess : x.size() > y.size() ? Order::kGreater : Order::kEqual;
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string() ? Order::kLess : Order::kGreater;
  if (a.is_dtype() && b.is_dtype()) {
    return DTypeLess(a.as_dtype(), b.as_dtype())   ? Order::kLess
           : DTypeLess(b.as_dtype(), a.as_dtype()) ? Order::kGreater
                                                   : Order::kUnordered;
  }
  if (a.is_op() && b.is_op()) return a.as_op() < b.as_op() ? Order::kLess : Order::kGreater;
  // Python would raise; any fixed order will do.
  return a.kind() < b.kind() ? Order::kLess : a.kind() > b.kind() ? Order::kGreater : Order::kUnordered;
}

// Python's `<` on two nodes' tuplize tuples, (op, arg, dtype, *sources' tuplizes): the first item that
// differs decides, and an unordered one makes the answer false both ways. Unlike CompareTuplize (a total
// order) this keeps Python's rules, which, through PythonSort, decide where tinygrad puts NaN constants and
// same-typed pointers.
bool TuplizeLess(const UOp* a, const UOp* b) {
  while (a != b) {
    if (a->op() != b->op()) return a->op() < b->op();
    if (Order o = ArgOrder(a->arg(), b->arg()); o != Order::kEqual) return o == Order::kLess;
    if (a->dtype() != b->dtype()) return DTypeLess(a->dtype(), b->dtype());
    size_t i = 0;
    while (i < a->num_src() && i < b->num_src() && a->src(i) == b->src(i)) ++i;
    if (i == a->num_src() || i == b->num_src()) return a->num_src() < b->num_src();
    a = a->src(i);
    b = b->src(i);
  }
  return false;
}

Ctx SortCtx(const Ctx& in) {
  Ctx out;
  out.reserve(in.size());
  for (const UOp* u : in) {
    if (!InCtx(out, u)) out.push_back(u);
  }
  PythonSort(out, TuplizeLess);
  return out;
}

// Nodes that never go in a block: they are placed first, in tuplize order.
constexpr OpSet kDontPlaceInBlock{Ops::DEFINE_GLOBAL, Ops::DEFINE_LOCAL, Ops::DEFINE_VAR, Ops::SPECIAL,
                                  Ops::CONST};

// tinygrad's BasicBlock2. A BLOCKSTART keeps its (ctx, child_ctx) arg here too, with an empty lst.
struct BasicBlock {
  std::vector<const UOp*> lst;
  Ctx ctx;
  const UOp* end = nullptr;
  int cnt = 0;
  std::optional<Ctx> child_ctx;
};

// A node of the block graph: a kernel UOp (`uop` set, no sources: only nodes that stay out of blocks remain
// in the graph unrewritten) or a BLOCK/BLOCKEND/BLOCKSTART with its BasicBlock.
struct Node {
  Ops op;
  const UOp* uop = nullptr;
  const BasicBlock* bb = nullptr;
  std::vector<Node*> src;
};

using Memo = absl::flat_hash_map<Node*, Node*>;

class Linearizer {
 public:
  absl::StatusOr<std::vector<UOpPtr>> Run(const UOp* sink) {
    UOPC_RETURN_IF_ERROR(BuildContext(sink));
    // Linearizer: Create Blocks.
    Memo create_memo;
    Node* root = CreateBottomUp(KernelNode(sink), create_memo);
    UOPC_RETURN_IF_ERROR(status_);
    // Linearizer: Merge Blockends (a top-down rewrite whose only rule fires on the root until nothing
    // merges).
    while (root->op == Ops::BLOCK && !root->bb->lst.empty() && root->bb->lst.back()->op() == Ops::SINK) {
      Node* merged = MergeBlockends(root);
      UOPC_RETURN_IF_ERROR(status_);
      if (merged == nullptr) break;
      root = merged;
    }
    // Linearizer: Merge Blocks.
    Memo merge_memo;
    root = MergeTopDown(root, merge_memo);
    UOPC_RETURN_IF_ERROR(status_);
    return Finalize(root);
  }

 private:
  // ---- BlockContext.from_sink ----

  struct Info {
    int child_count = 0;
    Ctx block_ctx;
    std::optional<Ctx> child_ctx;
    bool reaches_local = false;  // this node or one of its ancestors is a DEFINE_LOCAL
    const Ctx& last_ctx() const { return child_ctx ? *child_ctx : block_ctx; }
  };

  absl::Status BuildContext(const UOp* sink) {
    std::vector<const UOp*> order = sink->Toposort();
    info_.reserve(order.size());
    for (const UOp* u : order) {
      Info& info = info_[u];
      Ctx ctx;
      for (const UOp* s : u->src()) {
        Info& si = info_.at(s);
        // A source listed twice counts twice as a child.
        ++si.child_count;
        info.reaches_local |= si.reaches_local;
        const Ctx& last = si.last_ctx();
        ctx.insert(ctx.end(), last.begin(), last.end());
      }
      info.reaches_local |= u->op() == Ops::DEFINE_LOCAL;
      info.block_ctx = SortCtx(ctx);
      if (u->op() == Ops::RANGE || u->op() == Ops::IF) {
        Ctx with_self = info.block_ctx;
        with_self.push_back(u);
        info.child_ctx = SortCtx(with_self);
      } else if (u->op() == Ops::STORE) {
        if (u->num_src() < 2) return absl::InvalidArgumentError("linearize: STORE with fewer than 2 sources");
        // A store ends every context around it, except that a store to local memory stays in the ranges its
        // value uses and its index does not (tinygrad's own comment calls this "probably wrong").
        bool local = info_.at(u->src(0)).reaches_local;
        Ctx child;
        if (local) {
          const Ctx& idx_ctx = info_.at(u->src(0)).last_ctx();
          for (const UOp* y : info_.at(u->src(1)).last_ctx()) {
            if (!InCtx(idx_ctx, y) && y->op() == Ops::RANGE) child.push_back(y);
          }
        }
        info.child_ctx = std::move(child);
      } else if (u->op() == Ops::ASSIGN) {
        if (u->num_src() < 2 || u->src(0)->op() != Ops::DEFINE_ACC) {
          return absl::InvalidArgumentError("linearize: ASSIGN to something other than a DEFINE_ACC");
        }
        const UOp* acc = u->src(0);
        Ctx child;
        for (const UOp* y : info_.at(u->src(1)).last_ctx()) {
          bool acc_range = false;
          for (size_t i = 1; i < acc->num_src(); ++i) acc_range |= acc->src(i) == y;
          if (!acc_range) child.push_back(y);
        }
        info.child_ctx = std::move(child);
      }
    }
    return absl::OkStatus();
  }

  // ---- the block graph ----

  Node* KernelNode(const UOp* u) {
    Node*& n = kernel_nodes_[u];
    if (n == nullptr) n = &nodes_.emplace_back(Node{u->op(), u, nullptr, {}});
    return n;
  }

  // Block nodes are hash-consed like tinygrad's UOps: equal when op, BasicBlock (by identity) and sources
  // are.
  Node* BlockNode(Ops op, const BasicBlock* bb, std::vector<Node*> src) {
    auto key = std::make_tuple(op, bb, src);
    auto [it, inserted] = block_nodes_.try_emplace(std::move(key), nullptr);
    if (inserted) it->second = &nodes_.emplace_back(Node{op, nullptr, bb, std::move(src)});
    return it->second;
  }

  Node* Rebuild(Node* n, std::vector<Node*> src) {
    if (n->uop != nullptr) {
      // Kernel nodes in the block graph are leaves (checked when they are reached).
      Fail("linearize: rebuilding a kernel node");
      return n;
    }
    return BlockNode(n->op, n->bb, std::move(src));
  }

  BasicBlock* NewBlock() { return &blocks_.emplace_back(); }

  const UOp* Keep(UOpPtr u) {
    const UOp* raw = u.get();
    kept_.push_back(std::move(u));
    return raw;
  }

  // The rewrites recurse like tinygrad's. Where tinygrad would recurse forever (BLOCKENDs of one range nested
  // in each other make Merge Blockends substitute a node into itself), the depth limit turns the cycle into
  // an error; no kernel comes near it.
  static constexpr int kMaxDepth = 4000;
  class DepthGuard {
   public:
    explicit DepthGuard(Linearizer* l) : l_(l) {
      if (++l_->depth_ > kMaxDepth)
        l_->Fail("linearize: the block graph has a cycle (nested BLOCKENDs of one range)");
    }
    ~DepthGuard() { --l_->depth_; }

   private:
    Linearizer* l_;
  };

  void Fail(std::string message) {
    if (status_.ok()) status_ = absl::InvalidArgumentError(std::move(message));
  }

  // ---- Linearizer: Create Blocks ----

  // tinygrad's bottom-up graph_rewrite with block_create.
  Node* CreateBottomUp(Node* n, Memo& memo) {
    if (auto it = memo.find(n); it != memo.end()) return it->second;
    DepthGuard guard(this);
    if (!status_.ok()) return n;
    Node* last = n;
    while (Node* next = MakeBlock(last)) last = next;
    if (last->uop != nullptr && !last->uop->src().empty()) {
      Fail(absl::StrCat("linearize: ", OpName(last->op), " has sources but is never placed in a block"));
      return n;
    }
    std::vector<Node*> new_src;
    new_src.reserve(last->src.size());
    for (Node* s : last->src) new_src.push_back(CreateBottomUp(s, memo));
    Node* ret = new_src == last->src ? last : CreateBottomUp(Rebuild(last, std::move(new_src)), memo);
    memo[n] = ret;
    return ret;
  }

  // add_blockends: wraps `base` in one BLOCKEND per context entry of `new_ctx` not in `current_ctx`.
  Node* AddBlockends(Node* base, Ctx new_ctx, const Ctx& current_ctx, int cnt) {
    Ctx ends_to_add;
    for (const UOp* z : new_ctx) {
      if (!InCtx(current_ctx, z)) ends_to_add.push_back(z);
    }
    while (!ends_to_add.empty()) {
      const UOp* r = ends_to_add.back();
      ends_to_add.pop_back();
      new_ctx.erase(std::remove(new_ctx.begin(), new_ctx.end(), r), new_ctx.end());
      BasicBlock* bb = NewBlock();
      bb->lst = {Keep(UOp::New(r->op() == Ops::IF ? Ops::ENDIF : Ops::ENDRANGE, dtypes::kVoid, {r->ref()}))};
      bb->ctx = new_ctx;
      bb->end = r;
      bb->cnt = cnt;
      base = BlockNode(Ops::BLOCKEND, bb, std::vector<Node*>(cnt, base));
    }
    return base;
  }

  // make_block_bottom_up: the block of a kernel node or of a BLOCKSTART, grown over the sources whose
  // children are all in it and whose context is the same.
  Node* MakeBlock(Node* x) {
    if (kDontPlaceInBlock.contains(x->op) || x->op == Ops::BLOCK || x->op == Ops::BLOCKEND) return nullptr;
    Ctx current_ctx;
    std::optional<Ctx> child_ctx;
    int child_count;
    std::vector<const UOp*> lst;
    if (x->op == Ops::BLOCKSTART) {
      current_ctx = x->bb->ctx;
      child_ctx = x->bb->child_ctx;
      for (Node* s : x->src) lst.push_back(s->uop);
      child_count = 1;
    } else {
      const Info& info = info_.at(x->uop);
      current_ctx = info.block_ctx;
      child_count = info.child_count;
      child_ctx = info.child_ctx;
      lst.push_back(x->uop);
    }

    // Nodes seen but not (yet) merged, with how often they were seen, in insertion order (a Python dict:
    // deleting and re-adding a key moves it to the end).
    struct Seen {
      const UOp* u;
      int count;
      bool live;
    };
    std::vector<Seen> unmergable;
    absl::flat_hash_map<const UOp*, size_t> unmergable_at;
    // Sources whose children are all here but whose context differs: seeds of new blocks, by (ctx,
    // child_ctx).
    std::vector<std::pair<std::pair<Ctx, std::optional<Ctx>>, std::vector<const UOp*>>> blockseeds;

    std::deque<const UOp*> frontier;
    for (const UOp* y : lst) {
      for (size_t i = y->num_src(); i-- > 0;) frontier.push_back(y->src(i));
    }
    while (!frontier.empty()) {
      const UOp* u = frontier.front();
      frontier.pop_front();
      auto [it, inserted] = unmergable_at.try_emplace(u, unmergable.size());
      if (inserted) unmergable.push_back({u, 0, true});
      Seen& seen = unmergable[it->second];
      const Info& info = info_.at(u);
      if (!kDontPlaceInBlock.contains(u->op()) && info.child_count == seen.count + 1) {
        if (info.block_ctx == current_ctx) {
          lst.push_back(u);
          for (size_t i = u->num_src(); i-- > 0;) frontier.push_back(u->src(i));
        } else {
          auto key = std::make_pair(info.block_ctx, info.child_ctx);
          auto seed = std::find_if(blockseeds.begin(), blockseeds.end(),
                                   [&key](const auto& entry) { return entry.first == key; });
          if (seed == blockseeds.end()) {
            blockseeds.emplace_back(std::move(key), std::vector<const UOp*>{});
            seed = blockseeds.end() - 1;
          }
          seed->second.push_back(u);
        }
        seen.live = false;
        unmergable_at.erase(it);
      } else {
        ++seen.count;
      }
    }

    std::vector<Node*> srcs;
    for (const Seen& seen : unmergable) {
      if (!seen.live) continue;
      Node* end = AddBlockends(KernelNode(seen.u), info_.at(seen.u).block_ctx, current_ctx, seen.count);
      srcs.insert(srcs.end(), seen.count, end);
    }
    for (auto& [key, seeds] : blockseeds) {
      BasicBlock* start = NewBlock();
      start->ctx = key.first;
      start->child_ctx = key.second;
      std::vector<Node*> seed_nodes;
      for (const UOp* u : seeds) seed_nodes.push_back(KernelNode(u));
      Node* base = BlockNode(Ops::BLOCKSTART, start, std::move(seed_nodes));
      srcs.push_back(AddBlockends(base, key.first, current_ctx, 1));
    }

    std::reverse(lst.begin(), lst.end());
    BasicBlock* bb = NewBlock();
    bb->lst = BlockReorder(lst);
    bb->ctx = std::move(current_ctx);
    bb->cnt = child_count;
    bb->child_ctx = std::move(child_ctx);
    return BlockNode(Ops::BLOCK, bb, std::move(srcs));
  }

  // block_reorder: a toposort of one block's (locally toposorted) nodes, as close as the dependencies allow
  // to the order (priority, tuplize): a node's priority is the lowest of its users', -1000 for a LOAD and
  // -1500 for a BARRIER, so loads, barriers and everything feeding them come first.
  std::vector<const UOp*> BlockReorder(const std::vector<const UOp*>& lst) {
    // Nodes by their position in `lst`.
    const int n = static_cast<int>(lst.size());
    absl::flat_hash_map<const UOp*, int> position;
    position.reserve(n);
    for (int i = 0; i < n; ++i) position.emplace(lst[i], i);
    std::vector<absl::InlinedVector<int, 2>> local_children(n);
    std::vector<int> in_degree(n, 0), priority(n, 0);
    std::vector<bool> prioritized(n, false);
    for (int i = n - 1; i >= 0; --i) {
      const UOp* u = lst[i];
      for (const UOp* s : u->src()) {
        if (auto it = position.find(s); it != position.end()) {
          local_children[it->second].push_back(i);
          ++in_degree[i];
        }
      }
      int p = 0;
      for (int c : local_children[i]) {
        if (!prioritized[c]) {
          Fail("linearize: a block is not locally toposorted");
          return lst;
        }
        p = std::min(p, priority[c]);
      }
      if (u->op() == Ops::LOAD) p = std::min(p, -1000);
      if (u->op() == Ops::BARRIER) p = std::min(p, -1500);
      priority[i] = p;
      prioritized[i] = true;
    }

    std::vector<int> ideal(n);
    for (int i = 0; i < n; ++i) ideal[i] = i;
    PythonSort(ideal, [&](int a, int b) {
      if (priority[a] != priority[b]) return priority[a] < priority[b];
      return TuplizeLess(lst[a], lst[b]);
    });
    std::vector<int> nkey(n);
    for (int k = 0; k < n; ++k) nkey[ideal[k]] = k;

    // Then the toposort that always takes the ready node first in that order. Keys are distinct.
    std::priority_queue<int, std::vector<int>, std::greater<>> heap;  // of nkeys
    for (int i = 0; i < n; ++i) {
      if (in_degree[i] == 0) heap.push(nkey[i]);
    }
    std::vector<const UOp*> out;
    out.reserve(n);
    while (!heap.empty()) {
      int u = ideal[heap.top()];
      heap.pop();
      out.push_back(lst[u]);
      for (int v : local_children[u]) {
        if (--in_degree[v] == 0) heap.push(nkey[v]);
      }
    }
    if (out.size() != lst.size()) Fail("linearize: a block's nodes do not form a DAG");
    return out;
  }

  // ---- Linearizer: Merge Blockends ----

  // tinygrad's toposort (depth first, sources in order) of the block graph.
  static std::vector<Node*> Toposort(Node* root) {
    std::vector<Node*> out;
    absl::flat_hash_set<Node*> done;
    std::vector<std::pair<Node*, bool>> stack = {{root, false}};
    while (!stack.empty()) {
      auto [node, visited] = stack.back();
      stack.pop_back();
      if (done.contains(node)) continue;
      if (!visited) {
        stack.push_back({node, true});
        for (auto it = node->src.rbegin(); it != node->src.rend(); ++it) stack.push_back({*it, false});
      } else {
        done.insert(node);
        out.push_back(node);
      }
    }
    return out;
  }

  // merge_blockends: the BLOCKENDs of one RANGE/IF become one, with the sources of all; null when none merge.
  Node* MergeBlockends(Node* root) {
    std::vector<std::pair<const UOp*, std::vector<Node*>>> by_end;
    for (Node* be : Toposort(root)) {
      if (be->op != Ops::BLOCKEND) continue;
      auto it =
          std::find_if(by_end.begin(), by_end.end(), [be](const auto& e) { return e.first == be->bb->end; });
      if (it == by_end.end()) {
        by_end.push_back({be->bb->end, {}});
        it = by_end.end() - 1;
      }
      it->second.push_back(be);
    }
    absl::flat_hash_map<Node*, Node*> forks;
    for (auto& [end, ends] : by_end) {
      if (ends.size() < 2) continue;
      BasicBlock* bb = NewBlock();
      bb->lst = ends[0]->bb->lst;
      Ctx ctx;
      std::vector<Node*> src;
      for (Node* e : ends) {
        ctx.insert(ctx.end(), e->bb->ctx.begin(), e->bb->ctx.end());
        bb->cnt += e->bb->cnt;
        src.insert(src.end(), e->src.begin(), e->src.end());
      }
      bb->ctx = SortCtx(ctx);
      bb->end = end;
      Node* out = BlockNode(Ops::BLOCKEND, bb, std::move(src));
      for (Node* e : ends) forks[e] = out;
    }
    if (forks.empty()) return nullptr;
    Memo memo;
    return Substitute(root, forks, memo);
  }

  // UOp.substitute: a bottom-up rewrite replacing the keys of `forks`.
  Node* Substitute(Node* n, const absl::flat_hash_map<Node*, Node*>& forks, Memo& memo) {
    if (auto it = memo.find(n); it != memo.end()) return it->second;
    DepthGuard guard(this);
    if (!status_.ok()) return n;
    Node* last = n;
    for (auto it = forks.find(last); it != forks.end(); it = forks.find(last)) last = it->second;
    std::vector<Node*> new_src;
    new_src.reserve(last->src.size());
    for (Node* s : last->src) new_src.push_back(Substitute(s, forks, memo));
    Node* ret = new_src == last->src ? last : Substitute(Rebuild(last, std::move(new_src)), forks, memo);
    memo[n] = ret;
    return ret;
  }

  // ---- Linearizer: Merge Blocks ----

  // tinygrad's top-down graph_rewrite with block_merge.
  Node* MergeTopDown(Node* n, Memo& memo) {
    if (auto it = memo.find(n); it != memo.end()) return it->second;
    DepthGuard guard(this);
    if (!status_.ok()) return n;
    std::vector<Node*> new_src;
    new_src.reserve(n->src.size());
    for (Node* s : n->src) new_src.push_back(MergeTopDown(s, memo));
    Node* next = nullptr;
    if (new_src == n->src) {
      if (n->op == Ops::BLOCK || n->op == Ops::BLOCKEND) next = MergeBlock(n);
      if (next == nullptr && n->op == Ops::BLOCKEND) next = RemoveBlockend(n);
    } else {
      next = Rebuild(n, std::move(new_src));
    }
    Node* ret = next == nullptr ? n : MergeTopDown(next, memo);
    memo[n] = ret;
    return ret;
  }

  // merge_block: folds in the source BLOCKs all of whose uses are here (same context for a BLOCK; inside
  // the range or if for a BLOCKEND).
  Node* MergeBlock(Node* x) {
    std::vector<Node*> unmergable;
    std::vector<std::pair<Node*, int>> mergable_count;
    for (Node* y : x->src) {
      bool mergable = y->op == Ops::BLOCK && ((x->op == Ops::BLOCK && x->bb->ctx == y->bb->ctx) ||
                                              (x->op == Ops::BLOCKEND && InCtx(y->bb->ctx, x->bb->end)));
      if (!mergable) {
        unmergable.push_back(y);
        continue;
      }
      auto it = std::find_if(mergable_count.begin(), mergable_count.end(),
                             [y](const auto& e) { return e.first == y; });
      if (it == mergable_count.end()) {
        mergable_count.push_back({y, 1});
      } else {
        ++it->second;
      }
    }
    std::vector<Node*> mergable;
    for (auto& [k, v] : mergable_count) {
      if (v == k->bb->cnt) {
        mergable.push_back(k);
      } else {
        unmergable.insert(unmergable.end(), v, k);
      }
    }
    if (mergable.empty()) return nullptr;
    BasicBlock* bb = NewBlock();
    *bb = *x->bb;
    bb->lst.clear();
    std::vector<Node*> src;
    for (Node* m : mergable) {
      bb->lst.insert(bb->lst.end(), m->bb->lst.begin(), m->bb->lst.end());
      src.insert(src.end(), m->src.begin(), m->src.end());
    }
    bb->lst.insert(bb->lst.end(), x->bb->lst.begin(), x->bb->lst.end());
    src.insert(src.end(), unmergable.begin(), unmergable.end());
    return BlockNode(x->op, bb, std::move(src));
  }

  // remove_blockend: once nothing inside the range or if is left to merge, the block that opened it, the
  // BLOCKEND's body and its ENDRANGE/ENDIF become one block (DEFINE_ACCs of the range go before it).
  Node* RemoveBlockend(Node* x) {
    const UOp* end = x->bb->end;
    for (Node* y : x->src) {
      if ((y->op == Ops::BLOCK || y->op == Ops::BLOCKEND) && InCtx(y->bb->ctx, end)) return nullptr;
    }
    std::vector<Node*> parents;
    for (Node* y : x->src) {
      if (y->op == Ops::BLOCK && y->bb->child_ctx && InCtx(*y->bb->child_ctx, end)) parents.push_back(y);
    }
    if (parents.empty()) return nullptr;
    Node* parent = parents[0];
    if (std::any_of(parents.begin(), parents.end(), [parent](Node* p) { return p != parent; })) {
      Fail(absl::StrCat("linearize: a BLOCKEND has ", parents.size(), " different parent blocks"));
      return nullptr;
    }
    if (static_cast<int>(parents.size()) != parent->bb->cnt) {
      Fail("linearize: a BLOCKEND does not hold every use of its parent block");
      return nullptr;
    }
    std::vector<const UOp*> early, late;
    for (const UOp* y : x->bb->lst) {
      bool acc_of_range =
          y->op() == Ops::DEFINE_ACC && std::find(y->src().begin(), y->src().end(), end) != y->src().end();
      (acc_of_range ? early : late).push_back(y);
    }
    // A range with a barrier in it needs one at its start too.
    if (!late.empty() && late.back()->op() == Ops::ENDRANGE &&
        std::any_of(late.begin(), late.end(), [](const UOp* y) { return y->op() == Ops::BARRIER; })) {
      late.insert(late.begin(), Keep(UOp::New(Ops::BARRIER)));
    }
    BasicBlock* bb = NewBlock();
    bb->lst = std::move(early);
    bb->lst.insert(bb->lst.end(), parent->bb->lst.begin(), parent->bb->lst.end());
    bb->lst.insert(bb->lst.end(), late.begin(), late.end());
    for (const UOp* y : x->bb->ctx) {
      if (y != end) bb->ctx.push_back(y);
    }
    bb->cnt = x->bb->cnt;
    std::vector<Node*> src;
    for (Node* y : x->src) {
      if (y != parent) src.push_back(y);
    }
    src.insert(src.end(), parent->src.begin(), parent->src.end());
    return BlockNode(Ops::BLOCK, bb, std::move(src));
  }

  // ---- Linearizer: Finalize ----

  absl::StatusOr<std::vector<UOpPtr>> Finalize(Node* root) {
    if (root->op != Ops::BLOCK)
      return absl::InvalidArgumentError("linearize failure: the root is not a block");
    std::vector<const UOp*> early;
    for (Node* s : root->src) {
      if (s->uop == nullptr || !kDontPlaceInBlock.contains(s->op)) {
        return absl::InvalidArgumentError(
            absl::StrCat("linearize failure: blocks left unmerged (a ", OpName(s->op), " under the root)"));
      }
      if (std::find(early.begin(), early.end(), s->uop) == early.end()) early.push_back(s->uop);
    }
    PythonSort(early, TuplizeLess);
    std::vector<UOpPtr> out;
    out.reserve(early.size() + root->bb->lst.size());
    for (const UOp* u : early) out.push_back(u->ref());
    for (const UOp* u : root->bb->lst) out.push_back(u->ref());
    return out;
  }

  absl::Status status_;
  int depth_ = 0;
  absl::flat_hash_map<const UOp*, Info> info_;
  std::deque<Node> nodes_;
  std::deque<BasicBlock> blocks_;
  absl::flat_hash_map<const UOp*, Node*> kernel_nodes_;
  absl::flat_hash_map<std::tuple<Ops, const BasicBlock*, std::vector<Node*>>, Node*> block_nodes_;
  std::vector<UOpPtr> kept_;  // the ENDRANGE/ENDIF/BARRIER nodes the blocks refer to
};

}  // namespace

absl::StatusOr<std::vector<UOpPtr>> Linearize(const UOpPtr& sink) {
  if (!sink) return absl::InvalidArgumentError("linearize: null sink");
  Linearizer linearizer;
  return linearizer.Run(sink.get());
}

}  // namespace uopc
