// The optimizers against tinygrad v0.10.3: the optimizer lines of the corpus's grad_programs.jsonl (copied to
// testdata/optimizer_steps.jsonl; format in the corpus README, section 8), four steps each, on CPU and
// INTERP.
#include "nn/optim.h"

#include <cmath>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "runtime/corpus_values.h"

namespace uopc::nn {
namespace {

using ::testing::HasSubstr;

// The corpus's R(shape, seed): element j is value(float32, seed + 1, j), realized on `device`.
Tensor R(const Dims& shape, int seed, const std::string& device) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return Tensor::FromBytes(CorpusInputBytes(dtypes::kFloat32, seed + 1, n), shape, dtypes::kFloat32, device);
}

// A scaled R, realized as the leaf parameter tinygrad trains.
Tensor Param(const Dims& shape, int seed, double scale, const std::string& device) {
  Tensor t = (R(shape, seed, device) * scale).Contiguous();
  EXPECT_TRUE(t.Realize().ok());
  return t;
}

std::unique_ptr<Optimizer> MakeOptimizer(const std::string& name, const std::vector<Tensor>& params) {
  if (name == "sgd") return std::make_unique<SGD>(params, SGDOptions{.lr = 0.1});
  if (name == "sgd_momentum_nesterov_wd") {
    return std::make_unique<SGD>(
        params, SGDOptions{.lr = 0.05, .momentum = 0.9, .weight_decay = 0.01, .nesterov = true});
  }
  if (name == "adam") return std::make_unique<Adam>(params, AdamOptions{.lr = 0.01});
  if (name == "adamw") return std::make_unique<AdamW>(params, AdamWOptions{.lr = 0.01, .weight_decay = 0.1});
  // The extra lines (testdata/harvest_optimizers.py).
  if (name == "lars") return std::make_unique<LARS>(params, LARSOptions{.lr = 0.1});
  if (name == "lars_nesterov_modern") {
    return std::make_unique<LARS>(
        params,
        LARSOptions{.lr = 0.1, .momentum = 0.8, .weight_decay = 0.01, .nesterov = true, .classic = false});
  }
  if (name == "lamb") return std::make_unique<LAMB>(params, LAMBOptions{.lr = 0.01, .weight_decay = 0.05});
  return nullptr;
}

bool Close(double got, double want) { return std::abs(got - want) <= 1e-3 + 1e-3 * std::abs(want); }

// One optimizer line on one device.
struct StepsCase {
  std::string file, optimizer, device;
};

std::vector<StepsCase> Cases() {
  std::vector<StepsCase> cases;
  for (const char* device : {"CPU", "INTERP"}) {
    for (const char* file :
         {"nn/testdata/optimizer_steps.jsonl", "nn/testdata/optimizer_steps_extra.jsonl"}) {
      std::ifstream in(file);
      std::string line;
      while (std::getline(in, line)) {
        cases.push_back({file, nlohmann::json::parse(line)["optimizer"].get<std::string>(), device});
      }
    }
  }
  return cases;
}

nlohmann::json Line(const StepsCase& c) {
  std::ifstream in(c.file);
  std::string line;
  while (std::getline(in, line)) {
    nlohmann::json program = nlohmann::json::parse(line);
    if (program["optimizer"] == c.optimizer) return program;
  }
  return nullptr;
}

class OptimizerStepsTest : public ::testing::TestWithParam<StepsCase> {};

TEST_P(OptimizerStepsTest, ReproducesTinygradsSteps) {
  const std::string& device = GetParam().device;
  const nlohmann::json program = Line(GetParam());
  ASSERT_FALSE(program.is_null());
  Tensor x = R({8, 5}, 0, device);
  Tensor y = Tensor::Literal(std::vector<int64_t>{0, 2, 1, 1, 0, 2, 2, 1}, std::nullopt, device);
  Tensor w1 = Param({5, 6}, 1, 0.5, device), b1 = Param({6}, 2, 0.1, device),
         w2 = Param({6, 3}, 3, 0.5, device);
  std::unique_ptr<Optimizer> opt = MakeOptimizer(GetParam().optimizer, {w1, b1, w2});
  ASSERT_NE(opt, nullptr) << "no optimizer for " << GetParam().optimizer;
  ASSERT_TRUE(opt->status().ok()) << opt->status();
  Tensor::Train train;
  int step = 0;
  ASSERT_EQ(program["steps"].size(), 4u);
  for (const nlohmann::json& want : program["steps"]) {
    SCOPED_TRACE("step " + std::to_string(step++));
    opt->ZeroGrad();
    Tensor loss = (x.Matmul(w1) + b1).Relu().Matmul(w2).SparseCategoricalCrossentropy(y);
    ASSERT_TRUE(loss.Backward().ok());
    // The loss and the step in one schedule: the loss reads the parameters before the step writes them.
    absl::StatusOr<std::vector<Tensor>> update = opt->ScheduleStep();
    ASSERT_TRUE(update.ok()) << update.status();
    std::vector<Tensor> all = {loss};
    all.insert(all.end(), update->begin(), update->end());
    ASSERT_TRUE(Tensor::RealizeAll(all).ok());
    absl::StatusOr<float> got_loss = loss.Item<float>();
    ASSERT_TRUE(got_loss.ok()) << got_loss.status();
    EXPECT_TRUE(Close(*got_loss, want["loss"].get<double>())) << *got_loss << " vs " << want["loss"];
    const Tensor params[] = {w1, b1, w2};
    for (int p = 0; p < 3; ++p) {
      absl::StatusOr<std::vector<float>> got = params[p].ToVector<float>();
      ASSERT_TRUE(got.ok()) << got.status();
      std::vector<double> values = want["params"][p].get<std::vector<double>>();
      ASSERT_EQ(got->size(), values.size());
      for (size_t k = 0; k < values.size(); ++k) {
        EXPECT_TRUE(Close((*got)[k], values[k]))
            << "param " << p << " element " << k << ": " << (*got)[k] << " vs " << values[k];
      }
    }
  }
}

TEST(OptimizerStepsCorpusTest, HasEveryLine) {
  // The corpus's four on two devices, and the extra LARS and LAMB lines.
  std::vector<StepsCase> cases = Cases();
  int corpus = 0;
  for (const StepsCase& c : cases) corpus += c.file == "nn/testdata/optimizer_steps.jsonl";
  EXPECT_EQ(corpus, 8);
  EXPECT_EQ(cases.size(), 14u);
}

INSTANTIATE_TEST_SUITE_P(Lines, OptimizerStepsTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<StepsCase>& info) {
                           return info.param.optimizer + "_" + info.param.device;
                         });

