#include "tools/uopc_subcommand.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "rewrite/viz.h"
#include "uop/print.h"
#include "uop/status_macros.h"
#include "uop/text_ir.h"

ABSL_FLAG(std::string, format, "", "Output format: ir (default), listing, tree or dot (print only).");

namespace uopc {
namespace {

constexpr char kUsagePayloadUrl[] = "uopc/usage-error";

}  // namespace

absl::Status UsageError(absl::string_view message) {
  absl::Status status = absl::InvalidArgumentError(message);
  status.SetPayload(kUsagePayloadUrl, absl::Cord("1"));
  return status;
}

bool IsUsageError(const absl::Status& status) { return status.GetPayload(kUsagePayloadUrl).has_value(); }

absl::StatusOr<std::string> ReadInputText(const std::string& path) {
  if (path == "-") {
    std::ostringstream buf;
    buf << std::cin.rdbuf();
    return buf.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open: ", std::strerror(errno)));
  std::string text(std::istreambuf_iterator<char>(in), (std::istreambuf_iterator<char>()));
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error: ", std::strerror(errno)));
  return text;
}

absl::StatusOr<GraphFile> ReadGraphFile(const std::string& path) {
  GraphFile file;
  file.name = path == "-" ? "<stdin>" : path;
  UOPC_ASSIGN_OR_RETURN(std::string text, ReadInputText(path));
  absl::StatusOr<std::vector<UOpPtr>> roots = ParseIr(text);
  // The parser's messages start with "line:col: ".
  if (!roots.ok())
    return absl::Status(roots.status().code(), absl::StrCat(file.name, ":", roots.status().message()));
  file.roots = *std::move(roots);
  return file;
}

absl::StatusOr<std::string> FormatGraphs(absl::Span<const UOpPtr> roots, absl::string_view format) {
  if (format.empty() || format == "ir") return PrintIr(roots);
  if (format == "listing") {
    std::vector<const UOp*> order;
    absl::flat_hash_set<const UOp*> seen;
    for (const UOpPtr& root : roots) {
      for (const UOp* u : root->Toposort()) {
        if (seen.insert(u).second) order.push_back(u);
      }
    }
    return PrintUOpsListing(order);
  }
  if (format == "tree") {
    std::string out;
    for (const UOpPtr& root : roots) absl::StrAppend(&out, PrintUOpTree(root.get()), "\n");
    return out;
  }
  if (format == "dot") {
    // One digraph per root (Graphviz's DOT; `dot -Tsvg` draws it).
    std::string out;
    for (size_t i = 0; i < roots.size(); ++i) {
      absl::StrAppend(&out, UOpGraphToDot(roots[i].get(), {}, absl::StrCat("graph", i)));
    }
    return out;
  }
  return UsageError(absl::StrCat("unknown --format=", format, " (expected ir, listing, tree or dot)"));
}

absl::Status JsonlStatus(const std::string& path, int failed, int total) {
  if (failed == 0) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(path == "-" ? "<stdin>" : path, ": ", failed, " of ", total,
                                                 " line", total == 1 ? "" : "s",
                                                 " failed (see their \"error\" fields)"));
}

}  // namespace uopc
