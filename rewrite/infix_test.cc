#include "rewrite/infix.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace uopc {
namespace {

const std::vector<InfixVar> kVars = {{"a", 0, 8}, {"b", -3, 5}, {"c", 0, 1}};

UOpPtr MustParse(absl::string_view text) {
  absl::StatusOr<UOpPtr> e = ParseInfix(text, kVars);
  EXPECT_TRUE(e.ok()) << text << ": " << e.status();
  return e.ok() ? *e : nullptr;
}

TEST(InfixTest, RoundTripsAndBuildsTheSameNodes) {
  for (absl::string_view text : {"(a + 1)", "((a * -1) + (b // 4))", "max(a, (b % 3))", "where((a < 3), a, b)",
                                 "((a != b) != true)", "((a << 2) >> 1)", "(((a & 3) | (b ^ 1)) + -7)",
                                 "cast_int((a < b))", "neg(sub(a, b))", "true"}) {
    UOpPtr e = MustParse(text);
    ASSERT_TRUE(e);
    EXPECT_EQ(RenderInfix(e.get()), text);
    EXPECT_EQ(MustParse(RenderInfix(e.get())), e);
  }
  UOpPtr a = UOp::Variable("a", 0, 8);
  EXPECT_EQ(MustParse("(a + 1)"), a + 1);
  EXPECT_EQ(MustParse("(1 + a)"), 1 + a);
  EXPECT_EQ(MustParse("(a < 3)"), a.lt(3));
  // The outermost operators may be written without parentheses (left to right).
  EXPECT_EQ(MustParse("((a * 4) + b) // 4"), MustParse("(((a * 4) + b) // 4)"));
  EXPECT_EQ(MustParse("a + 1 + b"), MustParse("((a + 1) + b)"));
}

TEST(InfixTest, RendersLikeTinygrad) {
  EXPECT_EQ(RenderTinygrad(MustParse("((a * -1) + (b // 4))").get()), "((a*-1)+(b//4))");
  EXPECT_EQ(RenderTinygrad(MustParse("where((a < 3), a, b)").get()), "(a if (a<3) else b)");
  EXPECT_EQ(RenderTinygrad(MustParse("max(a, 2)").get()), "max(a, 2)");
  EXPECT_EQ(RenderTinygrad(MustParse("((a != b) != true)").get()), "((a!=b)!=True)");
  EXPECT_EQ(RenderTinygrad(UOp::Range(dtypes::kInt32, 4, 2).get()), "ridx2");
  EXPECT_EQ(RenderTinygrad(MustParse("cast_bool(a)").get()), "(bool)(a)");
}

TEST(InfixTest, RendersDeepChainsInLinearTimeAndSharedNodesInFull) {
  // Text that repeats each source's text in its user's: 100k levels would be ~20 GB.
  constexpr int kDepth = 100000;
  UOpPtr e = UOp::Variable("a", 0, 8);
  for (int i = 0; i < kDepth; ++i) e = e + 1;
  std::string tinygrad(kDepth, '('), infix(kDepth, '(');
  tinygrad += "a";
  infix += "a";
  for (int i = 0; i < kDepth; ++i) {
    tinygrad += "+1)";
    infix += " + 1)";
  }
  EXPECT_EQ(RenderTinygrad(e.get()), tinygrad);
  EXPECT_EQ(RenderInfix(e.get()), infix);
  UOpPtr shared = MustParse("(a + 1)");
  EXPECT_EQ(RenderTinygrad((shared * shared).get()), "((a+1)*(a+1))");
  EXPECT_EQ(RenderTinygrad(MustParse("where((a < 3), neg(a), cast_int((b < a)))").get()),
            "((-a) if (a<3) else (int)((b<a)))");
}

TEST(InfixTest, ErrorsNameTheColumn) {
  struct Case {
    const char* text;
    const char* message;
  };
  for (const Case& c : {Case{"(a + ", "col 6: expected an expression"}, Case{"(a ? 1)", "col 4: expected a binary"},
                        Case{"(a + 1", "col 7: expected ')'"}, Case{"(a + zz)", "col 6: unknown variable 'zz'"},
                        Case{"(a + 1) x", "col 9: expected end of expression"}, Case{"a +", "col 4: expected an expression"},
                        Case{"where(a, 1, 2)", "condition of where must be bool"},
                        Case{"(a + true)", "differ in type"}, Case{"99999999999999999999", "out of range"},
                        Case{"max(a)", "max takes 2 arguments, got 1"}, Case{"", "expected an expression"}}) {
    absl::StatusOr<UOpPtr> e = ParseInfix(c.text, kVars);
    ASSERT_FALSE(e.ok()) << c.text;
    EXPECT_NE(e.status().message().find(c.message), absl::string_view::npos) << c.text << " -> " << e.status();
  }
  std::string deep(5000, '(');
  EXPECT_FALSE(ParseInfix(deep, kVars).ok());
}

}  // namespace
}  // namespace uopc
