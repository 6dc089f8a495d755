#include "workbook/profiler/profile.h"

#include "kineto_meaning.h"
#include "saturating.h"
#include "workbook/profiler/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace workbook {

std::string_view category_name(Category category) {
  if (category == Category::memory) return "[memory]";
  for (const auto& row : detail::kKinetoCategories)
    if (row.category == category) return row.name;
  return "other";
}

std::string_view device_type_name(DeviceType type) { return type == DeviceType::cpu ? "cpu" : "cuda"; }

std::string_view device_work_name(DeviceWork work) {
  for (const auto& row : detail::kKinetoCategories)
    if (row.on_device && row.work == work) return row.name;
  return "kernel";
}

namespace {

// Compressed rows from (owner, id) pairs given in increasing id order: each owner's ids come out
// in start order, with no per-owner vector.
template <typename OwnerOf>
void fill_id_lists(std::size_t n, OwnerOf owner_of, std::vector<std::uint32_t>& start,
                   std::vector<std::uint32_t>& ids) {
  constexpr std::uint32_t none = ~std::uint32_t(0);
  start.assign(n + 1, 0);
  for (std::size_t id = 0; id < n; ++id)
    if (const std::uint32_t owner = owner_of(id); owner != none) ++start[owner + 1];
  for (std::size_t k = 0; k < n; ++k) start[k + 1] += start[k];
  ids.assign(start[n], 0);
  std::vector<std::uint32_t> next(start.begin(), start.end() - 1);
  for (std::size_t id = 0; id < n; ++id)
    if (const std::uint32_t owner = owner_of(id); owner != none) ids[next[owner]++] = std::uint32_t(id);
}

}  // namespace

Profile::Profile(std::vector<Event> events) : events_(std::move(events)) {
  // Ids are kept in 32 bits (the tree's arrays take 4 bytes an id): 4 billion events would need
  // some 500 GB as Events anyway.
  if (events_.size() >= kNone) throw std::length_error("a profile holds fewer than 2^32 - 1 events");
  auto starts_first = [](const Event& a, const Event& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  };
  // A recorder's depth-first walk is usually in order already: then nothing moves.
  if (!std::is_sorted(events_.begin(), events_.end(), starts_first)) {
    std::vector<std::size_t> order(events_.size());
    std::iota(order.begin(), order.end(), 0);
    // Stable: events that start and end together keep the order they were recorded in, which
    // puts a parent before a child of the same interval.
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return starts_first(events_[a], events_[b]); });
    std::vector<Event> sorted;
    sorted.reserve(events_.size());
    for (auto i : order) sorted.push_back(std::move(events_[i]));
    events_ = std::move(sorted);
  }
  std::vector<std::uint32_t> parent = host_parents();
  std::vector<std::uint32_t> kernel_owner = link_device_work(parent);
  merge_duplicates(parent, kernel_owner);
  // Children in id order are children in start order (device work after its launch's host children
  // when it starts later, as before).
  fill_id_lists(
      events_.size(), [&](std::size_t id) { return parent[id]; }, children_.start, children_.ids);
  fill_id_lists(
      events_.size(), [&](std::size_t id) { return kernel_owner[id]; }, kernels_.start, kernels_.ids);
  parent_ = std::move(parent);
}

std::vector<std::uint32_t> Profile::host_parents() const {
  std::vector<std::uint32_t> parent(events_.size(), kNone);
  // Host events nest by interval per thread, exactly as _populate_cpu_children does: an event
  // is a child only when fully inside; memory instants join the innermost open event.
  std::unordered_map<std::uint64_t, std::vector<EventId>> open_per_thread;
  for (EventId id = 0; id < events_.size(); ++id) {
    const Event& e = events_[id];
    if (e.on_device()) continue;
    const bool instant = e.category == Category::memory;
    auto& open = open_per_thread[e.thread];
    while (!open.empty()) {
      const Event& p = events_[open.back()];
      const bool outside = instant ? e.start_ns > p.end_ns : (e.start_ns >= p.end_ns || e.end_ns > p.end_ns);
      if (!outside) break;
      open.pop_back();
    }
    if (!open.empty()) parent[id] = std::uint32_t(open.back());
    if (!instant) open.push_back(id);
  }
  return parent;
}

