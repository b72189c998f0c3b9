#include "uop/spec.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/hash/hash.h"
#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "uop/uop.h"

namespace uopc {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A stand-in for a higher layer's payload (the uop layer only checks a VIEW's arg by type name).
class NamedPayload : public ArgPayload {
 public:
  explicit NamedPayload(std::string type_name) : type_name_(std::move(type_name)) {}
  absl::string_view type_name() const override { return type_name_; }
  size_t Hash() const override { return absl::HashOf(type_name_); }
  bool Equals(const ArgPayload& other) const override { return true; }
  std::string ToString() const override { return type_name_ + "(...)"; }

 private:
  std::string type_name_;
};

Arg Payload(const std::string& type_name) { return Arg(std::make_shared<NamedPayload>(type_name)); }

const DType kInt = dtypes::kInt32;
const DType kFloat = dtypes::kFloat32;
const DType kBool = dtypes::kBool;
const DType kVoid = dtypes::kVoid;

UOpPtr Op(Ops op, DType dt, std::initializer_list<UOpPtr> src = {}, Arg arg = {}) {
  return UOp::New(op, dt, src, std::move(arg));
}
UOpPtr Global(DType elem, int64_t size, int index) {
  return Op(Ops::DEFINE_GLOBAL, elem.Ptr(size), {}, index);
}
UOpPtr View() { return Op(Ops::VIEW, kVoid, {}, Payload("ShapeTracker")); }
UOpPtr Int(int64_t v) { return UOp::Const(kInt, v); }
UOpPtr Float(double v) { return UOp::Const(kFloat, v); }
UOpPtr Range(int64_t end, int axis) { return Op(Ops::RANGE, kInt, {Int(end)}, axis); }

absl::Status Program(const std::vector<UOpPtr>& uops) {
  std::vector<const UOp*> list;
  for (const UOpPtr& u : uops) list.push_back(u.get());
  return VerifyProgram(absl::MakeConstSpan(list));
}

// The status is an InvalidArgument whose message names the node (position, op, dtype, arg, sources) and the
// rule.
MATCHER_P2(Violates, node, rule, "") {
  if (arg.code() != absl::StatusCode::kInvalidArgument) {
    *result_listener << "status is " << arg;
    return false;
  }
  std::string message(arg.message());
  *result_listener << "message: " << message;
  return message.find(node) != std::string::npos && message.find(rule) != std::string::npos;
}

// ---- valid graphs ----

// add_int3 as tinygrad linearizes it: for (r in 0..3) data0[r] = data1[r] + data2[r].
std::vector<UOpPtr> AddProgram() {
  UOpPtr g0 = Global(kInt, 3, 0), g1 = Global(kInt, 3, 1), g2 = Global(kInt, 3, 2);
  UOpPtr r = Range(3, 0);
  UOpPtr a = Op(Ops::LOAD, kInt, {Op(Ops::INDEX, g1->dtype(), {g1, r})});
  UOpPtr b = Op(Ops::LOAD, kInt, {Op(Ops::INDEX, g2->dtype(), {g2, r})});
  UOpPtr store = Op(Ops::STORE, kVoid, {Op(Ops::INDEX, g0->dtype(), {g0, r}), Op(Ops::ADD, kInt, {a, b})});
  UOpPtr sink = UOp::Sink({store});
  std::vector<UOpPtr> out;
  for (const UOp* u : sink->Toposort()) out.push_back(u->ref());
  out.insert(out.end() - 1, Op(Ops::ENDRANGE, kVoid, {r}));
  return out;
}

TEST(VerifyProgram, AcceptsALinearizedKernel) { EXPECT_EQ(Program(AddProgram()), absl::OkStatus()); }

TEST(VerifyProgram, AcceptsTheOtherForms) {
  UOpPtr g0 = Global(kFloat, 16, 0);
  UOpPtr local = Op(Ops::DEFINE_LOCAL, kFloat.Ptr(16, /*local=*/true), {}, "temp0");
  UOpPtr gid = Op(Ops::SPECIAL, kInt, {}, {"gidx0", 16});
  UOpPtr n = UOp::Variable("n", 1, 16);
  UOpPtr gate = gid.lt(n);
  UOpPtr idx = Op(Ops::INDEX, g0->dtype(), {g0, gid, gate});
  UOpPtr ld = Op(Ops::LOAD, kFloat, {idx, Float(0.0)});  // gated load with an alternative value
  UOpPtr vec = Op(Ops::VECTORIZE, kFloat.Vec(2), {ld, ld});
  UOpPtr lane = Op(Ops::GEP, kFloat, {vec}, {1});
  UOpPtr lanes = Op(Ops::GEP, kFloat.Vec(2), {vec}, {1, 0});
  UOpPtr vconst = UOp::VConst(kFloat.Vec(2), {ConstValue::Float(1.0), ConstValue::Float(2.0)});
  UOpPtr sum = Op(Ops::ADD, kFloat.Vec(2), {lanes, vconst});
  UOpPtr sel = Op(Ops::WHERE, kFloat, {gate, lane, Op(Ops::GEP, kFloat, {sum}, {0})});
  UOpPtr shifted = Op(Ops::SHL, kInt, {gid, UOp::Const(dtypes::kUInt32, 1)});
  UOpPtr lidx = Op(Ops::INDEX, local->dtype(), {local, Op(Ops::MOD, kInt, {shifted, Int(16)})});
  UOpPtr lstore = Op(Ops::STORE, kVoid, {lidx, sel});
  UOpPtr barrier = Op(Ops::BARRIER, kVoid, {lstore});
  UOpPtr lload = Op(Ops::LOAD, kFloat, {lidx, barrier});
  UOpPtr if_ = Op(Ops::IF, kVoid, {gate, barrier});
  UOpPtr store = Op(Ops::STORE, kVoid, {idx, Op(Ops::CAST, kFloat, {Op(Ops::CAST, kInt, {lload})}), if_});
  UOpPtr endif = Op(Ops::ENDIF, kVoid, {if_});
  UOpPtr sink = UOp::Sink({store, endif});
  EXPECT_EQ(VerifyProgram(sink.get()), absl::OkStatus());
}

