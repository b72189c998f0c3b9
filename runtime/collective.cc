#include "runtime/collective.h"

#include <memory>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "uop/status_macros.h"

namespace uopc {
namespace {

constexpr absl::string_view kAllReduce = "all_reduce";

// What a communicator without a non-blocking all-reduce starts: one already complete.
class CompletedAllReduce : public PendingAllReduce {
 public:
  explicit CompletedAllReduce(std::vector<uint8_t> bytes) : bytes_(std::move(bytes)) {}
  absl::StatusOr<bool> Test() override { return true; }
  absl::StatusOr<std::vector<uint8_t>> Wait() override { return std::move(bytes_); }

 private:
  std::vector<uint8_t> bytes_;
};

struct Entry {
  CommunicatorFactory factory;
  std::unique_ptr<Communicator> communicator;
};

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, Entry> entries;  // guarded by mutex
};

// Never destroyed: a communicator may be used from static destructors.
Registry& TheRegistry() {
  static Registry* registry = new Registry();
  return *registry;
}

}  // namespace

absl::StatusOr<std::unique_ptr<PendingAllReduce>> Communicator::StartAllReduce(std::vector<uint8_t> bytes,
                                                                               DType dtype, Ops op) {
  UOPC_RETURN_IF_ERROR(AllReduce(absl::MakeSpan(bytes), dtype, op));
  return std::make_unique<CompletedAllReduce>(std::move(bytes));
}

bool RegisterCommunicator(absl::string_view name, CommunicatorFactory factory) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  Entry& entry = registry.entries[name];
  if (entry.communicator != nullptr) return false;
  entry.factory = std::move(factory);
  return true;
}

absl::StatusOr<Communicator*> GetCommunicator(absl::string_view name) {
  Registry& registry = TheRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.entries.find(name);
  if (it == registry.entries.end()) {
    return absl::NotFoundError(absl::StrCat("no communicator \"", name, "\" is linked into this program",
                                            name == "MPI" ? ": add //runtime:mpi to its deps" : ""));
  }
  Entry& entry = it->second;
  if (entry.communicator == nullptr) {
    UOPC_ASSIGN_OR_RETURN(entry.communicator, entry.factory());
    if (entry.communicator == nullptr) {
      return absl::InternalError(absl::StrCat("the factory of communicator ", name, " made nothing"));
    }
  }
  return entry.communicator.get();
}

Arg AllReduceArg(absl::string_view communicator, Ops op) {
  return Arg(Arg::Tuple{Arg(std::string(kAllReduce)), Arg(std::string(communicator)), Arg(op)});
}

std::optional<AllReduceSpec> AllReduceOf(const Arg& copy_arg) {
  if (!copy_arg.is_tuple() || copy_arg.size() != 3 || !copy_arg[0].is_string() ||
      copy_arg[0].as_string() != kAllReduce || !copy_arg[1].is_string() || !copy_arg[2].is_op()) {
    return std::nullopt;
  }
  return AllReduceSpec{copy_arg[1].as_string(), copy_arg[2].as_op()};
}

}  // namespace uopc
