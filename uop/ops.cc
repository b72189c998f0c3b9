#include "uop/ops.h"

#include "absl/container/flat_hash_map.h"

namespace uopc {
namespace {

constexpr absl::string_view kOpNames[] = {
#define UOPC_OP_NAME(name) #name,
    UOPC_FOR_EACH_OP(UOPC_OP_NAME)
#undef UOPC_OP_NAME
};
static_assert(sizeof(kOpNames) / sizeof(kOpNames[0]) == kNumOps);
static_assert(kNumOps <= 128, "OpSet holds 128 ops");

}  // namespace

absl::string_view OpName(Ops op) {
  int i = static_cast<int>(op);
  return i >= 0 && i < kNumOps ? kOpNames[i] : absl::string_view("<invalid op>");
}

std::optional<Ops> OpFromName(absl::string_view name) {
  static const auto* const kByName = [] {
    auto* m = new absl::flat_hash_map<absl::string_view, Ops>();
    for (int i = 0; i < kNumOps; ++i) m->emplace(kOpNames[i], static_cast<Ops>(i));
    return m;
  }();
  auto it = kByName->find(name);
  if (it == kByName->end()) return std::nullopt;
  return it->second;
}

}  // namespace uopc
