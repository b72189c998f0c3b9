#include "uop/uop.h"

#include <atomic>
#include <condition_variable>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "uop/check.h"

namespace uopc {
namespace {

TEST(UOpTest, InterningGivesTheSameObject) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr a2 = UOp::Variable("a", 0, 8);
  EXPECT_EQ(a, a2);
  EXPECT_EQ(a + 1, a2 + 1);
  EXPECT_NE(a + 1, a + 2);
  EXPECT_NE(UOp::Variable("a", 0, 9), a);
  // Tags are part of the identity.
  EXPECT_NE(UOp::New(Ops::NOOP, dtypes::kInt32, {a}, {}, Arg(1)), UOp::New(Ops::NOOP, dtypes::kInt32, {a}));
}

TEST(UOpTest, FloatConstantsCompareByBits) {
  EXPECT_NE(UOp::Const(dtypes::kFloat32, 0.0), UOp::Const(dtypes::kFloat32, -0.0));
  double nan = std::nan("");
  EXPECT_EQ(UOp::Const(dtypes::kFloat32, nan), UOp::Const(dtypes::kFloat32, nan));
  EXPECT_NE(UOp::Const(dtypes::kFloat32, 1.0), UOp::Const(dtypes::kFloat64, 1.0));
}

TEST(UOpTest, BuildersMirrorMathTrait) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr sub = a - 3;  // ADD(a, CONST -3)
  ASSERT_EQ(sub->op(), Ops::ADD);
  EXPECT_EQ(sub->src(1)->const_value(), ConstValue::Int(-3));
  UOpPtr rsub = 3 - a;  // ADD(CONST 3, MUL(a, -1))
  ASSERT_EQ(rsub->op(), Ops::ADD);
  EXPECT_EQ(rsub->src(0)->op(), Ops::CONST);
  EXPECT_EQ(rsub->src(1)->op(), Ops::MUL);
  UOpPtr ge = a.ge(4);  // CMPNE(CMPLT(a, 4), True)
  EXPECT_EQ(ge->op(), Ops::CMPNE);
  EXPECT_EQ(ge->dtype(), dtypes::kBool);
  EXPECT_EQ(ge->src(0)->op(), Ops::CMPLT);
  UOpPtr gt = a.gt(4);  // CMPLT(4, a)
  EXPECT_EQ(gt->src(0)->op(), Ops::CONST);
  UOpPtr mn = a.minimum(a + 1);
  EXPECT_EQ(mn->op(), Ops::MUL);
  EXPECT_EQ(mn->src(0)->op(), Ops::MAX);
  EXPECT_EQ(a.cast(dtypes::kInt32), a);
  EXPECT_EQ(a.cast(dtypes::kFloat32)->op(), Ops::CAST);
  UOpPtr b = UOp::Variable("b", 0, 1, dtypes::kBool);
  EXPECT_EQ((-b)->op(), Ops::CMPNE);  // logical not for bools
}

TEST(UOpTest, RangeAnalysis) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr b = UOp::Variable("b", -3, 5);
  EXPECT_EQ((a + b)->vmin(), ConstValue::Int(-3));
  EXPECT_EQ((a + b)->vmax(), ConstValue::Int(13));
  EXPECT_EQ((a * b)->vmin(), ConstValue::Int(-24));
  EXPECT_EQ((a * b)->vmax(), ConstValue::Int(40));
  EXPECT_EQ((a % 4)->vmax(), ConstValue::Int(3));
  EXPECT_EQ((b % 4)->vmin(), ConstValue::Int(-3));
  EXPECT_EQ(a.idiv(3)->vmax(), ConstValue::Int(2));
  EXPECT_EQ(b.idiv(-2)->vmin(), ConstValue::Int(-2));  // 5 // -2 == -2 in C
  EXPECT_EQ(b.idiv(-2)->vmax(), ConstValue::Int(1));   // -3 // -2 == 1
  EXPECT_EQ(a.lt(9)->vmin(), ConstValue::Bool(true));
  EXPECT_EQ(a.lt(4)->vmin(), ConstValue::Bool(false));
  EXPECT_EQ(a.lt(4)->vmax(), ConstValue::Bool(true));
  EXPECT_EQ(UOp::Range(dtypes::kInt32, 16, 0)->vmax(), ConstValue::Int(15));
  EXPECT_EQ(a.cast(dtypes::kUInt8)->vmax(), ConstValue::Int(8));
  EXPECT_EQ(UOp::Variable("f", 0, 1, dtypes::kFloat32)->vmin().kind(), ConstValue::Kind::kFloat);
  UOpPtr big = UOp::Variable("x", INT64_MIN, INT64_MAX, dtypes::kInt64);
  EXPECT_EQ((big * big)->vmax() > ConstValue::Int(INT64_MAX), true);  // exact, no wraparound
  EXPECT_EQ(UOp::Const(dtypes::kUInt64, ConstValue::Int(absl::MakeInt128(0, UINT64_MAX)))->vmax(),
            ConstValue::Int(absl::MakeInt128(0, UINT64_MAX)));
}

