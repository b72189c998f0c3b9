// libFuzzer target for the linearizer and the interpreter: any graph (textual IR) is linearized and run on
// INTERP's engine with buffers of the sizes its DEFINE_GLOBALs declare, giving a result or an error Status,
// never a crash, an out-of-bounds access or a hang (runs are capped in uops).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "codegen/linearize.h"
#include "runtime/interp.h"
#include "uop/text_ir.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace uopc;  // NOLINT: a fuzz entry point
  absl::StatusOr<UOpPtr> root = ParseIrSingle(absl::string_view(reinterpret_cast<const char*>(data), size));
  if (!root.ok()) return 0;
  absl::StatusOr<std::vector<UOpPtr>> uops = Linearize(*root);
  if (!uops.ok()) return 0;
  absl::StatusOr<InterpretedProgram> program = InterpretedProgram::Create(*uops);
  if (!program.ok()) return 0;
  // Buffers as the program declares them (small ones only), variables at their minimum.
  std::deque<std::vector<uint8_t>> memory;  // a deque: buffers keep their address as more are added
  std::vector<InterpBuffer> buffers;
  absl::flat_hash_map<std::string, int64_t> vars;
  for (const UOpPtr& u : *uops) {
    if (u->op() == Ops::DEFINE_VAR && u->arg().is_tuple() && u->arg().size() >= 2 && u->arg()[1].is_int()) {
      vars[u->var_name()] = u->arg()[1].as_int();
    }
    if (u->op() != Ops::DEFINE_GLOBAL || !u->arg().is_int()) continue;
    const int64_t arg = u->arg().as_int(), n = u->dtype().ptr_size();
    if (arg < 0 || arg > 16 || n < 0 || n > (1 << 16)) return 0;
    if (static_cast<int64_t>(buffers.size()) <= arg) buffers.resize(arg + 1);
    memory.emplace_back(static_cast<size_t>(n * u->dtype().base().scalar().itemsize()), 0);
    buffers[arg] = {memory.back().data(), n, u->dtype().base().scalar()};
  }
  (void)program->Run(buffers, vars, LaunchDims{}, /*max_steps=*/200000);
  return 0;
}
