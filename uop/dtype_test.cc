#include "uop/dtype.h"

#include <bit>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/numeric/int128.h"
#include "gtest/gtest.h"

namespace uopc {
namespace {

using absl::int128;
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

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

const DType kScalars[] = {kBool,  kInt8,   kUInt8,   kInt16,    kUInt16,  kInt32,  kUInt32,
                          kInt64, kUInt64, kFloat16, kBFloat16, kFloat32, kFloat64};

ConstValue I(int128 v) { return ConstValue::Int(v); }
ConstValue F(double v) { return ConstValue::Float(v); }
ConstValue B(bool v) { return ConstValue::Bool(v); }

// Same kind and bits (so -0.0 differs from 0.0); any NaN matches any NaN.
bool Same(const ConstValue& a, const ConstValue& b) {
  if (a.is_float() && b.is_float() && std::isnan(a.f()) && std::isnan(b.f())) return true;
  return a.Identical(b);
}

// ---- names and printing ----

TEST(DTypeTest, ScalarNames) {
  struct Names {
    DType dt;
    const char* repr;  // tinygrad's repr()
    const char* name;  // tinygrad's DType.name (the C name)
  };
  const Names table[] = {
      {kBool, "dtypes.bool", "bool"},
      {kInt8, "dtypes.char", "signed char"},
      {kUInt8, "dtypes.uchar", "unsigned char"},
      {kInt16, "dtypes.short", "short"},
      {kUInt16, "dtypes.ushort", "unsigned short"},
      {kInt32, "dtypes.int", "int"},
      {kUInt32, "dtypes.uint", "unsigned int"},
      {kInt64, "dtypes.long", "long"},
      {kUInt64, "dtypes.ulong", "unsigned long"},
      {kFloat16, "dtypes.half", "half"},
      {kBFloat16, "dtypes.bfloat16", "__bf16"},
      {kFloat32, "dtypes.float", "float"},
      {kFloat64, "dtypes.double", "double"},
      {kVoid, "dtypes.void", "void"},
  };
  for (const Names& n : table) {
    EXPECT_EQ(n.dt.ToString(), n.repr);
    EXPECT_EQ(n.dt.name(), n.name);
    EXPECT_EQ(std::string(n.dt.c_name()), n.name);
    EXPECT_EQ("dtypes." + std::string(n.dt.short_name()), n.repr);
    std::ostringstream os;
    os << n.dt;
    EXPECT_EQ(os.str(), n.repr);
  }
}

TEST(DTypeTest, VectorAndPointerRepr) {
  EXPECT_EQ(kFloat32.Vec(4).ToString(), "dtypes.float.vec(4)");
  EXPECT_EQ(kFloat32.Vec(4).name(), "float4");
  EXPECT_EQ(kUInt8.Vec(4).name(), "uchar4");
  EXPECT_EQ(kFloat16.Vec(2).name(), "half2");
  EXPECT_EQ(kInt32.Ptr(3).ToString(), "dtypes.int.ptr(3)");
  EXPECT_EQ(kFloat32.Ptr(16).ToString(), "dtypes.float.ptr(16)");
  EXPECT_EQ(kFloat32.Ptr().ToString(), "dtypes.float.ptr(-1)");
  EXPECT_EQ(kFloat16.Ptr(16, /*local=*/true).ToString(), "dtypes.half.ptr(16, local=True)");
  EXPECT_EQ(kFloat16.Ptr(16, /*local=*/true).Vec(4).ToString(), "dtypes.half.ptr(16, local=True).vec(4)");
  EXPECT_EQ(kFloat32.Ptr(1024).Vec(4).ToString(), "dtypes.float.ptr(1024).vec(4)");
  EXPECT_EQ(kFloat32.Vec(4).Ptr().Vec(4).ToString(), "dtypes.float.vec(4).ptr(-1).vec(4)");
  EXPECT_EQ(kFloat32.Vec(4).Ptr().name(), "float4");
}

TEST(DTypeTest, FromName) {
  const std::pair<const char*, DType> table[] = {
      {"float", kFloat32},     {"float32", kFloat32}, {"half", kFloat16},    {"float16", kFloat16},
      {"bfloat16", kBFloat16}, {"double", kFloat64},  {"float64", kFloat64}, {"int", kInt32},
      {"int32", kInt32},       {"uint8", kUInt8},     {"uchar", kUInt8},     {"char", kInt8},
      {"int8", kInt8},         {"long", kInt64},      {"ulong", kUInt64},    {"uint64", kUInt64},
      {"short", kInt16},       {"ushort", kUInt16},   {"uint", kUInt32},     {"bool", kBool},
      {"void", kVoid},
  };
  for (const auto& [name, dt] : table) {
    std::optional<DType> got = DType::FromName(name);
    ASSERT_TRUE(got.has_value()) << name;
    EXPECT_EQ(*got, dt) << name;
  }
  for (const char* bad : {"", "float128", "fp8e4m3", "Float", "int4", "dtypes.int"}) {
    EXPECT_FALSE(DType::FromName(bad).has_value()) << bad;
  }
  // Every scalar's short name parses back to it.
  for (DType dt : kScalars) EXPECT_EQ(DType::FromName(dt.short_name()).value_or(kVoid), dt) << dt;
}

// ---- structure ----

TEST(DTypeTest, VecAndPtrStructure) {
  EXPECT_EQ(kFloat32.Vec(1), kFloat32);
  EXPECT_EQ(kVoid.Vec(4), kVoid);
  EXPECT_FALSE(kFloat32.Vec(4).vec(2).has_value());  // no vectors of vectors
  EXPECT_FALSE(kFloat32.Ptr().ptr().has_value());    // no pointers to pointers
  EXPECT_FALSE(kFloat32.Ptr().Vec(4).vec(2).has_value());
  EXPECT_EQ(kFloat32.Ptr().Vec(1), kFloat32.Ptr());

  DType pv = kFloat32.Ptr().Vec(4);
  EXPECT_EQ(pv.vcount(), 4);
  EXPECT_EQ(pv.count(), 1);
  DType vp = kFloat32.Vec(4).Ptr();
  EXPECT_EQ(vp.vcount(), 1);
  EXPECT_EQ(vp.count(), 4);
  DType vpv = kFloat32.Vec(4).Ptr().Vec(4);
  EXPECT_EQ(vpv.vcount(), 4);
  EXPECT_EQ(vpv.count(), 4);
  EXPECT_EQ(vpv.base(), kFloat32.Vec(4));
  EXPECT_EQ(vp.base(), kFloat32.Vec(4));
  EXPECT_EQ(kFloat32.Vec(4).scalar(), kFloat32);
  EXPECT_EQ(kFloat32.Vec(4).base(), kFloat32.Vec(4));
  EXPECT_EQ(kInt32.vcount(), 1);
  EXPECT_EQ(kInt32.Vec(8).vcount(), 8);

  EXPECT_TRUE(kFloat32.Ptr().is_ptr());
  EXPECT_FALSE(kFloat32.is_ptr());
  EXPECT_TRUE(kFloat16.Ptr(16, true).is_local());
  EXPECT_FALSE(kFloat16.Ptr(16).is_local());
  EXPECT_EQ(kFloat16.Ptr(16).ptr_size(), 16);
  EXPECT_EQ(kFloat16.Ptr().ptr_size(), -1);
  EXPECT_EQ(kFloat16.ptr_size(), 0);
  EXPECT_TRUE(kVoid.is_void());
  EXPECT_FALSE(kVoid.Ptr().is_void());
}

TEST(DTypeTest, EqualityAndHash) {
  EXPECT_EQ(kFloat32.Ptr(), kFloat32.Ptr());
  EXPECT_FALSE(kFloat32.Ptr() != kFloat32.Ptr());
  EXPECT_EQ(kFloat32.Vec(4).Ptr().Vec(4), kFloat32.Vec(4).Ptr().Vec(4));
  EXPECT_NE(kFloat32.Ptr(16), kFloat32.Ptr());
  EXPECT_NE(kFloat32.Ptr(16, true), kFloat32.Ptr(16));
  EXPECT_NE(kFloat32.Vec(4).Ptr(), kFloat32.Ptr().Vec(4));
  EXPECT_NE(kFloat32, kFloat32.Ptr());
  EXPECT_NE(kFloat32, kFloat32.Vec(2));
  EXPECT_NE(kInt32, kUInt32);
  EXPECT_EQ(absl::Hash<DType>{}(kFloat32.Vec(4).Ptr(8)), absl::Hash<DType>{}(kFloat32.Vec(4).Ptr(8)));
  EXPECT_EQ(absl::Hash<DType>{}(DType(ScalarType::kInt32)), absl::Hash<DType>{}(kInt32));
}

TEST(DTypeTest, ItemsizeBitsAndPriority) {
  struct Row {
    DType dt;
    int itemsize;
    int priority;
  };
  const Row table[] = {
      {kVoid, 0, -1},    {kBool, 1, 0},      {kInt8, 1, 1},     {kUInt8, 1, 2},    {kInt16, 2, 3},
      {kUInt16, 2, 4},   {kInt32, 4, 5},     {kUInt32, 4, 6},   {kInt64, 8, 7},    {kUInt64, 8, 8},
      {kFloat16, 2, 11}, {kBFloat16, 2, 12}, {kFloat32, 4, 13}, {kFloat64, 8, 14},
  };
  for (const Row& r : table) {
    EXPECT_EQ(r.dt.itemsize(), r.itemsize) << r.dt;
    EXPECT_EQ(r.dt.priority(), r.priority) << r.dt;
    EXPECT_EQ(r.dt.count(), 1) << r.dt;
    if (r.dt.is_int()) {
      EXPECT_EQ(r.dt.bits(), 8 * r.itemsize) << r.dt;
    }
  }
  EXPECT_EQ(kFloat32.Vec(4).itemsize(), 16);
  EXPECT_EQ(kFloat16.Vec(3).itemsize(), 6);
  EXPECT_EQ(kFloat32.Vec(4).count(), 4);
  EXPECT_EQ(kFloat32.Ptr().itemsize(), 4);  // a pointer's itemsize is its pointee's
  EXPECT_EQ(kFloat32.Vec(4).Ptr().itemsize(), 16);
  EXPECT_EQ(kFloat32.Ptr().Vec(4).itemsize(), 4);
  EXPECT_EQ(DType::itemsize_of(ScalarType::kBFloat16), 2);
}

TEST(DTypeTest, Kinds) {
  for (DType dt : kScalars) {
    bool is_float = dt == kFloat16 || dt == kBFloat16 || dt == kFloat32 || dt == kFloat64;
    bool is_unsigned = dt == kUInt8 || dt == kUInt16 || dt == kUInt32 || dt == kUInt64;
    bool is_int = !is_float && dt != kBool;
    for (int n : {1, 2, 4, 8}) {
      DType v = dt.Vec(n);
      EXPECT_EQ(v.is_float(), is_float) << v;
      EXPECT_EQ(v.is_int(), is_int) << v;
      EXPECT_EQ(v.is_unsigned(), is_unsigned) << v;
      EXPECT_EQ(v.is_bool(), dt == kBool) << v;
      EXPECT_EQ(v.scalar(), dt) << v;
    }
  }
  EXPECT_FALSE(kVoid.is_float());
  EXPECT_FALSE(kVoid.is_int());
  EXPECT_FALSE(kVoid.is_bool());
}

TEST(DTypeTest, MinMax) {
  struct Row {
    DType dt;
    ConstValue min, max;
  };
  const Row table[] = {
      {kBool, B(false), B(true)},
      {kInt8, I(-128), I(127)},
      {kUInt8, I(0), I(255)},
      {kInt16, I(-32768), I(32767)},
      {kUInt16, I(0), I(65535)},
      {kInt32, I(-2147483648LL), I(2147483647)},
      {kUInt32, I(0), I(4294967295LL)},
      {kInt64, I(std::numeric_limits<int64_t>::min()), I(std::numeric_limits<int64_t>::max())},
      {kUInt64, I(0), I(std::numeric_limits<uint64_t>::max())},
      {kFloat16, F(-kInf), F(kInf)},
      {kBFloat16, F(-kInf), F(kInf)},
      {kFloat32, F(-kInf), F(kInf)},
      {kFloat64, F(-kInf), F(kInf)},
  };
  for (const Row& r : table) {
    EXPECT_TRUE(Same(DTypeMin(r.dt), r.min)) << r.dt << " " << DTypeMin(r.dt);
    EXPECT_TRUE(Same(DTypeMax(r.dt), r.max)) << r.dt << " " << DTypeMax(r.dt);
  }
}

TEST(DTypeTest, Ordering) {
  // tinygrad sorts by (priority, itemsize, name, count).
  for (size_t i = 0; i + 1 < std::size(kScalars); ++i) {
    EXPECT_TRUE(kScalars[i] < kScalars[i + 1]) << kScalars[i] << " " << kScalars[i + 1];
    EXPECT_FALSE(kScalars[i + 1] < kScalars[i]) << kScalars[i] << " " << kScalars[i + 1];
  }
  EXPECT_TRUE(kFloat32 < kFloat32.Vec(4));
  EXPECT_TRUE(kFloat32.Vec(2) < kFloat32.Vec(4));
  EXPECT_FALSE(kFloat32 < kFloat32);
}

// ---- promotion ----

TEST(DTypeTest, LeastUpperDType) {
  struct Row {
    DType a, b, want;
  };
  const Row table[] = {
      // tinygrad's test_dtype_promo.
      {kBool, kInt8, kInt8},
      {kInt8, kUInt8, kInt16},
      {kUInt8, kInt16, kInt16},
      {kInt16, kUInt16, kInt32},
      {kUInt16, kInt32, kInt32},
      {kInt32, kUInt32, kInt64},
      {kUInt32, kInt64, kInt64},
      // bfloat16 has the higher priority, so the common float of int64 and uint64 is float16.
      {kInt64, kUInt64, kFloat16},
      {kFloat16, kFloat32, kFloat32},
      {kFloat32, kFloat64, kFloat64},
      {kBool, kFloat32, kFloat32},
      {kBool, kFloat64, kFloat64},
      {kFloat16, kInt64, kFloat16},
      {kFloat16, kUInt64, kFloat16},
      // More of the lattice.
      {kBool, kUInt8, kUInt8},
      {kBool, kBool, kBool},
      {kInt8, kUInt64, kFloat16},
      {kUInt32, kInt8, kInt64},
      {kUInt8, kUInt32, kUInt32},
      {kUInt16, kInt16, kInt32},
      {kFloat16, kBFloat16, kFloat32},
      {kBFloat16, kInt64, kBFloat16},
      {kBFloat16, kUInt8, kBFloat16},
      {kBFloat16, kFloat64, kFloat64},
      {kInt32, kFloat16, kFloat16},
      {kUInt64, kFloat64, kFloat64},
  };
  for (const Row& r : table) {
    EXPECT_EQ(LeastUpperDType(r.a, r.b), r.want) << r.a << " " << r.b;
    EXPECT_EQ(LeastUpperDType(r.b, r.a), r.want) << r.b << " " << r.a;
  }
  for (DType a : kScalars) {
    EXPECT_EQ(LeastUpperDType(a, a), a);
    for (DType b : kScalars) {
      DType up = LeastUpperDType(a, b);
      // The result is an upper bound of both: promoting either input to it changes nothing.
      EXPECT_EQ(LeastUpperDType(a, up), up) << a << " " << b;
      EXPECT_EQ(LeastUpperDType(b, up), up) << a << " " << b;
      EXPECT_FALSE(up < a) << a << " " << b;
      EXPECT_FALSE(up < b) << a << " " << b;
    }
  }
}

TEST(DTypeTest, LeastUpperFloatAndSumAcc) {
  EXPECT_EQ(LeastUpperFloat(kInt32), kFloat32);
  EXPECT_EQ(LeastUpperFloat(kInt64), kFloat32);
  EXPECT_EQ(LeastUpperFloat(kBool), kFloat32);
  EXPECT_EQ(LeastUpperFloat(kUInt8), kFloat32);
  EXPECT_EQ(LeastUpperFloat(kFloat16), kFloat16);
  EXPECT_EQ(LeastUpperFloat(kBFloat16), kBFloat16);
  EXPECT_EQ(LeastUpperFloat(kFloat64), kFloat64);

  const std::pair<DType, DType> sum_acc[] = {
      {kBool, kInt32},      {kInt8, kInt32},      {kInt16, kInt32},      {kInt32, kInt32},
      {kInt64, kInt64},     {kUInt8, kUInt32},    {kUInt16, kUInt32},    {kUInt32, kUInt32},
      {kUInt64, kUInt64},   {kFloat16, kFloat32}, {kBFloat16, kFloat32}, {kFloat32, kFloat32},
      {kFloat64, kFloat64},
  };
  for (const auto& [dt, want] : sum_acc) EXPECT_EQ(SumAccDType(dt), want) << dt;
}

// ---- ConstValue ----

TEST(ConstValueTest, PythonFloatRepr) {
  const std::pair<double, const char*> table[] = {
      {1.0, "1.0"},
      {0.5, "0.5"},
      {1e-05, "1e-05"},
      {1e16, "1e+16"},
      {100000.0, "100000.0"},
      {1.2345678901234568e+17, "1.2345678901234568e+17"},
      {kInf, "inf"},
      {-kInf, "-inf"},
      {kNaN, "nan"},
      {-0.0, "-0.0"},
      {0.0, "0.0"},
      {0.1, "0.1"},
      {0.0001, "0.0001"},
      {0.000125, "0.000125"},
      {9999999999999998.0, "9999999999999998.0"},
      {1e15, "1000000000000000.0"},
      {123456789012345.6, "123456789012345.6"},
      {1.5e-07, "1.5e-07"},
      {1e300, "1e+300"},
      {5e-324, "5e-324"},
      {1.7976931348623157e308, "1.7976931348623157e+308"},
      {0.1 + 0.2, "0.30000000000000004"},
      {-1.5, "-1.5"},
      {1e22, "1e+22"},
      {0.001, "0.001"},
      {1.0 / 3, "0.3333333333333333"},
      {0x1p70, "1.1805916207174113e+21"},
      {123.0, "123.0"},
      {65504.0, "65504.0"},
      {static_cast<double>(FLT_MAX), "3.4028234663852886e+38"},
  };
  for (const auto& [value, repr] : table) {
    EXPECT_EQ(PythonFloatRepr(value), repr);
    EXPECT_EQ(F(value).ToString(), repr);
  }
}

TEST(ConstValueTest, ToString) {
  EXPECT_EQ(B(true).ToString(), "True");
  EXPECT_EQ(B(false).ToString(), "False");
  EXPECT_EQ(I(5).ToString(), "5");
  EXPECT_EQ(I(-3).ToString(), "-3");
  EXPECT_EQ(I(0).ToString(), "0");
  EXPECT_EQ(I(std::numeric_limits<uint64_t>::max()).ToString(), "18446744073709551615");
  EXPECT_EQ(I(std::numeric_limits<int64_t>::min()).ToString(), "-9223372036854775808");
  EXPECT_EQ(I(int128(1) << 100).ToString(), "1267650600228229401496703205376");
  EXPECT_EQ(ConstValue().ToString(), "0");
  std::ostringstream os;
  os << F(2.5) << " " << B(true);
  EXPECT_EQ(os.str(), "2.5 True");
}

TEST(ConstValueTest, ComparisonsAcrossKinds) {
  EXPECT_TRUE(I(1) == F(1.0));
  EXPECT_TRUE(B(true) == I(1));
  EXPECT_TRUE(B(true) == F(1.0));
  EXPECT_TRUE(B(false) == F(-0.0));
  EXPECT_TRUE(F(-0.0) == F(0.0));
  EXPECT_TRUE(F(-0.0) == I(0));
  EXPECT_FALSE(F(kNaN) == F(kNaN));
  EXPECT_TRUE(F(kNaN) != F(kNaN));
  EXPECT_TRUE(F(kNaN) != I(0));
  EXPECT_FALSE(F(kNaN) < I(0));
  EXPECT_FALSE(F(kNaN) > I(0));
  EXPECT_FALSE(F(kNaN) <= F(kNaN));
  EXPECT_FALSE(I(0) >= F(kNaN));
  EXPECT_TRUE(I(1) < F(1.5));
  EXPECT_TRUE(F(0.5) < I(1));
  EXPECT_TRUE(I(-1) < B(false));
  EXPECT_TRUE(B(false) < B(true));
  EXPECT_TRUE(F(-2.5) < I(-2));
  EXPECT_TRUE(I(-3) < F(-2.5));
  // Exact, as Python compares ints and floats: 2^53 + 1 is not the float 2^53.
  const int128 two53 = int128(1) << 53;
  EXPECT_FALSE(I(two53 + 1) == F(0x1p53));
  EXPECT_TRUE(I(two53 + 1) > F(0x1p53));
  EXPECT_TRUE(F(0x1p53) < I(two53 + 1));
  EXPECT_TRUE(I(two53) == F(0x1p53));
  EXPECT_TRUE(I(std::numeric_limits<uint64_t>::max()) < F(0x1p64));
  EXPECT_TRUE(F(0x1p64) > I(std::numeric_limits<uint64_t>::max()));
  EXPECT_TRUE(I(int128(1) << 64) == F(0x1p64));
  EXPECT_TRUE(F(kInf) > I(int128(1) << 100));
  EXPECT_TRUE(F(-kInf) < I(-(int128(1) << 100)));
  EXPECT_TRUE(F(1e300) > I(int128(1) << 120));
  EXPECT_TRUE(F(-1e300) < I(-(int128(1) << 120)));
  EXPECT_TRUE(I(3) <= I(3));
  EXPECT_TRUE(I(3) >= F(3.0));
  EXPECT_TRUE(I(4) > I(3));
}

TEST(ConstValueTest, Identical) {
  EXPECT_TRUE(F(0.0).Identical(F(0.0)));
  EXPECT_FALSE(F(0.0).Identical(F(-0.0)));
  EXPECT_TRUE(F(kNaN).Identical(F(kNaN)));
  EXPECT_FALSE(I(1).Identical(F(1.0)));
  EXPECT_FALSE(I(1).Identical(B(true)));
  EXPECT_TRUE(I(7).Identical(I(7)));
  EXPECT_FALSE(I(7).Identical(I(8)));
  EXPECT_TRUE(B(true).Identical(B(true)));
}

TEST(ConstValueTest, PythonConversions) {
  EXPECT_EQ(F(3.7).AsInt(), 3);
  EXPECT_EQ(F(-3.7).AsInt(), -3);
  EXPECT_EQ(F(-0.5).AsInt(), 0);
  EXPECT_EQ(F(kNaN).AsInt(), 0);
  EXPECT_EQ(F(kInf).AsInt(), 0);
  EXPECT_EQ(F(1e20).AsInt(), int128(10000000000) * 10000000000);
  EXPECT_EQ(F(-0x1p100).AsInt(), -(int128(1) << 100));
  EXPECT_EQ(B(true).AsInt(), 1);
  EXPECT_EQ(I(2).AsFloat(), 2.0);
  EXPECT_EQ(I((int128(1) << 53) + 1).AsFloat(), 0x1p53);
  EXPECT_EQ(B(true).AsFloat(), 1.0);
  EXPECT_TRUE(F(kNaN).AsBool());
  EXPECT_FALSE(F(-0.0).AsBool());
  EXPECT_TRUE(I(-1).AsBool());
  EXPECT_FALSE(I(0).AsBool());
  EXPECT_EQ(I(int128(1) << 70).AsInt64(), std::numeric_limits<int64_t>::max());
  EXPECT_EQ(I(-(int128(1) << 70)).AsInt64(), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(I(-5).AsInt64(), -5);
  EXPECT_EQ(B(true).AsInt64(), 1);
}

TEST(ConstValueTest, AsConst) {
  EXPECT_TRUE(Same(AsConst(F(3.7), kInt32), I(3)));
  EXPECT_TRUE(Same(AsConst(F(-3.7), kInt32), I(-3)));
  EXPECT_TRUE(Same(AsConst(I(3), kFloat32), F(3.0)));
  EXPECT_TRUE(Same(AsConst(I(0), kBool), B(false)));
  EXPECT_TRUE(Same(AsConst(F(0.5), kBool), B(true)));
  EXPECT_TRUE(Same(AsConst(B(true), kInt32), I(1)));
  EXPECT_TRUE(Same(AsConst(B(true), kFloat16), F(1.0)));
  // No truncation: as_const is Python's int()/float()/bool() only.
  EXPECT_TRUE(Same(AsConst(I(300), kUInt8), I(300)));
  EXPECT_TRUE(Same(AsConst(F(0.1), kFloat16), F(0.1)));
  EXPECT_TRUE(Same(AsConst(I(5), kInt32.Vec(4)), I(5)));
}

// ---- Truncate ----

TEST(TruncateTest, IntegersWrap) {
  struct Row {
    ConstValue in;
    DType dt;
    ConstValue want;
  };
  const int128 two64 = int128(1) << 64;
  const Row table[] = {
      {I(128), kInt8, I(-128)},
      {I(255), kInt8, I(-1)},
      {I(-129), kInt8, I(127)},
      {I(256), kInt8, I(0)},
      {I(-1), kUInt8, I(255)},
      {I(256), kUInt8, I(0)},
      {I(300), kUInt8, I(44)},
      {I(32768), kInt16, I(-32768)},
      {I(65536), kUInt16, I(0)},
      {I(-1), kUInt16, I(65535)},
      {I(int128(1) << 31), kInt32, I(-2147483648LL)},
      {I(-1), kUInt32, I(4294967295LL)},
      {I(int128(1) << 63), kInt64, I(std::numeric_limits<int64_t>::min())},
      {I(-1), kUInt64, I(two64 - 1)},
      {I(two64), kUInt64, I(0)},
      {I((int128(1) << 100) + 5), kUInt64, I(5)},
      {I(-(int128(1) << 100) - 5), kInt32, I(-5)},
      {I(12345), kInt32, I(12345)},
      {F(3.7), kInt32, I(3)},
      {F(-1.0), kUInt8, I(255)},
      {B(true), kInt8, I(1)},
      {I(2), kBool, B(true)},
      {I(256), kBool, B(true)},  // bool(256), not a wrapped byte
      {I(0), kBool, B(false)},
      {F(0.0), kBool, B(false)},
      {F(kNaN), kBool, B(true)},
      {F(0.25), kBool, B(true)},
  };
  for (const Row& r : table) {
    ConstValue got = Truncate(r.in, r.dt);
    EXPECT_TRUE(Same(got, r.want)) << r.in << " as " << r.dt << " = " << got << ", want " << r.want;
  }
}

TEST(TruncateTest, FloatsRoundToNearestEven) {
  struct Row {
    ConstValue in;
    DType dt;
    double want;
  };
  const double bf16_max = 3.3895313892515355e38;
  const Row table[] = {
      // float32 (ctypes.c_float).
      {F(16777217), kFloat32, 16777216},
      {F(16777219), kFloat32, 16777220},
      {I(16777217), kFloat32, 16777216},
      {F(0.1), kFloat32, static_cast<double>(0.1f)},
      {F(FLT_MAX), kFloat32, FLT_MAX},
      {F(1e40), kFloat32, kInf},
      {F(-1e40), kFloat32, -kInf},
      {F(1e-50), kFloat32, 0.0},
      {F(-0.0), kFloat32, -0.0},
      {F(kNaN), kFloat32, kNaN},
      // float16 (tinygrad's test_truncate_fp16 and more).
      {F(1), kFloat16, 1},
      {F(65504), kFloat16, 65504},
      {F(65520), kFloat16, kInf},
      {F(-65520), kFloat16, -kInf},
      {I(2049), kFloat16, 2048},
      {I(2051), kFloat16, 2052},
      {F(0.1), kFloat16, 0.0999755859375},
      {F(1e-8), kFloat16, 0.0},
      {F(6e-8), kFloat16, 0x1p-24},
      {F(0x1p-25), kFloat16, 0.0},
      {F(-0.0), kFloat16, -0.0},
      {F(kNaN), kFloat16, kNaN},
      {F(kInf), kFloat16, kInf},
      // bfloat16: nearest-even (tinygrad's Python truncate_bf16 chops the mantissa instead: 1.1 -> 1.09375).
      {F(1), kBFloat16, 1},
      {F(1.1), kBFloat16, 1.1015625},
      {F(1234), kBFloat16, 1232},
      {F(23456), kBFloat16, 23424},
      {F(-777.777), kBFloat16, -776},
      {F(bf16_max), kBFloat16, bf16_max},
      {F(-bf16_max), kBFloat16, -bf16_max},
      {F(bf16_max + 0x1p119), kBFloat16, kInf},
      {F(kNaN), kBFloat16, kNaN},
      // float64: unchanged, except integers round to 53 bits.
      {F(0.1), kFloat64, 0.1},
      {I((int128(1) << 53) + 1), kFloat64, 0x1p53},
      {B(true), kFloat64, 1.0},
  };
  for (const Row& r : table) {
    ConstValue got = Truncate(r.in, r.dt);
    EXPECT_TRUE(Same(got, F(r.want)))
        << r.in << " as " << r.dt << " = " << got << ", want " << PythonFloatRepr(r.want);
  }
}

// One rounding from the exact value, as C's conversions do: going through an intermediate format (int128 ->
// double -> float, double -> float -> half) rounds twice and misses when the first rounding lands on a
// midpoint of the target format.
TEST(TruncateTest, RoundsOnceNotTwice) {
  struct Row {
    ConstValue in;
    DType dt;
    double want;
  };
  const Row table[] = {
      // The nearest float to 2^60 + 2^36 + 1 is 2^60 + 2^37; the double nearest it is 2^60 + 2^36, a float
      // midpoint, which rounds to even (2^60).
      {I((int128(1) << 60) + (int128(1) << 36) + 1), kFloat32, 0x1p60 + 0x1p37},
      // tinygrad's test_truncate_fp16: 65519.999 is below the midpoint 65520, but the float nearest it is
      // 65520.
      {F(65519.999), kFloat16, 65504},
      // Just above a half midpoint; float32 rounds it onto the midpoint.
      {F(1 + 0x1p-11 + 0x1p-30), kFloat16, 1 + 0x1p-10},
      // The same for bfloat16.
      {F(1 + 0x1p-8 + 0x1p-30), kBFloat16, 1 + 0x1p-7},
  };
  for (const Row& r : table) {
    ConstValue got = Truncate(r.in, r.dt);
    EXPECT_TRUE(Same(got, F(r.want)))
        << r.in << " as " << r.dt << " = " << got << ", want " << PythonFloatRepr(r.want);
  }
}

// ---- half and bfloat16 bit conversions ----

// The value of half bits by the IEEE formula, independent of the implementation.
double HalfValue(uint16_t h) {
  int sign = h >> 15, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  double mag = exponent == 31  ? (mantissa ? kNaN : kInf)
               : exponent == 0 ? std::ldexp(mantissa, -24)
                               : std::ldexp(1024 + mantissa, exponent - 25);
  return sign ? -mag : mag;
}

TEST(HalfTest, EveryPatternDecodesAndRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint16_t bits = static_cast<uint16_t>(h);
    const float f = HalfBitsToFloat(bits);
    const double want = HalfValue(bits);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(f)) << h;
      uint16_t back = FloatToHalfBits(f);
      ASSERT_TRUE((back & 0x7c00) == 0x7c00 && (back & 0x3ff) != 0) << h << " -> " << back;
      ASSERT_EQ(back & 0x8000, bits & 0x8000) << h;
      continue;
    }
    ASSERT_EQ(std::bit_cast<uint64_t>(static_cast<double>(f)), std::bit_cast<uint64_t>(want)) << h;
    ASSERT_EQ(FloatToHalfBits(f), bits) << h;
    // Truncate to float16 leaves every half value alone.
    ASSERT_TRUE(Same(Truncate(F(want), kFloat16), F(want))) << h;
  }
}

