// tinygrad's examples/gpt2.py model (Transformer, TransformerBlock, Attention with its KV cache, FeedForward)
// for //examples:gpt2 and //examples:gpt2_benchmark. `Transformer::Forward` is gpt2.py's `forward`: the
// prompt as a (1, seqlen) tensor with an int start_pos, or one token as a bound Variable with start_pos bound
// to its position, the form a TinyJit step captures once (the KV cache is written in place, so the replayed
// kernels see every earlier position).
#ifndef UOPC_EXAMPLES_GPT2_MODEL_H_
#define UOPC_EXAMPLES_GPT2_MODEL_H_

#include <cmath>
#include <cstdint>
#include <optional>
#include <variant>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nn/layers.h"
#include "nn/module.h"
#include "tensor/tensor.h"
#include "uop/status_macros.h"

namespace uopc::gpt2 {

// The value of an int or of a bound variable (tinygrad's start_pos.val).
inline int64_t ValueOf(const Sint& s) { return s.is_int() ? s.value() : BoundValue(s)->second; }

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

}  // namespace uopc::gpt2

#endif  // UOPC_EXAMPLES_GPT2_MODEL_H_
