// uopc simplify: the symbolic simplifier on infix expressions.
//
//   uopc simplify [--rules=symbolic|sym] --jsonl FILE|-      one JSON line out per JSON line in
//   uopc simplify [--rules=...] --vars 'a:0:8 b:0:3' EXPR   the render of one expression
//   --stats                                                  per-rule statistics on stderr at the end
//
// JSON input is either records {"id", "vars": [[name, min, max], ...], "expr", "dtype"}
// (symbolic_tests.jsonl), each simplified on its own, or a rewrite_graph corpus (a header line with "vars",
// then {"expr"} lines), whose expressions are simplified together as one SINK, as tinygrad did; --time then
// reports the rewrite time alone.
#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include "absl/flags/flag.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "nlohmann/json.hpp"
#include "rewrite/graph_rewrite.h"
#include "rewrite/infix.h"
#include "rewrite/rewrite_graph_corpus.h"
#include "rewrite/symbolic.h"
#include "tools/uopc_subcommand.h"
#include "uop/status_macros.h"
#include "uop/util.h"

ABSL_FLAG(std::string, rules, "sym", "simplify: the rule set, symbolic or sym");
ABSL_FLAG(bool, jsonl, false, "simplify: the input is JSON lines");
ABSL_FLAG(std::string, vars, "", "simplify: variables of a single expression, 'name:min:max ...'");
ABSL_FLAG(bool, time, false,
          "simplify: print `rewrite_seconds: <float>` on stderr (the graph_rewrite time alone)");
ABSL_FLAG(
    bool, stats, false,
    "simplify: print per-rule statistics on stderr at the end (matches / attempts, time; like tinygrad's "
    "PRINT_MATCH_STATS)");

