#include "runtime/realize.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "codegen/codegen.h"
#include "codegen/kernel.h"
#include "runtime/registry.h"
#include "runtime/search_driver.h"
#include "schedule/tensor_uop.h"
#include "uop/parallel_for.h"
#include "uop/print.h"
#include "uop/status_macros.h"
#include "uop/util.h"

namespace uopc {
namespace {

// "PYTHON": host memory holding the values tensors are made from (tinygrad keeps Python lists on a device of
// that name and COPYs them to the target device). It runs no kernels.
class HostDataDevice : public Device {
 public:
  HostDataDevice() : Device("PYTHON") {}
  Allocator& allocator() override { return allocator_; }
  const Compiler& compiler() const override { return compiler_; }
  const Renderer* renderer() const override { return nullptr; }
  absl::StatusOr<std::unique_ptr<Program>> LoadProgram(const ProgramSpec&, absl::string_view) override {
    return absl::FailedPreconditionError("the PYTHON device holds values; it runs no kernels");
  }

 private:
  HostAllocator allocator_;
  SourceCompiler compiler_;
};

absl::StatusOr<Device*> DeviceFor(const std::string& name) {
  static const bool registered = [] {
    RegisterDevice("PYTHON", []() -> absl::StatusOr<std::unique_ptr<Device>> {
      return std::unique_ptr<Device>(new HostDataDevice());
    });
    return true;
  }();
  (void)registered;
  return GetDevice(name);
}

struct CompiledKernel {
  UOpPtr ast;
  ProgramSpec spec;
  std::unique_ptr<Program> program;
  double compile_seconds = 0;
};

// A SINK item's kernel: its AST on the device of its first buffer.
struct KernelRequest {
  UOpPtr ast;
  Device* device;
};

// The per-process kernel cache: one program per (AST, device, opts on or off). Kernel names are numbered
// across the process, as tinygrad numbers repeated names, in the order the kernels are named.
//
// Any thread may ask for a kernel. The first to ask claims it (an entry in compilation) and compiles it
// outside the lock; others asking for it meanwhile wait for that compile, and retry on their own if it fails
// (an entry that failed is removed, so a later call sees the error again rather than a stale one).
// `CompileAll` compiles a schedule's missing kernels together on a thread pool: opts in parallel, names
// numbered in schedule order, then lowering, rendering and the device's compiler in parallel, so the
// programs and their names are those the kernels would get compiled one by one in that order.
class KernelCache {
 public:
  static KernelCache& Global() {
    static KernelCache* cache = new KernelCache();
    return *cache;
  }

  // How a kernel's opts are chosen: NOOPT, the BEAM width (0: the hand-coded opts), DEBUG for BEAM's output.
  struct OptChoice {
    bool noopt = false;
    int beam = 0;
    int debug = 0;
  };
  using Key = std::tuple<const UOp*, std::string, bool, int>;
  static Key KeyOf(const KernelRequest& r, const OptChoice& c) {
    return Key{r.ast.get(), r.device->name(), c.noopt, c.noopt ? 0 : c.beam};
  }

  // The kernel, compiled on this thread unless it is cached or in compilation elsewhere. `fresh` is true
  // for the first caller to get a newly compiled kernel.
  absl::StatusOr<std::shared_ptr<const CompiledKernel>> Get(const KernelRequest& request,
                                                            const OptChoice& choice, bool* fresh) {
    if (request.device->renderer() == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("device ", request.device->name(), " cannot run kernels"));
    }
    const Key key = KeyOf(request, choice);
    for (;;) {
      std::shared_ptr<Entry> entry;
      bool claimed = false;
      {
        std::lock_guard<std::mutex> lock(mu_);
        auto [it, inserted] = kernels_.try_emplace(key);
        if (inserted) it->second = std::make_shared<Entry>(request.ast);
        entry = it->second;
        claimed = inserted;
      }
      if (claimed) {
        auto start = std::chrono::steady_clock::now();
        absl::StatusOr<Kernel> kernel = Optimize(request, choice);
        absl::StatusOr<std::unique_ptr<CompiledKernel>> compiled =
            kernel.ok() ? Compile(request, *kernel, NextName(*kernel), start) : kernel.status();
        absl::Status status = compiled.ok() ? absl::OkStatus() : compiled.status();
        Publish(key, *entry, std::move(compiled));
        if (!status.ok()) return status;
      } else {
        entry->done.wait(false, std::memory_order_acquire);
        if (entry->kernel == nullptr)
          continue;  // its compile failed: compile it here, for this caller's error
      }
      *fresh = !entry->reported.exchange(true);
      return entry->kernel;
    }
  }

