// The layers: output shapes, state-dict names, errors, and values against tinygrad v0.10.3 run on the same
// seeds and inputs (testdata/layers_expected.json, from testdata/harvest_layers.py).
#include "nn/layers.h"

#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "nn/module.h"
#include "nn/state.h"

namespace uopc::nn {
namespace {

// The interpreter: the same numbers as the CPU device without a compiler run per kernel, so the test stays
// fast.
class InterpEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { Tensor::SetDefaultDevice("INTERP"); }
};
const ::testing::Environment* const kInterp = ::testing::AddGlobalTestEnvironment(new InterpEnvironment);

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const nlohmann::json& Expected() {
  static const nlohmann::json* expected = [] {
    std::ifstream in("nn/testdata/layers_expected.json");
    return new nlohmann::json(nlohmann::json::parse(in));
  }();
  return *expected;
}

// tinygrad's `Tensor.arange(n).float() * scale + offset` reshaped: the harvest's inputs.
Tensor Ramp(const Dims& shape, double scale = 0.01, double offset = -0.5) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return (Tensor::Arange(n).Float() * scale + offset).Reshape(shape);
}

void ExpectMatches(const Tensor& t, const std::string& name) {
  SCOPED_TRACE(name);
  ASSERT_TRUE(t.ok()) << t.status();
  const nlohmann::json& want = Expected().at(name);
  EXPECT_EQ(t.Shape(), want["shape"].get<Dims>());
  std::vector<double> got;
  if (t.dtype() == dtypes::kInt64) {
    absl::StatusOr<std::vector<int64_t>> v = t.ToVector<int64_t>();
    ASSERT_TRUE(v.ok()) << v.status();
    got.assign(v->begin(), v->end());
  } else {
    absl::StatusOr<std::vector<float>> v = t.Float().ToVector<float>();
    ASSERT_TRUE(v.ok()) << v.status();
    got.assign(v->begin(), v->end());
  }
  const std::vector<double> values = want["values"].get<std::vector<double>>();
  ASSERT_EQ(got.size(), values.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], values[i], 1e-6 + 2e-6 * std::abs(values[i])) << "element " << i;
  }
}

std::vector<std::string> Names(const Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, t] : GetStateDict(m)) names.push_back(name);
  return names;
}

TEST(LayersTest, LinearMatchesTinygrad) {
  Tensor::ManualSeed(0);
  Linear lin(3, 4);
  ExpectMatches(lin.weight, "linear.weight");
  ExpectMatches(*lin.bias, "linear.bias");
  ExpectMatches(lin(Ramp({2, 3}, 0.25)), "linear.out");
  EXPECT_THAT(Names(lin), ElementsAre("weight", "bias"));
  EXPECT_EQ(lin(Ramp({5, 7, 3})).Shape(), (Dims{5, 7, 4}));
  EXPECT_FALSE(lin(Ramp({2, 5})).ok());
  EXPECT_THAT(Names(Linear(3, 4, false)), ElementsAre("weight"));
}

TEST(LayersTest, Conv2dMatchesTinygrad) {
  Tensor::ManualSeed(1);
  Conv2dOptions options;
  options.stride = {2};
  options.padding = {1};
  options.groups = 2;
  Conv2d conv(4, 6, {3}, options);
  EXPECT_EQ(conv.weight.Shape(), (Dims{6, 2, 3, 3}));
  ExpectMatches(conv.weight, "conv.weight");
  ExpectMatches(*conv.bias, "conv.bias");
  ExpectMatches(conv(Ramp({2, 4, 5, 5})), "conv.out");
  EXPECT_FALSE(conv(Ramp({2, 3, 5, 5})).ok());  // 3 channels for 4

  Tensor::ManualSeed(2);
  Conv2dOptions same;
  same.same_padding = true;
  same.dilation = {2};
  same.bias = false;
  Conv2d conv_same(2, 3, {3, 2}, same);
  EXPECT_THAT(Names(conv_same), ElementsAre("weight"));
  ExpectMatches(conv_same(Ramp({1, 2, 6, 5}, 0.03)), "conv_same.out");
  Conv2dOptions strided_same = same;
  strided_same.stride = {2};
  EXPECT_THAT(std::string(Conv2d(2, 3, {3}, strided_same)(Ramp({1, 2, 6, 5})).status().message()),
              HasSubstr("strided"));
}

