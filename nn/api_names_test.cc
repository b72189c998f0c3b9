// Keeps the list of tinygrad's Tensor names and their uopc counterparts honest.
// testdata/tinygrad_tensor_names.txt is every public name of tinygrad v0.10.3's Tensor
// (testdata/harvest_api_names.py says which count as public); testdata/api_names.txt maps each to the C++
// name that does the same thing, or to `missing`. The test fails when a tinygrad name has no line, when a
// line names something tinygrad does not have, and when a mapped C++ name is not declared in its header (a
// renamed or removed method), so neither file can go stale. It prints how many names have a counterpart and
// which are missing (the count docs/support.md quotes).

#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "re2/re2.h"

namespace uopc {
namespace {

constexpr char kTinygradNames[] = "tensor/testdata/tinygrad_tensor_names.txt";
constexpr char kMapping[] = "tensor/testdata/api_names.txt";
constexpr char kDefaultHeader[] = "tensor/tensor.h";

std::string ReadText(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A header's text with its // comments removed, so that a name mentioned only in a comment does not count.
std::string CodeOf(const std::string& path) {
  std::string code;
  for (absl::string_view line : absl::StrSplit(ReadText(path), '\n')) {
    code += std::string(line.substr(0, line.find("//")));
    code += '\n';
  }
  return code;
}

// True when `code` declares `name` (a function, constructor, operator such as `operator+=`, or class):
// `Name(` not after `.`, `::` or `->` (a call or an out-of-line definition) nor after `return` (a call in an
// inline body), or `class Name`.
bool Declares(const std::string& code, const std::string& name) {
  if (RE2::PartialMatch(code, "class " + name + "\\b")) return true;
  const RE2 use("(^|[^A-Za-z0-9_:.>])(" + RE2::QuoteMeta(name) + ")\\s*\\(");
  for (absl::string_view line : absl::StrSplit(code, '\n')) {
    re2::StringPiece rest(line.data(), line.size()), prefix, match;
    while (RE2::FindAndConsume(&rest, use, &prefix, &match)) {
      // What precedes the name on its line, without the spaces before it.
      absl::string_view before =
          absl::StripTrailingAsciiWhitespace(line.substr(0, static_cast<size_t>(match.data() - line.data())));
      if (!absl::EndsWith(before, "return")) return true;
    }
  }
  return false;
}

struct Counterpart {
  std::string cpp_name;  // "missing" when there is none
  std::string header;
  int line = 0;
};

TEST(ApiNamesTest, EveryTinygradTensorNameIsMapped) {
  std::vector<std::string> tinygrad_names;
  for (absl::string_view line : absl::StrSplit(ReadText(kTinygradNames), '\n', absl::SkipWhitespace())) {
    tinygrad_names.emplace_back(absl::StripAsciiWhitespace(line));
  }
  ASSERT_GT(tinygrad_names.size(), 200u) << kTinygradNames << " looks truncated";
  const std::set<std::string> known(tinygrad_names.begin(), tinygrad_names.end());

  // Parse the mapping: "name -> CppName", "name -> ns::CppName @ header" or "name -> missing".
  std::map<std::string, Counterpart> mapping;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(ReadText(kMapping), '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw.substr(0, raw.find('#')));
    if (line.empty()) continue;
    std::vector<std::string> sides = absl::StrSplit(line, " -> ");
    if (sides.size() != 2 || sides[0].empty() || sides[1].empty()) {
      ADD_FAILURE() << kMapping << ":" << line_number << ": expected `name -> CppName`, got `" << line << "`";
      continue;
    }
    const std::string& name = sides[0];
    if (!known.contains(name)) {
      ADD_FAILURE() << kMapping << ":" << line_number << ": `" << name
                    << "` is not a public name of tinygrad's Tensor (see " << kTinygradNames << ")";
    }
    Counterpart counterpart{.header = kDefaultHeader, .line = line_number};
    std::vector<std::string> target = absl::StrSplit(sides[1], " @ ");
    counterpart.cpp_name = std::string(absl::StripAsciiWhitespace(target[0]));
    if (target.size() == 2) counterpart.header = std::string(absl::StripAsciiWhitespace(target[1]));
    if (target.size() > 2) {
      ADD_FAILURE() << kMapping << ":" << line_number << ": more than one ` @ ` in `" << line << "`";
    }
    if (!mapping.emplace(name, counterpart).second) {
      ADD_FAILURE() << kMapping << ":" << line_number << ": `" << name << "` is mapped twice";
    }
  }

  std::map<std::string, std::string> header_code;  // path -> code, read once each
  std::vector<std::string> missing;
  int covered = 0;
  for (const std::string& name : tinygrad_names) {
    auto it = mapping.find(name);
    if (it == mapping.end()) {
      ADD_FAILURE() << "tinygrad's Tensor." << name << " has no line in " << kMapping << " (add `" << name
                    << " -> CppName` or `" << name << " -> missing`)";
      continue;
    }
    const Counterpart& counterpart = it->second;
    if (counterpart.cpp_name == "missing") {
      missing.push_back(name);
      continue;
    }
    // The declared name is the last component of a qualified one (nn::GlorotUniform declares GlorotUniform),
    // or an operator as declared (operator+=).
    std::string declared = counterpart.cpp_name.substr(counterpart.cpp_name.rfind(':') + 1);
    if (!RE2::FullMatch(declared, "[A-Za-z_][A-Za-z0-9_]*|operator[-+*/%&|^<>=!]+")) {
      ADD_FAILURE() << kMapping << ":" << counterpart.line << ": `" << counterpart.cpp_name
                    << "` is not a C++ name";
      continue;
    }
    if (!header_code.contains(counterpart.header)) {
      header_code[counterpart.header] = CodeOf(counterpart.header);
    }
    if (!Declares(header_code[counterpart.header], declared)) {
      ADD_FAILURE() << kMapping << ":" << counterpart.line << ": " << name << " -> " << counterpart.cpp_name
                    << ", but " << counterpart.header << " declares no " << declared;
      continue;
    }
    ++covered;
  }

  std::cout << "tinygrad v0.10.3 Tensor names: " << tinygrad_names.size()
            << ", with a uopc counterpart: " << covered << ", missing: " << missing.size()
            << "\nmissing: " << absl::StrJoin(missing, " ") << "\n";
}

}  // namespace
}  // namespace uopc