// Toposort keeps its visited set in the nodes' scratch slots when it can take the lease, and in a table when
// it cannot (a graph walk holds the lease, or the gate walks too): the order must be the same.
TEST(UOpTest, ToposortIsTheSameWithOrWithoutTheLease) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr b = UOp::Variable("b", 0, 8);
  UOpPtr e = a;
  for (int i = 0; i < 50; ++i) e = (i % 3 == 0 ? e * b : e + a) + i;
  std::vector<const UOp*> with_lease = e->Toposort();
  std::vector<const UOp*> without;
  {
    std::optional<ScratchLease> held = ScratchLease::TryAcquire();
    ASSERT_TRUE(held.has_value());
    without = e->Toposort();
  }
  EXPECT_EQ(with_lease, without);
  EXPECT_EQ(with_lease.size(), e->Toposort().size());
  // A gate that walks too (its Toposort runs while the outer one holds the lease).
  size_t inner_nodes = 0;
  std::vector<const UOp*> gated = e->Toposort([&](const UOp* u) {
    inner_nodes += u->Toposort().size();
    return true;
  });
  EXPECT_EQ(gated, with_lease);
  EXPECT_GT(inner_nodes, with_lease.size());
}

TEST(UOpTest, ToposortOrdersSourcesFirst) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr b = UOp::Variable("b", 0, 8);
  UOpPtr s = (a + b) * (a + b) + a;
  std::vector<const UOp*> order = s->Toposort();
  EXPECT_EQ(order.back(), s.get());
  EXPECT_EQ(order.front(), a.get());
  for (size_t i = 0; i < order.size(); ++i) {
    for (const UOpPtr& src : order[i]->src()) {
      auto pos = std::find(order.begin(), order.end(), src.get()) - order.begin();
      EXPECT_LT(pos, static_cast<long>(i));
    }
  }
}

TEST(UOpTest, Substitute) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr b = UOp::Variable("b", 0, 8);
  UOpPtr e = (a + 1) * a;
  UOpPtr out = e->Substitute({{a.get(), b}});
  EXPECT_EQ(out, (b + 1) * b);
  EXPECT_EQ(e->Substitute({}), e);
}

TEST(UOpTest, TagsTellNodesApart) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr plain = UOp::New(Ops::ADD, dtypes::kInt32, {a, a});
  UOpPtr seven = UOp::New(Ops::ADD, dtypes::kInt32, {a, a}, {}, Arg(7));
  EXPECT_TRUE(plain->tag().is_none());
  EXPECT_EQ(seven->tag(), Arg(7));
  EXPECT_NE(plain, seven);
  EXPECT_EQ(UOp::New(Ops::ADD, dtypes::kInt32, {a, a}, {}, Arg(7)), seven);
  EXPECT_NE(UOp::New(Ops::ADD, dtypes::kInt32, {a, a}, {}, Arg(8)), seven);
  EXPECT_EQ(UOp::New(Ops::ADD, dtypes::kInt32, {a, a}, {}, Arg()), plain);
  // A tag survives the rebuilds that keep it.
  EXPECT_EQ(seven.replace_src({a, a}), seven);
  EXPECT_EQ(seven.replace_dtype(dtypes::kInt64)->tag(), Arg(7));
  EXPECT_EQ(seven.replace_arg(Arg(1))->tag(), Arg(7));
}

