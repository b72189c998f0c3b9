#include "codegen/final_rewrite.h"

#include <iostream>
#include <string>
#include <vector>

#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "uop/uop.h"

namespace uopc {
namespace {

TEST(LateRewriteTest, PowersOfTwoBecomeShiftsAndMasks) {
  PatternMatcher late = LateRewritePatterns(ClangRenderer().supported_ops());
  UOpPtr x = UOp::Variable("x", 0, 100);
  EXPECT_EQ(GraphRewrite(x % 8, late), x & 7);
  EXPECT_EQ(GraphRewrite(x.idiv(8), late), x >> 3);
  EXPECT_EQ(GraphRewrite(x * 4, late), x << 2);
  UOpPtr y = UOp::Variable("y", -5, 100);
  // A possibly negative dividend keeps its division by 8 (a shift would floor).
  EXPECT_EQ(GraphRewrite(y.idiv(8), late), y.idiv(8));
  EXPECT_EQ(GraphRewrite(y * -1, late), y.alu(Ops::NEG));
}

TEST(LateRewriteTest, DivisionByAConstantIsAMultiplyAndShift) {
  PatternMatcher late = LateRewritePatterns(ClangRenderer().supported_ops());
  UOpPtr x = UOp::Variable("x", 0, 1000);
  UOpPtr got = GraphRewrite(x.idiv(7), late);
  EXPECT_NE(got, x.idiv(7));
  bool has_shr = false;
  for (const UOp* u : got->Toposort()) has_shr |= u->op() == Ops::SHR;
  EXPECT_TRUE(has_shr);
}

TEST(LateRewriteTest, MulaccAndSubWhereTheTargetHasThem) {
  UOpPtr a = UOp::Variable("a", 0, 9), b = UOp::Variable("b", 0, 9), c = UOp::Variable("c", 0, 9);
  PatternMatcher with_mulacc = LateRewritePatterns(OpSet{Ops::MULACC});
  EXPECT_EQ(GraphRewrite(a * b + c, with_mulacc), a.alu(Ops::MULACC, {b, c}));
  PatternMatcher with_sub = LateRewritePatterns(OpSet{Ops::NEG, Ops::SUB});
  EXPECT_EQ(GraphRewrite(a - b, with_sub), a.alu(Ops::SUB, {b}));
  // Without SHR nothing becomes a shift.
  EXPECT_EQ(GraphRewrite(a.idiv(4), with_sub), a.idiv(4));
}

TEST(RenderPatternsTest, VectorConstantBecomesVectorize) {
  UOpPtr c = UOp::Const(dtypes::kFloat32.Vec(4), 1.5);
  UOpPtr got = GraphRewrite(c, RenderPatterns());
  EXPECT_EQ(got->op(), Ops::VECTORIZE);
  EXPECT_EQ(got->num_src(), 4u);
}

// A stand-in for ClangRenderer's extra_matcher while the renderer package lacks it (tinygrad's
// ClangRenderer.extra_matcher + CStyleLanguage's extra_pm), so the corpus test checks this step's own rules.
UOpPtr Devectorized(const UOpPtr& alu) {
  const int count = alu->dtype().vcount();
  if (count == 1) return nullptr;
  std::vector<UOpPtr> elements;
  for (int i = 0; i < count; ++i) {
    std::vector<UOpPtr> src;
    for (const UOpPtr& s : alu->src()) src.push_back(s.gep(i));
    elements.push_back(UOp::New(alu->op(), alu->dtype().scalar(), src, alu->arg()));
  }
  return UOp::New(Ops::VECTORIZE, alu->dtype(), elements);
}

class ClangWithStandInExtraMatcher : public ClangRenderer {
 public:
  const PatternMatcher* extra_matcher() const override {
    if (const PatternMatcher* real = ClangRenderer::extra_matcher(); real != nullptr) return real;
    static const PatternMatcher* const kRules = new PatternMatcher({
        {UPat::Var("x", dtypes::kFloat64).cast(dtypes::kFloat16),
         [](const Match& m) { return m["x"].cast(dtypes::kFloat32).cast(dtypes::kFloat16); }},
        {UPat(Ops::SQRT).named("alu"), [](const Match& m) { return Devectorized(m["alu"]); }},
        {UPat(Ops::BITCAST).named("x"),
         [](const Match& m) -> UOpPtr {
           const UOpPtr& x = m["x"];
           if (OpSet{Ops::NOOP, Ops::LOAD, Ops::CUSTOM}.contains(x->src(0)->op())) return nullptr;
           return UOp::New(Ops::BITCAST, x->dtype(),
                           {UOp::New(Ops::NOOP, x->src(0)->dtype(), {x->src()[0]})});
         }},
        {UPat(Ops::MAX).named("m"),
         [](const Match& m) {
           const UOpPtr& mx = m["m"];
           return mx->src()[0].lt(mx->src()[1]).where(mx->src()[1], mx->src()[0]);
         }},
        {UPat(groups::kALU | OpSet{Ops::CAST, Ops::BITCAST, Ops::ASSIGN, Ops::INDEX})
             .dtype(dtypes::kBool)
             .named("alu"),
         [](const Match& m) { return Devectorized(m["alu"]); }},
        {UPat(Ops::CAST).src(UPat().dtype(dtypes::kBool)).named("alu"),
         [](const Match& m) { return Devectorized(m["alu"]); }},
        {UPat(Ops::WHERE).named("alu"), [](const Match& m) { return Devectorized(m["alu"]); }},
    });
    return kRules;
  }
};

// Ops that ClangRenderer's extra_matcher rewrites (MAX, SQRT, BITCAST, vector bool ops, double->half casts;
// the transcendental fallbacks make BITCASTs): kernels holding them need it.
bool NeedsExtraMatcher(const std::string& graph_text) {
  for (const char* op :
       {"MAX :", "SQRT :", "BITCAST :", "EXP2 :", "LOG2 :", "SIN :", "float16", "bool.vec"}) {
    if (graph_text.find(op) != std::string::npos) return true;
  }
  return false;
}

TEST(FinalRewriteCorpusTest, EveryKernelMatchesTinygradWithTheRendererAsItIs) {
  ClangRenderer clang;
  const bool has_extra_matcher = clang.extra_matcher() != nullptr;
  int matched = 0, total = 0, failing_need_extra = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      const CorpusTarget& t = k.target(target);
      const std::string* before = t.Stage("devectorize");
      const std::string* after = t.Stage("final rewrite");
      ASSERT_NE(before, nullptr);
      ASSERT_NE(after, nullptr);
      ++total;
      absl::StatusOr<UOpPtr> got = RewriteFinal(ParseCorpusGraph(*before), clang);
      std::string diff = got.ok() ? GraphDifference(*got, *after) : std::string(got.status().message());
      if (diff.empty()) {
        ++matched;
        continue;
      }
      const bool needs_extra = !has_extra_matcher && NeedsExtraMatcher(*before);
      failing_need_extra += needs_extra;
      failing.push_back(k.id + " " + target + (needs_extra ? " (needs the extra matcher)" : ""));
      if (!needs_extra && failing.size() - failing_need_extra <= 2) {
        std::cout << k.id << " " << target << ":\n" << diff << "\n";
      }
    }
  }
  for (const std::string& f : failing) std::cout << "final rewrite mismatch: " << f << "\n";
  std::cout << "final rewrite: " << matched << "/" << total << " corpus stage graphs equal; of the rest "
            << failing_need_extra << " use ops of the renderer's extra_matcher"
            << (has_extra_matcher ? "" : " (not written yet)") << "\n";
  EXPECT_EQ(total, 186);
  EXPECT_GE(matched, has_extra_matcher ? 186 : 139);
}

TEST(FinalRewriteCorpusTest, EveryKernelMatchesTinygradWithAnExtraMatcher) {
  ClangWithStandInExtraMatcher clang;
  int matched = 0, total = 0;
  std::vector<std::string> failing;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      const CorpusTarget& t = k.target(target);
      ++total;
      absl::StatusOr<UOpPtr> got = RewriteFinal(ParseCorpusGraph(*t.Stage("devectorize")), clang);
      std::string diff =
          got.ok() ? GraphDifference(*got, *t.Stage("final rewrite")) : std::string(got.status().message());
      if (diff.empty()) {
        ++matched;
        continue;
      }
      failing.push_back(k.id + " " + target);
      if (failing.size() <= 2) std::cout << k.id << " " << target << ":\n" << diff << "\n";
    }
  }
  for (const std::string& f : failing) std::cout << "final rewrite (extra matcher) mismatch: " << f << "\n";
  std::cout << "final rewrite with an extra matcher: " << matched << "/" << total
            << " corpus stage graphs equal\n";
  EXPECT_EQ(total, 186);
  EXPECT_GE(matched, 186);
}

}  // namespace
}  // namespace uopc