  // Forgets every kernel and restarts the name numbering (for tests; nothing may be compiling).
  void Clear() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      kernels_.clear();
    }
    std::lock_guard<std::mutex> lock(names_mu_);
    names_ = KernelNameCounter();
  }

  // Compiles the kernels of `requests` (in schedule order) that are neither cached nor in compilation, on
  // `threads` threads (0: oneTBB's default, one per core). A kernel that fails is left out of the cache; its
  // error is returned in `failures` under its key, for the caller to report where it would have compiled it.
  void CompileAll(const std::vector<KernelRequest>& requests, const OptChoice& choice, int threads,
                  absl::flat_hash_map<Key, absl::Status>* failures) {
    struct Job {
      KernelRequest request;
      Key key;
      std::shared_ptr<Entry> entry;
      std::chrono::steady_clock::time_point start;
      std::optional<Kernel> kernel;
      std::string name;
      absl::StatusOr<std::unique_ptr<CompiledKernel>> result = absl::UnknownError("not compiled");
      absl::Status status;
    };
    std::vector<Job> jobs;
    {
      std::lock_guard<std::mutex> lock(mu_);
      for (const KernelRequest& r : requests) {
        if (r.device->renderer() == nullptr) continue;  // Get reports it
        Key key = KeyOf(r, choice);
        auto [it, inserted] = kernels_.try_emplace(key);
        if (!inserted) continue;
        it->second = std::make_shared<Entry>(r.ast);
        Job& job = jobs.emplace_back();
        job.request = r;
        job.key = std::move(key);
        job.entry = it->second;
      }
    }
    if (jobs.empty()) return;
    // One kernel per task (uop/parallel_for.h).
    auto for_each_job = [&](absl::FunctionRef<void(Job&)> f) {
      ParallelFor(static_cast<int64_t>(jobs.size()), threads, [&](int64_t i) { f(jobs[i]); });
    };
    for_each_job([&](Job& job) {
      job.start = std::chrono::steady_clock::now();
      absl::StatusOr<Kernel> kernel = Optimize(job.request, choice);
      if (kernel.ok()) {
        job.kernel.emplace(*std::move(kernel));
      } else {
        job.result = kernel.status();
      }
    });
    {
      std::lock_guard<std::mutex> lock(names_mu_);
      for (Job& job : jobs) {
        if (job.kernel) job.name = names_.Next(job.kernel->BaseName());
      }
    }
    // Each kernel is published as soon as it is compiled, for threads waiting on it.
    for_each_job([&](Job& job) {
      if (job.kernel) job.result = Compile(job.request, *job.kernel, job.name, job.start);
      job.status = job.result.ok() ? absl::OkStatus() : job.result.status();
      Publish(job.key, *job.entry, std::move(job.result));
    });
    for (const Job& job : jobs) {
      if (!job.status.ok()) failures->emplace(job.key, job.status);
    }
  }

 private:
  struct Entry {
    explicit Entry(UOpPtr a) : ast(std::move(a)) {}
    UOpPtr ast;                                    // keeps the key's pointer valid
    std::atomic<bool> done{false};                 // set (release) after `kernel`; waiters wait on it
    std::shared_ptr<const CompiledKernel> kernel;  // set before `done`; null when the compile failed
    std::atomic<bool> reported{false};
  };

  // The kernel with its opts: NOOPT's none, BEAM's search winners, or the hand-coded ones.
  static absl::StatusOr<Kernel> Optimize(const KernelRequest& r, const OptChoice& choice) {
    CompileOptions options;
    options.optimize = !choice.noopt;
    if (!choice.noopt && choice.beam > 0) {
      UOPC_ASSIGN_OR_RETURN(DeviceBeamResult searched, BeamSearchOnDevice(r.ast, *r.device,
                                                                          DeviceBeamOptions::FromEnvironment(
                                                                              choice.beam, choice.debug)));
      options.opts = std::move(searched.opts);
    }
    return OptimizeKernel(r.ast, *r.device->renderer(), options);
  }

  std::string NextName(const Kernel& kernel) {
    std::lock_guard<std::mutex> lock(names_mu_);
    return names_.Next(kernel.BaseName());
  }

  // The optimized kernel's program, compiled for its device; `start` is when its compile began.
  static absl::StatusOr<std::unique_ptr<CompiledKernel>> Compile(
      const KernelRequest& request, const Kernel& kernel, const std::string& name,
      std::chrono::steady_clock::time_point start) {
    UOPC_ASSIGN_OR_RETURN(ProgramSpec spec, CompileOptimizedKernel(kernel, name));
    UOPC_ASSIGN_OR_RETURN(std::unique_ptr<Program> program, request.device->CreateProgram(spec));
    auto compiled = std::make_unique<CompiledKernel>();
    compiled->ast = request.ast;
    compiled->spec = std::move(spec);
    compiled->program = std::move(program);
    compiled->compile_seconds = SecondsSince(start);
    return compiled;
  }

  // Ends a compile: a failed one leaves the cache before its waiters wake.
  void Publish(const Key& key, Entry& entry, absl::StatusOr<std::unique_ptr<CompiledKernel>> compiled) {
    if (compiled.ok()) {
      entry.kernel = *std::move(compiled);
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      kernels_.erase(key);
    }
    entry.done.store(true, std::memory_order_release);
    entry.done.notify_all();
  }

  std::mutex mu_;
  absl::flat_hash_map<Key, std::shared_ptr<Entry>> kernels_;  // guarded by mu_
  std::mutex names_mu_;
  KernelNameCounter names_;  // guarded by names_mu_
};

