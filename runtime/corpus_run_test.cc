// Every corpus kernel, compiled by uopc (with tinygrad's hand-coded opts and without any) and run on the CPU
// and on the interpreter, reproduces tinygrad's outputs (the corpus's `outputs`, within its tolerances).
#include "runtime/corpus_run.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "codegen/testing/kernel_corpus.h"
#include "gtest/gtest.h"
#include "runtime/corpus_values.h"
#include "runtime/registry.h"

namespace uopc {
namespace {

// How many of the corpus's kernels give tinygrad's outputs on `device`, optimized or not.
int CountRight(absl::string_view device_name, bool optimize, std::vector<std::string>& wrong) {
  absl::StatusOr<Device*> device = GetDevice(device_name);
  if (!device.ok()) {
    ADD_FAILURE() << device.status();
    return 0;
  }
  CompileOptions options;
  options.optimize = optimize;
  int right = 0;
  for (const CorpusKernel& k : KernelCorpus()) {
    absl::StatusOr<nlohmann::json> got =
        RunOnCorpusInputs(ParseCorpusGraph(k.ast), nullptr, **device, options);
    std::string why;
    if (!got.ok()) {
      why = std::string(got.status().message());
    } else {
      for (const CorpusBuffer& b : k.buffers) {
        const std::string arg = absl::StrCat(b.arg);
        if (!k.outputs.contains(arg)) continue;
        if (!got->contains(arg)) {
          why = absl::StrCat("buffer ", arg, " was not stored to");
          break;
        }
        absl::StatusOr<DType> dtype = CorpusDType(b.dtype);
        why = dtype.ok() ? CorpusValuesMismatch(*dtype, (*got)[arg], k.outputs[arg]) : "bad dtype";
        if (!why.empty()) break;
      }
    }
    if (why.empty()) {
      ++right;
    } else {
      wrong.push_back(absl::StrCat(k.id, ": ", why.substr(0, 300)));
    }
  }
  return right;
}

void ExpectAllRight(absl::string_view device, bool optimize) {
  std::vector<std::string> wrong;
  const int right = CountRight(device, optimize, wrong);
  for (const std::string& w : wrong) ADD_FAILURE() << device << (optimize ? " opt " : " noopt ") << w;
  EXPECT_EQ(right, static_cast<int>(KernelCorpus().size()));
}

TEST(CorpusRunTest, CpuWithOpts) { ExpectAllRight("CPU", true); }
TEST(CorpusRunTest, CpuWithoutOpts) { ExpectAllRight("CPU", false); }
TEST(CorpusRunTest, InterpWithOpts) { ExpectAllRight("INTERP", true); }
TEST(CorpusRunTest, InterpWithoutOpts) { ExpectAllRight("INTERP", false); }

}  // namespace
}  // namespace uopc
