// MPI (Open MPI, Debian's libopenmpi-dev) as uopc's communicator across processes: linking //runtime:mpi
// registers "MPI", the processes of MPI_COMM_WORLD, for Tensor::AllReduce (runtime/collective.h).
//
// A program runs under `mpirun -np N prog ...` (one process per rank; docs/distributed.md has the commands
// for several machines). MPI starts at the first use of the communicator, or at Init, and finishes when the
// process exits. An all-reduce waits at most UOPC_MPI_TIMEOUT_S seconds (default 300) for the other
// processes: past that it is a DeadlineExceeded error, and the process should end the job with Abort, so that
// a rank that failed or hangs never leaves the others waiting.
//
//   UOPC_ASSIGN_OR_RETURN(Communicator* world, mpi::World());
//   Tensor total = local.AllReduce(Ops::ADD, "MPI");   // the same sum on every rank
//   ...
//   if (!status.ok()) mpi::Abort(1);                   // every rank ends, with mpirun's message
#ifndef UOPC_RUNTIME_MPI_H_
#define UOPC_RUNTIME_MPI_H_

#include "absl/status/statusor.h"
#include "runtime/collective.h"

namespace uopc::mpi {

// The name the MPI communicator is registered under.
inline constexpr char kCommunicator[] = "MPI";

// Starts MPI if it has not started (MPI_Init_thread, serialized: the thread that calls uopc and the thread
// that advances the collectives in flight take turns) and returns MPI_COMM_WORLD's communicator. Errors:
// MPI's, when it cannot start.
absl::StatusOr<Communicator*> World();

// Ends every process of the job with `code` (MPI_Abort); started or not, it does not return.
[[noreturn]] void Abort(int code);

}  // namespace uopc::mpi

#endif  // UOPC_RUNTIME_MPI_H_
