// The spec verifier: the type and arity rules a UOp graph must satisfy at each stage of the pipeline.
//
// A port of tinygrad v0.10.3's tinygrad/spec.py. `spec` there is the set of rules for kernel-level uops
// (buffers, ALU, LOAD/STORE/INDEX, RANGE, DEFINE_ACC, GEP, VECTORIZE, ...); tinygrad checks the optimized
// kernel AST and the linearized program against it, and a tensor graph against `tensor_uop_spec` followed by
// `spec`. The checks that need a ShapeTracker (VIEW shapes, unmasked zero-stride CONST views, equal shapes of
// sources) belong to the shapetracker layer; here a VIEW's arg only has to be a payload named "ShapeTracker".
// A few rules are stricter than tinygrad where tinygrad's patterns let an ill-typed node fall through to a
// looser rule (a CMPLT that produces an int, a WHERE with an int condition, ALU ops with the wrong number of
// sources); each is marked in spec.cc. tinygrad proves INDEX bounds with z3 where range analysis cannot; uopc
// has no z3, so only an index whose whole range lies outside the buffer is rejected.
//
// A violation is an absl::InvalidArgumentError naming the node: its position (in toposort order, or in the
// program), op, dtype, arg and source ops, and the rule it broke.
#ifndef UOPC_UOP_SPEC_H_
#define UOPC_UOP_SPEC_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "uop/uop.h"

namespace uopc {

// A tensor-level graph (BUFFER, DEVICE, movement ops, VIEW, ALU, ASSIGN, COPY, CONTIGUOUS, KERNEL, SINK,
// ...): tinygrad's tensor_uop_spec, then spec.
absl::Status VerifyTensorGraph(const UOp* sink);

// A kernel AST: SINK of STOREs over DEFINE_GLOBAL/VIEW/LOAD/ALU/REDUCE_AXIS (before or after optimization):
// tinygrad's spec, plus the root being a SINK whose sources are all STOREs.
absl::Status VerifyKernelAst(const UOp* sink);

// A linearized program (the list the renderer walks): tinygrad's spec applied to each uop in order.
absl::Status VerifyProgram(absl::Span<const UOp* const> uops);
// The same for the program of every uop reachable from `root`, in toposort order.
absl::Status VerifyProgram(const UOp* root);

}  // namespace uopc

#endif  // UOPC_UOP_SPEC_H_
