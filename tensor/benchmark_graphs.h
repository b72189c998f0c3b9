// The four tensor graphs tinygrad v0.10.3's schedule + codegen was timed on (shared reference README), built
// with the Tensor API exactly as schedule/testdata/harvest_tensor_programs.py's BENCHMARKS build them: the
// benchmark and the quickstart use them, and tensor/benchmark_graphs_test.cc checks each against tinygrad's
// graph.
//
//   std::vector<Tensor> outs = MatmulGraph();   // 1024x1024 @ 1024x1024, inputs realized
//   UOpPtr sink = UOp::Sink({outs[0].uop()});
#ifndef UOPC_TENSOR_BENCHMARK_GRAPHS_H_
#define UOPC_TENSOR_BENCHMARK_GRAPHS_H_

#include <functional>
#include <string>
#include <vector>

#include "tensor/tensor.h"

namespace uopc {

// A realized input whose element j is the corpus formula value(dtype, seed + 1, j) (the harvest script's R).
Tensor CorpusInput(const Dims& shape, DType dtype = dtypes::kFloat32, int seed = 0,
                   const std::string& device = "");

// R(1024, 1024) @ R(1024, 1024, seed=1).
Tensor MatmulGraph(const std::string& device = "");
// An MLP 784-512-512-10 on a batch of 64 (relu between layers, biases).
Tensor MlpGraph(const std::string& device = "");
// A ResNet basic block on 8x64x32x32: conv3x3, batchnorm, relu, conv3x3, batchnorm, residual add, relu. Its
// two inverse standard deviations are realized first, as in tinygrad's script (this runs two small kernels).
Tensor ResnetBasicBlockGraph(const std::string& device = "");
// A causal self-attention block: 4x128x256 input, 8 heads, q/k/v/o projections.
Tensor AttentionBlockGraph(const std::string& device = "");

// name ("matmul_1024", "mlp_784_512_512_10", "resnet_basic_block", "attention_block") -> builder.
const std::vector<std::pair<std::string, std::function<Tensor()>>>& BenchmarkGraphs();

}  // namespace uopc

#endif  // UOPC_TENSOR_BENCHMARK_GRAPHS_H_
