#include "runtime/cpu_thread_pool.h"

#include <stdlib.h>

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace uopc {
namespace {

TEST(CpuThreadPoolTest, RunsEveryTaskExactlyOnce) {
  for (int threads : {1, 2, 3, 8}) {
    CpuThreadPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    for (int64_t tasks : {0, 1, 2, 3, 7, 100}) {
      std::vector<int> runs(tasks, 0);  // each task writes only its own slot
      pool.Run(tasks, [&](int64_t i) { ++runs[i]; });
      for (int64_t i = 0; i < tasks; ++i) EXPECT_EQ(runs[i], 1) << threads << " threads, task " << i;
    }
  }
}

TEST(CpuThreadPoolTest, ResultsAreVisibleWhenRunReturns) {
  // Plain (non-atomic) writes by the workers, read by the caller after Run: TSan reports a missing
  // happens-before edge here.
  CpuThreadPool pool(4);
  std::vector<int64_t> out(64, 0);
  for (int round = 1; round <= 200; ++round) {
    pool.Run(64, [&](int64_t i) { out[i] = i * round; });
    for (int64_t i = 0; i < 64; ++i) ASSERT_EQ(out[i], i * round);
  }
}

TEST(CpuThreadPoolTest, UsesMoreThanOneThread) {
  // Every task waits until two tasks have started: with the caller alone this would never finish, so the
  // test proves a worker takes part (it cannot skip: both tasks must run).
  CpuThreadPool pool(2);
  std::atomic<int> started{0};
  pool.Run(2, [&](int64_t) {
    started.fetch_add(1);
    while (started.load() < 2) std::this_thread::yield();
  });
  EXPECT_EQ(started.load(), 2);
}

TEST(CpuThreadPoolTest, ConcurrentCallersEachGetAllTheirTasks) {
  CpuThreadPool pool(3);
  constexpr int kCallers = 4, kRounds = 50, kTasks = 9;
  std::vector<std::thread> callers;
  std::vector<std::vector<int>> sums(kCallers, std::vector<int>(kTasks, 0));
  for (int c = 0; c < kCallers; ++c) {
    callers.emplace_back([&, c] {
      for (int r = 0; r < kRounds; ++r) pool.Run(kTasks, [&](int64_t i) { sums[c][i] += 1; });
    });
  }
  for (std::thread& t : callers) t.join();
  for (int c = 0; c < kCallers; ++c) {
    for (int i = 0; i < kTasks; ++i) EXPECT_EQ(sums[c][i], kRounds);
  }
}

TEST(CpuThreadPoolTest, DestroyedRightAfterUse) {
  for (int i = 0; i < 50; ++i) {
    CpuThreadPool pool(3);
    std::atomic<int> runs{0};
    pool.Run(5, [&](int64_t) { runs.fetch_add(1); });
    EXPECT_EQ(runs.load(), 5);
  }
}

TEST(CpuThreadPoolTest, ThreadsFromEnvironment) {
  setenv("CPU_THREADS", "3", 1);
  EXPECT_EQ(*CpuThreadPool::ThreadsFromEnvironment(), 3);
  setenv("CPU_THREADS", "0", 1);
  EXPECT_FALSE(CpuThreadPool::ThreadsFromEnvironment().ok());
  setenv("CPU_THREADS", "two", 1);
  absl::StatusOr<int> bad = CpuThreadPool::ThreadsFromEnvironment();
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("CPU_THREADS=two"), absl::string_view::npos);
  EXPECT_GE(CpuThreadPool::DefaultThreads(), 1);
  unsetenv("CPU_THREADS");
  EXPECT_GE(*CpuThreadPool::ThreadsFromEnvironment(), 1);
}

}  // namespace
}  // namespace uopc