std::vector<std::uint32_t> Profile::link_device_work(std::vector<std::uint32_t>& parent) const {
  // Device activity hangs under the runtime call with its correlation id and belongs to the op
  // that made that call: the innermost host event around the launch that is not itself a
  // runtime call (what Kineto's linked activity is when Python records). Without a launch in the
  // trace, it belongs to the op with its External id. Returns each event's owner (kNone for none).
  std::vector<std::uint32_t> kernel_owner(events_.size(), kNone);
  std::unordered_map<std::int64_t, EventId> launch_by_correlation;
  // One op per External id, the last recorded (as a Python dict keyed by the id would keep): ids
  // shared by many ops in a corrupt trace must not hand every kernel to every op.
  std::unordered_map<std::int64_t, EventId> op_by_external_id;
  for (EventId id = 0; id < events_.size(); ++id) {
    const Event& e = events_[id];
    if (!e.on_host()) continue;
    if (e.category == Category::runtime) {
      if (e.correlation != 0) launch_by_correlation.emplace(e.correlation, id);
    } else if (e.external_id != 0) {
      op_by_external_id[e.external_id] = id;
    }
  }
  // The op a runtime call belongs to: its nearest ancestor that is not itself a runtime call,
  // remembered per call so that nested runtime calls are walked once, not once per kernel.
  std::unordered_map<EventId, std::uint32_t> owner_of_runtime;
  const auto owner_of = [&](EventId runtime_call) {
    std::vector<EventId> walked;
    std::uint32_t at = std::uint32_t(runtime_call), owner = kNone;
    for (;;) {
      const auto known = owner_of_runtime.find(at);
      if (known != owner_of_runtime.end()) {
        owner = known->second;
        break;
      }
      walked.push_back(at);
      at = parent[at];
      if (at == kNone || events_[at].category != Category::runtime) {
        owner = at;
        break;
      }
    }
    for (EventId w : walked) owner_of_runtime.emplace(w, owner);
    return owner;
  };
  for (EventId id = 0; id < events_.size(); ++id) {
    const Event& e = events_[id];
    if (!e.on_device()) continue;
    auto launch = e.correlation != 0 ? launch_by_correlation.find(e.correlation) : launch_by_correlation.end();
    if (launch != launch_by_correlation.end()) {
      parent[id] = std::uint32_t(launch->second);
      kernel_owner[id] = owner_of(launch->second);
      continue;
    }
    auto op = e.external_id != 0 ? op_by_external_id.find(e.external_id) : op_by_external_id.end();
    if (op != op_by_external_id.end()) kernel_owner[id] = std::uint32_t(op->second);
  }
  return kernel_owner;
}

