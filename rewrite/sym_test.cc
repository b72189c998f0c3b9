// Rules of `sym` beyond the arithmetic ones (the corpus tests cover those): sinks, vectors, self folding.
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/symbolic.h"
#include "uop/uop.h"

namespace uopc {
namespace {

class SymTest : public ::testing::Test {
 protected:
  UOpPtr a = UOp::Variable("a", 0, 10);
  UOpPtr b = UOp::Variable("b", 0, 10);
  UOpPtr c = UOp::Variable("c", 0, 10);
  UOpPtr noop = UOp::New(Ops::NOOP);
};

TEST_F(SymTest, SinksDropNoops) {
  EXPECT_EQ(GraphRewrite(UOp::Sink({a, noop, b, noop}), Sym()), UOp::Sink({a, b}));
  UOpPtr plain = UOp::Sink({a, b});
  EXPECT_EQ(GraphRewrite(plain, Sym()), plain);
}

TEST_F(SymTest, SinksFlattenNestedSinksAndUnrolls) {
  UOpPtr unroll = UOp::New(Ops::UNROLL, dtypes::kVoid, {b, c});
  EXPECT_EQ(GraphRewrite(UOp::Sink({UOp::Sink({a, b}), c}), Sym()), UOp::Sink({a, b, c}));
  EXPECT_EQ(GraphRewrite(UOp::Sink({a, unroll}), Sym()), UOp::Sink({a, b, c}));
}

TEST_F(SymTest, LargeSinksAreLeftAloneWhenNothingApplies) {
  std::vector<UOpPtr> many;
  for (int i = 0; i < 20000; ++i) many.push_back(UOp::Variable("v" + std::to_string(i), 0, i + 1));
  UOpPtr sink = UOp::Sink(many);
  EXPECT_EQ(GraphRewrite(sink, Sym()), sink);
  many.push_back(noop);
  EXPECT_EQ(GraphRewrite(UOp::Sink(many), Sym()), sink);
}

}  // namespace
}  // namespace uopc
