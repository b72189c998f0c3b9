// The kernel fuzzer's check on seeded random kernels (the libFuzzer target explores the same space).
#include "codegen/testing/kernel_check.h"

#include "gtest/gtest.h"

namespace uopc {
namespace {

TEST(KernelCheckTest, RandomKernelsWithRandomOptsMatchTheInterpreter) {
  int with_opts = 0;
  for (uint64_t seed = 0; seed < 60; ++seed) {
    ChoiceSource choices(seed);
    RandomKernel kernel = MakeRandomKernel(choices);
    std::vector<Opt> opts = RandomValidOpts(kernel.ast, choices);
    with_opts += !opts.empty();
    std::optional<std::string> failure = CheckKernel(kernel, opts);
    EXPECT_FALSE(failure.has_value()) << "seed " << seed << ": " << *failure;
  }
  // Most cases must exercise at least one opt, or the check proves little.
  EXPECT_GT(with_opts, 30);
}

}  // namespace
}  // namespace uopc