TEST(UOpTest, WithSourcesIsReplaceSrcTakingTheReferences) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr b = UOp::Variable("b", 0, 8);
  UOpPtr tagged = UOp::New(Ops::ADD, dtypes::kInt32, {a, b}, {}, Arg(7));
  // New sources: the node replace_src gives, arg and tag kept.
  UOp::SrcVector swapped = {b, a};
  UOpPtr rebuilt = UOp::WithSources(*tagged, std::move(swapped));
  EXPECT_EQ(rebuilt, tagged.replace_src({b, a}));
  EXPECT_EQ(rebuilt->tag(), Arg(7));
  // The same sources: the node itself.
  UOp::SrcVector same = {a, b};
  EXPECT_EQ(UOp::WithSources(*tagged, std::move(same)), tagged);
  // The references taken over are released with the node: nothing leaks.
  size_t before = UOp::LiveCount();
  {
    UOp::SrcVector fresh = {a * 5, b * 5};
    UOpPtr n = UOp::WithSources(*tagged, std::move(fresh));
    EXPECT_EQ(n->src(0), (a * 5).get());
  }
  EXPECT_EQ(UOp::LiveCount(), before);
}

TEST(UOpTest, UnreferencedNodesAreFreed) {
  size_t before = UOp::LiveCount();
  for (int round = 0; round < 20; ++round) {
    UOpPtr x = UOp::Variable("leak_check", 0, 100);
    UOpPtr acc = x;
    for (int i = 0; i < 1000; ++i) acc = acc * 3 + i;
    EXPECT_GT(UOp::LiveCount(), before + 1000);
  }
  EXPECT_EQ(UOp::LiveCount(), before);
}

TEST(UOpTest, DeepChainIsFreedWithoutRecursion) {
  size_t before = UOp::LiveCount();
  {
    UOpPtr acc = UOp::Variable("deep", 0, 1);
    for (int i = 0; i < 1000000; ++i) acc = UOp::New(Ops::NOOP, dtypes::kInt32, {acc});
  }
  EXPECT_EQ(UOp::LiveCount(), before);
}

// Runs `build` on four threads at once; each returns the nodes it built, which must agree across threads.
template <typename F>
void ExpectThreadsAgree(F build) {
  constexpr int kThreads = 4;
  std::vector<std::vector<UOpPtr>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back([t, &results, &build] { results[t] = build(); });
  for (auto& th : threads) th.join();
  for (int t = 1; t < kThreads; ++t) EXPECT_EQ(results[t], results[0]);
}

TEST(UOpTest, ConcurrentInterningAgrees) {
  ExpectThreadsAgree([] {
    std::vector<UOpPtr> built;
    UOpPtr x = UOp::Variable("shared", 0, 10);
    for (int i = 0; i < 2000; ++i) built.push_back(x * i + (i % 7));
    // Churn: create and drop nodes other threads may be looking up.
    for (int i = 0; i < 2000; ++i) UOpPtr tmp = (x + i) * 5;
    return built;
  });
}

