// kernel_by_hand: a kernel AST written by hand, compiled and run (codegen, the C renderer and the CPU device,
// no scheduler).
//
// The kernel is out = a + b.T on 4x4 floats, in the form the scheduler hands to codegen: a SINK of STOREs
// into DEFINE_GLOBALs, each LOAD and STORE with a VIEW whose ShapeTracker says how positions map onto the
// buffer (b is read through a transposed view). codegen applies tinygrad's default optimizations, lowers the
// views to index arithmetic, and renders C; the CPU device compiles it with clang and runs it.
//
//   ./bazelw run //examples:kernel_by_hand
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <vector>

#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "renderer/cstyle.h"
#include "runtime/registry.h"
#include "shapetracker/shapetracker.h"
#include "uop/print.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

namespace {

using namespace uopc;  // NOLINT: an example reads better without the prefixes

absl::Status Main() {
  // Views: the 4x4 row-major layout, and the same buffer read transposed.
  UOPC_ASSIGN_OR_RETURN(ShapeTracker rows, ShapeTracker::FromShape({4, 4}));
  UOPC_ASSIGN_OR_RETURN(ShapeTracker transposed, rows.Permute({1, 0}));
  UOpPtr out = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, int64_t{0});
  UOpPtr a = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, int64_t{1});
  UOpPtr b = UOp::New(Ops::DEFINE_GLOBAL, dtypes::kFloat32.Ptr(16), {}, int64_t{2});
  UOpPtr sum = a.load({rows.ToUOp()}) + b.load({transposed.ToUOp()});
  UOpPtr ast = UOp::Sink({out.store({rows.ToUOp(), sum})});
  std::cout << "== the kernel AST (uopc's textual IR; `uopc compile` reads this)\n"
            << PrintIr(ast.get()) << "\n";

  // Codegen for the CPU target: opts, lowering, linearizing, rendering.
  ClangRenderer clang;
  KernelNameCounter names;
  UOPC_ASSIGN_OR_RETURN(ProgramSpec spec, CompileKernel(ast, clang, CompileOptions{}, &names));
  std::cout << "== " << spec.name << " with opts " << OptListToString(spec.applied_opts) << "\n"
            << spec.src << "\n";

  // Run it: three buffers on the CPU device, a = 0..15, b = 100 * (0..15).
  UOPC_ASSIGN_OR_RETURN(Device * cpu, GetDevice("CPU"));
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, cpu->CreateProgram(spec));
  std::vector<Buffer> buffers;
  std::vector<float> host(16);
  for (int i = 0; i < 3; ++i) {
    UOPC_ASSIGN_OR_RETURN(Buffer buf, Buffer::Allocate(*cpu, dtypes::kFloat32, 16));
    for (int j = 0; j < 16; ++j) host[j] = i == 1 ? j : i == 2 ? 100.0f * j : 0.0f;
    UOPC_RETURN_IF_ERROR(buf.CopyIn({reinterpret_cast<const uint8_t*>(host.data()), 64}));
    buffers.push_back(std::move(buf));
  }
  std::vector<Buffer*> params;
  for (int64_t g : spec.globals) params.push_back(&buffers[g]);
  UOPC_RETURN_IF_ERROR(program->Launch(params, {}, LaunchParams{}));
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[0].ToBytes());
  std::memcpy(host.data(), bytes.data(), 64);
  std::cout << "== out = a + b.T\n";
  for (int r = 0; r < 4; ++r) {
    for (int c = 0; c < 4; ++c) std::cout << (c ? " " : "") << host[r * 4 + c];
    std::cout << "\n";
  }
  return absl::OkStatus();
}

}  // namespace

int main() {
  if (absl::Status s = Main(); !s.ok()) {
    std::cerr << s << "\n";
    return EXIT_FAILURE;
  }
  return EXIT_SUCCESS;
}
