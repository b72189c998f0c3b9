#include "runtime/exec_item.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "rewrite/symbolic.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// The process's DEBUG=2 count of runs and their summed time (tinygrad's GlobalCounters).
struct DebugCounters {
  std::mutex mu;
  int64_t runs = 0;    // guarded by mu
  double seconds = 0;  // guarded by mu
};

DebugCounters& Counters() {
  static DebugCounters* counters = new DebugCounters();
  return *counters;
}

// Completes a run's record after it ran: the memory in use, and at DEBUG=2 its numbered line.
void ReportRun(KernelRun& run, const ExecOptions& options) {
  run.mem_used = DeviceMemoryUsed();
  if (options.debug >= 2) {
    DebugCounters& counters = Counters();
    std::lock_guard<std::mutex> lock(counters.mu);
    counters.runs += 1;
    counters.seconds += run.run_seconds;
    EmitDebugText(KernelRunLine(run, counters.runs, counters.seconds) + "\n", options.debug_out);
  }
}

}  // namespace

absl::StatusOr<LaunchParams> LaunchDims(const ProgramSpec& spec,
                                        const absl::flat_hash_map<std::string, int64_t>& var_values) {
  LaunchParams launch;
  for (size_t i = 0; spec.global_size && i < spec.global_size->size() && i < 3; ++i) {
    launch.global_size[i] = (*spec.global_size)[i];
  }
  for (size_t i = 0; spec.local_size && i < spec.local_size->size() && i < 3; ++i) {
    launch.local_size[i] = (*spec.local_size)[i];
  }
  for (const auto& [dim, size] : spec.symbolic_launch_dims) {
    absl::StatusOr<ConstValue> value = SymInfer(size.get(), var_values);
    if (!value.ok()) {
      return absl::Status(value.status().code(),
                          absl::StrCat(spec.name, "'s launch dims: ", value.status().message()));
    }
    const int64_t n = value->AsInt64();
    if (n < 1)
      return absl::OutOfRangeError(absl::StrCat(spec.name, "'s launch dim ", dim, " evaluates to ", n));
    (dim < 3 ? launch.global_size : launch.local_size)[dim % 3] = n;
  }
  return launch;
}

std::string KernelRunLine(const KernelRun& run, int64_t number, double total_seconds) {
  double et = run.run_seconds > 0 ? run.run_seconds : 1e-20;
  std::string name = run.name;
  if (name.size() < 41) name.append(41 - name.size(), ' ');
  return absl::StrFormat(
      "*** %-7s %4d %s arg %2d mem %5.2f GB tm %s/%9.2fms (%9.2f GFLOPS %6.1f|%-7.1f GB/s)",
      run.device.substr(0, 7), number, name, run.num_buffers, static_cast<double>(run.mem_used) / 1e9,
      TimeToStr(run.run_seconds, 9), total_seconds * 1e3, run.flops / (et * 1e9), run.bytes / (et * 1e9),
      run.lds / (et * 1e9));
}

void EmitDebugText(absl::string_view text, std::string* out) {
  if (out != nullptr) {
    out->append(text.data(), text.size());
  } else {
    std::fwrite(text.data(), 1, text.size(), stderr);
  }
}

absl::StatusOr<ExecItem> ExecItem::ForProgram(std::shared_ptr<Program> program, Device& device,
                                              std::vector<UOpPtr> nodes, std::vector<Buffer*> buffers,
                                              std::vector<int64_t> var_values,
                                              absl::flat_hash_map<std::string, int64_t> launch_var_values) {
  const ProgramSpec& spec = program->spec();
  if (nodes.size() != buffers.size() || buffers.size() != spec.globals.size() ||
      var_values.size() != spec.vars.size()) {
    return absl::InternalError(absl::StrCat(
        "kernel ", spec.name, " takes ", spec.globals.size(), " buffers and ", spec.vars.size(),
        " variables, given ", buffers.size(), " (", nodes.size(), " nodes) and ", var_values.size()));
  }
  absl::flat_hash_map<std::string, int64_t> values = launch_var_values;
  for (size_t i = 0; i < spec.vars.size(); ++i) values[spec.vars[i]] = var_values[i];
  UOPC_ASSIGN_OR_RETURN(LaunchParams launch, LaunchDims(spec, values));
  UOPC_ASSIGN_OR_RETURN(int64_t ops, spec.estimates.ops.Evaluate(values));
  UOPC_ASSIGN_OR_RETURN(int64_t lds, spec.estimates.lds.Evaluate(values));
  UOPC_ASSIGN_OR_RETURN(int64_t mem, spec.estimates.mem.Evaluate(values));
  ExecItem item;
  item.name_ = spec.name;
  item.device_ = device.name();
  item.launch_ = launch;
  item.launch_var_values_ = std::move(launch_var_values);
  item.program_ = std::move(program);
  item.nodes_ = std::move(nodes);
  item.buffers_ = std::move(buffers);
  item.var_values_ = std::move(var_values);
  item.flops_ = static_cast<double>(ops);
  // As tinygrad: no more unique bytes than bytes loaded and stored.
  item.bytes_ = static_cast<double>(std::min(mem, lds));
  item.lds_ = static_cast<double>(lds);
  return item;
}

