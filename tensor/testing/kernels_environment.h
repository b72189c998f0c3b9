// UOPC_KERNELS for one scope of a test: the tests that compare uopc's kernels' graphs (packed panels,
// transposed-convolution input gradients) with tinygrad's switch between the two modes with it.
#ifndef UOPC_TENSOR_TESTING_KERNELS_ENVIRONMENT_H_
#define UOPC_TENSOR_TESTING_KERNELS_ENVIRONMENT_H_

#include <cstdlib>

namespace uopc {

// Sets UOPC_KERNELS to `kernels` ("fast" or "tinygrad") until the end of the scope.
class KernelsEnvironment {
 public:
  explicit KernelsEnvironment(const char* kernels) { setenv("UOPC_KERNELS", kernels, 1); }
  ~KernelsEnvironment() { unsetenv("UOPC_KERNELS"); }
  KernelsEnvironment(const KernelsEnvironment&) = delete;
  KernelsEnvironment& operator=(const KernelsEnvironment&) = delete;
};

}  // namespace uopc

#endif  // UOPC_TENSOR_TESTING_KERNELS_ENVIRONMENT_H_