TEST(LayersTest, ConvTranspose2dMatchesTinygrad) {
  Tensor::ManualSeed(3);
  Conv2dOptions options;
  options.stride = {2};
  options.padding = {1};
  options.groups = 2;
  ConvTranspose2d convt(4, 6, {3}, options, {1});
  EXPECT_EQ(convt.weight.Shape(), (Dims{4, 3, 3, 3}));
  ExpectMatches(convt.weight, "convt.weight");
  ExpectMatches(*convt.bias, "convt.bias");
  ExpectMatches(convt(Ramp({2, 4, 3, 3})), "convt.out");

  Tensor::ManualSeed(4);
  Conv2dOptions rect;
  rect.stride = {1, 2};
  rect.dilation = {2, 1};
  rect.bias = false;
  ConvTranspose2d convt2(2, 3, {2, 3}, rect);
  ExpectMatches(convt2(Ramp({1, 2, 4, 3}, 0.05)), "convt2.out");
}

// out[n, g*cog + o, y, x] = sum over ci in group g, ky, kx with y = iy*stride - pad + ky (likewise x) of
// in[n, g*cig + ci, iy, ix] * w[g*cig + ci, o, ky, kx]: the definition, loop by loop.
std::vector<float> NaiveConvTranspose(const std::vector<float>& in, const Dims& in_shape,
                                      const std::vector<float>& w, const Dims& w_shape, int64_t stride,
                                      int64_t pad, int64_t groups, int64_t out_h, int64_t out_w) {
  const int64_t n = in_shape[0], cin = in_shape[1], h = in_shape[2], wd = in_shape[3];
  const int64_t cog = w_shape[1], k = w_shape[2], cig = cin / groups;
  std::vector<float> out(n * groups * cog * out_h * out_w, 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t c = 0; c < cin; ++c)
      for (int64_t iy = 0; iy < h; ++iy)
        for (int64_t ix = 0; ix < wd; ++ix)
          for (int64_t o = 0; o < cog; ++o)
            for (int64_t ky = 0; ky < k; ++ky)
              for (int64_t kx = 0; kx < k; ++kx) {
                const int64_t y = iy * stride - pad + ky, x = ix * stride - pad + kx;
                if (y < 0 || y >= out_h || x < 0 || x >= out_w) continue;
                const int64_t oc = c / cig * cog + o;
                out[((b * groups * cog + oc) * out_h + y) * out_w + x] +=
                    in[((b * cin + c) * h + iy) * wd + ix] * w[((c * cog + o) * k + ky) * k + kx];
              }
  return out;
}

// The stride-2 transposed convolutions of the scale corpus, smaller: their odd taps' loads are dropped by a
// valid clause folded with floor division (rewrite/valid.h) and grouped ones gate taps with a mask; the
// values must still be the definition's.
TEST(LayersTest, StridedConvTransposeIsTheDefinition) {
  struct Case {
    Dims x, w;
    int64_t stride, pad, groups;
  };
  for (const Case& c :
       {Case{{1, 4, 14, 14}, {4, 2, 4, 4}, 2, 1, 1}, Case{{1, 8, 14, 14}, {8, 2, 3, 3}, 2, 0, 4},
        Case{{1, 2, 9, 9}, {2, 3, 5, 5}, 3, 2, 1}}) {
    SCOPED_TRACE(c.w[2]);
    Tensor x = Ramp(c.x, 0.013, -0.7).Sin(), w = Ramp(c.w, 0.021, -0.4).Cos();
    ConvOptions options{.groups = c.groups, .stride = {c.stride}, .padding = {c.pad}};
    Tensor y = x.ConvTranspose2d(w, nullptr, options);
    ASSERT_TRUE(y.ok()) << y.status();
    const Dims shape = y.Shape();
    absl::StatusOr<std::vector<float>> got = y.ToVector<float>();
    absl::StatusOr<std::vector<float>> xs = x.ToVector<float>(), ws = w.ToVector<float>();
    ASSERT_TRUE(got.ok() && xs.ok() && ws.ok());
    std::vector<float> want =
        NaiveConvTranspose(*xs, c.x, *ws, c.w, c.stride, c.pad, c.groups, shape[2], shape[3]);
    ASSERT_EQ(got->size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) ASSERT_NEAR((*got)[i], want[i], 1e-4) << i;
  }
}