// Small integer constants come from a table after their first use; they must stay the interned node (equal to
// what UOp::New builds), per dtype, and not count as live.
TEST(UOpTest, SmallConstantsAreTheInternedNodes) {
  size_t before = UOp::LiveCount();
  for (int v : {-256, -1, 0, 1, 7, 1023}) {
    UOpPtr c = UOp::Const(dtypes::kInt32, v);
    EXPECT_EQ(c, UOp::Const(dtypes::kInt32, v));
    EXPECT_EQ(c, UOp::New(Ops::CONST, dtypes::kInt32, {}, Arg(int64_t{v})));
    EXPECT_NE(c, UOp::Const(dtypes::kInt64, v));
    EXPECT_EQ(c->const_value(), ConstValue::Int(v));
  }
  EXPECT_EQ(UOp::Const(dtypes::kBool, true), UOp::New(Ops::CONST, dtypes::kBool, {}, Arg(true)));
  // Outside the table's range, vectors and floats go through the intern table as before.
  EXPECT_EQ(UOp::Const(dtypes::kInt32, 5000), UOp::New(Ops::CONST, dtypes::kInt32, {}, Arg(int64_t{5000})));
  EXPECT_EQ(UOp::Const(dtypes::kInt32.Vec(2), 3),
            UOp::New(Ops::CONST, dtypes::kInt32.Vec(2), {}, Arg(int64_t{3})));
  EXPECT_EQ(UOp::Const(dtypes::kFloat32, 1.0), UOp::New(Ops::CONST, dtypes::kFloat32, {}, Arg(1.0)));
  EXPECT_EQ(UOp::LiveCount(), before);
}

TEST(UOpTest, ConcurrentSmallConstantsAgree) {
  ExpectThreadsAgree([] {
    std::vector<UOpPtr> built;
    for (int i = -300; i < 1100; ++i) built.push_back(UOp::Const(dtypes::kInt16, i));
    return built;
  });
}

// Every thread creates and drops the same node over and over, so lookups keep finding it while another thread
// is freeing it (the dying-node path of UOp::New). The table must end with no node leaked or freed twice.
TEST(UOpTest, ConcurrentCreateAndDropOfOneNode) {
  UOpPtr x = UOp::Variable("contended", 0, 10);
  const size_t before = UOp::LiveCount();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&x] {
      for (int i = 0; i < 20000; ++i) {
        UOpPtr node = x * 3 + 1;
        UOPC_CHECK(node->op() == Ops::ADD && node->src(0)->op() == Ops::MUL);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(UOp::LiveCount(), before);
}

}  // namespace
}  // namespace uopc

namespace uopc {
namespace {

// Bounds stay finite and overflow-free for absurd declared ranges (found with the text IR fuzzer).
TEST(UOpTest, HugeDeclaredRangesDoNotOverflow) {
  UOpPtr a = UOp::New(Ops::DEFINE_VAR, dtypes::kInt32, {}, Arg{Arg("a"), Arg(-1e300), Arg(0.0)});
  UOpPtr q = a.idiv(-1);
  EXPECT_GE(q->vmax(), ConstValue::Int(0));
  UOpPtr b = UOp::New(Ops::DEFINE_VAR, dtypes::kInt64, {}, Arg{Arg("b"), Arg(-1e300), Arg(1e300)});
  UOpPtr d = UOp::New(Ops::SUB, dtypes::kInt64, {b, b});
  EXPECT_LE(d->vmin(), ConstValue::Int(0));
  UOpPtr r = UOp::Range(b, 0);
  EXPECT_GT(r->vmax(), ConstValue::Int(0));
  UOpPtr m = b % b;
  EXPECT_LE(m->vmin(), ConstValue::Int(0));
}

}  // namespace
}  // namespace uopc

namespace uopc {
namespace {

// Found by the RuleFuzzer: |x % d| is bounded by the largest |d|, and bool(x) is true wherever x != 0.
TEST(UOpTest, ModByNegativeRangeAndCastToBoolBounds) {
  UOpPtr b = UOp::Variable("b", -8, -1);
  UOpPtr m = UOp::Const(dtypes::kInt32, 1) % b;
  EXPECT_EQ(m->vmax(), ConstValue::Int(7));
  UOpPtr n = UOp::Variable("n", -8, 0);
  UOpPtr as_bool = n.cast(dtypes::kBool);
  EXPECT_EQ(as_bool->vmin(), ConstValue::Bool(false));
  EXPECT_EQ(as_bool->vmax(), ConstValue::Bool(true));
  EXPECT_EQ(UOp::Variable("p", 1, 5).cast(dtypes::kBool)->vmin(), ConstValue::Bool(true));
}

}  // namespace
}  // namespace uopc