// Midpoints between neighbouring halves (exact in float) round to the even one; a hair either side decides.
TEST(HalfTest, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t h = 0; h < 0x7c00; ++h) {
    const double lo = HalfValue(static_cast<uint16_t>(h));
    const double hi = h + 1 == 0x7c00 ? 65536.0 : HalfValue(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((lo + hi) / 2);
    ASSERT_EQ(static_cast<double>(mid), (lo + hi) / 2);
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(FloatToHalfBits(mid), even) << h;
    ASSERT_EQ(FloatToHalfBits(std::nextafter(mid, 1e9f)), h + 1) << h;
    ASSERT_EQ(FloatToHalfBits(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(FloatToHalfBits(-mid), even | 0x8000) << h;
  }
  EXPECT_EQ(FloatToHalfBits(1e10f), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(-1e10f), 0xfc00);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::infinity()), 0x7c00);
  EXPECT_EQ(FloatToHalfBits(1e-10f), 0x0000);
  EXPECT_EQ(FloatToHalfBits(-1e-10f), 0x8000);
  EXPECT_EQ(FloatToHalfBits(std::numeric_limits<float>::denorm_min()), 0x0000);
  const uint16_t nan = FloatToHalfBits(std::bit_cast<float>(0x7f800001u));  // payload only in low bits
  EXPECT_TRUE((nan & 0x7c00) == 0x7c00 && (nan & 0x3ff) != 0) << nan;
}

