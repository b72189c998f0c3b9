// The C renderer on its own: tinygrad's graph after "final rewrite" for every corpus kernel (clang and
// clang_noopt), linearized and rendered, equals tinygrad's source byte for byte.
#include <string>

#include "codegen/linearize.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"

namespace uopc {
namespace {

TEST(RenderCorpusTest, ClangSourceIsTinygradsByteForByte) {
  ClangRenderer clang;
  int equal = 0, total = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      ++total;
      const CorpusTarget& t = k.target(target);
      absl::StatusOr<std::vector<UOpPtr>> uops = Linearize(ParseCorpusGraph(*t.Stage("final rewrite")));
      ASSERT_TRUE(uops.ok()) << k.id << ": " << uops.status();
      std::vector<const UOp*> raw;
      for (const UOpPtr& u : *uops) raw.push_back(u.get());
      absl::StatusOr<std::string> src = clang.Render(raw);
      if (src.ok() && *src == t.src) {
        ++equal;
      } else {
        ADD_FAILURE() << k.id << " " << target << ":\n--- got\n"
                      << (src.ok() ? *src : std::string(src.status().message())) << "\n--- want\n"
                      << t.src;
      }
    }
  }
  EXPECT_EQ(equal, total);
  EXPECT_EQ(total, 186);
}

}  // namespace
}  // namespace uopc
