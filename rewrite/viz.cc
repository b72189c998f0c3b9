#include "rewrite/viz.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/types/span.h"
#include "nlohmann/json.hpp"
#include "rewrite/viz_page_assets.h"
#include "uop/ops.h"
#include "uop/print.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// tinygrad's VIZ palette, by op.
absl::string_view FillColor(Ops op) {
  switch (op) {
    case Ops::LOAD:
      return "#ffc0c0";
    case Ops::STORE:
      return "#87ceeb";
    case Ops::CONST:
    case Ops::VCONST:
      return "#e0e0e0";
    case Ops::DEFINE_GLOBAL:
    case Ops::DEFINE_LOCAL:
    case Ops::DEFINE_VAR:
      return "#ffe0b0";
    case Ops::DEFINE_ACC:
      return "#aaaaaa";
    case Ops::RANGE:
    case Ops::ENDRANGE:
      return "#c8a0e0";
    case Ops::SPECIAL:
      return "#c0c0ff";
    case Ops::INDEX:
      return "#e8ffa0";
    case Ops::ASSIGN:
      return "#909090";
    case Ops::BARRIER:
      return "#ff8080";
    case Ops::IF:
    case Ops::ENDIF:
      return "#c8b0c0";
    case Ops::WMMA:
      return "#efefc0";
    case Ops::VIEW:
      return "#c8f9d4";
    case Ops::REDUCE_AXIS:
      return "#ff6b6b";
    case Ops::REDUCE:
      return "#ff5b5b";
    case Ops::BUFFER:
      return "#b0bdff";
    case Ops::COPY:
      return "#a040a0";
    case Ops::SINK:
      return "#ffffff";
    case Ops::VECTORIZE:
    case Ops::GEP:
    case Ops::CAT:
      return "#f0d0ff";
    default:
      return groups::kALU.contains(op) ? "#ffffc0" : "#f5f5f5";
  }
}

// DOT's double-quoted strings: quotes and backslashes escaped; newlines as \n (centered lines).
std::string DotQuote(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  out.push_back('"');
  return out;
}

std::string Shorten(std::string s, size_t max_chars) {
  if (s.size() > max_chars) {
    s.resize(max_chars - 3);
    s += "...";
  }
  return s;
}

// One line naming a node for the rewrite lists: `ADD dtypes.int (3 src)`.
std::string NodeSummary(const UOp* u) {
  if (u == nullptr) return "(none)";
  std::string s = absl::StrCat(OpName(u->op()), " ", u->dtype().ToString());
  std::string arg = NodeArgStr(u);
  if (arg != "None") absl::StrAppend(&s, " ", Shorten(arg, 60));
  if (!u->src().empty()) absl::StrAppend(&s, " (", u->src().size(), " src)");
  return s;
}

int64_t CountNodes(const UOp* root) {
  return root == nullptr ? 0 : static_cast<int64_t>(root->Toposort().size());
}

// Runs `dot -Tsvg` once over `dot_graphs` (one process for many graphs) and returns one SVG per graph, or an
// error when dot is missing or fails.
absl::StatusOr<std::vector<std::string>> LayOutChunk(absl::Span<const std::string> dot_graphs,
                                                     const std::string& dot) {
  if (dot_graphs.empty()) return std::vector<std::string>{};
  char in_path[] = "/tmp/uopc_viz_dot_XXXXXX";
  int fd = mkstemp(in_path);
  if (fd < 0) return absl::InternalError("viz: cannot create a temporary file for dot");
  close(fd);
  {
    std::ofstream in(in_path);
    for (const std::string& g : dot_graphs) in << g << "\n";
  }
  std::string cmd = absl::StrCat(dot, " -Tsvg '", in_path, "' 2>&1");
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) {
    unlink(in_path);
    return absl::UnavailableError("viz: cannot run Graphviz's dot");
  }
  std::string out;
  char buf[1 << 16];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  int rc = pclose(pipe);
  unlink(in_path);
  if (rc != 0) {
    if (WIFEXITED(rc) && WEXITSTATUS(rc) == 127) {
      return absl::UnavailableError(
          "viz: Graphviz's `dot` was not found; "
          "install it (Debian: apt-get install graphviz) to draw graphs");
    }
    return absl::InternalError(absl::StrCat("viz: dot failed: ", Shorten(out, 400)));
  }
  // dot writes one complete SVG document per input graph; keep from each `<svg` to its `</svg>`.
  std::vector<std::string> svgs;
  size_t pos = 0;
  while (true) {
    size_t start = out.find("<svg", pos);
    if (start == std::string::npos) break;
    size_t end = out.find("</svg>", start);
    if (end == std::string::npos) break;
    // dot's per-node and per-edge comments repeat the titles: drop them (a fifth of the text).
    std::string svg = out.substr(start, end + 6 - start);
    std::string trimmed;
    trimmed.reserve(svg.size());
    for (size_t p = 0; p < svg.size();) {
      size_t c = svg.find("<!--", p);
      if (c == std::string::npos) {
        trimmed.append(svg, p, std::string::npos);
        break;
      }
      trimmed.append(svg, p, c - p);
      size_t e = svg.find("-->", c);
      p = e == std::string::npos ? svg.size() : e + 3;
    }
    svgs.push_back(std::move(trimmed));
    pos = end + 6;
  }
  if (svgs.size() != dot_graphs.size()) {
    return absl::InternalError(absl::StrCat("viz: dot drew ", svgs.size(), " graphs of ", dot_graphs.size(),
                                            ": ", Shorten(out, 400)));
  }
  return svgs;
}

