// uopc compile: a kernel AST in, its program out (codegen + a renderer).
//
//   uopc compile [--target=clang] [--noopt] [--opts='OPT;OPT'] [--emit=src|uops|stages|ast] FILE.uop|-
//   uopc compile --jsonl [--target=clang] [--noopt] [--time] FILE|-
//   uopc compile --step=STEP [--target=clang] FILE|-     one codegen step on its own (graph in, graph out)
//
// With --jsonl, every input line {"id", "ast", ...} (the codegen corpus's lines work as they are) gives one
// output line {"id", "name", "opts", "global_size", "local_size", "uops", "src"} in the corpus's formats, or
// {"id", "error"}. Each line is compiled as if alone: kernel names are numbered afresh per line.
#include <chrono>
#include <iostream>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "codegen/codegen.h"
#include "codegen/linearize.h"
#include "nlohmann/json.hpp"
#include "renderer/cstyle.h"
#include "renderer/targets.h"
#include "tools/uopc_subcommand.h"
#include "uop/print.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"
#include "uop/util.h"

ABSL_DECLARE_FLAG(bool, jsonl);
ABSL_DECLARE_FLAG(bool, time);
ABSL_FLAG(std::string, target, "clang",
          "compile, run: the codegen target: clang, opencl, metal, cuda, ptx, llvm (cuda:sm_XY for an arch)");
ABSL_FLAG(bool, noopt, false, "compile, run: no optimizations (tinygrad's NOOPT=1)");
ABSL_FLAG(std::string, opts, "",
          "compile: apply these opts instead of the hand-coded ones: short forms separated by ';' or spaces "
          "(UPCAST:0:4;UNROLL:0:4) or tinygrad's list ([Opt(op=OptOps.UPCAST, axis=0, arg=4)])");
ABSL_FLAG(std::string, emit, "src", "compile: what to print: src, uops (tinygrad's listing), stages or ast");
ABSL_FLAG(std::string, step, "",
          "compile: run only this codegen step (lowerer, initial symbolic, ..., final rewrite, or linearize) "
          "on the "
          "input graph, the graph after the step before it, and print the result");

namespace uopc {

absl::StatusOr<std::unique_ptr<Renderer>> RendererForTarget(absl::string_view target) {
  absl::StatusOr<std::unique_ptr<Renderer>> r = MakeRendererForTarget(target);
  if (!r.ok()) return UsageError(r.status().message());
  return r;
}

absl::StatusOr<CompileOptions> CompileOptionsFromFlags() {
  CompileOptions options;
  options.optimize = !absl::GetFlag(FLAGS_noopt);
  const std::string text = absl::GetFlag(FLAGS_opts);
  if (!text.empty()) {
    if (absl::GetFlag(FLAGS_noopt)) return UsageError("--opts and --noopt exclude each other");
    absl::StatusOr<std::vector<Opt>> opts = ParseOptList(text);
    if (!opts.ok()) return UsageError(absl::StrCat("--opts: ", opts.status().message()));
    options.opts = *std::move(opts);
  }
  return options;
}

namespace {

using nlohmann::json;
using nlohmann::ordered_json;

std::vector<const UOp*> Raw(const std::vector<UOpPtr>& uops) {
  std::vector<const UOp*> raw;
  raw.reserve(uops.size());
  for (const UOpPtr& u : uops) raw.push_back(u.get());
  return raw;
}

json DimsJson(const std::optional<std::vector<int64_t>>& dims) {
  return dims.has_value() ? json(*dims) : json(nullptr);
}

ordered_json ProgramJson(const json& id, const ProgramSpec& p) {
  ordered_json out;
  out["id"] = id;
  out["name"] = p.name;
  json opts = json::array();
  for (const Opt& o : p.applied_opts) opts.push_back(o.ToString());
  out["opts"] = opts;
  out["global_size"] = DimsJson(p.global_size);
  out["local_size"] = DimsJson(p.local_size);
  out["uops"] = PrintUOpsListing(Raw(p.uops));
  out["src"] = p.src;
  return out;
}

absl::Status CompileJsonLines(const std::string& path, const Renderer& renderer,
                              const CompileOptions& options, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(std::string text, ReadInputText(path));
  double seconds = 0;
  int line_number = 0, failed = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipWhitespace())) {
    ++line_number;
    json record = json::parse(line.begin(), line.end(), nullptr, /*allow_exceptions=*/false);
    ordered_json result;
    if (record.is_discarded() || !record.is_object()) {
      result["id"] = nullptr;
      result["error"] = absl::StrCat("line ", line_number, ": not a JSON object");
    } else if (!record.contains("ast") || !record["ast"].is_string()) {
      result["id"] = record.value("id", json());
      result["error"] = absl::StrCat("line ", line_number, ": missing \"ast\"");
    } else {
      const json id = record.value("id", json());
      absl::StatusOr<UOpPtr> ast = ParseIrSingle(record["ast"].get<std::string>());
      if (!ast.ok()) {
        result["id"] = id;
        result["error"] = absl::StrCat("ast:", ast.status().message());
      } else {
        KernelNameCounter names;  // each line compiles as if alone
        const auto start = std::chrono::steady_clock::now();
        absl::StatusOr<ProgramSpec> p = CompileKernel(*ast, renderer, options, &names);
        seconds += SecondsSince(start);
        if (p.ok()) {
          result = ProgramJson(id, *p);
        } else {
          result["id"] = id;
          result["error"] = std::string(p.status().message());
        }
      }
    }
    failed += result.contains("error") ? 1 : 0;
    out << result.dump() << "\n";
  }
  if (absl::GetFlag(FLAGS_time)) std::cerr << "compile_seconds: " << seconds << "\n";
  return JsonlStatus(path, failed, line_number);
}

