#include "tools/filecheck.h"

#include <string>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

constexpr char kInput[] = R"(%0 = DEFINE_VAR : int32 arg=('a', 0, 8)
%1 = CONST : int32 arg=2
%2 = MUL : int32 (%0, %1)
return %2
)";

absl::Status Check(const std::string& checks, const std::string& input = kInput) {
  return FileCheck(checks, input);
}

void ExpectMismatch(const absl::Status& s, std::initializer_list<std::string> parts) {
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  for (const std::string& part : parts) EXPECT_THAT(std::string(s.message()), HasSubstr(part));
}

void ExpectBadChecks(const absl::Status& s, const std::string& part) {
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(std::string(s.message()), HasSubstr(part));
}

// ---- CHECK ----

TEST(FileCheckTest, CheckFindsLiteralText) {
  EXPECT_TRUE(Check("# CHECK: CONST : int32").ok());
  EXPECT_TRUE(Check("// CHECK: return %2").ok());
}

TEST(FileCheckTest, CheckFailsWhenTextIsAbsent) {
  absl::Status s = Check("\n\n# CHECK: SUB");
  ExpectMismatch(s, {"check line 3", "CHECK: `SUB` not found", "input line 1, column 1"});
}

TEST(FileCheckTest, ChecksMatchInOrder) {
  EXPECT_TRUE(Check("CHECK: DEFINE_VAR\nCHECK: MUL\nCHECK: return").ok());
  absl::Status s = Check("CHECK: MUL\nCHECK: DEFINE_VAR");
  ExpectMismatch(s, {"check line 2", "`DEFINE_VAR` not found", "searched from input line 3, column 9",
                     "input line 3: %2 = MUL"});
}

TEST(FileCheckTest, CheckContinuesOnTheSameLineAfterThePreviousMatch) {
  EXPECT_TRUE(Check("CHECK: %2 = MUL\nCHECK: (%0, %1)").ok());
  // `%2` occurs once before MUL on that line, and once later (return %2).
  EXPECT_TRUE(Check("CHECK: MUL\nCHECK: %2").ok());
  ExpectMismatch(Check("CHECK: return\nCHECK: %2\nCHECK: %2"), {"check line 3", "`%2` not found"});
}

TEST(FileCheckTest, LeadingAndTrailingWhitespaceOfPatternIsIgnored) {
  EXPECT_TRUE(Check("CHECK:     MUL : int32    \t").ok());
}

TEST(FileCheckTest, WhitespaceRunsMatchAnyWhitespaceRun) {
  EXPECT_TRUE(Check("CHECK: MUL      :\tint32").ok());
  EXPECT_TRUE(Check("CHECK: a b", "a \t  b").ok());
  // ... but whitespace is not optional.
  ExpectMismatch(Check("CHECK: a b", "ab"), {"`a b` not found"});
}

TEST(FileCheckTest, LiteralTextIsNotARegex) {
  EXPECT_TRUE(Check("CHECK: arg=('a', 0, 8)").ok());
  ExpectMismatch(Check("CHECK: MU.", "MUL"), {"`MU.` not found"});
  EXPECT_TRUE(Check("CHECK: a.*b+[c]", "x a.*b+[c] y").ok());
}

TEST(FileCheckTest, EmbeddedRegex) {
  EXPECT_TRUE(Check("CHECK: %{{[0-9]+}} = MUL").ok());
  EXPECT_TRUE(Check("CHECK: arg={{-?[0-9]+}}").ok());
  ExpectMismatch(Check("CHECK: %{{[0-9]+}} = SUB"), {"`%{{[0-9]+}} = SUB` not found"});
  // Alternation stays inside the braces.
  EXPECT_TRUE(Check("CHECK: = {{ADD|MUL}} :").ok());
  ExpectMismatch(Check("CHECK: x{{a|b}}y", "b"), {"not found"});
  // A quantifier with braces inside the regex.
  EXPECT_TRUE(Check("CHECK: {{a{2}}}x", "aax").ok());
  ExpectMismatch(Check("CHECK: {{a{3}}}x", "aax"), {"not found"});
}

TEST(FileCheckTest, AnchorsMeanLineStartAndEnd) {
  EXPECT_TRUE(Check("CHECK: {{^}}return %2{{$}}").ok());
  ExpectMismatch(Check("CHECK: {{^}}MUL"), {"not found"});
  ExpectMismatch(Check("CHECK: %1{{$}}"), {"not found"});
  // After a match in the middle of a line, ^ does not match where the search resumes.
  ExpectMismatch(Check("CHECK: %2 =\nCHECK-SAME: {{^}} MUL"), {"CHECK-SAME:"});
}

