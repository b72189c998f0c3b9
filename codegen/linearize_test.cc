#include "codegen/linearize.h"

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
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

// The program's ops in order, CONSTs with their values: "DEFINE_GLOBAL CONST(2.0) RANGE ...".
std::string OpSequence(const std::vector<UOpPtr>& program) {
  std::string out;
  for (const UOpPtr& u : program) {
    if (!out.empty()) out += " ";
    out += std::string(OpName(u->op()));
    if (u->op() == Ops::CONST) out += "(" + NodeArgStr(u.get()) + ")";
  }
  return out;
}

std::string LinearizedOps(absl::string_view ir) {
  absl::StatusOr<UOpPtr> graph = ParseIrSingle(ir);
  if (!graph.ok()) return "parse error: " + std::string(graph.status().message());
  absl::StatusOr<std::vector<UOpPtr>> program = Linearize(*graph);
  if (!program.ok()) return "linearize error: " + std::string(program.status().message());
  return OpSequence(*program);
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
  EXPECT_EQ(matched, total) << "failing:" << failures << "\nfirst difference: " << first_diff;
}

// The expected orders below are tinygrad v0.10.3's (its four linearizer rewrites run on the same graphs).

// A node that uses only the outer range (r0*4) goes between the two RANGEs; the inner range closes first.
TEST(LinearizeTest, NestedRanges) {
  EXPECT_EQ(
      LinearizedOps(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(12) arg=0
%1 = DEFINE_GLOBAL : float32.ptr(12) arg=1
%2 = CONST : int32 arg=3
%3 = RANGE : int32 (%2) arg=0
%4 = CONST : int32 arg=4
%5 = RANGE : int32 (%4) arg=1
%6 = MUL : int32 (%3, %4)
%7 = ADD : int32 (%6, %5)
%8 = INDEX : float32.ptr(12) (%1, %7)
%9 = LOAD : float32 (%8)
%10 = CONST : float32 arg=2.0
%11 = MUL : float32 (%9, %10)
%12 = INDEX : float32.ptr(12) (%0, %7)
%13 = STORE : void (%12, %11)
%14 = SINK : void (%13)
return %14
)ir"),
      "DEFINE_GLOBAL DEFINE_GLOBAL CONST(2.0) CONST(3) CONST(4) RANGE MUL RANGE ADD INDEX LOAD INDEX MUL "
      "STORE ENDRANGE ENDRANGE SINK");
}

// A gated store opens an IF right before it and closes it (ENDIF) before the range ends.
TEST(LinearizeTest, GatedStoreIsInsideIfEndif) {
  EXPECT_EQ(LinearizedOps(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(8) arg=0
%1 = CONST : int32 arg=8
%2 = RANGE : int32 (%1) arg=0
%3 = CONST : int32 arg=5
%4 = CMPLT : bool (%2, %3)
%5 = INDEX : float32.ptr(8) (%0, %2, %4)
%6 = CONST : float32 arg=1.0
%7 = IF : void (%4)
%8 = STORE : void (%5, %6, %7)
%9 = SINK : void (%8)
return %9
)ir"),
            "DEFINE_GLOBAL CONST(1.0) CONST(5) CONST(8) RANGE CMPLT INDEX IF STORE ENDIF ENDRANGE SINK");
}

// The accumulator of a reduce is defined before the reduce RANGE opens, inside the outer range; the output
// INDEX, though it only needs the outer range, waits until the reduce range has ended.
TEST(LinearizeTest, DefineAccGoesBeforeItsRange) {
  EXPECT_EQ(
      LinearizedOps(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(19) arg=0
%1 = CONST : int32 arg=19
%2 = RANGE : int32 (%1) arg=0
%3 = INDEX : float32.ptr(19) (%0, %2)
%4 = CONST : float32 arg=0.0
%5 = CONST : int32 arg=37
%6 = RANGE : int32 (%5) arg=1
%7 = DEFINE_ACC : float32 (%4, %6) arg=(0,)
%8 = DEFINE_GLOBAL : float32.ptr(703) arg=1
%9 = MUL : int32 (%6, %1)
%10 = ADD : int32 (%9, %2)
%11 = INDEX : float32.ptr(703) (%8, %10)
%12 = LOAD : float32 (%11)
%13 = ADD : float32 (%7, %12)
%14 = ASSIGN : float32 (%7, %13)
%15 = STORE : void (%3, %14)
%16 = SINK : void (%15)
return %16
)ir"),
      "DEFINE_GLOBAL DEFINE_GLOBAL CONST(0.0) CONST(19) CONST(37) RANGE DEFINE_ACC RANGE MUL ADD INDEX LOAD "
      "ADD ASSIGN ENDRANGE INDEX STORE ENDRANGE SINK");
}

