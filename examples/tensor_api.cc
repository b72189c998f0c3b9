// tensor_api: a tour of uopc's Tensor API (tensor/tensor.h), tinygrad's Tensor in C++.
//
// Tensors are lazy: each call builds the UOp graph tinygrad builds, and values exist only after a realize
// (which `ToVector` does). Numbers mix with tensors as Python numbers do, shapes broadcast, dtypes promote as
// in tinygrad, and a mistake (here a matmul of mismatched shapes) is an error naming the shapes, carried by
// the Tensor to the point where you check it.
//
//   ./bazelw run //examples:tensor_api
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "tensor/tensor.h"

namespace {

using uopc::Tensor;

template <typename E>
void Show(const char* what, const Tensor& t) {
  absl::StatusOr<std::vector<E>> v = t.ToVector<E>();
  std::printf("%-34s shape (%s) %s: %s\n", what, absl::StrJoin(t.Shape(), ", ").c_str(),
              t.dtype().ToString().c_str(),
              v.ok() ? absl::StrJoin(*v, " ").c_str() : v.status().ToString().c_str());
}

}  // namespace

int main() {
  // Creation: values, ranges, constants.
  Tensor a = Tensor::FromVector<float>({1, 2, 3, 4, 5, 6}, {2, 3});
  Tensor r = Tensor::Arange(3);  // int32 0 1 2
  Show<float>("a", a);
  Show<int32_t>("Arange(3)", r);

  // Broadcasting and promotion: float (2,3) + int (3,) is float (2,3); int * 2.5 is float.
  Show<float>("a + Arange(3)", a + r);
  Show<float>("Arange(3) * 2.5", r * 2.5);

  // Reductions over axes, with keepdim; the classic normalizations.
  Show<float>("a.Sum(1)", a.Sum(1));
  Show<float>("a.Max(0, keepdim)", a.Max(0, true));
  Show<float>("a - a.Mean(1, keepdim)", a - a.Mean(1, true));
  Show<float>("a.Softmax()", a.Softmax());

  // Movement: views cost nothing until a kernel reads them.
  Show<float>("a.T()", a.T());
  Show<float>("a.Flip({1})", a.Flip({1}));
  Show<float>("a[:, 1:]",
              a.Index({Tensor::IndexItem(uopc::Slice{}), uopc::Slice{1, std::nullopt, std::nullopt}}));
  Show<float>("a.Pad({{0, 0}, {1, 0}})", a.Pad({{0, 0}, {1, 0}}));

  // Linear algebra and comparisons.
  Show<float>("a @ a.T()", a.Matmul(a.T()));
  Show<bool>("a > 3", a > 3);
  Show<float>("(a > 3).Where(a, 0)", (a > 3).Where(a, 0));

  // Devices: the same program on the interpreter (slow, obviously right) instead of compiled C.
  Show<float>("a.To(INTERP).Exp().Sum()", a.To("INTERP").Exp().Sum());

  // Errors name the shapes, where the call was made; nothing crashes.
  Tensor bad = a.Matmul(a);
  std::printf("%-34s %s\n", "a @ a", bad.status().ToString().c_str());
  return bad.ok() ? EXIT_FAILURE : EXIT_SUCCESS;
}