TEST(LayersTest, BatchNormMatchesTinygradInTrainingAndEval) {
  BatchNorm bn(3);
  EXPECT_THAT(Names(bn), ElementsAre("weight", "bias", "num_batches_tracked", "running_mean", "running_var"));
  Tensor x = Ramp({4, 3, 2, 2}, 0.1) * Ramp({4, 3, 2, 2}, 0.02, -0.3);
  ASSERT_TRUE(x.Realize().ok());
  EXPECT_FALSE(Tensor::Training());
  {
    Tensor::Train train;
    EXPECT_TRUE(Tensor::Training());
    ExpectMatches(bn(x), "bn.train_out");
    ASSERT_TRUE(Tensor::RealizeAll({*bn.running_mean, *bn.running_var, bn.num_batches_tracked}).ok());
    ExpectMatches(bn(x + 1), "bn.train_out2");
  }
  EXPECT_FALSE(Tensor::Training());
  ExpectMatches(*bn.running_mean, "bn.running_mean");
  ExpectMatches(*bn.running_var, "bn.running_var");
  ExpectMatches(bn.num_batches_tracked, "bn.num_batches_tracked");
  ExpectMatches(bn(x), "bn.eval_out");
  EXPECT_FALSE(bn(Ramp({2, 4, 2})).ok());
  EXPECT_FALSE(bn(Ramp({3})).ok());
  BatchNormOptions no_affine;
  no_affine.affine = false;
  no_affine.track_running_stats = false;
  BatchNorm plain(2, no_affine);
  EXPECT_THAT(Names(plain), ElementsAre("num_batches_tracked"));
  EXPECT_EQ(plain(Ramp({3, 2})).Shape(), (Dims{3, 2}));
}

TEST(LayersTest, NormsMatchTinygrad) {
  LayerNorm ln({2, 3});
  ExpectMatches(ln(Ramp({2, 2, 3}, 0.3).Square()), "layernorm.out");
  EXPECT_THAT(std::string(ln(Ramp({2, 3, 2})).status().message()), HasSubstr("must be (2, 3)"));
  GroupNorm gn(2, 4);
  ExpectMatches(gn(Ramp({2, 4, 3}, 0.07).Exp()), "groupnorm.out");
  EXPECT_EQ(gn(Ramp({2, 4, 3, 5})).Shape(), (Dims{2, 4, 3, 5}));
  RMSNorm rms(5);
  ExpectMatches(rms(Ramp({2, 5}, 0.2)), "rmsnorm.out");
  // Normalized in float32 and cast back; the float32 weight then promotes, as in tinygrad.
  EXPECT_EQ(rms(Ramp({2, 5}).Half()).dtype(), dtypes::kFloat32);
  EXPECT_THAT(Names(rms), ElementsAre("weight"));
  EXPECT_THAT(Names(LayerNorm({4}, 1e-5, false)), ElementsAre());
}