TEST(VerifyProgram, AcceptsAnAccumulatorLoop) {
  UOpPtr g0 = Global(kFloat, 1, 0), g1 = Global(kFloat, 64, 1);
  UOpPtr r = Range(64, 0);
  UOpPtr acc = Op(Ops::DEFINE_ACC, kFloat, {Float(0.0), r}, {0});
  UOpPtr ld = Op(Ops::LOAD, kFloat, {Op(Ops::INDEX, g1->dtype(), {g1, r})});
  UOpPtr assign = Op(Ops::ASSIGN, kFloat, {acc, Op(Ops::MAX, kFloat, {acc, ld})});
  UOpPtr store = Op(Ops::STORE, kVoid, {Op(Ops::INDEX, g0->dtype(), {g0, Int(0)}), assign});
  EXPECT_EQ(VerifyProgram(UOp::Sink({store, Op(Ops::ENDRANGE, kVoid, {r})}).get()), absl::OkStatus());
}

TEST(VerifyKernelAst, AcceptsAReduceAst) {
  UOpPtr ld = Op(Ops::LOAD, kFloat, {Global(kFloat, 256, 1), View()});
  UOpPtr red =
      Op(Ops::REDUCE_AXIS, kFloat, {Op(Ops::MUL, kFloat, {ld, Op(Ops::CONST, kFloat, {View()}, 2.0)})},
         {Ops::ADD, Arg::IntTuple({0, 1})});
  UOpPtr valid = Op(Ops::VALID, kBool, {View()});
  UOpPtr value = Op(Ops::WHERE, kFloat, {valid, red, Float(0.0)});
  UOpPtr sink =
      UOp::Sink({Op(Ops::STORE, kVoid, {Global(kFloat, 1, 0), View(), value})}, Payload("KernelInfo"));
  EXPECT_EQ(VerifyKernelAst(sink.get()), absl::OkStatus());
}

// a = Tensor.empty(4); b = (a.reshape(2, 2) + 1).contiguous(); a.assign(...) and a copy to another device.
TEST(VerifyTensorGraph, AcceptsATensorGraph) {
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  UOpPtr buf = Op(Ops::BUFFER, kFloat, {Op(Ops::UNIQUE, kVoid, {}, 0), cpu}, 4);
  UOpPtr a = Op(Ops::VIEW, kFloat, {buf}, Payload("ShapeTracker"));
  UOpPtr reshaped = Op(Ops::RESHAPE, kFloat, {a}, Arg::IntTuple({2, 2}));
  UOpPtr one = Op(Ops::CONST, kFloat, {Op(Ops::VIEW, kVoid, {cpu}, Payload("ShapeTracker"))}, 1.0);
  UOpPtr one_b = Op(Ops::EXPAND, kFloat, {Op(Ops::RESHAPE, kFloat, {one}, Arg::IntTuple({1, 1}))},
                    Arg::IntTuple({2, 2}));
  UOpPtr b = Op(Ops::CONTIGUOUS, kFloat, {Op(Ops::ADD, kFloat, {reshaped, one_b})});
  UOpPtr assign = Op(Ops::ASSIGN, kFloat, {a, Op(Ops::RESHAPE, kFloat, {b}, Arg::IntTuple({4}))});
  UOpPtr copy = Op(Ops::COPY, kFloat, {assign, Op(Ops::DEVICE, kVoid, {}, "DISK")});
  UOpPtr bind = Op(Ops::BIND, kInt, {UOp::Variable("i", 0, 3), Int(2)});
  UOpPtr kernel = Op(Ops::KERNEL, kVoid, {buf}, Payload("Kernel"));
  EXPECT_EQ(VerifyTensorGraph(UOp::Sink({copy, bind, kernel}).get()), absl::OkStatus());
}

// ---- one test per kind of violation; each message names the node and the rule ----

TEST(VerifyProgram, NamesThePositionInTheProgram) {
  std::vector<UOpPtr> p = AddProgram();
  UOpPtr bad_range = Op(Ops::RANGE, kFloat, {Float(3.0)}, 0);
  p.insert(p.begin() + 3, bad_range);
  EXPECT_THAT(Program(p),
              Violates("program spec violation at uop 3: Ops.RANGE dtypes.float arg=0 src=[Ops.CONST]",
                       "RANGE must be a scalar int"));
  // The root overload numbers nodes in toposort order.
  EXPECT_THAT(VerifyProgram(UOp::Sink({bad_range}).get()),
              Violates("at node (toposort order) 1: Ops.RANGE dtypes.float", "RANGE must be a scalar int"));
}

