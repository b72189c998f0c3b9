// The tiny GPT-2's single-token step (//examples:gpt2's TinyJit replay: 2 blocks of attention over the KV
// cache and the MLP, the LM head, argmax, and reading the token back), at positions 20 to 119 in turn:
//   ./bazelw run -c opt //examples:gpt2_benchmark
// tinygrad v0.10.3 takes 0.55 ms a token for this step on this machine's CPU (testdata/models/README.md;
// measure it with testdata/models/make_gpt2_tiny.py).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "absl/status/status.h"
#include "benchmark/benchmark.h"
#include "examples/gpt2_model.h"
#include "nn/safetensors.h"
#include "nn/state.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"

namespace uopc {
namespace {

void CheckOk(const absl::Status& status, const char* what) {
  if (status.ok()) return;
  std::fprintf(stderr, "gpt2_benchmark: %s: %s\n", what, status.ToString().c_str());
  std::exit(1);
}

void BM_Gpt2TinyStep(benchmark::State& state) {
  const gpt2::Config config{64, 4, 2, 256, 128, 1e-5};
  gpt2::Transformer model(config);
  absl::StatusOr<nn::StateDict> weights = nn::SafeLoad("testdata/models/gpt2_tiny.safetensors");
  CheckOk(weights.status(), "loading testdata/models/gpt2_tiny.safetensors");
  CheckOk(nn::LoadStateDict(model, *weights), "loading the weights");
  // The prompt fills the cache's first 20 positions.
  std::vector<int64_t> prompt(20, 65);
  CheckOk(model.Forward(Tensor::Literal(prompt, Dims{1, 20}), Sint(0), 0.0).status(), "the prompt");
  const Sint token_var = Variable("tokens", 0, config.vocab - 1), pos_var = Variable("start_pos", 1, 127);
  TinyJit step(
      [&](absl::Span<const Tensor>, absl::Span<const Sint> vars) -> absl::StatusOr<std::vector<Tensor>> {
        UOPC_ASSIGN_OR_RETURN(Tensor next, model.Forward(vars[0], vars[1], 0.0));
        return std::vector<Tensor>{next};
      });
  int64_t pos = 20, token = 65;
  auto run = [&] {
    absl::StatusOr<std::vector<Tensor>> out = step({}, {*Bind(token_var, token), *Bind(pos_var, pos)});
    CheckOk(out.status(), "the step");
    absl::StatusOr<std::vector<int32_t>> next = (*out)[0].ToVector<int32_t>();
    CheckOk(next.status(), "reading the token");
    token = (*next)[0];
    pos = pos == 119 ? 20 : pos + 1;
  };
  for (int i = 0; i < 3; ++i) run();  // run, capture, replay
  for (auto _ : state) run();
  state.counters["kernels"] = static_cast<double>(step.captured_runs().kernel_count());
  state.counters["tokens/s"] = benchmark::Counter(1, benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK(BM_Gpt2TinyStep)->Unit(benchmark::kMicrosecond)->UseRealTime();

}  // namespace
}  // namespace uopc

BENCHMARK_MAIN();
