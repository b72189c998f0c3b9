#include "codegen/remove_reduce.h"

#include <cmath>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "codegen/testing/kernel_corpus.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

// Every corpus kernel, both CPU targets: the expander's output becomes tinygrad's "remove_reduce" stage.
TEST(RemoveReduceTest, CorpusStagesMatch) {
  ClangRenderer clang;
  EXPECT_THAT(CorpusStepDifferences("expander", "remove_reduce",
                                    [&](const UOpPtr& g) { return RewriteRemoveReduce(g, clang); }),
              ::testing::IsEmpty());
}

// tinygrad's expander and remove_reduce steps on the corpus kernels optimized for a GPU-like target
// (codegen/testdata/make_lowerer_gpu_cases.py): grouped reduces through local memory, launch dims, upcasts.
TEST(RemoveReduceTest, GpuCasesMatchTinygrad) {
  ClangRenderer renderer;  // remove_reduce reads nothing of the target
  std::ifstream in("codegen/testdata/remove_reduce_gpu_cases.jsonl");
  ASSERT_TRUE(in) << "codegen/testdata/remove_reduce_gpu_cases.jsonl is missing";
  int total = 0, matched = 0;
  std::vector<std::string> failing;
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json c = nlohmann::json::parse(line);
    const std::string id = c["id"].get<std::string>() + ":" + c["opts"].get<std::string>();
    ++total;
    absl::StatusOr<UOpPtr> got =
        RewriteRemoveReduce(ParseCorpusGraph(c["expander"].get<std::string>()), renderer);
    if (!got.ok()) {
      failing.push_back(id + " (" + std::string(got.status().message()) + ")");
      continue;
    }
    std::string diff = GraphDifference(*got, c["remove_reduce"].get<std::string>());
    if (diff.empty()) {
      ++matched;
    } else {
      std::cerr << id << ":\n" << (failing.empty() ? diff : diff.substr(0, diff.find("--- got"))) << "\n";
      failing.push_back(id);
    }
  }
  EXPECT_EQ(total, 257);
  EXPECT_EQ(matched, total) << "failing: " << absl::StrJoin(failing, ", ");
}

using dtypes::kFloat32;
using dtypes::kInt32;

UOpPtr LoadAt(int64_t buffer, DType dt, const UOpPtr& idx) {
  return UOp::New(Ops::DEFINE_GLOBAL, dt.Ptr(64), {}, Arg(buffer)).index(idx).load();
}

UOpPtr Reduce(Ops op, const UOpPtr& x, std::vector<UOpPtr> ranges, DType dt) {
  ranges.insert(ranges.begin(), x);
  return UOp::New(Ops::REDUCE, dt, ranges, Arg(op));
}

UOpPtr RemoveReduces(const UOpPtr& value) {
  ClangRenderer clang;
  absl::StatusOr<UOpPtr> got = RewriteRemoveReduce(UOp::Sink({value}), clang);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? (*got)->src()[0] : nullptr;
}

// A loop reduce becomes an accumulator over the loop, starting at the op's identity.
TEST(RemoveReduceTest, LoopReduceBecomesAccumulator) {
  UOpPtr r = UOp::Range(kInt32, 16, 0);
  UOpPtr x = LoadAt(1, kFloat32, r);
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, kFloat32, {UOp::Const(kFloat32, 0.0), r}, Arg(Arg::Tuple{Arg(0)}));
  EXPECT_EQ(RemoveReduces(Reduce(Ops::ADD, x, {r}, kFloat32)), acc.assign(acc + x));
  // MAX starts at the dtype's minimum.
  UOpPtr max_acc =
      UOp::New(Ops::DEFINE_ACC, kFloat32, {UOp::Const(kFloat32, -INFINITY), r}, Arg(Arg::Tuple{Arg(0)}));
  EXPECT_EQ(RemoveReduces(Reduce(Ops::MAX, x, {r}, kFloat32)), max_acc.assign(max_acc.maximum(x)));
}

// Accumulators are numbered in the order the rewrite meets them (the sources of a node first).
TEST(RemoveReduceTest, AccumulatorsAreNumbered) {
  UOpPtr r0 = UOp::Range(kInt32, 16, 0), r1 = UOp::Range(kInt32, 8, 1);
  UOpPtr a = Reduce(Ops::ADD, LoadAt(1, kFloat32, r0), {r0}, kFloat32);
  UOpPtr b = Reduce(Ops::ADD, LoadAt(2, kFloat32, r1), {r1}, kFloat32);
  UOpPtr got = RemoveReduces(a * b);
  ASSERT_NE(got, nullptr);
  std::vector<std::pair<int64_t, const UOp*>> accs;
  for (const UOp* u : got->Toposort()) {
    if (u->op() == Ops::DEFINE_ACC) accs.emplace_back(u->arg()[0].as_int(), u->src(1));
  }
  ASSERT_EQ(accs.size(), 2u);
  EXPECT_EQ(accs[0], std::make_pair(int64_t{0}, r0.get()));
  EXPECT_EQ(accs[1], std::make_pair(int64_t{1}, r1.get()));
}

