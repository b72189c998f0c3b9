// libFuzzer target comparing the compiled pattern-matcher engine with the interpreted reference: an
// expression derived from the input (an instantiation of a rule's pattern or a random expression,
// RuleFuzzer's generator) is rewritten with symbolic, sym, symbolic_flat and symbolic_simple, node by node
// (each node of the graph, and the node with its sources swapped) and as a whole graph, under both engines.
// The rule that fires, its result and every rule application of the whole rewrite must be the same; a
// difference aborts, printing the node.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "rewrite/graph_rewrite.h"
#include "rewrite/pattern_matcher.h"
#include "rewrite/symbolic.h"
#include "rewrite/testing/rule_fuzzer.h"
#include "uop/print.h"
#include "uop/uop.h"

namespace uopc {
namespace {

struct Application {
  int rule_id;
  const UOp* before;
  const UOp* after;
  bool operator==(const Application& o) const {
    return rule_id == o.rule_id && before == o.before && after == o.after;
  }
};

void Record(void* out, const Rule& rule, const UOp* before, const UOp* after) {
  static_cast<std::vector<Application>*>(out)->push_back(Application{rule.id(), before, after});
}

[[noreturn]] void Fail(const char* what, const PatternMatcher& pm, const UOpPtr& node) {
  std::fprintf(stderr, "matcher engines differ (%s, a matcher of %zu rules) on:\n%s\n", what, pm.size(),
               PrintUOpTree(node.get()).c_str());
  std::abort();
}

// One node under both engines.
void CompareNode(const PatternMatcher& pm, const UOpPtr& node) {
  int fired_compiled = -2, fired_reference = -2;
  UOpPtr compiled = pm.Rewrite(node, nullptr, nullptr, &fired_compiled, MatcherEngine::kCompiled);
  UOpPtr reference = pm.Rewrite(node, nullptr, nullptr, &fired_reference, MatcherEngine::kInterpreted);
  if (compiled != reference || fired_compiled != fired_reference) Fail("one node", pm, node);
}

void CompareAll(const PatternMatcher& pm, const UOpPtr& expr) {
  std::vector<UOpPtr> nodes;
  for (const UOp* u : expr->Toposort()) nodes.push_back(UOpPtr(u));
  for (const UOpPtr& u : nodes) {
    CompareNode(pm, u);
    // The same node with its first two sources swapped, and with its sources repeated: shapes the generator
    // makes less often.
    if (u->num_src() >= 2) {
      std::vector<UOpPtr> src(u->src().begin(), u->src().end());
      std::swap(src[0], src[1]);
      CompareNode(pm, UOp::New(u->op(), u->dtype(), src, u->arg()));
      src[1] = src[0];
      CompareNode(pm, UOp::New(u->op(), u->dtype(), src, u->arg()));
    }
  }
  for (bool bottom_up : {false, true}) {
    RewriteOptions options;
    options.bottom_up = bottom_up;
    options.max_steps = 20000;
    options.name = "matcher engines fuzzer";
    std::vector<Application> compiled, reference;
    internal::SetFireObserver(&Record, &compiled);
    SetMatcherEngine(MatcherEngine::kCompiled);
    absl::StatusOr<UOpPtr> compiled_out = TryGraphRewrite(expr, pm, options);
    internal::SetFireObserver(&Record, &reference);
    SetMatcherEngine(MatcherEngine::kInterpreted);
    absl::StatusOr<UOpPtr> reference_out = TryGraphRewrite(expr, pm, options);
    internal::SetFireObserver(nullptr, nullptr);
    SetMatcherEngine(MatcherEngine::kCompiled);
    if (compiled_out.ok() != reference_out.ok() || (compiled_out.ok() && *compiled_out != *reference_out)) {
      Fail("graph rewrite output", pm, expr);
    }
    // Nodes freed during one rewrite may be rebuilt at another address in the other: compare the rule order.
    if (compiled.size() != reference.size()) Fail("number of rule applications", pm, expr);
    for (size_t i = 0; i < compiled.size(); ++i) {
      if (compiled[i].rule_id != reference[i].rule_id) Fail("rule applications", pm, expr);
    }
  }
}

}  // namespace
}  // namespace uopc

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using uopc::PatternMatcher;
  static const std::vector<const PatternMatcher*>* const rule_sets = new std::vector<const PatternMatcher*>{
      &uopc::Sym(), &uopc::Symbolic(), &uopc::SymbolicFlat(), &uopc::SymbolicSimple()};
  static std::vector<uopc::RuleFuzzer*>* const generators = [] {
    auto* g = new std::vector<uopc::RuleFuzzer*>;
    for (const PatternMatcher* pm : *rule_sets) {
      uopc::RuleFuzzerOptions options;
      options.max_depth = 5;
      g->push_back(new uopc::RuleFuzzer(*pm, options));
    }
    return g;
  }();
  if (size == 0) return 0;
  // The first byte picks the rule set whose patterns direct the generator; every rule set rewrites the
  // result.
  const uopc::UOpPtr expr =
      (*generators)[data[0] % generators->size()]->GenerateFromBytes(data + 1, size - 1);
  if (expr == nullptr) return 0;
  for (const PatternMatcher* pm : *rule_sets) uopc::CompareAll(*pm, expr);
  return 0;
}