// LayOutChunk over all graphs, in one dot process per core.
absl::StatusOr<std::vector<std::string>> LayOut(const std::vector<std::string>& dot_graphs,
                                                const std::string& dot) {
  const size_t workers = std::clamp<size_t>(std::thread::hardware_concurrency(), 1, 16);
  const size_t chunk = (dot_graphs.size() + workers - 1) / std::max<size_t>(workers, 1);
  if (chunk == 0) return std::vector<std::string>{};
  std::vector<std::future<absl::StatusOr<std::vector<std::string>>>> parts;
  for (size_t begin = 0; begin < dot_graphs.size(); begin += chunk) {
    absl::Span<const std::string> part =
        absl::MakeConstSpan(dot_graphs).subspan(begin, std::min(chunk, dot_graphs.size() - begin));
    parts.push_back(std::async(std::launch::async, [part, &dot] { return LayOutChunk(part, dot); }));
  }
  std::vector<std::string> svgs;
  absl::Status status = absl::OkStatus();
  for (auto& part : parts) {
    absl::StatusOr<std::vector<std::string>> r = part.get();
    if (!r.ok()) {
      if (status.ok()) status = r.status();
      continue;
    }
    for (std::string& svg : *r) svgs.push_back(std::move(svg));
  }
  if (!status.ok()) return status;
  return svgs;
}

// The depth of a group's outermost calls (a group opened inside a rewrite starts deeper than 0).
int TopDepth(const std::vector<TracedRewrite>& rewrites) {
  int top = rewrites.empty() ? 0 : rewrites.front().depth;
  for (const TracedRewrite& r : rewrites) top = std::min(top, r.depth);
  return top;
}

// The rewrites of a group worth listing: each one in which a rule fired, in it or in a rewrite it made in
// turn (a substitute inside the lowerer's rules), and, in a kernel's group (`steps_always`), every named step
// of its codegen, so that the page shows the whole pipeline. The rest changed nothing and would bury the
// steps.
std::vector<bool> ListedRewrites(const std::vector<TracedRewrite>& rewrites, bool steps_always) {
  // A group's calls are in the order they started: the calls a call made follow it, each deeper than it.
  const int top = TopDepth(rewrites);
  std::vector<bool> listed(rewrites.size(), false);
  for (size_t i = 0; i < rewrites.size(); ++i) {
    if (steps_always && rewrites[i].depth == top && !rewrites[i].name.empty()) {
      listed[i] = true;
      continue;
    }
    for (size_t j = i; j < rewrites.size() && (j == i || rewrites[j].depth > rewrites[i].depth); ++j) {
      if (!rewrites[j].events.empty()) {
        listed[i] = true;
        break;
      }
    }
  }
  return listed;
}

}  // namespace

std::string UOpGraphToDot(const UOp* root, const absl::flat_hash_set<const UOp*>& highlight,
                          absl::string_view graph_name) {
  std::vector<const UOp*> order = root->Toposort();
  absl::flat_hash_map<const UOp*, size_t> id;
  id.reserve(order.size());
  std::string out =
      absl::StrCat("digraph ", DotQuote(graph_name), " {\n",
                   "  node [shape=box style=\"rounded,filled\" fontname=\"monospace\" fontsize=10];\n",
                   "  edge [arrowsize=0.6];\n");
  for (size_t i = 0; i < order.size(); ++i) {
    const UOp* u = order[i];
    id[u] = i;
    std::string label = absl::StrCat(OpName(u->op()), "\n", u->dtype().ToString());
    std::string arg = NodeArgStr(u);
    if (arg != "None") absl::StrAppend(&label, "\n", Shorten(arg, 48));
    absl::StrAppend(&out, "  n", i, " [label=", DotQuote(label), " fillcolor=\"", FillColor(u->op()), "\"",
                    highlight.contains(u) ? " color=\"#e00000\" penwidth=3" : "", "];\n");
  }
  for (const UOp* u : order) {
    for (const UOpPtr& s : u->src()) absl::StrAppend(&out, "  n", id.at(s.get()), " -> n", id.at(u), ";\n");
  }
  out += "}\n";
  return out;
}

