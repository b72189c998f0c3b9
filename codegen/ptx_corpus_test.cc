// The whole codegen pipeline for the PTX target (tinygrad's PTXRenderer("sm_80")) on every corpus kernel,
// against tinygrad's `ptx` results: the opts chosen, the linear program (print_uops listing) and the PTX
// source byte for byte, but for uopc's legal f64 square roots and reciprocals (docs/parity.md).
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/ptx.h"
#include "uop/print.h"

namespace uopc {
namespace {

// tinygrad's PTX with uopc's departures (docs/parity.md): PTX has no approximate f64 square root or
// reciprocal, so uopc writes the correctly rounded ones (double_ops/0's `sqrt.approx.f64` does not assemble);
// floats compare for inequality unordered, as C's `!=` (`setp.neu`: tinygrad's `setp.ne` is false for NaN).
std::string WithLegalDoubleOps(const std::string& tinygrad_src) {
  return absl::StrReplaceAll(
      tinygrad_src,
      {{"sqrt.approx.f64", "sqrt.rn.f64"}, {"rcp.approx.f64", "rcp.rn.f64"}, {"setp.ne.f", "setp.neu.f"}});
}

TEST(PtxCorpusTest, OptsUopsAndSourceAreTinygrads) {
  PTXRenderer ptx("sm_80");
  std::map<std::string, int> equal;
  std::map<std::string, std::vector<std::string>> differ;
  auto add = [&](const std::string& check, bool same, const std::string& id) {
    if (same) {
      ++equal[check];
    } else {
      differ[check].push_back(id);
    }
  };
  bool shown = false;
  for (const CorpusKernel& k : KernelCorpus()) {
    const CorpusTarget& want = k.target("ptx");
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> p = CompileKernel(ParseCorpusGraph(k.ast), ptx, CompileOptions{}, &names);
    add("compiles", p.ok(), k.id);
    if (!p.ok()) {
      std::cout << k.id << ": " << p.status() << "\n";
      continue;
    }
    std::vector<std::string> opts;
    for (const Opt& o : p->applied_opts) opts.push_back(o.ToString());
    add("opts", opts == want.opts, k.id);
    std::vector<const UOp*> raw;
    for (const UOpPtr& u : p->uops) raw.push_back(u.get());
    if (!want.uops.empty()) add("uops", PrintUOpsListing(raw) == want.uops, k.id);
    const std::string want_src = WithLegalDoubleOps(want.src);
    add("src", p->src == want_src, k.id);
    if (p->src != want_src && !shown) {
      shown = true;  // the first difference in full, to start from
      std::cout << k.id << ":\n--- got\n" << p->src << "\n--- want\n" << want_src << "\n";
    }
  }
  for (const auto& [check, ids] : differ) {
    std::cout << check << ": " << equal[check] << "/93 equal; differ: " << absl::StrJoin(ids, " ") << "\n";
  }
  // Every kernel, matmul_half/0's tensor cores included.
  EXPECT_EQ(equal["compiles"], 93);
  EXPECT_EQ(equal["opts"], 93);
  EXPECT_EQ(equal["uops"], 93);
  EXPECT_EQ(equal["src"], 93);
}

}  // namespace
}  // namespace uopc