// A vector input wider than the result is reduced horizontally: each output element folds a run of adjacent
// input elements, computed as an op of strided slices.
TEST(RemoveReduceTest, HorizontalReduceFoldsVectorSlices) {
  UOpPtr r = UOp::Range(kInt32, 16, 0);
  UOpPtr x0 = LoadAt(1, kFloat32, r), x1 = LoadAt(2, kFloat32, r), x2 = LoadAt(3, kFloat32, r),
         x3 = LoadAt(4, kFloat32, r);
  UOpPtr v = UOp::Vectorize({x0, x1, x2, x3});
  // No range: only the horizontal part, left to right.
  UOpPtr got = RemoveReduces(Reduce(Ops::ADD, v, {}, kFloat32));
  EXPECT_EQ(got, ((x0 + x1) + x2) + x3) << PrintIr(got.get());
  // Into a 2-vector: [0 1 2 3] -> [0 2] + [1 3], that is [0+1, 2+3].
  got = RemoveReduces(Reduce(Ops::ADD, v, {}, kFloat32.Vec(2)));
  EXPECT_EQ(got, UOp::Vectorize({x0, x2}) + UOp::Vectorize({x1, x3})) << PrintIr(got.get());
  // With a range, the accumulator comes first.
  got = RemoveReduces(Reduce(Ops::MAX, v, {r}, kFloat32));
  UOpPtr acc =
      UOp::New(Ops::DEFINE_ACC, kFloat32, {UOp::Const(kFloat32, -INFINITY), r}, Arg(Arg::Tuple{Arg(0)}));
  EXPECT_EQ(got, acc.assign(acc.maximum(x0).maximum(x1).maximum(x2).maximum(x3))) << PrintIr(got.get());
}

// Ranges the value does not depend on leave the reduce; a sum is scaled by their sizes, a max is not.
TEST(RemoveReduceTest, UnparentedRangesLeave) {
  UOpPtr r0 = UOp::Range(kInt32, 16, 0), r1 = UOp::Range(kInt32, 5, 1);
  UOpPtr x = LoadAt(1, kFloat32, r0);
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, kFloat32, {UOp::Const(kFloat32, 0.0), r0}, Arg(Arg::Tuple{Arg(0)}));
  EXPECT_EQ(RemoveReduces(Reduce(Ops::ADD, x, {r0, r1}, kFloat32)), acc.assign(acc + x) * 5.0);
  UOpPtr max_acc =
      UOp::New(Ops::DEFINE_ACC, kFloat32, {UOp::Const(kFloat32, -INFINITY), r0}, Arg(Arg::Tuple{Arg(0)}));
  EXPECT_EQ(RemoveReduces(Reduce(Ops::MAX, x, {r0, r1}, kFloat32)), max_acc.assign(max_acc.maximum(x)));
  // With no range left a sum of a constant is a product.
  EXPECT_EQ(RemoveReduces(Reduce(Ops::ADD, UOp::Const(kInt32, 3), {r1}, kInt32)), UOp::Const(kInt32, 15));
}

// The arange trick: counting the loop values on one side of a cut is arithmetic on the cut, with no loop.
TEST(RemoveReduceTest, LoadFreeRangeReduceCollapses) {
  UOpPtr g = UOp::Range(kInt32, 10, 0), r = UOp::Range(kInt32, 10, 1);
  UOpPtr count =
      Reduce(Ops::ADD, (g + r).lt(UOp::Const(kInt32, 9)).where(UOp::Const(kInt32, 0), UOp::Const(kInt32, 1)),
             {r}, kInt32);
  UOpPtr got = RemoveReduces(count);
  ASSERT_NE(got, nullptr);
  for (const UOp* u : got->Toposort()) {
    EXPECT_NE(u->op(), Ops::DEFINE_ACC) << PrintIr(got.get());
    EXPECT_NE(u->op(), Ops::REDUCE);
    EXPECT_NE(u, r.get()) << "the reduce range is gone";
  }
  // It counts r in [0, 10) with g + r >= 9: that is g + 1 for every g.
  for (int64_t gv = 0; gv < 10; ++gv) {
    UOpPtr v = Simplify(Substitute(got, UOpMap{{g.get(), UOp::Const(kInt32, gv)}}));
    ASSERT_TRUE(v->is_const()) << PrintIr(v.get());
    EXPECT_EQ(v->const_value().AsInt64(), gv + 1) << "g=" << gv;
  }
  // A reduce with a load that depends on the range keeps its loop.
  UOpPtr loaded = Reduce(Ops::ADD, LoadAt(1, kInt32, r), {r}, kInt32);
  bool has_acc = false;
  UOpPtr kept = RemoveReduces(loaded);
  for (const UOp* u : kept->Toposort()) has_acc |= u->op() == Ops::DEFINE_ACC;
  EXPECT_TRUE(has_acc) << PrintIr(kept.get());
}

TEST(RemoveReduceTest, MalformedReduceIsAnError) {
  ClangRenderer clang;
  UOpPtr bad = UOp::New(Ops::REDUCE, kInt32, {UOp::Const(kInt32, 1)}, Arg(3));
  EXPECT_FALSE(RewriteRemoveReduce(UOp::Sink({bad}), clang).ok());
  EXPECT_FALSE(RewriteRemoveReduce(bad, clang).ok());
}

}  // namespace
}  // namespace uopc
