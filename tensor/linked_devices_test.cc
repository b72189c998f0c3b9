// The Tensor API in a program that links one device, INTERP (//runtime:interp), and not CPU: the default
// device is the linked one, tensors run there, and a tensor on CPU is an error naming //runtime:cpu.
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(LinkedDevicesTest, TheDefaultIsTheLinkedDevice) {
  EXPECT_EQ(Tensor::DefaultDevice(), "INTERP");
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4}, {2, 2});
  EXPECT_EQ(a.Device(), "INTERP");
  absl::StatusOr<std::vector<float>> sums = (a * 2 + 1).Sum(1).ToVector<float>();
  ASSERT_TRUE(sums.ok()) << sums.status();
  EXPECT_THAT(*sums, ElementsAre(8, 16));
}

TEST(LinkedDevicesTest, AnUnlinkedDeviceIsAnErrorNamingItsTarget) {
  Tensor a = Tensor::FromVector<float>({1, 2}, {2});
  absl::StatusOr<std::vector<float>> on_cpu = (a.To("CPU") + 1).ToVector<float>();
  ASSERT_FALSE(on_cpu.ok());
  EXPECT_THAT(on_cpu.status().message(),
              HasSubstr("device \"CPU\" is not linked into this program: add //runtime:cpu to its deps"));
}

}  // namespace
}  // namespace uopc