absl::StatusOr<std::string> RenderVizPage(const std::vector<RewriteGroup>& groups, const VizOptions& options,
                                          VizSummary* summary) {
  VizSummary sum;
  nlohmann::json jgroups = nlohmann::json::array();
  std::vector<std::string> dot_graphs;
  absl::flat_hash_map<std::string, size_t> dot_index;
  int default_group = -1, default_step = -1;
  for (const RewriteGroup& group : groups) {
    nlohmann::json jsteps = nlohmann::json::array();
    const bool is_kernel = !group.texts.empty();
    const std::vector<bool> listed = ListedRewrites(group.rewrites, /*steps_always=*/is_kernel);
    const int top = TopDepth(group.rewrites);
    for (size_t i = 0; i < group.rewrites.size(); ++i) {
      if (!listed[i]) continue;
      const TracedRewrite& r = group.rewrites[i];
      nlohmann::json step;
      step["name"] = r.name.empty() ? "(unnamed rewrite)" : r.name;
      step["depth"] = r.depth - top;
      step["bottom_up"] = r.bottom_up;
      step["events"] = r.events.size();
      const UOp* in = r.input.get();
      const UOp* out = r.output.get();
      int64_t in_nodes = CountNodes(in), out_nodes = CountNodes(out);
      step["input_nodes"] = in_nodes;
      step["output_nodes"] = out_nodes;
      nlohmann::json jrewrites = nlohmann::json::array();
      for (size_t i = 0; i < r.events.size() && static_cast<int64_t>(i) < options.max_events_per_step; ++i) {
        const RewriteEvent& e = r.events[i];
        jrewrites.push_back({e.rule != nullptr ? e.rule->location() : std::string("(no rule)"),
                             NodeSummary(e.before.get()), NodeSummary(e.after.get())});
      }
      step["rewrites"] = std::move(jrewrites);
      step["svg"] = -1;
      step["highlighted"] = 0;
      const UOp* shown = out != nullptr ? out : in;
      if (shown == nullptr) {
        step["note"] = "This rewrite failed before it produced a graph.";
      } else if (out_nodes > options.max_graph_nodes ||
                 (out == nullptr && in_nodes > options.max_graph_nodes)) {
        step["note"] =
            absl::StrCat("The graph has ", out != nullptr ? out_nodes : in_nodes, " nodes; graphs over ",
                         options.max_graph_nodes, " nodes are not drawn (VIZ_MAX_NODES raises the cap).");
        ++sum.graphs_capped;
      } else {
        absl::flat_hash_set<const UOp*> before;
        if (in != nullptr && out != nullptr) {
          for (const UOp* u : in->Toposort()) before.insert(u);
        }
        absl::flat_hash_set<const UOp*> fresh;
        if (out != nullptr && in != nullptr) {
          for (const UOp* u : out->Toposort()) {
            if (!before.contains(u)) fresh.insert(u);
          }
        }
        step["highlighted"] = fresh.size();
        // Steps in which nothing changed show the graph the step before showed: lay out each distinct
        // graph once.
        std::string dot = UOpGraphToDot(shown, fresh);
        auto [it, inserted] = dot_index.try_emplace(dot, dot_graphs.size());
        if (inserted) dot_graphs.push_back(std::move(dot));
        step["svg"] = it->second;
      }
      jsteps.push_back(std::move(step));
      ++sum.steps;
      sum.events += static_cast<int64_t>(r.events.size());
    }
    if (jsteps.empty() && group.texts.empty()) continue;
    nlohmann::json jtexts = nlohmann::json::array();
    for (const auto& [title, text] : group.texts) jtexts.push_back({title, text});
    // The first kernel's first drawn step is what the page opens on (the scheduler's group otherwise).
    if (!jsteps.empty()) {
      if (default_group < 0 || (is_kernel && !jgroups[default_group]["is_kernel"].get<bool>())) {
        // The first step with a drawn graph (not one made inside a step: those are small simplifications).
        int first_drawn = 0;
        for (size_t s = 0; s < jsteps.size(); ++s) {
          if (jsteps[s]["svg"].get<int64_t>() >= 0 && jsteps[s]["depth"].get<int>() == 0) {
            first_drawn = static_cast<int>(s);
            break;
          }
        }
        default_group = static_cast<int>(jgroups.size());
        default_step = first_drawn;
      }
    }
    jgroups.push_back({{"label", group.label},
                       {"steps", std::move(jsteps)},
                       {"texts", std::move(jtexts)},
                       {"is_kernel", !group.texts.empty()}});
    ++sum.groups;
  }
  if (jgroups.empty()) {
    return absl::InvalidArgumentError(
        "viz: nothing was recorded (no graph rewrite ran while recording was on), "
        "so there is no page to write");
  }
  std::vector<std::string> svgs;
  absl::StatusOr<std::vector<std::string>> laid_out = LayOut(dot_graphs, options.dot_binary);
  if (laid_out.ok()) {
    svgs = *std::move(laid_out);
    sum.graphs_drawn = static_cast<int64_t>(svgs.size());
  } else if (absl::IsUnavailable(laid_out.status())) {
    sum.dot_missing = true;
    for (nlohmann::json& g : jgroups) {
      for (nlohmann::json& s : g["steps"]) {
        if (s["svg"].get<int64_t>() >= 0) {
          s["svg"] = -1;
          s["note"] = std::string(laid_out.status().message());
        }
      }
    }
  } else {
    return laid_out.status();
  }
  nlohmann::json page = {{"groups", std::move(jgroups)},
                         {"svgs", std::move(svgs)},
                         {"default_group", default_group},
                         {"default_step", default_step}};
  // Inside <script>, `</` would end the element early; JSON allows `<\/`.
  std::string json = absl::StrReplaceAll(page.dump(), {{"</", "<\\/"}});
  std::string title = absl::StrReplaceAll(options.title, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}});
  // One pass over the template: what is put in is not searched for placeholders again.
  std::string html = absl::StrReplaceAll(
      viz_page::kHtml,
      {{"@TITLE@", title}, {"@STYLE@", viz_page::kCss}, {"@SCRIPT@", viz_page::kJs}, {"@DATA@", json}});
  sum.bytes = static_cast<int64_t>(html.size());
  if (summary != nullptr) *summary = sum;
  return html;
}

