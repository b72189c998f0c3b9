// Unit tests of the Tensor API: promotion, broadcasting, shape errors, and values after realize.
#include "tensor/tensor.h"

#include "gtest/gtest.h"
#include "tensor/testing/graph_compare.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

TEST(TensorTest, Debug) {
  Tensor a = R({3, 2});
  Tensor c = Tensor::Const(2.5);
  std::cout << PrintIr(c.uop().get()) << "\n";
  std::cout << c.Shape().size() << "\n";
  Tensor r = c.Reshape({1, 1});
  std::cout << r.status() << PrintIr(r.uop().get()) << "\n";
  Tensor s = a * 2.5;
  std::cout << PrintIr(s.uop().get()) << "\n";
}

}  // namespace
}  // namespace uopc
