#include "workbook/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <unordered_map>

namespace workbook {

std::string_view category_name(Category category) {
  switch (category) {
    case Category::cpu_op: return "cpu_op";
    case Category::user_annotation: return "user_annotation";
    case Category::kernel: return "kernel";
    case Category::runtime: return "cuda_runtime";
    case Category::memory: return "[memory]";
    case Category::other: return "other";
  }
  return "other";
}

Profile::Profile(std::vector<Event> events) : events_(std::move(events)) {
  auto starts_first = [](const Event& a, const Event& b) {
    if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
    return a.end_ns > b.end_ns;
  };
  // A recorder's depth-first walk is usually in order already: then nothing moves.
  if (std::is_sorted(events_.begin(), events_.end(), starts_first)) {
    build_tree();
    return;
  }
  std::vector<std::size_t> order(events_.size());
  std::iota(order.begin(), order.end(), 0);
  // Stable: events that start together keep the order the profiler recorded them in, which
  // puts a parent before the child that began in the same microsecond.
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return starts_first(events_[a], events_[b]); });
  std::vector<Event> sorted;
  sorted.reserve(events_.size());
  for (auto i : order) sorted.push_back(std::move(events_[i]));
  events_ = std::move(sorted);
  build_tree();
}

void Profile::build_tree() {
  parent_.assign(events_.size(), -1);
  children_.assign(events_.size(), {});
  auto adopt = [&](EventId parent, EventId child) {
    parent_[child] = static_cast<std::ptrdiff_t>(parent);
    children_[parent].push_back(child);
  };

  // Host events nest by interval per thread, exactly as torch.profiler's
  // _populate_cpu_children does; memory instants join the innermost open event.
  std::map<std::uint64_t, std::vector<EventId>> open_per_thread;
  std::unordered_map<std::int64_t, EventId> launch_by_correlation;
  for (EventId id = 0; id < events_.size(); ++id) {
    const Event& e = events_[id];
    if (e.on_device()) continue;
    auto& open = open_per_thread[e.thread];
    while (!open.empty()) {
      const Event& p = events_[open.back()];
      bool outside = e.start_ns >= p.end_ns || e.end_ns > p.end_ns;
      if (e.category == Category::memory) outside = e.start_ns > p.end_ns;
      if (outside) {
        open.pop_back();
      } else {
        adopt(open.back(), id);
        break;
      }
    }
    if (e.category != Category::memory) open.push_back(id);
    if (e.category == Category::runtime && e.correlation != 0) launch_by_correlation[e.correlation] = id;
  }
  // Device work hangs under the runtime call that launched it.
  for (EventId id = 0; id < events_.size(); ++id) {
    const Event& e = events_[id];
    if (!e.on_device() || e.correlation == 0) continue;
    auto it = launch_by_correlation.find(e.correlation);
    if (it != launch_by_correlation.end()) adopt(it->second, id);
  }
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
    if (parent_[id] < 0) ids.push_back(id);
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
  for (auto p = parent_.at(id); p >= 0; p = parent_[static_cast<EventId>(p)]) ++d;
  return d;
}

std::int64_t Profile::self_ns(EventId id) const {
  std::int64_t self = total_ns(id);
  for (EventId c : children_.at(id))
    if (!events_[c].on_device() && events_[c].category != Category::memory) self -= total_ns(c);
  return std::max<std::int64_t>(self, 0);
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
      out += fmt::format("{}{} {:+} bytes\n", indent, e.name, e.bytes);
    else
      out += fmt::format("{}{}  total {:.1f}us  self {:.1f}us\n", indent, e.name, profile.total_ns(id) / 1e3,
                         profile.self_ns(id) / 1e3);
  };
  line(root);
  for (EventId id : profile.descendants(root)) line(id);
  return out;
}

}  // namespace workbook
