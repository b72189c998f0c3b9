#include "tensor/testing/graph_compare.h"

#include <fstream>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "runtime/corpus_values.h"
#include "uop/text_ir.h"

namespace uopc {

Tensor R(const Dims& shape, DType dtype, int seed, const std::string& device) {
  int64_t n = 1;
  for (int64_t s : shape) n *= s;
  return Tensor::FromBytes(CorpusInputBytes(dtype, seed + 1, n), shape, dtype, device);
}

UOpPtr CanonicalSink(const std::vector<Tensor>& outputs) {
  std::vector<UOpPtr> roots;
  for (const Tensor& t : outputs) roots.push_back(t.uop());
  UOpPtr sink = UOp::Sink(roots);
  absl::flat_hash_map<const UOp*, UOpPtr> renumber;
  int64_t next = 0;
  for (const UOp* u : sink->Toposort()) {
    if (u->op() == Ops::UNIQUE) renumber[u] = UOp::New(Ops::UNIQUE, dtypes::kVoid, {}, Arg(next++));
  }
  return sink->Substitute(renumber);
}

std::string FirstDifferentLine(absl::string_view got, absl::string_view expected) {
  if (got == expected) return "";
  std::vector<absl::string_view> a = absl::StrSplit(got, '\n'), b = absl::StrSplit(expected, '\n');
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  return absl::StrCat("line ", i + 1, "\n  got:      ", i < a.size() ? a[i] : "<end>",
                      "\n  expected: ", i < b.size() ? b[i] : "<end>");
}

std::string GraphFirstDifference(const UOpPtr& got, absl::string_view expected_text) {
  absl::StatusOr<UOpPtr> expected = ParseIrSingle(expected_text);
  if (!expected.ok()) return "cannot parse the expected graph: " + std::string(expected.status().message());
  if (*expected == got) return "";
  std::string line = FirstDifferentLine(PrintIr(got.get()), expected_text);
  return line.empty() ? "graphs differ with the same text" : "graphs differ at " + line;
}

std::string GraphDifference(const UOpPtr& got, absl::string_view expected_text) {
  std::string difference = GraphFirstDifference(got, expected_text);
  if (difference.empty()) return "";
  return absl::StrCat(difference, "\n--- got ---\n", PrintIr(got.get()), "--- expected ---\n", expected_text);
}

std::vector<std::pair<std::string, std::string>> ReadJsonl(const std::string& path) {
  std::vector<std::pair<std::string, std::string>> out;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    nlohmann::json j = nlohmann::json::parse(line);
    out.emplace_back(j["program"].get<std::string>(), line);
  }
  return out;
}

std::map<std::string, nlohmann::json> ReadJsonlByProgram(const std::string& path) {
  std::map<std::string, nlohmann::json> out;
  for (const auto& [name, line] : ReadJsonl(path)) out[name] = nlohmann::json::parse(line);
  return out;
}

}  // namespace uopc
