#include "runtime/interp.h"

#include <cmath>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/status_macros.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

const DType kInt = dtypes::kInt32;
const DType kFloat = dtypes::kFloat32;

UOpPtr Global(DType elem, int64_t size, int64_t arg) {
  return UOp::New(Ops::DEFINE_GLOBAL, elem.Ptr(size), {}, Arg(arg));
}
UOpPtr EndRange(const UOpPtr& r) { return UOp::New(Ops::ENDRANGE, dtypes::kVoid, {r}); }

template <typename T>
InterpBuffer Buffer(std::vector<T>& v, DType dt) {
  return InterpBuffer{v.data(), static_cast<int64_t>(v.size()), dt};
}

absl::Status RunProgram(const std::vector<UOpPtr>& uops, std::vector<InterpBuffer> buffers,
                        absl::flat_hash_map<std::string, int64_t> vars = {}, LaunchDims dims = {}) {
  UOPC_ASSIGN_OR_RETURN(InterpretedProgram p, InterpretedProgram::Create(uops));
  return p.Run(buffers, vars, dims);
}

// for (i = 0; i < 3; i++) data0[i] = data1[i] + data2[i];
TEST(InterpTest, ElementwiseLoop) {
  UOpPtr d0 = Global(kInt, 3, 0), d1 = Global(kInt, 3, 1), d2 = Global(kInt, 3, 2);
  UOpPtr end = UOp::Const(kInt, 3), r = UOp::Range(end, 0);
  UOpPtr a = d1.index(r).load(), b = d2.index(r).load(), st = d0.index(r).store({a + b});
  std::vector<int32_t> out(3, -1), x = {1, 2, 3}, y = {10, 20, 30};
  ASSERT_TRUE(RunProgram({d0, d1, d2, end, r, d1.index(r), a, d2.index(r), b, d0.index(r), a + b, st,
                          EndRange(r), UOp::Sink({st})},
                         {Buffer(out, kInt), Buffer(x, kInt), Buffer(y, kInt)})
                  .ok());
  EXPECT_THAT(out, ElementsAre(11, 22, 33));
}

