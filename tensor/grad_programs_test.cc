// The 34 gradient programs of tinygrad's corpus (grad_programs.jsonl) and ours, written with the C++ Tensor
// API (tensor/testing/grad_programs.h): the graph of the loss and its gradients must be the graph tinygrad
// v0.10.3 built (testdata/grad_graphs.jsonl, from testdata/harvest_grad_graphs.py, which holds the exact
// Python of each line), the schedule of loss and gradients together must have tinygrad's kernel count, and
// realized on CPU and INTERP, the loss and every gradient must be tinygrad's values (the corpus's
// tolerances).
#include "tensor/testing/grad_programs.h"

#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <tuple>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "schedule/schedule.h"
#include "tensor/tensor.h"
#include "tensor/testing/graph_compare.h"
#include "uop/status_macros.h"
#include "uop/testing/sample.h"

namespace uopc {
namespace {

std::map<std::string, nlohmann::json> Load(const std::string& path, const std::string& key) {
  std::map<std::string, nlohmann::json> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    if (j.contains(key)) out[j[key].get<std::string>()] = j;
  }
  return out;
}

// tinygrad's corpus: the programs' values.
std::map<std::string, nlohmann::json> Corpus() {
  return Load("tensor/testdata/grad_programs.jsonl", "program");
}

// What the harvest recorded for every program: graph, kernel count, loss (and gradients for ours).
std::map<std::string, nlohmann::json> Harvested() {
  return Load("tensor/testdata/grad_graphs.jsonl", "program");
}

TEST(GradProgramsTest, EveryCorpusProgramIsWritten) {
  std::map<std::string, nlohmann::json> corpus = Corpus();
  std::map<std::string, nlohmann::json> harvested = Harvested();
  ASSERT_EQ(corpus.size(), static_cast<size_t>(kCorpusGradPrograms));
  ASSERT_EQ(harvested.size(), GradPrograms().size());
  for (int i = 0; i < static_cast<int>(GradPrograms().size()); ++i) {
    const std::string& name = GradPrograms()[i].name;
    EXPECT_EQ(corpus.count(name), i < kCorpusGradPrograms ? 1u : 0u) << name;
    ASSERT_TRUE(harvested.count(name)) << name;
    // The harvest ran each corpus program as the corpus did.
    if (corpus.count(name)) EXPECT_EQ(harvested[name]["n_kernels"], corpus[name]["n_kernels"]) << name;
    if (!corpus.count(name)) EXPECT_TRUE(harvested[name].contains("grads")) << name;
  }
}

TEST(GradProgramsTest, GraphsAreTinygrads) {
  std::map<std::string, nlohmann::json> expected = Harvested();
  const size_t total = GradPrograms().size();
  size_t equal = 0;
  std::vector<std::string> failing;
  for (const GradProgram& program : GradPrograms()) {
    const std::string& name = program.name;
    absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
    std::string diff = outs.ok()
                           ? GraphDifference(CanonicalSink(*outs), expected[name]["graph"].get<std::string>())
                           : outs.status().ToString();
    if (diff.empty()) {
      ++equal;
    } else {
      failing.push_back(name);
      if (failing.size() <= 3) ADD_FAILURE() << name << ": " << diff;
    }
  }
  std::cout << equal << "/" << total << " gradient graphs equal; failing: " << absl::StrJoin(failing, ", ")
            << "\n";
  EXPECT_EQ(equal, total);
}

TEST(GradProgramsTest, KernelCountsAreTinygrads) {
  std::map<std::string, nlohmann::json> harvested = Harvested();
  const size_t total = GradPrograms().size();
  std::vector<std::string> failing;
  for (const GradProgram& program : GradPrograms()) {
    const std::string& name = program.name;
    absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
    ASSERT_TRUE(outs.ok()) << name << ": " << outs.status();
    std::vector<UOpPtr> roots;
    for (const Tensor& t : *outs) roots.push_back(t.uop());
    absl::StatusOr<Schedule> schedule = CreateSchedule(UOp::Sink(roots));
    ASSERT_TRUE(schedule.ok()) << name << ": " << schedule.status();
    int64_t want = harvested[name]["n_kernels"].get<int64_t>();
    if (static_cast<int64_t>(schedule->items.size()) != want) {
      failing.push_back(absl::StrCat(name, " (", schedule->items.size(), " kernels, tinygrad ", want, ")"));
    }
  }
  std::cout << total - failing.size() << "/" << total
            << " kernel counts equal; failing: " << absl::StrJoin(failing, ", ") << "\n";
  EXPECT_TRUE(failing.empty());
}

// |got - want| <= 1e-3 + 1e-3 |want| for each value; the first that is not, or "".
std::string Mismatch(const std::vector<float>& got, const nlohmann::json& want) {
  if (got.size() != want.size()) return absl::StrCat(got.size(), " values, tinygrad has ", want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    double w = want[i].get<double>();
    if (!(std::abs(got[i] - w) <= 1e-3 + 1e-3 * std::abs(w)))
      return absl::StrCat("[", i, "] ", got[i], " vs ", w);
  }
  return "";
}

// The realized loss and gradients `outs` against tinygrad's `want`: "" or what differs.
absl::StatusOr<std::string> OutputDifference(absl::Span<const Tensor> outs, const nlohmann::json& want) {
  UOPC_RETURN_IF_ERROR(Tensor::RealizeAll(outs));
  for (size_t k = 0; k < outs.size(); ++k) {
    UOPC_ASSIGN_OR_RETURN(std::vector<float> got, outs[k].ToVector<float>());
    if (k == 0) {
      std::string problem = Mismatch(got, nlohmann::json::array({want["loss"]}));
      if (!problem.empty()) return "loss " + problem;
      continue;
    }
    const nlohmann::json& g = want["grads"][k - 1];
    if (nlohmann::json(outs[k].Shape()) != g["shape"]) {
      return absl::StrCat("gradient ", k - 1, " has shape ", nlohmann::json(outs[k].Shape()).dump());
    }
    std::string problem = Mismatch(got, g["values"]);
    if (!problem.empty()) return absl::StrCat("gradient ", k - 1, " ", problem);
  }
  return "";
}

// On `device`, the program's loss and every gradient are tinygrad's values (the corpus's, or for a program of
// ours the harvest's): "" or what differs.
std::string ValueDifference(const std::string& device, const GradProgram& program) {
  static const auto* corpus = new std::map<std::string, nlohmann::json>(Corpus());
  static const auto* harvested = new std::map<std::string, nlohmann::json>(Harvested());
  const nlohmann::json& want =
      corpus->count(program.name) ? corpus->at(program.name) : harvested->at(program.name);
  Tensor::SetDefaultDevice(device);
  absl::StatusOr<std::vector<Tensor>> outs = LossAndGradients(program);
  Tensor::SetDefaultDevice("CPU");
  if (!outs.ok()) return outs.status().ToString();
  absl::StatusOr<std::string> difference = OutputDifference(*outs, want);
  return difference.ok() ? *std::move(difference) : difference.status().ToString();
}

// One case per device and program, so the test shards (CPU compiles every kernel).
class GradValuesTest : public ::testing::TestWithParam<std::tuple<std::string, int>> {};

TEST_P(GradValuesTest, LossAndGradientsAreTinygrads) {
  const auto& [device, index] = GetParam();
  const GradProgram& program = GradPrograms()[index];
  EXPECT_EQ(ValueDifference(device, program), "") << device << " " << program.name;
}

INSTANTIATE_TEST_SUITE_P(
    EveryProgram, GradValuesTest,
    ::testing::Combine(::testing::Values("CPU", "INTERP"),
                       ::testing::ValuesIn(TestSampleOf(static_cast<int>(GradPrograms().size())))),
    [](const ::testing::TestParamInfo<GradValuesTest::ParamType>& info) {
      return std::get<0>(info.param) + "_" + GradPrograms()[std::get<1>(info.param)].name;
    });

}  // namespace
}  // namespace uopc
