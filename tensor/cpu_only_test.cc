// A program that links one device, as a user's CPU-only program would: `@uopc//tensor` and
// `@uopc//runtime:cpu`, nothing of LLVM, OpenCL or CUDA (tools/consumer_workspace_test.sh checks its deps
// with `bazel query`). It trains a two-layer MLP for one SGD step on the default device, which must be CPU,
// checks the loss and the updated weights against plain loops, and checks that asking for LLVM is an error
// naming the target to add.
#include <cmath>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_NEAR(got[i], want[i], 1e-5f * (1 + std::fabs(want[i]))) << i;
}

// x (n, k) @ w (k, m), row major.
std::vector<float> MatMul(const std::vector<float>& x, const std::vector<float>& w, int n, int k, int m) {
  std::vector<float> out(n * m, 0.0f);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < m; ++j)
      for (int p = 0; p < k; ++p) out[i * m + j] += x[i * k + p] * w[p * m + j];
  return out;
}

std::vector<float> Transpose(const std::vector<float>& a, int rows, int cols) {
  std::vector<float> t(a.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j) t[j * rows + i] = a[i * cols + j];
  return t;
}

TEST(CpuOnlyTest, TheDefaultDeviceIsCpu) { EXPECT_EQ(Tensor::DefaultDevice(), "CPU"); }

TEST(CpuOnlyTest, AnSgdStepMatchesPlainLoops) {
  // loss = sum(relu(x @ w1) @ w2) for a batch of 3, 4 inputs, 5 hidden units, 2 outputs.
  constexpr int kBatch = 3, kIn = 4, kHidden = 5, kOut = 2;
  std::vector<float> x(kBatch * kIn), w1(kIn * kHidden), w2(kHidden * kOut);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (size_t i = 0; i < w1.size(); ++i) w1[i] = 0.1f * static_cast<float>(i % 5) - 0.15f;
  for (size_t i = 0; i < w2.size(); ++i) w2[i] = 0.2f - 0.05f * static_cast<float>(i % 9);

  Tensor tx = Tensor::FromVector(x, {kBatch, kIn});
  Tensor tw1 = Tensor::FromVector(w1, {kIn, kHidden}).RequiresGrad();
  Tensor tw2 = Tensor::FromVector(w2, {kHidden, kOut}).RequiresGrad();
  Tensor loss = tx.Matmul(tw1).Relu().Matmul(tw2).Sum();
  absl::Status backward = loss.Backward();
  ASSERT_TRUE(backward.ok()) << backward;
  constexpr float kLr = 0.1f;
  Tensor new_w1 = tw1 - *tw1.Grad() * kLr;
  absl::StatusOr<std::vector<float>> got_loss = loss.ToVector<float>();
  absl::StatusOr<std::vector<float>> got_w1 = new_w1.ToVector<float>();
  ASSERT_TRUE(got_loss.ok()) << got_loss.status();
  ASSERT_TRUE(got_w1.ok()) << got_w1.status();

  // The same step by hand: h = relu(x w1); dloss/dh = 1 w2^T where h > 0; dloss/dw1 = x^T dh.
  std::vector<float> h = MatMul(x, w1, kBatch, kIn, kHidden);
  for (float& v : h) v = v > 0 ? v : 0;
  std::vector<float> y = MatMul(h, w2, kBatch, kHidden, kOut);
  float want_loss = 0;
  for (float v : y) want_loss += v;
  std::vector<float> dh(kBatch * kHidden);
  for (int i = 0; i < kBatch; ++i)
    for (int j = 0; j < kHidden; ++j) {
      float g = 0;
      for (int o = 0; o < kOut; ++o) g += w2[j * kOut + o];
      dh[i * kHidden + j] = h[i * kHidden + j] > 0 ? g : 0;
    }
  std::vector<float> dw1 = MatMul(Transpose(x, kBatch, kIn), dh, kIn, kBatch, kHidden);
  std::vector<float> want_w1 = w1;
  for (size_t i = 0; i < want_w1.size(); ++i) want_w1[i] -= kLr * dw1[i];
  ExpectNear(*got_loss, {want_loss});
  ExpectNear(*got_w1, want_w1);
}

// LLVM is not linked into this program: using it is an error that says which target to add.
TEST(CpuOnlyTest, LlvmIsAnErrorNamingItsTarget) {
  Tensor x = Tensor::FromVector<float>({1, 2, 3}, {3});
  absl::StatusOr<std::vector<float>> on_llvm = (x.To("LLVM") * 2).ToVector<float>();
  ASSERT_FALSE(on_llvm.ok());
  EXPECT_THAT(on_llvm.status().message(),
              HasSubstr("device \"LLVM\" is not linked into this program: add //runtime:llvm to its deps"));
}

}  // namespace
}  // namespace uopc
