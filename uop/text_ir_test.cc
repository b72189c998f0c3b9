#include "uop/text_ir.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "uop/arg.h"
#include "uop/dtype.h"
#include "uop/ops.h"
#include "uop/uop.h"

namespace uopc {
namespace {

// A payload as a higher layer would define one: TestBox(v=7).
class TestBox : public ArgPayload {
 public:
  static constexpr absl::string_view kTypeName = "TestBox";
  explicit TestBox(int64_t v) : v_(v) {}
  absl::string_view type_name() const override { return kTypeName; }
  size_t Hash() const override { return absl::HashOf(v_); }
  bool Equals(const ArgPayload& other) const override { return static_cast<const TestBox&>(other).v_ == v_; }
  std::string ToString() const override { return absl::StrCat("TestBox(v=", v_, ")"); }

 private:
  int64_t v_;
};

absl::StatusOr<PayloadParse> ParseTestBox(absl::string_view text) {
  constexpr absl::string_view kPrefix = "TestBox(v=";
  if (text.substr(0, kPrefix.size()) != kPrefix) return absl::InvalidArgumentError("expected TestBox(v=");
  size_t p = kPrefix.size();
  bool negative = p < text.size() && text[p] == '-';
  if (negative) ++p;
  size_t digits = p;
  int64_t v = 0;
  while (p < text.size() && text[p] >= '0' && text[p] <= '9' && p - digits < 18) {
    v = v * 10 + (text[p++] - '0');
  }
  if (p == digits || p >= text.size() || text[p] != ')') {
    return absl::InvalidArgumentError("expected digits and ')'");
  }
  return PayloadParse{std::make_shared<const TestBox>(negative ? -v : v), p + 1};
}

const bool kTestBoxRegistered = [] {
  RegisterPayloadParser(TestBox::kTypeName, ParseTestBox);
  return true;
}();

Arg Box(int64_t v) { return Arg(std::shared_ptr<const ArgPayload>(std::make_shared<const TestBox>(v))); }

double BitsToDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof(d));
  return d;
}

// Prints, parses, and checks that the parse gives back the very same nodes and that printing is stable.
void ExpectRoundTrip(absl::Span<const UOpPtr> roots) {
  std::string text = PrintIr(roots);
  absl::StatusOr<std::vector<UOpPtr>> parsed = ParseIr(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << text;
  ASSERT_EQ(parsed->size(), roots.size()) << text;
  for (size_t i = 0; i < roots.size(); ++i) {
    EXPECT_EQ((*parsed)[i].get(), roots[i].get()) << "root " << i << "\n" << text;
  }
  EXPECT_EQ(PrintIr(*parsed), text);
}

void ExpectRoundTrip(const UOpPtr& root) { ExpectRoundTrip(absl::MakeConstSpan(&root, 1)); }

std::string ParseError(absl::string_view text) {
  absl::StatusOr<std::vector<UOpPtr>> parsed = ParseIr(text);
  if (parsed.ok()) return "<parsed>";
  EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(parsed.status().message());
}

TEST(TextIrTest, PrintsTheDocumentedForm) {
  UOpPtr a = UOp::Variable("a", 0, 8);
  UOpPtr sum = a * 2 + a;
  UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, 0);
  UOpPtr sink = UOp::Sink({buf.index(sum.cast(dtypes::kInt32)).store({sum.cast(dtypes::kFloat32)})}, "k");
  EXPECT_EQ(PrintIr(sink),
            "%0 = DEFINE_GLOBAL : float32.ptr(16) arg=0\n"
            "%1 = DEFINE_VAR : int32 arg=('a', 0, 8)\n"
            "%2 = CONST : int32 arg=2\n"
            "%3 = MUL : int32 (%1, %2)\n"
            "%4 = ADD : int32 (%3, %1)\n"
            "%5 = INDEX : float32.ptr(16) (%0, %4)\n"
            "%6 = CAST : float32 (%4)\n"
            "%7 = STORE : void (%5, %6)\n"
            "%8 = SINK : void (%7) arg='k'\n"
            "return %8\n");
  ExpectRoundTrip(sink);
}