std::function<void(const KernelRun&)>& Listener() {
  static auto* listener = new std::function<void(const KernelRun&)>();
  return *listener;
}

// The capture RunSchedule records into on this thread (ScopedRunCapture), or null.
thread_local CapturedRuns* active_capture = nullptr;

// A schedule's kernels compiled together on a thread pool before the first runs; a kernel that fails
// reports its error where the serial path would have compiled it (LowerScheduleItem). BEAM times
// candidates on the device: its kernels are searched one by one, as they first run.
absl::flat_hash_map<KernelCache::Key, absl::Status> CompileAhead(const Schedule& schedule,
                                                                 const KernelCache::OptChoice& choice,
                                                                 int threads) {
  absl::flat_hash_map<KernelCache::Key, absl::Status> failures;
  if (threads == 1 || (!choice.noopt && choice.beam != 0)) return failures;
  std::vector<KernelRequest> requests;
  for (const ScheduleItem& item : schedule.items) {
    if (item.ast->op() != Ops::SINK || item.bufs.empty()) continue;
    absl::StatusOr<Device*> device = DeviceFor(DeviceOf(item.bufs[0].get()));
    if (device.ok()) requests.push_back(KernelRequest{item.ast, *device});
  }
  if (requests.size() > 1) KernelCache::Global().CompileAll(requests, choice, threads, &failures);
  return failures;
}

// A schedule item as the ExecItem that runs it (tinygrad's lower_schedule_item), with the kernel it
// compiled (null for a copy) and whether this is that kernel's first use.
struct LoweredItem {
  ExecItem exec;
  std::shared_ptr<const CompiledKernel> kernel;
  bool fresh = false;
};

