// Generation: tinygrad's examples/gpt2.py in C++. The model (token and position embeddings, pre-LayerNorm
// blocks of attention with a KV cache and a GELU MLP, a final LayerNorm and the LM head) is loaded from a
// safetensors file with tinygrad's state-dict keys; the prompt runs in one pass, then each new token is one
// step of a TinyJit whose kernels take `start_pos` (and the token) as symbolic variables: the step is
// captured once and replayed for every position. Greedy decoding by default; --temperature samples with
// Multinomial (seeded by --seed).
//
// The default weights are the tiny GPT-2 tinygrad drew for the reference (testdata/models/gpt2_tiny.*: dim
// 64, 4 heads, 2 layers, one token per byte); --expected checks the tokens tinygrad generated and the
// prompt's last logits. A real GPT-2 124M loads the same way from a safetensors file with these keys (Linear
// weights (out, in), as tinygrad stores them) and --dim=768 --heads=12 --layers=12 --vocab=50257; its
// tokenizer is not part of uopc, so --prompt_tokens gives the prompt as token ids.
//
//   ./bazelw run -c opt //examples:gpt2
//   ./bazelw run -c opt //examples:gpt2 -- --prompt="Hello" --count=20 --temperature=0.8
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <type_traits>
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "examples/gpt2_model.h"
#include "nlohmann/json.hpp"
#include "nn/gguf.h"
#include "nn/safetensors.h"
#include "nn/state.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"
#include "uop/util.h"

ABSL_FLAG(std::string, weights, "testdata/models/gpt2_tiny.safetensors",
          "the model: a safetensors file with tinygrad's keys, or a GGUF file (llama.cpp's GPT-2 names; its "
          "metadata sets the sizes)");
ABSL_FLAG(
    std::string, expected, "",
    "tinygrad's results (gpt2_tiny.expected.json): the generated tokens must equal its, and the prompt's "
    "last logits be within 1e-3 + 1e-3 |x|; also sets the prompt");
ABSL_FLAG(std::string, prompt, "The quick brown fox",
          "prompt, one token per byte (the tiny model's vocabulary)");
ABSL_FLAG(std::string, prompt_tokens, "", "prompt as comma-separated token ids (overrides --prompt)");
ABSL_FLAG(int, count, 40, "tokens to generate");
ABSL_FLAG(double, temperature, 0.0, "0: greedy; else sample softmax(logits / temperature)");
ABSL_FLAG(int64_t, seed, 0, "seed of the sampling (Tensor::ManualSeed)");
ABSL_FLAG(int64_t, dim, 64, "model width");
ABSL_FLAG(int64_t, heads, 4, "attention heads");
ABSL_FLAG(int64_t, layers, 2, "transformer blocks");
ABSL_FLAG(int64_t, vocab, 256, "vocabulary size");
ABSL_FLAG(int64_t, max_context, 128, "KV cache length (tinygrad's MAX_CONTEXT)");
ABSL_FLAG(double, norm_eps, 1e-5, "LayerNorm epsilon");