TEST(VerifyProgram, DefineGlobalMustBeAGlobalPointerNumberedByAnInt) {
  EXPECT_THAT(Program({Op(Ops::DEFINE_GLOBAL, kFloat, {}, 0)}),
              Violates("at uop 0: Ops.DEFINE_GLOBAL dtypes.float arg=0", "non-local pointer"));
  EXPECT_THAT(Program({Op(Ops::DEFINE_GLOBAL, kFloat.Ptr(4, true), {}, 0)}),
              Violates("Ops.DEFINE_GLOBAL dtypes.float.ptr(4, local=True)", "non-local pointer"));
  EXPECT_THAT(Program({Op(Ops::DEFINE_GLOBAL, kFloat.Ptr(4), {}, "data0")}),
              Violates("Ops.DEFINE_GLOBAL dtypes.float.ptr(4) arg='data0'", "int parameter number"));
  EXPECT_THAT(Program({Op(Ops::DEFINE_LOCAL, kFloat.Ptr(4), {}, "temp0")}),
              Violates("Ops.DEFINE_LOCAL dtypes.float.ptr(4)", "must be a local pointer"));
}

TEST(VerifyProgram, RangeNeedsOneIntEndOfItsDtypeAndAnIntAxis) {
  EXPECT_THAT(Program({Op(Ops::RANGE, kInt, {}, 0)}),
              Violates("Ops.RANGE dtypes.int arg=0 src=[]", "one source"));
  EXPECT_THAT(Program({Op(Ops::RANGE, kInt, {UOp::Const(dtypes::kInt64, 4)}, 0)}),
              Violates("Ops.RANGE dtypes.int arg=0 src=[Ops.CONST]", "equal its end's, dtypes.long"));
  EXPECT_THAT(Program({Op(Ops::RANGE, kInt, {Int(4)}, "r0")}), Violates("arg='r0'", "int axis number"));
  EXPECT_THAT(Program({Op(Ops::ENDRANGE, kVoid, {Int(4)})}), Violates("Ops.ENDRANGE", "ENDRANGE(RANGE)"));
}

TEST(VerifyProgram, AluSourcesMustShareTheDtype) {
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::ADD, kInt, {x, Float(1.0)})}),
              Violates("at uop 0: Ops.ADD dtypes.int arg=None src=[Ops.DEFINE_VAR, Ops.CONST]",
                       "ALU source 1 has dtype dtypes.float"));
  EXPECT_THAT(Program({Op(Ops::ADD, kInt.Vec(2), {x, x})}),
              Violates("Ops.ADD dtypes.int.vec(2)", "ALU source 0"));
}

TEST(VerifyProgram, AluArityIsChecked) {
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::ADD, kInt, {x})}), Violates("Ops.ADD", "takes 2 sources, not 1"));
  EXPECT_THAT(Program({Op(Ops::NEG, kInt, {x, x})}), Violates("Ops.NEG", "takes 1 source, not 2"));
  EXPECT_THAT(Program({Op(Ops::WHERE, kInt, {x.lt(1), x})}), Violates("Ops.WHERE", "takes 3 sources, not 2"));
}

TEST(VerifyProgram, ComparisonsProduceBoolFromEqualOperands) {
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::CMPLT, kInt, {x, Int(3)})}),
              Violates("Ops.CMPLT dtypes.int", "a comparison must produce bool"));
  EXPECT_THAT(Program({Op(Ops::CMPNE, kBool, {x, Float(3.0)})}),
              Violates("Ops.CMPNE dtypes.bool", "compared operands differ"));
  EXPECT_THAT(Program({Op(Ops::CMPLT, kBool, {x.broadcast(4), x.broadcast(4)})}),
              Violates("Ops.CMPLT dtypes.bool", "must produce 4 lanes"));
}

TEST(VerifyProgram, WhereNeedsABoolConditionAndEqualBranches) {
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::WHERE, kInt, {x, x, x})}),
              Violates("Ops.WHERE dtypes.int", "condition must be bool, not dtypes.int"));
  EXPECT_THAT(Program({Op(Ops::WHERE, kInt, {x.lt(3), x, Float(0.0)})}),
              Violates("Ops.WHERE dtypes.int", "both branches must agree"));
}

TEST(VerifyProgram, IntegerOnlyOpsAndShifts) {
  UOpPtr f = UOp::Variable("f", 0, 1).cast(kFloat);
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::IDIV, kFloat, {f, f})}), Violates("Ops.IDIV dtypes.float", "integer-only"));
  EXPECT_THAT(Program({Op(Ops::MOD, kFloat, {f, f})}), Violates("Ops.MOD dtypes.float", "integer-only"));
  EXPECT_THAT(
      Program({Op(Ops::SHL, kInt, {x, UOp::Const(dtypes::kInt8, 1)})}),
      Violates("Ops.SHL dtypes.int", "shift distance must be dtypes.int or dtypes.uint, not dtypes.char"));
  EXPECT_THAT(Program({Op(Ops::SHR, dtypes::kInt64, {x, x})}),
              Violates("Ops.SHR dtypes.long", "shift's dtype"));
}

