#include "runtime/realize.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
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

struct DebugState {
  int64_t kernel_count = 0;
  double time_sum = 0;
};

void Emit(const RealizeOptions& options, const std::string& text) {
  if (options.debug_out != nullptr) {
    options.debug_out->append(text);
  } else {
    std::fputs(text.c_str(), stderr);
  }
}

}  // namespace

void ResetKernelCacheForTesting() { KernelCache::Global().Clear(); }

// One recorded item: a kernel (its program, with the buffers in its parameters' order) or, without a
// kernel, a copy from buffers[1] to buffers[0].
struct CapturedRuns::Item {
  std::shared_ptr<const CompiledKernel> kernel;
  std::vector<UOpPtr> nodes;  // the BUFFER nodes, which keep `buffers` allocated
  std::vector<Buffer*> buffers;
  std::vector<int64_t> var_values;
  LaunchParams launch;
};

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

void SetKernelRunListener(std::function<void(const KernelRun&)> listener) {
  Listener() = std::move(listener);
}

absl::StatusOr<std::vector<KernelRun>> RunSchedule(const Schedule& schedule, const RealizeOptions& options) {
  static DebugState* debug_state = new DebugState();
  BufferStore& store = BufferStore::Global();
  store.Collect();
  std::vector<KernelRun> runs;
  // The kernels compile together on a thread pool before the first runs; a kernel that fails reports its
  // error where the serial path would have compiled it.
  absl::flat_hash_map<KernelCache::Key, absl::Status> compile_failures;
  const KernelCache::OptChoice choice{options.noopt, options.beam, options.debug};
  // BEAM times candidates on the device: its kernels are searched one by one, as they first run.
  if (options.compile_threads != 1 && (options.noopt || options.beam == 0)) {
    std::vector<KernelRequest> requests;
    for (const ScheduleItem& item : schedule.items) {
      if (item.ast->op() != Ops::SINK || item.bufs.empty()) continue;
      absl::StatusOr<Device*> device = DeviceFor(DeviceOf(item.bufs[0].get()));
      if (device.ok()) requests.push_back(KernelRequest{item.ast, *device});
    }
    if (requests.size() > 1) {
      KernelCache::Global().CompileAll(requests, choice, options.compile_threads, &compile_failures);
    }
  }
  for (const ScheduleItem& item : schedule.items) {
    if (item.bufs.empty()) return absl::InternalError("a schedule item without buffers");
    std::vector<Buffer*> buffers;
    for (const UOpPtr& b : item.bufs) {
      UOPC_ASSIGN_OR_RETURN(Buffer * buffer, store.GetOrAllocate(b));
      buffers.push_back(buffer);
    }
    KernelRun run;
    if (item.ast->op() == Ops::COPY) {
      if (buffers.size() != 2 || buffers[0]->nbytes() != buffers[1]->nbytes()) {
        return absl::InternalError("a COPY takes two buffers of one size");
      }
      auto start = std::chrono::steady_clock::now();
      UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[1]->ToBytes());
      UOPC_RETURN_IF_ERROR(buffers[0]->CopyIn(bytes));
      if (active_capture != nullptr) {
        CapturedRuns::Item& captured = active_capture->items_.emplace_back();
        captured.nodes = item.bufs;
        captured.buffers = buffers;
      }
      run.run_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      run.name = absl::StrCat("copy ", buffers[0]->nbytes(), ", ", buffers[0]->device().name(), " <- ",
                              buffers[1]->device().name());
      run.device = buffers[0]->device().name();
      run.bytes = run.lds = static_cast<double>(buffers[0]->nbytes());
    } else if (item.ast->op() == Ops::SINK) {
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
      std::vector<Buffer*> params;
      for (int64_t g : spec.globals) {
        if (g < 0 || g >= static_cast<int64_t>(buffers.size())) {
          return absl::InternalError(
              absl::StrCat("kernel ", spec.name, " reads buffer ", g, " of ", buffers.size()));
        }
        params.push_back(buffers[g]);
      }
      std::vector<int64_t> var_values;
      for (const std::string& name : spec.vars) {
        bool found = false;
        for (const auto& [var, value] : schedule.var_vals) {
          if (var->var_name() == name) {
            var_values.push_back(value);
            found = true;
            break;
          }
        }
        if (!found) return absl::InvalidArgumentError(absl::StrCat("no value bound for variable ", name));
      }
      LaunchParams launch;
      for (size_t i = 0; spec.global_size && i < spec.global_size->size() && i < 3; ++i) {
        launch.global_size[i] = (*spec.global_size)[i];
      }
      for (size_t i = 0; spec.local_size && i < spec.local_size->size() && i < 3; ++i) {
        launch.local_size[i] = (*spec.local_size)[i];
      }
      // The estimates for this run's variable values.
      absl::flat_hash_map<std::string, int64_t> values;
      for (size_t i = 0; i < spec.vars.size(); ++i) values[spec.vars[i]] = var_values[i];
      UOPC_ASSIGN_OR_RETURN(int64_t ops, spec.estimates.ops.Evaluate(values));
      UOPC_ASSIGN_OR_RETURN(int64_t lds, spec.estimates.lds.Evaluate(values));
      UOPC_ASSIGN_OR_RETURN(int64_t mem, spec.estimates.mem.Evaluate(values));
      double seconds = 0;
      UOPC_RETURN_IF_ERROR(kernel->program->Launch(params, var_values, launch, &seconds));
      if (active_capture != nullptr) {
        CapturedRuns::Item& captured = active_capture->items_.emplace_back();
        captured.kernel = kernel;
        for (int64_t g : spec.globals) captured.nodes.push_back(item.bufs[g]);
        captured.buffers = params;
        captured.var_values = std::move(var_values);
        captured.launch = launch;
      }
      run.name = spec.name;
      run.device = device.name();
      run.compile_seconds = fresh ? kernel->compile_seconds : 0;
      run.run_seconds = seconds;
      run.flops = static_cast<double>(ops);
      // As tinygrad: no more unique bytes than bytes loaded and stored.
      run.bytes = static_cast<double>(std::min(mem, lds));
      run.lds = static_cast<double>(lds);
      run.src = spec.src;
      if (options.debug >= 3) {
        std::string text;
        for (size_t i = 0; i < item.bufs.size(); ++i) {
          absl::StrAppend(&text, absl::StrFormat("%3d: %-10s %8d %s\n", i, item.bufs[i]->dtype().ToString(),
                                                 item.bufs[i]->arg().as_int(), DeviceOf(item.bufs[i].get())));
        }
        std::vector<std::string> opts;
        for (const Opt& o : spec.applied_opts) opts.push_back(o.ToString());
        absl::StrAppend(&text, "[", absl::StrJoin(opts, ", "), "]\n");
        Emit(options, text);
      }
      if (options.debug >= 4 && fresh) Emit(options, spec.src + "\n");
      if (options.debug >= 6 && fresh) {
        std::vector<const UOp*> uops;
        for (const UOpPtr& u : spec.uops) uops.push_back(u.get());
        Emit(options, PrintUOpsListing(uops) + "\n");
      }
    } else {
      return absl::UnimplementedError(absl::StrCat("schedule items of op ", OpName(item.ast->op())));
    }
    run.num_buffers = static_cast<int>(item.bufs.size());
    run.mem_used = DeviceMemoryUsed();
    if (options.debug >= 2) {
      debug_state->kernel_count += 1;
      debug_state->time_sum += run.run_seconds;
      Emit(options, KernelRunLine(run, debug_state->kernel_count, debug_state->time_sum) + "\n");
    }
    if (Listener()) Listener()(run);
    runs.push_back(std::move(run));
  }
  return runs;
}

