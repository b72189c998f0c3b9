#include "uop/uop.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstring>
#include <memory>
#include <new>
#include <thread>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_set.h"
#include "uop/check.h"

namespace uopc {

// ---- the intern table ----

// The fields that identify a node, for lookups before a node exists.
struct UOpKey {
  Ops op;
  DType dtype;
  absl::Span<const UOpPtr> src;
  const Arg& arg;
  const Arg& tag;
  size_t hash;
};

struct UOpInternals {
  // Not absl::HashOf: interning hashes every node built, and a multiply-xorshift per word with a final
  // avalanche (the table takes both its low and high bits) is cheaper for the same spread.
  static size_t HashKey(Ops op, DType dtype, absl::Span<const UOpPtr> src, const Arg& arg, const Arg& tag) {
    uint64_t h = Mix(static_cast<uint64_t>(op) << 48 ^ src.size(), dtype.Bits());
    h = Mix(h, static_cast<uint64_t>(dtype.ptr_size()));
    h = Mix(h, arg.is_none() ? 0 : arg.Hash());  // Arg::Hash of None is 0: most nodes have no arg
    for (const UOpPtr& s : src) h = Mix(h, reinterpret_cast<uintptr_t>(s.get()));
    if (!tag.is_none()) h = Mix(h, tag.Hash());
    return Avalanche(h);
  }
  static uint64_t Mix(uint64_t h, uint64_t v) {
    h = (h ^ v) * 0x9E3779B97F4A7C15ull;
    return h ^ (h >> 29);
  }
  static uint64_t Avalanche(uint64_t h) {  // murmur3's fmix64
    h ^= h >> 33;
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ull;
    return h ^ (h >> 33);
  }
  static bool KeyEquals(const UOp* u, const UOpKey& k) {
    if (u->hash_ != k.hash || u->op_ != k.op || u->dtype_ != k.dtype || u->src_.size() != k.src.size()) {
      return false;
    }
    for (size_t i = 0; i < k.src.size(); ++i) {
      if (u->src_[i].get() != k.src[i].get()) return false;
    }
    return u->arg_ == k.arg && (u->tag_ ? *u->tag_ == k.tag : k.tag.is_none());
  }
  static void Destroy(const UOp* u);
  static void SetBounds(UOp* u, ConstValue lo, ConstValue hi);
  static bool FastIntBounds(Ops op, DType dtype, absl::Span<const UOpPtr> src, const Arg& arg, UOp* u);
  static int32_t Refs(const UOp* u) { return u->refs_.load(std::memory_order_acquire); }
  static void AddRef(const UOp* u) { u->AddRef(); }
};

namespace {

struct NodeHash {
  using is_transparent = void;
  size_t operator()(const UOp* u) const { return u->hash(); }
  size_t operator()(const UOpKey& k) const { return k.hash; }
};

struct NodeEq {
  using is_transparent = void;
  bool operator()(const UOp* a, const UOp* b) const { return a == b; }
  bool operator()(const UOp* a, const UOpKey& k) const { return UOpInternals::KeyEquals(a, k); }
  bool operator()(const UOpKey& k, const UOp* a) const { return UOpInternals::KeyEquals(a, k); }
};

constexpr int kNumShards = 64;

// A test-and-test-and-set lock. Critical sections here are a hash probe or two, and almost every program
// interns from one thread, so an uncontended lock must cost next to nothing; absl::Mutex (with Debian's build
// tracking lock order for deadlock detection) cost about a sixth of a symbolic rewrite.
class ABSL_LOCKABLE SpinLock {
 public:
  void Lock() ABSL_EXCLUSIVE_LOCK_FUNCTION() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void Unlock() ABSL_UNLOCK_FUNCTION() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

class ABSL_SCOPED_LOCKABLE SpinLockHolder {
 public:
  explicit SpinLockHolder(SpinLock* lock) ABSL_EXCLUSIVE_LOCK_FUNCTION(lock) : lock_(lock) { lock_->Lock(); }
  ~SpinLockHolder() ABSL_UNLOCK_FUNCTION() { lock_->Unlock(); }
  SpinLockHolder(const SpinLockHolder&) = delete;
  SpinLockHolder& operator=(const SpinLockHolder&) = delete;

