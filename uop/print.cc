#include "uop/print.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "uop/check.h"

namespace uopc {
namespace {

// Python's `format(s, "Ns")`: left-aligned, padded with spaces to at least n characters, never truncated.
void AppendPadded(std::string& out, absl::string_view s, size_t n) {
  out.append(s.data(), s.size());
  if (s.size() < n) out.append(n - s.size(), ' ');
}

std::string OpStr(Ops op) { return absl::StrCat("Ops.", OpName(op)); }

bool IsNumber(const Arg& a) { return a.is_int() || a.is_float() || a.is_bool(); }

// Writes the repr of a CONST/VCONST arg, its numbers read through the node's dtype; false for other nodes.
bool ConstArgRepr(const UOp* u, std::string& out) {
  const Arg& arg = u->arg();
  if (u->op() == Ops::CONST && IsNumber(arg)) {
    out = ConstFromArg(arg, u->dtype()).ToString();
    return true;
  }
  if (u->op() == Ops::VCONST && arg.is_tuple()) {
    const Arg::Tuple& t = arg.as_tuple();
    out = "(";
    for (size_t i = 0; i < t.size(); ++i) {
      if (i) out += ", ";
      out += IsNumber(t[i]) ? ConstFromArg(t[i], u->dtype().scalar()).ToString() : t[i].ToString();
    }
    if (t.size() == 1) out += ",";
    out += ")";
    return true;
  }
  return false;
}

}  // namespace

std::string PythonStr(const Arg& arg) { return arg.is_string() ? arg.as_string() : arg.ToString(); }

std::string NodeArgStr(const UOp* u) {
  std::string s;
  if (ConstArgRepr(u, s)) return s;
  return PythonStr(u->arg());
}

std::string NodeArgRepr(const UOp* u) {
  std::string s;
  if (ConstArgRepr(u, s)) return s;
  const Arg& arg = u->arg();
  if (u->op() == Ops::REDUCE_AXIS && arg.is_tuple()) {
    // tinygrad joins str() of the elements and adds no trailing comma for one element.
    s = "(";
    for (size_t i = 0; i < arg.size(); ++i) {
      if (i) s += ", ";
      s += PythonStr(arg[i]);
    }
    return s + ")";
  }
  return arg.ToString();
}

std::string PrintUOpsListing(absl::Span<const UOp* const> uops) {
  // Position of the first occurrence of each node (Python's list.index).
  absl::flat_hash_map<const UOp*, size_t> position;
  position.reserve(uops.size());
  for (size_t i = 0; i < uops.size(); ++i) position.try_emplace(uops[i], i);

  std::string out;
  for (size_t i = 0; i < uops.size(); ++i) {
    const UOp* u = uops[i];
    std::string parents = "[";
    for (size_t j = 0; j < u->num_src(); ++j) {
      if (j) parents += ", ";
      const UOp* s = u->src(j);
      auto it = position.find(s);
      if (it == position.end()) {
        parents += "'--'";
      } else if (s->op() == Ops::CONST) {
        // The value as a Python string, so it prints quoted: ['3'].
        parents += Arg(NodeArgStr(s)).ToString();
      } else {
        absl::StrAppend(&parents, it->second);
      }
    }
    parents += "]";

    std::string index = absl::StrCat(i);
    if (index.size() < 4) out.append(4 - index.size(), ' ');
    out += index;
    out += ' ';
    AppendPadded(out, OpStr(u->op()), 20);
    out += ": ";
    AppendPadded(out, u->dtype().ToString(), 30);
    out += ' ';
    AppendPadded(out, parents, 32);
    out += ' ';
    out += NodeArgStr(u);
    out += '\n';
  }
  return out;
}

std::string PrintUOpTree(const UOp* root) {
  UOPC_CHECK(root != nullptr);
  // tinygrad's numbering: a node gets the count of nodes numbered so far when a walk first meets it as a
  // source, and the walk descends into a source the first time it meets it (pre-order, sources in order).
  struct Info {
    size_t number = 0;
    size_t uses = 0;
    bool printed = false;
  };
  absl::flat_hash_map<const UOp*, Info> info;
  {
    std::vector<std::pair<const UOp*, size_t>> stack;  // (node, next source to visit)
    stack.emplace_back(root, 0);
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      if (next == node->num_src()) {
        stack.pop_back();
        continue;
      }
      const UOp* s = node->src(next++);
      auto [it, inserted] = info.try_emplace(s, Info{info.size(), 0, false});
      if (++it->second.uses == 1) stack.emplace_back(s, 0);
    }
  }
  // The root is only numbered here when it was not met as a source (always, in an acyclic graph).
  info.try_emplace(root, Info{0, 0, false});

  std::string out;
  // Each frame is a node whose `UOp(... src=(` head has been written and whose sources are being written.
  struct Frame {
    const UOp* node;
    size_t depth;
    size_t next;
  };
  std::vector<Frame> stack;
  // Writes the node's head (or its back-reference) and returns whether its sources must follow.
  auto open = [&](const UOp* u, size_t depth) {
    Info& in = info.at(u);
    out.append(depth, ' ');
    if (in.printed) {
      absl::StrAppend(&out, " x", in.number);
      return false;
    }
    in.printed = true;
    if (in.uses > 1) absl::StrAppend(&out, "x", in.number, ":=");
    absl::StrAppend(&out, "UOp(", OpStr(u->op()), ", ", u->dtype().ToString(), ", arg=", NodeArgRepr(u));
    if (!u->tag().is_none()) absl::StrAppend(&out, ", tag=", u->tag().ToString());
    out += ", src=(";
    return true;
  };
  if (open(root, 0)) stack.push_back(Frame{root, 0, 0});
  while (!stack.empty()) {
    Frame& f = stack.back();
    if (f.next == f.node->num_src()) {
      out += "))";
      stack.pop_back();
      if (!stack.empty()) out += ',';
      continue;
    }
    const UOp* s = f.node->src(f.next++);
    size_t depth = f.depth + 2;
    out += '\n';
    if (open(s, depth)) {
      stack.push_back(Frame{s, depth, 0});  // invalidates f
    } else {
      out += ',';
    }
  }
  return out;
}

std::string UOpArg::ToString() const {
  // tinygrad's repr spans lines; an arg is one line of the textual IR, and the parser skips whitespace.
  std::string out;
  for (absl::string_view line : absl::StrSplit(PrintUOpTree(uop_.get()), '\n')) {
    absl::StrAppend(&out, absl::StripLeadingAsciiWhitespace(line));
  }
  return out;
}

}  // namespace uopc