absl::StatusOr<LoweredItem> LowerScheduleItem(
    const ScheduleItem& item, const Schedule& schedule, const KernelCache::OptChoice& choice,
    const absl::flat_hash_map<KernelCache::Key, absl::Status>& compile_failures) {
  if (item.bufs.empty()) return absl::InternalError("a schedule item without buffers");
  std::vector<Buffer*> buffers;
  for (const UOpPtr& b : item.bufs) {
    UOPC_ASSIGN_OR_RETURN(Buffer * buffer, BufferStore::Global().GetOrAllocate(b));
    buffers.push_back(buffer);
  }
  if (item.ast->op() == Ops::COPY) {
    UOPC_ASSIGN_OR_RETURN(ExecItem exec,
                          ExecItem::ForCopy(item.bufs, std::move(buffers), AllReduceOf(item.ast->arg())));
    return LoweredItem{std::move(exec), nullptr, false};
  }
  if (item.ast->op() != Ops::SINK) {
    return absl::UnimplementedError(absl::StrCat("schedule items of op ", OpName(item.ast->op())));
  }
  Device& device = buffers[0]->device();
  const KernelRequest request{item.ast, &device};
  if (auto failed = compile_failures.find(KernelCache::KeyOf(request, choice));
      failed != compile_failures.end()) {
    return failed->second;
  }
  bool fresh = false;
  UOPC_ASSIGN_OR_RETURN(std::shared_ptr<const CompiledKernel> kernel,
                        KernelCache::Global().Get(request, choice, &fresh));
  const ProgramSpec& spec = kernel->spec;
  // The program's parameters, in its order.
  std::vector<UOpPtr> nodes;
  std::vector<Buffer*> params;
  for (int64_t g : spec.globals) {
    if (g < 0 || g >= static_cast<int64_t>(buffers.size())) {
      return absl::InternalError(
          absl::StrCat("kernel ", spec.name, " reads buffer ", g, " of ", buffers.size()));
    }
    nodes.push_back(item.bufs[g]);
    params.push_back(buffers[g]);
  }
  auto bound_value = [&](const std::string& name) -> absl::StatusOr<int64_t> {
    auto bound = std::find_if(schedule.var_vals.begin(), schedule.var_vals.end(),
                              [&](const auto& var_value) { return var_value.first->var_name() == name; });
    if (bound == schedule.var_vals.end()) {
      return absl::InvalidArgumentError(absl::StrCat("no value bound for variable ", name));
    }
    return bound->second;
  };
  std::vector<int64_t> var_values;
  for (const std::string& name : spec.vars) {
    UOPC_ASSIGN_OR_RETURN(var_values.emplace_back(), bound_value(name));
  }
  absl::flat_hash_map<std::string, int64_t> launch_var_values;
  for (const std::string& name : spec.launch_vars) {
    UOPC_ASSIGN_OR_RETURN(launch_var_values[name], bound_value(name));
  }
  // The ExecItem shares the cached kernel's ownership of its program.
  std::shared_ptr<Program> program(kernel, kernel->program.get());
  UOPC_ASSIGN_OR_RETURN(ExecItem exec,
                        ExecItem::ForProgram(std::move(program), device, std::move(nodes), std::move(params),
                                             std::move(var_values), std::move(launch_var_values)));
  return LoweredItem{std::move(exec), std::move(kernel), fresh};
}

// DEBUG=3's buffers and opts of a kernel's run; from 4 also its source and from 6 its uops, the first time.
std::string KernelDebugText(const ScheduleItem& item, const ProgramSpec& spec, bool fresh, int debug) {
  std::string text;
  if (debug >= 3) {
    for (size_t i = 0; i < item.bufs.size(); ++i) {
      absl::StrAppend(&text, absl::StrFormat("%3d: %-10s %8d %s\n", i, item.bufs[i]->dtype().ToString(),
                                             item.bufs[i]->arg().as_int(), DeviceOf(item.bufs[i].get())));
    }
    std::vector<std::string> opts;
    for (const Opt& o : spec.applied_opts) opts.push_back(o.ToString());
    absl::StrAppend(&text, "[", absl::StrJoin(opts, ", "), "]\n");
  }
  if (debug >= 4 && fresh) absl::StrAppend(&text, spec.src, "\n");
  if (debug >= 6 && fresh) {
    std::vector<const UOp*> uops;
    for (const UOpPtr& u : spec.uops) uops.push_back(u.get());
    absl::StrAppend(&text, PrintUOpsListing(uops), "\n");
  }
  return text;
}

// The all-reduces of a run that have started and not finished. Each finishes before the first later item
// that touches its output buffer, and all before the run returns; polled between items (where a communicator
// has no thread of its own, that is where its collectives advance), one that completed finishes then. Their
// collectives thus overlap the kernels in between. Used only from the thread that runs the schedule.
class AllReducesInFlight {
 public:
  // `done` receives each finished all-reduce's run.
  AllReducesInFlight(ExecOptions options, std::function<void(KernelRun)> done)
      : options_(options), done_(std::move(done)) {}