 private:
  SpinLock* lock_;
};

struct Shard {
  SpinLock mu;
  absl::flat_hash_set<const UOp*, NodeHash, NodeEq> nodes ABSL_GUARDED_BY(mu);
};

std::array<Shard, kNumShards>& Shards() {
  static auto* const shards = new std::array<Shard, kNumShards>();
  return *shards;
}

Shard& ShardFor(size_t hash) { return Shards()[(hash >> 7) % kNumShards]; }

}  // namespace

bool UOp::TryAddRef() const {
  int32_t n = refs_.load(std::memory_order_relaxed);
  while (n > 0) {
    if (refs_.compare_exchange_weak(n, n + 1, std::memory_order_acq_rel, std::memory_order_relaxed))
      return true;
  }
  return false;
}

void UOp::Release() const {
  if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) UOpInternals::Destroy(this);
}

// Unregisters and frees a node whose count reached zero. Sources released to zero are queued instead of freed
// recursively, so freeing a long chain uses constant stack.
void UOpInternals::Destroy(const UOp* u) {
  thread_local std::vector<const UOp*> pending;
  thread_local bool draining = false;
  pending.push_back(u);
  if (draining) return;
  draining = true;
  while (!pending.empty()) {
    const UOp* n = pending.back();
    pending.pop_back();
    {
      Shard& shard = ShardFor(n->hash_);
      SpinLockHolder lock(&shard.mu);
      auto it = shard.nodes.find(n);
      // A concurrent New() may have replaced this dying node with a fresh equal one; leave that one alone.
      if (it != shard.nodes.end() && *it == n) shard.nodes.erase(it);
    }
    UOp* mutable_n = const_cast<UOp*>(n);
    for (UOpPtr& s : mutable_n->src_) {
      const UOp* child = s.ptr_;
      s.ptr_ = nullptr;
      if (child->refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) pending.push_back(child);
    }
    delete n;
  }
  draining = false;
}

namespace {

// Node memory. Nodes are carved from chunks, without the allocator's per-allocation header, so they lie
// sizeof(UOp) apart (144 bytes, not 160): on graphs larger than the cache, fewer bytes per node is fewer
// misses. A freed node goes on the freeing thread's list and is reused from there; like an arena, the memory
// of a program's peak number of nodes stays reserved for it. A thread's list holds at most kMaxLocalFree
// nodes, and a thread that ends gives up all of its own: those go to a shared list, which threads draw from
// before they carve new chunks (so a thread that only frees the nodes another one makes does not hoard them).
// ASan builds allocate each node on its own, so that they still see every use after free.
#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPoolNodes = false;
#else
constexpr bool kPoolNodes = true;
#endif

struct FreeNode {
  FreeNode* next;
};

class SharedFreeNodes {
 public:
  void Give(FreeNode* first, FreeNode* last) {
    SpinLockHolder lock(&mu_);
    last->next = head_.load(std::memory_order_relaxed);
    head_.store(first, std::memory_order_relaxed);
  }
  FreeNode* TakeAll() {
    // A peek without the lock first: the list is empty nearly always, and at worst the thread carves a chunk
    // it could have spared.
    if (head_.load(std::memory_order_relaxed) == nullptr) return nullptr;
    SpinLockHolder lock(&mu_);
    return head_.exchange(nullptr, std::memory_order_relaxed);
  }

 private:
  SpinLock mu_;
  std::atomic<FreeNode*> head_{nullptr};  // written under mu_
};

SharedFreeNodes& SharedFree() {
  static auto* const shared = new SharedFreeNodes();
  return *shared;
}

std::atomic<size_t> chunks_carved{0};

class NodePool {
 public:
  static constexpr size_t kChunkNodes = 512;
  static constexpr size_t kMaxLocalFree = size_t{1} << 16;
  static_assert(alignof(UOp) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "chunks come from plain operator new");

