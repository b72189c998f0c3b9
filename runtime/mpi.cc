#include "runtime/mpi.h"

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc::mpi {
namespace {

constexpr int64_t kDefaultTimeoutSeconds = 300;

std::string MpiError(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS) return absl::StrCat("MPI error ", code);
  return std::string(text, length);
}

absl::StatusOr<MPI_Datatype> MpiType(DType dtype) {
  if (dtype == dtypes::kFloat32) return MPI_FLOAT;
  if (dtype == dtypes::kFloat64) return MPI_DOUBLE;
  if (dtype == dtypes::kInt8) return MPI_INT8_T;
  if (dtype == dtypes::kInt16) return MPI_INT16_T;
  if (dtype == dtypes::kInt32) return MPI_INT32_T;
  if (dtype == dtypes::kInt64) return MPI_INT64_T;
  if (dtype == dtypes::kUInt8) return MPI_UINT8_T;
  if (dtype == dtypes::kUInt16) return MPI_UINT16_T;
  if (dtype == dtypes::kUInt32) return MPI_UINT32_T;
  if (dtype == dtypes::kUInt64) return MPI_UINT64_T;
  return absl::UnimplementedError(absl::StrCat("MPI all-reduce of ", dtype.ToString(), " is not supported"));
}

absl::StatusOr<MPI_Op> MpiOp(Ops op) {
  switch (op) {
    case Ops::ADD:
      return MPI_SUM;
    case Ops::MUL:
      return MPI_PROD;
    case Ops::MAX:
      return MPI_MAX;
    default:
      return absl::UnimplementedError(absl::StrCat("MPI all-reduce by ", OpName(op), " is not supported"));
  }
}

// One MPI_Iallreduce in place on the bytes it holds, shared by the op that started it and the progress
// thread, so that its bytes outlive an op destroyed before the collective completed.
struct Collective {
  std::vector<uint8_t> bytes;
  MPI_Request request = MPI_REQUEST_NULL;
  std::atomic<bool> done = false;
  int error = MPI_SUCCESS;  // set before done
};

// Serializes MPI's calls after MPI_Init and advances the collectives in flight. Open MPI advances a
// non-blocking collective only inside MPI's calls, and a round of it needs every process to make one: the
// progress thread tests the collectives while the calling thread runs kernels, so that they complete as the
// other processes arrive rather than when this one next waits. It sleeps between rounds, from 10 us doubling
// to 1 ms, so that it takes little from the kernels' threads. Where MPI gives no thread support beyond
// funneled, there is no thread, and the collectives advance only when tested or waited for on the calling
// thread.
class Progress {
 public:
  explicit Progress(bool threaded) {
    if (threaded) thread_ = std::thread([this] { Loop(); });
  }

  absl::Status Start(const std::shared_ptr<Collective>& c, int count, MPI_Datatype type, MPI_Op op) {
    std::lock_guard<std::mutex> lock(mu_);
    if (int rc = MPI_Iallreduce(MPI_IN_PLACE, c->bytes.data(), count, type, op, MPI_COMM_WORLD, &c->request);
        rc != MPI_SUCCESS) {
      return absl::InternalError(MpiError(rc));
    }
    in_flight_.push_back(c);
    ++starts_;
    wake_.notify_one();
    return absl::OkStatus();
  }

  // Whether `c` completed, testing it here where no thread does.
  bool Test(Collective& c) {
    if (c.done || thread_.joinable()) return c.done;
    std::lock_guard<std::mutex> lock(mu_);
    TestAllLocked();
    return c.done;
  }

  // Waits for `c` until `deadline`; false when it passed. Tests on this thread too: the caller has nothing
  // else to do.
  bool Wait(Collective& c, std::chrono::steady_clock::time_point deadline) {
    for (int polls = 0; !c.done; ++polls) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        TestAllLocked();
      }
      if (c.done) break;
      if (std::chrono::steady_clock::now() > deadline) return false;
      // Spin briefly (a step's all-reduces are short), then yield the core to the kernels' threads.
      if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
    return true;
  }

  // Ends the thread (before MPI_Finalize); whether a collective is still in flight.
  bool Stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
      wake_.notify_one();
    }
    if (thread_.joinable()) thread_.join();
    std::lock_guard<std::mutex> lock(mu_);
    return !in_flight_.empty();
  }

 private:
  void TestAllLocked() {
    std::erase_if(in_flight_, [](const std::shared_ptr<Collective>& c) {
      int done = 0;
      if (int rc = MPI_Test(&c->request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
        c->error = rc;
        done = 1;
      }
      if (done) c->done = true;
      return done != 0;
    });
  }

  void Loop() {
    auto pause = std::chrono::microseconds(10);
    std::unique_lock<std::mutex> lock(mu_);
    while (!stop_) {
      const int64_t seen = starts_;
      if (in_flight_.empty()) {
        wake_.wait(lock, [&] { return stop_ || starts_ != seen; });
      } else {
        const size_t before = in_flight_.size();
        TestAllLocked();
        const bool changed = in_flight_.size() != before;
        if (!wake_.wait_for(lock, pause, [&] { return stop_ || starts_ != seen; }) && !changed) {
          pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(1));
          continue;
        }
      }
      pause = std::chrono::microseconds(10);
    }
  }

  std::mutex mu_;
  std::condition_variable wake_;
  std::vector<std::shared_ptr<Collective>> in_flight_;  // guarded by mu_
  bool stop_ = false;                                   // guarded by mu_
  int64_t starts_ = 0;                                  // guarded by mu_
  std::thread thread_;
};

