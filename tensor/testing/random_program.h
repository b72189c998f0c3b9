// Random tensor programs for the differential fuzzers of the Tensor API (//tensor:tensor_fuzzer) and the
// scheduler (//tensor:schedule_fuzzer): a program is built through the C++ Tensor API from a stream of
// choices (the fuzz input's bytes, or a seeded PRNG for the gtest runs), realized through the scheduler,
// codegen and the CPU device, and every output is compared with the host reference (host_tensor.h), evaluated
// op by op as the program is built.
//
// The generator draws inputs of random shapes and dtypes and ops on the values built so far: elementwise ops
// with broadcasting and Python numbers, casts, reductions over random axes, cumsum, movement ops (reshape,
// permute, expand, pad, shrink, flip), contiguous, where, and in-place assigns to inputs. It knows each value
// as the reference computes it, so an op whose result the reference cannot pin down is not drawn, and every
// program it makes is valid: a Tensor API error is a finding, as are a wrong dtype or shape and a wrong
// value. The scheduler's profile makes graphs rather than arithmetic: several outputs sharing inputs and
// intermediates, reductions broadcast back and reduced again, assigns with readers before and after them,
// and several realizes in a row, so that realized buffers are reused by the memory planner.
//
// An assign makes a buffer's old values unreadable for a tensor that still reads that buffer lazily after the
// realize (tinygrad's semantics: a lazy graph reads the buffer as it is when it runs), so such values leave
// the program and are not compared.
//
//   ChoiceSource choices(data, size);
//   ProgramOutcome out = RunRandomProgram(choices, TensorFuzzProfile());
//   if (!out.failure.empty()) { print out.listing and out.failure; abort }
#ifndef UOPC_TENSOR_TESTING_RANDOM_PROGRAM_H_
#define UOPC_TENSOR_TESTING_RANDOM_PROGRAM_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "uop/dtype.h"

namespace uopc {

// The generator's choices: the fuzz input's bytes (zeros once they run out), or a seeded PRNG.
class FuzzChoices {
 public:
  explicit FuzzChoices(uint64_t seed) : rng_(seed) {}
  FuzzChoices(const uint8_t* data, size_t size) : data_(data), size_(size), from_bytes_(true) {}

  // Uniform in [0, n) (from one byte when n <= 256); 0 when n <= 1.
  uint64_t Below(uint64_t n);
  int64_t Between(int64_t lo, int64_t hi) { return lo + static_cast<int64_t>(Below(hi - lo + 1)); }
  bool Percent(int p) { return static_cast<int>(Below(100)) < p; }
  // Whether the fuzz input has been read to its end (the PRNG never ends).
  bool Exhausted() const { return from_bytes_ && size_ == 0; }

 private:
  std::mt19937_64 rng_;
  const uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool from_bytes_ = false;
};

// What programs the generator makes.
struct ProgramProfile {
  std::vector<DType> input_dtypes;
  int max_inputs = 4;
  int max_ops = 14;
  int max_rank = 4;
  int64_t max_dim = 5;
  int64_t max_elements = 256;
  int max_outputs = 4;
  // Realizes in a row (each of some of the values so far, then more ops).
  int max_realizes = 1;
  // Weights of the kinds of ops.
  int w_binary = 30, w_unary = 8, w_cast = 6, w_where = 6, w_reduce = 14, w_cumsum = 2, w_movement = 20,
      w_contiguous = 3, w_assign = 4, w_reduce_broadcast = 0;
  // Whether float transcendental ops (exp2, sqrt, sin, reciprocal) and true division are drawn.
  bool transcendental = true;
};

// Many dtypes and ops, one realize: the Tensor API's semantics (promotion, casts, division, reductions).
ProgramProfile TensorFuzzProfile();
// float32 and int32 graphs with shared inputs, reductions broadcast back, assigns and several realizes: the
// scheduler's grouping, kernel order, assign order and memory planning.
ProgramProfile ScheduleFuzzProfile();

struct ProgramOutcome {
  // The program, one op a line (`t3 = t1.Sum({0}, keepdim=true)  # int32 (1, 4)`), with inputs' values.
  std::string listing;
  // Empty, or what went wrong: a Tensor API error, a dtype or shape unlike the reference's, a value.
  std::string failure;
  // Empty, or why the realize refused the program as tinygrad does (an assign whose value reads the target
  // through a view that does not index it like the store: "self operand of augmented assign must be
  // contiguous"); the program stops there.
  std::string refused;
  int ops = 0;
  int outputs_compared = 0;
};

ProgramOutcome RunRandomProgram(FuzzChoices& choices, const ProgramProfile& profile);

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_RANDOM_PROGRAM_H_
