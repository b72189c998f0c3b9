// The value conventions of tinygrad's kernel corpus (shared/reference/tinygrad-v0.10.3/corpus/README.md,
// section 6): the inputs every buffer starts with, the outputs as JSON, and the tolerances outputs are
// compared with. `uopc run --jsonl` and the corpus tests use them to fill buffers, print results and check
// them.
//
//   std::vector<uint8_t> bytes = CorpusInputBytes(dtypes::kFloat16, /*arg=*/1, /*size=*/64);
//   nlohmann::json got = CorpusJsonFromBytes(dtypes::kFloat16, bytes).value();
//   std::string diff = CorpusValuesMismatch(dtypes::kFloat16, got, kernel.outputs["0"]);   // "" when equal
//
// JSON conventions: floats are numbers (printed like Python's repr: shortest round-trip digits) with NaN and
// infinities as the strings "nan", "inf", "-inf"; integers are exact integers; bools are true/false.
#ifndef UOPC_RUNTIME_CORPUS_VALUES_H_
#define UOPC_RUNTIME_CORPUS_VALUES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "uop/dtype.h"

namespace uopc {

// A corpus dtype name ("float32", "float16", "bfloat16", "int8", "uint32", "bool", ...) as a scalar DType.
absl::StatusOr<DType> CorpusDType(absl::string_view name);

// value(dtype, arg, j): element j of the buffer whose DEFINE_GLOBAL arg is `arg`, before the kernel runs.
// Floats as their value in `dtype` (for bfloat16: the float32 value's top 16 bits, as the corpus specifies).
ConstValue CorpusInputValue(DType dtype, int64_t arg, int64_t j);
// The `size` elements of that buffer in memory (host byte order). Halfs are written as bits computed through
// float, never by a C double-to-half conversion (see the corpus README). dtype must be a non-void scalar.
std::vector<uint8_t> CorpusInputBytes(DType dtype, int64_t arg, int64_t size);

// `size` values given as a JSON array in the corpus conventions, in memory (as CorpusInputBytes writes them).
// Errors: not an array of `size` values of `dtype` (an integer out of its range, a float for an int).
absl::StatusOr<std::vector<uint8_t>> CorpusBytesFromJson(DType dtype, const nlohmann::json& values,
                                                         int64_t size);

// A buffer's contents as a JSON array in the corpus conventions. Errors: a byte count that is not a whole
// number of elements, a dtype that is not a non-void scalar.
absl::StatusOr<nlohmann::json> CorpusJsonFromBytes(DType dtype, absl::Span<const uint8_t> bytes);
// JSON text as Python's json.dumps writes it (", " and ": " separators, floats by repr: 1.0, 1e-05, 1e+16).
std::string CorpusJsonText(const nlohmann::json& value);

// Tolerances: |got - want| <= atol + rtol * |want|.
struct CorpusTolerance {
  double atol = 0, rtol = 0;
};
// 1e-4 for float32 and float64, 1e-2 for float16 and bfloat16, 0 (exact) otherwise.
CorpusTolerance CorpusToleranceFor(DType dtype);

// Empty when the arrays `got` and `want` match for `dtype` (floats within the tolerance, NaN equal to NaN,
// infinities exactly; integers and bools exactly); else a readable message: how many elements differ and the
// first of them, with both values.
std::string CorpusValuesMismatch(DType dtype, const nlohmann::json& got, const nlohmann::json& want);

}  // namespace uopc

#endif  // UOPC_RUNTIME_CORPUS_VALUES_H_
