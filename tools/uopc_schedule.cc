// uopc schedule: a tensor-level graph in, its kernels out (the scheduler alone).
//
//   uopc schedule [--format=ir|listing|tree] FILE|-
//
// FILE holds one tensor-level graph in the textual IR (the SINK of the tensors to realize, as
// schedule/testdata/tensor_graphs.jsonl's `graph`). The output is one block per schedule item, in schedule
// order: `# kernel K: BUFFERS` (each buffer as UNIQUE-number:dtype[size]@device) and the kernel AST in the
// chosen format, or the name of a meta op (COPY).
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "schedule/schedule.h"
#include "schedule/tensor_uop.h"
#include "tools/uopc_subcommand.h"
#include "uop/status_macros.h"

namespace uopc {

absl::Status RunSchedule(absl::Span<const std::string> args, std::ostream& out) {
  UOPC_ASSIGN_OR_RETURN(GraphFile file, ReadGraphFile(args[0]));
  if (file.roots.size() != 1 || file.roots[0]->op() != Ops::SINK) {
    return absl::InvalidArgumentError(absl::StrCat(
        file.name, ": schedule takes one graph whose root is the SINK of the tensors to realize"));
  }
  absl::StatusOr<Schedule> schedule = CreateSchedule(file.roots[0]);
  if (!schedule.ok())
    return absl::Status(schedule.status().code(), absl::StrCat(file.name, ": ", schedule.status().message()));
  for (size_t i = 0; i < schedule->items.size(); ++i) {
    const ScheduleItem& item = schedule->items[i];
    std::vector<std::string> bufs;
    for (const UOpPtr& b : item.bufs) {
      bufs.push_back(absl::StrCat(b->src(0)->arg().as_int(), ":", b->dtype().ToString(), "[",
                                  b->arg().as_int(), "]@", DeviceOf(b.get())));
    }
    out << "# kernel " << i << ": " << absl::StrJoin(bufs, " ") << "\n";
    if (item.ast->op() != Ops::SINK) {
      out << OpName(item.ast->op()) << "\n";
      continue;
    }
    UOPC_ASSIGN_OR_RETURN(std::string text, FormatGraphs({item.ast}, absl::GetFlag(FLAGS_format)));
    out << text;
  }
  return absl::OkStatus();
}

}  // namespace uopc
