// Rules of `sym` beyond the arithmetic ones (the corpus tests cover those): sinks, vectors, self folding.
#include <pthread.h>

#include <functional>
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

// tinygrad's cast folding takes a VCONST too (UPat.cvar matches both), and casts it lane by lane.
TEST_F(SymTest, CastOfAVectorConstantFoldsLaneByLane) {
  const DType int2 = dtypes::kInt32.Vec(2), float2 = dtypes::kFloat32.Vec(2);
  UOpPtr lanes = UOp::VConst(int2, {ConstValue::Int(5), ConstValue::Int(-2)});
  EXPECT_EQ(GraphRewrite(lanes.cast(float2), Sym()),
            UOp::VConst(float2, {ConstValue::Float(5.0), ConstValue::Float(-2.0)}));
  EXPECT_EQ(GraphRewrite(lanes.cast(dtypes::kUInt8.Vec(2)), Sym()),
            UOp::VConst(dtypes::kUInt8.Vec(2), {ConstValue::Int(5), ConstValue::Int(254)}));
}

TEST_F(SymTest, LargeSinksAreLeftAloneWhenNothingApplies) {
  std::vector<UOpPtr> many;
  for (int i = 0; i < 20000; ++i) many.push_back(UOp::Variable("v" + std::to_string(i), 0, i + 1));
  UOpPtr sink = UOp::Sink(many);
  EXPECT_EQ(GraphRewrite(sink, Sym()), sink);
  many.push_back(noop);
  EXPECT_EQ(GraphRewrite(UOp::Sink(many), Sym()), sink);
}

// Runs `f` on a thread with a 512 KiB stack, so that recursion as deep as an expression shows at a depth
// a test can afford.
void OnSmallStack(std::function<void()> f) {
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 512 << 10), 0);
  pthread_t thread;
  ASSERT_EQ(pthread_create(
                &thread, &attr,
                [](void* fn) -> void* {
                  (*static_cast<std::function<void()>*>(fn))();
                  return nullptr;
                },
                &f),
            0);
  pthread_join(thread, nullptr);
  pthread_attr_destroy(&attr);
}

// The rules' helpers that walk sums, products and operand orders (tinygrad recurses there) keep their own
// stacks.
TEST_F(SymTest, DeepExpressionsUseNoCStack) {
  constexpr int kDepth = 100000;
  UOpPtr four = UOp::Const(dtypes::kInt32, 4);
  std::vector<UOpPtr> vars;
  for (int i = 0; i < kDepth; ++i) vars.push_back(UOp::Variable("v" + std::to_string(i), 0, 3));
  UOpPtr sum = vars[0], sum_times_4 = vars[0] * four;
  for (int i = 1; i < kDepth; ++i) {
    sum = sum + vars[i];
    sum_times_4 = sum_times_4 + vars[i] * four;
  }
  // Two products equal down to their first factor: ordering the operands of their sum compares them all
  // the way down.
  UOpPtr a_chain = a, c_chain = c;
  for (int i = 0; i < kDepth; ++i) {
    a_chain = a_chain * b;
    c_chain = c_chain * b;
  }
  OnSmallStack([&] {
    UOpPtr ordered = GraphRewrite(a_chain + c_chain, Sym());
    EXPECT_EQ(GraphRewrite(c_chain + a_chain, Sym()), ordered);
    ASSERT_EQ(ordered->op(), Ops::ADD);
    EXPECT_EQ(ordered->src()[0], GraphRewrite(a_chain, Sym()));  // ('a', ...) < ('c', ...) at the bottom
    // Taking out the common factor 4 divides the sum term by term.
    EXPECT_EQ(GraphRewrite(sum_times_4.idiv(four), Sym()), GraphRewrite(sum, Sym()));
    EXPECT_EQ(GraphRewrite(sum_times_4 % four, Sym()), UOp::Const(dtypes::kInt32, 0));
    EXPECT_EQ(GraphRewrite(sum_times_4.lt(four), Sym()),
              GraphRewrite(sum.lt(UOp::Const(dtypes::kInt32, 1)), Sym()));
  });
}

}  // namespace
}  // namespace uopc