  ~NodePool() {
    while (next_ != end_) Free(Carve());
    GiveAway();
    // Static UOpPtrs may still free nodes on this thread after its thread_locals are gone: Free sends those
    // to the shared list.
    dead_ = true;
  }
  void* Allocate() {
    if (head_ == nullptr) {
      // The shared list's nodes become this thread's; their number is unknown, so they do not count towards
      // kMaxLocalFree (Free keeps counting only what this thread frees).
      head_ = SharedFree().TakeAll();
      tail_ = nullptr;
    }
    if (head_ != nullptr) {
      if (count_ > 0) --count_;
      return std::exchange(head_, head_->next);
    }
    if (next_ == end_) {
      next_ = static_cast<char*>(::operator new(kChunkNodes * sizeof(UOp)));
      end_ = next_ + kChunkNodes * sizeof(UOp);
      chunks_carved.fetch_add(1, std::memory_order_relaxed);
    }
    return Carve();
  }
  void Free(void* p) {
    FreeNode* n = new (p) FreeNode{head_};
    if (dead_) {
      n->next = nullptr;
      SharedFree().Give(n, n);
      return;
    }
    if (head_ == nullptr) tail_ = n;
    head_ = n;
    if (++count_ == kMaxLocalFree) GiveAway();
  }

 private:
  void* Carve() { return std::exchange(next_, next_ + sizeof(UOp)); }

  void GiveAway() {
    if (head_ == nullptr) return;
    if (tail_ == nullptr) {  // the list came from the shared one: find its end
      tail_ = head_;
      while (tail_->next != nullptr) tail_ = tail_->next;
    }
    SharedFree().Give(head_, tail_);
    head_ = tail_ = nullptr;
    count_ = 0;
  }