TEST(TextIrTest, DTypeSpelling) {
  EXPECT_EQ(DTypeToIr(dtypes::kFloat32), "float32");
  EXPECT_EQ(DTypeToIr(dtypes::kBFloat16.Vec(8)), "bfloat16.vec(8)");
  EXPECT_EQ(DTypeToIr(dtypes::kUInt8.Ptr()), "uint8.ptr(-1)");
  EXPECT_EQ(DTypeToIr(dtypes::kFloat16.Ptr(16, true).Vec(4)), "float16.ptr(16, local=True).vec(4)");
  EXPECT_EQ(DTypeToIr(dtypes::kFloat32.Vec(4).Ptr(64)), "float32.vec(4).ptr(64)");
}

// ---- round trips ----

std::vector<DType> EveryDTypeShape() {
  std::vector<DType> out;
  for (int s = 0; s < kNumScalarTypes; ++s) {
    DType scalar(static_cast<ScalarType>(s));
    out.push_back(scalar);
    out.push_back(scalar.Vec(2));
    out.push_back(scalar.Vec(4));
    out.push_back(scalar.Vec(65535));
    out.push_back(scalar.Ptr());
    out.push_back(scalar.Ptr(0));
    out.push_back(scalar.Ptr(16));
    out.push_back(scalar.Ptr(int64_t{1} << 40, /*local=*/true));
    out.push_back(scalar.Vec(4).Ptr(8));
    out.push_back(scalar.Ptr(8).Vec(4));
    out.push_back(scalar.Vec(3).Ptr(9, /*local=*/true).Vec(2));
  }
  return out;
}

TEST(TextIrTest, RoundTripsEveryDTypeAsNodeTypeAndAsArg) {
  std::vector<UOpPtr> roots;
  for (DType dt : EveryDTypeShape()) {
    roots.push_back(UOp::New(Ops::NOOP, dt, {}, Arg(dt)));
    ExpectRoundTrip(roots.back());
  }
  ExpectRoundTrip(roots);
  // Every shape is printed differently (the printer loses nothing).
  absl::flat_hash_set<std::string> spellings;
  for (const UOpPtr& r : roots) spellings.insert(DTypeToIr(r->dtype()));
  EXPECT_EQ(spellings.size(), absl::flat_hash_set<const UOp*>(roots.begin(), roots.end()).size());
}

std::vector<Arg> EveryArgKind() {
  std::vector<Arg> args = {
      Arg(),
      Arg(0),
      Arg(-1),
      Arg(std::numeric_limits<int64_t>::min()),
      Arg(std::numeric_limits<int64_t>::max()),
      Arg(0.0),
      Arg(-0.0),
      Arg(1.0),
      Arg(0.1),
      Arg(1e-05),
      Arg(1e16),
      Arg(123456789012345678.0),
      Arg(std::numeric_limits<double>::infinity()),
      Arg(-std::numeric_limits<double>::infinity()),
      Arg(std::numeric_limits<double>::quiet_NaN()),
      Arg(-std::numeric_limits<double>::quiet_NaN()),
      Arg(BitsToDouble(0x7ff0000000000001ull)),  // signalling NaN
      Arg(BitsToDouble(0x7ff8dead0000beefull)),  // NaN payload
      Arg(std::numeric_limits<double>::denorm_min()),
      Arg(std::numeric_limits<double>::max()),
      Arg(std::numeric_limits<double>::lowest()),
      Arg(std::numeric_limits<double>::min()),
      Arg(true),
      Arg(false),
      Arg(""),
      Arg("plain"),
      Arg("it's"),
      Arg("both ' and \""),
      Arg("esc \\ \n \r \t \x01 \x7f \xff"),
      Arg(std::string("nul\0byte", 8)),
      Arg(Arg::Tuple{}),
      Arg({Arg(1)}),
      Arg({Arg(1), Arg(2)}),
      Arg({Arg(), Arg({Arg("x"), Arg({})}), Arg(Ops::ADD), Arg(dtypes::kFloat32.Vec(4)), Arg(-0.0)}),
      Arg(dtypes::kInt8),
      Arg(dtypes::kFloat16.Ptr(16, true).Vec(2)),
      Box(7),
      Box(-3),
      Arg({Box(1), Box(2)}),
  };
  std::string every_byte;
  for (int c = 0; c < 256; ++c) every_byte.push_back(static_cast<char>(c));
  args.push_back(Arg(every_byte));
  for (int i = 0; i < kNumOps; ++i) args.push_back(Arg(static_cast<Ops>(i)));
  Arg nested = Arg(5);
  for (int i = 0; i < 90; ++i) nested = Arg({nested});
  args.push_back(nested);
  return args;
}