TEST(FileCheckTest, MatchesNeverSpanLines) {
  ExpectMismatch(Check("CHECK: {{int32.*CONST}}"), {"not found"});
  ExpectMismatch(Check("CHECK: {{8\\)\\n%1}}"), {"not found"});
}

TEST(FileCheckTest, CrLfInputIsReadAsLines) {
  EXPECT_TRUE(Check("CHECK: {{^}}a{{$}}\nCHECK-NEXT: {{^}}b{{$}}", "a\r\nb\r\n").ok());
}

// ---- CHECK-NEXT ----

TEST(FileCheckTest, CheckNextOnFollowingLinePasses) {
  EXPECT_TRUE(Check("CHECK: DEFINE_VAR\nCHECK-NEXT: CONST\nCHECK-NEXT: MUL\nCHECK-NEXT: return").ok());
}

TEST(FileCheckTest, CheckNextFailsWhenALineIsSkipped) {
  absl::Status s = Check("CHECK: DEFINE_VAR\nCHECK-NEXT: MUL");
  ExpectMismatch(
      s, {"check line 2", "CHECK-NEXT: `MUL` matched on input line 3",
          "not on the line after the previous match (line 1, check line 1)", "input line 3: %2 = MUL"});
}

TEST(FileCheckTest, CheckNextFailsOnTheSameLine) {
  ExpectMismatch(Check("CHECK: %2\nCHECK-NEXT: MUL"), {"matched on input line 3", "(line 3, check line 1)"});
}

TEST(FileCheckTest, CheckNextFailsPastTheLastLine) {
  ExpectMismatch(Check("CHECK: return %2\nCHECK-NEXT: {{.+}}"), {"CHECK-NEXT:", "not found"});
  // An empty match right after the previous one is on the same line, not the next.
  ExpectMismatch(Check("CHECK: return %2\nCHECK-NEXT: {{.*}}"), {"matched on input line 4"});
}

TEST(FileCheckTest, CheckNextWithoutPreviousMatchIsAnError) {
  ExpectBadChecks(Check("CHECK-NEXT: CONST"), "check line 1: CHECK-NEXT: has no previous CHECK: match");
  ExpectBadChecks(Check("CHECK-NOT: SUB\nCHECK-NEXT: CONST"), "check line 2");
}

// ---- CHECK-SAME ----

TEST(FileCheckTest, CheckSamePasses) {
  EXPECT_TRUE(Check("CHECK: %2 = MUL\nCHECK-SAME: int32\nCHECK-SAME: (%0, %1)").ok());
}

TEST(FileCheckTest, CheckSameFailsWhenOnlyALaterLineMatches) {
  absl::Status s = Check("CHECK: CONST\nCHECK-SAME: (%0");
  ExpectMismatch(s, {"check line 2", "CHECK-SAME: `(%0` not found on the same line",
                     "searched from input line 2, column 11", "first match after it is on input line 3"});
}

TEST(FileCheckTest, CheckSameDoesNotLookBeforeThePreviousMatch) {
  ExpectMismatch(Check("CHECK: MUL\nCHECK-SAME: %2 ="), {"CHECK-SAME:"});
}

TEST(FileCheckTest, CheckSameFailsWhenAbsent) {
  ExpectMismatch(Check("CHECK: MUL\nCHECK-SAME: float"), {"CHECK-SAME: `float` not found in input"});
}

TEST(FileCheckTest, CheckSameWithoutPreviousMatchIsAnError) {
  ExpectBadChecks(Check("CHECK-SAME: CONST"), "CHECK-SAME: has no previous");
}

// ---- CHECK-NOT ----

TEST(FileCheckTest, CheckNotPassesWhenAbsentInRange) {
  EXPECT_TRUE(Check("CHECK-NOT: SUB").ok());
  // MUL exists, but not between the two matches.
  EXPECT_TRUE(Check("CHECK: DEFINE_VAR\nCHECK-NOT: MUL\nCHECK: CONST").ok());
  // DEFINE_VAR exists, but only before the range.
  EXPECT_TRUE(Check("CHECK: CONST\nCHECK-NOT: DEFINE_VAR").ok());
}

TEST(FileCheckTest, CheckNotFailsBetweenMatches) {
  absl::Status s = Check("CHECK: DEFINE_VAR\nCHECK-NOT: CONST\nCHECK: MUL");
  ExpectMismatch(
      s, {"check line 2: CHECK-NOT: `CONST` found in input at line 2, column 6",
          "between the match of check line 1 and the match of check line 3", "input line 2: %1 = CONST"});
}

