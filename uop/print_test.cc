#include "uop/print.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "re2/re2.h"
#include "uop/spec.h"
#include "uop/uop.h"

namespace uopc {
namespace {

// ---- test-only payloads standing in for the ShapeTracker and KernelInfo of higher layers ----

// A payload that prints a fixed text: the uop layer cannot build a real ShapeTracker, and the printers only
// need the payload's ToString().
class FixedTextPayload : public ArgPayload {
 public:
  FixedTextPayload(std::string type_name, std::string text)
      : type_name_(std::move(type_name)), text_(std::move(text)) {}
  absl::string_view type_name() const override { return type_name_; }
  size_t Hash() const override { return absl::HashOf(text_); }
  bool Equals(const ArgPayload& other) const override {
    return text_ == static_cast<const FixedTextPayload&>(other).text_;
  }
  std::string ToString() const override { return text_; }

 private:
  std::string type_name_;
  std::string text_;
};

// tinygrad's repr of a one-view ShapeTracker with no offset and no mask, e.g. shape "(3,)", strides "(1,)".
Arg ShapeTracker(const std::string& shape, const std::string& strides, bool contiguous) {
  return Arg(std::make_shared<FixedTextPayload>(
      "ShapeTracker",
      absl::StrCat("ShapeTracker(views=(View(shape=", shape, ", strides=", strides,
                   ", offset=0, mask=None, contiguous=", contiguous ? "True" : "False", "),))")));
}

Arg KernelInfo(const std::string& name, int upcasted) {
  return Arg(std::make_shared<FixedTextPayload>(
      "KernelInfo", absl::StrCat("KernelInfo(name='", name, "', local_dims=0, upcasted=", upcasted,
                                 ", dont_use_locals=False)")));
}

// ---- reading the golden blocks out of the copied tinygrad DEBUG=6 outputs ----

std::string ReadExample(const std::string& name) {
  const std::string rel = "testdata/tinygrad_examples/" + name;
  std::vector<std::string> candidates = {rel};
  if (const char* srcdir = std::getenv("TEST_SRCDIR")) {
    const char* ws = std::getenv("TEST_WORKSPACE");
    candidates.push_back(absl::StrCat(srcdir, "/", ws ? ws : "uopc", "/", rel));
  }
  for (const std::string& path : candidates) {
    std::ifstream in(path);
    if (!in) continue;
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  ADD_FAILURE() << "cannot read " << rel;
  return "";
}

std::vector<std::string> Lines(const std::string& text) { return absl::StrSplit(text, '\n'); }

// The n-th (0-based) tree dump rooted at a SINK: from its first line to the line closing its last
// parenthesis.
std::string TreeBlock(const std::string& text, int n) {
  std::vector<std::string> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].rfind("UOp(Ops.SINK", 0) != 0 || n-- > 0) continue;
    std::vector<std::string> block;
    int depth = 0;
    for (size_t j = i; j < lines.size(); ++j) {
      block.push_back(lines[j]);
      for (char c : lines[j]) depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (depth == 0) return absl::StrJoin(block, "\n");
    }
    break;
  }
  ADD_FAILURE() << "no tree block " << n;
  return "";
}

// The (only) print_uops listing: the run of lines that look like `  12 Ops.ADD ...`, each with its newline.
std::string ListingBlock(const std::string& text) {
  static const RE2 kListingLine(R"(^ *\d+ Ops\.[A-Z_]+ *: )");
  std::string out;
  bool in_block = false;
  for (const std::string& line : Lines(text)) {
    if (RE2::PartialMatch(line, kListingLine)) {
      in_block = true;
      out += line + "\n";
    } else if (in_block) {
      break;
    }
  }
  EXPECT_FALSE(out.empty()) << "no listing";
  return out;
}