TEST(TextIrTest, RoundTripsEveryArgKindAsArgAndAsTag) {
  std::vector<UOpPtr> roots;
  for (const Arg& arg : EveryArgKind()) {
    roots.push_back(UOp::New(Ops::CUSTOM, dtypes::kInt32, {}, arg));
    ExpectRoundTrip(roots.back());
    roots.push_back(UOp::New(Ops::CUSTOM, dtypes::kInt32, {}, "with tag", arg));
    ExpectRoundTrip(roots.back());
  }
  ExpectRoundTrip(roots);
}

TEST(TextIrTest, RoundTripsEveryOp) {
  std::vector<UOpPtr> roots;
  UOpPtr x = UOp::Variable("x", -3, 5);
  for (int i = 0; i < kNumOps; ++i) {
    Ops op = static_cast<Ops>(i);
    roots.push_back(UOp::New(op, dtypes::kInt32, {x, x}, Arg(op)));
  }
  ExpectRoundTrip(roots);
}

TEST(TextIrTest, FloatsRoundTripBitForBit) {
  std::mt19937_64 rng(12345);
  std::vector<UOpPtr> roots;
  for (int i = 0; i < 20000; ++i) {
    uint64_t bits = rng();
    if (i % 4 == 1) bits &= 0x800fffffffffffffull;  // subnormals
    if (i % 4 == 2) bits |= 0x7ff0000000000000ull;  // NaNs and infinities
    roots.push_back(UOp::New(Ops::CONST, dtypes::kFloat64, {}, Arg(BitsToDouble(bits))));
  }
  ExpectRoundTrip(roots);
}

