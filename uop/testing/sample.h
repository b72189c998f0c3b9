// Sampling for the exhaustive tests: every BEAM candidate of every kernel, every op on every renderer, every
// program of a corpus. The plain build runs every case; the sanitizer configs (.bazelrc) set UOPC_TEST_STRIDE
// and run every Nth case, which exercises the same code under ASan, UBSan and TSan for a fraction of the time
// these tests take there (CI runs each config on every clone).
// `bazel test --config=asan --test_env=UOPC_TEST_STRIDE=1` runs them all.
#ifndef UOPC_UOP_TESTING_SAMPLE_H_
#define UOPC_UOP_TESTING_SAMPLE_H_

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "uop/util.h"

namespace uopc {

// N of "every Nth case"; 1 when UOPC_TEST_STRIDE is unset.
inline int64_t TestStride() { return std::max<int64_t>(1, EnvInt("UOPC_TEST_STRIDE", 1)); }

// Whether the case numbered `index` (counting from 0) runs.
inline bool InTestSample(int64_t index) { return index % TestStride() == 0; }

// The cases that run, in order: the first and every Nth after it.
template <typename T>
std::vector<T> TestSample(std::vector<T> cases) {
  const int64_t stride = TestStride();
  if (stride == 1) return cases;
  std::vector<T> sample;
  for (size_t i = 0; i < cases.size(); i += stride) sample.push_back(std::move(cases[i]));
  return sample;
}

// The indices 0 .. count - 1 that run: TestSample of them all.
inline std::vector<int> TestSampleOf(int count) {
  std::vector<int> indices(count);
  for (int i = 0; i < count; ++i) indices[i] = i;
  return TestSample(std::move(indices));
}

}  // namespace uopc

#endif  // UOPC_UOP_TESTING_SAMPLE_H_