// acc = 0; for (r < 16) acc = acc + data1[r]; data0[0] = acc;
TEST(InterpTest, ReductionWithAccumulator) {
  UOpPtr d0 = Global(kFloat, 1, 0), d1 = Global(kFloat, 16, 1);
  UOpPtr zero = UOp::Const(kFloat, 0.0), end = UOp::Const(kInt, 16), r = UOp::Range(end, 0);
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, kFloat, {zero, r}, Arg(Arg::Tuple{Arg(0)}));
  UOpPtr v = d1.index(r).load(), sum = acc + v, assign = acc.assign(sum);
  UOpPtr idx0 = UOp::Const(kInt, 0), st = d0.index(idx0).store({acc});
  std::vector<float> out(1), in(16);
  for (int i = 0; i < 16; ++i) in[i] = static_cast<float>(i) * 0.5f;
  absl::Status s = RunProgram({d0, d1, zero, end, idx0, acc, r, d1.index(r), v, sum, assign, EndRange(r),
                               d0.index(idx0), st, UOp::Sink({st})},
                              {Buffer(out, kFloat), Buffer(in, kFloat)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_FLOAT_EQ(out[0], 60.0f);
}

// data0[i] = i < 2 ? data1[i] : 0.5 with a gated INDEX and an alternative value.
TEST(InterpTest, GatedLoadReadsTheAlternative) {
  UOpPtr d0 = Global(kFloat, 4, 0), d1 = Global(kFloat, 2, 1);
  UOpPtr end = UOp::Const(kInt, 4), r = UOp::Range(end, 0), two = UOp::Const(kInt, 2), gate = r.lt(two);
  UOpPtr alt = UOp::Const(kFloat, 0.5), ld = d1.index(r, gate).load({alt}), st = d0.index(r).store({ld});
  std::vector<float> out(4), in = {7, 8};
  absl::Status s = RunProgram(
      {d0, d1, end, two, alt, r, gate, d1.index(r, gate), ld, d0.index(r), st, EndRange(r), UOp::Sink({st})},
      {Buffer(out, kFloat), Buffer(in, kFloat)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out, ElementsAre(7, 8, 0.5, 0.5));
}

// float4 loads and stores through a pointer cast, and a GEP of a lane.
TEST(InterpTest, VectorLoadsAndStores) {
  UOpPtr d0 = Global(kFloat, 8, 0), d1 = Global(kFloat, 8, 1);
  const DType f4 = kFloat.Vec(4);
  UOpPtr end = UOp::Const(kInt, 2), r = UOp::Range(end, 0), idx = r * 4;
  UOpPtr src = UOp::New(Ops::CAST, f4.Ptr(8), {d1.index(idx)}), v = src.load();
  UOpPtr doubled = v + v, dst = UOp::New(Ops::CAST, f4.Ptr(8), {d0.index(idx)}), st = dst.store({doubled});
  std::vector<float> out(8), in = {1, 2, 3, 4, 5, 6, 7, 8};
  absl::Status s = RunProgram({d0, d1, end, UOp::Const(kInt, 4), r, idx, d1.index(idx), src, v, doubled,
                               d0.index(idx), dst, st, EndRange(r), UOp::Sink({st})},
                              {Buffer(out, kFloat), Buffer(in, kFloat)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out, ElementsAre(2, 4, 6, 8, 10, 12, 14, 16));
}

// if (i != 1) data0[i] = i;
TEST(InterpTest, IfMasksTheStore) {
  UOpPtr d0 = Global(kInt, 3, 0);
  UOpPtr end = UOp::Const(kInt, 3), one = UOp::Const(kInt, 1), r = UOp::Range(end, 0), cond = r.ne(one);
  UOpPtr iff = UOp::New(Ops::IF, dtypes::kVoid, {cond}), st = d0.index(r).store({r});
  UOpPtr endif = UOp::New(Ops::ENDIF, dtypes::kVoid, {iff});
  std::vector<int32_t> out(3, -1);
  absl::Status s =
      RunProgram({d0, end, one, r, cond, iff, d0.index(r), st, endif, EndRange(r), UOp::Sink({st})},
                 {Buffer(out, kInt)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out, ElementsAre(0, -1, 2));
}

// An empty range runs no iteration (C's `for`), so its body's out-of-bounds store never happens.
TEST(InterpTest, EmptyRangeRunsNothing) {
  UOpPtr d0 = Global(kInt, 1, 0);
  UOpPtr n = UOp::Variable("n", 0, 10), r = UOp::Range(n, 0), st = d0.index(r + 5).store({r});
  std::vector<int32_t> out(1, -1);
  std::vector<UOpPtr> prg = {d0, n,           UOp::Const(kInt, 5), r, r + 5, d0.index(r + 5),
                             st, EndRange(r), UOp::Sink({st})};
  ASSERT_TRUE(RunProgram(prg, {Buffer(out, kInt)}, {{"n", 0}}).ok());
  EXPECT_EQ(out[0], -1);
  absl::Status s = RunProgram(prg, {Buffer(out, kInt)}, {{"n", 1}});
  EXPECT_THAT(s.message(), HasSubstr("store out of bounds: element 5 of a buffer of 1"));
  EXPECT_THAT(RunProgram(prg, {Buffer(out, kInt)}, {{"n", 11}}).message(), HasSubstr("out of its range"));
  EXPECT_THAT(RunProgram(prg, {Buffer(out, kInt)}).message(), HasSubstr("no value for variable n"));
}

// Local threads run as the lanes of a warp: each writes its id to local memory, and after the barrier reads
// its neighbour's.
TEST(InterpTest, LocalMemoryIsSharedByTheWorkgroup) {
  UOpPtr d0 = Global(kInt, 8, 0);
  UOpPtr gidx = UOp::New(Ops::SPECIAL, kInt, {}, Arg(Arg::Tuple{Arg("gidx0"), Arg(2)}));
  UOpPtr lidx = UOp::New(Ops::SPECIAL, kInt, {}, Arg(Arg::Tuple{Arg("lidx0"), Arg(4)}));
  UOpPtr temp =
      UOp::New(Ops::DEFINE_LOCAL, kInt.Ptr(4, /*local=*/true), {}, Arg(Arg::Tuple{Arg("temp0"), Arg(4)}));
  UOpPtr st_local = temp.index(lidx).store({lidx + gidx * 10});
  UOpPtr barrier = UOp::New(Ops::BARRIER, dtypes::kVoid, {st_local});
  UOpPtr neighbour = (lidx + 1) % 4, v = temp.index(neighbour).load({barrier});
  UOpPtr out_idx = gidx * 4 + lidx, st = d0.index(out_idx).store({v});
  std::vector<int32_t> out(8, -1);
  absl::Status s = RunProgram({d0,
                               temp,
                               gidx,
                               lidx,
                               UOp::Const(kInt, 10),
                               gidx * 10,
                               lidx + gidx * 10,
                               temp.index(lidx),
                               st_local,
                               barrier,
                               UOp::Const(kInt, 1),
                               lidx + 1,
                               UOp::Const(kInt, 4),
                               neighbour,
                               temp.index(neighbour),
                               v,
                               gidx * 4,
                               out_idx,
                               d0.index(out_idx),
                               st,
                               UOp::Sink({st})},
                              {Buffer(out, kInt)}, {}, LaunchDims{{2, 1, 1}, {4, 1, 1}});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out, ElementsAre(1, 2, 3, 0, 11, 12, 13, 10));
}

TEST(InterpTest, HalfAndBoolBuffersRoundTrip) {
  const DType half = dtypes::kFloat16;
  UOpPtr d0 = Global(half, 2, 0), d1 = Global(dtypes::kBool, 2, 1);
  UOpPtr end = UOp::Const(kInt, 2), r = UOp::Range(end, 0), b = d1.index(r).load();
  UOpPtr v = b.where(UOp::Const(half, 1.5), UOp::Const(half, -0.25)), st = d0.index(r).store({v});
  std::vector<uint16_t> out(2);
  std::vector<uint8_t> in = {1, 0};
  absl::Status s = RunProgram({d0, d1, end, UOp::Const(half, 1.5), UOp::Const(half, -0.25), r, d1.index(r), b,
                               v, d0.index(r), st, EndRange(r), UOp::Sink({st})},
                              {Buffer(out, half), Buffer(in, dtypes::kBool)});
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_THAT(out, ElementsAre(0x3E00, 0xB400));  // 1.5 and -0.25 in IEEE half
}

TEST(InterpTest, MalformedProgramsAreErrors) {
  UOpPtr d0 = Global(kInt, 3, 0), end = UOp::Const(kInt, 3), r = UOp::Range(end, 0);
  EXPECT_THAT(InterpretedProgram::Create({d0, end, r}).status().message(),
              HasSubstr("RANGE without ENDRANGE"));
  EXPECT_THAT(InterpretedProgram::Create({d0, r}).status().message(),
              HasSubstr("not defined before its use"));
  EXPECT_THAT(InterpretedProgram::Create({d0, r, end, EndRange(r)}).status().message(),
              HasSubstr("not defined before its use"));
  UOpPtr reduce = UOp::New(Ops::REDUCE, kInt, {end}, Arg(Ops::ADD));
  EXPECT_THAT(InterpretedProgram::Create({end, reduce}).status().message(),
              HasSubstr("does not run this op"));
  UOpPtr wmma = UOp::New(Ops::WMMA, kFloat, {end}, Arg("x"));
  EXPECT_THAT(InterpretedProgram::Create({end, wmma}).status().message(), HasSubstr("needs"));
  UOpPtr st = d0.index(r).store({r});
  absl::StatusOr<InterpretedProgram> p =
      InterpretedProgram::Create({d0, end, r, d0.index(r), st, EndRange(r)});
  ASSERT_TRUE(p.ok());
  std::vector<float> wrong(3);
  EXPECT_THAT(p->Run({Buffer(wrong, kFloat)}, {}, {}).message(), HasSubstr("buffer 0 holds"));
  EXPECT_THAT(p->Run({}, {}, {}).message(), HasSubstr("no buffer for this argument"));
}

// A program someone else wrote can be capped: more uops than max_steps is an error, not a hang.
TEST(InterpTest, StepLimitStopsLongRuns) {
  UOpPtr d0 = Global(kInt, 1, 0), zero = UOp::Const(kInt, 0);
  UOpPtr end = UOp::Const(kInt, 1000000), r = UOp::Range(end, 0), st = d0.index(zero).store({r});
  std::vector<UOpPtr> prg = {d0, zero, end, r, d0.index(zero), st, EndRange(r), UOp::Sink({st})};
  absl::StatusOr<InterpretedProgram> p = InterpretedProgram::Create(prg);
  ASSERT_TRUE(p.ok());
  std::vector<int32_t> out(1);
  absl::Status s = p->Run({Buffer(out, kInt)}, {}, {}, /*max_steps=*/1000);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted) << s;
}

// After a loop that ran no iteration, the accumulator's ASSIGN stands for its initial value (C's variable),
// and a value only the loop computes is an error, not a read of nothing.
TEST(InterpTest, ValuesOfBlocksThatDidNotRun) {
  UOpPtr d0 = Global(kInt, 1, 0), zero = UOp::Const(kInt, 0), n = UOp::Variable("n", 0, 10);
  UOpPtr seven = UOp::Const(kInt, 7), r = UOp::Range(n, 0);
  UOpPtr acc = UOp::New(Ops::DEFINE_ACC, kInt, {seven, r}, Arg(Arg::Tuple{Arg(0)}));
  UOpPtr assign = acc.assign(acc + r), st = d0.index(zero).store({assign});
  std::vector<int32_t> out(1, -1);
  std::vector<UOpPtr> prg = {d0,      zero,   n,           seven,          acc, r,
                             acc + r, assign, EndRange(r), d0.index(zero), st,  UOp::Sink({st})};
  ASSERT_TRUE(RunProgram(prg, {Buffer(out, kInt)}, {{"n", 0}}).ok());
  EXPECT_EQ(out[0], 7);
  ASSERT_TRUE(RunProgram(prg, {Buffer(out, kInt)}, {{"n", 3}}).ok());
  EXPECT_EQ(out[0], 10);
  UOpPtr inner = r + 1, st2 = d0.index(zero).store({inner});
  std::vector<UOpPtr> bad = {
      d0, zero, n, r, UOp::Const(kInt, 1), inner, EndRange(r), d0.index(zero), st2, UOp::Sink({st2})};
  EXPECT_THAT(RunProgram(bad, {Buffer(out, kInt)}, {{"n", 0}}).message(), HasSubstr("has no value here"));
}

TEST(InterpTest, LoadsOnlyFromBuffersAndWidthsMustFit) {
  UOpPtr d0 = Global(kInt, 1, 0), zero = UOp::Const(kInt, 0), notbuf = UOp::Const(kInt.Ptr(4), 0);
  UOpPtr ld = UOp::New(Ops::INDEX, kInt.Ptr(4), {notbuf, zero}).load(), st = d0.index(zero).store({ld});
  std::vector<int32_t> out(1);
  EXPECT_THAT(RunProgram({d0, zero, notbuf, ld->src(0)->ref(), ld, d0.index(zero), st, UOp::Sink({st})},
                         {Buffer(out, kInt)})
                  .message(),
              HasSubstr("not a buffer"));
  UOpPtr v2 = UOp::New(Ops::VECTORIZE, kInt.Vec(4), {zero, zero});
  EXPECT_THAT(InterpretedProgram::Create({zero, v2}).status().message(), HasSubstr("one source per element"));
}

}  // namespace
}  // namespace uopc
