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
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "nn/layers.h"
#include "nn/module.h"
#include "nn/safetensors.h"
#include "nn/state.h"
#include "tensor/jit.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"
#include "uop/util.h"

ABSL_FLAG(std::string, weights, "testdata/models/gpt2_tiny.safetensors", "safetensors file of the model");
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

// The value of an int or of a bound variable (tinygrad's start_pos.val).
int64_t ValueOf(const Sint& s) { return s.is_int() ? s.value() : BoundValue(s)->second; }

struct Config {
  int64_t dim, heads, layers, vocab, max_context;
  double norm_eps;
};

class Attention : public nn::Module {
 public:
  Attention(int64_t dim, int64_t heads, int64_t max_context)
      : c_attn(dim, 3 * dim), c_proj(dim, dim), heads_(heads), dim_(dim), max_context_(max_context) {}

  // `start_pos` is a bound Variable in the single-token steps and an int for the prompt.
  absl::StatusOr<Tensor> operator()(const Tensor& x, const Sint& start_pos, const Tensor* mask) {
    const Dims xs = x.Shape();
    const int64_t bsz = xs[0], seqlen = xs[1], head_dim = dim_ / heads_;
    Tensor xqkv = c_attn(x);
    std::vector<Tensor> qkv;
    for (int64_t i = 0; i < 3; ++i) {
      qkv.push_back(xqkv.Shrink({{0, bsz}, {0, seqlen}, {i * dim_, (i + 1) * dim_}})
                        .Reshape({bsz, seqlen, heads_, head_dim}));
    }
    if (!cache_kv_) {
      cache_kv_ = Tensor::Zeros({2, bsz, max_context_, heads_, head_dim}, x.dtype()).Contiguous();
      UOPC_RETURN_IF_ERROR(cache_kv_->Realize());
    }
    // The KV cache update, in place: the new keys and values at start_pos.
    Tensor update =
        cache_kv_->Shrink({{0, 2}, {0, bsz}, {start_pos, start_pos + seqlen}, {0, heads_}, {0, head_dim}})
            .Assign(Tensor::Stack({qkv[1], qkv[2]}));
    UOPC_RETURN_IF_ERROR(update.Realize());
    Tensor keys = qkv[1], values = qkv[2];
    if (ValueOf(start_pos) > 0) {
      const std::vector<SintPair> upto = {{0, bsz}, {0, start_pos + seqlen}, {0, heads_}, {0, head_dim}};
      keys = cache_kv_->Index({int64_t{0}}).Shrink(upto);
      values = cache_kv_->Index({int64_t{1}}).Shrink(upto);
    }
    Tensor attn =
        qkv[0].Transpose(1, 2).ScaledDotProductAttention(keys.Transpose(1, 2), values.Transpose(1, 2), mask);
    return c_proj(attn.Transpose(1, 2).Reshape({bsz, seqlen, dim_}));
  }

  void CollectState(nn::StateCollector& state) const override {
    state.Add("c_attn", c_attn);
    state.Add("c_proj", c_proj);
  }

  nn::Linear c_attn, c_proj;

 private:
  int64_t heads_, dim_, max_context_;
  std::optional<Tensor> cache_kv_;
};

class FeedForward : public nn::Module {
 public:
  FeedForward(int64_t dim, int64_t hidden) : c_fc(dim, hidden), c_proj(hidden, dim) {}
  Tensor operator()(const Tensor& x) const { return c_proj(c_fc(x).Gelu()); }
  void CollectState(nn::StateCollector& state) const override {
    state.Add("c_fc", c_fc);
    state.Add("c_proj", c_proj);
  }
  nn::Linear c_fc, c_proj;
};

class TransformerBlock : public nn::Module {
 public:
  explicit TransformerBlock(const Config& c)
      : attn(c.dim, c.heads, c.max_context),
        mlp(c.dim, 4 * c.dim),
        ln_1({c.dim}, c.norm_eps),
        ln_2({c.dim}, c.norm_eps) {}

