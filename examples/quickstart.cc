// quickstart: what uopc is for. Tensor code in C++, fused kernels out, run on the CPU.
//
// Two small networks written with uopc's Tensor API (tensor/tensor.h), the same calls a tinygrad user makes
// in Python: a two-layer MLP with a softmax, and a 3x3 convolution with a ReLU and a max pool. Nothing runs
// while the graph is built. `ToVector` hands the graph to the scheduler, which cuts it into kernels (as
// tinygrad's does: the same kernels, the same ASTs); codegen optimizes and renders each kernel as C; the CPU
// device compiles it with clang and runs it. The program prints each kernel as tinygrad does at DEBUG=2, the
// C source of one kernel, the results next to a plain C++ computation of the same MLP, and the time spent.
//
//   ./bazelw run //examples:quickstart
//
// Try DEBUG=4 (every kernel's source) or NOOPT=1 (no optimizations) in the environment.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "runtime/realize.h"
#include "tensor/tensor.h"
#include "uop/util.h"

namespace {

using uopc::Tensor;

// Deterministic inputs in [-0.5, 0.5): the program makes its own data.
std::vector<float> Values(int64_t n, int64_t seed) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i)
    v[i] = static_cast<float>(((i * 7919 + seed * 104729) % 1000) / 1000.0 - 0.5);
  return v;
}

// The MLP in plain C++, to check uopc's answer.
std::vector<float> ReferenceMlp(const std::vector<float>& x, const std::vector<float>& w1,
                                const std::vector<float>& b1, const std::vector<float>& w2,
                                const std::vector<float>& b2, int batch, int in, int hidden, int out) {
  std::vector<float> result(batch * out);
  for (int r = 0; r < batch; ++r) {
    std::vector<float> h(hidden), o(out);
    for (int j = 0; j < hidden; ++j) {
      float acc = b1[j];
      for (int k = 0; k < in; ++k) acc += x[r * in + k] * w1[k * hidden + j];
      h[j] = std::max(acc, 0.0f);
    }
    float top = -INFINITY, sum = 0;
    for (int j = 0; j < out; ++j) {
      float acc = b2[j];
      for (int k = 0; k < hidden; ++k) acc += h[k] * w2[k * out + j];
      o[j] = acc;
      top = std::max(top, acc);
    }
    for (int j = 0; j < out; ++j) sum += std::exp(o[j] - top);
    for (int j = 0; j < out; ++j) result[r * out + j] = std::exp(o[j] - top) / sum;
  }
  return result;
}

struct Report {
  std::vector<uopc::KernelRun> runs;
  double run_seconds = 0, compile_seconds = 0;
};

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "quickstart: %s\n", s.ToString().c_str());
  return EXIT_FAILURE;
}

void PrintKernels(Report& report, size_t from) {
  for (size_t i = from; i < report.runs.size(); ++i) {
    report.run_seconds += report.runs[i].run_seconds;
    report.compile_seconds += report.runs[i].compile_seconds;
    std::printf("%s\n",
                uopc::KernelRunLine(report.runs[i], static_cast<int64_t>(i + 1), report.run_seconds).c_str());
  }
}

}  // namespace

