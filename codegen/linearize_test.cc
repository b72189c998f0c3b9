#include "codegen/linearize.h"

#include <string>
#include <vector>

#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "uop/print.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

std::string Listing(const std::vector<UOpPtr>& program) {
  std::vector<const UOp*> raw(program.begin(), program.end());
  return PrintUOpsListing(raw);
}

// Every corpus kernel's "final rewrite" graph, both targets, linearizes to tinygrad's print_uops listing.
TEST(LinearizeTest, CorpusListingsMatchTinygrad) {
  int total = 0, matched = 0;
  std::string failures, first_diff;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      const CorpusTarget& t = k.target(target);
      const std::string* stage = t.Stage("final rewrite");
      ASSERT_NE(stage, nullptr) << k.id;
      ++total;
      absl::StatusOr<std::vector<UOpPtr>> program = Linearize(ParseCorpusGraph(*stage));
      if (program.ok() && Listing(*program) == t.uops) {
        ++matched;
      } else {
        failures += " " + k.id + "@" + target;
        if (!program.ok()) {
          failures += "(" + std::string(program.status().message()) + ")";
        } else if (first_diff.empty()) {
          first_diff = k.id + "@" + target + "\n--- got:\n" + Listing(*program) + "--- expected:\n" + t.uops;
        }
      }
    }
  }
  EXPECT_EQ(total, 186);
  EXPECT_GE(matched, 186) << "failing:" << failures << "\nfirst difference: " << first_diff;
}

}  // namespace
}  // namespace uopc