TEST(BFloat16Test, EveryPatternDecodesAndRoundTrips) {
  for (uint32_t b = 0; b < 0x10000; ++b) {
    const uint16_t bits = static_cast<uint16_t>(b);
    const float f = BFloat16BitsToFloat(bits);
    ASSERT_EQ(std::bit_cast<uint32_t>(f), b << 16) << b;
    if (std::isnan(f)) {
      ASSERT_TRUE(std::isnan(BFloat16BitsToFloat(FloatToBFloat16Bits(f)))) << b;
      continue;
    }
    ASSERT_EQ(FloatToBFloat16Bits(f), bits) << b;
    ASSERT_TRUE(Same(Truncate(F(f), kBFloat16), F(f))) << b;
  }
}

TEST(BFloat16Test, RoundsToNearestEvenAtEveryMidpoint) {
  for (uint32_t b = 0; b < 0x7f80; ++b) {
    const uint32_t mid = (b << 16) | 0x8000;  // halfway to the next bfloat16
    const uint32_t even = (b & 1) ? b + 1 : b;
    ASSERT_EQ(FloatToBFloat16Bits(std::bit_cast<float>(mid)), even) << b;
    ASSERT_EQ(FloatToBFloat16Bits(std::bit_cast<float>(mid + 1)), b + 1) << b;
    ASSERT_EQ(FloatToBFloat16Bits(std::bit_cast<float>(mid - 1)), b) << b;
    ASSERT_EQ(FloatToBFloat16Bits(std::bit_cast<float>(mid | 0x80000000u)), even | 0x8000) << b;
  }
  const uint16_t nan = FloatToBFloat16Bits(std::bit_cast<float>(0x7f800001u));  // would truncate to inf
  EXPECT_TRUE(std::isnan(BFloat16BitsToFloat(nan))) << nan;
  EXPECT_EQ(FloatToBFloat16Bits(std::numeric_limits<float>::infinity()), 0x7f80);
  EXPECT_EQ(FloatToBFloat16Bits(-std::numeric_limits<float>::infinity()), 0xff80);
  EXPECT_EQ(FloatToBFloat16Bits(FLT_MAX), 0x7f80);  // above the largest bfloat16's midpoint
}

}  // namespace
}  // namespace uopc