  FreeNode* head_ = nullptr;
  FreeNode* tail_ = nullptr;  // null when unknown (a list taken from the shared one)
  size_t count_ = 0;          // nodes this thread freed onto its list since it was last given away
  char* next_ = nullptr;      // the current chunk's nodes not yet handed out
  char* end_ = nullptr;
  bool dead_ = false;
};

thread_local NodePool node_pool;

}  // namespace

namespace internal {
size_t NodeChunksForTesting() { return chunks_carved.load(std::memory_order_relaxed); }
}  // namespace internal

void* UOp::operator new(size_t size) {
  UOPC_CHECK(size == sizeof(UOp));
  if (kPoolNodes) return node_pool.Allocate();
  return ::operator new(size);
}

void UOp::operator delete(void* p, size_t size) {
  if (kPoolNodes) {
    node_pool.Free(p);
    return;
  }
  ::operator delete(p);
}

UOp::UOp(Ops op, DType dtype, SrcVector&& src, Arg&& arg, Arg&& tag, size_t hash)
    : op_(op),
      src_(std::move(src)),
      dtype_(dtype),
      hash_(hash),
      arg_(std::move(arg)),
      tag_(tag.is_none() ? nullptr : std::make_unique<const Arg>(std::move(tag))) {}

UOp::UOp(Ops op, DType dtype, SrcVector&& src, const Arg& arg, const Arg& tag, size_t hash)
    : op_(op),
      src_(std::move(src)),
      dtype_(dtype),
      hash_(hash),
      arg_(arg),
      tag_(tag.is_none() ? nullptr : std::make_unique<const Arg>(tag)) {}

const Arg& UOp::NoTag() {
  static const Arg* const none = new Arg();
  return *none;
}

namespace {
// The lease is taken with an acquire and given back with a release, so each holder sees every slot its
// predecessors wrote; tokens increase, so those slots read as empty to it.
std::atomic<bool> scratch_leased{false};
uint64_t scratch_last_token = 0;  // written only by the lease holder
}  // namespace

std::optional<ScratchLease> ScratchLease::TryAcquire() {
  if (scratch_leased.load(std::memory_order_relaxed) ||
      scratch_leased.exchange(true, std::memory_order_acquire)) {
    return std::nullopt;
  }
  return ScratchLease(++scratch_last_token);
}

ScratchLease::~ScratchLease() {
  if (token_ != 0) scratch_leased.store(false, std::memory_order_release);
}

void UOpInternals::SetBounds(UOp* u, ConstValue lo, ConstValue hi) {
  auto store = [&](const ConstValue& v) -> absl::int128 {
    if (u->dtype_.is_float()) {
      double f = v.AsFloat();
      uint64_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return absl::int128(bits);
    }
    return v.AsInt();
  };
  u->vmin_ = store(lo);
  u->vmax_ = store(hi);
}

// The bounds of the commonest integer nodes (CONST, ADD, MUL, MAX, MOD, IDIV) and of comparisons of integers,
// straight from the sources' stored bounds, with the results ComputeBounds gives (integer bounds clamped to
// +-2^125); false for everything else.
bool UOpInternals::FastIntBounds(Ops op, DType dtype, absl::Span<const UOpPtr> src, const Arg& arg, UOp* u) {
  if (dtype.is_ptr()) return false;
  const bool int_node = dtype.is_int();
  if (!int_node && !dtype.is_bool()) return false;
  using i128 = __int128;
  constexpr i128 kLimit = i128{1} << 125;
  auto clamp = [&](i128 v) { return v > kLimit ? kLimit : v < -kLimit ? -kLimit : v; };
  if (op == Ops::CONST) {
    if (!int_node || !arg.is_int() || !src.empty()) return false;
    int64_t i = arg.as_int();
    i128 v = dtype.scalar_type() == ScalarType::kUInt64 && i < 0 ? i128{static_cast<uint64_t>(i)} : i128{i};
    u->vmin_ = u->vmax_ = v;
    return true;
  }
  if (src.size() != 2) return false;
  const UOp* a = src[0].get();
  const UOp* b = src[1].get();
  // Non-float sources store their bounds as the integers (bools 0 and 1) ComputeBounds would read, within
  // +-2^125, so the sums and differences below cannot overflow.
  if (a->dtype_.is_float() || b->dtype_.is_float()) return false;
  const i128 alo = static_cast<i128>(a->vmin_), ahi = static_cast<i128>(a->vmax_);
  const i128 blo = static_cast<i128>(b->vmin_), bhi = static_cast<i128>(b->vmax_);
  auto set = [&](i128 lo, i128 hi) {
    u->vmin_ = lo;
    u->vmax_ = hi;
    return true;
  };
  // A comparison's bounds are bools (0 and 1) whatever the node's dtype.
  if (op == Ops::CMPLT) return set(ahi < blo, alo < bhi);
  if (op == Ops::CMPNE) return set(ahi < blo || bhi < alo, !(alo == ahi && ahi == blo && blo == bhi));
  if (!int_node) return false;
  switch (op) {
    case Ops::ADD:
      return set(clamp(alo + blo), clamp(ahi + bhi));
    case Ops::MUL: {
      auto mul = [&](i128 x, i128 y) {
        i128 r;
        if (__builtin_mul_overflow(x, y, &r)) return (x < 0) != (y < 0) ? -kLimit : kLimit;
        return clamp(r);
      };
      i128 p[4] = {mul(alo, blo), mul(alo, bhi), mul(ahi, blo), mul(ahi, bhi)};
      return set(std::min({p[0], p[1], p[2], p[3]}), std::max({p[0], p[1], p[2], p[3]}));
    }
    case Ops::MAX:
      return set(std::max(alo, blo), std::max(ahi, bhi));
    case Ops::MOD:
    case Ops::IDIV:
      if (auto r = internal::IntDivModBounds(op, alo, ahi, blo, bhi)) {
        return set(static_cast<i128>(r->first), static_cast<i128>(r->second));
      }
      return false;
    default:
      return false;
  }
}

UOpPtr UOp::New(Ops op, DType dtype, absl::Span<const UOpPtr> src, Arg arg, Arg tag) {
  return NewImpl(op, dtype, src, nullptr, arg, tag, /*own_args=*/true);
}

UOpPtr UOp::New(Ops op, DType dtype, SrcVector&& src, Arg arg, Arg tag) {
  return NewImpl(op, dtype, src, &src, arg, tag, /*own_args=*/true);
}

// One probe of the shard on a hit and on a miss: the node is built inside lazy_emplace, under the shard lock
// (building reads only the sources, which are alive, so it cannot re-enter the table).
UOpPtr UOp::NewImpl(Ops op, DType dtype, absl::Span<const UOpPtr> src, SrcVector* owned_src, const Arg& arg,
                    const Arg& tag, bool own_args) {
  for (const UOpPtr& s : src) UOPC_CHECK(s != nullptr, "null source");
  size_t hash = UOpInternals::HashKey(op, dtype, src, arg, tag);
  Shard& shard = ShardFor(hash);
  UOp* created = nullptr;
  auto build = [&](const auto& insert) {
    SrcVector node_src = owned_src != nullptr ? std::move(*owned_src) : SrcVector(src.begin(), src.end());
    // Moving out of the caller's by-value parameters: they are not const objects.
    created = own_args ? new UOp(op, dtype, std::move(node_src), std::move(const_cast<Arg&>(arg)),
                                 std::move(const_cast<Arg&>(tag)), hash)
                       : new UOp(op, dtype, std::move(node_src), arg, tag, hash);
    if (!UOpInternals::FastIntBounds(op, dtype, created->src_, created->arg_, created)) {
      auto [lo, hi] = ComputeBounds(op, dtype, created->src_, created->arg_);
      UOpInternals::SetBounds(created, lo, hi);
    }
    insert(created);
  };
  SpinLockHolder lock(&shard.mu);
  UOpKey key{op, dtype, src, arg, tag, hash};
  auto it = shard.nodes.lazy_emplace(key, build);
  if (created != nullptr) return UOpPtr(created, UOpPtr::Adopt{});
  if ((*it)->TryAddRef()) return UOpPtr(*it, UOpPtr::Adopt{});
  // An equal node is dying (its count reached zero, its Destroy is waiting for this lock): replace it; its
  // Destroy will see that the slot is no longer its own.
  shard.nodes.erase(it);
  shard.nodes.lazy_emplace(key, build);
  return UOpPtr(created, UOpPtr::Adopt{});
}

namespace {

// Rules build small integer constants all the time (`x * -1`, `c1 * c2`, the coefficients of a folded
// division): a fixed table of the scalar ones skips the hash and the intern table. The table holds a
// reference to each node it caches for the life of the process; LiveCount leaves them out.
class SmallConstCache {
 public:
  static constexpr int64_t kMin = -256, kMax = 1024;