absl::StatusOr<VizSummary> WriteVizPage(const std::vector<RewriteGroup>& groups, const std::string& path,
                                        const VizOptions& options) {
  VizSummary summary;
  UOPC_ASSIGN_OR_RETURN(std::string html, RenderVizPage(groups, options, &summary));
  std::ofstream out(path, std::ios::binary);
  if (!out) return absl::PermissionDeniedError(absl::StrCat("viz: cannot write ", path));
  out << html;
  out.close();
  if (!out) return absl::DataLossError(absl::StrCat("viz: writing ", path, " failed"));
  return summary;
}

bool VizRequestedByEnvironment() { return EnvInt("VIZ", 0) >= 1; }

namespace {

// VIZ=1 in any program linking this library: record from the start, write the page at exit.
void WritePageAtExit() {
  RewriteRecorder::SetEnabled(false);
  // The recorded nodes are never freed: exit has destroyed this thread's thread_locals already, and freeing a
  // node uses them (UOp's node pool and release queue), which corrupted the heap now and then. A global keeps
  // them reachable, so a leak checker does not report them.
  static const std::vector<RewriteGroup>* recorded_at_exit = nullptr;
  recorded_at_exit = new std::vector<RewriteGroup>(RewriteRecorder::Take());
  const std::vector<RewriteGroup>& groups = *recorded_at_exit;
  std::string path = EnvString("VIZ_PATH");
  if (path.empty()) path = absl::StrCat(EnvString("TMPDIR", "/tmp"), "/uopc_viz_", getpid(), ".html");
  VizOptions options;
  if (int64_t n = EnvInt("VIZ_MAX_NODES", 0); n > 0) options.max_graph_nodes = n;
  absl::StatusOr<VizSummary> s = WriteVizPage(groups, path, options);
  if (!s.ok()) {
    std::cerr << "VIZ: " << s.status().message() << "\n";
    return;
  }
  std::cerr << "VIZ: wrote " << path << " (" << s->groups << " groups, " << s->steps << " rewrites, "
            << s->events << " rule applications, " << s->graphs_drawn << " graphs drawn"
            << (s->graphs_capped > 0 ? absl::StrCat(", ", s->graphs_capped, " too large to draw") : "")
            << ", " << s->bytes / 1024 << " KiB)"
            << (s->dot_missing ? "; install graphviz to draw graphs" : "") << "\n";
}

const bool kVizFromEnvironment = [] {
  if (!VizRequestedByEnvironment()) return false;
  RewriteRecorder::SetEnabled(true);
  std::atexit(WritePageAtExit);
  return true;
}();

}  // namespace
}  // namespace uopc