TEST(TextIrTest, FloatSpelling) {
  auto arg_text = [](double d) {
    std::string text = PrintIr(UOp::New(Ops::CONST, dtypes::kFloat32, {}, Arg(d)));
    size_t at = text.find("arg=");
    return text.substr(at + 4, text.find('\n') - at - 4);
  };
  EXPECT_EQ(arg_text(1.0), "1.0");
  EXPECT_EQ(arg_text(-0.0), "-0.0");
  EXPECT_EQ(arg_text(1e-05), "1e-05");
  EXPECT_EQ(arg_text(1e16), "1e+16");
  EXPECT_EQ(arg_text(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(arg_text(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(arg_text(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(arg_text(-std::numeric_limits<double>::quiet_NaN()), "nan(0xfff8000000000000)");
}

TEST(TextIrTest, Uint64ConstantsAboveInt64RoundTrip) {
  std::vector<UOpPtr> roots;
  for (absl::int128 v : {absl::int128(0), absl::int128(std::numeric_limits<int64_t>::max()),
                         absl::int128(1) << 63, (absl::int128(1) << 64) - 1}) {
    UOpPtr c = UOp::Const(dtypes::kUInt64, ConstValue::Int(v));
    ASSERT_EQ(c->const_value(), ConstValue::Int(v));
    roots.push_back(c);
  }
  UOpPtr vconst = UOp::New(Ops::VCONST, dtypes::kUInt64.Vec(2), {}, Arg({Arg(int64_t{-1}), Arg(5)}));
  roots.push_back(vconst);
  ExpectRoundTrip(roots);
  std::string text = PrintIr(roots);
  EXPECT_NE(text.find("CONST : uint64 arg=18446744073709551615\n"), std::string::npos) << text;
  EXPECT_NE(text.find("CONST : uint64 arg=9223372036854775808\n"), std::string::npos) << text;
  EXPECT_NE(text.find("arg=(18446744073709551615, 5)\n"), std::string::npos) << text;
  // A negative literal in a uint64 constant is the same bit pattern, printed back as the unsigned value.
  absl::StatusOr<UOpPtr> negative = ParseIrSingle("%0 = CONST : uint64 arg=-1");
  ASSERT_TRUE(negative.ok()) << negative.status();
  EXPECT_EQ(negative->get(), roots[3].get());
}

TEST(TextIrTest, RoundTripsEveryFileInTestdata) {
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator("testdata/ir")) {
    if (entry.path().extension() != ".uop") continue;
    ++files;
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path());
    std::stringstream contents;
    contents << in.rdbuf();
    std::string text = contents.str();
    absl::StatusOr<std::vector<UOpPtr>> parsed = ParseIr(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    ASSERT_FALSE(parsed->empty());
    ExpectRoundTrip(*parsed);
    // The files are in canonical form apart from comment lines.
    std::string code;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      if (line.empty() || line[0] == '#' || absl::StartsWith(line, "//")) continue;
      absl::StrAppend(&code, line, "\n");
    }
    EXPECT_EQ(PrintIr(*parsed), code);
  }
  EXPECT_GE(files, 8);
}

// ---- multiple roots, comments, non-canonical input ----

TEST(TextIrTest, SeveralRootsShareNodes) {
  UOpPtr a = UOp::Variable("a", 0, 10);
  UOpPtr b = a + 1;
  UOpPtr c = b * b;
  std::vector<UOpPtr> roots = {b, c, a, c};
  std::string text = PrintIr(roots);
  EXPECT_EQ(text,
            "%0 = DEFINE_VAR : int32 arg=('a', 0, 10)\n"
            "%1 = CONST : int32 arg=1\n"
            "%2 = ADD : int32 (%0, %1)\n"
            "return %2\n"
            "%3 = MUL : int32 (%2, %2)\n"
            "return %3\n"
            "return %0\n"
            "return %3\n");
  ExpectRoundTrip(roots);
  absl::StatusOr<std::vector<UOpPtr>> one_line = ParseIr(
      "%0 = DEFINE_VAR : int32 arg=('a', 0, 10)\n%1 = CONST : int32 arg=1\n%2 = ADD : int32 (%0, %1)\n"
      "%3 = MUL : int32 (%2, %2)\nreturn %2, %3, %0, %3\n");
  ASSERT_TRUE(one_line.ok()) << one_line.status();
  EXPECT_EQ(*one_line, roots);
}

TEST(TextIrTest, WithoutReturnTheLastNodeIsTheRoot) {
  absl::StatusOr<std::vector<UOpPtr>> parsed =
      ParseIr("%x = CONST : int32 arg=1\n%y = CONST : int32 arg=2\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->size(), 1u);
  EXPECT_EQ((*parsed)[0].get(), UOp::Const(dtypes::kInt32, 2).get());
  absl::StatusOr<std::vector<UOpPtr>> empty = ParseIr("# nothing here\n\n");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());
  EXPECT_EQ(ParseIrSingle("").status().message(), "expected a text with one root, got 0");
  EXPECT_EQ(ParseIrSingle("%0 = NOOP : void\nreturn %0, %0").status().message(),
            "expected a text with one root, got 2");
}

TEST(TextIrTest, AcceptsCommentsAliasesNamesAndLineBreaksInsideParentheses) {
  absl::StatusOr<UOpPtr> parsed = ParseIrSingle(
      "# RUN: uopc simplify %s | FileCheck %s\n"
      "// CHECK: %2 = ADD\n"
      "\r\n"
      "  %acc =   DEFINE_VAR:int  arg = (\"acc\",   # name\n"
      "        0, 7,)       // trailing comma, line break\n"
      "%k = CONST : float.vec(4) arg=2.5E0\n"
      "%sum = ADD : int (%acc,\n"
      "                  %acc)  tag = 1\n"
      "%p = DEFINE_GLOBAL : half.ptr() arg=0\n"
      "%q = DEFINE_GLOBAL : half.ptr(4, local=False).vec(1) arg=1\n"
      "%s = SINK : void (%sum, %k, %p, %q) arg=(dtypes.uchar, Ops.ADD)\n"
      "return %s # the end\n");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  UOpPtr acc = UOp::Variable("acc", 0, 7);
  UOpPtr sum = UOp::New(Ops::ADD, dtypes::kInt32, {acc, acc}, {}, 1);
  UOpPtr k = UOp::New(Ops::CONST, dtypes::kFloat32.Vec(4), {}, 2.5);
  UOpPtr p = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat16.Ptr(-1), {}, 0);
  UOpPtr q = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat16.Ptr(4), {}, 1);
  UOpPtr s = UOp::New(Ops::SINK, dtypes::kVoid, {sum, k, p, q}, Arg({Arg(dtypes::kUInt8), Arg(Ops::ADD)}));
  EXPECT_EQ(parsed->get(), s.get()) << PrintIr(*parsed);
}

// ---- errors ----

TEST(TextIrTest, ErrorsSayWhereAndWhat) {
  struct Case {
    std::string text;
    std::string error;
  };
  const Case cases[] = {
      {"%0 = ADD : int32 (%1, %1)", "1:19: undefined value %1"},
      {"%0 = CONST : int32 arg=1\n%0 = CONST : int32 arg=2",
       "2:1: redefinition of %0 (first defined at 1:1)"},
      {"%a = CONST : int32 arg=1\n\n  %a = CONST : int32 arg=2",
       "3:3: redefinition of %a (first defined at 1:1)"},
      {"%0 = FOO : int32", "1:6: unknown op 'FOO'"},
      {"%0 = CONST : int33 arg=1", "1:14: unknown dtype 'int33'"},
      {"%0 = CONST int32", "1:12: expected ':', got 'int32'"},
      {"%0 = CONST : int32 arg=9223372036854775808", "1:24: integer literal out of the int64 range"},
      {"%0 = CONST : uint64 arg=18446744073709551616", "1:25: integer literal out of the uint64 range"},
      {"%0 = CONST : float32 arg=1e999", "1:26: float literal out of the double range"},
      {"%0 = CONST : float32 arg=-1e-400", "1:26: float literal out of the double range"},
      {"%0 = CONST : float32 arg=1.5e", "1:30: expected exponent digits, got end of input"},
      {"%0 = CONST : int32 arg=12ab", "1:26: expected a delimiter after the number, got 'ab'"},
      {"%0 = CONST : int32 arg=1 junk", "1:26: expected end of line, got 'junk'"},
      {"%0 = CONST : int32 arg='abc", "1:24: unterminated string literal"},
      {"%0 = CONST : int32 arg='a\\qb'", "1:26: unknown escape sequence '\\q' in string"},
      {"%0 = CONST : int32 arg='a\\\n'", "1:27: expected an escape character after '\\', got end of line"},
      {"%0 = CONST : int32 arg='\\x4'", "1:28: expected two hex digits after \\x, got '''"},
      {"%0 = CUSTOM : int32 arg=(1", "1:27: expected ',' or ')', got end of input"},
      {"%0 = CUSTOM : int32 arg=(5)", "1:25: a one-element tuple needs a trailing comma: (x,)"},
      {"%0 = CUSTOM : int32 arg=nan(0x1)", "1:25: nan(0x...) bits are not a NaN"},
      {"%0 = CUSTOM : int32 arg=Foo(1)",
       "1:25: expected an arg, got 'Foo' (not a literal, and no payload parser is registered for it)"},
      {"%0 = CUSTOM : int32 arg=TestBox(v=x)", "1:25: bad TestBox payload: expected digits and ')'"},
      {"%0 = CUSTOM : int32 arg=\x01", "1:25: expected an arg, got byte 0x01"},
      {"%0 = CONST : float32.vec(0)", "1:21: invalid vector width 0 for float32"},
      {"%0 = CONST : float32.vec(4).vec(2)", "1:28: invalid vector width 2 for float32.vec(4)"},
      {"%0 = CONST : float32.ptr(-2)", "1:21: invalid pointer type float32.ptr(-2)"},
      {"%0 = CONST : float32.ptr(4).ptr(4)", "1:28: invalid pointer type float32.ptr(4).ptr(4)"},
      {"%0 = CONST : float32.ptr(4, local=Maybe)", "1:35: expected True or False, got 'Maybe'"},
      {"%0 = CONST : float32.foo", "1:22: expected 'vec' or 'ptr', got 'foo'"},
      {"\n\n\t%0 = NOOP : void\n  return %1", "4:10: undefined value %1"},
      {"return", "1:7: expected a value name like %0, got end of input"},
      {"x = 1", "1:1: expected '%name = ...' or 'return', got 'x'"},
      {"% = NOOP : void", "1:2: expected a value name after '%', got ' '"},
      {"%0 = NOOP : void arg=", "1:22: expected an arg, got end of input"},
      {"%0 = NOOP : void (%0)", "1:19: undefined value %0"},
  };
  for (const Case& c : cases) EXPECT_EQ(ParseError(c.text), c.error) << c.text;
}

TEST(TextIrTest, DeepNestingIsAnErrorNotAStackOverflow) {
  // 100 levels are fine: ((((),),),) ...
  std::string ok = "%0 = CUSTOM : void arg=" + std::string(100, '(') + ")";
  for (int i = 1; i < 100; ++i) ok += ",)";
  absl::StatusOr<UOpPtr> parsed = ParseIrSingle(ok);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ExpectRoundTrip(*parsed);
  // 101 are not, nor ten million.
  std::string deep = "%0 = CUSTOM : void arg=" + std::string(101, '(');
  EXPECT_EQ(ParseError(deep), "1:124: tuples nested deeper than 100 levels");
  std::string huge = "%0 = CUSTOM : void arg=" + std::string(10'000'000, '(');
  EXPECT_EQ(ParseError(huge), "1:124: tuples nested deeper than 100 levels");
}

TEST(TextIrTest, HugeInputsAreErrorsOrGraphs) {
  EXPECT_EQ(ParseError("%0 = CONST : int32 arg=" + std::string(1'000'000, '9')),
            "1:24: integer literal out of the int64 range");
  EXPECT_EQ(ParseError("%0 = CONST : int32 arg='" + std::string(1'000'000, 'x')),
            "1:24: unterminated string literal");
  absl::StatusOr<UOpPtr> long_string =
      ParseIrSingle("%0 = CONST : int32 arg='" + std::string(1'000'000, 'x') + "'");
  ASSERT_TRUE(long_string.ok());
  EXPECT_EQ((*long_string)->arg().as_string().size(), 1'000'000u);
  std::string long_float = "%0 = CONST : float64 arg=0." + std::string(100'000, '3');
  absl::StatusOr<UOpPtr> f = ParseIrSingle(long_float);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ((*f)->arg().as_float(), 1.0 / 3.0);
}

// ---- scale ----

TEST(TextIrTest, MillionNodeChainPrintsAndParsesWithoutRecursion) {
  constexpr int kNodes = 1'000'000;
  UOpPtr one = UOp::Const(dtypes::kInt64, 1);
  UOpPtr x = UOp::Variable("x", 0, 10, dtypes::kInt64);
  for (int i = 0; i < kNodes; ++i) x = UOp::New(Ops::ADD, dtypes::kInt64, {x, one});
  std::string text = PrintIr(x);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), kNodes + 3);
  absl::StatusOr<UOpPtr> parsed = ParseIrSingle(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->get(), x.get());
}

}  // namespace
}  // namespace uopc