size_t CountOf(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// ---- builders ----

UOpPtr Global(DType elem, int64_t size, int index) {
  return UOp::New(Ops::DEFINE_GLOBAL, elem.Ptr(size), {}, index);
}
UOpPtr View(Arg st) { return UOp::New(Ops::VIEW, dtypes::kVoid, {}, std::move(st)); }
UOpPtr Op(Ops op, DType dt, std::initializer_list<UOpPtr> src, Arg arg = {}) {
  return UOp::New(op, dt, src, arg);
}
UOpPtr Int(int64_t v) { return UOp::Const(dtypes::kInt32, v); }
UOpPtr Float(double v) { return UOp::Const(dtypes::kFloat32, v); }
UOpPtr Range(int64_t end, int axis) { return Op(Ops::RANGE, dtypes::kInt32, {Int(end)}, axis); }

std::vector<const UOp*> Borrow(const std::vector<UOpPtr>& v) {
  std::vector<const UOp*> out;
  for (const UOpPtr& u : v) out.push_back(u.get());
  return out;
}

// add_int3 / add_int3_cast_float: data0 = data1 + data2 over 3 ints (optionally cast to float).
UOpPtr AddInt3Ast(bool cast_float, Arg sink_arg) {
  DType out = cast_float ? dtypes::kFloat32 : dtypes::kInt32;
  UOpPtr st = View(ShapeTracker("(3,)", "(1,)", true));
  UOpPtr a = Op(Ops::LOAD, dtypes::kInt32, {Global(dtypes::kInt32, 3, 1), st});
  UOpPtr b = Op(Ops::LOAD, dtypes::kInt32, {Global(dtypes::kInt32, 3, 2), st});
  UOpPtr value = Op(Ops::ADD, dtypes::kInt32, {a, b});
  if (cast_float) value = Op(Ops::CAST, dtypes::kFloat32, {value});
  UOpPtr store = Op(Ops::STORE, dtypes::kVoid, {Global(out, 3, 0), st, value});
  return UOp::Sink({store}, std::move(sink_arg));
}

// The linearized add_int3 program, in tinygrad's order.
std::vector<UOpPtr> AddInt3Program(bool cast_float) {
  DType out = cast_float ? dtypes::kFloat32 : dtypes::kInt32;
  UOpPtr g0 = Global(out, 3, 0), g1 = Global(dtypes::kInt32, 3, 1), g2 = Global(dtypes::kInt32, 3, 2);
  UOpPtr c3 = Int(3);
  UOpPtr r = Range(3, 0);
  UOpPtr i1 = Op(Ops::INDEX, g1->dtype(), {g1, r});
  UOpPtr l1 = Op(Ops::LOAD, dtypes::kInt32, {i1});
  UOpPtr i2 = Op(Ops::INDEX, g2->dtype(), {g2, r});
  UOpPtr l2 = Op(Ops::LOAD, dtypes::kInt32, {i2});
  UOpPtr i0 = Op(Ops::INDEX, g0->dtype(), {g0, r});
  UOpPtr add = Op(Ops::ADD, dtypes::kInt32, {l1, l2});
  std::vector<UOpPtr> p = {g0, g1, g2, c3, r, i1, l1, i2, l2, i0, add};
  UOpPtr value = add;
  if (cast_float) p.push_back(value = Op(Ops::CAST, dtypes::kFloat32, {add}));
  UOpPtr store = Op(Ops::STORE, dtypes::kVoid, {i0, value});
  p.push_back(store);
  p.push_back(Op(Ops::ENDRANGE, dtypes::kVoid, {r}));
  p.push_back(UOp::Sink({store}, KernelInfo("E_3", 0)));
  return p;
}

// sum_16x16: the reduce AST, with the views of before or after optimization.
UOpPtr SumAst(Arg out_st, Arg in_st, std::vector<int64_t> axes, Arg sink_arg) {
  UOpPtr ld = Op(Ops::LOAD, dtypes::kFloat32, {Global(dtypes::kFloat32, 256, 1), View(std::move(in_st))});
  UOpPtr red = Op(Ops::REDUCE_AXIS, dtypes::kFloat32, {ld}, {Ops::ADD, Arg::IntTuple(axes)});
  UOpPtr store =
      Op(Ops::STORE, dtypes::kVoid, {Global(dtypes::kFloat32, 1, 0), View(std::move(out_st)), red});
  return UOp::Sink({store}, std::move(sink_arg));
}

// matmul_64: C[i, j] = sum_k A[i, k] * B[k, j], 64x64 floats.
UOpPtr MatmulAst(Arg sink_arg) {
  UOpPtr a = Op(Ops::LOAD, dtypes::kFloat32,
                {Global(dtypes::kFloat32, 4096, 1), View(ShapeTracker("(64, 64, 64)", "(64, 0, 1)", false))});
  UOpPtr b = Op(Ops::LOAD, dtypes::kFloat32,
                {Global(dtypes::kFloat32, 4096, 2), View(ShapeTracker("(64, 64, 64)", "(0, 1, 64)", false))});
  UOpPtr red = Op(Ops::REDUCE_AXIS, dtypes::kFloat32, {Op(Ops::MUL, dtypes::kFloat32, {a, b})},
                  {Ops::ADD, Arg::IntTuple({2})});
  UOpPtr store =
      Op(Ops::STORE, dtypes::kVoid,
         {Global(dtypes::kFloat32, 4096, 0), View(ShapeTracker("(64, 64, 1)", "(64, 1, 0)", true)), red});
  return UOp::Sink({store}, std::move(sink_arg));
}

// ---- golden tests against tinygrad's output ----

TEST(PrintUOpTreeGolden, AddInt3SharesTheViewAsX2) {
  const std::string text = ReadExample("add_int3.debug6.txt");
  // The golden block itself holds the sharing case: the VIEW is defined once as x2 and referenced twice.
  ASSERT_NE(TreeBlock(text, 0).find("    x2:=UOp(Ops.VIEW, dtypes.void, arg=ShapeTracker("),
            std::string::npos);
  ASSERT_EQ(CountOf(TreeBlock(text, 0), "\n         x2,)),"), 2);
  EXPECT_EQ(PrintUOpTree(AddInt3Ast(false, Arg())), TreeBlock(text, 0));
  EXPECT_EQ(PrintUOpTree(AddInt3Ast(false, KernelInfo("E_3", 0))), TreeBlock(text, 1));
}

TEST(PrintUOpTreeGolden, AddInt3CastFloat) {
  const std::string text = ReadExample("add_int3_cast_float.debug6.txt");
  EXPECT_EQ(PrintUOpTree(AddInt3Ast(true, Arg())), TreeBlock(text, 0));
  EXPECT_EQ(PrintUOpTree(AddInt3Ast(true, KernelInfo("E_3", 0))), TreeBlock(text, 1));
}

TEST(PrintUOpTreeGolden, Sum16x16PrintsReduceAxisArgs) {
  const std::string text = ReadExample("sum_16x16.debug6.txt");
  Arg out = ShapeTracker("(1, 1)", "(0, 0)", true);
  EXPECT_EQ(PrintUOpTree(SumAst(out, ShapeTracker("(16, 16)", "(16, 1)", true), {0, 1}, Arg())),
            TreeBlock(text, 0));
  EXPECT_EQ(
      PrintUOpTree(SumAst(out, ShapeTracker("(64, 4)", "(4, 1)", true), {0, 1}, KernelInfo("r_64_4", 1))),
      TreeBlock(text, 1));

  const std::string noopt = ReadExample("sum_16x16.debug6_noopt.txt");
  EXPECT_EQ(PrintUOpTree(SumAst(ShapeTracker("(1,)", "(0,)", true), ShapeTracker("(256,)", "(1,)", true), {0},
                                KernelInfo("r_256", 0))),
            TreeBlock(noopt, 1));
}

TEST(PrintUOpTreeGolden, Matmul64) {
  const std::string text = ReadExample("matmul_64.debug6_noopt.txt");
  EXPECT_EQ(PrintUOpTree(MatmulAst(Arg())), TreeBlock(text, 0));
  EXPECT_EQ(PrintUOpTree(MatmulAst(KernelInfo("r_64_64_64", 0))), TreeBlock(text, 1));
}

TEST(PrintUOpsListingGolden, AddInt3) {
  EXPECT_EQ(PrintUOpsListing(Borrow(AddInt3Program(false))),
            ListingBlock(ReadExample("add_int3.debug6.txt")));
  EXPECT_EQ(PrintUOpsListing(Borrow(AddInt3Program(true))),
            ListingBlock(ReadExample("add_int3_cast_float.debug6.txt")));
}

std::vector<UOpPtr> Sum16x16Program() {
  UOpPtr g0 = Global(dtypes::kFloat32, 1, 0), g1 = Global(dtypes::kFloat32, 256, 1);
  UOpPtr c0 = Int(0), zero = Float(0.0), c2 = Int(2), c64 = Int(64);
  UOpPtr r = Range(64, 0);
  UOpPtr acc = Op(Ops::DEFINE_ACC, dtypes::kFloat32, {zero, r}, Arg::IntTuple({0}));
  UOpPtr shl = Op(Ops::SHL, dtypes::kInt32, {r, c2});
  UOpPtr idx = Op(Ops::INDEX, g1->dtype(), {g1, shl});
  UOpPtr cast = Op(Ops::CAST, dtypes::kFloat32.Vec(4).Ptr(256), {idx});
  UOpPtr ld = Op(Ops::LOAD, dtypes::kFloat32.Vec(4), {cast});
  std::vector<UOpPtr> p = {g0, g1, c0, zero, c2, c64, acc, r, shl, idx, cast, ld};
  std::vector<UOpPtr> lanes;
  for (int i = 0; i < 4; ++i) p.push_back(lanes.emplace_back(Op(Ops::GEP, dtypes::kFloat32, {ld}, {i})));
  UOpPtr sum = acc;
  for (int i = 0; i < 4; ++i) p.push_back(sum = Op(Ops::ADD, dtypes::kFloat32, {sum, lanes[i]}));
  UOpPtr assign = Op(Ops::ASSIGN, dtypes::kFloat32, {acc, sum});
  UOpPtr out = Op(Ops::INDEX, g0->dtype(), {g0, c0});
  UOpPtr store = Op(Ops::STORE, dtypes::kVoid, {out, assign});
  p.insert(p.end(), {assign, Op(Ops::ENDRANGE, dtypes::kVoid, {r}), out, store,
                     UOp::Sink({store}, KernelInfo("r_64_4", 1))});
  return p;
}

std::vector<UOpPtr> Sum256Program() {
  UOpPtr g0 = Global(dtypes::kFloat32, 1, 0), g1 = Global(dtypes::kFloat32, 256, 1);
  UOpPtr c0 = Int(0), zero = Float(0.0), c256 = Int(256);
  UOpPtr r = Range(256, 0);
  UOpPtr acc = Op(Ops::DEFINE_ACC, dtypes::kFloat32, {zero, r}, Arg::IntTuple({0}));
  UOpPtr idx = Op(Ops::INDEX, g1->dtype(), {g1, r});
  UOpPtr ld = Op(Ops::LOAD, dtypes::kFloat32, {idx});
  UOpPtr add = Op(Ops::ADD, dtypes::kFloat32, {acc, ld});
  UOpPtr assign = Op(Ops::ASSIGN, dtypes::kFloat32, {acc, add});
  UOpPtr out = Op(Ops::INDEX, g0->dtype(), {g0, c0});
  UOpPtr store = Op(Ops::STORE, dtypes::kVoid, {out, assign});
  return {g0,   g1,     c0,
          zero, c256,   acc,
          r,    idx,    ld,
          add,  assign, Op(Ops::ENDRANGE, dtypes::kVoid, {r}),
          out,  store,  UOp::Sink({store}, KernelInfo("r_256", 0))};
}

std::vector<UOpPtr> Matmul64Program() {
  UOpPtr g0 = Global(dtypes::kFloat32, 4096, 0), g1 = Global(dtypes::kFloat32, 4096, 1);
  UOpPtr g2 = Global(dtypes::kFloat32, 4096, 2);
  UOpPtr zero = Float(0.0), c6 = Int(6), c64 = Int(64);
  UOpPtr r0 = Range(64, 0);
  UOpPtr row = Op(Ops::SHL, dtypes::kInt32, {r0, c6});
  UOpPtr r1 = Range(64, 1);
  UOpPtr r2 = Range(64, 2);
  UOpPtr acc = Op(Ops::DEFINE_ACC, dtypes::kFloat32, {zero, r2}, Arg::IntTuple({0}));
  UOpPtr k_row = Op(Ops::SHL, dtypes::kInt32, {r2, c6});
  UOpPtr b_off = Op(Ops::ADD, dtypes::kInt32, {k_row, r1});
  UOpPtr b_idx = Op(Ops::INDEX, g2->dtype(), {g2, b_off});
  UOpPtr b = Op(Ops::LOAD, dtypes::kFloat32, {b_idx});
  UOpPtr a_off = Op(Ops::ADD, dtypes::kInt32, {row, r2});
  UOpPtr a_idx = Op(Ops::INDEX, g1->dtype(), {g1, a_off});
  UOpPtr a = Op(Ops::LOAD, dtypes::kFloat32, {a_idx});
  UOpPtr mul = Op(Ops::MUL, dtypes::kFloat32, {a, b});
  UOpPtr add = Op(Ops::ADD, dtypes::kFloat32, {acc, mul});
  UOpPtr assign = Op(Ops::ASSIGN, dtypes::kFloat32, {acc, add});
  UOpPtr end2 = Op(Ops::ENDRANGE, dtypes::kVoid, {r2});
  UOpPtr c_off = Op(Ops::ADD, dtypes::kInt32, {row, r1});
  UOpPtr c_idx = Op(Ops::INDEX, g0->dtype(), {g0, c_off});
  UOpPtr store = Op(Ops::STORE, dtypes::kVoid, {c_idx, assign});
  return {g0,
          g1,
          g2,
          zero,
          c6,
          c64,
          r0,
          row,
          r1,
          acc,
          r2,
          k_row,
          b_off,
          b_idx,
          b,
          a_off,
          a_idx,
          a,
          mul,
          add,
          assign,
          end2,
          c_off,
          c_idx,
          store,
          Op(Ops::ENDRANGE, dtypes::kVoid, {r1}),
          Op(Ops::ENDRANGE, dtypes::kVoid, {r0}),
          UOp::Sink({store}, KernelInfo("r_64_64_64", 0))};
}

TEST(PrintUOpsListingGolden, Sum16x16) {
  EXPECT_EQ(PrintUOpsListing(Borrow(Sum16x16Program())), ListingBlock(ReadExample("sum_16x16.debug6.txt")));
  EXPECT_EQ(PrintUOpsListing(Borrow(Sum256Program())),
            ListingBlock(ReadExample("sum_16x16.debug6_noopt.txt")));
}

TEST(PrintUOpsListingGolden, Matmul64NoOpt) {
  EXPECT_EQ(PrintUOpsListing(Borrow(Matmul64Program())),
            ListingBlock(ReadExample("matmul_64.debug6_noopt.txt")));
}

// The graphs rebuilt from tinygrad's output are what tinygrad's spec accepts, so they must pass ours.
TEST(ExampleGraphs, SatisfyTheSpec) {
  for (bool cast : {false, true}) {
    EXPECT_TRUE(VerifyKernelAst(AddInt3Ast(cast, Arg())).ok());
    EXPECT_EQ(VerifyProgram(Borrow(AddInt3Program(cast))), absl::OkStatus());
  }
  EXPECT_EQ(VerifyKernelAst(MatmulAst(KernelInfo("r_64_64_64", 0))), absl::OkStatus());
  EXPECT_EQ(VerifyKernelAst(
                SumAst(ShapeTracker("(1,)", "(0,)", true), ShapeTracker("(256,)", "(1,)", true), {0}, Arg())),
            absl::OkStatus());
  EXPECT_EQ(VerifyProgram(Borrow(Sum16x16Program())), absl::OkStatus());
  EXPECT_EQ(VerifyProgram(Borrow(Sum256Program())), absl::OkStatus());
  EXPECT_EQ(VerifyProgram(Borrow(Matmul64Program())), absl::OkStatus());
}

// ---- unit tests of the formats ----

TEST(PrintUOpTree, NumbersSharedNodesInDiscoveryOrder) {
  // SINK(ADD(c, c), c): the walk numbers ADD 0 and c 1; c is used three times.
  UOpPtr c = Int(1);
  UOpPtr sink = UOp::Sink({Op(Ops::ADD, dtypes::kInt32, {c, c}), c});
  EXPECT_EQ(PrintUOpTree(sink),
            "UOp(Ops.SINK, dtypes.void, arg=None, src=(\n"
            "  UOp(Ops.ADD, dtypes.int, arg=None, src=(\n"
            "    x1:=UOp(Ops.CONST, dtypes.int, arg=1, src=()),\n"
            "     x1,)),\n"
            "   x1,))");
}

TEST(PrintUOpTree, NumbersCountEveryNodeMetBeforeTheSharedOne) {
  // SINK(MUL(x, y), ADD(y, x)) with x, y distinct: MUL 0, x 1, y 2, ADD 3; x and y are shared.
  UOpPtr x = UOp::Variable("x", 0, 9), y = UOp::Variable("y", 0, 9);
  UOpPtr sink = UOp::Sink({Op(Ops::MUL, dtypes::kInt32, {x, y}), Op(Ops::ADD, dtypes::kInt32, {y, x})});
  EXPECT_EQ(PrintUOpTree(sink),
            "UOp(Ops.SINK, dtypes.void, arg=None, src=(\n"
            "  UOp(Ops.MUL, dtypes.int, arg=None, src=(\n"
            "    x1:=UOp(Ops.DEFINE_VAR, dtypes.int, arg=('x', 0, 9), src=()),\n"
            "    x2:=UOp(Ops.DEFINE_VAR, dtypes.int, arg=('y', 0, 9), src=()),)),\n"
            "  UOp(Ops.ADD, dtypes.int, arg=None, src=(\n"
            "     x2,\n"
            "     x1,)),))");
}

TEST(PrintUOpTree, SharedSubtreePrintsOnce) {
  // A shared node with sources: its sources are printed (and numbered) only under its first occurrence.
  UOpPtr a = UOp::Variable("a", 0, 3);
  UOpPtr neg = Op(Ops::NEG, dtypes::kInt32, {a});
  UOpPtr sink = UOp::Sink({Op(Ops::ADD, dtypes::kInt32, {neg, Int(2)}), neg});
  EXPECT_EQ(PrintUOpTree(sink),
            "UOp(Ops.SINK, dtypes.void, arg=None, src=(\n"
            "  UOp(Ops.ADD, dtypes.int, arg=None, src=(\n"
            "    x1:=UOp(Ops.NEG, dtypes.int, arg=None, src=(\n"
            "      UOp(Ops.DEFINE_VAR, dtypes.int, arg=('a', 0, 3), src=()),)),\n"
            "    UOp(Ops.CONST, dtypes.int, arg=2, src=()),)),\n"
            "   x1,))");
}

TEST(PrintUOpTree, ConstantsPrintAsPythonRepr) {
  EXPECT_EQ(PrintUOpTree(Float(1.0)), "UOp(Ops.CONST, dtypes.float, arg=1.0, src=())");
  EXPECT_EQ(PrintUOpTree(Float(std::numeric_limits<double>::infinity())),
            "UOp(Ops.CONST, dtypes.float, arg=inf, src=())");
  EXPECT_EQ(PrintUOpTree(Float(-std::numeric_limits<double>::infinity())),
            "UOp(Ops.CONST, dtypes.float, arg=-inf, src=())");
  EXPECT_EQ(PrintUOpTree(Float(std::nan(""))), "UOp(Ops.CONST, dtypes.float, arg=nan, src=())");
  EXPECT_EQ(PrintUOpTree(Float(1e-5)), "UOp(Ops.CONST, dtypes.float, arg=1e-05, src=())");
  EXPECT_EQ(PrintUOpTree(UOp::Const(dtypes::kBool, true)), "UOp(Ops.CONST, dtypes.bool, arg=True, src=())");
  EXPECT_EQ(PrintUOpTree(Int(-3)), "UOp(Ops.CONST, dtypes.int, arg=-3, src=())");
  // uint64 values past int64 are stored as bit patterns but print as Python's unsigned int.
  UOpPtr big = UOp::Const(dtypes::kUInt64, ConstValue::Int(absl::MakeInt128(0, 0xFFFFFFFFFFFFFFFFull)));
  EXPECT_EQ(PrintUOpTree(big), "UOp(Ops.CONST, dtypes.ulong, arg=18446744073709551615, src=())");
  EXPECT_EQ(PrintUOpsListing({big.get()}),
            "   0 Ops.CONST           : dtypes.ulong                   []                               "
            "18446744073709551615\n");
}

TEST(PrintUOpTree, ArgsAndTags) {
  EXPECT_EQ(PrintUOpTree(UOp::New(Ops::DEVICE, dtypes::kVoid, {}, "CPU")),
            "UOp(Ops.DEVICE, dtypes.void, arg='CPU', src=())");
  EXPECT_EQ(PrintUOpTree(UOp::New(Ops::NOOP, dtypes::kInt32, {}, {}, 7)),
            "UOp(Ops.NOOP, dtypes.int, arg=None, tag=7, src=())");
  // REDUCE_AXIS joins str() of its elements: no trailing comma for a 1-tuple, no quotes on strings.
  UOpPtr x = UOp::Variable("x", 0, 1, dtypes::kFloat32);
  EXPECT_EQ(PrintUOpTree(Op(Ops::REDUCE_AXIS, dtypes::kFloat32, {Float(2.0)}, {Ops::MAX})),
            "UOp(Ops.REDUCE_AXIS, dtypes.float, arg=(Ops.MAX), src=(\n"
            "  UOp(Ops.CONST, dtypes.float, arg=2.0, src=()),))");
}

TEST(PrintUOpTree, DeepChainNestsOneLevelPerNode) {
  UOpPtr u = UOp::Variable("x", 0, 1);
  constexpr int kDepth = 1000;
  for (int i = 0; i < kDepth; ++i) u = Op(Ops::NEG, dtypes::kInt32, {u});
  std::string text = PrintUOpTree(u);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), kDepth);
  std::string tail =
      std::string(2 * kDepth, ' ') + "UOp(Ops.DEFINE_VAR, dtypes.int, arg=('x', 0, 1), src=()),";
  for (int i = 1; i < kDepth; ++i) tail += ")),";
  tail += "))";
  EXPECT_TRUE(absl::EndsWith(text, "\n" + tail));
}