void Profile::merge_duplicates(std::vector<std::uint32_t>& parent, std::vector<std::uint32_t>& kernel_owner) {
  const std::size_t n = events_.size();
  // Host children per event, kept up to date as children fold (counting them at every test
  // made a parent with 10^5 same-named children quadratic).
  std::vector<std::uint32_t> host_children(n, 0);
  for (EventId id = 0; id < n; ++id)
    if (parent[id] != kNone && events_[id].on_host()) ++host_children[parent[id]];
  // _remove_dup_nodes: an only host child with its parent's name folds into the parent, which
  // takes its children and its kernels (its own kernels are dropped, as Python's assignment
  // drops them). Parents come before host children, so chains fold upwards; a removed event's
  // parent is final when it is removed, so one step up from it reaches a kept event.
  // Kernels move as sets: `kernel_set[e]` names whose original kernels e holds now.
  std::vector<bool> removed(n, false);
  std::vector<std::uint32_t> kernel_set(n);
  std::iota(kernel_set.begin(), kernel_set.end(), 0);
  for (EventId id = 0; id < n; ++id) {
    if (parent[id] == kNone || !events_[id].on_host()) continue;
    if (removed[parent[id]]) parent[id] = parent[parent[id]];  // the folded parent's children moved up
    const std::uint32_t p = parent[id];
    if (host_children[p] != 1 || events_[p].name != events_[id].name) continue;
    removed[id] = true;
    ++merged_;
    host_children[p] = host_children[id];
    kernel_set[p] = kernel_set[id];
  }
  if (merged_ == 0) return;
  // Memory instants and device work whose parent folded move up too (device work may start
  // before the launch that folded, so this is a pass of its own).
  for (EventId id = 0; id < n; ++id)
    if (parent[id] != kNone && removed[parent[id]]) parent[id] = parent[parent[id]];
  std::vector<std::uint32_t> holder(n, kNone);  // the kept event holding each kernel set
  for (EventId id = 0; id < n; ++id)
    if (!removed[id]) holder[kernel_set[id]] = std::uint32_t(id);
  for (EventId id = 0; id < n; ++id)
    if (kernel_owner[id] != kNone) kernel_owner[id] = holder[kernel_owner[id]];
  // Ids close up over the removed events.
  std::vector<std::uint32_t> new_id(n, kNone);
  std::uint32_t next = 0;
  for (EventId id = 0; id < n; ++id)
    if (!removed[id]) new_id[id] = next++;
  auto renumbered = [&](std::uint32_t id) { return id == kNone ? kNone : new_id[id]; };
  for (EventId id = 0; id < n; ++id) {
    if (removed[id]) continue;
    const std::uint32_t to = new_id[id];
    if (to != id) events_[to] = std::move(events_[id]);  // a self-move would empty the strings
    parent[to] = renumbered(parent[id]);
    kernel_owner[to] = renumbered(kernel_owner[id]);
  }
  events_.resize(next);
  parent.resize(next);
  kernel_owner.resize(next);
}

std::optional<EventId> Profile::parent(EventId id) const {
  const std::uint32_t p = parent_.at(id);
  return p == kNone ? std::nullopt : std::optional<EventId>(p);
}

std::vector<EventId> Profile::find(std::string_view name) const {
  std::vector<EventId> ids;
  for (EventId id = 0; id < events_.size(); ++id)
    if (events_[id].name == name) ids.push_back(id);
  return ids;
}

std::vector<EventId> Profile::find_prefix(std::string_view prefix) const {
  std::vector<EventId> ids;
  for (EventId id = 0; id < events_.size(); ++id)
    if (std::string_view(events_[id].name).substr(0, prefix.size()) == prefix) ids.push_back(id);
  return ids;
}

std::size_t Profile::count(std::string_view name) const { return find(name).size(); }

std::vector<EventId> Profile::of_category(Category category) const {
  std::vector<EventId> ids;
  for (EventId id = 0; id < events_.size(); ++id)
    if (events_[id].category == category) ids.push_back(id);
  return ids;
}

std::vector<EventId> Profile::roots() const {
  std::vector<EventId> ids;
  for (EventId id = 0; id < events_.size(); ++id)
    if (parent_[id] == kNone) ids.push_back(id);
  return ids;
}

std::vector<EventId> Profile::descendants(EventId id) const {
  std::vector<EventId> out;
  const EventIds first = children(id);
  std::vector<EventId> stack(first.rbegin(), first.rend());
  while (!stack.empty()) {
    EventId next = stack.back();
    stack.pop_back();
    out.push_back(next);
    const EventIds below = children_.of(next);
    stack.insert(stack.end(), below.rbegin(), below.rend());
  }
  return out;
}

std::vector<EventId> Profile::under(EventId id, std::string_view name) const {
  std::vector<EventId> out;
  for (EventId d : descendants(id))
    if (events_[d].name == name) out.push_back(d);
  return out;
}

std::size_t Profile::count_under(EventId id, std::string_view name) const { return under(id, name).size(); }

bool Profile::has_chain(EventId id, const std::vector<std::string_view>& names) const {
  if (names.empty()) return true;
  for (EventId start : under(id, names.front())) {
    EventId at = start;
    bool ok = true;
    for (std::size_t k = 1; k < names.size() && ok; ++k) {
      ok = false;
      for (EventId c : children_.of(at)) {
        if (events_[c].name == names[k]) {
          at = c;
          ok = true;
          break;
        }
      }
    }
    if (ok) return true;
  }
  return false;
}

int Profile::depth(EventId id) const {
  int d = 0;
  for (std::uint32_t p = parent_.at(id); p != kNone; p = parent_[p]) ++d;
  return d;
}