int main() {
  Report report;
  uopc::SetKernelRunListener([&report](const uopc::KernelRun& run) { report.runs.push_back(run); });
  auto start = std::chrono::steady_clock::now();

  std::printf(
      "uopc quickstart: tensor code in C++ -> tinygrad's scheduler and codegen -> C -> clang -> run\n\n");

  // ---- a two-layer MLP: softmax(relu(x @ w1 + b1) @ w2 + b2) ----
  constexpr int kBatch = 4, kIn = 64, kHidden = 32, kOut = 10;
  std::vector<float> x = Values(kBatch * kIn, 1), w1 = Values(kIn * kHidden, 2), b1 = Values(kHidden, 3),
                     w2 = Values(kHidden * kOut, 4), b2 = Values(kOut, 5);
  Tensor tx = Tensor::FromVector(x, {kBatch, kIn});
  Tensor tw1 = Tensor::FromVector(w1, {kIn, kHidden}), tb1 = Tensor::FromVector(b1, {kHidden});
  Tensor tw2 = Tensor::FromVector(w2, {kHidden, kOut}), tb2 = Tensor::FromVector(b2, {kOut});
  Tensor probs = ((tx.Matmul(tw1) + tb1).Relu().Matmul(tw2) + tb2).Softmax();
  std::printf("== MLP %dx%d -> %d -> %d, softmax: a lazy graph of %zu nodes, shape (%lld, %lld)\n", kBatch,
              kIn, kHidden, kOut, probs.uop()->Toposort().size(), static_cast<long long>(probs.Shape()[0]),
              static_cast<long long>(probs.Shape()[1]));
  absl::StatusOr<std::vector<float>> mlp = probs.ToVector<float>();
  if (!mlp.ok()) return Fail(mlp.status());
  std::printf("kernels (as tinygrad prints them at DEBUG=2):\n");
  PrintKernels(report, 0);
  std::vector<float> want = ReferenceMlp(x, w1, b1, w2, b2, kBatch, kIn, kHidden, kOut);
  float max_error = 0;
  for (size_t i = 0; i < want.size(); ++i) max_error = std::max(max_error, std::abs((*mlp)[i] - want[i]));
  std::printf("row 0:");
  for (int j = 0; j < kOut; ++j) std::printf(" %.4f", (*mlp)[j]);
  std::printf("\nmax |uopc - plain C++| over all %d outputs: %.1e\n\n", kBatch * kOut, max_error);

  // ---- a convolution: maxpool2x2(relu(conv3x3(image, 8 filters, padding 1))) ----
  size_t conv_from = report.runs.size();
  Tensor image = Tensor::FromVector(Values(1 * 3 * 16 * 16, 6), {1, 3, 16, 16});
  Tensor filters = Tensor::FromVector(Values(8 * 3 * 3 * 3, 7), {8, 3, 3, 3});
  uopc::ConvOptions same;
  same.padding = {1};
  Tensor features = image.Conv2d(filters, same).Relu().MaxPool2d();
  std::printf("== conv 1x3x16x16 with 8 3x3 filters, padding 1, relu, 2x2 max pool -> (1, 8, 8, 8)\n");
  absl::StatusOr<std::vector<float>> conv = features.ToVector<float>();
  if (!conv.ok()) return Fail(conv.status());
  std::printf("kernels:\n");
  PrintKernels(report, conv_from);
  double total = 0;
  for (float v : *conv) total += v;
  std::printf("%zu outputs, sum %.4f, first channel's first row:", conv->size(), total);
  for (int j = 0; j < 8; ++j) std::printf(" %.4f", (*conv)[j]);
  std::printf("\n\n");

  // ---- one kernel's C source ----
  // (Its loops are tinygrad's: the same kernel, the same opts, the same C, byte for byte.)
  if (conv_from < report.runs.size()) {
    const uopc::KernelRun& conv_kernel = report.runs[conv_from];
    std::printf("== the C uopc generated for %s, the convolution with its ReLU fused in\n",
                conv_kernel.name.c_str());
    // The first lines (the 3x3 window is unrolled into many more; DEBUG=4 prints every kernel whole).
    size_t pos = 0;
    int lines = 0;
    while (pos < conv_kernel.src.size() && lines < 24) {
      size_t end = conv_kernel.src.find('\n', pos);
      if (end == std::string::npos) end = conv_kernel.src.size();
      std::printf("%s\n", conv_kernel.src.substr(pos, end - pos).c_str());
      pos = end + 1;
      ++lines;
    }
    int64_t rest = std::count(conv_kernel.src.begin() + std::min(pos, conv_kernel.src.size()),
                              conv_kernel.src.end(), '\n');
    if (rest > 0) std::printf("  ... (%lld more lines)\n", static_cast<long long>(rest));
    std::printf("\n");
  }

  double wall = uopc::SecondsSince(start);
  std::printf("== %zu kernels: compiled in %.1f ms (codegen + clang), ran in %.3f ms; %.1f ms in all\n",
              report.runs.size(), report.compile_seconds * 1e3, report.run_seconds * 1e3, wall * 1e3);
  uopc::SetKernelRunListener(nullptr);
  return max_error < 1e-5 ? EXIT_SUCCESS : EXIT_FAILURE;
}
