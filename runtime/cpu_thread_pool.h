// CpuThreadPool: the worker threads the CPU devices (CPU and LLVM) run a kernel's chunks on.
//
// A kernel split across cores (renderer.h's CoreSplit) is launched like a GPU grid: `Run(chunks, fn)` calls
// fn(0) ... fn(chunks - 1), each exactly once, spread over the pool's threads, and returns when all are done.
// The threads are started once, with the pool, and sleep between launches; the calling thread takes chunks
// too, so a pool of n threads starts n - 1 workers, and a pool of 1 runs everything on the caller.
//
// Hand-written, on std::mutex and std::condition_variable, which ThreadSanitizer intercepts (Debian's
// libabsl and libtbb are not instrumented, so TSan could not check a pool built on either);
// runtime/cpu_thread_pool_benchmark.cc times it against a oneTBB arena on a launch of a few coarse chunks.
//
//   CpuThreadPool pool(CpuThreadPool::DefaultThreads());
//   pool.Run(4, [&](int64_t chunk) { kernel(bufs, vars, chunk); });
#ifndef UOPC_RUNTIME_CPU_THREAD_POOL_H_
#define UOPC_RUNTIME_CPU_THREAD_POOL_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"

namespace uopc {

class CpuThreadPool {
 public:
  // $CPU_THREADS when set (a positive integer; anything else is an error naming the value), else one thread
  // per core (std::thread::hardware_concurrency(), at least 1).
  static absl::StatusOr<int> ThreadsFromEnvironment();
  // ThreadsFromEnvironment(), or one per core when $CPU_THREADS is malformed.
  static int DefaultThreads();

  // `threads` >= 1 (smaller values mean 1).
  explicit CpuThreadPool(int threads);
  ~CpuThreadPool();
  CpuThreadPool(const CpuThreadPool&) = delete;
  CpuThreadPool& operator=(const CpuThreadPool&) = delete;

  int threads() const { return static_cast<int>(workers_.size()) + 1; }

  // Calls task(i) for every i in [0, tasks), each once, on the pool's threads and the caller's, and returns
  // when all have returned. Thread safe: concurrent calls run one after another. `task` must not call Run on
  // the same pool.
  void Run(int64_t tasks, absl::FunctionRef<void(int64_t)> task);

 private:
  void WorkerLoop();
  // Takes and runs tasks of the current job until none are left.
  void RunTasks(absl::FunctionRef<void(int64_t)> task, int64_t tasks);

  std::mutex run_mu_;  // one job at a time
  std::mutex mu_;      // guards the job's fields below
  std::condition_variable job_started_, workers_done_;
  // The current job: workers start it when `generation_` changes.
  uint64_t generation_ = 0;
  const absl::FunctionRef<void(int64_t)>* task_ = nullptr;
  int64_t tasks_ = 0;
  int busy_workers_ = 0;
  bool stop_ = false;
  std::atomic<int64_t> next_task_{0};
  std::vector<std::thread> workers_;
  const int owner_pid_;  // the process whose threads `workers_` are
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_CPU_THREAD_POOL_H_
