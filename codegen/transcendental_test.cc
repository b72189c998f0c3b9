#include "codegen/transcendental.h"

#include <cmath>
#include <limits>
#include <optional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "codegen/final_rewrite.h"
#include "gtest/gtest.h"
#include "renderer/cstyle.h"
#include "rewrite/graph_rewrite.h"
#include "uop/exec_alu.h"
#include "uop/status_macros.h"
#include "uop/uop.h"

namespace uopc {
namespace {

// Evaluates a graph of constants, ALU ops, CAST and BITCAST with exec_alu (what the kernel would compute).
// A LOAD stands for the kernel's input and reads `input`.
absl::StatusOr<double> Evaluate(const UOpPtr& root, double input = 0) {
  absl::flat_hash_map<const UOp*, ConstValue> values;
  for (const UOp* u : root->Toposort([](const UOp* u) { return u->op() != Ops::INDEX; })) {
    if (u->op() == Ops::CONST) {
      values[u] = u->const_value();
      continue;
    }
    if (u->op() == Ops::LOAD) {
      values[u] = Truncate(ConstValue::Float(input), u->dtype());
      continue;
    }
    std::vector<ConstValue> operands;
    for (const UOpPtr& s : u->src()) operands.push_back(values.at(s.get()));
    std::optional<DType> operand_dtype;
    if (u->op() == Ops::CAST || u->op() == Ops::BITCAST || u->op() == Ops::CMPLT || u->op() == Ops::CMPNE) {
      operand_dtype = u->src(0)->dtype();
    }
    UOPC_ASSIGN_OR_RETURN(values[u], ExecAlu(u->op(), u->dtype(), operands, operand_dtype));
  }
  return values.at(root.get()).AsFloat();
}

using Fallback = UOpPtr (*)(const UOpPtr&);
UOpPtr Sin(const UOpPtr& d) { return XSin(d); }
UOpPtr Exp2Graph(const UOpPtr& d) { return XExp2(d); }
UOpPtr Log2Graph(const UOpPtr& d) { return XLog2(d); }

// Checks fallback(x) against reference(x) computed in double on the input as the dtype holds it.
void ExpectClose(Fallback fallback, double (*reference)(double), DType dt, const std::vector<double>& xs,
                 double rel_tol, double abs_tol) {
  for (double x : xs) {
    const double held = Truncate(ConstValue::Float(x), dt).AsFloat();
    absl::StatusOr<double> got = Evaluate(fallback(UOp::Const(dt, held)));
    ASSERT_TRUE(got.ok()) << got.status();
    const double want = Truncate(ConstValue::Float(reference(held)), dt).AsFloat();
    if (std::isnan(want)) {
      EXPECT_TRUE(std::isnan(*got)) << dt << " x=" << held << " got " << *got;
    } else if (std::isinf(want)) {
      EXPECT_EQ(*got, want) << dt << " x=" << held;
    } else {
      EXPECT_NEAR(*got, want, abs_tol + rel_tol * std::fabs(want)) << dt << " x=" << held;
    }
  }
}

const double kInf = std::numeric_limits<double>::infinity();
const double kNan = std::numeric_limits<double>::quiet_NaN();
double Exp2(double x) { return std::exp2(x); }
double Log2(double x) { return std::log2(x); }
double SinRef(double x) { return std::sin(x); }

TEST(TranscendentalTest, Exp2) {
  const std::vector<double> xs = {0.0,   0.5,    -0.5,  1.0,   3.7,    -3.7, 10.25, -20.5,
                                  100.0, -120.0, 127.5, 200.0, -200.0, kInf, -kInf, kNan};
  ExpectClose(Exp2Graph, Exp2, dtypes::kFloat32, xs, 3e-7, 0);
  ExpectClose(Exp2Graph, Exp2, dtypes::kFloat64, xs, 1e-15, 0);
  ExpectClose(Exp2Graph, Exp2, dtypes::kFloat16, {0.0, 0.5, -0.5, 1.0, 3.7, -3.7, 10.25, 14.0, 30.0, -30.0},
              2e-3, 0);
}

TEST(TranscendentalTest, Log2) {
  const std::vector<double> xs = {1.0,  2.0,       0.5, 3.0,  10.0, 1e-3, 1e-30,
                                  1e30, 12345.678, 0.0, -1.0, kInf, kNan};
  ExpectClose(Log2Graph, Log2, dtypes::kFloat32, xs, 3e-7, 1e-7);
  ExpectClose(Log2Graph, Log2, dtypes::kFloat64, xs, 1e-15, 1e-15);
  ExpectClose(Log2Graph, Log2, dtypes::kFloat16, {1.0, 2.0, 0.5, 3.0, 10.0, 1e-3, 1000.0, 0.0, -1.0}, 2e-3,
              1e-3);
}

TEST(TranscendentalTest, Sin) {
  const std::vector<double> xs = {0.0,  0.1,  -0.1,  1.0,    -1.0,    3.0, 3.14159, 10.0,  -25.0,
                                  29.9, 31.0, 100.0, 1000.0, 54321.0, 1e6, kInf,    -kInf, kNan};
  ExpectClose(Sin, SinRef, dtypes::kFloat32, xs, 1e-6, 1e-6);
  ExpectClose(Sin, SinRef, dtypes::kFloat64, xs, 1e-14, 1e-14);
  ExpectClose(Sin, SinRef, dtypes::kFloat16, {0.0, 0.1, -0.1, 1.0, -1.0, 3.0, 10.0, -25.0, 100.0}, 2e-3,
              2e-3);
}

// The fallbacks after the CPU target's late rewrites (divisions by powers of two as shifts, masks, NEG, SUB)
// still compute the function: the rewrites keep the integer arithmetic of the bit manipulation exact.
TEST(TranscendentalTest, FallbacksAfterTheLateRewritesOfTheCpuTarget) {
  PatternMatcher late = LateRewritePatterns(ClangRenderer().supported_ops());
  for (DType dt : {dtypes::kFloat32, dtypes::kFloat64}) {
    UOpPtr buf = UOp::New(Ops::DEFINE_GLOBAL, dt.Ptr(1), {}, Arg(int64_t{0}));
    UOpPtr input = buf.index(UOp::Const(dtypes::kInt32, 0)).load();
    struct Case {
      Ops op;
      double (*reference)(double);
      std::vector<double> xs;
    };
    for (const Case& c :
         {Case{Ops::EXP2, Exp2, {-3.7, 0.5, 10.25}}, Case{Ops::LOG2, Log2, {0.001, 3.0, 1e30}},
          Case{Ops::SIN, SinRef, {0.1, -25.0, 54321.0}}}) {
      UOpPtr rewritten = GraphRewrite(input.alu(c.op), late);
      for (const UOp* u : rewritten->Toposort()) EXPECT_NE(u->op(), c.op);
      for (double x : c.xs) {
        absl::StatusOr<double> got = Evaluate(rewritten, x);
        ASSERT_TRUE(got.ok()) << got.status();
        const double held = Truncate(ConstValue::Float(x), dt).AsFloat();
        const double want = c.reference(held);
        EXPECT_NEAR(*got, want, 1e-6 * (1 + std::fabs(want))) << dt << " " << c.op << " x=" << x;
      }
    }
  }
}

}  // namespace
}  // namespace uopc