// `uopc compile --step=NAME`: one step of CodegenSteps (or the linearizer) on a graph file, like `opt -pass`.
absl::Status RunOneStep(const std::string& path, const std::string& step, const Renderer& renderer,
                        std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(path));
  if (file.roots.size() != 1)
    return absl::InvalidArgumentError(absl::StrCat(file.name, ": expected one graph"));
  auto located = [&](const absl::Status& s) {
    return absl::Status(s.code(), absl::StrCat(file.name, ": ", step, ": ", s.message()));
  };
  if (step == "linearize") {
    absl::StatusOr<std::vector<UOpPtr>> uops = Linearize(file.roots[0]);
    if (!uops.ok()) return located(uops.status());
    out << PrintUOpsListing(Raw(*uops));
    return absl::OkStatus();
  }
  std::vector<std::string> names;
  for (const CodegenStep& s : CodegenSteps(renderer)) {
    if (s.name != step) {
      names.push_back(std::string(s.name));
      continue;
    }
    absl::StatusOr<UOpPtr> g = s.run(file.roots[0], renderer);
    if (!g.ok()) return located(g.status());
    out << PrintIr(g->get());
    return absl::OkStatus();
  }
  return UsageError(absl::StrCat("unknown --step=", step, " (", absl::StrJoin(names, ", "), ", linearize)"));
}

}  // namespace

absl::Status RunCompile(absl::Span<const std::string> args, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Renderer> renderer, RendererForTarget(absl::GetFlag(FLAGS_target)));
  UOPC_ASSIGN_OR_RETURN(CompileOptions options, CompileOptionsFromFlags());
  if (absl::GetFlag(FLAGS_jsonl)) {
    if (absl::GetFlag(FLAGS_emit) != "src") return UsageError("--emit does not apply to --jsonl");
    return CompileJsonLines(args[0], *renderer, options, out);
  }
  if (absl::GetFlag(FLAGS_time)) return UsageError("--time needs --jsonl");
  if (const std::string step = absl::GetFlag(FLAGS_step); !step.empty())
    return RunOneStep(args[0], step, *renderer, out);
  const std::string emit = absl::GetFlag(FLAGS_emit);
  if (emit != "src" && emit != "uops" && emit != "stages" && emit != "ast") {
    return UsageError(absl::StrCat("unknown --emit=", emit, " (src, uops, stages or ast)"));
  }
  UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(args[0]));
  if (file.roots.size() != 1)
    return absl::InvalidArgumentError(absl::StrCat(file.name, ": expected one kernel AST"));
  KernelNameCounter names;
  CodegenStages stages;
  absl::StatusOr<ProgramSpec> p = CompileKernel(file.roots[0], *renderer, options, &names, &stages);
  if (!p.ok()) {
    // The graphs up to the failing step show where it went wrong.
    if (emit == "stages") {
      for (const auto& [name, graph] : stages) out << "# stage: " << name << "\n" << PrintIr(graph.get());
    }
    return absl::Status(p.status().code(), absl::StrCat(file.name, ": ", p.status().message()));
  }
  if (emit == "src") {
    out << p->src << "\n";
  } else if (emit == "uops") {
    out << PrintUOpsListing(Raw(p->uops));
  } else if (emit == "ast") {
    out << PrintIr(stages.front().second.get());
  } else {
    for (const auto& [name, graph] : stages) out << "# stage: " << name << "\n" << PrintIr(graph.get());
  }
  return absl::OkStatus();
}

}  // namespace uopc