std::int64_t Profile::self_ns(EventId id) const {
  // Saturating: overlapping children near the end of int64's range must not wrap around.
  std::int64_t self = total_ns(id);
  for (EventId c : children_.of(id))
    if (events_[c].on_host()) self = detail::sat_sub(self, total_ns(c));
  return self;
}

std::vector<bool> Profile::unattributed_memory() const {
  // Python's MemRecordsAcc: a memory record belongs to every host event (any thread) whose
  // closed interval [start, end] holds its time stamp; the others stand alone as "[memory]".
  std::vector<EventId> records;
  for (EventId id = 0; id < events_.size(); ++id)
    if (events_[id].category == Category::memory) records.push_back(id);
  std::vector<int> cover(records.size() + 1, 0);
  auto at_or_after = [&](std::int64_t t) {
    return std::lower_bound(records.begin(), records.end(), t,
                            [&](EventId r, std::int64_t v) { return events_[r].start_ns < v; }) -
           records.begin();
  };
  auto after = [&](std::int64_t t) {
    return std::upper_bound(records.begin(), records.end(), t,
                            [&](std::int64_t v, EventId r) { return v < events_[r].start_ns; }) -
           records.begin();
  };
  if (!records.empty()) {
    for (const Event& e : events_) {
      if (!e.on_host()) continue;
      ++cover[std::size_t(at_or_after(e.start_ns))];
      --cover[std::size_t(after(e.end_ns))];
    }
  }
  std::vector<bool> alone(events_.size(), false);
  int open = 0;
  for (std::size_t k = 0; k < records.size(); ++k) {
    open += cover[k];
    alone[records[k]] = open == 0;
  }
  return alone;
}

void Profile::for_each_stats(const std::function<void(EventId, const EventStats&)>& visit) const {
  const std::size_t n = events_.size();
  // Prefix sums of memory records in time order (events_ is sorted by start).
  // 128-bit sums: byte counts come from the trace and may be anything.
  std::vector<std::int64_t> times;
  std::vector<__int128> cpu_bytes{0}, device_bytes{0};
  for (const Event& e : events_) {
    if (e.category != Category::memory) continue;
    times.push_back(e.start_ns);
    cpu_bytes.push_back(cpu_bytes.back() + (e.device_type == DeviceType::cpu ? e.bytes : 0));
    device_bytes.push_back(device_bytes.back() + (e.device_type == DeviceType::cpu ? 0 : e.bytes));
  }
  // The CPU and device bytes allocated (net) while a host event ran, any thread.
  const auto memory_of = [&](const Event& e) {
    const auto lo = std::lower_bound(times.begin(), times.end(), e.start_ns) - times.begin();
    const auto hi = std::upper_bound(times.begin(), times.end(), e.end_ns) - times.begin();
    return std::pair{detail::saturate(cpu_bytes[std::size_t(hi)] - cpu_bytes[std::size_t(lo)]),
                     detail::saturate(device_bytes[std::size_t(hi)] - device_bytes[std::size_t(lo)])};
  };
  const auto self_device_of = [&](EventId id) {
    std::int64_t sum = 0;
    for (EventId k : kernels_.of(id)) sum = detail::sat_add(sum, events_[k].duration_ns());
    return sum;
  };
  // A host event's device total is its own kernels plus its host children's totals: summed
  // backwards, every child is complete before its parent needs it (no recursion, whatever the
  // depth). The one number per event that must travel up the tree.
  std::vector<std::int64_t> device_total(n, 0);
  for (EventId id = n; id-- > 0;) {
    if (!events_[id].on_host()) continue;
    device_total[id] = detail::sat_add(device_total[id], self_device_of(id));
    const std::uint32_t up = parent_[id];
    if (up != kNone && events_[up].on_host()) device_total[up] = detail::sat_add(device_total[up], device_total[id]);
  }
  const std::vector<bool> alone = unattributed_memory();
  for (EventId id = 0; id < n; ++id) {
    const Event& e = events_[id];
    EventStats st;
    if (e.on_device()) {
      st.device_total_ns = st.self_device_ns = e.duration_ns();
    } else if (e.category == Category::memory) {
      st.unattributed = alone[id];
      if (alone[id]) {
        (e.device_type == DeviceType::cpu ? st.cpu_memory : st.device_memory) = e.bytes;
        (e.device_type == DeviceType::cpu ? st.self_cpu_memory : st.self_device_memory) = e.bytes;
      }
    } else {
      st.cpu_total_ns = e.duration_ns();
      st.self_cpu_ns = self_ns(id);
      st.self_device_ns = self_device_of(id);
      st.device_total_ns = device_total[id];
      std::tie(st.cpu_memory, st.device_memory) = memory_of(e);
      // Self memory: minus each host child's, the later children first (the order the sums
      // saturate in, were they ever to), then plus its own.
      const EventIds kids = children_.of(id);
      for (auto c = kids.rbegin(); c != kids.rend(); ++c) {
        if (!events_[*c].on_host()) continue;
        const auto [child_cpu, child_device] = memory_of(events_[*c]);
        st.self_cpu_memory = detail::sat_sub(st.self_cpu_memory, child_cpu);
        st.self_device_memory = detail::sat_sub(st.self_device_memory, child_device);
      }
      st.self_cpu_memory = detail::sat_add(st.self_cpu_memory, st.cpu_memory);
      st.self_device_memory = detail::sat_add(st.self_device_memory, st.device_memory);
    }
    visit(id, st);
  }
}