TEST(FileCheckTest, CheckNotFailsAtStartAndEnd) {
  ExpectMismatch(Check("CHECK-NOT: DEFINE_VAR\nCHECK: MUL"),
                 {"between the start of input and the match of check line 2"});
  ExpectMismatch(Check("CHECK: CONST\nCHECK-NOT: return"),
                 {"between the match of check line 1 and the end of input"});
  ExpectMismatch(Check("CHECK-NOT: MUL"), {"between the start of input and the end of input"});
}

TEST(FileCheckTest, CheckNotRangeEndsWhereTheNextMatchBegins) {
  // "MUL" is the next match; the NOT range stops right before it on the same line.
  EXPECT_TRUE(Check("CHECK: CONST\nCHECK-NOT: MUL\nCHECK: MUL").ok());
  ExpectMismatch(Check("CHECK: CONST\nCHECK-NOT: = MUL\nCHECK: (%0"), {"`= MUL` found"});
}

TEST(FileCheckTest, CheckNotBeforeNextAndSame) {
  EXPECT_TRUE(Check("CHECK: DEFINE_VAR\nCHECK-NOT: MUL\nCHECK-NEXT: CONST").ok());
  ExpectMismatch(Check("CHECK: %2 =\nCHECK-NOT: int32\nCHECK-SAME: (%0"), {"CHECK-NOT: `int32` found"});
  EXPECT_TRUE(Check("CHECK: %2 =\nCHECK-NOT: float\nCHECK-SAME: (%0").ok());
}

TEST(FileCheckTest, CheckNotWithRegex) {
  EXPECT_TRUE(Check("CHECK-NOT: {{^}}%{{[0-9]+}} = {{SUB|ADD}}").ok());
  ExpectMismatch(Check("CHECK-NOT: {{^}}%{{[0-9]+}} = {{SUB|MUL}}"), {"found in input at line 3, column 1"});
}

// ---- the check text itself ----

TEST(FileCheckTest, PrefixMustStartAWord) {
  // XCHECK and MY-CHECK are not CHECK directives; without a real one the check text is rejected.
  ExpectBadChecks(Check("XCHECK: nothing\nMY-CHECK: nothing"), "no CHECK: directives");
  // Prose mentioning CHECK without a colon is not a directive either.
  EXPECT_TRUE(Check("This CHECK-based test... CHECK: MUL").ok());
}

TEST(FileCheckTest, CustomPrefix) {
  EXPECT_TRUE(FileCheck("IR: MUL\nIR-NEXT: return\nCHECK: not-present", kInput, "IR").ok());
  ExpectMismatch(FileCheck("IR: return\nIR-NOT: MUL", "MUL\nreturn MUL", "IR"), {"IR-NOT: `MUL` found"});
  ExpectBadChecks(FileCheck("CHECK: x", "x", "IR"), "no IR: directives");
  ExpectBadChecks(FileCheck("CHECK: x", "x", "1X"), "check prefix");
  ExpectBadChecks(FileCheck("CHECK: x", "x", ""), "check prefix");
}

TEST(FileCheckTest, MalformedChecksAreInvalidArgument) {
  ExpectBadChecks(Check(""), "no CHECK: directives");
  ExpectBadChecks(Check("CHECK:   "), "check line 1: CHECK: has an empty pattern");
  ExpectBadChecks(Check("\nCHECK-NOT:"), "check line 2: CHECK-NOT: has an empty pattern");
  ExpectBadChecks(Check("CHECK: {{[0-9}}"), "check line 1: invalid regex {{[0-9}}");
  ExpectBadChecks(Check("CHECK: {{a(}}"), "invalid regex");
  ExpectBadChecks(Check("CHECK: a\nCHECK: {{abc"), "check line 2: `{{` without a closing `}}`");
  ExpectBadChecks(Check("CHECK-DAG: MUL"), "unsupported directive CHECK-DAG:");
  ExpectBadChecks(Check("CHECK-LABEL: MUL"), "unsupported directive CHECK-LABEL:");
}

TEST(FileCheckTest, EmptyInput) {
  EXPECT_TRUE(Check("CHECK-NOT: x", "").ok());
  ExpectMismatch(Check("CHECK: x", ""), {"not found", "empty input"});
}

TEST(FileCheckTest, LongLinesAreTruncatedInMessages) {
  std::string input(1000, 'a');
  absl::Status s = Check("CHECK: b", input);
  ExpectMismatch(s, {"..."});
  EXPECT_LT(s.message().size(), 600u);
}

}  // namespace
}  // namespace uopc