absl::StatusOr<ExecItem> ExecItem::ForCopy(std::vector<UOpPtr> nodes, std::vector<Buffer*> buffers,
                                           std::optional<AllReduceSpec> all_reduce) {
  if (nodes.size() != 2 || buffers.size() != 2 || buffers[0]->nbytes() != buffers[1]->nbytes()) {
    return absl::InternalError("a COPY takes two buffers of one size");
  }
  ExecItem item;
  item.name_ = all_reduce ? absl::StrCat("all_reduce ", buffers[0]->nbytes(), ", ", all_reduce->communicator,
                                         " ", OpName(all_reduce->op))
                          : absl::StrCat("copy ", buffers[0]->nbytes(), ", ", buffers[0]->device().name(),
                                         " <- ", buffers[1]->device().name());
  item.all_reduce_ = std::move(all_reduce);
  item.device_ = buffers[0]->device().name();
  item.bytes_ = item.lds_ = static_cast<double>(buffers[0]->nbytes());
  item.nodes_ = std::move(nodes);
  item.buffers_ = std::move(buffers);
  return item;
}

std::vector<Buffer*> ExecItem::BuffersWith(const BufferReplacements& replace) const {
  std::vector<Buffer*> buffers = buffers_;
  if (!replace.empty()) {
    for (size_t i = 0; i < buffers.size(); ++i) {
      if (auto it = replace.find(nodes_[i].get()); it != replace.end()) buffers[i] = it->second;
    }
  }
  return buffers;
}

KernelRun ExecItem::RunRecord(int num_buffers) const {
  KernelRun run;
  run.name = name_;
  run.device = device_;
  // The estimates are the recorded values' (a replay at another value reports those).
  run.flops = flops_;
  run.bytes = bytes_;
  run.lds = lds_;
  run.num_buffers = num_buffers;
  return run;
}

absl::StatusOr<StartedAllReduce> ExecItem::StartAllReduce(const BufferReplacements& replace) const {
  if (!all_reduce_) return absl::InternalError(absl::StrCat(name_, " is not an all-reduce"));
  std::vector<Buffer*> buffers = BuffersWith(replace);
  StartedAllReduce started;
  const auto start = std::chrono::steady_clock::now();
  UOPC_ASSIGN_OR_RETURN(Communicator * communicator, GetCommunicator(all_reduce_->communicator));
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[1]->ToBytes());
  UOPC_ASSIGN_OR_RETURN(started.pending_,
                        communicator->StartAllReduce(std::move(bytes), buffers[0]->dtype(), all_reduce_->op));
  started.output_ = buffers[0];
  started.run_ = RunRecord(static_cast<int>(buffers.size()));
  started.start_seconds_ = SecondsSince(start);
  return started;
}

absl::StatusOr<KernelRun> StartedAllReduce::Finish(const ExecOptions& options) {
  const auto start = std::chrono::steady_clock::now();
  UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, pending_->Wait());
  UOPC_RETURN_IF_ERROR(output_->CopyIn(bytes));
  if (options.timed) run_.run_seconds = start_seconds_ + SecondsSince(start);
  ReportRun(run_, options);
  return std::move(run_);
}

absl::StatusOr<KernelRun> ExecItem::Run(const BufferReplacements& replace, const ExecOptions& options) const {
  if (all_reduce_) {
    UOPC_ASSIGN_OR_RETURN(StartedAllReduce started, StartAllReduce(replace));
    return started.Finish(options);
  }
  std::vector<Buffer*> buffers = BuffersWith(replace);
  KernelRun run = RunRecord(static_cast<int>(buffers.size()));
  if (is_copy()) {
    auto start = std::chrono::steady_clock::now();
    UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[1]->ToBytes());
    UOPC_RETURN_IF_ERROR(buffers[0]->CopyIn(bytes));
    if (options.timed) run.run_seconds = SecondsSince(start);
  } else {
    std::vector<int64_t> var_values = var_values_;
    LaunchParams launch = launch_;
    if (options.var_values != nullptr) {
      const ProgramSpec& spec = program_->spec();
      for (size_t i = 0; i < spec.vars.size(); ++i) {
        if (auto it = options.var_values->find(spec.vars[i]); it != options.var_values->end())
          var_values[i] = it->second;
      }
      if (!spec.symbolic_launch_dims.empty()) {
        absl::flat_hash_map<std::string, int64_t> values = launch_var_values_;
        for (size_t i = 0; i < spec.vars.size(); ++i) values[spec.vars[i]] = var_values[i];
        for (auto& [name, value] : values) {
          if (auto it = options.var_values->find(name); it != options.var_values->end()) value = it->second;
        }
        UOPC_ASSIGN_OR_RETURN(launch, LaunchDims(spec, values));
      }
    }
    UOPC_RETURN_IF_ERROR(
        program_->Launch(buffers, var_values, launch, options.timed ? &run.run_seconds : nullptr));
  }
  ReportRun(run, options);
  return run;
}

}  // namespace uopc
