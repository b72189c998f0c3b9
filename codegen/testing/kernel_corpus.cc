#include "codegen/testing/kernel_corpus.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "uop/kernel_info.h"
#include "uop/text_ir.h"

namespace uopc {
namespace {

// The corpus is our own data: a problem with it is a broken checkout, not an input error.
[[noreturn]] void Die(const std::string& message) {
  std::fprintf(stderr, "kernel corpus: %s\n", message.c_str());
  std::abort();
}

std::optional<std::vector<int64_t>> Dims(const nlohmann::json& j) {
  if (!j.is_array()) return std::nullopt;
  return j.get<std::vector<int64_t>>();
}

absl::StatusOr<CorpusKernel> ParseKernel(const nlohmann::json& j) {
  CorpusKernel k;
  if (!j.is_object() || !j.contains("id") || !j.contains("ast")) {
    return absl::InvalidArgumentError("a kernel needs \"id\" and \"ast\"");
  }
  k.id = j["id"].get<std::string>();
  k.program = j.value("program", "");
  k.ast = j["ast"].get<std::string>();
  if (j.contains("targets")) {
    for (const auto& [name, t] : j["targets"].items()) {
      CorpusTarget target;
      for (const auto& o : t.value("opts", nlohmann::json::array()))
        target.opts.push_back(o.get<std::string>());
      target.name = t.value("name", "");
      target.global_size = Dims(t.value("global_size", nlohmann::json()));
      target.local_size = Dims(t.value("local_size", nlohmann::json()));
      target.uops = t.value("uops", "");
      target.src = t.value("src", "");
      for (const auto& s : t.value("stages", nlohmann::json::array())) {
        target.stages.emplace_back(s[0].get<std::string>(), s[1].get<std::string>());
      }
      k.targets.emplace(name, std::move(target));
    }
  }
  for (const auto& b : j.value("buffers", nlohmann::json::array())) {
    k.buffers.push_back({b["arg"].get<int64_t>(), b["dtype"].get<std::string>(), b["size"].get<int64_t>()});
  }
  k.outputs = j.value("outputs", nlohmann::json::object());
  return k;
}

}  // namespace

const std::string* CorpusTarget::Stage(absl::string_view name) const {
  for (const auto& [n, text] : stages) {
    if (n == name) return &text;
  }
  return nullptr;
}

const CorpusTarget& CorpusKernel::target(absl::string_view name) const {
  auto it = targets.find(name);
  if (it == targets.end()) Die(absl::StrCat("kernel ", id, " has no target ", name));
  return it->second;
}

absl::StatusOr<std::vector<CorpusKernel>> ParseKernelCorpus(absl::string_view jsonl) {
  std::vector<CorpusKernel> kernels;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(jsonl, '\n', absl::SkipWhitespace())) {
    ++line_number;
    nlohmann::json j = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": not JSON"));
    absl::StatusOr<CorpusKernel> k = ParseKernel(j);
    if (!k.ok())
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", k.status().message()));
    kernels.push_back(*std::move(k));
  }
  return kernels;
}

absl::StatusOr<std::vector<CorpusKernel>> LoadKernelCorpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseKernelCorpus(buffer.str());
}

const std::vector<CorpusKernel>& KernelCorpus() {
  static const std::vector<CorpusKernel>* const corpus = [] {
    absl::StatusOr<std::vector<CorpusKernel>> c = LoadKernelCorpus("testdata/corpus/codegen_kernels.jsonl");
    if (!c.ok()) Die(c.status().ToString());
    return new std::vector<CorpusKernel>(*std::move(c));
  }();
  return *corpus;
}

UOpPtr CorpusKernelAst(absl::string_view id) {
  for (const CorpusKernel& k : KernelCorpus()) {
    if (k.id == id) return ParseCorpusGraph(k.ast);
  }
  Die(absl::StrCat("no corpus kernel ", id));
}

UOpPtr ParseCorpusGraph(absl::string_view text) {
  // The KernelInfo parser registers itself when kernel_info.cc is linked; make sure it is.
  (void)KernelInfoAsArg(KernelInfo{});
  absl::StatusOr<UOpPtr> g = ParseIrSingle(text);
  if (!g.ok()) Die(absl::StrCat(g.status().message(), "\n", text));
  return *std::move(g);
}

std::vector<std::string> CorpusStepDifferences(absl::string_view before, absl::string_view after,
                                               const CorpusStep& step) {
  std::vector<std::string> differ;
  std::string first;
  for (const CorpusKernel& k : KernelCorpus()) {
    for (const char* target : {"clang", "clang_noopt"}) {
      const std::string id = absl::StrCat(k.id, "@", target);
      const CorpusTarget& t = k.target(target);
      const std::string* in = t.Stage(before);
      const std::string* want = t.Stage(after);
      if (in == nullptr || want == nullptr) {
        differ.push_back(absl::StrCat(id, " (a stage is missing)"));
        continue;
      }
      absl::StatusOr<UOpPtr> got = step(ParseCorpusGraph(*in));
      std::string diff = got.ok() ? GraphDifference(*got, *want) : std::string(got.status().message());
      if (diff.empty()) continue;
      if (first.empty()) first = absl::StrCat(id, ":\n", diff);
      differ.push_back(id);
    }
  }
  if (!first.empty()) {
    std::fprintf(stderr, "%.*s -> %.*s: %zu graphs differ; the first:\n%s\n", static_cast<int>(before.size()),
                 before.data(), static_cast<int>(after.size()), after.data(), differ.size(), first.c_str());
  }
  return differ;
}

std::string GraphDifference(const UOpPtr& got, absl::string_view expected_text) {
  UOpPtr expected = ParseCorpusGraph(expected_text);
  if (got == expected) return "";
  std::string got_text = PrintIr(got.get()), want_text = PrintIr(expected.get());
  std::vector<absl::string_view> a = absl::StrSplit(got_text, '\n'), b = absl::StrSplit(want_text, '\n');
  size_t line = 0;
  while (line < a.size() && line < b.size() && a[line] == b[line]) ++line;
  return absl::StrCat(
      "graphs differ from line ", line + 1, ":\n  got:  ", line < a.size() ? a[line] : "<end>",
      "\n  want: ", line < b.size() ? b[line] : "<end>", "\n--- got\n", got_text, "--- want\n", want_text);
}

}  // namespace uopc