TEST(VerifyProgram, IndexNeedsABufferAnIntIndexAndABoolGate) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::INDEX, g->dtype(), {x, x})}), Violates("Ops.INDEX", "INDEX(DEFINE_GLOBAL"));
  EXPECT_THAT(Program({Op(Ops::INDEX, g->dtype(), {g, Float(1.0)})}),
              Violates("Ops.INDEX dtypes.float.ptr(16)", "index must be an int, not dtypes.float"));
  EXPECT_THAT(Program({Op(Ops::INDEX, g->dtype(), {g, x, x})}), Violates("Ops.INDEX", "gate must be bool"));
}

TEST(VerifyProgram, IndexOutOfBoundsWhenEveryValueIsOutside) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::INDEX, g->dtype(), {g, Int(16)})}),
              Violates("Ops.INDEX dtypes.float.ptr(16) arg=None src=[Ops.DEFINE_GLOBAL, Ops.CONST]",
                       "out of bounds: the index is always in [16, 16], outside the buffer's [0, 16)"));
  EXPECT_THAT(Program({Op(Ops::INDEX, g->dtype(), {g, x - 10})}),
              Violates("Ops.INDEX", "always in [-10, -1]"));
  // A gate that may pass does not save it; a gate that never passes does.
  EXPECT_THAT(Program({Op(Ops::INDEX, g->dtype(), {g, x + 16, x.lt(5)})}),
              Violates("Ops.INDEX", "out of bounds"));
  EXPECT_EQ(Program({Op(Ops::INDEX, g->dtype(), {g, Int(16), UOp::Const(kBool, false)})}), absl::OkStatus());
  // Ranges that only partly leave the buffer need a solver (tinygrad's z3); they are accepted.
  EXPECT_EQ(Program({Op(Ops::INDEX, g->dtype(), {g, x + 10})}), absl::OkStatus());
  // Unsized buffers are never checked.
  UOpPtr unsized = Global(kFloat, -1, 1);
  EXPECT_EQ(Program({Op(Ops::INDEX, unsized->dtype(), {unsized, Int(1000)})}), absl::OkStatus());
}

TEST(VerifyProgram, LoadForms) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr idx = Op(Ops::INDEX, g->dtype(), {g, Int(1)});
  EXPECT_THAT(Program({Op(Ops::LOAD, kFloat, {Int(1)})}), Violates("Ops.LOAD dtypes.float", "LOAD must be"));
  EXPECT_THAT(Program({Op(Ops::LOAD, kFloat, {g})}), Violates("src=[Ops.DEFINE_GLOBAL]", "LOAD must be"));
  EXPECT_THAT(Program({Op(Ops::LOAD, kFloat, {idx, Int(0)})}),
              Violates("Ops.LOAD dtypes.float", "alternative value has dtype dtypes.int"));
  EXPECT_THAT(Program({Op(Ops::LOAD, kFloat, {idx, Float(0), Float(0)})}),
              Violates("Ops.LOAD", "LOAD must be"));
}

TEST(VerifyProgram, StoreForms) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr idx = Op(Ops::INDEX, g->dtype(), {g, Int(1)});
  EXPECT_THAT(Program({Op(Ops::STORE, kFloat, {idx, Float(1.0)})}),
              Violates("Ops.STORE dtypes.float", "STORE must be void"));
  EXPECT_THAT(Program({Op(Ops::STORE, kVoid, {idx, Float(1.0), Int(1)})}),
              Violates("Ops.STORE dtypes.void", "gate must be bool or an IF"));
  EXPECT_THAT(Program({Op(Ops::STORE, kVoid, {g, Float(1.0)})}),
              Violates("Ops.STORE", "STORE must be STORE("));
}

TEST(VerifyProgram, AccumulatorsAndAssign) {
  UOpPtr r = Range(4, 0);
  EXPECT_THAT(Program({Op(Ops::DEFINE_ACC, kFloat, {Float(0.0), Int(4)}, {0})}),
              Violates("Ops.DEFINE_ACC dtypes.float arg=(0,)", "source 1 must be a RANGE"));
  EXPECT_THAT(Program({Op(Ops::DEFINE_ACC, kFloat, {Int(0), r}, {0})}),
              Violates("Ops.DEFINE_ACC", "initial value has dtype dtypes.int"));
  UOpPtr acc = Op(Ops::DEFINE_ACC, kFloat, {Float(0.0), r}, {0});
  EXPECT_THAT(Program({Op(Ops::ASSIGN, kFloat, {r, Float(1.0)})}),
              Violates("Ops.ASSIGN", "ASSIGN(DEFINE_ACC|DEFINE_GLOBAL, value)"));
  EXPECT_THAT(Program({Op(Ops::ASSIGN, kFloat, {acc, Int(1)})}),
              Violates("Ops.ASSIGN", "accumulator of dtypes.float must have that dtype"));
}