namespace uopc {
namespace {

TEST(UOpTest, ScratchLeaseIsExclusiveAndStartsEmpty) {
  UOpPtr a = UOp::Variable("a", 0, 3);
  int marker = 0;
  {
    std::optional<ScratchLease> lease = ScratchLease::TryAcquire();
    ASSERT_TRUE(lease.has_value());
    EXPECT_FALSE(ScratchLease::TryAcquire().has_value());
    const void* v = nullptr;
    EXPECT_FALSE(lease->Get(a.get(), &v));
    lease->Set(a.get(), &marker);
    ASSERT_TRUE(lease->Get(a.get(), &v));
    EXPECT_EQ(v, &marker);
    std::optional<ScratchLease> moved(std::move(lease));
    EXPECT_FALSE(ScratchLease::TryAcquire().has_value());  // the moved-to lease still holds it
  }
  // What an earlier lease wrote reads as empty under the next one.
  std::optional<ScratchLease> next = ScratchLease::TryAcquire();
  ASSERT_TRUE(next.has_value());
  const void* v = nullptr;
  EXPECT_FALSE(next->Get(a.get(), &v));
}

// A node with more sources than the inline capacity of its source vector.
TEST(UOpTest, ManySources) {
  const size_t before = UOp::LiveCount();
  {
    std::vector<UOpPtr> src;
    for (int i = 0; i < 1000; ++i) src.push_back(UOp::Variable("s" + std::to_string(i), 0, i));
    UOpPtr sink = UOp::Sink(src);
    ASSERT_EQ(sink->num_src(), 1000u);
    for (int i = 0; i < 1000; ++i) EXPECT_EQ(sink->src(i), src[i].get());
    EXPECT_EQ(UOp::Sink(src), sink);
    src.pop_back();
    EXPECT_NE(UOp::Sink(src), sink);
    for (size_t n = 1; n <= 5; ++n) {
      UOpPtr v = UOp::Vectorize(absl::MakeConstSpan(src).subspan(0, n));
      EXPECT_EQ(v->num_src(), n);
      EXPECT_EQ(v->src().back(), src[n - 1].get());
    }
  }
  EXPECT_EQ(UOp::LiveCount(), before);
}

// One thread makes nodes and another frees them, round after round: the freed memory must come back to the
// maker instead of piling up on the freeing thread while the maker carves new chunks.
TEST(UOpTest, NodeMemoryFreedByAnotherThreadIsReused) {
  constexpr int kRounds = 12, kNodes = 20000;
  std::mutex mu;
  std::condition_variable cv;
  std::vector<UOpPtr> batch;
  bool ready = false;
  size_t chunks_after_warmup = 0;
  std::thread maker([&] {
    UOpPtr x = UOp::Variable("handed_over", 0, 1 << 20);
    for (int round = 0; round < kRounds; ++round) {
      std::vector<UOpPtr> made;
      made.reserve(kNodes);
      for (int i = 0; i < kNodes; ++i) made.push_back(x + (round * kNodes + i + 2000));
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return !ready; });
      batch = std::move(made);
      ready = true;
      cv.notify_all();
    }
  });
  for (int round = 0; round < kRounds; ++round) {
    std::vector<UOpPtr> got;
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return ready; });
      got = std::move(batch);
      ready = false;
      cv.notify_all();
    }
    ASSERT_EQ(got.size(), static_cast<size_t>(kNodes));
    got.clear();  // freed on this thread
    if (round == 4) chunks_after_warmup = internal::NodeChunksForTesting();
  }
  maker.join();
  // Each round makes 40,000 nodes (the sums and their constants): without reuse the 7 rounds after the
  // warm-up would carve about 7 * 40,000 / 512 = 547 chunks.
  EXPECT_LT(internal::NodeChunksForTesting() - chunks_after_warmup, 200u);
}