  // Starts `item`'s all-reduce, after finishing those whose output it reads or writes.
  absl::Status Start(const ExecItem& item, const BufferReplacements& replace) {
    UOPC_RETURN_IF_ERROR(FinishTouching(item, replace));
    UOPC_ASSIGN_OR_RETURN(StartedAllReduce started, item.StartAllReduce(replace));
    started_.push_back(std::move(started));
    return Poll();
  }

  // Finishes those whose output `item` reads or writes. Nothing to look up while none is in flight (every
  // item of a replay asks).
  absl::Status FinishTouching(const ExecItem& item, const BufferReplacements& replace) {
    if (started_.empty()) return absl::OkStatus();
    const std::vector<Buffer*> buffers = item.BuffersWith(replace);
    return FinishWhere([&](StartedAllReduce& s) -> absl::StatusOr<bool> {
      return std::find(buffers.begin(), buffers.end(), s.output()) != buffers.end();
    });
  }
  // Finishes those that completed.
  absl::Status Poll() {
    return FinishWhere([](StartedAllReduce& s) { return s.Ready(); });
  }
  absl::Status FinishAll() {
    return FinishWhere([](StartedAllReduce&) -> absl::StatusOr<bool> { return true; });
  }

 private:
  absl::Status FinishWhere(absl::FunctionRef<absl::StatusOr<bool>(StartedAllReduce&)> finish_now) {
    for (auto it = started_.begin(); it != started_.end();) {
      UOPC_ASSIGN_OR_RETURN(bool now, finish_now(*it));
      if (!now) {
        ++it;
        continue;
      }
      UOPC_ASSIGN_OR_RETURN(KernelRun run, it->Finish(options_));
      it = started_.erase(it);
      done_(std::move(run));
    }
    return absl::OkStatus();
  }

  ExecOptions options_;
  std::function<void(KernelRun)> done_;
  std::list<StartedAllReduce> started_;
};

}  // namespace

void ResetKernelCacheForTesting() { KernelCache::Global().Clear(); }

BufferStore& BufferStore::Global() {
  static BufferStore* store = new BufferStore();
  return *store;
}

absl::StatusOr<Buffer*> BufferStore::GetOrAllocate(const UOpPtr& buffer) {
  if (buffer == nullptr || buffer->op() != Ops::BUFFER || !buffer->arg().is_int()) {
    return absl::InvalidArgumentError("BufferStore takes BUFFER nodes");
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = entries_.find(buffer.get()); it != entries_.end()) return it->second.buffer.get();
  std::string device_name = DeviceOf(buffer.get());
  UOPC_ASSIGN_OR_RETURN(Device * device, DeviceFor(device_name));
  UOPC_ASSIGN_OR_RETURN(Buffer b, Buffer::Allocate(*device, buffer->dtype(), buffer->arg().as_int()));
  Entry entry{buffer, std::make_unique<Buffer>(std::move(b))};
  Buffer* out = entry.buffer.get();
  entries_.emplace(buffer.get(), std::move(entry));
  return out;
}

Buffer* BufferStore::Find(const UOp* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(buffer);
  return it == entries_.end() ? nullptr : it->second.buffer.get();
}

absl::Status BufferStore::Write(const UOpPtr& buffer, absl::Span<const uint8_t> bytes) {
  UOPC_ASSIGN_OR_RETURN(Buffer * b, GetOrAllocate(buffer));
  return b->CopyIn(bytes);
}

absl::StatusOr<std::vector<uint8_t>> BufferStore::Read(const UOpPtr& buffer) {
  Buffer* b = Find(buffer.get());
  if (b == nullptr) return absl::FailedPreconditionError("the buffer has no memory: it was never realized");
  return b->ToBytes();
}

void BufferStore::Collect() {
  std::lock_guard<std::mutex> lock(mu_);
  // A node only this store holds can never be named again (it is interned: an equal one would be this one).
  absl::erase_if(entries_, [](const auto& kv) { return kv.second.node.use_count() == 1; });
}

