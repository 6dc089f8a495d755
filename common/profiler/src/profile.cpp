#include "workbook/profiler/profile.h"

#include "kineto_meaning.h"
#include "saturating.h"
#include "workbook/profiler/format.h"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <optional>
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

Profile::Profile(std::vector<Event> events) : events_(std::move(events)) {
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
  build_tree();
  link_device_work();
  merge_duplicates();
}

void Profile::build_tree() {
  parent_.assign(events_.size(), std::nullopt);
  children_.assign(events_.size(), {});
  kernels_.assign(events_.size(), {});
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
    if (!open.empty()) {
      parent_[id] = open.back();
      children_[open.back()].push_back(id);
    }
    if (!instant) open.push_back(id);
  }
}

void Profile::link_device_work() {
  // Device activity hangs under the runtime call with its correlation id and belongs to the op
  // that made that call: the innermost host event around the launch that is not itself a
  // runtime call (what Kineto's linked activity is when Python records). Without a launch in the
  // trace, it belongs to the op with its External id.
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
  std::unordered_map<EventId, std::optional<EventId>> owner_of_runtime;
  const auto owner_of = [&](EventId runtime_call) {
    std::vector<EventId> walked;
    std::optional<EventId> at = runtime_call, owner;
    for (;;) {
      const auto known = owner_of_runtime.find(*at);
      if (known != owner_of_runtime.end()) {
        owner = known->second;
        break;
      }
      walked.push_back(*at);
      at = parent_[*at];
      if (!at || events_[*at].category != Category::runtime) {
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
      parent_[id] = launch->second;
      children_[launch->second].push_back(id);
      if (const auto owner = owner_of(launch->second)) kernels_[*owner].push_back(id);
      continue;
    }
    auto op = e.external_id != 0 ? op_by_external_id.find(e.external_id) : op_by_external_id.end();
    if (op != op_by_external_id.end()) kernels_[op->second].push_back(id);
  }
  // Device activity joined its launch's children after the launch's host children: restore order.
  for (auto& kids : children_)
    if (kids.size() > 1 && !std::is_sorted(kids.begin(), kids.end())) std::sort(kids.begin(), kids.end());
}

void Profile::merge_duplicates() {
  // Host children per event, kept up to date as children fold (counting them at every test
  // made a parent with 10^5 same-named children quadratic).
  std::vector<std::size_t> host_children(events_.size(), 0);
  for (EventId id = 0; id < events_.size(); ++id)
    if (parent_[id] && events_[id].on_host()) ++host_children[*parent_[id]];
  // _remove_dup_nodes: an only host child with its parent's name folds into the parent, which
  // takes its children and its kernels. Parents come before children, so chains fold upwards.
  std::vector<bool> removed(events_.size(), false), took_children(events_.size(), false);
  for (EventId id = 0; id < events_.size(); ++id) {
    const auto p = parent_[id];
    if (!p || !events_[id].on_host() || host_children[*p] != 1 || events_[*p].name != events_[id].name) continue;
    removed[id] = true;
    ++merged_;
    host_children[*p] = host_children[id];
    // The folded child stays in its parent's list until the remap below drops every removed id,
    // and each list that took children is sorted once at the end: erasing and sorting at every fold
    // made a chain of folds that each bring a memory instant or a kernel quadratic.
    for (EventId c : children_[id]) parent_[c] = *p;
    children_[*p].insert(children_[*p].end(), children_[id].begin(), children_[id].end());
    took_children[*p] = true;
    kernels_[*p] = std::move(kernels_[id]);
    children_[id].clear();
  }
  if (merged_ == 0) return;
  for (EventId id = 0; id < events_.size(); ++id)
    if (took_children[id]) std::sort(children_[id].begin(), children_[id].end());
  std::vector<EventId> new_id(events_.size());
  EventId next = 0;
  for (EventId id = 0; id < events_.size(); ++id) new_id[id] = removed[id] ? 0 : next++;
  auto remap = [&](std::vector<EventId>& ids) {
    ids.erase(std::remove_if(ids.begin(), ids.end(), [&](EventId i) { return removed[i]; }), ids.end());
    for (EventId& i : ids) i = new_id[i];
  };
  for (EventId id = 0; id < events_.size(); ++id) {
    if (removed[id]) continue;
    const EventId to = new_id[id];
    if (to != id) {  // a self-move would empty the strings
      events_[to] = std::move(events_[id]);
      children_[to] = std::move(children_[id]);
      kernels_[to] = std::move(kernels_[id]);
    }
    parent_[to] = parent_[id] ? std::optional<EventId>(new_id[*parent_[id]]) : std::nullopt;
    remap(children_[to]);
    remap(kernels_[to]);
  }
  events_.resize(next);
  parent_.resize(next);
  children_.resize(next);
  kernels_.resize(next);
}

std::optional<EventId> Profile::parent(EventId id) const { return parent_.at(id); }

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
    if (!parent_[id]) ids.push_back(id);
  return ids;
}

std::vector<EventId> Profile::descendants(EventId id) const {
  std::vector<EventId> out;
  std::vector<EventId> stack(children_.at(id).rbegin(), children_.at(id).rend());
  while (!stack.empty()) {
    EventId next = stack.back();
    stack.pop_back();
    out.push_back(next);
    stack.insert(stack.end(), children_[next].rbegin(), children_[next].rend());
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
      for (EventId c : children_[at]) {
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
  for (auto p = parent_.at(id); p; p = parent_[*p]) ++d;
  return d;
}

std::int64_t Profile::self_ns(EventId id) const {
  // Saturating: overlapping children near the end of int64's range must not wrap around.
  std::int64_t self = total_ns(id);
  for (EventId c : children_.at(id))
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

std::vector<EventStats> Profile::stats() const {
  const std::size_t n = events_.size();
  std::vector<EventStats> s(n);
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
  const std::vector<bool> alone = unattributed_memory();
  for (EventId id = 0; id < n; ++id) {
    const Event& e = events_[id];
    EventStats& st = s[id];
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
      for (EventId k : kernels_[id]) st.self_device_ns = detail::sat_add(st.self_device_ns, events_[k].duration_ns());
      const auto lo = std::lower_bound(times.begin(), times.end(), e.start_ns) - times.begin();
      const auto hi = std::upper_bound(times.begin(), times.end(), e.end_ns) - times.begin();
      st.cpu_memory = detail::saturate(cpu_bytes[std::size_t(hi)] - cpu_bytes[std::size_t(lo)]);
      st.device_memory = detail::saturate(device_bytes[std::size_t(hi)] - device_bytes[std::size_t(lo)]);
    }
  }
  // Children come after their parents: walking backwards, every child is complete before its
  // parent needs it (no recursion, whatever the depth).
  for (EventId id = n; id-- > 0;) {
    const Event& e = events_[id];
    if (!e.on_host()) continue;
    EventStats& st = s[id];
    st.device_total_ns = detail::sat_add(st.device_total_ns, st.self_device_ns);
    st.self_cpu_memory = detail::sat_add(st.self_cpu_memory, st.cpu_memory);
    st.self_device_memory = detail::sat_add(st.self_device_memory, st.device_memory);
    if (!parent_[id] || !events_[*parent_[id]].on_host()) continue;
    EventStats& up = s[*parent_[id]];
    up.device_total_ns = detail::sat_add(up.device_total_ns, st.device_total_ns);
    up.self_cpu_memory = detail::sat_sub(up.self_cpu_memory, st.cpu_memory);
    up.self_device_memory = detail::sat_sub(up.self_device_memory, st.device_memory);
  }
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