namespace uopc {
namespace {

using nlohmann::json;
using nlohmann::ordered_json;

// Statistics of every rewrite in this run, printed at the end with --stats.
RewriteStats& RunStats() {
  static RewriteStats* stats = new RewriteStats;
  return *stats;
}

RewriteOptions StatsOptions() {
  RewriteOptions options;
  options.name = "simplify";
  if (absl::GetFlag(FLAGS_stats)) options.stats = &RunStats();
  return options;
}

json BoundJson(const ConstValue& v) {
  if (v.is_bool()) return v.b();
  if (v.is_float()) return v.f();
  return v.AsInt64();
}

// Output objects keep their fields in the documented order, not sorted.
ordered_json Result(const json& id, const UOpPtr& simplified) {
  ordered_json out;
  out["id"] = id;
  out["render"] = RenderTinygrad(simplified.get());
  out["infix"] = RenderInfix(simplified.get());
  out["vmin"] = BoundJson(simplified->vmin());
  out["vmax"] = BoundJson(simplified->vmax());
  return out;
}

ordered_json ErrorRecord(const json& id, absl::string_view message) {
  ordered_json out;
  out["id"] = id;
  out["error"] = std::string(message);
  return out;
}

// One independent record: {"id", "vars", "expr", "dtype"}.
ordered_json SimplifyRecord(const json& record, const PatternMatcher& rules) {
  json id = record.contains("id") ? record["id"] : json(nullptr);
  auto error = [&](absl::string_view message) { return ErrorRecord(id, message); };
  if (!record.contains("expr") || !record["expr"].is_string()) return error("missing \"expr\" string");
  std::vector<InfixVar> vars;
  if (record.contains("vars")) {
    if (!record["vars"].is_array()) return error("\"vars\" must be a list of [name, min, max]");
    for (const json& v : record["vars"]) {
      if (!v.is_array() || v.size() != 3 || !v[0].is_string() || !v[1].is_number_integer() ||
          !v[2].is_number_integer()) {
        return error("each var must be [name, min, max]");
      }
      vars.push_back({v[0].get<std::string>(), v[1].get<int64_t>(), v[2].get<int64_t>()});
    }
  }
  absl::StatusOr<UOpPtr> expr = ParseInfix(record["expr"].get<std::string>(), vars);
  if (!expr.ok()) return error(expr.status().message());
  if (record.contains("dtype") && record["dtype"].is_string()) {
    std::string want = record["dtype"].get<std::string>();
    bool is_bool = (*expr)->dtype() == dtypes::kBool;
    if ((want == "bool") != is_bool) return error(absl::StrCat("expression is not of dtype ", want));
  }
  absl::StatusOr<UOpPtr> out = TryGraphRewrite(*expr, rules, StatsOptions());
  if (!out.ok()) return error(out.status().message());
  return Result(id, *out);
}

absl::Status SimplifyJsonl(const std::string& path, const PatternMatcher& rules, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(std::string text, ReadInputText(path));
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n', absl::SkipWhitespace());
  if (lines.empty()) return absl::OkStatus();
  json first = json::parse(lines[0].begin(), lines[0].end(), nullptr, false);
  bool graph_corpus = first.is_object() && first.contains("vars") && !first.contains("expr");
  if (graph_corpus) {
    absl::StatusOr<RewriteGraphCorpus> corpus = ParseRewriteGraphCorpus(text);
    if (!corpus.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", corpus.status().message()));
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<UOpPtr> result = TryGraphRewrite(corpus->sink, rules, StatsOptions());
    double seconds = SecondsSince(start);
    if (!result.ok()) return absl::InvalidArgumentError(absl::StrCat(path, ": ", result.status().message()));
    for (size_t i = 0; i < (*result)->num_src(); ++i) {
      out << Result(static_cast<int64_t>(i + 1), (*result)->src()[i]).dump() << "\n";
    }
    if (absl::GetFlag(FLAGS_time)) std::cerr << "rewrite_seconds: " << seconds << "\n";
    return absl::OkStatus();
  }
  int failed = 0;
  for (absl::string_view line : lines) {
    json record = json::parse(line.begin(), line.end(), nullptr, false);
    if (record.is_discarded() || !record.is_object()) {
      ++failed;
      out << ErrorRecord(nullptr, "not a JSON object").dump() << "\n";
      continue;
    }
    ordered_json result = SimplifyRecord(record, rules);
    failed += result.contains("error") ? 1 : 0;
    out << result.dump() << "\n";
  }
  return JsonlStatus(path, failed, static_cast<int>(lines.size()));
}

// One expression (--vars) or a JSON-lines file (--jsonl).
absl::Status RunSimplifyWith(const PatternMatcher& rules, const std::string& input, std::ostream& out) {
  if (absl::GetFlag(FLAGS_jsonl)) return SimplifyJsonl(input, rules, out);
  std::vector<InfixVar> vars;
  for (absl::string_view spec : absl::StrSplit(absl::GetFlag(FLAGS_vars), ' ', absl::SkipWhitespace())) {
    std::vector<absl::string_view> parts = absl::StrSplit(spec, ':');
    InfixVar v;
    if (parts.size() != 3 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &v.min) ||
        !absl::SimpleAtoi(parts[2], &v.max)) {
      return UsageError(absl::StrCat("--vars: expected name:min:max, got '", spec, "'"));
    }
    v.name = std::string(parts[0]);
    vars.push_back(std::move(v));
  }
  absl::StatusOr<UOpPtr> expr = ParseInfix(input, vars);
  if (!expr.ok()) return absl::InvalidArgumentError(absl::StrCat("<expr>: ", expr.status().message()));
  UOPC_ASSIGN_OR_RETURN(UOpPtr simplified, TryGraphRewrite(*expr, rules, StatsOptions()));
  out << RenderTinygrad(simplified.get()) << "\n";
  return absl::OkStatus();
}

}  // namespace

absl::Status RunSimplify(absl::Span<const std::string> args, std::ostream& out) {
  std::string rules_name = absl::GetFlag(FLAGS_rules);
  const PatternMatcher* rules = rules_name == "sym"        ? &Sym()
                                : rules_name == "symbolic" ? &Symbolic()
                                                           : nullptr;
  if (rules == nullptr)
    return UsageError(absl::StrCat("--rules must be symbolic or sym, not '", rules_name, "'"));
  absl::Status status = RunSimplifyWith(*rules, args[0], out);
  if (absl::GetFlag(FLAGS_stats)) std::cerr << RunStats().Report();
  return status;
}

}  // namespace uopc
