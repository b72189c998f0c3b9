// The kernel fuzzer's check on seeded random kernels (the libFuzzer target explores the same space).
#include "codegen/testing/kernel_check.h"

#include <csignal>
#include <cstdlib>

#include "gmock/gmock.h"
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

TEST(KernelCheckTest, IsolatedRunsReportCrashesAndResults) {
  absl::StatusOr<nlohmann::json> crashed = RunIsolated([]() -> absl::StatusOr<nlohmann::json> {
    std::raise(SIGSEGV);
    return nlohmann::json();
  });
  ASSERT_FALSE(crashed.ok());
  EXPECT_THAT(crashed.status().message(), ::testing::HasSubstr("signal 11 (SIGSEGV)"));
  EXPECT_THAT(RunIsolated([]() -> absl::StatusOr<nlohmann::json> { std::abort(); }).status().message(),
              ::testing::HasSubstr("(SIGABRT)"));
  absl::StatusOr<nlohmann::json> fine = RunIsolated([] {
    return absl::StatusOr<nlohmann::json>(nlohmann::json::object({{"0", {1, 2}}}));
  });
  ASSERT_TRUE(fine.ok()) << fine.status();
  EXPECT_EQ(*fine, nlohmann::json::object({{"0", {1, 2}}}));
  absl::Status error =
      RunIsolated([] { return absl::StatusOr<nlohmann::json>(absl::NotFoundError("gone")); }).status();
  EXPECT_EQ(error, absl::NotFoundError("gone"));
}

TEST(KernelCheckTest, IsolatedChecksAgreeWithInProcessOnes) {
  for (uint64_t seed = 0; seed < 5; ++seed) {
    ChoiceSource choices(seed);
    RandomKernel kernel = MakeRandomKernel(choices);
    std::vector<Opt> opts = RandomValidOpts(kernel.ast, choices);
    std::optional<std::string> failure = CheckKernel(kernel, opts, "CPU", /*isolate=*/true);
    EXPECT_FALSE(failure.has_value()) << "seed " << seed << ": " << *failure;
  }
}

}  // namespace
}  // namespace uopc