  // The slot for a CONST of `dt` with `arg`, or null when such a constant is not cached.
  std::atomic<const UOp*>* Slot(DType dt, const Arg& arg) {
    if (dt != dt.scalar()) return nullptr;
    int64_t v;
    if (arg.is_int()) {
      v = arg.as_int();
      if (v < kMin || v >= kMax) return nullptr;
    } else if (arg.is_bool()) {
      v = arg.as_bool();
    } else {
      return nullptr;
    }
    return &slots_[static_cast<int>(dt.scalar_type())][v - kMin];
  }

  // Caches `node` in `slot` unless another thread was first.
  void Fill(std::atomic<const UOp*>* slot, const UOpPtr& node) {
    const UOp* expected = nullptr;
    if (slot->compare_exchange_strong(expected, node.get(), std::memory_order_acq_rel)) {
      UOpInternals::AddRef(node.get());  // the table's reference, never released
      size_.fetch_add(1, std::memory_order_relaxed);
    }
  }

  size_t size() const { return size_.load(std::memory_order_relaxed); }

 private:
  std::atomic<const UOp*> slots_[kNumScalarTypes][kMax - kMin] = {};
  std::atomic<size_t> size_{0};
};

SmallConstCache& SmallConsts() {
  static SmallConstCache* const cache = new SmallConstCache;
  return *cache;
}

}  // namespace

namespace {
std::atomic<int64_t> next_unique_number{0};
}  // namespace

int64_t internal::NextUniqueNumber() { return next_unique_number.fetch_add(1, std::memory_order_relaxed); }

void internal::ReserveUniqueNumbers(int64_t at_least) {
  int64_t current = next_unique_number.load(std::memory_order_relaxed);
  while (current < at_least &&
         !next_unique_number.compare_exchange_weak(current, at_least, std::memory_order_relaxed)) {
  }
}

size_t UOp::LiveCount() {
  size_t n = 0;
  for (Shard& shard : Shards()) {
    SpinLockHolder lock(&shard.mu);
    n += shard.nodes.size();
  }
  return n - SmallConsts().size();
}

ConstValue UOp::FloatBound(absl::int128 raw) {
  uint64_t bits = absl::Int128Low64(raw);
  double f;
  std::memcpy(&f, &bits, sizeof(f));
  return ConstValue::Float(f);
}

std::vector<const UOp*> UOp::Toposort(const std::function<bool(const UOp*)>& gate) const {
  std::vector<const UOp*> order;
  // Emitted nodes are marked in their scratch slots when the lease is free (no hash set to probe), else in a
  // set.
  std::optional<ScratchLease> lease = ScratchLease::TryAcquire();
  absl::flat_hash_set<const UOp*> done;
  auto is_done = [&](const UOp* u) {
    const void* unused;
    return lease.has_value() ? lease->Get(u, &unused) : done.contains(u);
  };
  auto mark_done = [&](const UOp* u) {
    if (lease.has_value()) {
      lease->Set(u, nullptr);
    } else {
      done.insert(u);
    }
  };
  // (node, sources pushed) pairs: a node is emitted the second time it is popped.
  std::vector<std::pair<const UOp*, bool>> stack;
  stack.emplace_back(this, false);
  while (!stack.empty()) {
    auto [node, expanded] = stack.back();
    stack.pop_back();
    if (is_done(node)) continue;
    if (!expanded) {
      if (gate && !gate(node)) continue;
      stack.emplace_back(node, true);
      for (size_t i = node->src_.size(); i-- > 0;) {
        node->src(i)->Prefetch();  // popped next
        stack.emplace_back(node->src(i), false);
      }
    } else {
      mark_done(node);
      order.push_back(node);
    }
  }
  return order;
}

UOpPtr UOp::Substitute(const absl::flat_hash_map<const UOp*, UOpPtr>& replacements) const {
  if (replacements.empty()) return ref();
  absl::flat_hash_map<const UOp*, UOpPtr> rebuilt;
  for (const UOp* n : Toposort([&](const UOp* u) { return !replacements.contains(u); })) {
    UOp::SrcVector src;
    bool changed = false;
    for (const UOpPtr& s : n->src_) {
      auto r = replacements.find(s.get());
      const UOpPtr* use = nullptr;
      if (r != replacements.end()) {
        use = &r->second;
      } else if (auto b = rebuilt.find(s.get()); b != rebuilt.end()) {
        use = &b->second;
      }
      if (use != nullptr && use->get() != s.get()) {
        changed = true;
        src.push_back(*use);
      } else {
        src.push_back(s);
      }
    }
    if (changed) rebuilt[n] = UOp::New(n->op_, n->dtype_, src, n->arg_, n->tag());
  }
  if (auto r = replacements.find(this); r != replacements.end()) return r->second;
  if (auto b = rebuilt.find(this); b != rebuilt.end()) return b->second;
  return ref();
}

// ---- constructors ----

UOpPtr UOp::Const(DType dt, ConstValue v) {
  Arg arg = ArgFromConst(v, dt);
  std::atomic<const UOp*>* slot = SmallConsts().Slot(dt, arg);
  if (slot == nullptr) return New(Ops::CONST, dt, {}, std::move(arg));
  if (const UOp* cached = slot->load(std::memory_order_acquire)) return cached->ref();
  UOpPtr node = New(Ops::CONST, dt, {}, std::move(arg));
  SmallConsts().Fill(slot, node);
  return node;
}

UOpPtr UOp::VConst(DType dt, absl::Span<const ConstValue> values) {
  bool all_same = true;
  for (const ConstValue& v : values) all_same &= v.Identical(values[0]);
  if (!values.empty() && all_same) return Const(dt, values[0]);
  Arg::Tuple t;
  for (const ConstValue& v : values) t.push_back(ArgFromConst(v, dt.scalar()));
  return New(Ops::VCONST, dt, {}, Arg(std::move(t)));
}

UOpPtr UOp::Variable(std::string name, int64_t min, int64_t max, DType dt) {
  return New(Ops::DEFINE_VAR, dt, {}, Arg{Arg(std::move(name)), Arg(min), Arg(max)});
}

UOpPtr UOp::Range(DType dt, int64_t end, int64_t axis) { return Range(Const(dt, end), axis); }
UOpPtr UOp::Range(const UOpPtr& end, int64_t axis) { return New(Ops::RANGE, end->dtype(), {end}, Arg(axis)); }

UOpPtr UOp::Sink(absl::Span<const UOpPtr> src, Arg arg) {
  return New(Ops::SINK, dtypes::kVoid, src, std::move(arg));
}

UOpPtr UOp::Vectorize(absl::Span<const UOpPtr> src) {
  UOPC_CHECK(!src.empty(), "VECTORIZE of nothing");
  return New(Ops::VECTORIZE, src[0]->dtype().Vec(static_cast<int>(src.size())), src);
}

// ---- UOpPtr builders ----

UOpPtr UOpPtr::alu(Ops op, absl::Span<const UOpPtr> more) const {
  UOp::SrcVector src;
  src.push_back(*this);
  for (const UOpPtr& m : more) src.push_back(m);
  DType out = src.back()->dtype();
  if (groups::kComparison.contains(op))
    out = out.count() > 1 ? dtypes::kBool.Vec(out.count()) : dtypes::kBool;
  return UOp::New(op, out, std::move(src));
}

UOpPtr UOpPtr::const_like(ConstValue v) const { return UOp::Const(ptr_->dtype(), v); }

UOpPtr UOpPtr::neg() const {
  if (ptr_->dtype().scalar().is_bool()) return logical_not();
  return mul(const_like(int64_t{-1}));
}

UOpPtr UOpPtr::cast(DType dt) const {
  if (ptr_->dtype() == dt) return *this;
  return UOp::New(Ops::CAST, dt, {*this});
}

UOpPtr UOpPtr::bitcast(DType dt) const { return UOp::New(Ops::BITCAST, dt, {*this}); }

UOpPtr UOpPtr::gep(absl::Span<const int64_t> idx) const {
  if (idx.size() == 1) {
    int64_t i = idx[0];
    if (ptr_->op() == Ops::VECTORIZE && i >= 0 && static_cast<size_t>(i) < ptr_->num_src()) {
      return ptr_->src()[i];
    }
    if (ptr_->op() == Ops::VCONST && i >= 0 && static_cast<size_t>(i) < ptr_->arg().size()) {
      return UOp::Const(ptr_->dtype().scalar(), ConstFromArg(ptr_->arg()[i], ptr_->dtype().scalar()));
    }
    if (ptr_->op() == Ops::CONST) return UOp::Const(ptr_->dtype().scalar(), ptr_->const_value());
  }
  DType scalar = ptr_->dtype().scalar();
  DType out = idx.size() > 1 ? scalar.Vec(static_cast<int>(idx.size())) : scalar;
  return UOp::New(Ops::GEP, out, {*this}, Arg::IntTuple(idx));
}

UOpPtr UOpPtr::broadcast(int count) const {
  if (count == 1) return *this;
  std::vector<UOpPtr> copies(count, *this);
  return UOp::New(Ops::VECTORIZE, ptr_->dtype().Vec(count), copies);
}

UOpPtr UOpPtr::index(const UOpPtr& idx, const UOpPtr& valid) const {
  if (valid) return UOp::New(Ops::INDEX, ptr_->dtype(), {*this, idx, valid});
  return UOp::New(Ops::INDEX, ptr_->dtype(), {*this, idx});
}

UOpPtr UOpPtr::load(absl::Span<const UOpPtr> more) const {
  UOp::SrcVector src;
  src.push_back(*this);
  for (const UOpPtr& m : more) src.push_back(m);
  return UOp::New(Ops::LOAD, ptr_->dtype().base(), src);
}

UOpPtr UOpPtr::store(absl::Span<const UOpPtr> more) const {
  UOp::SrcVector src;
  src.push_back(*this);
  for (const UOpPtr& m : more) src.push_back(m);
  return UOp::New(Ops::STORE, dtypes::kVoid, src);
}

UOpPtr UOpPtr::sink(absl::Span<const UOpPtr> more) const {
  UOp::SrcVector src;
  src.push_back(*this);
  for (const UOpPtr& m : more) src.push_back(m);
  return UOp::New(Ops::SINK, dtypes::kVoid, src);
}

UOpPtr UOpPtr::assign(const UOpPtr& x) const { return UOp::New(Ops::ASSIGN, ptr_->dtype(), {*this, x}); }

UOpPtr UOpPtr::bind(int64_t value) const {
  return UOp::New(Ops::BIND, ptr_->dtype(), {*this, const_like(value)});
}

UOpPtr UOp::WithSources(const UOp& like, SrcVector&& src) {
  if (like.src_.size() == src.size() && std::equal(src.begin(), src.end(), like.src_.begin()))
    return like.ref();
  return NewImpl(like.op_, like.dtype_, src, &src, like.arg_, like.tag(), /*own_args=*/false);
}

UOpPtr UOpPtr::replace_src(absl::Span<const UOpPtr> src) const {
  absl::Span<const UOpPtr> old = ptr_->src();
  if (old.size() == src.size()) {
    bool same = true;
    for (size_t i = 0; i < src.size() && same; ++i) same = old[i] == src[i];
    if (same) return *this;
  }
  return UOp::NewImpl(ptr_->op(), ptr_->dtype(), src, nullptr, ptr_->arg(), ptr_->tag(), /*own_args=*/false);
}

UOpPtr UOpPtr::replace_dtype(DType dt) const {
  if (dt == ptr_->dtype()) return *this;
  return UOp::New(ptr_->op(), dt, ptr_->src(), ptr_->arg(), ptr_->tag());
}

UOpPtr UOpPtr::replace_arg(Arg arg) const {
  if (arg == ptr_->arg()) return *this;
  return UOp::New(ptr_->op(), ptr_->dtype(), ptr_->src(), std::move(arg), ptr_->tag());
}

// ---- operators ----

UOpPtr operator+(const UOpPtr& a, const UOpPtr& b) { return a.add(b); }
UOpPtr operator-(const UOpPtr& a, const UOpPtr& b) { return a.sub(b); }
UOpPtr operator*(const UOpPtr& a, const UOpPtr& b) { return a.mul(b); }
UOpPtr operator/(const UOpPtr& a, const UOpPtr& b) { return a.div(b); }
UOpPtr operator%(const UOpPtr& a, const UOpPtr& b) { return a.mod(b); }
UOpPtr operator&(const UOpPtr& a, const UOpPtr& b) { return a.bitwise_and(b); }
UOpPtr operator|(const UOpPtr& a, const UOpPtr& b) { return a.bitwise_or(b); }
UOpPtr operator^(const UOpPtr& a, const UOpPtr& b) { return a.bitwise_xor(b); }
UOpPtr operator<<(const UOpPtr& a, const UOpPtr& b) { return a.lshift(b); }
UOpPtr operator>>(const UOpPtr& a, const UOpPtr& b) { return a.rshift(b); }
UOpPtr operator-(const UOpPtr& a) { return a.neg(); }

namespace {
ConstValue ToConst(int v) { return ConstValue::Int(v); }
ConstValue ToConst(int64_t v) { return ConstValue::Int(v); }
ConstValue ToConst(double v) { return ConstValue::Float(v); }
ConstValue ToConst(bool v) { return ConstValue::Bool(v); }
ConstValue Negated(int v) { return ConstValue::Int(-absl::int128(v)); }
ConstValue Negated(int64_t v) { return ConstValue::Int(-absl::int128(v)); }
ConstValue Negated(double v) { return ConstValue::Float(-v); }
ConstValue Negated(bool v) { return ConstValue::Int(v ? -1 : 0); }
}  // namespace

// tinygrad's sub with a number: self + const(-x); reversed: const(x) + (-self).
#define UOPC_DEFINE_SCALAR_OPERATORS(T)                                                      \
  UOpPtr operator+(const UOpPtr& a, T b) { return a.add(a.const_like(ToConst(b))); }         \
  UOpPtr operator+(T a, const UOpPtr& b) { return b.const_like(ToConst(a)).add(b); }         \
  UOpPtr operator-(const UOpPtr& a, T b) { return a.add(a.const_like(Negated(b))); }         \
  UOpPtr operator-(T a, const UOpPtr& b) { return b.const_like(ToConst(a)).add(b.neg()); }   \
  UOpPtr operator*(const UOpPtr& a, T b) { return a.mul(a.const_like(ToConst(b))); }         \
  UOpPtr operator*(T a, const UOpPtr& b) { return b.const_like(ToConst(a)).mul(b); }         \
  UOpPtr operator/(const UOpPtr& a, T b) { return a.div(a.const_like(ToConst(b))); }         \
  UOpPtr operator%(const UOpPtr& a, T b) { return a.mod(a.const_like(ToConst(b))); }         \
  UOpPtr operator&(const UOpPtr& a, T b) { return a.bitwise_and(a.const_like(ToConst(b))); } \
  UOpPtr operator|(const UOpPtr& a, T b) { return a.bitwise_or(a.const_like(ToConst(b))); }  \
  UOpPtr operator^(const UOpPtr& a, T b) { return a.bitwise_xor(a.const_like(ToConst(b))); } \
  UOpPtr operator<<(const UOpPtr& a, T b) { return a.lshift(a.const_like(ToConst(b))); }     \
  UOpPtr operator>>(const UOpPtr& a, T b) { return a.rshift(a.const_like(ToConst(b))); }
UOPC_DEFINE_SCALAR_OPERATORS(int)
UOPC_DEFINE_SCALAR_OPERATORS(int64_t)
UOPC_DEFINE_SCALAR_OPERATORS(double)
UOPC_DEFINE_SCALAR_OPERATORS(bool)
#undef UOPC_DEFINE_SCALAR_OPERATORS

}  // namespace uopc
