#include "renderer/render_rules.h"

#include <string>

#include "absl/container/flat_hash_map.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

// A context that names each uop by a table and offers one field.
class TestContext {
 public:
  const std::string& Name(const UOp* u) { return names[u]; }
  const std::string& Src(const UOp* u, int i) { return names[u->src(i)]; }
  static const RenderFields<TestContext>& Fields() {
    static const RenderFields<TestContext>* const fields = new RenderFields<TestContext>({
        {"dtype", [](TestContext&, const UOp* u, std::string* out) { *out += u->dtype().ToString(); }},
    });
    return *fields;
  }
  absl::flat_hash_map<const UOp*, std::string> names;
};

using TestRules = RenderRules<TestContext>;

TEST(RenderRulesTest, FormatsNameSourcesSelfFieldsAndBraces) {
  const TestRules rules({
      {Ops::ADD, "{x} = ({0}+{1}) /* {dtype} */ {{}}"},
  });
  UOpPtr a = UOp::Const(dtypes::kInt32, 1), b = UOp::Const(dtypes::kInt32, 2), sum = a + b;
  TestContext ctx;
  ctx.names = {{a.get(), "a"}, {b.get(), "b"}, {sum.get(), "s"}};
  EXPECT_EQ(rules.Render(ctx, sum.get()), "s = (a+b) /* dtypes.int */ {}");
}

TEST(RenderRulesTest, FirstMatchingRuleWinsAndDeclinesFallThrough) {
  const TestRules rules =
      TestRules({
          {RenderPat(Ops::MUL).dtype(dtypes::kFloat32), "fmul"},
          {Ops::MUL,
           [](TestContext&, const UOp*) -> std::optional<std::string> {
             return std::nullopt;  // declines
           }},
      }) +
      TestRules({{Ops::MUL, "mul"}, {RenderPat(Ops::MUL).when([](const UOp*) { return true; }), "never"}});
  UOpPtr i = UOp::Const(dtypes::kInt32, 3), f = UOp::Const(dtypes::kFloat32, 3.0);
  TestContext ctx;
  EXPECT_EQ(rules.Render(ctx, (i * i).get()), "mul");
  EXPECT_EQ(rules.Render(ctx, (f * f).get()), "fmul");
}

TEST(RenderRulesTest, NoRuleOrTooFewSourcesIsNullopt) {
  const TestRules rules({{Ops::WHERE, "{0}?{1}:{2}"}, {RenderPat(Ops::ADD).srcs(3), "add3"}});
  UOpPtr a = UOp::Const(dtypes::kInt32, 1);
  TestContext ctx;
  EXPECT_EQ(rules.Render(ctx, (a + a).get()), std::nullopt);          // ADD with two sources
  EXPECT_EQ(rules.Render(ctx, (a * a).get()), std::nullopt);          // no MUL rule
  UOpPtr short_where = UOp::New(Ops::WHERE, dtypes::kInt32, {a, a});  // names {2}, has two sources
  EXPECT_EQ(rules.Render(ctx, short_where.get()), std::nullopt);
}

TEST(RenderRulesTest, OpSetsRegisterForEveryOp) {
  const TestRules rules({{OpSet{Ops::ADD, Ops::MUL}, "bin"}});
  UOpPtr a = UOp::Const(dtypes::kInt32, 1);
  TestContext ctx;
  EXPECT_EQ(rules.Render(ctx, (a + a).get()), "bin");
  EXPECT_EQ(rules.Render(ctx, (a * a).get()), "bin");
}

TEST(RenderRulesDeathTest, UnknownFieldFailsWhenTheTableIsBuilt) {
  EXPECT_DEATH(TestRules({{Ops::ADD, "{nope}"}}), "no field");
}

}  // namespace
}  // namespace uopc