CapturedRuns::CapturedRuns() = default;
CapturedRuns::~CapturedRuns() = default;
CapturedRuns::CapturedRuns(CapturedRuns&&) noexcept = default;
CapturedRuns& CapturedRuns::operator=(CapturedRuns&&) noexcept = default;

size_t CapturedRuns::size() const { return items_.size(); }

size_t CapturedRuns::kernel_count() const {
  return std::count_if(items_.begin(), items_.end(), [](const Item& i) { return i.kernel != nullptr; });
}

std::vector<UOpPtr> CapturedRuns::Buffers() const {
  std::vector<UOpPtr> out;
  absl::flat_hash_set<const UOp*> seen;
  for (const Item& item : items_) {
    for (const UOpPtr& n : item.nodes) {
      if (seen.insert(n.get()).second) out.push_back(n);
    }
  }
  return out;
}

std::vector<std::string> CapturedRuns::Names() const {
  std::vector<std::string> out;
  for (const Item& item : items_) out.push_back(item.kernel ? item.kernel->spec.name : "copy");
  return out;
}

absl::Status CapturedRuns::Replay(const absl::flat_hash_map<const UOp*, UOpPtr>& replace,
                                  double* kernel_seconds) const {
  // The replacements' memory, looked up once per replay.
  absl::flat_hash_map<const UOp*, Buffer*> replaced;
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
  double total = 0;
  std::vector<Buffer*> buffers;
  for (const Item& item : items_) {
    buffers = item.buffers;
    if (!replaced.empty()) {
      for (size_t i = 0; i < buffers.size(); ++i) {
        if (auto it = replaced.find(item.nodes[i].get()); it != replaced.end()) buffers[i] = it->second;
      }
    }
    if (item.kernel == nullptr) {
      UOPC_ASSIGN_OR_RETURN(std::vector<uint8_t> bytes, buffers[1]->ToBytes());
      UOPC_RETURN_IF_ERROR(buffers[0]->CopyIn(bytes));
      continue;
    }
    double seconds = 0;
    UOPC_RETURN_IF_ERROR(item.kernel->program->Launch(buffers, item.var_values, item.launch,
                                                      kernel_seconds != nullptr ? &seconds : nullptr));
    total += seconds;
  }
  if (kernel_seconds != nullptr) *kernel_seconds = total;
  return absl::OkStatus();
}

ScopedRunCapture::ScopedRunCapture(CapturedRuns* runs) : previous_(active_capture) { active_capture = runs; }
ScopedRunCapture::~ScopedRunCapture() { active_capture = previous_; }

}  // namespace uopc