// Made with MPI, never destroyed: FinishAtExit stops its thread.
Progress* progress = nullptr;

// A collective still in flight (one timed out, or a run that failed left it) would make MPI_Finalize wait for
// the other processes: the exit aborts the job instead.
void FinishAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (progress != nullptr && progress->Stop()) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

class MpiAllReduce : public PendingAllReduce {
 public:
  MpiAllReduce(std::vector<uint8_t> bytes, int rank, int size, int64_t timeout_seconds)
      : collective_(std::make_shared<Collective>()),
        rank_(rank),
        size_(size),
        timeout_seconds_(timeout_seconds) {
    collective_->bytes = std::move(bytes);
  }

  absl::Status Start(DType dtype, Ops op) {
    UOPC_ASSIGN_OR_RETURN(MPI_Datatype type, MpiType(dtype));
    UOPC_ASSIGN_OR_RETURN(MPI_Op mpi_op, MpiOp(op));
    const std::vector<uint8_t>& bytes = collective_->bytes;
    if (bytes.size() % dtype.itemsize() != 0) {
      return absl::InvalidArgumentError("all-reduce of a partial element");
    }
    const int64_t count = static_cast<int64_t>(bytes.size()) / dtype.itemsize();
    if (count > std::numeric_limits<int>::max()) {
      return absl::UnimplementedError(
          absl::StrCat("MPI all-reduce of ", count, " elements (at most 2^31 - 1)"));
    }
    if (absl::Status s = progress->Start(collective_, static_cast<int>(count), type, mpi_op); !s.ok()) {
      return absl::InternalError(absl::StrCat("MPI all-reduce on rank ", rank_, ": ", s.message()));
    }
    return absl::OkStatus();
  }

  absl::StatusOr<bool> Test() override {
    if (!progress->Test(*collective_)) return false;
    UOPC_RETURN_IF_ERROR(Error());
    return true;
  }

  // Bounded from when the wait begins: a peer that died or hangs is an error, not a hang.
  absl::StatusOr<std::vector<uint8_t>> Wait() override {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds_);
    if (!progress->Wait(*collective_, deadline)) {
      return absl::DeadlineExceededError(absl::StrCat(
          "MPI all-reduce of ", collective_->bytes.size(), " bytes: rank ", rank_, " of ", size_, " waited ",
          timeout_seconds_, " s (UOPC_MPI_TIMEOUT_S) for the other processes; one failed or is stuck"));
    }
    UOPC_RETURN_IF_ERROR(Error());
    return std::move(collective_->bytes);
  }

 private:
  absl::Status Error() const {
    if (collective_->error == MPI_SUCCESS) return absl::OkStatus();
    return absl::InternalError(
        absl::StrCat("MPI all-reduce on rank ", rank_, ": ", MpiError(collective_->error)));
  }

  std::shared_ptr<Collective> collective_;
  int rank_, size_;
  int64_t timeout_seconds_;
};

class MpiCommunicator : public Communicator {
 public:
  static absl::StatusOr<std::unique_ptr<Communicator>> Make() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    int provided = MPI_THREAD_SINGLE;
    if (!initialized) {
      // Serialized: the progress thread and the calling thread take turns (Progress).
      if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided); rc != MPI_SUCCESS) {
        return absl::UnavailableError(absl::StrCat("MPI did not start: ", MpiError(rc)));
      }
      std::atexit(FinishAtExit);
    } else {
      MPI_Query_thread(&provided);
    }
    if (progress == nullptr) progress = new Progress(provided >= MPI_THREAD_SERIALIZED);
    // Errors come back as return codes, not as an abort inside MPI.
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    auto world = std::unique_ptr<MpiCommunicator>(new MpiCommunicator());
    MPI_Comm_rank(MPI_COMM_WORLD, &world->rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &world->size_);
    world->timeout_seconds_ = EnvInt("UOPC_MPI_TIMEOUT_S", kDefaultTimeoutSeconds);
    return world;
  }

  [[noreturn]] void Abort(int code) override { mpi::Abort(code); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  absl::Status AllReduce(absl::Span<uint8_t> bytes, DType dtype, Ops op) override {
    UOPC_ASSIGN_OR_RETURN(std::unique_ptr<PendingAllReduce> pending,
                          StartAllReduce(std::vector<uint8_t>(bytes.begin(), bytes.end()), dtype, op));
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> reduced, pending->Wait());
    std::copy(reduced.begin(), reduced.end(), bytes.begin());
    return absl::OkStatus();
  }

  absl::StatusOr<std::unique_ptr<PendingAllReduce>> StartAllReduce(std::vector<uint8_t> bytes, DType dtype,
                                                                   Ops op) override {
    auto pending = std::make_unique<MpiAllReduce>(std::move(bytes), rank_, size_, timeout_seconds_);
    UOPC_RETURN_IF_ERROR(pending->Start(dtype, op));
    return pending;
  }

 private:
  MpiCommunicator() = default;
  int rank_ = 0;
  int size_ = 1;
  int64_t timeout_seconds_ = kDefaultTimeoutSeconds;
};

const bool registered = RegisterCommunicator(kCommunicator, [] { return MpiCommunicator::Make(); });

}  // namespace

absl::StatusOr<Communicator*> World() { return GetCommunicator(kCommunicator); }

void Abort(int code) {
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  std::fflush(stdout);
  std::fflush(stderr);
  if (initialized && !finalized) {
    if (progress != nullptr) progress->Stop();
    MPI_Abort(MPI_COMM_WORLD, code);
  }
  std::_Exit(code);
}

}  // namespace uopc::mpi
