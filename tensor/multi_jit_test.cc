// A captured step on two devices replays as it runs: between copies each device's kernels run on a thread of
// their own (CapturedRuns::Replay), so this runs under ThreadSanitizer too (tag "concurrency").
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

using ::testing::FloatNear;
using ::testing::Pointwise;

const std::vector<std::string> kDevices = {"CPU:0", "CPU:1"};

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

Tensor Batch(int call) {
  std::vector<float> x(8 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>((i * 7 + call * 13) % 23) / 11.0f - 1.0f;
  return Tensor::FromVector<float>(x, {8, 16});
}

// A layer on a batch split over two devices, its weight on both: kernels on each device between the copies
// of the sums across the batch.
std::vector<Tensor> Step(const Tensor& x, const Tensor& w) {
  Tensor h = x.Matmul(w).Relu();
  Tensor centered = h - h.Mean(0);
  return {(centered * centered).Sum(1), h.Sum(0) * 2};
}

TEST(MultiJitTest, ARunOnTwoDevicesReplaysAsItRuns) {
  std::vector<float> weights(16 * 4);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = static_cast<float>((i * 5) % 9) / 4.0f - 1.0f;
  Tensor w = Tensor::FromVector<float>(weights, {16, 4}).Shard(kDevices);
  ASSERT_TRUE(w.Realize().ok());
  Tensor w_one = Tensor::FromVector<float>(weights, {16, 4});
  TinyJit jit([&](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
    std::vector<Tensor> out = Step(in[0], w);
    UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(out));
    return out;
  });
  for (int call = 0; call < 5; ++call) {
    Tensor x = Batch(call);
    x.Shard_(kDevices, 0);
    absl::StatusOr<std::vector<Tensor>> out = jit({x});
    ASSERT_TRUE(out.ok()) << out.status();
    std::vector<Tensor> expected = Step(Batch(call), w_one);
    for (size_t i = 0; i < expected.size(); ++i) {
      EXPECT_THAT(Values((*out)[i]), Pointwise(FloatNear(1e-5), Values(expected[i])))
          << "output " << i << ", call " << call;
    }
  }
  EXPECT_TRUE(jit.captured());
}

}  // namespace
}  // namespace uopc