namespace uopc {
namespace {

using Clock = std::chrono::steady_clock;
using gpt2::Config;
using gpt2::Transformer;

// A GGUF metadata number as an int64 (the converters write the sizes as uint32).
std::optional<double> GgufNumber(const nn::GgufMetadata& metadata, absl::string_view key) {
  const nn::GgufValue* v = nn::FindGgufValue(metadata, key);
  if (v == nullptr) return std::nullopt;
  return std::visit(
      [](const auto& x) -> std::optional<double> {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_arithmetic_v<T>) return static_cast<double>(x);
        return std::nullopt;
      },
      v->value);
}

// The weights under tinygrad's keys: a safetensors file as gpt2.py's state dict has them, or a GGUF file as
// llama.cpp's converter names a GPT-2 (token_embd, blk.N.attn_qkv, ...; the LM head tied to the token
// embedding when the file has no `output`), whose gpt2.* metadata then sets the sizes.
absl::StatusOr<nn::StateDict> LoadWeights(const std::string& path, Config* config) {
  if (!absl::EndsWith(path, ".gguf")) return nn::SafeLoad(path);
  UOPC_ASSIGN_OR_RETURN(nn::GgufFile file, nn::GgufLoad(path));
  const auto set = [&](absl::string_view key, auto* field) {
    if (std::optional<double> v = GgufNumber(file.metadata, key))
      *field = static_cast<std::decay_t<decltype(*field)>>(*v);
  };
  set("gpt2.embedding_length", &config->dim);
  set("gpt2.block_count", &config->layers);
  set("gpt2.attention.head_count", &config->heads);
  set("gpt2.context_length", &config->max_context);
  set("gpt2.attention.layer_norm_epsilon", &config->norm_eps);
  const absl::flat_hash_map<std::string, std::string> top = {
      {"token_embd", "wte"}, {"position_embd", "wpe"}, {"output_norm", "ln_f"}, {"output", "lm_head"}};
  const absl::flat_hash_map<std::string, std::string> block = {
      {"attn_norm", "ln_1"}, {"attn_qkv", "attn.c_attn"}, {"attn_output", "attn.c_proj"},
      {"ffn_norm", "ln_2"},  {"ffn_up", "mlp.c_fc"},      {"ffn_down", "mlp.c_proj"}};
  nn::StateDict state;
  for (const auto& [name, tensor] : file.tensors) {
    std::vector<std::string> parts = absl::StrSplit(name, '.');
    std::string key;
    if (parts.size() == 2 && top.contains(parts[0])) {
      key = absl::StrCat(top.at(parts[0]), ".", parts[1]);
    } else if (parts.size() == 4 && parts[0] == "blk" && block.contains(parts[2])) {
      key = absl::StrCat("h.", parts[1], ".", block.at(parts[2]), ".", parts[3]);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(path, ": tensor ", name, " is not a GPT-2 weight"));
    }
    state.Set(key, tensor);
  }
  if (const Tensor* wte = state.Find("wte.weight"); wte != nullptr && !state.Contains("lm_head.weight")) {
    state.Set("lm_head.weight", *wte);
  }
  if (const Tensor* wte = state.Find("wte.weight")) config->vocab = wte->Shape()[0];
  return state;
}

absl::StatusOr<std::vector<int64_t>> PromptTokens(const nlohmann::json* expected) {
  std::vector<int64_t> tokens;
  if (expected != nullptr) return (*expected)["prompt"].get<std::vector<int64_t>>();
  const std::string ids = absl::GetFlag(FLAGS_prompt_tokens);
  if (!ids.empty()) {
    for (absl::string_view id : absl::StrSplit(ids, ',')) {
      int64_t t = 0;
      if (!absl::SimpleAtoi(id, &t))
        return absl::InvalidArgumentError(absl::StrCat("--prompt_tokens: bad id '", id, "'"));
      tokens.push_back(t);
    }
  } else {
    for (unsigned char c : absl::GetFlag(FLAGS_prompt)) tokens.push_back(c);
  }
  return tokens;
}

