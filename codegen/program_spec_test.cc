// ProgramSpec's Estimates against tinygrad v0.10.3's: every corpus kernel on the clang, opencl and cuda
// targets, and tensor-core kernels on cuda (testdata/estimates.jsonl, from harvest_estimates.py); and the
// counting rules on small hand-written programs (loops, launch dims, indexing, WMMA, symbolic trip counts).
#include "codegen/program_spec.h"

#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "renderer/gpu_cstyle.h"
#include "uop/kernel_info.h"

namespace uopc {
namespace {

using nlohmann::json;

int64_t Value(const SymbolicCount& c, const absl::flat_hash_map<std::string, int64_t>& values = {}) {
  absl::StatusOr<int64_t> v = c.Evaluate(values);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.value_or(-1);
}

TEST(EstimatesTest, SameAsTinygradOnCorpusAndTensorCoreKernels) {
  std::ifstream in("codegen/testdata/estimates.jsonl");
  ASSERT_TRUE(in) << "codegen/testdata/estimates.jsonl is missing";
  absl::flat_hash_map<std::string, const CorpusKernel*> corpus;
  for (const CorpusKernel& k : KernelCorpus()) corpus[k.id] = &k;
  ClangRenderer clang;
  std::unique_ptr<Renderer> opencl = MakeOpenCLRenderer(), cuda = MakeCUDARenderer("sm_80");
  const absl::flat_hash_map<std::string, const Renderer*> renderers = {
      {"clang", &clang}, {"opencl", opencl.get()}, {"cuda", cuda.get()}};
  int checked = 0, wmma_kernels = 0;
  for (std::string line; std::getline(in, line);) {
    const json want = json::parse(line);
    const std::string id = want["id"], target = want["target"];
    SCOPED_TRACE(id + " on " + target);
    UOpPtr ast;
    if (want.contains("ast")) {
      ast = ParseCorpusGraph(want["ast"].get<std::string>());
    } else {
      ASSERT_TRUE(corpus.contains(id));
      ast = ParseCorpusGraph(corpus[id]->ast);
    }
    ASSERT_TRUE(renderers.contains(target));
    absl::StatusOr<ProgramSpec> p = CompileKernel(ast, *renderers.at(target), CompileOptions{}, nullptr);
    ASSERT_TRUE(p.ok()) << p.status();
    std::vector<std::string> opts;
    for (const Opt& o : p->applied_opts) opts.push_back(o.ToString());
    // The estimates depend on the opts: the same opts first.
    ASSERT_EQ(absl::StrJoin(opts, ", "), absl::StrJoin(want["opts"].get<std::vector<std::string>>(), ", "));
    EXPECT_EQ(Value(p->estimates.ops), want["ops"].get<int64_t>());
    EXPECT_EQ(Value(p->estimates.lds), want["lds"].get<int64_t>());
    EXPECT_EQ(Value(p->estimates.mem), want["mem"].get<int64_t>());
    for (const UOpPtr& u : p->uops) {
      if (u->op() == Ops::WMMA) {
        ++wmma_kernels;
        break;
      }
    }
    ++checked;
  }
  EXPECT_EQ(checked, 93 * 3 + 6);
  EXPECT_EQ(wmma_kernels, 7);  // matmul_half/0 and the six tc/ kernels
}

// A small linear program, built in order.
class Program {
 public:
  UOpPtr Add(Ops op, DType dtype, UOp::SrcVector src = {}, Arg arg = Arg()) {
    UOpPtr u = UOp::New(op, dtype, std::move(src), std::move(arg));
    uops_.push_back(u);
    return u;
  }
  UOpPtr Int(int64_t v) { return Add(Ops::CONST, dtypes::kInt32, {}, Arg(v)); }
  const std::vector<UOpPtr>& uops() const { return uops_; }

