#include "uop/parallel_for.h"

#include <atomic>
#include <cstdint>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace uopc {
namespace {

TEST(ParallelForTest, CallsEveryIndexOnce) {
  for (int threads : {0, 1, 2, 4}) {
    for (int64_t n : {0, 1, 2, 7, 1000}) {
      std::vector<std::atomic<int>> calls(n);
      ParallelFor(n, threads, [&](int64_t i) { calls[i]++; });
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(calls[i].load(), 1) << "n " << n << " threads " << threads;
    }
  }
}

TEST(ParallelForTest, OneThreadRunsInOrderOnTheCaller) {
  std::vector<int64_t> order;
  const std::thread::id caller = std::this_thread::get_id();
  ParallelFor(5, 1, [&](int64_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<int64_t>{0, 1, 2, 3, 4}));
}

// What the loop bodies write is visible to the caller afterwards (TSan checks the hand-off), and loops nest.
TEST(ParallelForTest, WritesAreVisibleAfterwardsAndLoopsNest) {
  std::vector<std::vector<int64_t>> out(8);
  ParallelFor(8, 4, [&](int64_t i) {
    out[i].resize(16);
    ParallelFor(16, 2, [&](int64_t j) { out[i][j] = i * 100 + j; });
  });
  for (int64_t i = 0; i < 8; ++i) {
    for (int64_t j = 0; j < 16; ++j) EXPECT_EQ(out[i][j], i * 100 + j);
  }
}

}  // namespace
}  // namespace uopc
