// The spec verifier: the type and arity rules a UOp graph must satisfy at each stage of the pipeline.
//
// A port of tinygrad v0.10.3's tinygrad/spec.py. `spec` there is the set of rules for kernel-level uops
// (buffers, ALU, LOAD/STORE/INDEX, RANGE, DEFINE_ACC, GEP, VECTORIZE, ...); tinygrad checks the optimized
// kernel AST and the linearized program against it, and a tensor graph against `tensor_uop_spec` followed by
// `spec`. The checks that need a ShapeTracker (VIEW shapes, unmasked zero-stride CONST views, equal shapes of
// sources) belong to the shapetracker layer; here a VIEW's arg only has to be a payload named "ShapeTracker".
// A few rules are stricter than tinygrad where tinygrad's patterns let an ill-typed node fall through to a
// looser rule (a CMPLT that produces an int, a WHERE with an int condition, ALU ops with the wrong number of
// sources); each is marked in spec.cc. tinygrad proves INDEX bounds with z3 where range analysis cannot; this
// layer has no prover, so only an index whose whole range lies outside the buffer is rejected here (codegen's
// bounds check, codegen/bounds_check.h, proves the rest with z3).
//
// A violation is an absl::InvalidArgumentError naming the node: its position (in toposort order, or in the
// program), op, dtype, arg and source ops, and the rule it broke.
//
// SPEC=1 (tinygrad's name; tinygrad itself verifies whenever Python runs without -O) makes the scheduler and
// codegen verify their graph after every step, with the verifier for that step's form (below), and fail with
// an error that names the step. The switch is read once; with it off a step pays one relaxed atomic load.
// Tests and fuzzers turn it on (SPEC=1 in the test's environment, or SetSpecChecks).
#ifndef UOPC_UOP_SPEC_H_
#define UOPC_UOP_SPEC_H_

#include "uop/cxx20.h"  // first: without C++20, one clear error

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "uop/uop.h"

namespace uopc {

// Whether SPEC=1: verification between the pipeline's steps. The environment is read at the first call.
bool SpecChecksEnabled();
// Turns the checks on or off for the whole process, whatever SPEC says (tests and fuzzers). Thread-safe.
void SetSpecChecks(bool enabled);
// The error for a graph that fails verification after step `step` of `pipeline` ("schedule", "codegen"):
// `verdict`'s code and "SPEC: schedule step 'create_ast' left an invalid graph: <verdict's message>".
absl::Status SpecStepError(absl::string_view pipeline, absl::string_view step, const absl::Status& verdict);

// A tensor-level graph (BUFFER, DEVICE, movement ops, VIEW, ALU, ASSIGN, COPY, CONTIGUOUS, KERNEL, SINK,
// ...): tinygrad's tensor_uop_spec, then spec.
absl::Status VerifyTensorGraph(const UOp* sink);

// A kernel AST: SINK of STOREs over DEFINE_GLOBAL/VIEW/LOAD/ALU/REDUCE_AXIS (before or after optimization):
// tinygrad's spec, plus the root being a SINK whose sources are all STOREs.
absl::Status VerifyKernelAst(const UOp* sink);

// A tensor graph between the scheduler's steps, before create_ast: tensor_uop_spec, except that a VIEW may be
// of any value (merge_views makes movement ops into VIEWs of what they move; `spec`'s VIEW rule applies).
absl::Status VerifySchedulerGraph(const UOp* sink);

// The kernel graph the scheduler's create_ast leaves (tinygrad's sched_spec): nothing but UNIQUE, DEVICE,
// BUFFER, BUFFER_VIEW, KERNEL, ASSIGN and SINK. The kernels' ASTs are payloads of a higher layer; the
// scheduler checks each with VerifyKernelAst.
absl::Status VerifyKernelGraph(const UOp* sink);

// A kernel between two codegen steps (after the lowerer, before the linearizer): tinygrad's spec, plus the
// forms that one step makes and a later one removes (tinygrad never verifies these graphs): REDUCE over
// RANGEs (lowerer to remove_reduce), vectors of pointers and their GEPs, INDEXes, LOADs and STOREs (expander
// to devectorize), IGNORE (store_ignore to move_ignore), CAT and PTRCAT (devectorize).
absl::Status VerifyCodegenGraph(const UOp* sink);

// A linearized program (the list the renderer walks): tinygrad's spec applied to each uop in order.
absl::Status VerifyProgram(absl::Span<const UOp* const> uops);
// The same for the program of every uop reachable from `root`, in toposort order.
absl::Status VerifyProgram(const UOp* root);

}  // namespace uopc

#endif  // UOPC_UOP_SPEC_H_