std::vector<EventStats> Profile::stats() const {
  std::vector<EventStats> s(events_.size());
  for_each_stats([&](EventId id, const EventStats& st) { s[id] = st; });
  return s;
}

std::int64_t Profile::span_ns() const {
  if (events_.empty()) return 0;
  std::int64_t first = events_.front().start_ns, last = first;
  for (const Event& e : events_) {
    first = std::min(first, e.start_ns);
    last = std::max(last, e.end_ns);
  }
  return last - first;
}

Profile subtrees(const Profile& profile, std::string_view name) {
  // Marking, not copying each match's subtree: a deep chain of alternating names made the copies
  // quadratic in memory, and counted the inner events once per enclosing match.
  std::vector<bool> keep(profile.size(), false);
  for (EventId root : profile.find(name)) {
    if (keep[root]) continue;
    keep[root] = true;
    for (EventId id : profile.descendants(root)) keep[id] = true;
  }
  std::vector<Event> kept;
  for (EventId id = 0; id < profile.size(); ++id)
    if (keep[id]) kept.push_back(profile[id]);
  return Profile(std::move(kept));
}

std::int64_t self_ns_of(const Profile& profile, const std::vector<std::string_view>& names) {
  std::int64_t sum = 0;
  for (EventId id = 0; id < profile.size(); ++id)
    if (std::find(names.begin(), names.end(), profile[id].name) != names.end()) sum += profile.self_ns(id);
  return sum;
}

std::int64_t interval_union_ns(const Profile& profile, const std::vector<EventId>& ids) {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (EventId id : ids) spans.emplace_back(profile[id].start_ns, profile[id].end_ns);
  std::sort(spans.begin(), spans.end());
  std::int64_t total = 0, open_start = 0, open_end = 0;
  bool open = false;
  for (const auto& [start, end] : spans) {
    if (open && start <= open_end) {
      open_end = std::max(open_end, end);
      continue;
    }
    if (open) total += open_end - open_start;
    open_start = start;
    open_end = end;
    open = true;
  }
  if (open) total += open_end - open_start;
  return total;
}

std::string format_tree(const Profile& profile, EventId root, int max_depth) {
  std::string out;
  const int base = profile.depth(root);
  auto line = [&](EventId id) {
    const Event& e = profile[id];
    const int depth = profile.depth(id) - base;
    if (depth > max_depth) return;
    const std::string indent(std::size_t(2 * depth), ' ');
    if (e.category == Category::memory)
      out += fmt::format("{}{} {:+} bytes\n", indent, printable(e.name), e.bytes);
    else
      out += fmt::format("{}{}  total {:.1f}us  self {:.1f}us\n", indent, printable(e.name), profile.total_ns(id) / 1e3,
                         profile.self_ns(id) / 1e3);
  };
  line(root);
  for (EventId id : profile.descendants(root)) line(id);
  return out;
}

}  // namespace workbook
