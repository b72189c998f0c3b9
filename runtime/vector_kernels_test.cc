// The VECTOR opt and the vector-blocked heuristic (codegen/vector_heuristic.h) compute what tinygrad's
// kernels compute, on the targets that keep float32 vectors (clang:vec16 and LLVM IR with 16 lanes, the CPU
// and LLVM devices' defaults):
//   - every corpus kernel the heuristic vector-blocks gives the corpus's outputs, on the CPU, on INTERP
//     (which runs the linearized program, so the uops are checked apart from their C) and on LLVM;
//   - every corpus kernel with VECTOR added to tinygrad's hand-coded opts, and to no opts, does too
//     (vectors of lanes in any order, masked and gated loads, casts and transcendentals beside them);
//   - the mnist training step's kernels the heuristic vector-blocks give the outputs of tinygrad's opts at
//     their real sizes (batch 512), within float rounding of a reordered sum.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "codegen/codegen.h"
#include "codegen/heuristic.h"
#include "codegen/kernel.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "renderer/llvmir.h"
#include "runtime/corpus_run.h"
#include "runtime/corpus_values.h"
#include "runtime/cpu_device.h"
#include "runtime/exec_item.h"
#include "runtime/registry.h"
#include "uop/check.h"
#include "uop/status_macros.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

constexpr int kVectorWidth = 16;

bool HasVectorOpt(const std::vector<Opt>& opts) {
  return std::any_of(opts.begin(), opts.end(), [](const Opt& o) { return o.op == OptOps::kVector; });
}

CpuDevice& Cpu() {
  static CpuDevice* const device = new CpuDevice(CpuDevice::Options{
      .cache_directory = absl::StrCat(std::getenv("TEST_TMPDIR"), "/uopc_cache"), .threads = 2});
  return *device;
}

// "" when `got` has every output of `k` within the corpus's tolerances.
std::string CorpusMismatch(const CorpusKernel& k, const absl::StatusOr<nlohmann::json>& got) {
  if (!got.ok()) return std::string(got.status().message());
  for (const CorpusBuffer& b : k.buffers) {
    const std::string arg = absl::StrCat(b.arg);
    if (!k.outputs.contains(arg)) continue;
    if (!got->contains(arg)) return absl::StrCat("buffer ", arg, " was not stored to");
    absl::StatusOr<DType> dtype = CorpusDType(b.dtype);
    if (!dtype.ok()) return "bad dtype";
    std::string why = CorpusValuesMismatch(*dtype, (*got)[arg], k.outputs[arg]);
    if (!why.empty()) return absl::StrCat("buffer ", arg, ": ", why);
  }
  return "";
}

Device& Llvm() {
  static Device* const device = [] {
    absl::StatusOr<Device*> llvm = GetDevice("LLVM");
    UOPC_CHECK(llvm.ok(), "the LLVM device is linked in and can start");
    return *llvm;
  }();
  return *device;
}

// Runs `k` with `opts` compiled for clang:vec16 on the CPU and on INTERP, and for LLVM IR with 16 lanes on
// LLVM; failures name `what`.
void ExpectCorpusOutputs(const CorpusKernel& k, const std::vector<Opt>& opts, absl::string_view what) {
  const ClangRenderer clang(CoreSplit{}, kVectorWidth);
  const LLVMRenderer llvm(CoreSplit{}, kVectorWidth);
  CompileOptions options;
  options.opts = opts;
  const UOpPtr ast = ParseCorpusGraph(k.ast);
  absl::StatusOr<Device*> interp = GetDevice("INTERP");
  ASSERT_TRUE(interp.ok()) << interp.status();
  const std::vector<std::pair<Device*, const Renderer*>> targets = {
      {&Cpu(), &clang}, {*interp, &clang}, {&Llvm(), &llvm}};
  for (const auto& [device, renderer] : targets) {
    const std::string why = CorpusMismatch(k, RunOnCorpusInputs(ast, nullptr, *device, *renderer, options));
    if (why.empty()) continue;
    KernelNameCounter names;
    absl::StatusOr<ProgramSpec> spec = CompileKernel(ast, *renderer, options, &names);
    ADD_FAILURE() << k.id << " (" << what << ") on " << device->name() << ": " << why.substr(0, 600)
                  << "\nsource:\n"
                  << (spec.ok() ? spec->src : spec.status().ToString());
  }
}

