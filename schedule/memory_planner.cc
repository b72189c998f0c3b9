// Buffer reuse across a schedule (tinygrad's _internal_memory_planner in engine/memory.py, without
// sub-allocation): each buffer lives from the first kernel that uses it to the last; a buffer opened after
// another of the same device, dtype and size was freed takes that one's memory.
#include <algorithm>
#include <tuple>
#include <vector>

#include "schedule/internal.h"

namespace uopc::schedule_internal {

absl::flat_hash_map<const UOp*, UOpPtr> PlanMemory(const std::vector<ScheduleItem>& items,
                                                   const absl::flat_hash_set<const UOp*>& protected_bufs) {
  absl::flat_hash_map<const UOp*, std::pair<int, int>> lifetime;  // first and last use
  std::vector<const UOp*> order;
  for (int i = 0; i < static_cast<int>(items.size()); ++i) {
    for (const UOpPtr& b : items[i].bufs) {
      if (protected_bufs.contains(b.get())) continue;
      auto [it, inserted] = lifetime.try_emplace(b.get(), i, i);
      if (inserted) order.push_back(b.get());
      it->second.second = i;
    }
  }
  // Events sorted by time, frees before opens at the same time (as Python's sort of (time, is_open)).
  struct Event {
    int time;
    bool open;
    int seq;
    const UOp* buf;
  };
  std::vector<Event> events;
  int seq = 0;
  for (const UOp* b : order) events.push_back({lifetime[b].first, true, seq++, b});
  for (const UOp* b : order) events.push_back({lifetime[b].second + 1, false, seq++, b});
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.time, a.open) < std::tie(b.time, b.open);
  });
  using Key = std::tuple<std::string, DType, int64_t>;
  absl::flat_hash_map<Key, std::vector<const UOp*>> free_bufs;
  absl::flat_hash_map<const UOp*, const UOp*> assigned;
  for (const Event& e : events) {
    Key key{DeviceOf(e.buf), e.buf->dtype(), e.buf->arg().as_int() * e.buf->dtype().itemsize()};
    if (e.open) {
      std::vector<const UOp*>& pool = free_bufs[key];
      if (pool.empty()) {
        assigned[e.buf] = e.buf;
      } else {
        assigned[e.buf] = pool.back();
        pool.pop_back();
      }
    } else {
      free_bufs[key].push_back(assigned.at(e.buf));
    }
  }
  absl::flat_hash_map<const UOp*, UOpPtr> replace;
  for (const auto& [buf, target] : assigned) {
    if (buf != target) replace[buf] = target->ref();
  }
  return replace;
}

}  // namespace uopc::schedule_internal
