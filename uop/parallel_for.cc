#include "uop/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

#include "oneapi/tbb/blocked_range.h"
#include "oneapi/tbb/parallel_for.h"
#include "oneapi/tbb/partitioner.h"
#include "oneapi/tbb/task_arena.h"

namespace uopc {
namespace {

// Whether this is a ThreadSanitizer build, in which the loop runs on plain threads (parallel_for.h says why).
#if defined(__SANITIZE_THREAD__)
constexpr bool kPlainThreads = true;
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
constexpr bool kPlainThreads = true;
#else
constexpr bool kPlainThreads = false;
#endif
#else
constexpr bool kPlainThreads = false;
#endif

}  // namespace

void ParallelFor(int64_t n, int threads, absl::FunctionRef<void(int64_t)> fn) {
  if (n <= 0) return;
  if (threads == 1 || n == 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  if (kPlainThreads) {
    // The calling thread works too; the others take the next index until none is left.
    const int64_t cores = std::max(1u, std::thread::hardware_concurrency());
    const int64_t workers = std::min<int64_t>(n, threads > 0 ? threads : cores);
    std::atomic<int64_t> next{0};
    auto work = [&] {
      for (int64_t i = next++; i < n; i = next++) fn(i);
    };
    std::vector<std::thread> helpers;
    for (int64_t t = 1; t < workers; ++t) helpers.emplace_back(work);
    work();
    for (std::thread& t : helpers) t.join();
    return;
  }
  tbb::task_arena arena(threads > 0 ? threads : tbb::task_arena::automatic);
  arena.execute([&] {
    tbb::parallel_for(
        tbb::blocked_range<int64_t>(0, n, 1),
        [&](const tbb::blocked_range<int64_t>& range) {
          for (int64_t i = range.begin(); i != range.end(); ++i) fn(i);
        },
        tbb::simple_partitioner());
  });
}

}  // namespace uopc