  absl::StatusOr<Tensor> operator()(const Tensor& x, const Sint& start_pos, const Tensor* mask) {
    UOPC_ASSIGN_OR_RETURN(Tensor a, attn(ln_1(x), start_pos, mask));
    Tensor h = x + a.Float();
    return h + mlp(ln_2(h));
  }

  void CollectState(nn::StateCollector& state) const override {
    state.Add("attn", attn);
    state.Add("mlp", mlp);
    state.Add("ln_1", ln_1);
    state.Add("ln_2", ln_2);
  }

  Attention attn;
  FeedForward mlp;
  nn::LayerNorm ln_1, ln_2;
};

class Transformer : public nn::Module {
 public:
  explicit Transformer(const Config& c)
      : wte(c.vocab, c.dim),
        wpe(c.max_context, c.dim),
        ln_f({c.dim}, c.norm_eps),
        lm_head(c.dim, c.vocab, false),
        config_(c) {
    for (int64_t i = 0; i < c.layers; ++i) h.emplace_back(c);
  }

  // The next token for `tokens` (a (1, seqlen) tensor, or one token as a bound Variable) at `start_pos`.
  // `logits_out`, when given, receives the last position's logits.
  absl::StatusOr<Tensor> Forward(const std::variant<Tensor, Sint>& tokens, const Sint& start_pos,
                                 double temperature, Tensor* logits_out = nullptr) {
    if (!allpos_) {
      allpos_ = Tensor::Arange(0, config_.max_context).Reshape({1, -1});
      UOPC_RETURN_IF_ERROR(allpos_->Realize());
    }
    Tensor tok_emb;
    int64_t seqlen = 1;
    if (const Sint* token = std::get_if<Sint>(&tokens)) {
      tok_emb = wte.weight.Shrink({{*token, *token + 1}, {0, config_.dim}});
    } else {
      const Tensor& t = std::get<Tensor>(tokens);
      seqlen = t.Shape()[1];
      tok_emb = wte(t);
    }
    Tensor pos_emb = wpe(allpos_->Shrink({{0, 1}, {start_pos, start_pos + seqlen}}));
    Tensor x = tok_emb + pos_emb;
    std::optional<Tensor> mask;
    const int64_t pos = ValueOf(start_pos);
    if (seqlen > 1) {
      mask = Tensor::Full({1, 1, seqlen, pos + seqlen}, -INFINITY, x.dtype()).Triu(pos + 1);
    }
    // As gpt2.py: the attention's shapes are symbolic only in the single-token steps.
    const Sint attn_pos = (mask || pos == 0) ? Sint(pos) : start_pos;
    for (TransformerBlock& block : h) {
      UOPC_ASSIGN_OR_RETURN(x, block(x, attn_pos, mask ? &*mask : nullptr));
    }
    Tensor logits = lm_head(ln_f(x)).Index({Slice{}, int64_t{-1}, Slice{}});
    if (logits_out != nullptr) *logits_out = logits;
    Tensor next = temperature < 1e-6 ? logits.Argmax(-1) : (logits / temperature).Softmax().Multinomial();
    next = next.Flatten();
    UOPC_RETURN_IF_ERROR(next.Realize());
    return next;
  }

  void CollectState(nn::StateCollector& state) const override {
    state.Add("wte", wte);
    state.Add("wpe", wpe);
    state.AddList("h", h);
    state.Add("ln_f", ln_f);
    state.Add("lm_head", lm_head);
  }

  nn::Embedding wte, wpe;
  std::vector<TransformerBlock> h;
  nn::LayerNorm ln_f;
  nn::Linear lm_head;

 private:
  Config config_;
  std::optional<Tensor> allpos_;
};

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
  const Config config{absl::GetFlag(FLAGS_dim),         absl::GetFlag(FLAGS_heads),
                      absl::GetFlag(FLAGS_layers),      absl::GetFlag(FLAGS_vocab),
                      absl::GetFlag(FLAGS_max_context), absl::GetFlag(FLAGS_norm_eps)};
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
  UOPC_ASSIGN_OR_RETURN(nn::StateDict weights, nn::SafeLoad(absl::GetFlag(FLAGS_weights)));
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
