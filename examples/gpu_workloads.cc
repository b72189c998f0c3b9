// uopc's side of `examples/torch_workloads.py --device=cuda` (docs/performance.md, "On an NVIDIA H200"): the
// same workloads on a GPU device, each a TinyJit replayed `--runs` times between two synchronizations of the
// device, so the time is the kernels' and the launches', not the host's queueing:
//   matmul_f32, matmul_f16   an n x n matmul (float32; float16 with float32 sums, on tensor cores)
//   conv3x3_fwd, conv3x3_fwd_bwd   a ResNet stage-1 3x3 convolution (batch 16, 64 -> 64, 56 x 56, padding 1),
//                            forward, and forward with both gradients
//
//   bazel-bin/examples/gpu_workloads --device=CUDA                     # uopc's kernels
//   ALLOW_TF32=1 TC_OPT=2 bazel-bin/examples/gpu_workloads             # float32 products on TF32 tensor
//   cores
//
// It links only the CUDA device (and INTERP, for trying it without a GPU), so that a static build travels to
// a GPU machine with nothing but libc beside it. TFLOPS counts a multiply-add as two operations.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_split.h"
#include "runtime/registry.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"
#include "uop/util.h"

ABSL_FLAG(std::string, device, "CUDA", "the device to run on");
ABSL_FLAG(std::string, workloads, "matmul_f32,matmul_f16,conv3x3_fwd,conv3x3_fwd_bwd", "which workloads");
ABSL_FLAG(int64_t, n, 4096, "the matmuls' size");
ABSL_FLAG(int, runs, 20, "timed replays of each workload");

namespace uopc {
namespace {

using JitBody = std::function<absl::StatusOr<std::vector<Tensor>>(absl::Span<const Tensor>)>;

// Replays `body` until it is captured, then times `runs` replays between two synchronizations; returns the
// milliseconds a replay.
absl::StatusOr<double> TimeReplays(const JitBody& body, const std::vector<Tensor>& inputs, Device& device,
                                   int runs) {
  TinyJit jit(body);
  while (!jit.captured() || jit.calls() < 3) UOPC_RETURN_IF_ERROR(jit(inputs).status());
  UOPC_RETURN_IF_ERROR(device.Synchronize());
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < runs; ++i) UOPC_RETURN_IF_ERROR(jit(inputs).status());
  UOPC_RETURN_IF_ERROR(device.Synchronize());
  return SecondsSince(start) * 1e3 / runs;
}

absl::Status Run() {
  const std::string device_name = absl::GetFlag(FLAGS_device);
  UOPC_ASSIGN_OR_RETURN(Device * device, GetDevice(device_name));
  Tensor::SetDefaultDevice(device_name);
  const int runs = absl::GetFlag(FLAGS_runs);
  const int64_t n = absl::GetFlag(FLAGS_n);
  std::printf("uopc on %s, ALLOW_TF32=%d TC_OPT=%lld\n", device_name.c_str(), EnvFlag("ALLOW_TF32") ? 1 : 0,
              static_cast<long long>(EnvInt("TC_OPT", 0)));
  for (absl::string_view workload : absl::StrSplit(absl::GetFlag(FLAGS_workloads), ',')) {
    double flops = 0;
    std::vector<Tensor> inputs;
    JitBody body;
    if (workload == "matmul_f32" || workload == "matmul_f16") {
      const DType dtype = workload == "matmul_f16" ? dtypes::kFloat16 : dtypes::kFloat32;
      inputs = {Tensor::Rand({n, n}).Cast(dtype), Tensor::Rand({n, n}).Cast(dtype)};
      body = [](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
        return std::vector<Tensor>{in[0].Matmul(in[1])};
      };
      flops = 2.0 * n * n * n;
    } else if (workload == "conv3x3_fwd" || workload == "conv3x3_fwd_bwd") {
      constexpr int64_t kBatch = 16, kChannels = 64, kSize = 56;
      flops = 2.0 * kBatch * kChannels * kChannels * 9 * kSize * kSize;
      inputs = {Tensor::Rand({kBatch, kChannels, kSize, kSize}), Tensor::Rand({kChannels, kChannels, 3, 3})};
      if (workload == "conv3x3_fwd") {
        body = [](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
          return std::vector<Tensor>{in[0].Conv2d(in[1], ConvOptions{.padding = {1}})};
        };
      } else {
        for (Tensor& t : inputs) t = t.RequiresGrad();
        flops *= 3;
        body = [](absl::Span<const Tensor> in) -> absl::StatusOr<std::vector<Tensor>> {
          in[0].SetGrad(std::nullopt);
          in[1].SetGrad(std::nullopt);
          Tensor loss = in[0].Conv2d(in[1], ConvOptions{.padding = {1}}).Sum();
          UOPC_RETURN_IF_ERROR(loss.Backward());
          return std::vector<Tensor>{loss, *in[0].Grad(), *in[1].Grad()};
        };
      }
    } else {
      return absl::InvalidArgumentError(absl::StrCat("--workloads: no workload named '", workload, "'"));
    }
    UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(inputs));
    UOPC_ASSIGN_OR_RETURN(double ms, TimeReplays(body, inputs, *device, runs));
    std::printf("%-16s %9.3f ms %9.1f TFLOPS\n", std::string(workload).c_str(), ms, flops / ms * 1e-9);
    std::fflush(stdout);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  if (absl::Status status = uopc::Run(); !status.ok()) {
    std::fprintf(stderr, "gpu_workloads: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