// Nodes outlive the thread that made them, are freed by another, and their memory is used again by a third.
TEST(UOpTest, NodesMoveBetweenThreads) {
  const size_t before = UOp::LiveCount();
  auto build = [](int seed) {
    std::vector<UOpPtr> made;
    UOpPtr x = UOp::Variable("moved", 0, 1000);
    for (int i = 0; i < 3000; ++i) made.push_back(x * (seed * 10000 + i));
    return made;
  };
  std::vector<UOpPtr> from_a;
  std::thread a([&] { from_a = build(1); });
  a.join();
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(from_a[i]->src(1)->arg(), Arg(int64_t{10000 + i}));
  from_a.clear();  // freed here, made there
  EXPECT_EQ(UOp::LiveCount(), before);
  std::vector<UOpPtr> from_b;
  std::thread b([&] { from_b = build(2); });
  b.join();
  for (int i = 0; i < 3000; ++i) ASSERT_EQ(from_b[i], UOp::Variable("moved", 0, 1000) * (20000 + i));
  from_b.clear();
  EXPECT_EQ(UOp::LiveCount(), before);
}

TEST(UOpTest, ScratchLeaseHasOneHolderAcrossThreads) {
  std::atomic<int> holders{0}, max_holders{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        if (std::optional<ScratchLease> lease = ScratchLease::TryAcquire()) {
          int now = ++holders;
          int seen = max_holders.load();
          while (now > seen && !max_holders.compare_exchange_weak(seen, now)) {
          }
          --holders;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(max_holders.load(), 1);
}

// UOp::New computes the bounds of integer CONST, ADD, MUL, MAX, MOD and IDIV nodes and of integer comparisons
// on a fast path; it must agree with ComputeBounds everywhere, including the clamping of huge products, bool
// or unsigned operands, divisors whose range holds zero and dividends of either sign.
TEST(UOpTest, FastIntegerBoundsAgreeWithComputeBounds) {
  const int64_t kBig = int64_t{1} << 62;
  std::vector<UOpPtr> leaves = {
      UOp::Const(dtypes::kInt32, 7),
      UOp::Const(dtypes::kInt32, -3),
      UOp::Const(dtypes::kUInt64, ConstValue::Int(absl::MakeInt128(0, ~uint64_t{0}))),
      UOp::Const(dtypes::kInt64, std::numeric_limits<int64_t>::min()),
      UOp::Variable("a", -5, 9),
      UOp::Variable("b", 0, kBig, dtypes::kInt64),
      UOp::Variable("c", -kBig, kBig, dtypes::kInt64),
      UOp::Variable("d", 2, 2),
      UOp::Variable("e", 0, 1).lt(1),  // a bool
      UOp::Variable("f", -9, -2),
      UOp::Variable("g", -4, 0),
      UOp::Const(dtypes::kInt32, 0),
  };
  // Products of products reach the +-2^125 clamp.
  UOpPtr c = leaves[6];
  leaves.push_back(UOp::New(Ops::MUL, dtypes::kInt64, {c, c}));
  leaves.push_back(UOp::New(Ops::MUL, dtypes::kInt64, {leaves.back(), c}));
  for (const UOpPtr& l : leaves) {
    auto [lo, hi] = ComputeBounds(l->op(), l->dtype(), l->src(), l->arg());
    EXPECT_EQ(l->vmin(), lo) << l->op();
    EXPECT_EQ(l->vmax(), hi) << l->op();
  }
  for (Ops op : {Ops::ADD, Ops::MUL, Ops::MAX, Ops::MOD, Ops::IDIV, Ops::CMPLT, Ops::CMPNE}) {
    for (DType dt : {dtypes::kInt32, dtypes::kInt64, dtypes::kUInt64, dtypes::kBool}) {
      for (const UOpPtr& x : leaves) {
        for (const UOpPtr& y : leaves) {
          UOpPtr n = UOp::New(op, dt, {x, y});
          auto [lo, hi] = ComputeBounds(op, dt, n->src(), n->arg());
          EXPECT_EQ(n->vmin(), lo) << OpName(op) << " " << x->vmin() << ".." << x->vmax() << ", " << y->vmin()
                                   << ".." << y->vmax();
          EXPECT_EQ(n->vmax(), hi) << OpName(op);
        }
      }
    }
  }
}

}  // namespace
}  // namespace uopc
