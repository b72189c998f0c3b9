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

std::string GraphDifference(const UOpPtr& got, absl::string_view expected_text) {
  absl::StatusOr<UOpPtr> expected = ParseIrSingle(expected_text);
  if (!expected.ok()) return "cannot parse the expected graph: " + std::string(expected.status().message());
  if (*expected == got) return "";
  std::string got_text = PrintIr(got.get());
  std::vector<std::string> a = absl::StrSplit(got_text, '\n'), b = absl::StrSplit(expected_text, '\n');
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::string out =
      absl::StrCat("graphs differ at line ", i + 1, "\n  got:      ", i < a.size() ? a[i] : "<end>",
                   "\n  expected: ", i < b.size() ? b[i] : "<end>", "\n--- got ---\n", got_text,
                   "--- expected ---\n", expected_text);
  return out;
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

}  // namespace uopc
