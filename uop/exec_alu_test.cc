#include "uop/exec_alu.h"

#include <algorithm>
#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/numeric/int128.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/dtype.h"
#include "uop/ops.h"

namespace uopc {
namespace {

using absl::int128;
using ::testing::HasSubstr;

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

constexpr int64_t kI32Max = std::numeric_limits<int32_t>::max();
constexpr int64_t kI32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kI64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kI64Min = std::numeric_limits<int64_t>::min();
const int128 kU64Max = (int128(1) << 64) - 1;

ConstValue I(int128 v) { return ConstValue::Int(v); }
ConstValue F(double v) { return ConstValue::Float(v); }
ConstValue B(bool v) { return ConstValue::Bool(v); }

using dtypes::kBFloat16;
using dtypes::kBool;
using dtypes::kFloat16;
using dtypes::kFloat32;
using dtypes::kFloat64;
using dtypes::kInt16;
using dtypes::kInt32;
using dtypes::kInt64;
using dtypes::kInt8;
using dtypes::kUInt16;
using dtypes::kUInt32;
using dtypes::kUInt64;
using dtypes::kUInt8;
using dtypes::kVoid;

// Same kind and value; any NaN matches any NaN; 0.0 and -0.0 differ.
bool Same(const ConstValue& a, const ConstValue& b) {
  if (a.is_float() && b.is_float() && std::isnan(a.f()) && std::isnan(b.f())) return true;
  return a.Identical(b);
}

struct AluCase {
  Ops op;
  DType dtype;
  std::vector<ConstValue> operands;
  ConstValue want;
  std::optional<DType> operand_dtype = std::nullopt;
};

std::string Describe(const AluCase& c) {
  std::ostringstream os;
  os << c.op << " " << c.dtype << " (";
  for (size_t i = 0; i < c.operands.size(); ++i) os << (i ? ", " : "") << c.operands[i];
  os << ")";
  if (c.operand_dtype) os << " operands " << *c.operand_dtype;
  return os.str();
}

void ExpectCases(const std::vector<AluCase>& cases) {
  for (const AluCase& c : cases) {
    absl::StatusOr<ConstValue> got = ExecAlu(c.op, c.dtype, c.operands, c.operand_dtype);
    if (!got.ok()) {
      ADD_FAILURE() << Describe(c) << ": " << got.status();
      continue;
    }
    EXPECT_TRUE(Same(*got, c.want)) << Describe(c) << " = " << *got << ", want " << c.want;
  }
}

ConstValue MustAlu(Ops op, DType dtype, std::vector<ConstValue> operands,
                   std::optional<DType> operand_dtype = std::nullopt) {
  absl::StatusOr<ConstValue> got = ExecAlu(op, dtype, operands, operand_dtype);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : ConstValue::Int(-123456789);
}

ConstValue MustCast(ConstValue v, DType from, DType to) {
  absl::StatusOr<ConstValue> got = ExecCast(v, from, to);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : ConstValue::Int(-123456789);
}

ConstValue MustBitcast(ConstValue v, DType from, DType to) {
  absl::StatusOr<ConstValue> got = ExecBitcast(v, from, to);
  EXPECT_TRUE(got.ok()) << got.status();
  return got.ok() ? *got : ConstValue::Int(-123456789);
}

// ---- integers ----

TEST(ExecAluTest, Int32Wraparound) {
  ExpectCases({
      {Ops::ADD, kInt32, {I(kI32Max), I(1)}, I(kI32Min)},
      {Ops::ADD, kInt32, {I(kI32Min), I(-1)}, I(kI32Max)},
      {Ops::ADD, kInt32, {I(-1), I(1)}, I(0)},
      {Ops::SUB, kInt32, {I(kI32Min), I(1)}, I(kI32Max)},
      {Ops::SUB, kInt32, {I(0), I(kI32Min)}, I(kI32Min)},
      {Ops::MUL, kInt32, {I(65536), I(65536)}, I(0)},
      {Ops::MUL, kInt32, {I(46341), I(46341)}, I(-2147479015)},
      {Ops::MUL, kInt32, {I(kI32Min), I(-1)}, I(kI32Min)},
      {Ops::NEG, kInt32, {I(kI32Min)}, I(kI32Min)},
      {Ops::NEG, kInt32, {I(5)}, I(-5)},
      {Ops::MULACC, kInt32, {I(kI32Max), I(2), I(3)}, I(1)},
      {Ops::MULACC, kInt32, {I(-3), I(4), I(5)}, I(-7)},
  });
}

TEST(ExecAluTest, TruncatingDivisionAndModulo) {
  ExpectCases({
      {Ops::IDIV, kInt32, {I(-7), I(2)}, I(-3)},
      {Ops::IDIV, kInt32, {I(7), I(-2)}, I(-3)},
      {Ops::IDIV, kInt32, {I(-7), I(-2)}, I(3)},
      {Ops::IDIV, kInt32, {I(7), I(2)}, I(3)},
      {Ops::IDIV, kInt32, {I(0), I(-5)}, I(0)},
      {Ops::IDIV, kInt32, {I(kI32Min), I(-1)}, I(kI32Min)},
      {Ops::IDIV, kInt32, {I(kI32Min), I(2)}, I(-1073741824)},
      {Ops::MOD, kInt32, {I(-7), I(2)}, I(-1)},
      {Ops::MOD, kInt32, {I(7), I(-2)}, I(1)},
      {Ops::MOD, kInt32, {I(-7), I(-2)}, I(-1)},
      {Ops::MOD, kInt32, {I(7), I(2)}, I(1)},
      {Ops::MOD, kInt32, {I(kI32Min), I(-1)}, I(0)},
      {Ops::MOD, kInt32, {I(kI32Min), I(3)}, I(-2)},
      // Division by zero, as tinygrad's cdiv/cmod: x//0 = 0, x%0 = x.
      {Ops::IDIV, kInt32, {I(5), I(0)}, I(0)},
      {Ops::IDIV, kInt32, {I(-5), I(0)}, I(0)},
      {Ops::MOD, kInt32, {I(5), I(0)}, I(5)},
      {Ops::MOD, kInt32, {I(-5), I(0)}, I(-5)},
      {Ops::IDIV, kInt64, {I(kI64Min), I(-1)}, I(kI64Min)},
      {Ops::MOD, kInt64, {I(kI64Min), I(-1)}, I(0)},
      {Ops::IDIV, kInt8, {I(-128), I(-1)}, I(-128)},
      {Ops::MOD, kInt8, {I(-128), I(-1)}, I(0)},
      {Ops::IDIV, kUInt64, {I(kU64Max), I(2)}, I(kI64Max)},
      {Ops::MOD, kUInt64, {I(kU64Max), I(10)}, I(5)},
      {Ops::IDIV, kUInt64, {I(kU64Max), I(0)}, I(0)},
      {Ops::MOD, kUInt64, {I(kU64Max), I(0)}, I(kU64Max)},
      {Ops::IDIV, kUInt8, {I(200), I(7)}, I(28)},
  });
}

TEST(ExecAluTest, Shifts) {
  ExpectCases({
      {Ops::SHL, kInt32, {I(1), I(31)}, I(kI32Min)},
      {Ops::SHL, kInt32, {I(0x40000000), I(1)}, I(kI32Min)},
      {Ops::SHL, kInt32, {I(-1), I(1)}, I(-2)},
      {Ops::SHL, kInt32, {I(1), I(32)}, I(0)},
      {Ops::SHL, kInt32, {I(3), I(100)}, I(0)},
      {Ops::SHL, kInt32, {I(3), I(kI32Max)}, I(0)},
      {Ops::SHR, kInt32, {I(-8), I(1)}, I(-4)},
      {Ops::SHR, kInt32, {I(-7), I(1)}, I(-4)},  // floor, as an arithmetic shift
      {Ops::SHR, kInt32, {I(-1), I(31)}, I(-1)},
      {Ops::SHR, kInt32, {I(kI32Min), I(31)}, I(-1)},
      {Ops::SHR, kInt32, {I(-1), I(100)}, I(-1)},
      {Ops::SHR, kInt32, {I(8), I(100)}, I(0)},
      {Ops::SHR, kInt32, {I(kI32Max), I(30)}, I(1)},
      {Ops::SHR, kUInt8, {I(255), I(1)}, I(127)},  // logical
      {Ops::SHL, kUInt8, {I(128), I(1)}, I(0)},
      {Ops::SHL, kUInt8, {I(0x81), I(1)}, I(2)},
      {Ops::SHR, kInt8, {I(-128), I(7)}, I(-1)},
      {Ops::SHL, kInt64, {I(1), I(63)}, I(kI64Min)},
      {Ops::SHL, kInt64, {I(1), I(64)}, I(0)},
      {Ops::SHR, kInt64, {I(-1), I(63)}, I(-1)},
      {Ops::SHR, kInt64, {I(kI64Min), I(64)}, I(-1)},
      {Ops::SHR, kUInt64, {I(kU64Max), I(63)}, I(1)},
      {Ops::SHR, kUInt64, {I(kU64Max), I(64)}, I(0)},
      {Ops::SHL, kUInt64, {I(kU64Max), I(4)}, I(kU64Max - 15)},
      {Ops::SHL, kUInt32, {I(5), I(kU64Max)}, I(0)},  // a huge count: operand wraps to 2^32-1 first
  });
}

TEST(ExecAluTest, NegativeShiftCountIsAnError) {
  for (Ops op : {Ops::SHL, Ops::SHR}) {
    absl::StatusOr<ConstValue> r = ExecAlu(op, kInt32, {I(1), I(-1)});
    ASSERT_FALSE(r.ok());
    EXPECT_THAT(std::string(r.status().message()), HasSubstr("negative shift count"));
  }
  // 255 as an int8 count is -1.
  EXPECT_FALSE(ExecAlu(Ops::SHL, kInt8, {I(1), I(255)}).ok());
}

TEST(ExecAluTest, BitwiseAndCompare) {
  ExpectCases({
      {Ops::XOR, kInt32, {I(-1), I(5)}, I(-6)},
      {Ops::OR, kInt32, {I(0x0F), I(0xF0)}, I(0xFF)},
      {Ops::AND, kInt32, {I(-1), I(kI32Min)}, I(kI32Min)},
      {Ops::AND, kInt8, {I(-1), I(0x7F)}, I(0x7F)},
      {Ops::XOR, kUInt64, {I(kU64Max), I(1)}, I(kU64Max - 1)},
      {Ops::OR, kUInt16, {I(0x8000), I(1)}, I(0x8001)},
      {Ops::MAX, kInt32, {I(-1), I(1)}, I(1)},
      {Ops::MAX, kInt32, {I(kI32Min), I(kI32Max)}, I(kI32Max)},
      {Ops::MAX, kUInt64, {I(kU64Max), I(0)}, I(kU64Max)},
      {Ops::CMPLT, kBool, {I(-1), I(1)}, B(true), kInt32},
      {Ops::CMPLT, kBool, {I(3), I(3)}, B(false), kInt32},
      {Ops::CMPLT, kBool, {I(int128(1) << 63), I(kU64Max)}, B(true), kUInt64},
      {Ops::CMPNE, kBool, {I(3), I(3)}, B(false), kInt32},
      {Ops::CMPNE, kBool, {I(3), I(4)}, B(true), kInt32},
      // Operands are made values of the operand dtype first: 255 as int8 is -1.
      {Ops::CMPLT, kBool, {I(255), I(0)}, B(true), kInt8},
      {Ops::CMPNE, kBool, {I(256), I(0)}, B(false), kUInt8},
      // Without an operand dtype: exact numbers, Python semantics.
      {Ops::CMPLT, kBool, {I(255), I(0)}, B(false)},
      {Ops::CMPLT, kBool, {I(2), F(2.5)}, B(true)},
      {Ops::CMPNE, kBool, {I(1), B(true)}, B(false)},
  });
}

TEST(ExecAluTest, IntegerPower) {
  ExpectCases({
      {Ops::POW, kInt32, {I(3), I(4)}, I(81)},
      {Ops::POW, kInt32, {I(2), I(31)}, I(kI32Min)},
      {Ops::POW, kInt32, {I(2), I(32)}, I(0)},
      {Ops::POW, kInt32, {I(-2), I(3)}, I(-8)},
      {Ops::POW, kInt32, {I(3), I(100)}, I(-818408495)},
      {Ops::POW, kUInt32, {I(3), I(100)}, I(3476558801)},
      {Ops::POW, kUInt64, {I(3), I(100)}, I(int128(15462121228172006353ull))},
      {Ops::POW, kInt32, {I(7), I(0)}, I(1)},
      {Ops::POW, kInt32, {I(0), I(0)}, I(1)},
      {Ops::POW, kInt32, {I(2), I(-1)}, I(0)},
      {Ops::POW, kInt32, {I(1), I(-5)}, I(1)},
      {Ops::POW, kInt32, {I(-1), I(-3)}, I(-1)},
      {Ops::POW, kInt32, {I(-1), I(-2)}, I(1)},
      {Ops::POW, kInt32, {I(0), I(-1)}, I(0)},
  });
}

TEST(ExecAluTest, SmallAndUnsignedTypesWrap) {
  ExpectCases({
      {Ops::ADD, kInt8, {I(127), I(1)}, I(-128)},
      {Ops::NEG, kInt8, {I(-128)}, I(-128)},
      {Ops::MUL, kInt8, {I(16), I(16)}, I(0)},
      {Ops::ADD, kUInt8, {I(255), I(1)}, I(0)},
      {Ops::SUB, kUInt8, {I(0), I(1)}, I(255)},
      {Ops::NEG, kUInt8, {I(1)}, I(255)},
      {Ops::ADD, kInt16, {I(32767), I(1)}, I(-32768)},
      {Ops::ADD, kUInt16, {I(65535), I(1)}, I(0)},
      {Ops::SUB, kUInt32, {I(0), I(1)}, I(4294967295)},
      {Ops::MUL, kUInt32, {I(4294967295), I(4294967295)}, I(1)},
      {Ops::ADD, kInt64, {I(kI64Max), I(1)}, I(kI64Min)},
      {Ops::MUL, kInt64, {I(kI64Min), I(-1)}, I(kI64Min)},
      {Ops::NEG, kInt64, {I(kI64Min)}, I(kI64Min)},
      {Ops::MULACC, kInt64, {I(kI64Max), I(kI64Max), I(1)}, I(2)},
      {Ops::ADD, kUInt64, {I(kU64Max), I(1)}, I(0)},
      {Ops::MUL, kUInt64, {I(kU64Max), I(kU64Max)}, I(1)},
      {Ops::NEG, kUInt64, {I(1)}, I(kU64Max)},
      // Operands outside the dtype wrap before the op: 200 as int8 is -56.
      {Ops::ADD, kInt8, {I(200), I(100)}, I(44)},
      {Ops::IDIV, kInt8, {I(200), I(2)}, I(-28)},
      {Ops::IDIV, kUInt8, {I(-2), I(2)}, I(127)},
      // A float operand for an integer dtype converts as a C cast does.
      {Ops::ADD, kInt32, {F(2.9), F(-1.9)}, I(1)},
  });
}

TEST(ExecAluTest, BoolIsZeroAndOne) {
  ExpectCases({
      {Ops::ADD, kBool, {B(true), B(true)}, B(true)},
      {Ops::ADD, kBool, {B(false), B(false)}, B(false)},
      {Ops::SUB, kBool, {B(false), B(true)}, B(true)},
      {Ops::SUB, kBool, {B(true), B(true)}, B(false)},
      {Ops::MUL, kBool, {B(true), B(false)}, B(false)},
      {Ops::MUL, kBool, {B(true), B(true)}, B(true)},
      {Ops::NEG, kBool, {B(true)}, B(true)},
      {Ops::NEG, kBool, {B(false)}, B(false)},
      {Ops::MAX, kBool, {B(false), B(true)}, B(true)},
      {Ops::XOR, kBool, {B(true), B(true)}, B(false)},
      {Ops::OR, kBool, {B(true), B(false)}, B(true)},
      {Ops::AND, kBool, {B(true), B(false)}, B(false)},
      {Ops::IDIV, kBool, {B(true), B(false)}, B(false)},
      {Ops::MOD, kBool, {B(true), B(false)}, B(true)},
      {Ops::MOD, kBool, {B(true), B(true)}, B(false)},
      {Ops::MULACC, kBool, {B(true), B(true), B(true)}, B(true)},
      {Ops::SHL, kBool, {B(true), B(true)}, B(true)},
      {Ops::SHR, kBool, {B(true), B(true)}, B(false)},
      {Ops::POW, kBool, {B(false), B(false)}, B(true)},
      {Ops::CMPLT, kBool, {B(false), B(true)}, B(true), kBool},
      {Ops::CMPNE, kBool, {B(false), B(true)}, B(true), kBool},
      {Ops::ADD, kBool, {I(2), I(0)}, B(true)},  // 2 is true
  });
}

TEST(ExecAluTest, Where) {
  ExpectCases({
      {Ops::WHERE, kInt32, {B(true), I(1), I(2)}, I(1)},
      {Ops::WHERE, kInt32, {B(false), I(1), I(2)}, I(2)},
      {Ops::WHERE, kInt32, {I(7), I(1), I(2)}, I(1)},
      {Ops::WHERE, kFloat32, {F(kNaN), F(1.5), F(2.5)}, F(1.5)},  // NaN is true
      {Ops::WHERE, kFloat32, {F(-0.0), F(1.5), F(2.5)}, F(2.5)},
      {Ops::WHERE, kUInt8, {B(false), I(1), I(300)}, I(44)},
      {Ops::WHERE, kFloat16, {B(true), F(0.1), F(0)}, F(0.0999755859375)},
  });
}

// tinygrad's test_threefry_against_reference: key words (0, 1337), counters arange(20) split into low and
// high halves, results cat(low words, high words).
TEST(ExecAluTest, ThreefryMatchesTinygradReference) {
  const uint32_t want[20] = {2221762175, 1752107825, 653745012,  1967534793, 1395205442,
                             3840423848, 2159346757, 603508235,  3319473678, 3363866483,
                             3544324138, 1436466838, 2169858556, 2570072943, 2387150698,
                             3678370550, 2911697663, 403244401,  2560861638, 1692360114};
  const uint64_t key = uint64_t{1337} << 32;
  for (uint64_t i = 0; i < 10; ++i) {
    uint64_t counter = ((i + 10) << 32) | i;
    ConstValue r = MustAlu(Ops::THREEFRY, kUInt64, {I(counter), I(key)});
    ASSERT_TRUE(r.is_int());
    uint64_t bits = static_cast<uint64_t>(r.i());
    EXPECT_EQ(static_cast<uint32_t>(bits), want[i]) << i;
    EXPECT_EQ(static_cast<uint32_t>(bits >> 32), want[10 + i]) << i;
  }
  EXPECT_FALSE(ExecAlu(Ops::THREEFRY, kUInt32, {I(1), I(2)}).ok());
  EXPECT_FALSE(ExecAlu(Ops::THREEFRY, kFloat32, {F(1), F(2)}).ok());
}

// ---- floats ----

TEST(ExecAluTest, Float32RoundsEveryOp) {
  const double f_0_1 = static_cast<double>(0.1f);
  ExpectCases({
      {Ops::ADD, kFloat32, {F(16777216), F(1)}, F(16777216)},
      {Ops::ADD, kFloat32, {F(16777216), F(3)}, F(16777220)},
      {Ops::ADD, kFloat32, {F(0.1), F(0.2)}, F(static_cast<double>(0.1f + 0.2f))},
      {Ops::ADD, kFloat32, {F(0.1), F(0)}, F(f_0_1)},  // operands round to float32 too
      {Ops::MUL, kFloat32, {F(1e30), F(1e30)}, F(kInf)},
      {Ops::MUL, kFloat32, {F(FLT_MAX), F(-2)}, F(-kInf)},
      {Ops::MUL, kFloat32, {F(0x1p-100), F(0x1p-100)}, F(0.0)},
      {Ops::MUL, kFloat32, {F(-0x1p-100), F(0x1p-100)}, F(-0.0)},
      {Ops::SUB, kFloat32, {F(0.0), F(0.0)}, F(0.0)},
      {Ops::ADD, kFloat32, {F(-0.0), F(-0.0)}, F(-0.0)},
      {Ops::ADD, kFloat32, {F(kInf), F(-kInf)}, F(kNaN)},
      {Ops::FDIV, kFloat32, {F(1), F(3)}, F(static_cast<double>(1.0f / 3.0f))},
      // Unfused: a*b = 1 + 2^-11 + 2^-24 rounds (to even) to 1 + 2^-11, so the sum is 0, not 2^-24.
      {Ops::MULACC, kFloat32, {F(1 + 0x1p-12), F(1 + 0x1p-12), F(-(1 + 0x1p-11))}, F(0.0)},
      {Ops::MULACC, kFloat64, {F(2), F(3), F(4)}, F(10)},
      {Ops::ADD, kFloat64, {F(0x1p53), F(1)}, F(0x1p53)},
      {Ops::ADD, kFloat64, {F(0.1), F(0.2)}, F(0.1 + 0.2)},
  });
}

TEST(ExecAluTest, FloatSpecialValues) {
  ExpectCases({
      {Ops::FDIV, kFloat32, {F(1), F(0.0)}, F(kInf)},
      {Ops::FDIV, kFloat32, {F(-1), F(0.0)}, F(-kInf)},
      {Ops::FDIV, kFloat32, {F(1), F(-0.0)}, F(-kInf)},
      {Ops::FDIV, kFloat32, {F(0.0), F(0.0)}, F(kNaN)},
      {Ops::FDIV, kFloat32, {F(kNaN), F(0.0)}, F(kNaN)},
      {Ops::FDIV, kFloat32, {F(kInf), F(kInf)}, F(kNaN)},
      {Ops::FDIV, kFloat64, {F(-kInf), F(0.0)}, F(-kInf)},
      {Ops::RECIP, kFloat32, {F(0.0)}, F(kInf)},
      {Ops::RECIP, kFloat32, {F(-0.0)}, F(-kInf)},
      {Ops::RECIP, kFloat32, {F(kInf)}, F(0.0)},
      {Ops::RECIP, kFloat32, {F(-kInf)}, F(-0.0)},
      {Ops::RECIP, kFloat32, {F(kNaN)}, F(kNaN)},
      {Ops::RECIP, kFloat32, {F(3)}, F(static_cast<double>(1.0f / 3.0f))},
      {Ops::LOG2, kFloat32, {F(0.0)}, F(-kInf)},
      {Ops::LOG2, kFloat32, {F(-0.0)}, F(-kInf)},
      {Ops::LOG2, kFloat32, {F(-1)}, F(kNaN)},
      {Ops::LOG2, kFloat32, {F(-kInf)}, F(kNaN)},
      {Ops::LOG2, kFloat32, {F(8)}, F(3)},
      {Ops::LOG2, kFloat32, {F(kInf)}, F(kInf)},
      {Ops::LOG2, kFloat32, {F(kNaN)}, F(kNaN)},
      {Ops::EXP2, kFloat32, {F(3)}, F(8)},
      {Ops::EXP2, kFloat32, {F(-kInf)}, F(0.0)},
      {Ops::EXP2, kFloat32, {F(kInf)}, F(kInf)},
      {Ops::EXP2, kFloat32, {F(127)}, F(0x1p127)},
      {Ops::EXP2, kFloat32, {F(128)}, F(kInf)},
      {Ops::EXP2, kFloat32, {F(-149)}, F(0x1p-149)},
      {Ops::EXP2, kFloat32, {F(-150)}, F(0.0)},  // half the smallest subnormal: a tie, to even
      {Ops::EXP2, kFloat64, {F(1024)}, F(kInf)},
      {Ops::EXP2, kFloat32, {F(kNaN)}, F(kNaN)},
      {Ops::SQRT, kFloat32, {F(-1)}, F(kNaN)},
      {Ops::SQRT, kFloat32, {F(-0.0)}, F(-0.0)},
      {Ops::SQRT, kFloat32, {F(4)}, F(2)},
      {Ops::SQRT, kFloat32, {F(kInf)}, F(kInf)},
      {Ops::SQRT, kFloat32, {F(-kInf)}, F(kNaN)},
      {Ops::SQRT, kFloat32, {F(2)}, F(static_cast<double>(std::sqrt(2.0f)))},
      {Ops::SIN, kFloat32, {F(kInf)}, F(kNaN)},
      {Ops::SIN, kFloat32, {F(-kInf)}, F(kNaN)},
      {Ops::SIN, kFloat32, {F(kNaN)}, F(kNaN)},
      {Ops::SIN, kFloat32, {F(0.0)}, F(0.0)},
      {Ops::SIN, kFloat32, {F(-0.0)}, F(-0.0)},
      {Ops::SIN, kFloat32, {F(1)}, F(0.8414709568023682)},
      {Ops::NEG, kFloat32, {F(0.0)}, F(-0.0)},
      {Ops::NEG, kFloat32, {F(-0.0)}, F(0.0)},
      {Ops::NEG, kFloat32, {F(kInf)}, F(-kInf)},
      {Ops::NEG, kFloat32, {F(kNaN)}, F(kNaN)},
      {Ops::POW, kFloat32, {F(2), F(10)}, F(1024)},
      {Ops::POW, kFloat32, {F(-2), F(3)}, F(-8)},
      {Ops::POW, kFloat32, {F(kNaN), F(0)}, F(1)},
      {Ops::POW, kFloat32, {F(1), F(kNaN)}, F(1)},
      {Ops::POW, kFloat32, {F(0.0), F(-1)}, F(kInf)},
      {Ops::POW, kFloat32, {F(-8), F(1.0 / 3)}, F(kNaN)},
      {Ops::POW, kFloat32, {F(2), F(128)}, F(kInf)},
      {Ops::POW, kFloat64, {F(2), F(0.5)}, F(std::sqrt(2.0))},
  });
}

TEST(ExecAluTest, FloatMaxAndComparisonsWithNaNAndZeros) {
  ExpectCases({
      // MAX is `a < b ? b : a`, as tinygrad renders it.
      {Ops::MAX, kFloat32, {F(kNaN), F(1)}, F(kNaN)},
      {Ops::MAX, kFloat32, {F(1), F(kNaN)}, F(1)},
      {Ops::MAX, kFloat32, {F(-0.0), F(0.0)}, F(-0.0)},
      {Ops::MAX, kFloat32, {F(0.0), F(-0.0)}, F(0.0)},
      {Ops::MAX, kFloat32, {F(-kInf), F(3)}, F(3)},
      {Ops::MAX, kFloat16, {F(2), F(-70000)}, F(2)},
      {Ops::CMPLT, kBool, {F(kNaN), F(1)}, B(false), kFloat32},
      {Ops::CMPLT, kBool, {F(1), F(kNaN)}, B(false), kFloat32},
      {Ops::CMPNE, kBool, {F(kNaN), F(kNaN)}, B(true), kFloat32},
      {Ops::CMPNE, kBool, {F(0.0), F(-0.0)}, B(false), kFloat32},
      {Ops::CMPLT, kBool, {F(-0.0), F(0.0)}, B(false), kFloat32},
      {Ops::CMPLT, kBool, {F(-kInf), F(kInf)}, B(true), kFloat64},
      // Operands are rounded to the operand dtype first: 16777217 is 16777216 in float32.
      {Ops::CMPNE, kBool, {F(16777217), F(16777216)}, B(false), kFloat32},
      {Ops::CMPNE, kBool, {F(16777217), F(16777216)}, B(true), kFloat64},
      {Ops::CMPLT, kBool, {F(2049), F(2048)}, B(false), kFloat16},
  });
}

TEST(ExecAluTest, HalfRoundsToNearestEven) {
  ExpectCases({
      {Ops::ADD, kFloat16, {F(2048), F(1)}, F(2048)},  // 2049 is a tie: to even
      {Ops::ADD, kFloat16, {F(2048), F(3)}, F(2052)},  // 2051 is a tie: to even
      {Ops::ADD, kFloat16, {F(65504), F(15)}, F(65504)},
      {Ops::ADD, kFloat16, {F(65504), F(16)}, F(kInf)},  // 65520 is a tie between 65504 and 2^16: to even
      {Ops::MUL, kFloat16, {F(300), F(300)}, F(kInf)},
      {Ops::MUL, kFloat16, {F(-300), F(300)}, F(-kInf)},
      {Ops::FDIV, kFloat16, {F(1), F(3)}, F(0.333251953125)},
      {Ops::SQRT, kFloat16, {F(2)}, F(1.4140625)},
      {Ops::EXP2, kFloat16, {F(15)}, F(32768)},
      {Ops::EXP2, kFloat16, {F(16)}, F(kInf)},
      {Ops::EXP2, kFloat16, {F(-24)}, F(0x1p-24)},
      {Ops::EXP2, kFloat16, {F(-25)}, F(0.0)},
      {Ops::ADD, kFloat16, {F(0.1), F(0.0)}, F(0.0999755859375)},
      {Ops::ADD, kFloat16, {F(0.1), F(0.2)}, F(0.2998046875)},
      {Ops::ADD, kFloat16, {I(2049), I(0)}, F(2048)},
      {Ops::ADD, kFloat16, {I(65520), I(0)}, F(kInf)},
  });
}

TEST(ExecAluTest, BFloat16RoundsToNearestEven) {
  ExpectCases({
      {Ops::ADD, kBFloat16, {F(256), F(1)}, F(256)},  // 257 is a tie: to even
      {Ops::ADD, kBFloat16, {F(256), F(3)}, F(260)},
      {Ops::ADD, kBFloat16, {F(1.1), F(0)}, F(1.1015625)},
      {Ops::ADD, kBFloat16, {F(1234), F(0)}, F(1232)},
      {Ops::ADD, kBFloat16, {F(23456), F(0)}, F(23424)},
      {Ops::ADD, kBFloat16, {F(-777.777), F(0)}, F(-776)},
      {Ops::MUL, kBFloat16, {F(3e38), F(2)}, F(kInf)},
      {Ops::ADD, kBFloat16, {I(16777217), I(0)}, F(16777216)},
  });
}

// ---- casts ----

TEST(ExecCastTest, FloatToInt) {
  EXPECT_TRUE(Same(MustCast(F(3.9), kFloat32, kInt32), I(3)));
  EXPECT_TRUE(Same(MustCast(F(-3.9), kFloat32, kInt32), I(-3)));
  EXPECT_TRUE(Same(MustCast(F(-0.5), kFloat64, kInt32), I(0)));
  // Outside C's defined range: NaN and inf give 0, other values truncate and wrap.
  EXPECT_TRUE(Same(MustCast(F(kNaN), kFloat32, kInt32), I(0)));
  EXPECT_TRUE(Same(MustCast(F(kInf), kFloat32, kInt32), I(0)));
  EXPECT_TRUE(Same(MustCast(F(-kInf), kFloat64, kUInt64), I(0)));
  EXPECT_TRUE(Same(MustCast(F(2147483648.0), kFloat64, kInt32), I(kI32Min)));
  EXPECT_TRUE(Same(MustCast(F(4294967301.0), kFloat64, kInt32), I(5)));
  EXPECT_TRUE(Same(MustCast(F(1e20), kFloat64, kInt64), I(7766279631452241920)));
  EXPECT_TRUE(Same(MustCast(F(-1e20), kFloat64, kInt64), I(-7766279631452241920)));
  EXPECT_TRUE(Same(MustCast(F(-1e300), kFloat64, kInt32), I(0)));
  EXPECT_TRUE(Same(MustCast(F(1e19), kFloat64, kUInt64), I(int128(10000000000000000000ull))));
  EXPECT_TRUE(Same(MustCast(F(0x1p64), kFloat64, kUInt64), I(0)));
  EXPECT_TRUE(Same(MustCast(F(0x1p63), kFloat64, kInt64), I(kI64Min)));
  EXPECT_TRUE(Same(MustCast(F(-0x1p63), kFloat64, kInt64), I(kI64Min)));
  EXPECT_TRUE(Same(MustCast(F(-1.5), kFloat32, kUInt8), I(255)));
  EXPECT_TRUE(Same(MustCast(F(300.7), kFloat32, kUInt8), I(44)));
  EXPECT_TRUE(Same(MustCast(F(65504), kFloat16, kInt16), I(-32)));
}

TEST(ExecCastTest, IntToIntAndBool) {
  EXPECT_TRUE(Same(MustCast(I(300), kInt32, kInt8), I(44)));
  EXPECT_TRUE(Same(MustCast(I(-1), kInt32, kUInt16), I(65535)));
  EXPECT_TRUE(Same(MustCast(I(kU64Max), kUInt64, kInt64), I(-1)));
  EXPECT_TRUE(Same(MustCast(I(-1), kInt64, kUInt64), I(kU64Max)));
  EXPECT_TRUE(Same(MustCast(I(300), kUInt8, kInt32), I(44)));  // the value is a uint8 first
  EXPECT_TRUE(Same(MustCast(I(256), kInt32, kBool), B(true)));
  EXPECT_TRUE(Same(MustCast(I(256), kUInt8, kBool), B(false)));
  EXPECT_TRUE(Same(MustCast(F(0.0), kFloat32, kBool), B(false)));
  EXPECT_TRUE(Same(MustCast(F(-0.0), kFloat32, kBool), B(false)));
  EXPECT_TRUE(Same(MustCast(F(kNaN), kFloat32, kBool), B(true)));
  EXPECT_TRUE(Same(MustCast(F(0.5), kFloat32, kBool), B(true)));
  EXPECT_TRUE(Same(MustCast(F(1e-50), kFloat32, kBool), B(false)));  // 0 in float32
  EXPECT_TRUE(Same(MustCast(B(true), kBool, kFloat16), F(1.0)));
  EXPECT_TRUE(Same(MustCast(B(true), kBool, kInt64), I(1)));
}

TEST(ExecCastTest, ToFloatRoundsOnce) {
  EXPECT_TRUE(Same(MustCast(I(16777217), kInt32, kFloat32), F(16777216)));
  EXPECT_TRUE(Same(MustCast(I(16777219), kInt32, kFloat32), F(16777220)));
  EXPECT_TRUE(Same(MustCast(F(16777217), kFloat64, kFloat32), F(16777216)));
  EXPECT_TRUE(Same(MustCast(I((int128(1) << 53) + 1), kInt64, kFloat64), F(0x1p53)));
  EXPECT_TRUE(Same(MustCast(I((int128(1) << 53) + 3), kInt64, kFloat64), F(0x1p53 + 4)));
  EXPECT_TRUE(Same(MustCast(I(kU64Max), kUInt64, kFloat64), F(0x1p64)));
  EXPECT_TRUE(Same(MustCast(I(kI64Min), kInt64, kFloat32), F(-0x1p63)));
  // 2^60 + 2^36 + 1 is just above the midpoint of two floats; through a double it would land on the midpoint.
  EXPECT_TRUE(
      Same(MustCast(I((int128(1) << 60) + (int128(1) << 36) + 1), kInt64, kFloat32), F(0x1p60 + 0x1p37)));
  // The same trap for half and bfloat16 from doubles that float32 rounds to the midpoint.
  EXPECT_TRUE(Same(MustCast(F(1 + 0x1p-11 + 0x1p-30), kFloat64, kFloat16), F(1 + 0x1p-10)));
  EXPECT_TRUE(Same(MustCast(F(1 + 0x1p-8 + 0x1p-30), kFloat64, kBFloat16), F(1 + 0x1p-7)));
  EXPECT_TRUE(Same(MustCast(F(65519.999), kFloat64, kFloat16), F(65504)));
  EXPECT_TRUE(Same(MustCast(F(65520), kFloat64, kFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustCast(F(-65520), kFloat32, kFloat16), F(-kInf)));
  EXPECT_TRUE(Same(MustCast(I(65519), kInt32, kFloat16), F(65504)));
  EXPECT_TRUE(Same(MustCast(I(65520), kInt32, kFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustCast(I(2049), kInt32, kFloat16), F(2048)));
  EXPECT_TRUE(Same(MustCast(I(2051), kInt32, kFloat16), F(2052)));
  EXPECT_TRUE(Same(MustCast(I(int128(1) << 40), kInt64, kFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustCast(F(0.1), kFloat64, kFloat16), F(0.0999755859375)));
  EXPECT_TRUE(Same(MustCast(F(6e-8), kFloat64, kFloat16), F(0x1p-24)));
  EXPECT_TRUE(Same(MustCast(F(0x1p-25), kFloat64, kFloat16), F(0.0)));  // a tie: to even
  EXPECT_TRUE(Same(MustCast(F(-0x1p-25), kFloat64, kFloat16), F(-0.0)));
  EXPECT_TRUE(Same(MustCast(F(0x1p-25 + 0x1p-40), kFloat64, kFloat16), F(0x1p-24)));
  EXPECT_TRUE(Same(MustCast(F(1e-8), kFloat64, kFloat16), F(0.0)));
  EXPECT_TRUE(Same(MustCast(F(0.1), kFloat64, kBFloat16), F(0.10009765625)));
  EXPECT_TRUE(Same(MustCast(F(3.3895313892515355e38), kFloat32, kBFloat16), F(3.3895313892515355e38)));
  // Nearest-even, not tinygrad's Python chop-and-clamp (which sends anything above the maximum to inf): up to
  // half an ulp (2^119) above the largest bfloat16 rounds down to it, the midpoint rounds to even (inf).
  const double bf16_max = 3.3895313892515355e38;
  EXPECT_TRUE(Same(MustCast(F(bf16_max * 1.00001), kFloat64, kBFloat16), F(bf16_max)));
  EXPECT_TRUE(Same(MustCast(F(-bf16_max - 0x1p118), kFloat64, kBFloat16), F(-bf16_max)));
  EXPECT_TRUE(Same(MustCast(F(bf16_max + 0x1p119), kFloat64, kBFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustCast(F(-bf16_max - 0x1p119), kFloat32, kBFloat16), F(-kInf)));
  EXPECT_TRUE(Same(MustCast(F(1e300), kFloat64, kBFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustCast(F(1e300), kFloat64, kFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustCast(F(kNaN), kFloat64, kFloat16), F(kNaN)));
  EXPECT_TRUE(Same(MustCast(F(1e40), kFloat64, kFloat32), F(kInf)));
  EXPECT_TRUE(Same(MustCast(F(-1e40), kFloat64, kFloat32), F(-kInf)));
  EXPECT_TRUE(Same(MustCast(F(1e-50), kFloat64, kFloat32), F(0.0)));
  EXPECT_TRUE(Same(MustCast(F(FLT_MAX), kFloat64, kFloat32), F(FLT_MAX)));
  EXPECT_TRUE(Same(MustCast(F(FLT_MAX + 0x1p102), kFloat64, kFloat32), F(FLT_MAX)));
  EXPECT_TRUE(Same(MustCast(F(FLT_MAX + 0x1p103), kFloat64, kFloat32), F(kInf)));  // a tie: to even
  EXPECT_TRUE(Same(MustCast(F(0.0999755859375), kFloat16, kFloat64), F(0.0999755859375)));
}

TEST(ExecCastTest, CastThroughExecAlu) {
  EXPECT_TRUE(Same(MustAlu(Ops::CAST, kUInt8, {F(-1.5)}, kFloat32), I(255)));
  EXPECT_TRUE(Same(MustAlu(Ops::CAST, kInt32, {I(300)}, kUInt8), I(44)));
  EXPECT_TRUE(Same(MustAlu(Ops::CAST, kInt32, {I(300)}), I(300)));  // no source dtype: the exact value
  EXPECT_TRUE(Same(MustAlu(Ops::CAST, kFloat16, {F(65519.999)}), F(65504)));
}

TEST(ExecBitcastTest, Bits) {
  EXPECT_TRUE(Same(MustBitcast(F(1.0), kFloat32, kUInt32), I(0x3F800000)));
  EXPECT_TRUE(Same(MustBitcast(F(-2.0), kFloat32, kInt32), I(-1073741824)));
  EXPECT_TRUE(Same(MustBitcast(I(0x7F800000), kUInt32, kFloat32), F(kInf)));
  EXPECT_TRUE(Same(MustBitcast(I(-1), kInt32, kFloat32), F(kNaN)));
  EXPECT_TRUE(Same(MustBitcast(F(1.0), kFloat16, kUInt16), I(0x3C00)));
  EXPECT_TRUE(Same(MustBitcast(F(-0.0), kFloat16, kUInt16), I(0x8000)));
  EXPECT_TRUE(Same(MustBitcast(F(65504), kFloat16, kInt16), I(0x7BFF)));
  EXPECT_TRUE(Same(MustBitcast(I(0x7C00), kUInt16, kFloat16), F(kInf)));
  EXPECT_TRUE(Same(MustBitcast(I(1), kUInt16, kFloat16), F(0x1p-24)));
  EXPECT_TRUE(Same(MustBitcast(I(-1), kInt16, kFloat16), F(kNaN)));
  EXPECT_TRUE(Same(MustBitcast(F(1.0), kBFloat16, kInt16), I(0x3F80)));
  EXPECT_TRUE(Same(MustBitcast(I(0x4049), kUInt16, kBFloat16), F(3.140625)));
  EXPECT_TRUE(Same(MustBitcast(I(0x3C00), kUInt16, kBFloat16), F(0x1p-7)));
  EXPECT_TRUE(Same(MustBitcast(F(-0.0), kFloat64, kInt64), I(kI64Min)));
  EXPECT_TRUE(Same(MustBitcast(I(0x3FF0000000000000), kUInt64, kFloat64), F(1.0)));
  EXPECT_TRUE(Same(MustBitcast(F(1.0), kFloat64, kUInt64), I(0x3FF0000000000000)));
  EXPECT_TRUE(Same(MustBitcast(I(-1), kInt8, kUInt8), I(255)));
  EXPECT_TRUE(Same(MustBitcast(I(-1), kInt64, kUInt64), I(kU64Max)));
  EXPECT_TRUE(Same(MustBitcast(B(true), kBool, kInt8), I(1)));
  EXPECT_TRUE(Same(MustBitcast(I(2), kUInt8, kBool), B(true)));
  EXPECT_TRUE(Same(MustBitcast(I(0), kUInt8, kBool), B(false)));
  // The value is made a value of the source dtype first.
  EXPECT_TRUE(Same(MustBitcast(F(0.1), kFloat16, kUInt16), I(0x2E66)));
  EXPECT_TRUE(Same(MustBitcast(I(0x1FFFF), kUInt16, kFloat16), F(kNaN)));
  EXPECT_TRUE(Same(MustAlu(Ops::BITCAST, kUInt32, {F(1.0)}, kFloat32), I(0x3F800000)));

  EXPECT_FALSE(ExecBitcast(F(1.0), kFloat32, kInt64).ok());
  EXPECT_FALSE(ExecBitcast(F(1.0), kFloat16, kUInt8).ok());
  EXPECT_FALSE(ExecAlu(Ops::BITCAST, kUInt32, {F(1.0)}).ok());  // no source dtype
}

TEST(ExecBitcastTest, EveryHalfPatternRoundTrips) {
  for (uint32_t bits = 0; bits < 0x10000; ++bits) {
    ConstValue h = MustBitcast(I(bits), kUInt16, kFloat16);
    ASSERT_TRUE(h.is_float());
    bool nan = (bits & 0x7C00) == 0x7C00 && (bits & 0x3FF) != 0;
    ASSERT_EQ(std::isnan(h.f()), nan) << bits;
    if (nan) continue;
    ConstValue back = MustBitcast(h, kFloat16, kUInt16);
    ASSERT_TRUE(Same(back, I(bits))) << bits << " -> " << h << " -> " << back;
  }
}

// ---- errors ----

TEST(ExecAluTest, BadInputIsAnErrorWithTheOpInTheMessage) {
  struct BadCase {
    Ops op;
    DType dtype;
    std::vector<ConstValue> operands;
    std::optional<DType> operand_dtype;
    const char* message;
  };
  const std::vector<BadCase> cases = {
      {Ops::ADD, kInt32, {I(1)}, std::nullopt, "needs 2 operands, got 1"},
      {Ops::NEG, kInt32, {I(1), I(2)}, std::nullopt, "needs 1 operands, got 2"},
      {Ops::WHERE, kInt32, {B(true), I(2)}, std::nullopt, "needs 3 operands"},
      {Ops::CAST, kInt32, {}, std::nullopt, "needs 1 operands, got 0"},
      {Ops::LOAD, kInt32, {I(1)}, std::nullopt, "not an ALU"},
      {Ops::CONST, kInt32, {I(1)}, std::nullopt, "not an ALU"},
      {Ops::EXP2, kInt32, {I(1)}, std::nullopt, "float-only"},
      {Ops::SQRT, kBool, {B(true)}, std::nullopt, "float-only"},
      {Ops::FDIV, kInt32, {I(1), I(2)}, std::nullopt, "float-only"},
      {Ops::RECIP, kUInt8, {I(1)}, std::nullopt, "float-only"},
      {Ops::IDIV, kFloat32, {F(1), F(2)}, std::nullopt, "integer-only"},
      {Ops::MOD, kFloat64, {F(1), F(2)}, std::nullopt, "integer-only"},
      {Ops::SHL, kFloat16, {F(1), F(2)}, std::nullopt, "integer-only"},
      {Ops::XOR, kFloat32, {F(1), F(2)}, std::nullopt, "integer-only"},
      {Ops::CMPLT, kInt32, {I(1), I(2)}, std::nullopt, "produces bool"},
      {Ops::ADD, kFloat32.Vec(4), {F(1), F(2)}, std::nullopt, "vector"},
      {Ops::ADD, kFloat32.Ptr(), {F(1), F(2)}, std::nullopt, "pointer"},
      {Ops::ADD, kVoid, {I(1), I(2)}, std::nullopt, "void"},
      {Ops::ADD, kInt32, {I(1), I(2)}, kInt64, "differs"},
      {Ops::CMPLT, kBool, {I(1), I(2)}, kInt32.Vec(2), "vector"},
  };
  for (const BadCase& c : cases) {
    absl::StatusOr<ConstValue> r = ExecAlu(c.op, c.dtype, c.operands, c.operand_dtype);
    ASSERT_FALSE(r.ok()) << c.op << " " << c.dtype;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(c.message)) << c.op;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(std::string(OpName(c.op)))) << c.op;
  }
  EXPECT_FALSE(ExecCast(I(1), kInt32.Vec(2), kInt32).ok());
  EXPECT_FALSE(ExecCast(I(1), kInt32, kVoid).ok());
  EXPECT_FALSE(ExecCast(I(1), kInt32.Ptr(), kInt64).ok());
}

TEST(ExecAluTest, EveryAluOpOnEveryDtypeAnswersWithoutCrashing) {
  const DType all[] = {kBool,  kInt8,   kUInt8,   kInt16,    kUInt16,  kInt32,  kUInt32,
                       kInt64, kUInt64, kFloat16, kBFloat16, kFloat32, kFloat64};
  const ConstValue values[] = {I(0),     I(-1),   I(kI64Min), I(kU64Max), F(kNaN),
                               F(-kInf), F(-0.0), F(1e300),   B(true)};
  int ok = 0;
  groups::kALU.ForEach([&](Ops op) {
    int arity = groups::kUnary.contains(op) ? 1 : groups::kBinary.contains(op) ? 2 : 3;
    for (DType dt : all) {
      for (const ConstValue& a : values) {
        for (const ConstValue& b : values) {
          std::vector<ConstValue> operands(arity, a);
          operands.back() = b;
          DType out = groups::kComparison.contains(op) ? kBool : dt;
          std::optional<DType> operand_dtype;
          if (groups::kComparison.contains(op)) operand_dtype = dt;
          absl::StatusOr<ConstValue> r = ExecAlu(op, out, operands, operand_dtype);
          if (r.ok()) ++ok;
        }
      }
    }
  });
  EXPECT_GT(ok, 10000);
}

// ---- vectors ----

TEST(ExecAluVectorTest, Elementwise) {
  absl::StatusOr<std::vector<ConstValue>> r =
      ExecAluVector(Ops::ADD, kInt32.Vec(4), {{I(1), I(2), I(3), I(kI32Max)}, {I(10)}});
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_TRUE(Same((*r)[0], I(11)));
  EXPECT_TRUE(Same((*r)[1], I(12)));
  EXPECT_TRUE(Same((*r)[2], I(13)));
  EXPECT_TRUE(Same((*r)[3], I(kI32Min + 9)));

  r = ExecAluVector(Ops::CMPLT, kBool.Vec(2), {{F(1), F(kNaN)}, {F(2), F(2)}}, kFloat32.Vec(2));
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 2u);
  EXPECT_TRUE(Same((*r)[0], B(true)));
  EXPECT_TRUE(Same((*r)[1], B(false)));

  r = ExecAluVector(Ops::WHERE, kFloat16.Vec(2), {{B(true), B(false)}, {F(1), F(2)}, {F(3)}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(Same((*r)[0], F(1)));
  EXPECT_TRUE(Same((*r)[1], F(3)));

  r = ExecAluVector(Ops::MUL, kFloat32, {{F(2)}, {F(3)}});  // a scalar dtype is one lane
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 1u);
  EXPECT_TRUE(Same((*r)[0], F(6)));

  EXPECT_FALSE(ExecAluVector(Ops::ADD, kInt32.Vec(4), {{I(1), I(2)}, {I(1)}}).ok());
  EXPECT_FALSE(ExecAluVector(Ops::ADD, kInt32.Vec(4), {{}, {I(1)}}).ok());
  EXPECT_FALSE(ExecAluVector(Ops::ADD, kInt32.Ptr(), {{I(1)}, {I(1)}}).ok());
  EXPECT_FALSE(ExecAluVector(Ops::CMPLT, kBool.Vec(4), {{I(1)}, {I(1)}}, kInt32.Vec(2)).ok());
  EXPECT_FALSE(ExecAluVector(Ops::IDIV, kFloat32.Vec(2), {{F(1)}, {F(1)}}).ok());
}

// ---- properties against the compiler's own arithmetic ----

int32_t Wrap32(int64_t x) { return static_cast<int32_t>(static_cast<uint32_t>(x)); }

class RandomInts {
 public:
  explicit RandomInts(uint64_t seed) : rng_(seed) {}
  // Edge values a quarter of the time, else uniform bits.
  int32_t Next32() {
    static constexpr int32_t kEdges[] = {0,
                                         1,
                                         -1,
                                         2,
                                         -2,
                                         7,
                                         -7,
                                         31,
                                         32,
                                         static_cast<int32_t>(kI32Min),
                                         static_cast<int32_t>(kI32Min + 1),
                                         static_cast<int32_t>(kI32Max),
                                         static_cast<int32_t>(kI32Max - 1)};
    if (rng_() % 4 == 0) return kEdges[rng_() % std::size(kEdges)];
    return static_cast<int32_t>(static_cast<uint32_t>(rng_()));
  }
  uint64_t Next64() {
    static constexpr uint64_t kEdges[] = {0,  1, ~uint64_t{0}, uint64_t{1} << 63, (uint64_t{1} << 63) - 1, 2,
                                          63, 64};
    if (rng_() % 4 == 0) return kEdges[rng_() % std::size(kEdges)];
    return rng_();
  }

 private:
  std::mt19937_64 rng_;
};

TEST(ExecAluPropertyTest, Int32MatchesInt64ArithmeticWrapped) {
  RandomInts rng(20240611);
  for (int iter = 0; iter < 20000; ++iter) {
    const int64_t a = rng.Next32(), b = rng.Next32(), c = rng.Next32();
    SCOPED_TRACE(testing::Message() << "a=" << a << " b=" << b << " c=" << c);
    auto run = [&](Ops op, std::vector<ConstValue> operands) -> int64_t {
      ConstValue r = MustAlu(op, kInt32, operands);
      EXPECT_TRUE(r.is_int()) << op;
      return static_cast<int64_t>(r.i());
    };
    EXPECT_EQ(run(Ops::ADD, {I(a), I(b)}), Wrap32(a + b));
    EXPECT_EQ(run(Ops::SUB, {I(a), I(b)}), Wrap32(a - b));
    EXPECT_EQ(run(Ops::MUL, {I(a), I(b)}), Wrap32(a * b));
    EXPECT_EQ(run(Ops::MULACC, {I(a), I(b), I(c)}), Wrap32(a * b + c));
    EXPECT_EQ(run(Ops::NEG, {I(a)}), Wrap32(-a));
    EXPECT_EQ(run(Ops::IDIV, {I(a), I(b)}), b == 0 ? 0 : Wrap32(a / b));
    EXPECT_EQ(run(Ops::MOD, {I(a), I(b)}), b == 0 ? a : Wrap32(a % b));
    EXPECT_EQ(run(Ops::MAX, {I(a), I(b)}), std::max(a, b));
    EXPECT_EQ(run(Ops::XOR, {I(a), I(b)}), a ^ b);
    EXPECT_EQ(run(Ops::OR, {I(a), I(b)}), a | b);
    EXPECT_EQ(run(Ops::AND, {I(a), I(b)}), a & b);
    EXPECT_EQ(run(Ops::WHERE, {B(c & 1), I(a), I(b)}), (c & 1) ? a : b);
    const int64_t n = b & 31;
    EXPECT_EQ(run(Ops::SHL, {I(a), I(n)}), Wrap32(static_cast<int64_t>(static_cast<uint64_t>(a) << n)));
    EXPECT_EQ(run(Ops::SHR, {I(a), I(n)}), a >> n);
    EXPECT_TRUE(Same(MustAlu(Ops::CMPLT, kBool, {I(a), I(b)}, kInt32), B(a < b)));
    EXPECT_TRUE(Same(MustAlu(Ops::CMPNE, kBool, {I(a), I(b)}, kInt32), B(a != b)));
    // Casts of the same bits to the other integer types, against C++'s (C++20: modular) conversions.
    EXPECT_TRUE(Same(MustCast(I(a), kInt32, kUInt8), I(static_cast<uint8_t>(a))));
    EXPECT_TRUE(Same(MustCast(I(a), kInt32, kInt16), I(static_cast<int16_t>(a))));
    EXPECT_TRUE(Same(MustCast(I(a), kInt32, kUInt64), I(static_cast<uint64_t>(a))));
    EXPECT_TRUE(Same(MustCast(I(a), kInt32, kFloat32), F(static_cast<float>(a))));
  }
}

TEST(ExecAluPropertyTest, Int8AndUInt8Exhaustive) {
  for (int a = -128; a < 128; ++a) {
    for (int b = -128; b < 128; ++b) {
      SCOPED_TRACE(testing::Message() << "a=" << a << " b=" << b);
      auto run = [&](Ops op, DType dt, int x, int y) {
        ConstValue r = MustAlu(op, dt, {I(x), I(y)});
        return static_cast<int>(r.i());
      };
      auto s8 = [](int x) { return static_cast<int>(static_cast<int8_t>(x)); };
      ASSERT_EQ(run(Ops::ADD, kInt8, a, b), s8(a + b));
      ASSERT_EQ(run(Ops::SUB, kInt8, a, b), s8(a - b));
      ASSERT_EQ(run(Ops::MUL, kInt8, a, b), s8(a * b));
      ASSERT_EQ(run(Ops::IDIV, kInt8, a, b), b == 0 ? 0 : s8(a / b));
      ASSERT_EQ(run(Ops::MOD, kInt8, a, b), b == 0 ? a : s8(a % b));
      const int ua = a & 255, ub = b & 255;
      ASSERT_EQ(run(Ops::ADD, kUInt8, ua, ub), (ua + ub) & 255);
      ASSERT_EQ(run(Ops::SUB, kUInt8, ua, ub), (ua - ub) & 255);
      ASSERT_EQ(run(Ops::MUL, kUInt8, ua, ub), (ua * ub) & 255);
      ASSERT_EQ(run(Ops::IDIV, kUInt8, ua, ub), ub == 0 ? 0 : ua / ub);
      ASSERT_EQ(run(Ops::MOD, kUInt8, ua, ub), ub == 0 ? ua : ua % ub);
      if (ub < 8) {
        ASSERT_EQ(run(Ops::SHL, kInt8, a, ub), s8(a * (1 << ub)));
        ASSERT_EQ(run(Ops::SHR, kInt8, a, ub), a >> ub);
        ASSERT_EQ(run(Ops::SHR, kUInt8, ua, ub), ua >> ub);
      }
    }
  }
}

TEST(ExecAluPropertyTest, UInt64AndInt64MatchNativeArithmetic) {
  RandomInts rng(7);
  for (int iter = 0; iter < 20000; ++iter) {
    const uint64_t a = rng.Next64(), b = rng.Next64(), c = rng.Next64();
    SCOPED_TRACE(testing::Message() << "a=" << a << " b=" << b);
    auto run = [&](Ops op, DType dt, std::vector<ConstValue> operands) {
      ConstValue r = MustAlu(op, dt, operands);
      return static_cast<uint64_t>(r.i());  // bits of the result: wraps negative values
    };
    EXPECT_EQ(run(Ops::ADD, kUInt64, {I(a), I(b)}), a + b);
    EXPECT_EQ(run(Ops::SUB, kUInt64, {I(a), I(b)}), a - b);
    EXPECT_EQ(run(Ops::MUL, kUInt64, {I(a), I(b)}), a * b);
    EXPECT_EQ(run(Ops::MULACC, kUInt64, {I(a), I(b), I(c)}), a * b + c);
    EXPECT_EQ(run(Ops::IDIV, kUInt64, {I(a), I(b)}), b == 0 ? 0 : a / b);
    EXPECT_EQ(run(Ops::MOD, kUInt64, {I(a), I(b)}), b == 0 ? a : a % b);
    EXPECT_EQ(run(Ops::SHL, kUInt64, {I(a), I(b % 64)}), a << (b % 64));
    EXPECT_EQ(run(Ops::SHR, kUInt64, {I(a), I(b % 64)}), a >> (b % 64));
    EXPECT_EQ(run(Ops::MAX, kUInt64, {I(a), I(b)}), std::max(a, b));
    EXPECT_TRUE(Same(MustAlu(Ops::CMPLT, kBool, {I(a), I(b)}, kUInt64), B(a < b)));
    EXPECT_TRUE(Same(MustCast(I(a), kUInt64, kFloat32), F(static_cast<float>(a))));
    EXPECT_TRUE(Same(MustCast(I(a), kUInt64, kFloat64), F(static_cast<double>(a))));

    const int64_t sa = static_cast<int64_t>(a), sb = static_cast<int64_t>(b);
    EXPECT_EQ(run(Ops::ADD, kInt64, {I(sa), I(sb)}), a + b);
    EXPECT_EQ(run(Ops::MUL, kInt64, {I(sa), I(sb)}), a * b);
    if (sb != 0 && !(sa == kI64Min && sb == -1)) {
      EXPECT_EQ(run(Ops::IDIV, kInt64, {I(sa), I(sb)}), static_cast<uint64_t>(sa / sb));
      EXPECT_EQ(run(Ops::MOD, kInt64, {I(sa), I(sb)}), static_cast<uint64_t>(sa % sb));
    }
    EXPECT_EQ(run(Ops::SHR, kInt64, {I(sa), I(b % 64)}), static_cast<uint64_t>(sa >> (b % 64)));
    EXPECT_TRUE(Same(MustAlu(Ops::CMPLT, kBool, {I(sa), I(sb)}, kInt64), B(sa < sb)));
    EXPECT_TRUE(Same(MustCast(I(sa), kInt64, kFloat32), F(static_cast<float>(sa))));
    EXPECT_TRUE(Same(MustCast(I(sa), kInt64, kFloat64), F(static_cast<double>(sa))));
  }
}

// Random float32 and float64 bit patterns (NaN, inf, subnormals included) against the machine's IEEE
// arithmetic.
TEST(ExecAluPropertyTest, FloatsMatchNativeArithmetic) {
  std::mt19937_64 rng(99);
  auto same_float = [](ConstValue got, double want) {
    return got.is_float() && ((std::isnan(got.f()) && std::isnan(want)) ||
                              std::bit_cast<uint64_t>(got.f()) == std::bit_cast<uint64_t>(want));
  };
  for (int iter = 0; iter < 20000; ++iter) {
    const float a = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    const float b = std::bit_cast<float>(static_cast<uint32_t>(rng()));
    SCOPED_TRACE(testing::Message() << "a=" << a << " b=" << b);
    EXPECT_TRUE(same_float(MustAlu(Ops::ADD, kFloat32, {F(a), F(b)}), a + b));
    EXPECT_TRUE(same_float(MustAlu(Ops::SUB, kFloat32, {F(a), F(b)}), a - b));
    EXPECT_TRUE(same_float(MustAlu(Ops::MUL, kFloat32, {F(a), F(b)}), a * b));
    if (b != 0) {
      EXPECT_TRUE(same_float(MustAlu(Ops::FDIV, kFloat32, {F(a), F(b)}), a / b));
    }
    if (a >= 0) {
      EXPECT_TRUE(same_float(MustAlu(Ops::SQRT, kFloat32, {F(a)}), std::sqrt(a)));
    }
    EXPECT_TRUE(Same(MustAlu(Ops::CMPLT, kBool, {F(a), F(b)}, kFloat32), B(a < b)));
    EXPECT_TRUE(Same(MustAlu(Ops::CMPNE, kBool, {F(a), F(b)}, kFloat32), B(a != b)));
    const double da = a * 1e10, db = b;
    // 1e10 is a float and a * 1e10 is exact in double, so rounding it to float32 is float multiplication.
    EXPECT_TRUE(same_float(MustCast(F(da), kFloat64, kFloat32), a * 1e10f));
    EXPECT_TRUE(same_float(MustAlu(Ops::MUL, kFloat64, {F(da), F(db)}), da * db));
    EXPECT_TRUE(same_float(MustAlu(Ops::ADD, kFloat64, {F(da), F(db)}), da + db));
    if (db != 0) {
      EXPECT_TRUE(same_float(MustAlu(Ops::FDIV, kFloat64, {F(da), F(db)}), da / db));
    }
  }
}

#if defined(__FLT16_MAX__)
// The compiler's _Float16 (GCC on x86-64) is an independent float16 implementation: differential tests
// against it. Single ops on _Float16 values compute in float and round once, which is correctly rounded.
TEST(ExecAluPropertyTest, HalfMatchesCompilerFloat16) {
  std::mt19937_64 rng(16);
  auto half_of_bits = [](uint16_t bits) { return static_cast<_Float16>(HalfBitsToFloat(bits)); };
  auto same_half = [](ConstValue got, _Float16 want) {
    double w = static_cast<double>(want);
    return got.is_float() && ((std::isnan(got.f()) && std::isnan(w)) ||
                              std::bit_cast<uint64_t>(got.f()) == std::bit_cast<uint64_t>(w));
  };
  for (int iter = 0; iter < 20000; ++iter) {
    const _Float16 a = half_of_bits(static_cast<uint16_t>(rng()));
    const _Float16 b = half_of_bits(static_cast<uint16_t>(rng()));
    const double fa = static_cast<double>(a), fb = static_cast<double>(b);
    SCOPED_TRACE(testing::Message() << "a=" << fa << " b=" << fb);
    EXPECT_TRUE(same_half(MustAlu(Ops::ADD, kFloat16, {F(fa), F(fb)}), static_cast<_Float16>(a + b)));
    EXPECT_TRUE(same_half(MustAlu(Ops::SUB, kFloat16, {F(fa), F(fb)}), static_cast<_Float16>(a - b)));
    EXPECT_TRUE(same_half(MustAlu(Ops::MUL, kFloat16, {F(fa), F(fb)}), static_cast<_Float16>(a * b)));
    if (fb != 0) {
      EXPECT_TRUE(same_half(MustAlu(Ops::FDIV, kFloat16, {F(fa), F(fb)}), static_cast<_Float16>(a / b)));
    }
    // Arbitrary doubles and 64-bit integers rounded once to half.
    const double d =
        std::bit_cast<double>((rng() & 0x800FFFFFFFFFFFFFull) | (uint64_t{0x3E0 + rng() % 64} << 52));
    EXPECT_TRUE(same_half(MustCast(F(d), kFloat64, kFloat16), static_cast<_Float16>(d))) << d;
    const int64_t i = static_cast<int64_t>(rng()) >> (rng() % 64);
    EXPECT_TRUE(same_half(MustCast(I(i), kInt64, kFloat16), static_cast<_Float16>(i))) << i;
  }
}
#endif

// bfloat16 has no compiler type here; the reference rounds with exact double arithmetic: the two bfloat16
// neighbours of d and the exact distances to them.
double ReferenceBFloat16(double d) {
  if (std::isnan(d) || std::isinf(d) || d == 0) return d;
  const double mag = std::fabs(d);
  int e;
  std::frexp(mag, &e);                                           // mag in [2^(e-1), 2^e)
  const double ulp = std::ldexp(1.0, e - 8);                     // 8 significant bits (normal numbers only)
  const double lo = std::floor(mag / ulp) * ulp, hi = lo + ulp;  // exact: power-of-two scaling
  const double below = mag - lo, above = hi - mag;
  double r = below < above ? lo : above < below ? hi : (std::fmod(lo / ulp, 2) == 0 ? lo : hi);
  if (r > 3.3895313892515355e38) r = kInf;  // beyond the largest bfloat16
  return std::copysign(r, d);
}

TEST(ExecAluPropertyTest, BFloat16RoundsLikeExactReference) {
  std::mt19937_64 rng(1616);
  for (int iter = 0; iter < 20000; ++iter) {
    // Exponents around 1 and near the top of the range.
    const uint64_t exponent = rng() % 2 ? 0x3F0 + rng() % 32 : 0x470 + rng() % 16;
    const double d = std::bit_cast<double>((rng() & 0x800FFFFFFFFFFFFFull) | (exponent << 52));
    ConstValue got = MustCast(F(d), kFloat64, kBFloat16);
    const double want = ReferenceBFloat16(d);
    ASSERT_TRUE(got.is_float());
    EXPECT_EQ(std::bit_cast<uint64_t>(got.f()), std::bit_cast<uint64_t>(want))
        << "d=" << d << " got " << got.f() << " want " << want;
  }
}

}  // namespace
}  // namespace uopc