TEST(VerifyProgram, GepAndVectorize) {
  UOpPtr v = Float(1.0).broadcast(4);
  EXPECT_THAT(Program({Op(Ops::GEP, kFloat.Vec(2), {v}, {0})}),
              Violates("Ops.GEP dtypes.float.vec(2) arg=(0,)", "must be dtypes.float"));
  EXPECT_THAT(Program({Op(Ops::GEP, kFloat, {v}, {4})}), Violates("Ops.GEP", "lane 4 is not a lane"));
  EXPECT_THAT(Program({Op(Ops::GEP, kFloat, {v}, 0)}), Violates("Ops.GEP", "tuple of lane numbers"));
  EXPECT_THAT(Program({Op(Ops::VECTORIZE, kFloat.Vec(4), {Float(1.0), Float(2.0)})}),
              Violates("Ops.VECTORIZE dtypes.float.vec(4)", "VECTORIZE of 2 sources"));
  EXPECT_THAT(Program({Op(Ops::VECTORIZE, kFloat.Vec(2), {Float(1.0), Int(2)})}),
              Violates("Ops.VECTORIZE", "source 1 has dtype dtypes.int"));
  EXPECT_THAT(Program({Op(Ops::VECTORIZE, kFloat, {Float(1.0)})}), Violates("Ops.VECTORIZE", "at least 2"));
}

TEST(VerifyProgram, CastsTakeOneSourceAndNoArg) {
  EXPECT_THAT(Program({Op(Ops::CAST, kFloat, {Int(1), Int(2)})}), Violates("Ops.CAST", "takes one source"));
  EXPECT_THAT(Program({Op(Ops::BITCAST, kFloat, {Int(1)}, 1)}),
              Violates("Ops.BITCAST dtypes.float arg=1", "arg must be None"));
}

TEST(VerifyProgram, ConstantsHoldTheKindTheirDtypeHolds) {
  EXPECT_THAT(Program({Op(Ops::CONST, kFloat, {}, 1)}),
              Violates("Ops.CONST dtypes.float arg=1", "must hold a Python float, not int"));
  EXPECT_THAT(Program({Op(Ops::CONST, kInt, {}, true)}),
              Violates("Ops.CONST dtypes.int", "Python int, not bool"));
  EXPECT_THAT(Program({Op(Ops::CONST, kBool, {}, 1.0)}),
              Violates("Ops.CONST dtypes.bool", "Python bool, not float"));
  EXPECT_THAT(Program({Op(Ops::VCONST, kInt.Vec(2), {}, {1, 2, 3})}),
              Violates("Ops.VCONST", "tuple of 2 values"));
  EXPECT_THAT(Program({Op(Ops::VCONST, kInt.Vec(2), {}, {1, 2.0})}),
              Violates("Ops.VCONST", "lane 1 must be a Python int"));
}

TEST(VerifyProgram, SpecialVarsAndGpuControlFlow) {
  EXPECT_THAT(Program({Op(Ops::SPECIAL, kInt, {Int(4)}, {"gidx0", 4})}),
              Violates("Ops.SPECIAL", "no sources"));
  EXPECT_THAT(Program({Op(Ops::SPECIAL, kInt, {}, "gidx0")}),
              Violates("Ops.SPECIAL dtypes.int arg='gidx0'", "(name, size)"));
  EXPECT_THAT(Program({Op(Ops::SPECIAL, kFloat, {}, {"gidx0", 4})}), Violates("Ops.SPECIAL", "scalar int"));
  EXPECT_THAT(Program({Op(Ops::DEFINE_VAR, kInt, {}, {"n", 1.5, 4})}),
              Violates("Ops.DEFINE_VAR dtypes.int arg=('n', 1.5, 4)", "(name, min, max)"));
  UOpPtr x = UOp::Variable("x", 0, 9);
  EXPECT_THAT(Program({Op(Ops::IF, kVoid, {x})}), Violates("Ops.IF", "gate must be bool"));
  EXPECT_THAT(Program({Op(Ops::IF, kVoid, {x.lt(3), x})}), Violates("Ops.IF", "IF(gate[, BARRIER])"));
  EXPECT_THAT(Program({Op(Ops::ENDIF, kVoid, {x})}), Violates("Ops.ENDIF", "ENDIF(IF)"));
  EXPECT_THAT(Program({Op(Ops::BARRIER, kInt)}), Violates("Ops.BARRIER dtypes.int", "BARRIER must be void"));
  EXPECT_THAT(Program({Op(Ops::SINK, kInt)}), Violates("Ops.SINK dtypes.int", "SINK must be void"));
}

TEST(VerifyProgram, ExpanderOps) {
  UOpPtr v = Float(1.0).broadcast(4);
  EXPECT_THAT(Program({Op(Ops::WMMA, kFloat.Vec(4), {v, v, v}, {1, 2})}), Violates("Ops.WMMA", "tuple of 8"));
  EXPECT_THAT(Program({Op(Ops::CONTRACT, kFloat.Vec(4), {Float(1.0)}, Arg(Arg::Tuple{Arg{1, 2}}))}),
              Violates("Ops.CONTRACT", "CONTRACT of 2 lanes cannot produce dtypes.float.vec(4)"));
  EXPECT_THAT(Program({Op(Ops::UNROLL, kFloat, {v}, {Arg{1, 2}, Arg{2, 3}})}),
              Violates("Ops.UNROLL", "UNROLL of 6 lanes"));
  EXPECT_THAT(Program({Op(Ops::UNROLL, kFloat, {v}, 4)}), Violates("Ops.UNROLL", "((axis, size), ...)"));
}

