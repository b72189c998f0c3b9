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

namespace uopc {
namespace {

// "" when the program computes the corpus's outputs; else why not.
std::string RunStage(const CorpusKernel& k, absl::string_view target, Device& interp) {
  absl::StatusOr<std::vector<UOpPtr>> uops =
      Linearize(ParseCorpusGraph(*k.target(target).Stage("final rewrite")));
  if (!uops.ok()) return absl::StrCat("linearize: ", uops.status().message());
  absl::StatusOr<ProgramSpec> spec = ProgramSpec::FromUops(*std::move(uops), "");
  if (!spec.ok()) return std::string(spec.status().message());
  absl::StatusOr<std::unique_ptr<Program>> program = interp.CreateProgram(*spec);
  if (!program.ok()) return std::string(program.status().message());
  absl::flat_hash_map<int64_t, Buffer> buffers;
  for (const CorpusBuffer& b : k.buffers) {
    absl::StatusOr<DType> dtype = CorpusDType(b.dtype);
    if (!dtype.ok()) return std::string(dtype.status().message());
    absl::StatusOr<Buffer> buffer = Buffer::Allocate(interp, *dtype, b.size);
    if (!buffer.ok()) return std::string(buffer.status().message());
    if (absl::Status s = buffer->CopyIn(CorpusInputBytes(*dtype, b.arg, b.size)); !s.ok())
      return std::string(s.message());
    buffers.emplace(b.arg, *std::move(buffer));
  }
  std::vector<Buffer*> params;
  for (int64_t arg : (*program)->spec().globals) params.push_back(&buffers.at(arg));
  if (absl::Status s = (*program)->Launch(params, {}, LaunchParams{}); !s.ok())
    return std::string(s.message());
  for (const CorpusBuffer& b : k.buffers) {
    const std::string arg = absl::StrCat(b.arg);
    if (!k.outputs.contains(arg)) continue;
    absl::StatusOr<std::vector<uint8_t>> bytes = buffers.at(b.arg).ToBytes();
    if (!bytes.ok()) return std::string(bytes.status().message());
    absl::StatusOr<nlohmann::json> got = CorpusJsonFromBytes(buffers.at(b.arg).dtype(), *bytes);
    if (!got.ok()) return std::string(got.status().message());
    if (std::string diff = CorpusValuesMismatch(buffers.at(b.arg).dtype(), *got, k.outputs[arg]);
        !diff.empty()) {
      return absl::StrCat("buffer ", arg, ": ", diff);
    }
  }
  return "";
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