 private:
  std::vector<UOpPtr> uops_;
};

// A loop of 3 that loads a float4, takes a MULACC and an EXP2 of it and stores that (its index math is not
// counted); then an IF on a computed condition (not counted either) around a float load.
TEST(EstimatesTest, CountsLoopsVectorsMulaccAndNotIndexing) {
  Program p;
  DType f32 = dtypes::kFloat32;
  UOpPtr out = p.Add(Ops::DEFINE_GLOBAL, f32.Ptr(12), {}, Arg(int64_t{0}));
  UOpPtr in = p.Add(Ops::DEFINE_GLOBAL, f32.Ptr(12), {}, Arg(int64_t{1}));
  UOpPtr three = p.Int(3), four = p.Int(4);
  UOpPtr r = p.Add(Ops::RANGE, dtypes::kInt32, {three}, Arg(int64_t{0}));
  UOpPtr idx = p.Add(Ops::MUL, dtypes::kInt32, {r, four});  // indexing: not counted
  UOpPtr at = p.Add(Ops::INDEX, f32.Ptr(12), {in, idx});
  UOpPtr x = p.Add(Ops::LOAD, f32.Vec(4), {at});         // 16 bytes
  UOpPtr y = p.Add(Ops::MULACC, f32.Vec(4), {x, x, x});  // 2 * 4 ops
  UOpPtr z = p.Add(Ops::EXP2, f32.Vec(4), {y});          // 4 ops
  UOpPtr dest = p.Add(Ops::INDEX, f32.Ptr(12), {out, idx});
  p.Add(Ops::STORE, dtypes::kVoid, {dest, z});  // 16 bytes
  p.Add(Ops::ENDRANGE, dtypes::kVoid, {r});
  UOpPtr cond = p.Add(Ops::CMPLT, dtypes::kBool, {four, three});  // an IF's condition: not counted
  UOpPtr gate = p.Add(Ops::IF, dtypes::kVoid, {cond});
  p.Add(Ops::LOAD, f32, {at});  // 4 bytes, once
  p.Add(Ops::ENDIF, dtypes::kVoid, {gate});
  Estimates e = Estimates::FromUops(p.uops());
  EXPECT_EQ(Value(e.ops), 3 * (8 + 4));
  EXPECT_EQ(Value(e.lds), 3 * (16 + 16) + 4);
  EXPECT_EQ(Value(e.mem), Value(e.lds));  // tinygrad's from_uops: mem is lds
}

// Launch dims multiply everything after them; a WMMA counts 2*N*M*K per warp, i.e. divided by its threads.
TEST(EstimatesTest, CountsLaunchDimsAndWmma) {
  Program p;
  DType f32 = dtypes::kFloat32, f16 = dtypes::kFloat16;
  p.Add(Ops::SPECIAL, dtypes::kInt32, {}, Arg{"gidx0", 10});
  p.Add(Ops::SPECIAL, dtypes::kInt32, {}, Arg{"lidx0", 32});
  UOpPtr a = p.Add(Ops::CONST, f16, {}, Arg(0.0));
  UOpPtr c = p.Add(Ops::CONST, f32, {}, Arg(0.0));
  UOpPtr four = p.Int(4);
  UOpPtr r = p.Add(Ops::RANGE, dtypes::kInt32, {four}, Arg(int64_t{0}));
  const Arg wmma_arg{
      "WMMA_8_16_16_half_float", {8, 16, 16}, f16, f32, "CUDA", 32, Arg::Tuple{}, Arg::Tuple{}};
  p.Add(Ops::WMMA, f32.Vec(4), {a, a, c}, wmma_arg);
  p.Add(Ops::ENDRANGE, dtypes::kVoid, {r});
  Estimates e = Estimates::FromUops(p.uops());
  EXPECT_EQ(Value(e.ops), 10 * 32 * 4 * (2 * 8 * 16 * 16 / 32));
  EXPECT_EQ(Value(e.lds), 0);
}

// A loop of `n` iterations inside one of 5: the count is a function of n, evaluated when n is bound.
TEST(EstimatesTest, SymbolicTripCounts) {
  Program p;
  DType f32 = dtypes::kFloat32;
  UOpPtr buf = p.Add(Ops::DEFINE_GLOBAL, f32.Ptr(-1), {}, Arg(int64_t{0}));
  UOpPtr n = p.Add(Ops::DEFINE_VAR, dtypes::kInt32, {}, Arg{"n", 1, 100});
  UOpPtr five = p.Int(5);
  UOpPtr outer = p.Add(Ops::RANGE, dtypes::kInt32, {five}, Arg(int64_t{0}));
  UOpPtr inner = p.Add(Ops::RANGE, dtypes::kInt32, {n}, Arg(int64_t{1}));
  UOpPtr at = p.Add(Ops::INDEX, f32.Ptr(-1), {buf, inner});
  UOpPtr x = p.Add(Ops::LOAD, f32, {at});
  UOpPtr y = p.Add(Ops::ADD, f32, {x, x});
  p.Add(Ops::STORE, dtypes::kVoid, {at, y});
  p.Add(Ops::ENDRANGE, dtypes::kVoid, {inner});
  p.Add(Ops::SQRT, f32, {x});  // once per outer iteration
  p.Add(Ops::ENDRANGE, dtypes::kVoid, {outer});
  Estimates e = Estimates::FromUops(p.uops());
  EXPECT_FALSE(e.ops.is_constant());
  EXPECT_EQ(Value(e.ops, {{"n", 7}}), 5 * 7 + 5);
  EXPECT_EQ(Value(e.lds, {{"n", 7}}), 5 * 7 * 8);
  // 64-bit sums: past int32 without wrapping.
  EXPECT_EQ(Value(e.lds, {{"n", 1 << 30}}), int64_t{5} * (int64_t{1} << 30) * 8);
  EXPECT_FALSE(e.ops.Evaluate({}).ok());  // n unbound
}

// tinygrad's mem_estimate: each buffer's bytes once per run of LOADs (or STOREs) of it in the AST's toposort.
TEST(EstimatesTest, MemOfAstCountsEachBufferOncePerGroup) {
  const CorpusKernel* add = nullptr;
  for (const CorpusKernel& k : KernelCorpus()) {
    if (k.id == "add_f32_1d/0") add = &k;
  }
  ASSERT_NE(add, nullptr);
  int64_t bytes = 0;
  for (const CorpusBuffer& b : add->buffers) bytes += b.size * 4;
  EXPECT_EQ(Estimates::MemOfAst(*ParseCorpusGraph(add->ast)), bytes);
}

// A program made without a kernel AST has no mem estimate (tinygrad's ProgramSpec default).
TEST(EstimatesTest, ProgramSpecFromUopsLeavesMemZero) {
  Program p;
  DType f32 = dtypes::kFloat32;
  UOpPtr buf = p.Add(Ops::DEFINE_GLOBAL, f32.Ptr(1), {}, Arg(int64_t{0}));
  UOpPtr at = p.Add(Ops::INDEX, f32.Ptr(1), {buf, p.Int(0)});
  UOpPtr x = p.Add(Ops::LOAD, f32, {at});
  UOpPtr st = p.Add(Ops::STORE, dtypes::kVoid, {at, p.Add(Ops::NEG, f32, {x})});
  std::vector<UOpPtr> uops = p.uops();
  uops.push_back(UOp::New(Ops::SINK, dtypes::kVoid, {st}, KernelInfoAsArg(KernelInfo{.name = "k"})));
  absl::StatusOr<ProgramSpec> spec = ProgramSpec::FromUops(uops, "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(Value(spec->estimates.ops), 1);
  EXPECT_EQ(Value(spec->estimates.lds), 8);
  EXPECT_EQ(Value(spec->estimates.mem), 0);
}

// A SPECIAL whose size is symbolic (tinygrad's sint launch dim): the launch dim holds its largest value and
// its expression; a variable only the size reads is a launch variable, not a parameter; the estimates count
// the size for the bound values.
TEST(ProgramSpecTest, SymbolicLaunchDims) {
  Program p;
  DType f32 = dtypes::kFloat32;
  const UOpPtr i = UOp::Variable("i", 1, 10), n = UOp::Variable("n", 1, 5);
  UOpPtr buf = p.Add(Ops::DEFINE_GLOBAL, f32.Ptr(-1), {}, Arg(int64_t{0}));
  p.Add(Ops::DEFINE_VAR, dtypes::kInt32, {}, n->arg());
  UOpPtr g =
      p.Add(Ops::SPECIAL, dtypes::kInt32, {}, Arg{"gidx0", Arg(std::make_shared<const UOpArg>(i * 4))});
  p.Add(Ops::SPECIAL, dtypes::kInt32, {}, Arg{"lidx0", 2});
  UOpPtr at = p.Add(Ops::INDEX, f32.Ptr(-1), {buf, g});
  UOpPtr x = p.Add(Ops::LOAD, f32, {at});
  UOpPtr st = p.Add(Ops::STORE, dtypes::kVoid, {at, p.Add(Ops::NEG, f32, {x})});
  std::vector<UOpPtr> uops = p.uops();
  uops.push_back(UOp::New(Ops::SINK, dtypes::kVoid, {st}, KernelInfoAsArg(KernelInfo{.name = "k"})));
  absl::StatusOr<ProgramSpec> spec = ProgramSpec::FromUops(uops, "");
  ASSERT_TRUE(spec.ok()) << spec.status();
  EXPECT_EQ(*spec->global_size, (std::vector<int64_t>{40, 1, 1}));
  EXPECT_EQ(*spec->local_size, (std::vector<int64_t>{2, 1, 1}));
  ASSERT_EQ(spec->symbolic_launch_dims.size(), 1u);
  EXPECT_EQ(spec->symbolic_launch_dims[0].first, 0);
  EXPECT_EQ(spec->symbolic_launch_dims[0].second, i * 4);
  EXPECT_EQ(spec->vars, std::vector<std::string>{"n"});
  EXPECT_EQ(spec->launch_vars, std::vector<std::string>{"i"});
  EXPECT_EQ(Value(spec->estimates.ops, {{"i", 3}}), 3 * 4 * 2);
  EXPECT_EQ(g->vmax().AsInt64(), 39);
}

}  // namespace
}  // namespace uopc
