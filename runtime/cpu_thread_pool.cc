#include "runtime/cpu_thread_pool.h"

#include <unistd.h>

#include <string>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "uop/util.h"

namespace uopc {

absl::StatusOr<int> CpuThreadPool::ThreadsFromEnvironment() {
  const std::string value = EnvString("CPU_THREADS");
  if (value.empty()) {
    return std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  }
  int threads = 0;
  if (!absl::SimpleAtoi(value, &threads) || threads < 1 || threads > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("CPU_THREADS=", value, ": expected a number of threads from 1 to 4096"));
  }
  return threads;
}

int CpuThreadPool::DefaultThreads() {
  absl::StatusOr<int> threads = ThreadsFromEnvironment();
  return threads.ok() ? *threads : std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
}

CpuThreadPool::CpuThreadPool(int threads) : owner_pid_(getpid()) {
  for (int i = 1; i < threads; ++i) workers_.emplace_back([this] { WorkerLoop(); });
}

CpuThreadPool::~CpuThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  job_started_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

void CpuThreadPool::RunTasks(absl::FunctionRef<void(int64_t)> task, int64_t tasks) {
  for (int64_t i = next_task_.fetch_add(1, std::memory_order_relaxed); i < tasks;
       i = next_task_.fetch_add(1, std::memory_order_relaxed)) {
    task(i);
  }
}

void CpuThreadPool::Run(int64_t tasks, absl::FunctionRef<void(int64_t)> task) {
  if (tasks <= 0) return;
  // A forked child (BEAM times candidates in one) has none of the parent's workers, and may have inherited
  // this pool's locks held: run every chunk on the caller.
  if (tasks == 1 || workers_.empty() || getpid() != owner_pid_) {
    for (int64_t i = 0; i < tasks; ++i) task(i);
    return;
  }
  std::lock_guard<std::mutex> run_lock(run_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = &task;
    tasks_ = tasks;
    next_task_.store(0, std::memory_order_relaxed);
    busy_workers_ = static_cast<int>(workers_.size());
    ++generation_;
  }
  job_started_.notify_all();
  RunTasks(task, tasks);
  // The job's state (and `task`, on this stack frame) stays until every worker has let go of it.
  std::unique_lock<std::mutex> lock(mu_);
  workers_done_.wait(lock, [this] { return busy_workers_ == 0; });
  task_ = nullptr;
}

void CpuThreadPool::WorkerLoop() {
  uint64_t seen = 0;
  while (true) {
    const absl::FunctionRef<void(int64_t)>* task = nullptr;
    int64_t tasks = 0;
    {
      std::unique_lock<std::mutex> lock(mu_);
      job_started_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_) return;
      seen = generation_;
      task = task_;
      tasks = tasks_;
    }
    RunTasks(*task, tasks);
    std::lock_guard<std::mutex> lock(mu_);
    if (--busy_workers_ == 0) workers_done_.notify_one();
  }
}

}  // namespace uopc
