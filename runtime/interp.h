// The interpreter of linear programs: runs the uops codegen's linearizer produces, one at a time, with the
// semantics of uop/exec_alu.h (tinygrad's PYTHON device is the model).
//
// It is slow and obviously right: the reference the compiled backends are checked against. Every access is
// bounds-checked (an out-of-bounds load or store is an error naming the uop, not undefined behaviour), loops
// follow C's `for` (an empty range runs no iteration), and IF blocks mask the lanes whose condition is false.
// A workgroup's local threads run in lock step as the lanes of one warp, so BARRIER needs no work and local
// memory is shared by the lanes; workgroups run one after another.
//
//   absl::StatusOr<InterpretedProgram> p = InterpretedProgram::Create(uops);
//   absl::Status s = p->Run(buffers, /*vars=*/{}, LaunchDims{});
#ifndef UOPC_RUNTIME_INTERP_H_
#define UOPC_RUNTIME_INTERP_H_

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "uop/dtype.h"
#include "uop/uop.h"

namespace uopc {

// Memory the program reads and writes: `size` elements of the scalar type `dtype`, at `data`.
struct InterpBuffer {
  void* data = nullptr;
  int64_t size = 0;
  DType dtype;
};

// Launch sizes in (x, y, z) order: workgroups per dimension, and threads per workgroup.
struct LaunchDims {
  std::array<int64_t, 3> global = {1, 1, 1};
  std::array<int64_t, 3> local = {1, 1, 1};
};

class InterpretedProgram {
 public:
  // Checks that `uops` is a program this interpreter can run (every op supported, every source defined before
  // its use, RANGE/ENDRANGE and IF/ENDIF paired) and keeps references to them.
  static absl::StatusOr<InterpretedProgram> Create(absl::Span<const UOpPtr> uops);

  // Runs the program once. `buffers[i]` backs DEFINE_GLOBAL i (its element type must be the pointer's);
  // `vars` gives each DEFINE_VAR's value by name. With `max_steps` > 0, executing more uops than that (over
  // all workgroups) stops the run with ResourceExhausted, for callers that run programs they did not write.
  absl::Status Run(absl::Span<const InterpBuffer> buffers,
                   const absl::flat_hash_map<std::string, int64_t>& vars, const LaunchDims& dims,
                   int64_t max_steps = 0) const;

  const std::vector<UOpPtr>& uops() const { return uops_; }

 private:
  struct Op {
    const UOp* uop;
    std::vector<int> src;  // positions of the sources in the program
    int jump = -1;         // RANGE: its ENDRANGE; ENDRANGE: its RANGE; IF: its ENDIF
  };
  // One workgroup's run of the program (interp.cc).
  class Workgroup;
  explicit InterpretedProgram(std::vector<UOpPtr> uops) : uops_(std::move(uops)) {}

  std::vector<UOpPtr> uops_;
  std::vector<Op> ops_;
};

}  // namespace uopc

#endif  // UOPC_RUNTIME_INTERP_H_