// The other two optimizers step and change the parameters (the corpus has no lines for them).
TEST(OptimizerTest, LarsAndLambStep) {
  for (int which = 0; which < 2; ++which) {
    Tensor w = Tensor::FromVector<float>({1, -2, 3, 0.5}, {2, 2}, dtypes::kFloat32, "INTERP");
    std::unique_ptr<Optimizer> opt;
    if (which == 0)
      opt = std::make_unique<LARS>(std::vector<Tensor>{w}, LARSOptions{.lr = 0.1});
    else
      opt = std::make_unique<LAMB>(std::vector<Tensor>{w}, LAMBOptions{.lr = 0.1});
    Tensor::Train train;
    Tensor loss = (w * w).Sum();
    ASSERT_TRUE(loss.Backward().ok());
    ASSERT_TRUE(opt->Step().ok());
    std::vector<float> after = *w.ToVector<float>();
    // Both move every weight towards 0, the minimum of the loss.
    const float before[] = {1, -2, 3, 0.5};
    for (int i = 0; i < 4; ++i) EXPECT_LT(std::abs(after[i]), std::abs(before[i])) << which << " " << i;
  }
}

TEST(OptimizerTest, ErrorsAreClear) {
  Tensor w = Tensor::FromVector<float>({1, 2}, {2}, dtypes::kFloat32, "INTERP");
  SGD opt({w}, {.lr = 0.1});
  EXPECT_EQ(w.requires_grad(), std::optional<bool>(true));  // an unset flag is set, as tinygrad does
  // Outside training mode.
  EXPECT_THAT(std::string(opt.Step().message()), HasSubstr("Train"));
  Tensor::Train train;
  // No gradient yet.
  EXPECT_THAT(std::string(opt.Step().message()), HasSubstr("has no gradient"));
  // Buffers (requires_grad false) are not updated; with none that want gradients the optimizer is an error.
  Tensor frozen = Tensor::Zeros({2}, dtypes::kFloat32, "INTERP").RequiresGrad(false);
  SGD none({frozen});
  EXPECT_FALSE(none.status().ok());
  SGD mixed({w, frozen, w});
  EXPECT_EQ(mixed.params().size(), 1u);
  EXPECT_EQ(mixed.buffers().size(), 1u);
}

