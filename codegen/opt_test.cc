#include "codegen/opt.h"

#include "gtest/gtest.h"

namespace uopc {
namespace {

TEST(OptTest, PrintsTinygradRepr) {
  EXPECT_EQ(Opt(OptOps::kUpcast, 1, 4).ToString(), "Opt(op=OptOps.UPCAST, axis=1, arg=4)");
  EXPECT_EQ(Opt(OptOps::kNoLocals, std::nullopt, std::nullopt).ToString(),
            "Opt(op=OptOps.NOLOCALS, axis=None, arg=None)");
  EXPECT_EQ(Opt(OptOps::kTC, 0, Opt::TcArg{-1, 2, 1}).ToString(),
            "Opt(op=OptOps.TC, axis=0, arg=(-1, 2, 1))");
}

TEST(OptTest, ReprRoundTrips) {
  for (const Opt& o : {Opt(OptOps::kUpcast, 1, 4), Opt(OptOps::kGroupTop, 0, 16), Opt(OptOps::kUnroll, 0, 0),
                       Opt(OptOps::kNoLocals, std::nullopt, std::nullopt), Opt(OptOps::kSwap, 0, 2),
                       Opt(OptOps::kTC, 0, Opt::TcArg{-1, 2, 1}), Opt(OptOps::kPadTo, 1, 32)}) {
    absl::StatusOr<Opt> repr = ParseOpt(o.ToString());
    ASSERT_TRUE(repr.ok()) << repr.status();
    EXPECT_EQ(*repr, o) << o.ToString();
    absl::StatusOr<Opt> compact = ParseOpt(o.ToCompactString());
    ASSERT_TRUE(compact.ok()) << compact.status();
    EXPECT_EQ(*compact, o) << o.ToCompactString();
  }
}

TEST(OptTest, ParsesCompactForm) {
  absl::StatusOr<Opt> o = ParseOpt("UPCAST:1:4");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(*o, Opt(OptOps::kUpcast, 1, 4));
  EXPECT_EQ(Opt(OptOps::kUpcast, 1, 4).ToCompactString(), "UPCAST:1:4");
  EXPECT_EQ(Opt(OptOps::kNoLocals, std::nullopt, std::nullopt).ToCompactString(), "NOLOCALS");
  EXPECT_EQ(Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}).ToCompactString(), "TC:0:-1,0,1");
}

TEST(OptTest, ParsesLists) {
  absl::StatusOr<std::vector<Opt>> l =
      ParseOptList("[Opt(op=OptOps.UPCAST, axis=0, arg=4), Opt(op=OptOps.TC, axis=0, arg=(-1, 0, 1))]");
  ASSERT_TRUE(l.ok()) << l.status();
  ASSERT_EQ(l->size(), 2u);
  EXPECT_EQ((*l)[1], Opt(OptOps::kTC, 0, Opt::TcArg{-1, 0, 1}));
  EXPECT_EQ(OptListToString(*l),
            "[Opt(op=OptOps.UPCAST, axis=0, arg=4), Opt(op=OptOps.TC, axis=0, arg=(-1, 0, 1))]");
  absl::StatusOr<std::vector<Opt>> c = ParseOptList("UPCAST:0:4 UNROLL:0:0;LOCAL:1:2");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->size(), 3u);
  EXPECT_TRUE(ParseOptList("")->empty());
}

TEST(OptTest, RejectsMalformed) {
  EXPECT_FALSE(ParseOpt("FOO:1:2").ok());
  EXPECT_FALSE(ParseOpt("UPCAST:x:2").ok());
  EXPECT_FALSE(ParseOpt("UPCAST:1:2,3").ok());
  EXPECT_FALSE(ParseOpt("Opt(op=OptOps.UPCAST, axis=1").ok());
  EXPECT_FALSE(ParseOpt("Opt(op=UPCAST, axis=1, arg=2)").ok());
  EXPECT_FALSE(ParseOptList("[Opt(op=OptOps.UPCAST, axis=1, arg=2)").ok());
}

}  // namespace
}  // namespace uopc