// In a block, LOADs and everything feeding them come first; the rest follows in tuplize order (INDEX before
// MUL) as far as the dependencies allow.
TEST(LinearizeTest, LoadsComeFirstInABlock) {
  EXPECT_EQ(LinearizedOps(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(4) arg=0
%1 = DEFINE_GLOBAL : float32.ptr(4) arg=1
%2 = DEFINE_GLOBAL : int32.ptr(4) arg=2
%3 = CONST : int32 arg=4
%4 = RANGE : int32 (%3) arg=0
%5 = CONST : int32 arg=3
%6 = MUL : int32 (%4, %5)
%7 = ADD : int32 (%6, %5)
%8 = INDEX : int32.ptr(4) (%2, %4)
%9 = STORE : void (%8, %7)
%10 = INDEX : float32.ptr(4) (%1, %4)
%11 = LOAD : float32 (%10)
%12 = SQRT : float32 (%11)
%13 = INDEX : float32.ptr(4) (%0, %4)
%14 = STORE : void (%13, %12)
%15 = SINK : void (%9, %14)
return %15
)ir"),
            "DEFINE_GLOBAL DEFINE_GLOBAL DEFINE_GLOBAL CONST(3) CONST(4) RANGE INDEX LOAD SQRT INDEX INDEX "
            "STORE MUL "
            "ADD STORE ENDRANGE SINK");
}

// NaN constants compare neither less nor greater, so where they land depends on CPython's sort itself.
TEST(LinearizeTest, NanConstantsLandWhereCPythonsSortPutsThem) {
  EXPECT_EQ(LinearizedOps(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(4) arg=0
%1 = CONST : int32 arg=4
%2 = RANGE : int32 (%1) arg=0
%3 = CONST : float32 arg=2.0
%4 = CONST : float32 arg=nan
%5 = CONST : float32 arg=-1.0
%6 = CONST : float32 arg=inf
%7 = CONST : float32 arg=0.5
%8 = CAST : float32 (%2)
%9 = ADD : float32 (%8, %3)
%10 = MUL : float32 (%9, %4)
%11 = ADD : float32 (%10, %5)
%12 = MUL : float32 (%11, %6)
%13 = ADD : float32 (%12, %7)
%14 = INDEX : float32.ptr(4) (%0, %2)
%15 = STORE : void (%14, %13)
%16 = SINK : void (%15)
return %16
)ir"),
            "DEFINE_GLOBAL CONST(-1.0) CONST(0.5) CONST(4) CONST(inf) CONST(nan) CONST(2.0) RANGE CAST INDEX "
            "ADD MUL "
            "ADD MUL ADD STORE ENDRANGE SINK");
}

// A local buffer written and read back across a BARRIER inside a range: the store stays in the range, and
// because the range body holds a barrier, another BARRIER is put right after the RANGE opens.
TEST(LinearizeTest, RangeWithABarrierStartsWithABarrier) {
  EXPECT_EQ(LinearizedOps(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(64) arg=0
%1 = DEFINE_GLOBAL : float32.ptr(64) arg=1
%2 = DEFINE_LOCAL : float32.ptr(16, local=True) arg='temp0'
%3 = SPECIAL : int32 arg=('lidx0', 16)
%4 = CONST : int32 arg=4
%5 = RANGE : int32 (%4) arg=0
%6 = MUL : int32 (%3, %4)
%7 = ADD : int32 (%6, %5)
%8 = INDEX : float32.ptr(64) (%1, %7)
%9 = LOAD : float32 (%8)
%10 = INDEX : float32.ptr(16, local=True) (%2, %3)
%11 = STORE : void (%10, %9)
%12 = BARRIER : void (%11)
%13 = CONST : int32 arg=1
%14 = ADD : int32 (%3, %13)
%15 = INDEX : float32.ptr(16, local=True) (%2, %14)
%16 = LOAD : float32 (%15, %12)
%17 = INDEX : float32.ptr(64) (%0, %7)
%18 = STORE : void (%17, %16)
%19 = SINK : void (%18)
return %19
)ir"),
            "DEFINE_GLOBAL DEFINE_GLOBAL DEFINE_LOCAL SPECIAL CONST(1) CONST(4) INDEX ADD INDEX MUL RANGE "
            "BARRIER ADD "
            "INDEX LOAD STORE BARRIER LOAD INDEX STORE ENDRANGE SINK");
}