absl::Status Generate() {
  Config config{absl::GetFlag(FLAGS_dim),   absl::GetFlag(FLAGS_heads),       absl::GetFlag(FLAGS_layers),
                absl::GetFlag(FLAGS_vocab), absl::GetFlag(FLAGS_max_context), absl::GetFlag(FLAGS_norm_eps)};
  UOPC_ASSIGN_OR_RETURN(nn::StateDict weights, LoadWeights(absl::GetFlag(FLAGS_weights), &config));
  const int count = absl::GetFlag(FLAGS_count);
  const double temperature = absl::GetFlag(FLAGS_temperature);
  std::optional<nlohmann::json> expected;
  if (const std::string path = absl::GetFlag(FLAGS_expected); !path.empty()) {
    std::ifstream in(path);
    if (!in) return absl::NotFoundError(absl::StrCat("--expected: cannot open ", path));
    expected = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (expected->is_discarded())
      return absl::InvalidArgumentError(absl::StrCat("--expected: ", path, " is not JSON"));
  }
  UOPC_ASSIGN_OR_RETURN(std::vector<int64_t> prompt, PromptTokens(expected ? &*expected : nullptr));
  if (prompt.empty()) return absl::InvalidArgumentError("the prompt is empty");
  for (int64_t t : prompt) {
    if (t < 0 || t >= config.vocab)
      return absl::InvalidArgumentError(absl::StrCat("prompt token ", t, " is outside the vocabulary"));
  }
  if (static_cast<int64_t>(prompt.size()) + count > config.max_context) {
    return absl::InvalidArgumentError(absl::StrCat("the prompt (", prompt.size(), " tokens) and --count=",
                                                   count, " exceed --max_context=", config.max_context));
  }

  Tensor::ManualSeed(absl::GetFlag(FLAGS_seed));
  Transformer model(config);
  UOPC_RETURN_IF_ERROR(nn::LoadStateDict(model, weights));

  // The single-token step: its kernels take the token and the position as variables.
  const Sint token_var = Variable("tokens", 0, config.vocab - 1);
  const Sint pos_var = Variable("start_pos", 1, config.max_context - 1);
  TinyJit step(
      [&](absl::Span<const Tensor>, absl::Span<const Sint> vars) -> absl::StatusOr<std::vector<Tensor>> {
        UOPC_ASSIGN_OR_RETURN(Tensor next, model.Forward(vars[0], vars[1], temperature));
        return std::vector<Tensor>{next};
      });

  std::vector<int64_t> tokens = prompt;
  std::vector<double> step_seconds;
  Tensor prompt_logits;
  const auto start = Clock::now();
  int64_t start_pos = 0;
  for (int i = 0; i < count; ++i) {
    const auto step_start = Clock::now();
    Tensor next;
    if (tokens.size() - start_pos == 1) {
      UOPC_ASSIGN_OR_RETURN(Sint token, Bind(token_var, tokens[start_pos]));
      UOPC_ASSIGN_OR_RETURN(Sint pos, Bind(pos_var, start_pos));
      UOPC_ASSIGN_OR_RETURN(std::vector<Tensor> out, step({}, {token, pos}));
      next = out[0];
    } else {
      std::vector<int64_t> rest(tokens.begin() + start_pos, tokens.end());
      Tensor t = Tensor::Literal(rest, Dims{1, static_cast<int64_t>(rest.size())});
      UOPC_ASSIGN_OR_RETURN(next, model.Forward(t, Sint(start_pos), temperature, &prompt_logits));
    }
    UOPC_ASSIGN_OR_RETURN(std::vector<int32_t> tok, next.ToVector<int32_t>());
    start_pos = static_cast<int64_t>(tokens.size());
    tokens.push_back(tok[0]);
    step_seconds.push_back(SecondsSince(step_start));
  }
  const double total = SecondsSince(start);

  std::vector<int64_t> generated(tokens.begin() + prompt.size(), tokens.end());
  std::string text;
  for (int64_t t : tokens) text += (t >= 32 && t < 127) ? static_cast<char>(t) : '.';
  std::printf("generated: %s\n", absl::StrJoin(generated, " ").c_str());
  if (config.vocab == 256) std::printf("text (bytes, . for unprintable): %s\n", text.c_str());
  std::vector<double> later(step_seconds.begin() + std::min<size_t>(1, step_seconds.size()),
                            step_seconds.end());
  std::sort(later.begin(), later.end());
  const double median = later.empty() ? 0 : later[later.size() / 2];
  std::printf(
      "%d tokens in %.3f s: first step (prompt, compiles) %.3f s, median step %.3f ms, %.0f tokens/s\n",
      count, total, step_seconds.empty() ? 0 : step_seconds[0], median * 1e3, median > 0 ? 1 / median : 0.0);
  std::printf("replayed step: %zu kernels, captured once (%lld calls)\n", step.captured_runs().kernel_count(),
              static_cast<long long>(step.calls()));

  if (expected) {
    const std::vector<int64_t> want = (*expected)["generated"].get<std::vector<int64_t>>();
    std::vector<int64_t> want_prefix(want.begin(),
                                     want.begin() + std::min<size_t>(want.size(), generated.size()));
    if (generated != want_prefix) {
      return absl::InternalError(absl::StrCat("tokens differ from tinygrad's: got ",
                                              absl::StrJoin(generated, " "), ", tinygrad ",
                                              absl::StrJoin(want_prefix, " ")));
    }
    UOPC_ASSIGN_OR_RETURN(std::vector<float> logits, prompt_logits.ToVector<float>());
    const std::vector<double> want_logits = (*expected)["prompt_last_logits"].get<std::vector<double>>();
    if (logits.size() != want_logits.size())
      return absl::InternalError("the prompt's logits have the wrong size");
    double worst = 0;
    for (size_t i = 0; i < logits.size(); ++i) {
      const double err = std::abs(logits[i] - want_logits[i]);
      if (err > 1e-3 + 1e-3 * std::abs(want_logits[i])) {
        return absl::InternalError(absl::StrCat("logit ", i, ": ", logits[i], ", tinygrad ", want_logits[i]));
      }
      worst = std::max(worst, err);
    }
    std::printf("matches tinygrad: %zu tokens, prompt logits within %.2g\n", generated.size(), worst);
  }
  return absl::OkStatus();
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  absl::Status status = uopc::Generate();
  if (!status.ok()) {
    std::fprintf(stderr, "gpt2: %s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