TEST(VerifyProgram, OpsWithNoRuleAreRejected) {
  EXPECT_THAT(Program({Op(Ops::UNIQUE, kVoid, {}, 0)}),
              Violates("Ops.UNIQUE dtypes.void arg=0 src=[]", "no rule allows Ops.UNIQUE here"));
  EXPECT_THAT(Program({Op(Ops::PTRCAT, kFloat.Ptr(4).Vec(2), {Global(kFloat, 4, 0), Global(kFloat, 4, 1)})}),
              Violates("Ops.PTRCAT", "no rule allows"));
}

TEST(VerifyProgram, NullEntriesAreErrorsNotCrashes) {
  std::vector<const UOp*> list = {nullptr};
  EXPECT_THAT(VerifyProgram(absl::MakeConstSpan(list)), Violates("at uop 0", "null uop"));
  EXPECT_EQ(VerifyProgram(static_cast<const UOp*>(nullptr)).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyKernelAst(nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(VerifyTensorGraph(nullptr).code(), absl::StatusCode::kInvalidArgument);
}

TEST(VerifyKernelAst, ViewsAndEarlyLoadStore) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr bad_view = Op(Ops::VIEW, kVoid, {}, Arg::IntTuple({4, 4}));
  UOpPtr store = Op(Ops::STORE, kVoid, {g, bad_view, Float(1.0)});
  EXPECT_THAT(
      VerifyKernelAst(UOp::Sink({store}).get()),
      Violates("kernel AST spec violation at node (toposort order) 1: Ops.VIEW dtypes.void arg=(4, 4)",
               "VIEW's arg must be a ShapeTracker, not tuple"));
  UOpPtr st_store = Op(Ops::STORE, kVoid, {g, View(), Float(1.0)});
  EXPECT_THAT(
      VerifyKernelAst(UOp::Sink({Op(Ops::STORE, kVoid,
                                    {g, View(), Op(Ops::VIEW, kFloat, {st_store}, Payload("ShapeTracker"))})})
                          .get()),
      Violates("Ops.VIEW dtypes.float", "cannot view a STORE"));
  EXPECT_THAT(
      VerifyKernelAst(UOp::Sink({Op(Ops::STORE, kVoid,
                                    {g, Op(Ops::VIEW, kFloat, {}, Payload("ShapeTracker")), Float(1.0)})})
                          .get()),
      Violates("Ops.VIEW dtypes.float", "without a source must be void"));
  EXPECT_THAT(
      VerifyKernelAst(UOp::Sink({Op(Ops::STORE, kVoid, {g, View(), Op(Ops::LOAD, kFloat, {g})})}).get()),
      Violates("Ops.LOAD", "LOAD must be"));
  EXPECT_THAT(
      VerifyKernelAst(UOp::Sink({Op(Ops::STORE, kVoid, {g, View(), Op(Ops::VALID, kInt, {View()})})}).get()),
      Violates("Ops.VALID dtypes.int", "bool VALID(VIEW)"));
}

TEST(VerifyKernelAst, ReduceAxisArgs) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr ld = Op(Ops::LOAD, kFloat, {g, View()});
  auto ast = [&](Arg arg) {
    return UOp::Sink(
        {Op(Ops::STORE, kVoid, {g, View(), Op(Ops::REDUCE_AXIS, kFloat, {ld}, std::move(arg))})});
  };
  EXPECT_THAT(VerifyKernelAst(ast({Ops::SUB, Arg::IntTuple({0})}).get()),
              Violates("Ops.REDUCE_AXIS dtypes.float arg=(Ops.SUB, (0,))", "Ops.ADD|Ops.MUL|Ops.MAX"));
  EXPECT_THAT(VerifyKernelAst(ast({Ops::ADD}).get()),
              Violates("Ops.REDUCE_AXIS", "(Ops.ADD|Ops.MUL|Ops.MAX, axes)"));
  EXPECT_THAT(VerifyKernelAst(ast({Ops::ADD, 0}).get()), Violates("Ops.REDUCE_AXIS", "tuple of ints"));
}

TEST(VerifyKernelAst, RootMustBeASinkOfStores) {
  UOpPtr g = Global(kFloat, 16, 0);
  UOpPtr store = Op(Ops::STORE, kVoid, {g, View(), Float(1.0)});
  EXPECT_THAT(VerifyKernelAst(store.get()),
              Violates("at node (toposort order) 3: Ops.STORE", "rooted at a SINK"));
  EXPECT_THAT(VerifyKernelAst(UOp::Sink({store, Float(2.0)}).get()),
              Violates("Ops.SINK dtypes.void", "source 1 is Ops.CONST"));
}

