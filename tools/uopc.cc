// uopc: runs one stage of the compiler on a textual-IR file, like LLVM's `opt` or `mlir-opt`.
//
//   uopc print [--format=ir|listing|tree] FILE|-
//   uopc verify --spec=tensor|kernel|program [--format=ir|listing|tree] FILE|-
//   uopc compile [--target=clang] [--noopt | --opts=...] [--emit=src|uops|stages|ast] FILE|-
//   uopc run [--device=CPU|INTERP|...] [--noopt] [--inputs=JSON|@FILE] [--bind='n=3'] FILE.uop|-
//   uopc run --jsonl [--device=CPU|INTERP|...] [--noopt] FILE|-
//
// Exit status: 0 on success, 1 when the input is bad (unreadable, malformed, failing verification, or with
// --jsonl any line whose output is an error; the reason goes to stderr as `FILE:line:col: error: ...`), 2 on
// a usage error (unknown subcommand or flag,
// --help). A new stage adds one function (see tools/uopc_subcommand.h) and one row to kSubcommands below.
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "re2/re2.h"
#include "tools/uopc_subcommand.h"

namespace uopc {
namespace {

constexpr absl::string_view kPrintFlags[] = {"format"};
constexpr absl::string_view kVerifyFlags[] = {"spec", "format"};
constexpr absl::string_view kSimplifyFlags[] = {"rules", "jsonl", "vars", "time", "stats"};

constexpr Subcommand kSubcommands[] = {
    {"print", "[--format=ir|listing|tree|dot] FILE|-",
     "parse a graph and print it: canonical IR, tinygrad's uop listing, tinygrad's UOp tree, or Graphviz DOT", kPrintFlags,
     1, RunPrint},
    {"verify", "--spec=tensor|kernel|program [--format=ir|listing|tree] FILE|-",
     "check every graph against a stage's spec (tinygrad's spec.py), then print it", kVerifyFlags, 1,
     RunVerify},
    {"simplify", "[--rules=symbolic|sym] [--stats] (--jsonl [--time] FILE|- | --vars='a:0:8 b:0:3' EXPR)",
     "simplify infix expressions with the symbolic rules; prints tinygrad's render (JSON lines with --jsonl)",
     kSimplifyFlags, 1, RunSimplify},
    {"shape", "--jsonl FILE|-",
     "apply movement ops to a ShapeTracker; print its views, index/valid and index array", kShapeFlags, 1,
     RunShape},
    {"schedule", "[--format=ir|listing|tree] FILE|-",
     "cut a tensor-level graph (the SINK of the tensors to realize) into kernels; print each kernel's "
     "buffers "
     "and AST in schedule order",
     kScheduleFlags, 1, RunSchedule},
    {"compile",
     "[--target=clang|opencl|metal|cuda|ptx|llvm] [--noopt | --opts='UPCAST:0:4;...'] "
     "[--emit=src|uops|stages|ast] FILE|-  or  "
     "--jsonl [--time] FILE|-  or  --step=STEP FILE|-",
     "compile a kernel AST: optimize, lower, linearize and render (JSON lines of name, opts, uops, src with "
     "--jsonl)",
     kCompileFlags, 1, RunCompile},
    {"run",
     "[--device=CPU|INTERP|LLVM|OPENCL|CUDA] [--target=T (INTERP)] [--noopt] "
     "([--inputs=JSON|@FILE] [--bind='n=3'] FILE.uop|-  or  --jsonl FILE|-)",
     "compile a kernel AST (each line's with --jsonl), run it once on the codegen corpus's inputs or the "
     "given "
     "ones, print what it stores as JSON",
     kRunFlags, 1, RunRun},
    {"viz", "[--target=T] [--noopt] [--jsonl] [--out=PAGE.html] [--max_nodes=600] FILE|-",
     "compile kernel ASTs or a tensor graph with every graph rewrite recorded; write the VIZ page (HTML)",
     kVizFlags, 1, RunViz},
};

constexpr int kExitInputError = 1;
constexpr int kExitUsage = 2;

const Subcommand* FindSubcommand(absl::string_view name) {
  for (const Subcommand& s : kSubcommands) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

std::string SubcommandUsage(const Subcommand& s) {
  return absl::StrCat("usage: uopc ", s.name, " ", s.synopsis, "\n  ", s.summary, "\n");
}

std::string Usage() {
  std::string out =
      "usage: uopc SUBCOMMAND [FLAGS] FILE|-\n\nRuns one compiler stage on a textual-IR file (- is "
      "stdin).\n\n";
  for (const Subcommand& s : kSubcommands)
    absl::StrAppend(&out, "  uopc ", s.name, " ", s.synopsis, "\n      ", s.summary, "\n");
  absl::StrAppend(
      &out,
      "\nExit status: 0 ok, 1 bad input or any failed --jsonl line (message on stderr), 2 usage error.\n");
  return out;
}

bool IsHelpFlag(absl::string_view arg) {
  return arg == "--help" || arg == "-help" || arg == "-h" || arg == "--h";
}

// Finds a flag argument (`--name`, `--name=value`, `--noname`) that names no defined flag. absl would reject
// it too, but with exit status 1; a usage error here exits 2.
std::string FindUnknownFlag(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;  // positional, including "-" (stdin)
    absl::string_view name = arg.substr(arg[1] == '-' ? 2 : 1);
    name = name.substr(0, name.find('='));
    if (absl::FindCommandLineFlag(name) != nullptr) continue;
    if (absl::StartsWith(name, "no") && absl::FindCommandLineFlag(name.substr(2)) != nullptr) continue;
    return std::string(arg);
  }
  return "";
}

// A flag that belongs to another subcommand and was changed from its default.
std::string FindForeignFlag(const Subcommand& sub) {
  for (const Subcommand& other : kSubcommands) {
    for (absl::string_view name : other.flags) {
      bool own = false;
      for (absl::string_view mine : sub.flags) own = own || mine == name;
      if (own) continue;
      const absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
      if (flag != nullptr && flag->CurrentValue() != flag->DefaultValue()) return std::string(name);
    }
  }
  return "";
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "runs one compiler stage on a textual-IR file; `uopc --help` lists the subcommands");
  // Help and unknown flags are handled before absl sees them, so that both exit with status 2.
  for (int i = 1; i < argc && absl::string_view(argv[i]) != "--"; ++i) {
    if (!IsHelpFlag(argv[i])) continue;
    const Subcommand* sub = argc > 1 ? FindSubcommand(argv[1]) : nullptr;
    std::cout << (sub ? SubcommandUsage(*sub) : Usage());
    return kExitUsage;
  }
  if (std::string unknown = FindUnknownFlag(argc, argv); !unknown.empty()) {
    std::cerr << "uopc: unknown flag " << unknown << "\n\n" << Usage();
    return kExitUsage;
  }
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() < 2) {
    std::cerr << Usage();
    return kExitUsage;
  }
  const Subcommand* sub = FindSubcommand(positional[1]);
  if (sub == nullptr) {
    std::cerr << "uopc: unknown subcommand '" << positional[1] << "'\n\n" << Usage();
    return kExitUsage;
  }
  std::vector<std::string> args(positional.begin() + 2, positional.end());
  if (static_cast<int>(args.size()) != sub->num_args) {
    std::cerr << "uopc " << sub->name << ": expected " << sub->num_args << " argument"
              << (sub->num_args == 1 ? "" : "s") << ", got " << args.size() << "\n"
              << SubcommandUsage(*sub);
    return kExitUsage;
  }
  if (std::string foreign = FindForeignFlag(*sub); !foreign.empty()) {
    std::cerr << "uopc " << sub->name << ": --" << foreign << " does not apply to this subcommand\n"
              << SubcommandUsage(*sub);
    return kExitUsage;
  }
  absl::Status status = sub->run(args, std::cout);
  std::cout.flush();
  if (status.ok()) return 0;
  if (IsUsageError(status)) {
    std::cerr << "uopc " << sub->name << ": " << status.message() << "\n" << SubcommandUsage(*sub);
    return kExitUsage;
  }
  // Messages are "FILE:line:col: what" (or "FILE: what"); compilers print "FILE:line:col: error: what".
  std::string message(status.message());
  std::string location, rest;
  if (RE2::FullMatch(message, R"((?s)(.*?:\d+:\d+): (.*))", &location, &rest) ||
      RE2::FullMatch(message, R"((?s)([^:\n]*): (.*))", &location, &rest)) {
    message = absl::StrCat(location, ": error: ", rest);
  }
  std::cerr << message << "\n";
  return kExitInputError;
}

}  // namespace
}  // namespace uopc

int main(int argc, char** argv) { return uopc::Main(argc, argv); }