TEST(PrintUOpsListing, ParentsNotInTheListAndConstantsInIt) {
  UOpPtr c = Int(5), d = Int(6);
  UOpPtr x = UOp::Variable("x", 0, 9);
  UOpPtr add = Op(Ops::ADD, dtypes::kInt32, {x, c});
  UOpPtr mul = Op(Ops::MUL, dtypes::kInt32, {add, d});
  // d is not listed: it shows as '--' even though it is a constant; x is listed so shows its position.
  std::vector<const UOp*> list = {c.get(), x.get(), add.get(), mul.get()};
  EXPECT_EQ(
      PrintUOpsListing(list),
      "   0 Ops.CONST           : dtypes.int                     []                               5\n"
      "   1 Ops.DEFINE_VAR      : dtypes.int                     []                               "
      "('x', 0, 9)\n"
      "   2 Ops.ADD             : dtypes.int                     [1, '5']                         None\n"
      "   3 Ops.MUL             : dtypes.int                     [2, '--']                        None\n");
}

TEST(PrintUOpsListing, StringArgsPrintWithoutQuotesAndWideFieldsAreNotCut) {
  UOpPtr dev = UOp::New(Ops::DEVICE, dtypes::kVoid, {}, "CPU");
  UOpPtr wide = UOp::New(Ops::DEFINE_LOCAL, dtypes::kFloat32.Vec(16).Ptr(1024, true).Vec(4), {}, "temp0");
  UOpPtr sink = UOp::Sink({dev, dev, dev, dev, dev, dev, dev, dev, dev, dev, dev});
  std::string text = PrintUOpsListing({dev.get(), wide.get(), sink.get()});
  EXPECT_EQ(
      text,
      "   0 Ops.DEVICE          : dtypes.void                    []                               CPU\n"
      "   1 Ops.DEFINE_LOCAL    : dtypes.float.vec(16).ptr(1024, local=True).vec(4) []                      "
      "         temp0\n"
      "   2 Ops.SINK            : dtypes.void                    [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0] None\n");
}

TEST(PrintUOpsListing, IndexesAreRightAlignedToFourColumns) {
  std::vector<UOpPtr> nodes;
  for (int i = 0; i < 10001; ++i) nodes.push_back(Int(i));
  std::vector<const UOp*> list = Borrow(nodes);
  std::vector<std::string> lines = absl::StrSplit(PrintUOpsListing(list), '\n');
  ASSERT_EQ(lines.size(), 10002u);  // the text ends with a newline
  EXPECT_EQ(lines[7].substr(0, 5), "   7 ");
  EXPECT_EQ(lines[123].substr(0, 5), " 123 ");
  EXPECT_EQ(lines[10000].substr(0, 6), "10000 ");
}

}  // namespace
}  // namespace uopc