TEST(LinearizeTest, AssignToSomethingOtherThanDefineAccIsAnError) {
  absl::StatusOr<UOpPtr> graph = ParseIrSingle(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(4) arg=0
%1 = CONST : float32 arg=1.0
%2 = ASSIGN : float32 (%0, %1)
%3 = SINK : void (%2)
return %3
)ir");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<UOpPtr>> program = Linearize(*graph);
  EXPECT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("DEFINE_ACC"), std::string::npos) << program.status();
}

// Graphs tinygrad cannot linearize either (it raises "linearize failure" and RecursionError on these) are
// errors. Here a store under an IF reads a second range that never encloses the IF.
TEST(LinearizeTest, BlocksThatDoNotMergeAreAnError) {
  absl::StatusOr<UOpPtr> graph = ParseIrSingle(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(64) arg=0
%1 = CONST : int32 arg=3
%2 = RANGE : int32 (%1) arg=1
%3 = CONST : int32 arg=4
%4 = CMPLT : bool (%2, %3)
%5 = INDEX : float32.ptr(64) (%0, %2, %4)
%6 = CONST : int32 arg=2
%7 = RANGE : int32 (%6) arg=0
%8 = CAST : float32 (%7)
%9 = SQRT : float32 (%8)
%10 = IF : void (%4)
%11 = STORE : void (%5, %9, %10)
%12 = MUL : int32 (%2, %3)
%13 = INDEX : float32.ptr(64) (%0, %12)
%14 = DEFINE_GLOBAL : float32.ptr(64) arg=1
%15 = INDEX : float32.ptr(64) (%14, %2)
%16 = LOAD : float32 (%15)
%17 = STORE : void (%13, %16)
%18 = SINK : void (%11, %17)
return %18
)ir");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<UOpPtr>> program = Linearize(*graph);
  EXPECT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("linearize failure"), std::string::npos) << program.status();
}

// A local store indexed by range 1 closes range 1 (its child context drops the ranges of its index), yet the
// load after the barrier is back in range 1: two BLOCKENDs of range 1 nest, and merging them would make a
// block its own source.
TEST(LinearizeTest, NestedBlockendsOfOneRangeAreAnError) {
  absl::StatusOr<UOpPtr> graph = ParseIrSingle(R"ir(%0 = DEFINE_GLOBAL : float32.ptr(64) arg=0
%1 = CONST : int32 arg=2
%2 = RANGE : int32 (%1) arg=0
%3 = CONST : int32 arg=3
%4 = MUL : int32 (%2, %3)
%5 = INDEX : float32.ptr(64) (%0, %4)
%6 = MUL : int32 (%2, %1)
%7 = CAST : float32 (%6)
%8 = STORE : void (%5, %7)
%9 = RANGE : int32 (%1) arg=1
%10 = MUL : int32 (%9, %3)
%11 = INDEX : float32.ptr(64) (%0, %10)
%12 = DEFINE_LOCAL : float32.ptr(16, local=True) arg='temp0'
%13 = INDEX : float32.ptr(16, local=True) (%12, %1)
%14 = MUL : int32 (%9, %1)
%15 = INDEX : float32.ptr(16, local=True) (%12, %14)
%16 = CAST : float32 (%9)
%17 = STORE : void (%15, %16)
%18 = BARRIER : void (%17)
%19 = LOAD : float32 (%13, %18)
%20 = STORE : void (%11, %19)
%21 = SINK : void (%8, %20)
return %21
)ir");
  ASSERT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<std::vector<UOpPtr>> program = Linearize(*graph);
  EXPECT_FALSE(program.ok());
  EXPECT_NE(program.status().message().find("cycle"), std::string::npos) << program.status();
}

TEST(LinearizeTest, NullSinkIsAnError) { EXPECT_FALSE(Linearize(nullptr).ok()); }

}  // namespace
}  // namespace uopc
