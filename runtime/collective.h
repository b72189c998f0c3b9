// Collectives across processes: what Tensor::AllReduce runs (an all-reduce of a host copy of a buffer over
// the processes of a communicator), behind a name, as devices are.
//
// A communicator library registers itself from a static initializer when linked, as the devices do:
// //runtime:mpi registers "MPI" (MPI_COMM_WORLD of an `mpirun` job). A schedule's all-reduce item (a COPY
// whose arg is AllReduceArg) reads its source buffer to the host, hands the bytes to the communicator, which
// replaces them in place with the reduction over every process, and writes them to its output buffer; a
// TinyJit capture replays it like any other item. A run starts the collective and goes on with the next items
// (StartAllReduce: MPI's non-blocking all-reduce), and writes the output before the first item that touches
// it.
//
//   const bool registered = RegisterCommunicator("MPI", [] { return MakeMpiCommunicator(); });
//   absl::StatusOr<Communicator*> world = GetCommunicator("MPI");
//   absl::Status s = (*world)->AllReduce(absl::MakeSpan(bytes), dtypes::kFloat32, Ops::ADD);
#ifndef UOPC_RUNTIME_COLLECTIVE_H_
#define UOPC_RUNTIME_COLLECTIVE_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/dtype.h"
#include "uop/ops.h"
#include "uop/uop.h"

namespace uopc {

// An all-reduce that has started and not been waited for (Communicator::StartAllReduce). It owns its bytes.
class PendingAllReduce {
 public:
  // Destroying one not waited for is safe: the communicator keeps what its collective still writes to.
  virtual ~PendingAllReduce() = default;
  // Lets the collective advance (where the library advances it only inside its calls) and says whether it is
  // complete.
  virtual absl::StatusOr<bool> Test() = 0;
  // Waits for it (at most the communicator's time limit) and returns the reduced bytes. Call it once.
  virtual absl::StatusOr<std::vector<uint8_t>> Wait() = 0;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  // This process's index among the communicator's, and their number.
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Replaces `bytes` (whole elements of the scalar `dtype`) with `op` (ADD, MUL, MAX) of every process's
  // bytes, element by element. Errors: an op or dtype it cannot reduce, a process that does not join within
  // the communicator's time limit, the library's own errors.
  virtual absl::Status AllReduce(absl::Span<uint8_t> bytes, DType dtype, Ops op) = 0;
  // Starts the same all-reduce and returns without waiting where the library can (the default runs AllReduce
  // to completion). Every process starts its collectives in one order; they may complete in any.
  virtual absl::StatusOr<std::unique_ptr<PendingAllReduce>> StartAllReduce(std::vector<uint8_t> bytes,
                                                                           DType dtype, Ops op);
  // Ends every process with `code` (what a process that failed does, so that no other waits for it).
  [[noreturn]] virtual void Abort(int code) = 0;
};

using CommunicatorFactory = std::function<absl::StatusOr<std::unique_ptr<Communicator>>()>;

// Adds the factory for `name` (false when that communicator exists already). Thread safe.
bool RegisterCommunicator(absl::string_view name, CommunicatorFactory factory);
// The communicator called `name`, made on first use. Errors: none registered by that name (naming the target
// to link for "MPI"), or the factory's error (not cached).
absl::StatusOr<Communicator*> GetCommunicator(absl::string_view name);

// The arg of the COPY node that all-reduces (Tensor::AllReduce): ("all_reduce", communicator, op).
Arg AllReduceArg(absl::string_view communicator, Ops op);
struct AllReduceSpec {
  std::string communicator;
  Ops op;
};
// The communicator and op of a COPY's arg when it is an all-reduce; nullopt for a plain copy.
std::optional<AllReduceSpec> AllReduceOf(const Arg& copy_arg);

}  // namespace uopc

#endif  // UOPC_RUNTIME_COLLECTIVE_H_
