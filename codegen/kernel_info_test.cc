#include "uop/kernel_info.h"

#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

TEST(KernelInfoTest, PrintsAsTinygradsRepr) {
  KernelInfo info{.name = "r_16_4", .local_dims = 1, .upcasted = 2};
  EXPECT_EQ(info.ToString(), "KernelInfo(name='r_16_4', local_dims=1, upcasted=2, dont_use_locals=False)");
}

TEST(KernelInfoTest, RoundTripsThroughTheTextIr) {
  UOpPtr sink = UOp::Sink({}, KernelInfoAsArg({.name = "E_3", .upcasted = 1, .dont_use_locals = true}));
  std::string text = PrintIr(sink.get());
  absl::StatusOr<UOpPtr> back = ParseIrSingle(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, sink);
  ASSERT_NE(KernelInfoOf(back->get()), nullptr);
  EXPECT_EQ(KernelInfoOf(back->get())->name, "E_3");
  EXPECT_TRUE(KernelInfoOf(back->get())->dont_use_locals);
}

TEST(KernelInfoTest, EqualInfosAreOneNode) {
  EXPECT_EQ(UOp::Sink({}, KernelInfoAsArg({.name = "a"})), UOp::Sink({}, KernelInfoAsArg({.name = "a"})));
  EXPECT_NE(UOp::Sink({}, KernelInfoAsArg({.name = "a"})), UOp::Sink({}, KernelInfoAsArg({.name = "b"})));
}

TEST(KernelInfoTest, MalformedTextIsAnError) {
  for (const char* bad :
       {"KernelInfo(name=E_3)", "KernelInfo(name='E_3', local_dims=x)", "KernelInfo(name='E",
        "KernelInfo(local_dims=1", "KernelInfo(dont_use_locals=Maybe)"}) {
    absl::StatusOr<UOpPtr> g = ParseIrSingle(std::string("%0 = SINK : void arg=") + bad + "\nreturn %0\n");
    EXPECT_FALSE(g.ok()) << bad;
  }
}

// Every stage graph of the corpus parses (its SINKs carry KernelInfo) and prints back to the same text.
TEST(KernelInfoTest, EveryCorpusStageRoundTrips) {
  int graphs = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      for (const auto& [name, text] : k.target(target).stages) {
        UOpPtr g = ParseCorpusGraph(text);
        ASSERT_EQ(PrintIr(g.get()), text) << k.id << " " << target << " " << name;
        ++graphs;
      }
    }
  }
  EXPECT_EQ(graphs, 93 * 2 * 9);
}

}  // namespace
}  // namespace uopc
