// tinygrad's random tensors (RandLike, RandnLike, Randperm, KaimingNormal, Dropout in training and eval mode,
// Multinomial) and Clone and ConstLike build the graphs tinygrad v0.10.3 builds and, after the same
// ManualSeed, compute its values on CPU (tensor/testdata/api_random_graphs.jsonl, from
// harvest_api_random.py); NoGrad() turns Backward off; bad input is an error.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "tensor/testing/harvested_values.h"

namespace uopc {
namespace {

using ::testing::HasSubstr;

constexpr DType f = dtypes::kFloat32;
constexpr DType i32 = dtypes::kInt32;

// The program `build` builds right after ManualSeed(0), as the harvest script runs every program.
std::function<std::vector<Tensor>()> Seeded(std::function<std::vector<Tensor>()> build) {
  return [build] {
    Tensor::ManualSeed(0);
    return build();
  };
}
std::function<std::vector<Tensor>()> Seeded(std::function<Tensor()> build) {
  return Seeded([build] { return std::vector<Tensor>{build()}; });
}

// Seeded(build), built in training mode.
std::function<std::vector<Tensor>()> SeededInTraining(std::function<Tensor()> build) {
  return Seeded([build] {
    Tensor::Train train;
    return build();
  });
}

const std::map<std::string, std::function<std::vector<Tensor>()>>& Programs() {
  static const auto* programs = new std::map<std::string, std::function<std::vector<Tensor>()>>{
      {"rand_like", Seeded([] {
         return R({2, 3}).RandLike();
       })},
      {"rand_like_half", Seeded([] {
         return R({3, 5}).RandLike(dtypes::kFloat16).Float();
       })},
      {"rand_like_twice", Seeded([] {
         Tensor first = R({2, 3}).RandLike();
         return std::vector<Tensor>{first, R({4}).RandLike()};
       })},
      {"randn_like", Seeded([] {
         return R({2, 3}).RandnLike();
       })},
      {"randn_like_int_to_float", Seeded([] {
         return R({4, 3}, i32).RandnLike(f);
       })},
      {"randperm", Seeded([] { return Tensor::Randperm(8); })},
      {"kaiming_normal", Seeded([] {
         return Tensor::KaimingNormal({4, 3, 2});
       })},
      {"kaiming_normal_a", Seeded([] {
         return Tensor::KaimingNormal({3, 5}, 0.2);
       })},
      {"dropout_eval", Seeded([] {
         return R({3, 4}).Dropout();
       })},
      {"dropout_training", SeededInTraining([] {
         return R({3, 4}).Dropout();
       })},
      {"dropout_training_p", SeededInTraining([] {
         return R({4, 5}).Dropout(0.25);
       })},
      {"dropout_training_zero", SeededInTraining([] {
         return R({3, 4}).Dropout(0.0);
       })},
      {"dropout_training_int", SeededInTraining([] {
         return R({2, 5}, i32).Dropout(0.3);
       })},
      {"multinomial", Seeded([] { return R({5}).Abs().Multinomial(); })},
      {"multinomial_replacement", Seeded([] { return R({6}).Abs().Multinomial(10, true); })},
      {"multinomial_2d", Seeded([] {
         return R({3, 4}).Abs().Multinomial(6, true);
       })},
      {"multinomial_int", Seeded([] {
         return R({2, 5}, i32).Abs().Multinomial(3, true);
       })},
      {"clone_unrealized", Seeded([] {
         return (R({2, 3}) + 1).Clone();
       })},
      {"const_like", Seeded([] {
         return R({2, 3}).ConstLike(2.5);
       })},
      {"const_like_int", Seeded([] {
         return R({2, 3}, i32).ConstLike(7);
       })},
  };
  return *programs;
}

TEST(ApiRandomTest, GraphsAndValuesAreTinygrads) {
  ExpectHarvestedPrograms("tensor/testdata/api_random_graphs.jsonl", Programs());
}

TEST(ApiRandomTest, TrainingModeDecidesDropout) {
  Tensor x = R({3, 4});
  EXPECT_TRUE(x.Dropout().Is(x));
  {
    Tensor::Train train;
    EXPECT_FALSE(x.Dropout().Is(x));
    EXPECT_TRUE(x.Dropout(0.0).Is(x));
    Tensor::Train eval(false);
    EXPECT_TRUE(x.Dropout().Is(x));
  }
  EXPECT_FALSE(Tensor::Training());
}

TEST(ApiRandomTest, CloneKeepsRequiresGradAndClonesTheGrad) {
  Tensor w = R({2, 3}).RequiresGrad();
  ASSERT_TRUE((w * w).Sum().Backward().ok());
  Tensor copy = w.Clone();
  EXPECT_EQ(copy.requires_grad(), std::optional<bool>(true));
  ASSERT_TRUE(copy.Grad().has_value());
  EXPECT_FALSE(copy.Grad()->Is(*w.Grad()));
  absl::StatusOr<std::vector<float>> grad = copy.Grad()->ToVector<float>(),
                                     expected = w.Grad()->ToVector<float>();
  ASSERT_TRUE(grad.ok() && expected.ok());
  EXPECT_EQ(*grad, *expected);
  EXPECT_EQ(R({2}).Clone().requires_grad(), std::nullopt);
  EXPECT_FALSE(R({2}).Clone().Grad().has_value());
}

TEST(ApiRandomTest, NoGradTurnsBackwardOff) {
  EXPECT_FALSE(Tensor::NoGrad());
  Tensor w = R({2, 3}).RequiresGrad();
  {
    Tensor::NoGradScope no_grad;
    EXPECT_TRUE(Tensor::NoGrad());
    ASSERT_TRUE((w * 2).Sum().Backward().ok());
    EXPECT_FALSE(w.Grad().has_value());
    // Backward still checks its input, as tinygrad's does.
    EXPECT_FALSE((w * 2).Backward().ok());
    Tensor::NoGradScope with_grad(false);
    EXPECT_FALSE(Tensor::NoGrad());
  }
  EXPECT_FALSE(Tensor::NoGrad());
  ASSERT_TRUE((w * 2).Sum().Backward().ok());
  EXPECT_TRUE(w.Grad().has_value());
}

std::string Message(const Tensor& t) {
  EXPECT_FALSE(t.ok());
  return std::string(t.status().message());
}

TEST(ApiRandomErrorTest, RefusesBadInput) {
  EXPECT_THAT(Message(R({2, 3}, i32).RandLike()), HasSubstr("float dtypes"));
  EXPECT_THAT(Message(Tensor::Randperm(-1)), HasSubstr("must not be negative"));
  EXPECT_THAT(Message(Tensor::Randperm(0)), HasSubstr("size 0"));  // tinygrad fails too (math domain error)
  EXPECT_THAT(Message(Tensor::KaimingNormal({3, 0})), HasSubstr("positive product"));
  EXPECT_THAT(Message(R({3}).Dropout(1.0)), HasSubstr("p must be in [0, 1)"));
  EXPECT_THAT(Message(R({3}).Dropout(-0.5)), HasSubstr("p must be in [0, 1)"));
  EXPECT_THAT(Message(R({2, 2, 2}).Multinomial()), HasSubstr("1 or 2 axes"));
  EXPECT_THAT(Message(Tensor::Const(1.0).Multinomial()), HasSubstr("1 or 2 axes"));
  EXPECT_THAT(Message(R({4}).Multinomial(0, true)), HasSubstr("num_samples must be positive"));
  EXPECT_THAT(Message(R({4}).Multinomial(2)), HasSubstr("only one sample"));
  EXPECT_THAT(Message(Tensor::Zeros({2, 0}).Multinomial()), HasSubstr("no classes"));
  // An errored operand's error is passed on.
  Tensor bad = R({3}).Reshape({2});
  for (const Tensor& t :
       {bad.RandLike(), bad.RandnLike(), bad.Dropout(), bad.Multinomial(), bad.Clone(), bad.ConstLike(1)}) {
    EXPECT_EQ(t.status(), bad.status());
  }
}

}  // namespace
}  // namespace uopc