TEST(VerifyTensorGraph, MovementOpsKeepTheDtypeAndTakeTupleArgs) {
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  UOpPtr buf = Op(Ops::BUFFER, kFloat, {Op(Ops::UNIQUE, kVoid, {}, 0), cpu}, 4);
  EXPECT_THAT(
      VerifyTensorGraph(Op(Ops::RESHAPE, kInt, {buf}, Arg::IntTuple({2, 2})).get()),
      Violates("tensor graph spec violation at node (toposort order) 3: Ops.RESHAPE dtypes.int arg=(2, 2) "
               "src=[Ops.BUFFER]",
               "keep its source's dtype dtypes.float"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::PERMUTE, kFloat, {buf}, 0).get()),
              Violates("Ops.PERMUTE", "arg must be a tuple"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::PERMUTE, kFloat, {buf, buf}, Arg::IntTuple({0})).get()),
              Violates("Ops.PERMUTE", "no rule allows"));
}

TEST(VerifyTensorGraph, ViewsMustBeOfBuffers) {
  UOpPtr x = UOp::Variable("x", 0, 9).cast(kFloat);
  UOpPtr view =
      Op(Ops::VIEW, kFloat, {Op(Ops::RESHAPE, kFloat, {x}, Arg::IntTuple({1}))}, Payload("ShapeTracker"));
  EXPECT_THAT(VerifyTensorGraph(view.get()), Violates("Ops.VIEW dtypes.float", "not Ops.CAST"));
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::VIEW, kVoid, {cpu}, Payload("View")).get()),
              Violates("Ops.VIEW", "must be a ShapeTracker, not View"));
}

TEST(VerifyTensorGraph, BuffersAndDevices) {
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  UOpPtr unique = Op(Ops::UNIQUE, kVoid, {}, 0);
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::DEVICE, kVoid, {}, 0).get()),
              Violates("Ops.DEVICE dtypes.void arg=0", "device name"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::DEVICE, kInt, {}, "CPU").get()),
              Violates("Ops.DEVICE", "must be void"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::UNIQUE, kVoid, {cpu}, 0).get()),
              Violates("Ops.UNIQUE", "no sources"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::BUFFER, kFloat, {unique, cpu}, "4").get()),
              Violates("Ops.BUFFER dtypes.float arg='4'", "int size"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::BUFFER, kFloat, {cpu}, 4).get()),
              Violates("Ops.BUFFER", "UNIQUE, DEVICE"));
  UOpPtr buf = Op(Ops::BUFFER, kFloat, {unique, cpu}, 4);
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::BUFFER_VIEW, kFloat, {buf}, 2).get()),
              Violates("Ops.BUFFER_VIEW", "(size, offset)"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::KERNEL, kVoid, {cpu}, Payload("Kernel")).get()),
              Violates("Ops.KERNEL", "source 0 must be a BUFFER"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::KERNEL, kVoid, {buf}, 1).get()),
              Violates("Ops.KERNEL", "Kernel payload"));
}

TEST(VerifyTensorGraph, ValueOpsKeepTheDtype) {
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  UOpPtr buf = Op(Ops::BUFFER, kFloat, {Op(Ops::UNIQUE, kVoid, {}, 0), cpu}, 4);
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::CONTIGUOUS, kInt, {buf}).get()),
              Violates("Ops.CONTIGUOUS dtypes.int", "keep its source's dtype dtypes.float"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::DETACH, kFloat, {buf, buf}).get()),
              Violates("Ops.DETACH", "no rule"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::COPY, kInt, {buf, cpu}).get()),
              Violates("Ops.COPY dtypes.int", "COPY must keep"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::ASSIGN, kFloat, {buf, buf, buf}).get()),
              Violates("Ops.ASSIGN", "source 2 must be an ASSIGN"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::BIND, kFloat, {UOp::Variable("i", 0, 3), Int(1)}).get()),
              Violates("Ops.BIND dtypes.float", "no rule"));
  // A tensor constant on a device view still holds the kind of value its dtype holds.
  UOpPtr view = Op(Ops::VIEW, kVoid, {cpu}, Payload("ShapeTracker"));
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::CONST, kFloat, {view}, 1).get()),
              Violates("Ops.CONST dtypes.float", "Python float, not int"));
  // Kernel-level rules still apply below the tensor rules.
  EXPECT_THAT(VerifyTensorGraph(Op(Ops::ADD, kFloat, {buf, Int(1)}).get()),
              Violates("Ops.ADD", "ALU source 1"));
}

// ---- the scheduler's and codegen's intermediate graphs (SPEC=1) ----

TEST(VerifySchedulerGraph, ViewsMayBeOfAnyValue) {
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  UOpPtr buf = Op(Ops::BUFFER, kFloat, {Op(Ops::UNIQUE, kVoid, {}, 0), cpu}, 4);
  UOpPtr sum = Op(Ops::REDUCE_AXIS, kFloat, {buf}, {Ops::ADD, Arg::IntTuple({0})});
  UOpPtr view = Op(Ops::VIEW, kFloat, {sum}, Payload("ShapeTracker"));
  EXPECT_EQ(VerifySchedulerGraph(UOp::Sink({view}).get()), absl::OkStatus());
  // tensor_uop_spec itself wants a view of a buffer (or a constant, an assign, a device).
  EXPECT_THAT(VerifyTensorGraph(UOp::Sink({view}).get()), Violates("Ops.VIEW", "not Ops.REDUCE_AXIS"));
  // The other rules stay.
  EXPECT_THAT(VerifySchedulerGraph(Op(Ops::VIEW, kInt, {sum}, Payload("ShapeTracker")).get()),
              Violates("scheduler graph spec violation", "keep its source's dtype"));
  EXPECT_THAT(VerifySchedulerGraph(Op(Ops::CONTIGUOUS, kInt, {buf}).get()),
              Violates("Ops.CONTIGUOUS dtypes.int", "keep its source's dtype"));
}