TEST(LayersTest, Conv1dMatchesTinygrad) {
  Tensor::ManualSeed(7);
  Conv2dOptions options;
  options.stride = {2};
  options.padding = {1};
  options.groups = 2;
  Conv2d conv = Conv1d(4, 6, 3, options);
  EXPECT_EQ(conv.weight.Shape(), (Dims{6, 2, 3}));
  ExpectMatches(conv.weight, "conv1d.weight");
  ExpectMatches(*conv.bias, "conv1d.bias");
  ExpectMatches(conv(Ramp({2, 4, 7})), "conv1d.out");
  EXPECT_THAT(Names(conv), ElementsAre("weight", "bias"));
  EXPECT_FALSE(conv(Ramp({2, 3, 7})).ok());  // 3 channels for 4
  EXPECT_THAT(std::string(conv(Ramp({2, 4, 7, 7})).status().message()),
              HasSubstr("3 axes, not (2, 4, 7, 7)"));
  EXPECT_THAT(std::string(Conv2d(4, 6, {3})(Ramp({2, 4, 7})).status().message()), HasSubstr("4 axes"));
}

TEST(LayersTest, ConvTranspose1dMatchesTinygrad) {
  Tensor::ManualSeed(8);
  Conv2dOptions options;
  options.stride = {2};
  options.padding = {1};
  options.dilation = {2};
  options.groups = 2;
  ConvTranspose2d convt = ConvTranspose1d(4, 6, 3, options, 1);
  EXPECT_EQ(convt.weight.Shape(), (Dims{4, 3, 3}));
  ExpectMatches(convt.weight, "convt1d.weight");
  ExpectMatches(*convt.bias, "convt1d.bias");
  ExpectMatches(convt(Ramp({2, 4, 5}, 0.05)), "convt1d.out");
  EXPECT_FALSE(convt(Ramp({2, 3, 5})).ok());
  EXPECT_THAT(std::string(convt(Ramp({2, 4})).status().message()), HasSubstr("3 axes"));
}

TEST(LayersTest, InstanceNormAndLayerNorm2dMatchTinygrad) {
  InstanceNorm in(3);
  EXPECT_THAT(Names(in), ElementsAre("weight", "bias"));
  ExpectMatches(in(Ramp({2, 3, 2, 3}, 0.09).Exp()), "instancenorm.out");
  InstanceNorm plain(3, 1e-5, false);
  EXPECT_THAT(Names(plain), ElementsAre());
  ExpectMatches(plain(Ramp({2, 3, 4}, 0.11).Square()), "instancenorm.out1d");
  EXPECT_THAT(std::string(in(Ramp({2, 4, 3})).status().message()), HasSubstr("4 channels, the layer 3"));
  EXPECT_FALSE(in(Ramp({3})).ok());

  LayerNorm2d ln(3);
  EXPECT_THAT(Names(ln), ElementsAre("weight", "bias"));
  ExpectMatches(ln(Ramp({2, 3, 2, 2}, 0.13).Square()), "layernorm2d.out");
  EXPECT_THAT(std::string(ln(Ramp({2, 3, 2})).status().message()), HasSubstr("(N, C, H, W)"));
  EXPECT_THAT(std::string(ln(Ramp({2, 4, 2, 2})).status().message()), HasSubstr("4 channels, the layer 3"));
}

TEST(LayersTest, LSTMCellMatchesTinygrad) {
  Tensor::ManualSeed(9);
  LSTMCell lstm(3, 2);
  EXPECT_THAT(Names(lstm), ElementsAre("weight_ih", "weight_hh", "bias_ih", "bias_hh"));
  ExpectMatches(lstm.weight_ih, "lstm.weight_ih");
  ExpectMatches(lstm.weight_hh, "lstm.weight_hh");
  auto [h, c] = lstm(Ramp({4, 3}, 0.2));
  ExpectMatches(h, "lstm.h");
  ExpectMatches(c, "lstm.c");
  auto [h2, c2] = lstm(Ramp({4, 3}, 0.1, 0.3), std::make_pair(h, c));
  ExpectMatches(h2, "lstm.h2");
  ExpectMatches(c2, "lstm.c2");
  EXPECT_THAT(Names(LSTMCell(3, 2, false)), ElementsAre("weight_ih", "weight_hh"));

  auto [bad_h, bad_c] = lstm(Ramp({4, 5}));
  EXPECT_THAT(std::string(bad_h.status().message()), HasSubstr("(batch, 3)"));
  EXPECT_FALSE(bad_c.ok());
  EXPECT_FALSE(lstm(Ramp({3})).first.ok());
  auto [state_h, state_c] = lstm(Ramp({4, 3}), std::make_pair(Ramp({4, 3}), c));
  EXPECT_THAT(std::string(state_h.status().message()), HasSubstr("state must be (4, 2)"));
}

