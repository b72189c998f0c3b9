// ProgramSpec: one compiled kernel as codegen hands it to a device (tinygrad's ProgramSpec): the function's
// name, its rendered source (for devices that compile it), its linear uops (for devices that interpret them),
// its parameters, its launch dims, the opts that made it and its Estimates (the work one run does, which the
// DEBUG=2 line turns into GFLOPS and GB/s).
#ifndef UOPC_CODEGEN_PROGRAM_SPEC_H_
#define UOPC_CODEGEN_PROGRAM_SPEC_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "codegen/opt.h"
#include "uop/uop.h"

namespace uopc {

// A count that may depend on the kernel's variables: an integer plus integer multiples of products of
// symbolic loop trip counts. tinygrad keeps one int32 sint expression; here the terms are multiplied out in
// 64 bits when the variables are bound, so a large count does not wrap. Sums past 2^63 saturate.
class SymbolicCount {
 public:
  SymbolicCount() = default;
  SymbolicCount(int64_t n) : constant_(n) {}  // NOLINT: plain counts are the common case

  // Adds `multiple` times the product of `factors` (symbolic int UOps; none: `multiple` itself).
  void Add(absl::Span<const UOpPtr> factors, int64_t multiple);
  bool is_constant() const { return terms_.empty(); }
  // The count with the variables (DEFINE_VARs, by name) bound to `values`; an error for an unbound variable.
  absl::StatusOr<int64_t> Evaluate(const absl::flat_hash_map<std::string, int64_t>& values = {}) const;

 private:
  int64_t constant_ = 0;
  // (factors, their multiple), the factor lists distinct.
  std::vector<std::pair<std::vector<UOpPtr>, int64_t>> terms_;
};

// What one run of a program does (tinygrad's Estimates): the DEBUG=2 line's GFLOPS and GB/s come from it.
struct Estimates {
  // Operations: one per ALU lane (a MULACC two; a WMMA 2*N*M*K for the whole warp), each uop counted once per
  // iteration of the loops and launch dims around it. Index and gate arithmetic is not counted.
  SymbolicCount ops;
  // Bytes loaded and stored (global and local memory), also per iteration.
  SymbolicCount lds;
  // Bytes of global memory touched, each buffer once per (op, buffer) group of the kernel's AST: a high
  // estimate of the unique traffic (tinygrad's ProgramSpec.mem_estimate).
  SymbolicCount mem;

  // tinygrad's Estimates.from_uops(uops, ignore_indexing=True) on a linear program: ops and lds, and mem
  // equal to lds (every byte loaded counted as distinct).
  static Estimates FromUops(absl::Span<const UOpPtr> uops);
  // tinygrad's mem_estimate of a kernel AST (Kernel.to_program): for each run of consecutive LOADs, or of
  // STOREs, of one DEFINE_GLOBAL in the AST's toposort, that buffer's bytes.
  static int64_t MemOfAst(const UOp& ast);
};

// What a device needs to make a Program (tinygrad's ProgramSpec): the kernel's function name, its rendered
// source (for compiling devices), its linear uops (for interpreting ones), the DEFINE_GLOBAL args in
// parameter order and the DEFINE_VAR names in parameter order.
struct ProgramSpec {
  // (Initializers everywhere, so `ProgramSpec{.name = ..., .src = ...}` may leave fields out without
  // warnings.)
  std::string name = {};
  std::string src = {};
  std::vector<UOpPtr> uops = {};
  std::vector<int64_t> globals = {};  // DEFINE_GLOBAL args, in the kernel's parameter order
  std::vector<std::string> vars =
      {};  // DEFINE_VAR names, in the kernel's parameter order (after the buffers)
  // Launch dims as rendered; nullopt on the CPU. A symbolic dim holds its largest value here.
  std::optional<std::vector<int64_t>> global_size = std::nullopt, local_size = std::nullopt;
  // The launch dims that depend on the kernel's variables (tinygrad's sint global_size and local_size): the
  // dim (0-2 global, 3-5 local) and its size, an int UOp of DEFINE_VARs, which each launch evaluates for the
  // variables' values (LaunchDims in //runtime).
  std::vector<std::pair<int, UOpPtr>> symbolic_launch_dims = {};
  // The variables the symbolic launch dims read that are not parameters (not in `vars`), sorted: a launch
  // needs their values too.
  std::vector<std::string> launch_vars = {};
  // What codegen made of the kernel besides the program: the opts it applied, and the buffers the program
  // stores to and loads from (DEFINE_GLOBAL args, sorted).
  std::vector<Opt> applied_opts = {};
  std::vector<int64_t> outs = {}, ins = {};
  // ops and lds from the uops; mem from the kernel's AST (Estimates::MemOfAst), which CompileOptimizedKernel
  // sets: 0 for a program made without one (tinygrad's mem_estimate default).
  Estimates estimates = {};

  // name from the SINK's KernelInfo (the last uop); globals and vars from the DEFINE_GLOBAL and DEFINE_VAR
  // uops in program order (the renderers' parameter order); launch dims, when not given, from the SPECIAL
  // uops (tinygrad's ProgramSpec.__post_init__), a symbolic size into symbolic_launch_dims; estimates
  // from the uops, mem 0. Errors: no SINK with a KernelInfo last, a SPECIAL that is not (name, size).
  static absl::StatusOr<ProgramSpec> FromUops(std::vector<UOpPtr> uops, std::string src,
                                              std::optional<std::vector<int64_t>> global_size = std::nullopt,
                                              std::optional<std::vector<int64_t>> local_size = std::nullopt);
};

}  // namespace uopc

#endif  // UOPC_CODEGEN_PROGRAM_SPEC_H_
