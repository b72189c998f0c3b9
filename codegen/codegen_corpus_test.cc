// The whole codegen pipeline on every corpus kernel, against tinygrad: the opts chosen, the kernel name, the
// graph after every step, the linear program (print_uops listing) and the C source, for `clang` (hand-coded
// opts) and `clang_noopt`. The per-step tests run each step on tinygrad's previous graph; this one chains
// them.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "uop/print.h"

namespace uopc {
namespace {

struct Tally {
  int kernels = 0;
  std::map<std::string, int> equal;                        // per check: kernels where it equals tinygrad's
  std::map<std::string, std::vector<std::string>> differ;  // per check: the ids where it does not

  void Add(const std::string& check, bool same, const std::string& id) {
    if (same) {
      ++equal[check];
    } else {
      differ[check].push_back(id);
    }
  }
  std::string Report() const {
    std::string out;
    for (const auto& [check, ids] : differ) {
      absl::StrAppend(&out, "  ", check, ": ", equal.count(check) ? equal.at(check) : 0, "/", kernels,
                      " equal; differ: ", absl::StrJoin(ids, " "), "\n");
    }
    return out;
  }
};

Tally CompileCorpus(absl::string_view target) {
  const bool optimize = target == "clang";
  ClangRenderer clang;
  Tally tally;
  for (const CorpusKernel& k : KernelCorpus()) {
    const CorpusTarget& want = k.target(target);
    ++tally.kernels;
    KernelNameCounter names;
    CodegenStages stages;
    CompileOptions options;
    options.optimize = optimize;
    absl::StatusOr<ProgramSpec> p = CompileKernel(ParseCorpusGraph(k.ast), clang, options, &names, &stages);
    if (!p.ok()) {
      tally.Add("compiles", false, absl::StrCat(k.id, "(", p.status().message().substr(0, 120), ")"));
      continue;
    }
    tally.Add("compiles", true, k.id);
    std::vector<std::string> opts;
    for (const Opt& o : p->applied_opts) opts.push_back(o.ToString());
    tally.Add("opts", opts == want.opts, k.id);
    tally.Add("name", p->name == want.name, k.id);
    for (const auto& [step, graph] : stages) {
      const std::string* text = want.Stage(step);
      tally.Add(absl::StrCat("stage ", step), text != nullptr && GraphDifference(graph, *text).empty(), k.id);
    }
    std::vector<const UOp*> raw;
    for (const UOpPtr& u : p->uops) raw.push_back(u.get());
    tally.Add("uops", PrintUOpsListing(raw) == want.uops, k.id);
    tally.Add("src", p->src == want.src, k.id);
  }
  return tally;
}

// The floors are the counts reached so far; the target is every kernel (docs/parity.md lists the differences
// that remain on purpose). A lower count is a regression.
void ExpectAtLeast(const Tally& t, const std::map<std::string, int>& floors) {
  for (const auto& [check, floor] : floors) {
    const int got = t.equal.count(check) ? t.equal.at(check) : 0;
    EXPECT_GE(got, floor) << check << "\n" << t.Report();
  }
  std::cout << t.Report();
}

TEST(CodegenCorpusTest, ClangWithHandCodedOpts) {
  Tally t = CompileCorpus("clang");
  ExpectAtLeast(t, {{"compiles", 93}, {"opts", 93}, {"name", 93}, {"uops", 93}, {"src", 93}});
}

TEST(CodegenCorpusTest, ClangWithoutOpts) {
  Tally t = CompileCorpus("clang_noopt");
  ExpectAtLeast(t, {{"compiles", 93}, {"opts", 93}, {"name", 93}, {"uops", 93}, {"src", 93}});
}

}  // namespace
}  // namespace uopc