TEST(VectorKernelsTest, HeuristicKernelsGiveTheCorpusOutputs) {
  const ClangRenderer renderer(CoreSplit{}, kVectorWidth);
  int blocked = 0, swaps = 0;
  for (size_t i = 0; i < KernelCorpus().size(); ++i) {
    const CorpusKernel& k = KernelCorpus()[i];
    absl::StatusOr<Kernel> kernel = Kernel::Create(ParseCorpusGraph(k.ast), renderer);
    ASSERT_TRUE(kernel.ok()) << k.id << ": " << kernel.status();
    ASSERT_TRUE(ApplyDefaultOptimizations(*kernel).ok()) << k.id;
    if (!HasVectorOpt(kernel->applied_opts())) continue;
    ++blocked;
    if (!InTestSample(i)) continue;
    ExpectCorpusOutputs(k, kernel->applied_opts(), "the heuristic's opts");
    // The SWAP the heuristic gives a matmul too large for the cache, on the corpus's small ones.
    Kernel swapped = *kernel;
    if (swapped.ApplyOpt(Opt(OptOps::kSwap, 0, 1)).ok()) {
      ++swaps;
      ExpectCorpusOutputs(k, swapped.applied_opts(), "the heuristic's opts and SWAP");
    }
  }
  if (TestStride() == 1) EXPECT_GT(swaps, 0);  // a sanitizer's sample may hold no kernel with two globals
  std::printf("%d of %zu corpus kernels vector-blocked\n", blocked, KernelCorpus().size());
  // The corpus's matmuls and convolutions; a heuristic that stopped applying fails here.
  EXPECT_GE(blocked, 6);
}

TEST(VectorKernelsTest, VectorOptOnEveryCorpusKernel) {
  const ClangRenderer renderer(CoreSplit{}, kVectorWidth);
  int runs = 0;
  for (size_t i = 0; i < KernelCorpus().size(); ++i) {
    if (!InTestSample(i)) continue;
    const CorpusKernel& k = KernelCorpus()[i];
    absl::StatusOr<Kernel> kernel = Kernel::Create(ParseCorpusGraph(k.ast), renderer);
    ASSERT_TRUE(kernel.ok()) << k.id << ": " << kernel.status();
    absl::StatusOr<std::vector<Opt>> hand_coded = HandCodedOptimizations(*kernel);
    ASSERT_TRUE(hand_coded.ok()) << k.id << ": " << hand_coded.status();
    const Opt vector(OptOps::kVector, std::nullopt, std::nullopt);
    std::vector<Opt> with_hand_coded = *hand_coded;
    with_hand_coded.push_back(vector);
    ExpectCorpusOutputs(k, with_hand_coded, "tinygrad's opts and VECTOR");
    ExpectCorpusOutputs(k, {vector}, "VECTOR alone");
    runs += 2;
  }
  EXPECT_GT(runs, 0);
}

TEST(VectorKernelsTest, VectorNeedsATargetThatKeepsVectors) {
  const ClangRenderer renderer;  // tinygrad's: vector width 1
  absl::StatusOr<Kernel> kernel = Kernel::Create(ParseCorpusGraph(KernelCorpus()[0].ast), renderer);
  ASSERT_TRUE(kernel.ok());
  absl::Status s = kernel->ApplyOpt(Opt(OptOps::kVector, std::nullopt, std::nullopt));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("does not keep vectors"), std::string::npos) << s;
}

// The largest difference between two runs' float32 outputs, relative to the largest |value| of the buffer:
// a reordered sum of N terms differs by about N ulps of the sum's terms, not of its result.
double WorstNormwiseError(absl::Span<const float> got, absl::Span<const float> want) {
  double scale = 0, worst = 0;
  for (float w : want) scale = std::max(scale, std::abs(static_cast<double>(w)));
  for (size_t i = 0; i < want.size(); ++i) {
    if (std::isnan(got[i]) != std::isnan(want[i])) return INFINITY;
    if (!std::isnan(want[i])) worst = std::max(worst, std::abs(static_cast<double>(got[i]) - want[i]));
  }
  return scale == 0 ? worst : worst / scale;
}

