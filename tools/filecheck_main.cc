// filecheck: checks text read from stdin (or a file) against the CHECK lines of a check file.
//
//   uopc print --format=listing x.uop | filecheck x.uop
//   filecheck --check_prefix=IR x.uop output.txt
//
// Exit status: 0 when every directive holds, 1 when the input breaks one or a file cannot be read, 2 on a
// usage error. The reason goes to stderr, naming the check file's line.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "tools/filecheck.h"

ABSL_FLAG(std::string, check_prefix, "CHECK",
          "Directive prefix: PREFIX:, PREFIX-NEXT:, PREFIX-SAME:, PREFIX-NOT:.");

namespace {

constexpr char kUsage[] = "usage: filecheck [--check_prefix=CHECK] CHECK_FILE [INPUT_FILE|-]";

absl::StatusOr<std::string> ReadAll(const std::string& path) {
  if (path == "-") {
    std::ostringstream buf;
    buf << std::cin.rdbuf();
    return buf.str();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(kUsage);
  std::vector<char*> args = absl::ParseCommandLine(argc, argv);
  if (args.size() < 2 || args.size() > 3) {
    std::cerr << kUsage << "\n";
    return 2;
  }
  absl::StatusOr<std::string> checks = ReadAll(args[1]);
  if (!checks.ok()) {
    std::cerr << "filecheck: " << checks.status().message() << "\n";
    return 1;
  }
  std::string input_path = args.size() == 3 ? args[2] : "-";
  absl::StatusOr<std::string> input = ReadAll(input_path);
  if (!input.ok()) {
    std::cerr << "filecheck: " << input.status().message() << "\n";
    return 1;
  }
  absl::Status status = uopc::FileCheck(*checks, *input, absl::GetFlag(FLAGS_check_prefix));
  if (!status.ok()) {
    std::cerr << args[1] << ": " << status.message() << "\n";
    return status.code() == absl::StatusCode::kInvalidArgument ? 2 : 1;
  }
  return 0;
}