TEST(VerifyKernelGraph, OnlyBuffersKernelsAndAssigns) {
  UOpPtr cpu = Op(Ops::DEVICE, kVoid, {}, "CPU");
  UOpPtr buf = Op(Ops::BUFFER, kFloat, {Op(Ops::UNIQUE, kVoid, {}, 0), cpu}, 4);
  UOpPtr kernel = Op(Ops::KERNEL, kVoid, {buf}, Payload("Kernel"));
  UOpPtr assign = Op(Ops::ASSIGN, kFloat, {buf, kernel});
  EXPECT_EQ(VerifyKernelGraph(UOp::Sink({assign}).get()), absl::OkStatus());
  UOpPtr view = Op(Ops::VIEW, kFloat, {assign}, Payload("ShapeTracker"));
  EXPECT_THAT(VerifyKernelGraph(UOp::Sink({view}).get()),
              Violates("kernel graph spec violation at node (toposort order) 5: Ops.VIEW",
                       "only buffers, kernels and assigns; Ops.VIEW is not allowed"));
  EXPECT_THAT(VerifyKernelGraph(Op(Ops::KERNEL, kVoid, {cpu}, Payload("Kernel")).get()),
              Violates("Ops.KERNEL", "source 0 must be a BUFFER"));
}

TEST(VerifyCodegenGraph, AcceptsTheFormsBetweenSteps) {
  UOpPtr g0 = Global(kFloat, 1, 0), g1 = Global(kFloat, 64, 1);
  UOpPtr r = Range(16, 0);
  // The lowerer's REDUCE of four unrolled lanes over a RANGE, and the expander's vector of pointers.
  UOpPtr ptrs = Op(Ops::VECTORIZE, g1->dtype().Vec(4), {g1, g1, g1, g1});
  UOpPtr idx = Op(Ops::INDEX, g1->dtype().Vec(4), {ptrs, Op(Ops::VECTORIZE, kInt.Vec(4), {r, r, r, r})});
  UOpPtr lanes = Op(Ops::LOAD, kFloat.Vec(4), {idx});
  UOpPtr red = Op(Ops::REDUCE, kFloat, {lanes, r}, Ops::ADD);
  UOpPtr mask = Int(0).lt(Int(1));
  UOpPtr store = Op(Ops::STORE, kVoid,
                    {Op(Ops::INDEX, g0->dtype(), {g0, Int(0)}), Op(Ops::IGNORE, kFloat, {red, mask})});
  EXPECT_EQ(VerifyCodegenGraph(UOp::Sink({store}).get()), absl::OkStatus());
  // None of them is a form of the linear program.
  EXPECT_THAT(VerifyProgram(UOp::Sink({store}).get()), Violates("Ops.VECTORIZE", "VECTORIZE of 4"));
}

TEST(VerifyCodegenGraph, RejectsIllFormedOnes) {
  UOpPtr g1 = Global(kFloat, 64, 1);
  UOpPtr r = Range(16, 0);
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::REDUCE, kFloat, {Float(1.0), r}, Ops::SUB).get()),
              Violates("codegen graph spec violation", "Ops.ADD, Ops.MUL or Ops.MAX"));
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::REDUCE, kFloat, {Float(1.0), Int(3)}, Ops::ADD).get()),
              Violates("Ops.REDUCE", "source 1 must be a RANGE"));
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::REDUCE, kInt, {Float(1.0), r}, Ops::ADD).get()),
              Violates("Ops.REDUCE", "cannot produce dtypes.int"));
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::VECTORIZE, g1->dtype().Vec(3), {g1, g1}).get()),
              Violates("Ops.VECTORIZE", "2 pointers"));
  UOpPtr ptrs = Op(Ops::VECTORIZE, g1->dtype().Vec(2), {g1, g1});
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::INDEX, g1->dtype().Vec(2), {ptrs, Float(1.0)}).get()),
              Violates("Ops.INDEX", "index must be an int"));
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::IGNORE, kFloat, {Float(1.0), Int(1)}).get()),
              Violates("Ops.IGNORE", "mask must be bool"));
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::IGNORE, kInt, {Float(1.0), Int(0).lt(Int(1))}).get()),
              Violates("Ops.IGNORE", "void or keep"));
  // The kernel spec applies to the rest.
  EXPECT_THAT(VerifyCodegenGraph(Op(Ops::ADD, kFloat, {Float(1.0), Int(1)}).get()),
              Violates("Ops.ADD", "ALU source 1"));
}

TEST(SpecChecks, SwitchAndStepErrors) {
  SetSpecChecks(true);
  EXPECT_TRUE(SpecChecksEnabled());
  SetSpecChecks(false);
  EXPECT_FALSE(SpecChecksEnabled());
  absl::Status s =
      SpecStepError("codegen", "expander", absl::InvalidArgumentError("codegen graph spec violation ..."));
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(s.message(),
            "SPEC: codegen step 'expander' left an invalid graph: codegen graph spec violation ...");
}

}  // namespace
}  // namespace uopc
