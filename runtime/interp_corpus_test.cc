// The interpreter against tinygrad's outputs, independently of uopc's passes: each corpus kernel's graph
// after tinygrad's "final rewrite" (clang and clang_noopt), linearized and run on INTERP with the corpus's
// inputs, must reproduce the corpus's `outputs`. (corpus_run_test checks the whole pipeline; this pins down
// the interpreter and the linearizer on their own.)
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/linearize.h"
#include "codegen/program_spec.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

// Runs the linearized program `uops` on INTERP with the corpus's inputs: "" when it computes the corpus's
// outputs, else the first mismatch.
absl::StatusOr<std::string> OutputMismatch(std::vector<UOpPtr> uops, const CorpusKernel& k, Device& interp) {
  UOPC_ASSIGN_OR_RETURN(ProgramSpec spec, ProgramSpec::FromUops(std::move(uops), ""));
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, interp.CreateProgram(spec));
  absl::flat_hash_map<int64_t, Buffer> buffers;
  for (const CorpusBuffer& b : k.buffers) {
    UOPC_ASSIGN_OR_RETURN(DType dtype, CorpusDType(b.dtype));
    UOPC_ASSIGN_OR_RETURN(Buffer buffer, Buffer::Allocate(interp, dtype, b.size));
    UOPC_RETURN_IF_ERROR(buffer.CopyIn(CorpusInputBytes(dtype, b.arg, b.size)));
    buffers.emplace(b.arg, std::move(buffer));
  }
  std::vector<Buffer*> params;
  for (int64_t arg : program->spec().globals) params.push_back(&buffers.at(arg));
  UOPC_RETURN_IF_ERROR(program->Launch(params, {}, LaunchParams{}));
  for (const CorpusBuffer& b : k.buffers) {
    const std::string arg = absl::StrCat(b.arg);
    if (!k.outputs.contains(arg)) continue;
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers.at(b.arg).ToBytes());
    UOPC_ASSIGN_OR_RETURN(nlohmann::json got, CorpusJsonFromBytes(buffers.at(b.arg).dtype(), bytes));
    if (std::string diff = CorpusValuesMismatch(buffers.at(b.arg).dtype(), got, k.outputs[arg]);
        !diff.empty()) {
      return absl::StrCat("buffer ", arg, ": ", diff);
    }
  }
  return "";
}

// "" when the program computes the corpus's outputs; else why not.
std::string RunStage(const CorpusKernel& k, absl::string_view target, Device& interp) {
  absl::StatusOr<std::vector<UOpPtr>> uops =
      Linearize(ParseCorpusGraph(*k.target(target).Stage("final rewrite")));
  if (!uops.ok()) return absl::StrCat("linearize: ", uops.status().message());
  absl::StatusOr<std::string> mismatch = OutputMismatch(*std::move(uops), k, interp);
  return mismatch.ok() ? *std::move(mismatch) : std::string(mismatch.status().message());
}

TEST(InterpCorpusTest, TinygradsFinalGraphsComputeTheCorpusOutputs) {
  absl::StatusOr<Device*> interp = GetDevice("INTERP");
  ASSERT_TRUE(interp.ok()) << interp.status();
  int right = 0, total = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      ++total;
      std::string why = RunStage(k, target, **interp);
      if (why.empty()) {
        ++right;
      } else {
        ADD_FAILURE() << k.id << " " << target << ": " << why.substr(0, 400);
      }
    }
  }
  EXPECT_EQ(right, total);
  EXPECT_EQ(total, 186);
}

}  // namespace
}  // namespace uopc