size_t BufferStore::size() {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

RealizeOptions RealizeOptions::FromEnvironment() {
  RealizeOptions options;
  options.debug = static_cast<int>(EnvInt("DEBUG", 0));
  options.noopt = EnvFlag("NOOPT");
  options.beam = static_cast<int>(EnvInt("BEAM", 0));
  options.compile_threads = static_cast<int>(EnvInt("UOPC_COMPILE_THREADS", options.compile_threads));
  return options;
}

void SetKernelRunListener(std::function<void(const KernelRun&)> listener) {
  Listener() = std::move(listener);
}

absl::StatusOr<std::vector<KernelRun>> RunSchedule(const Schedule& schedule, const RealizeOptions& options) {
  BufferStore::Global().Collect();
  const KernelCache::OptChoice choice{options.noopt, options.beam, options.debug};
  const absl::flat_hash_map<KernelCache::Key, absl::Status> compile_failures =
      CompileAhead(schedule, choice, options.compile_threads);
  std::vector<KernelRun> runs;
  auto report = [&](KernelRun run) {
    if (Listener()) Listener()(run);
    runs.push_back(std::move(run));
  };
  AllReducesInFlight in_flight({.debug = options.debug, .debug_out = options.debug_out}, report);
  for (const ScheduleItem& item : schedule.items) {
    UOPC_ASSIGN_OR_RETURN(LoweredItem lowered, LowerScheduleItem(item, schedule, choice, compile_failures));
    if (lowered.kernel != nullptr && options.debug >= 3) {
      EmitDebugText(KernelDebugText(item, lowered.kernel->spec, lowered.fresh, options.debug),
                    options.debug_out);
    }
    if (lowered.exec.is_all_reduce()) {
      UOPC_RETURN_IF_ERROR(in_flight.Start(lowered.exec, {}));
    } else {
      UOPC_RETURN_IF_ERROR(in_flight.FinishTouching(lowered.exec, {}));
      UOPC_ASSIGN_OR_RETURN(KernelRun run,
                            lowered.exec.Run({}, {.debug = options.debug, .debug_out = options.debug_out}));
      if (lowered.kernel != nullptr) {
        run.compile_seconds = lowered.fresh ? lowered.kernel->compile_seconds : 0;
        run.src = lowered.kernel->spec.src;
      }
      report(std::move(run));
      UOPC_RETURN_IF_ERROR(in_flight.Poll());
    }
    if (active_capture != nullptr) active_capture->Add(std::move(lowered.exec));
  }
  UOPC_RETURN_IF_ERROR(in_flight.FinishAll());
  return runs;
}

size_t CapturedRuns::kernel_count() const {
  return std::count_if(items_.begin(), items_.end(), [](const ExecItem& i) { return !i.is_copy(); });
}

std::vector<UOpPtr> CapturedRuns::Buffers() const {
  std::vector<UOpPtr> out;
  absl::flat_hash_set<const UOp*> seen;
  for (const ExecItem& item : items_) {
    for (const UOpPtr& n : item.nodes()) {
      if (seen.insert(n.get()).second) out.push_back(n);
    }
  }
  return out;
}

std::vector<std::string> CapturedRuns::Names() const {
  std::vector<std::string> out;
  for (const ExecItem& item : items_) out.push_back(item.is_copy() ? "copy" : item.name());
  return out;
}

absl::Status CapturedRuns::Replay(const absl::flat_hash_map<const UOp*, UOpPtr>& replace,
                                  double* kernel_seconds,
                                  const absl::flat_hash_map<std::string, int64_t>& var_values) const {
  // The replacements' memory, looked up once per replay.
  BufferReplacements replaced;
  for (const auto& [from, to] : replace) {
    Buffer* b = to == nullptr ? nullptr : BufferStore::Global().Find(to.get());
    if (b == nullptr) return absl::FailedPreconditionError("replay: a replacement buffer has no memory");
    if (from->op() != Ops::BUFFER || to->dtype() != from->dtype() || to->arg() != from->arg() ||
        DeviceOf(to.get()) != DeviceOf(from)) {
      return absl::InvalidArgumentError(absl::StrCat("replay: buffer ", from->dtype().ToString(), "[",
                                                     from->arg().ToString(), "] on ", DeviceOf(from),
                                                     " cannot be replaced by ", to->dtype().ToString(), "[",
                                                     to->arg().ToString(), "] on ", DeviceOf(to.get())));
    }
    replaced.emplace(from, b);
  }
  // Kernels are timed where that does not wait for each (Device::TimingWaits): a GPU's replay stays one
  // stream of launches. Decided per device before any thread starts.
  absl::flat_hash_map<std::string, bool> timed_on;
  for (const ExecItem& item : items_) {
    if (auto [it, added] = timed_on.try_emplace(item.device(), false); added) {
      absl::StatusOr<Device*> device = GetDevice(item.device());
      it->second = kernel_seconds != nullptr && device.ok() && !(*device)->TimingWaits();
    }
  }
  // All-reduces start where they stand and finish before the first item that touches their output
  // (AllReducesInFlight): the kernels between overlap their collectives.
  AllReducesInFlight in_flight({.timed = false}, [](KernelRun) {});
  // Runs items in order; adds their kernels' seconds to `*seconds`. With `in_flight` (on this thread only),
  // finishes the all-reduces each item needs first and polls the others after it.
  auto run_in_order = [&](absl::Span<const ExecItem* const> items, double* seconds,
                          AllReducesInFlight* in_flight) -> absl::Status {
    for (const ExecItem* item : items) {
      if (in_flight != nullptr) UOPC_RETURN_IF_ERROR(in_flight->FinishTouching(*item, replaced));
      UOPC_ASSIGN_OR_RETURN(KernelRun run,
                            item->Run(replaced, {.timed = timed_on.at(item->device()),
                                                 .var_values = var_values.empty() ? nullptr : &var_values}));
      if (!item->is_copy()) *seconds += run.run_seconds;
      if (in_flight != nullptr) UOPC_RETURN_IF_ERROR(in_flight->Poll());
    }
    return absl::OkStatus();
  };
  // Between two copies, a kernel touches only its own device's memory. Where such a stretch spans several
  // devices (sharded tensors), each device's kernels run in order on a thread of their own, all of them
  // concurrently, and the stretch ends when all have; its kernel time is the longest device's.
  double total = 0;
  for (size_t begin = 0; begin < items_.size();) {
    if (items_[begin].is_all_reduce()) {
      UOPC_RETURN_IF_ERROR(in_flight.Start(items_[begin], replaced));
      ++begin;
      continue;
    }
    size_t end = begin + 1;
    std::vector<std::string> devices = {items_[begin].device()};
    absl::flat_hash_map<std::string, std::vector<const ExecItem*>> by_device;
    by_device[items_[begin].device()].push_back(&items_[begin]);
    if (!items_[begin].is_copy()) {
      for (; end < items_.size() && !items_[end].is_copy(); ++end) {
        std::vector<const ExecItem*>& run = by_device[items_[end].device()];
        if (run.empty()) devices.push_back(items_[end].device());
        run.push_back(&items_[end]);
      }
    }
    if (devices.size() == 1) {
      double seconds = 0;
      UOPC_RETURN_IF_ERROR(run_in_order(by_device.at(devices[0]), &seconds, &in_flight));
      total += seconds;
      begin = end;
      continue;
    }
    // The threads' memory is free of all-reduces in flight before they start.
    for (size_t i = begin; i < end; ++i) {
      UOPC_RETURN_IF_ERROR(in_flight.FinishTouching(items_[i], replaced));
    }
    std::vector<double> seconds(devices.size(), 0);
    std::vector<absl::Status> statuses(devices.size());
    std::vector<std::thread> threads;
    for (size_t d = 1; d < devices.size(); ++d) {
      threads.emplace_back(
          [&, d] { statuses[d] = run_in_order(by_device.at(devices[d]), &seconds[d], nullptr); });
    }
    statuses[0] = run_in_order(by_device.at(devices[0]), &seconds[0], nullptr);
    for (std::thread& t : threads) t.join();
    for (const absl::Status& status : statuses) UOPC_RETURN_IF_ERROR(status);
    total += *std::max_element(seconds.begin(), seconds.end());
    begin = end;
  }
  UOPC_RETURN_IF_ERROR(in_flight.FinishAll());
  if (kernel_seconds != nullptr) *kernel_seconds = total;
  return absl::OkStatus();
}

ScopedRunCapture::ScopedRunCapture(CapturedRuns* runs) : previous_(active_capture) { active_capture = runs; }
ScopedRunCapture::~ScopedRunCapture() { active_capture = previous_; }

}  // namespace uopc