TEST(LayersTest, EmbeddingMatchesTinygrad) {
  Tensor::ManualSeed(5);
  Embedding emb(10, 3);
  ExpectMatches(emb.weight, "embedding.weight");
  ExpectMatches(emb(Tensor::Literal(std::vector<int64_t>{1, 2, 9, 0, 2, 2}, Dims{3, 2})), "embedding.out");
  EXPECT_EQ(emb(Tensor::Literal(std::vector<int64_t>{4})).Shape(), (Dims{1, 3}));
}

TEST(LayersTest, InitialisersMatchTinygrad) {
  Tensor::ManualSeed(6);
  ExpectMatches(GlorotUniform({3, 4}), "init.glorot");
  ExpectMatches(KaimingUniform({3, 4, 2}), "init.kaiming");
  ExpectMatches(ScaledUniform({2, 3}), "init.scaled");
}

// A model of layers: names are paths, LoadStateDict replaces values and checks keys and shapes.
struct Net : Module {
  Linear l1{3, 4};
  std::vector<Linear> heads{Linear(4, 2), Linear(4, 2, false)};
  BatchNorm bn{4};
  void CollectState(StateCollector& state) const override {
    state.Add("l1", l1);
    state.AddList("heads", heads);
    state.Add("bn", bn);
  }
};

TEST(StateTest, StateDictNamesFollowTheModel) {
  Net net;
  EXPECT_THAT(Names(net), ElementsAre("l1.weight", "l1.bias", "heads.0.weight", "heads.0.bias",
                                      "heads.1.weight", "bn.weight", "bn.bias", "bn.num_batches_tracked",
                                      "bn.running_mean", "bn.running_var"));
  EXPECT_EQ(GetParameters(net).size(), 10u);
  StateDict prefixed = GetStateDict(net, "model");
  EXPECT_TRUE(prefixed.Contains("model.l1.weight"));
  // The entries are the model's own tensors.
  EXPECT_TRUE(GetStateDict(net).Find("l1.weight")->Is(net.l1.weight));
}

TEST(StateTest, LoadStateDictReplacesValuesAndChecksKeys) {
  Net source, target;
  StateDict state = GetStateDict(source);
  ASSERT_TRUE(LoadStateDict(target, state).ok());
  EXPECT_EQ(*target.l1.weight.ToVector<float>(), *source.l1.weight.ToVector<float>());

  StateDict partial;
  for (const auto& [name, t] : state) {
    if (name != "l1.bias") partial.Set(name, t);
  }
  partial.Set("extra", Tensor::Zeros({1}));
  partial.Set("heads.0.weight", Tensor::Zeros({4, 2}));
  absl::Status status = LoadStateDict(target, partial);
  EXPECT_THAT(std::string(status.message()), HasSubstr("missing keys: l1.bias"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("unexpected keys: extra"));
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("\"heads.0.weight\" is (4, 2) in the state dict but (2, 4) in the model"));
  // Not strict: missing and unexpected keys pass, a shape mismatch does not.
  partial.Set("heads.0.weight", Tensor::Zeros({2, 4}));
  LoadOptions lenient;
  lenient.strict = false;
  ASSERT_TRUE(LoadStateDict(target, partial, lenient).ok());
  EXPECT_EQ(*target.heads[0].weight.ToVector<float>(), std::vector<float>(8, 0.0f));
}

}  // namespace
}  // namespace uopc::nn
