#include "runtime/mpi.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <thread>

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

// A collective that timed out is still pending: MPI_Finalize would wait for it, so the exit aborts instead.
bool timed_out = false;

void FinishAtExit() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  if (timed_out) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Finalize();
}

class MpiCommunicator : public Communicator {
 public:
  static absl::StatusOr<std::unique_ptr<Communicator>> Make() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      if (int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided); rc != MPI_SUCCESS) {
        return absl::UnavailableError(absl::StrCat("MPI did not start: ", MpiError(rc)));
      }
      std::atexit(FinishAtExit);
    }
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
    UOPC_ASSIGN_OR_RETURN(MPI_Datatype type, MpiType(dtype));
    UOPC_ASSIGN_OR_RETURN(MPI_Op mpi_op, MpiOp(op));
    if (bytes.size() % dtype.itemsize() != 0) {
      return absl::InvalidArgumentError("all-reduce of a partial element");
    }
    const int64_t count = static_cast<int64_t>(bytes.size()) / dtype.itemsize();
    if (count > std::numeric_limits<int>::max()) {
      return absl::UnimplementedError(
          absl::StrCat("MPI all-reduce of ", count, " elements (at most 2^31 - 1)"));
    }
    // In place, without blocking: the wait is bounded here, so a peer that died or hangs is an error.
    MPI_Request request;
    if (int rc = MPI_Iallreduce(MPI_IN_PLACE, bytes.data(), static_cast<int>(count), type, mpi_op,
                                MPI_COMM_WORLD, &request);
        rc != MPI_SUCCESS) {
      return absl::InternalError(absl::StrCat("MPI all-reduce on rank ", rank_, ": ", MpiError(rc)));
    }
    const auto start = std::chrono::steady_clock::now();
    const auto deadline = start + std::chrono::seconds(timeout_seconds_);
    for (int polls = 0;; ++polls) {
      int done = 0;
      if (int rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE); rc != MPI_SUCCESS) {
        return absl::InternalError(absl::StrCat("MPI all-reduce on rank ", rank_, ": ", MpiError(rc)));
      }
      if (done) return absl::OkStatus();
      if (std::chrono::steady_clock::now() > deadline) {
        timed_out = true;
        return absl::DeadlineExceededError(absl::StrCat(
            "MPI all-reduce of ", bytes.size(), " bytes: rank ", rank_, " of ", size_, " waited ",
            timeout_seconds_, " s (UOPC_MPI_TIMEOUT_S) for the other processes; one failed or is stuck"));
      }
      // Spin briefly (a step's all-reduces are short), then yield the core to the kernels' threads.
      if (polls > 1000) std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
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
  if (initialized && !finalized) MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace uopc::mpi
