// uopc's kernels read the right side of a large float32 matmul on the host's devices from packed panels
// (tensor_nn.cc's PackedForVectorTiles): the same values and gradients as tinygrad's graph, which
// UOPC_KERNELS=tinygrad keeps, and the panels only where they pay.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"
#include "tensor/testing/kernels_environment.h"

namespace uopc {
namespace {

using ::testing::Pointwise;

// Whether the graph copies a tensor into panels: CONTIGUOUS of a (K, N/16, 16) view permuted to (N/16, K,
// 16).
bool HasPanels(const Tensor& t) {
  for (const UOp* u : t.uop()->Toposort()) {
    if (u->op() != Ops::CONTIGUOUS || u->src(0)->op() != Ops::PERMUTE) continue;
    const UOp* reshape = u->src(0)->src(0);
    if (reshape->op() == Ops::RESHAPE && reshape->arg().ToString() == "(1024, 64, 16)") return true;
  }
  return false;
}

std::vector<float> Values(const Tensor& t) {
  absl::StatusOr<std::vector<float>> v = t.ToVector<float>();
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : std::vector<float>{};
}

// The product as a plain multiply and sum over k (no panels), summed in the same order.
Tensor Unpacked(const Tensor& a, const Tensor& b) {
  const int64_t m = a.Shape()[0], k = a.Shape()[1], n = b.Shape()[1];
  return (a.Reshape({m, 1, k}) * b.Transpose().Reshape({1, n, k})).Sum(-1);
}

TEST(MatmulPanelsTest, LargeRightSidesArePackedWithTheSameValues) {
  KernelsEnvironment fast("fast");
  Tensor a = Tensor::Rand({16, 1024}, dtypes::kFloat32, "CPU");
  Tensor b = Tensor::Rand({1024, 1024}, dtypes::kFloat32, "CPU");
  Tensor c = a.Matmul(b);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(HasPanels(c));
  EXPECT_THAT(Values(c), Pointwise(::testing::Eq(), Values(Unpacked(a, b))));
}

TEST(MatmulPanelsTest, OnlyWherePanelsPay) {
  KernelsEnvironment fast("fast");
  auto zeros = [](Dims shape, DType dtype = dtypes::kFloat32, const std::string& device = "CPU") {
    return Tensor::Zeros(shape, dtype, device);
  };
  EXPECT_TRUE(HasPanels(zeros({8, 1024}).Matmul(zeros({1024, 1024}))));
  EXPECT_TRUE(HasPanels(
      zeros({8, 1024}, dtypes::kFloat32, "LLVM").Matmul(zeros({1024, 1024}, dtypes::kFloat32, "LLVM"))));
  // Under 2^20 elements, a column count that is no multiple of 16, another dtype, another device, a batch.
  EXPECT_FALSE(HasPanels(zeros({8, 512}).Matmul(zeros({512, 512}))));
  EXPECT_FALSE(HasPanels(zeros({8, 1024}).Matmul(zeros({1024, 1000}))));
  EXPECT_FALSE(HasPanels(zeros({8, 1024}, dtypes::kFloat16).Matmul(zeros({1024, 1024}, dtypes::kFloat16))));
  EXPECT_FALSE(HasPanels(
      zeros({8, 1024}, dtypes::kFloat32, "INTERP").Matmul(zeros({1024, 1024}, dtypes::kFloat32, "INTERP"))));
  EXPECT_FALSE(HasPanels(zeros({2, 8, 1024}).Matmul(zeros({2, 1024, 1024}))));
}

TEST(MatmulPanelsTest, TinygradsKernelsKeepTinygradsGraph) {
  Tensor a = Tensor::Rand({16, 1024}, dtypes::kFloat32, "CPU");
  Tensor b = Tensor::Rand({1024, 1024}, dtypes::kFloat32, "CPU");
  std::vector<float> packed, unpacked;
  {
    KernelsEnvironment fast("fast");
    packed = Values(a.Matmul(b));
  }
  {
    KernelsEnvironment tinygrad("tinygrad");
    Tensor c = a.Matmul(b);
    EXPECT_FALSE(HasPanels(c));
    unpacked = Values(c);
  }
  EXPECT_THAT(packed, Pointwise(::testing::FloatNear(1e-3), unpacked));
}

TEST(MatmulPanelsTest, GradientsFlowThroughThePanels) {
  Tensor a = Tensor::Rand({16, 1024}, dtypes::kFloat32, "CPU");
  Tensor b = Tensor::Rand({1024, 1024}, dtypes::kFloat32, "CPU");
  std::vector<float> da_packed, db_packed, da, db;
  for (const char* kernels : {"fast", "tinygrad"}) {
    KernelsEnvironment env(kernels);
    absl::StatusOr<std::vector<Tensor>> grads = a.Matmul(b).Square().Sum().Gradient({a, b});
    ASSERT_TRUE(grads.ok()) << grads.status();
    (std::string(kernels) == "fast" ? da_packed : da) = Values((*grads)[0]);
    (std::string(kernels) == "fast" ? db_packed : db) = Values((*grads)[1]);
  }
  EXPECT_THAT(da_packed, Pointwise(::testing::FloatNear(0.5), da));
  EXPECT_THAT(db_packed, Pointwise(::testing::FloatNear(0.5), db));
}

}  // namespace
}  // namespace uopc
