#include "rewrite/rewrite_graph_corpus.h"

#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "rewrite/infix.h"

namespace uopc {

absl::StatusOr<RewriteGraphCorpus> ParseRewriteGraphCorpus(absl::string_view text) {
  RewriteGraphCorpus corpus;
  absl::flat_hash_map<std::string, UOpPtr> vars;
  int line_number = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++line_number;
    nlohmann::json record = nlohmann::json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    auto error = [&](absl::string_view what) {
      return absl::InvalidArgumentError(absl::StrCat("line ", line_number, ": ", what));
    };
    if (record.is_discarded() || !record.is_object()) return error("not a JSON object");
    if (line_number == 1) {
      if (!record.contains("vars") || !record["vars"].is_array()) return error("the header needs \"vars\"");
      for (const auto& v : record["vars"]) {
        if (!v.is_array() || v.size() != 3 || !v[0].is_string() || !v[1].is_number_integer() ||
            !v[2].is_number_integer()) {
          return error("each var is [name, min, max]");
        }
        std::string name = v[0].get<std::string>();
        vars[name] = UOp::Variable(name, v[1].get<int64_t>(), v[2].get<int64_t>());
      }
      corpus.in_nodes = record.value("in_nodes", int64_t{0});
      corpus.out_nodes = record.value("out_nodes", int64_t{0});
      continue;
    }
    if (!record.contains("expr") || !record["expr"].is_string()) return error("missing \"expr\"");
    absl::StatusOr<UOpPtr> expr = ParseInfix(record["expr"].get<std::string>(), vars);
    if (!expr.ok()) return error(expr.status().message());
    corpus.exprs.push_back(*std::move(expr));
    corpus.tinygrad_renders.push_back(record.contains("sym") && record["sym"].is_string()
                                          ? record["sym"].get<std::string>()
                                          : std::string());
  }
  if (line_number == 0) return absl::InvalidArgumentError("empty corpus");
  corpus.sink = UOp::Sink(corpus.exprs);
  return corpus;
}

absl::StatusOr<RewriteGraphCorpus> LoadRewriteGraphCorpus(const std::string& path) {
  std::ifstream in(path);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return ParseRewriteGraphCorpus(buffer.str());
}

size_t CountNodes(const UOp* root) { return root->Toposort().size(); }

}  // namespace uopc
