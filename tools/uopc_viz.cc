// uopc viz: compile a kernel AST or a tensor graph with every graph rewrite recorded, and write the VIZ page.
#include <iostream>
#include <ostream>
#include <string>
#include <vector>

#include "absl/flags/declare.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "nlohmann/json.hpp"
#include "rewrite/rewrite_recorder.h"
#include "rewrite/viz.h"
#include "schedule/schedule.h"
#include "tools/uopc_subcommand.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

ABSL_DECLARE_FLAG(std::string, target);
ABSL_DECLARE_FLAG(bool, noopt);
ABSL_DECLARE_FLAG(bool, jsonl);
ABSL_FLAG(std::string, out, "", "viz: the page to write (default: the input's name with .html, or viz.html)");
ABSL_FLAG(int64_t, max_nodes, 600, "viz: graphs with more nodes are listed, not drawn");

namespace uopc {
namespace {

bool IsTensorGraph(const UOpPtr& root) {
  for (const UOp* u : root->Toposort()) {
    if (u->op() == Ops::BUFFER) return true;
  }
  return false;
}

// Compiles `root` (a kernel AST, or a tensor graph: scheduled first) with the recorder on.
absl::Status CompileRecorded(const UOpPtr& root, const Renderer& renderer, const CompileOptions& options,
                             KernelNameCounter* names) {
  if (root->op() != Ops::SINK) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a kernel AST or a tensor graph whose root is a SINK, got ", OpName(root->op())));
  }
  if (!IsTensorGraph(root)) return CompileKernel(root, renderer, options, names).status();
  UOPC_ASSIGN_OR_RETURN(Schedule schedule, CreateSchedule(root));
  for (const ScheduleItem& item : schedule.items) {
    if (item.ast->op() != Ops::SINK) continue;  // COPY and BUFFER_VIEW have no codegen
    UOPC_RETURN_IF_ERROR(CompileKernel(item.ast, renderer, options, names).status());
  }
  return absl::OkStatus();
}

std::string DefaultPagePath(const std::string& input) {
  if (input == "-") return "viz.html";
  std::string path = input;
  for (absl::string_view ext : {".uop", ".jsonl"}) {
    if (absl::EndsWith(path, ext)) path.resize(path.size() - ext.size());
  }
  return path + ".html";
}

}  // namespace

absl::Status RunViz(absl::Span<const std::string> args, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Renderer> renderer, RendererForTarget(absl::GetFlag(FLAGS_target)));
  if (absl::GetFlag(FLAGS_max_nodes) <= 0) return UsageError("--max_nodes must be positive");
  CompileOptions options;
  options.optimize = !absl::GetFlag(FLAGS_noopt);
  const std::string& input = args[0];

  std::vector<UOpPtr> roots;
  std::string name = input == "-" ? "<stdin>" : input;
  if (absl::GetFlag(FLAGS_jsonl)) {
    UOPC_ASSIGN_OR_RETURN(std::string text, ReadInputText(input));
    int line_number = 0;
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      ++line_number;
      if (absl::StripAsciiWhitespace(line).empty()) continue;
      nlohmann::json record = nlohmann::json::parse(line.begin(), line.end(), nullptr, false);
      if (record.is_discarded() || !record.is_object() || !record.contains("ast") ||
          !record["ast"].is_string()) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ":", line_number, ": expected a JSON object with an \"ast\" string"));
      }
      absl::StatusOr<UOpPtr> ast = ParseIrSingle(record["ast"].get<std::string>());
      if (!ast.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(name, ":", line_number, ": ast:", ast.status().message()));
      }
      roots.push_back(*std::move(ast));
    }
  } else {
    UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(input));
    roots = std::move(file.roots);
  }
  if (roots.empty()) return absl::InvalidArgumentError(absl::StrCat(name, ": no graph to compile"));

  RewriteRecorder::Take();
  RewriteRecorder::SetEnabled(true);
  KernelNameCounter names;
  absl::Status compiled = absl::OkStatus();
  for (const UOpPtr& root : roots) {
    compiled = CompileRecorded(root, *renderer, options, &names);
    if (!compiled.ok()) break;
  }
  RewriteRecorder::SetEnabled(false);
  std::vector<RewriteGroup> groups = RewriteRecorder::Take();
  if (!compiled.ok()) return absl::Status(compiled.code(), absl::StrCat(name, ": ", compiled.message()));

  std::string path = absl::GetFlag(FLAGS_out).empty() ? DefaultPagePath(input) : absl::GetFlag(FLAGS_out);
  VizOptions viz;
  viz.title = absl::StrCat("uopc VIZ: ", name);
  viz.max_graph_nodes = absl::GetFlag(FLAGS_max_nodes);
  absl::StatusOr<VizSummary> s = WriteVizPage(groups, path, viz);
  if (!s.ok()) return absl::Status(s.status().code(), absl::StrCat(name, ": ", s.status().message()));
  out << "wrote " << path << ": " << s->groups << " groups, " << s->steps << " rewrites, " << s->events
      << " rule applications, " << s->graphs_drawn << " graphs drawn";
  if (s->graphs_capped > 0) {
    out << ", " << s->graphs_capped << " over " << viz.max_graph_nodes << " nodes not drawn";
  }
  out << ", " << s->bytes << " bytes\n";
  if (s->dot_missing) {
    std::cerr << "uopc viz: Graphviz's dot was not found; install graphviz to draw the graphs\n";
  }
  return absl::OkStatus();
}

}  // namespace uopc