// A group steps each of its optimizers exactly as stepping them alone does, in one realize.
TEST(OptimizerGroupTest, StepsEachOptimizerAsAlone) {
  auto weights = [] {
    return std::vector<Tensor>{Tensor::FromVector<float>({1, -2, 3, 0.5}, {2, 2}, dtypes::kFloat32, "INTERP"),
                               Tensor::FromVector<float>({0.25, -1.5}, {2}, dtypes::kFloat32, "INTERP")};
  };
  auto loss_of = [](const std::vector<Tensor>& w) {
    return (w[0] * w[0]).Sum() + (w[1] * w[1] * w[1]).Sum();
  };
  constexpr int kSteps = 3;
  // The optimizers alone first, to the end: as in tinygrad, two optimizers built while neither has stepped
  // share their zero-initialised state when their parameters have the same shapes (the state tensors are the
  // same graph), so the two runs must not overlap.
  std::vector<std::vector<std::vector<float>>> want(kSteps);
  {
    std::vector<Tensor> w = weights();
    SGD sgd({w[0]}, {.lr = 0.1, .momentum = 0.9});
    Adam adam({w[1]}, {.lr = 0.01});
    Tensor::Train train;
    for (int step = 0; step < kSteps; ++step) {
      sgd.ZeroGrad();
      adam.ZeroGrad();
      ASSERT_TRUE(loss_of(w).Backward().ok());
      ASSERT_TRUE(sgd.Step().ok());
      ASSERT_TRUE(adam.Step().ok());
      for (const Tensor& t : w) want[step].push_back(*t.ToVector<float>());
    }
  }
  std::vector<Tensor> w = weights();
  SGD sgd({w[0]}, {.lr = 0.1, .momentum = 0.9});
  Adam adam({w[1]}, {.lr = 0.01});
  OptimizerGroup group({&sgd, &adam});
  ASSERT_TRUE(group.status().ok()) << group.status();
  EXPECT_EQ(group.size(), 2u);
  EXPECT_EQ(&group[1], &adam);
  ASSERT_EQ(group.params().size(), 2u);
  EXPECT_TRUE(group.params()[0].Is(w[0]));
  EXPECT_TRUE(group.params()[1].Is(w[1]));
  EXPECT_FALSE(group.lr().ok());  // no single learning rate
  Tensor::Train train;
  for (int step = 0; step < kSteps; ++step) {
    Optimizer& whole = group;  // through the base class, as a training loop holds it
    whole.ZeroGrad();
    EXPECT_FALSE(w[0].Grad().has_value());
    EXPECT_FALSE(w[1].Grad().has_value());
    ASSERT_TRUE(loss_of(w).Backward().ok());
    absl::StatusOr<std::vector<Tensor>> update = whole.ScheduleStep();
    ASSERT_TRUE(update.ok()) << update.status();
    // SGD's momentum buffer and parameter, Adam's b1^t, b2^t, m, v and parameter.
    EXPECT_EQ(update->size(), 7u);
    ASSERT_TRUE(Tensor::RealizeAll(*update).ok());
    for (int p = 0; p < 2; ++p)
      EXPECT_EQ(*w[p].ToVector<float>(), want[step][p]) << "step " << step << " " << p;
  }
  EXPECT_NE(*w[0].ToVector<float>(), *weights()[0].ToVector<float>());  // it did train
}

TEST(OptimizerGroupTest, ErrorsAreClear) {
  Tensor w = Tensor::FromVector<float>({1, 2}, {2}, dtypes::kFloat32, "INTERP");
  SGD sgd({w});
  OptimizerGroup with_null({&sgd, nullptr});
  EXPECT_THAT(std::string(with_null.status().message()), HasSubstr("optimizer 1 is null"));
  EXPECT_THAT(std::string(with_null.Step().message()), HasSubstr("optimizer 1 is null"));
  SGD none({Tensor::Zeros({2}, dtypes::kFloat32, "INTERP").RequiresGrad(false)});
  EXPECT_THAT(std::string(OptimizerGroup({&sgd, &none}).status().message()),
              HasSubstr("optimizer 1: optimizer: no parameter wants a gradient"));
  OptimizerGroup group({&sgd});
  EXPECT_THAT(std::string(group.Step().message()),
              HasSubstr("optimizer 0: optimizer step: Tensor::Training()"));
  // An empty group steps nothing, as tinygrad's.
  OptimizerGroup empty({});
  EXPECT_TRUE(empty.status().ok());
  Tensor::Train train;
  EXPECT_TRUE(empty.Step().ok());
}

}  // namespace
}  // namespace uopc::nn
