// Collectives across processes: what Tensor::AllReduce runs (an all-reduce of a host copy of a buffer over
// the processes of a communicator), behind a name, as devices are.
//
// A communicator library registers itself from a static initializer when linked, as the devices do:
// //runtime:mpi registers "MPI" (MPI_COMM_WORLD of an `mpirun` job). A schedule's all-reduce item (a COPY
// whose arg is AllReduceArg) reads its source buffer to the host, hands the bytes to the communicator, which
// replaces them in place with the reduction over every process, and writes them to its output buffer; a
// TinyJit capture replays it like any other item.
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

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/dtype.h"
#include "uop/ops.h"
#include "uop/uop.h"

namespace uopc {

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