// Runs `ast` compiled for `renderer` with `options` on `device`, every buffer (one per DEFINE_GLOBAL, by
// arg) filled with the corpus's inputs, and returns what it stores, as floats by buffer arg (the mnist
// step's buffers are float32).
absl::StatusOr<absl::flat_hash_map<int64_t, std::vector<float>>> RunOn(const UOpPtr& ast,
                                                                       const Renderer& renderer,
                                                                       const CompileOptions& options,
                                                                       Device& device) {
  absl::flat_hash_map<int64_t, Buffer> buffers;
  for (const UOp* u : ast->Toposort()) {
    if (u->op() != Ops::DEFINE_GLOBAL || buffers.contains(u->arg().as_int())) continue;
    const DType dtype = u->dtype().base().scalar();
    if (dtype != dtypes::kFloat32) return absl::InvalidArgumentError("a buffer is not float32");
    UOPC_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(device, dtype, u->dtype().ptr_size()));
    UOPC_RETURN_IF_ERROR(b.CopyIn(CorpusInputBytes(dtype, u->arg().as_int(), u->dtype().ptr_size())));
    buffers.emplace(u->arg().as_int(), std::move(b));
  }
  KernelNameCounter names;
  UOPC_ASSIGN_OR_RETURN(ProgramSpec spec, CompileKernel(ast, renderer, options, &names));
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, device.CreateProgram(spec));
  std::vector<Buffer*> params;
  for (int64_t arg : spec.globals) params.push_back(&buffers.at(arg));
  UOPC_ASSIGN_OR_RETURN(LaunchParams launch, LaunchDims(spec));
  UOPC_RETURN_IF_ERROR(program->Launch(params, {}, launch));
  UOPC_RETURN_IF_ERROR(device.Synchronize());
  absl::flat_hash_map<int64_t, std::vector<float>> out;
  for (int64_t arg : spec.outs) {
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers.at(arg).ToBytes());
    std::vector<float>& values = out[arg];
    values.resize(bytes.size() / sizeof(float));
    std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  }
  return out;
}

TEST(VectorKernelsTest, MnistStepKernelsAtTheirSizes) {
  absl::StatusOr<std::vector<CorpusKernel>> kernels =
      LoadKernelCorpus("codegen/testdata/mnist_step_kernels.jsonl");
  ASSERT_TRUE(kernels.ok()) << kernels.status();
  const ClangRenderer vector_renderer(CoreSplit{.cores = 2}, kVectorWidth),
      scalar_renderer(CoreSplit{.cores = 2});
  const LLVMRenderer llvm_renderer(CoreSplit{.cores = 2}, kVectorWidth);
  int blocked = 0, index = 0;
  for (const CorpusKernel& k : *kernels) {
    const UOpPtr ast = ParseCorpusGraph(k.ast);
    absl::StatusOr<Kernel> kernel = Kernel::Create(ast, vector_renderer);
    ASSERT_TRUE(kernel.ok()) << kernel.status();
    ASSERT_TRUE(ApplyDefaultOptimizations(*kernel).ok());
    if (!HasVectorOpt(kernel->applied_opts())) continue;
    ++blocked;
    if (!InTestSample(index++)) continue;
    CompileOptions fast, tinygrad;
    fast.opts = kernel->applied_opts();
    auto want = RunOn(ast, scalar_renderer, tinygrad, Cpu());
    ASSERT_TRUE(want.ok()) << kernel->BaseName() << ": " << want.status();
    for (const auto& [device, renderer] : std::vector<std::pair<Device*, const Renderer*>>{
             {&Cpu(), &vector_renderer}, {&Llvm(), &llvm_renderer}}) {
      auto got = RunOn(ast, *renderer, fast, *device);
      ASSERT_TRUE(got.ok()) << kernel->BaseName() << " on " << device->name() << ": " << got.status();
      for (const auto& [arg, values] : *want) {
        ASSERT_TRUE(got->contains(arg)) << "buffer " << arg;
        EXPECT_LE(WorstNormwiseError(got->at(arg), values), 1e-5)
            << "kernel " << kernel->BaseName() << " buffer " << arg << " on " << device->name();
      }
    }
  }
  std::printf("%d of the mnist step's kernels vector-blocked\n", blocked);
  // The step's convolutions, forward and backward, and its linear layer; fewer means the heuristic stopped
  // applying to them.
  EXPECT_GE(blocked, 8);
}

}  // namespace
}  // namespace uopc
