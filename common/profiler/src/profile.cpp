#include "workbook/profiler/profile.h"

#include "fresh_pages.h"
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
  detail::assign_mapped<std::uint32_t>(start, n + 1, 0);
  for (std::size_t id = 0; id < n; ++id)
    if (const std::uint32_t owner = owner_of(id); owner != none) ++start[owner + 1];
  for (std::size_t k = 0; k < n; ++k) start[k + 1] += start[k];
  detail::assign_mapped<std::uint32_t>(ids, start[n], 0);
  // start[owner] serves as the owner's next free place (no third array), ending at the next
  // owner's start; shifting back by one restores the starts.
  for (std::size_t id = 0; id < n; ++id)
    if (const std::uint32_t owner = owner_of(id); owner != none) ids[start[owner]++] = std::uint32_t(id);
  for (std::size_t k = n; k > 0; --k) start[k] = start[k - 1];
  start[0] = 0;
}

// The same, kept only for owners that have ids.
template <typename Lists>
Lists sparse_id_lists(const std::vector<std::uint32_t>& owner_of) {
  constexpr std::uint32_t none = ~std::uint32_t(0);
  std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // (owner, id)
  for (std::size_t id = 0; id < owner_of.size(); ++id)
    if (owner_of[id] != none) pairs.emplace_back(owner_of[id], std::uint32_t(id));
  std::stable_sort(pairs.begin(), pairs.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Lists lists;
  lists.ids.reserve(pairs.size());
  for (const auto& [owner, id] : pairs) {
    if (lists.owners.empty() || lists.owners.back() != owner) {
      lists.owners.push_back(owner);
      lists.start.push_back(std::uint32_t(lists.ids.size()));
    }
    lists.ids.push_back(id);
  }
  lists.start.push_back(std::uint32_t(lists.ids.size()));
  return lists;
}

// The first k in [from, size) with time_at(k) >= t (or > t when `after`), where every k before
// `from` is known to be earlier: steps that double from `from`, then a binary search, so that an
// answer near `from` (the next memory record of events walked in start order) costs a few reads.
template <typename TimeAt>
std::size_t first_at_or_after(TimeAt time_at, std::size_t size, std::size_t from, std::int64_t t, bool after) {
  const auto before = [&](std::size_t k) { return after ? time_at(k) <= t : time_at(k) < t; };
  std::size_t probe = from, step = 1;
  while (probe < size && before(probe)) {
    from = probe + 1;
    probe += step;
    step *= 2;
  }
  std::size_t last = std::min(probe, size);  // the answer is in [from, last]
  while (from < last) {
    const std::size_t mid = from + (last - from) / 2;
    if (before(mid))
      from = mid + 1;
    else
      last = mid;
  }
  return from;
}

// Some of the ids below n, marked, each with its place among the marked ones: a bit an id and a
// count per 64, where an array of n numbers took 8 bytes an id.
class DenseIds {
 public:
  explicit DenseIds(std::size_t n) : bits_((n + 63) / 64, 0) {}
  void add(std::size_t id) { bits_[id / 64] |= std::uint64_t(1) << (id % 64); }
  bool has(std::size_t id) const { return (bits_[id / 64] >> (id % 64) & 1) != 0; }
  /// Counts them: after this, size() and at().
  void seal() {
    before_.resize(bits_.size());
    std::size_t count = 0;
    for (std::size_t w = 0; w < bits_.size(); ++w) {
      before_[w] = count;
      count += std::size_t(__builtin_popcountll(bits_[w]));
    }
    size_ = count;
  }
  std::size_t size() const { return size_; }
  /// The place of a marked id among them.
  std::size_t at(std::size_t id) const {
    const std::uint64_t below = bits_[id / 64] & ((std::uint64_t(1) << (id % 64)) - 1);
    return before_[id / 64] + std::size_t(__builtin_popcountll(below));
  }

 private:
  std::vector<std::uint64_t> bits_;
  std::vector<std::size_t> before_;
  std::size_t size_ = 0;
};

}  // namespace

EventIds Profile::SparseIdLists::of(EventId id) const {
  const auto at = std::lower_bound(owners.begin(), owners.end(), id);
  if (at == owners.end() || *at != id) return EventIds();
  const auto k = std::size_t(at - owners.begin());
  return EventIds(ids.data() + start[k], ids.data() + start[k + 1]);
}

Profile::Profile(const std::vector<Event>& events) : Profile(EventTable(events)) {}

Profile::Profile(EventTable events) : events_(std::move(events)) {
  // Ids are kept in 32 bits (the tree's arrays take 4 bytes an id); the table holds fewer.
  const std::size_t n = events_.size();
  auto starts_first = [this](std::size_t a, std::size_t b) {
    if (events_.start_ns(a) != events_.start_ns(b)) return events_.start_ns(a) < events_.start_ns(b);
    return events_.end_ns(a) > events_.end_ns(b);
  };
  // A recorder's depth-first walk is usually in order already: then nothing moves.
  bool in_order = true;
  for (std::size_t i = 1; i < n && in_order; ++i) in_order = !starts_first(i, i - 1);
  if (!in_order) {
    std::vector<std::uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0);
    // Stable: events that start and end together keep the order they were recorded in, which
    // puts a parent before a child of the same interval.
    std::stable_sort(order.begin(), order.end(), starts_first);
    events_.reorder(order);
  }
  std::vector<std::uint32_t> parent = host_parents();
  std::vector<std::uint32_t> kernel_owner = link_device_work(parent);
  // The children's lists are filled into merge_duplicates' scratch arrays, done with by then.
  merge_duplicates(parent, kernel_owner, children_.start, children_.ids);
  // Children in id order are children in start order (device work after its launch's host children
  // when it starts later, as before).
  fill_id_lists(
      events_.size(), [&](std::size_t id) { return parent[id]; }, children_.start, children_.ids);
  kernels_ = sparse_id_lists<SparseIdLists>(kernel_owner);
  parent_ = std::move(parent);
}

std::int64_t Profile::total_ns(EventId id) const {
  if (id >= events_.size()) throw std::out_of_range("Profile::total_ns: no event " + std::to_string(id));
  return events_.end_ns(id) - events_.start_ns(id);
}

std::vector<std::uint32_t> Profile::host_parents() const {
  std::vector<std::uint32_t> parent = detail::filled_vector<std::uint32_t>(events_.size(), kNone);
  // Host events nest by interval per thread, exactly as _populate_cpu_children does: an event
  // is a child only when fully inside; memory instants join the innermost open event.
  std::unordered_map<std::uint64_t, std::vector<EventId>> open_per_thread;
  const EventTable& t = events_;
  std::vector<EventId>* open_of_last = nullptr;  // most events run on the thread of the one before
  std::uint64_t last_thread = 0;
  for (EventId id = 0; id < t.size(); ++id) {
    if (t.on_device(id)) continue;
    const bool instant = t.category(id) == Category::memory;
    if (!open_of_last || t.thread(id) != last_thread) {
      last_thread = t.thread(id);
      open_of_last = &open_per_thread[last_thread];
    }
    auto& open = *open_of_last;
    const std::int64_t start = t.start_ns(id), end = t.end_ns(id);
    while (!open.empty()) {
      const std::int64_t parent_end = t.end_ns(open.back());
      const bool outside = instant ? start > parent_end : (start >= parent_end || end > parent_end);
      if (!outside) break;
      open.pop_back();
    }
    if (!open.empty()) parent[id] = std::uint32_t(open.back());
    if (!instant) open.push_back(id);
  }
  return parent;
}

namespace {

// Event ids by a number they carry (a correlation or External id), in a sorted array: 12 bytes an
// entry where a hash map took a heap node each.
class IdsByNumber {
 public:
  void add(std::int64_t number, std::uint32_t id) { pairs_.emplace_back(number, id); }
  /// Sorts; ids added in increasing order stay in that order among equal numbers.
  void seal() {
    std::stable_sort(pairs_.begin(), pairs_.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  }
  /// The first (or last) id added with this number, if any.
  std::optional<std::uint32_t> find(std::int64_t number, bool last) const {
    const auto less = [](const auto& pair, std::int64_t v) { return pair.first < v; };
    auto at = std::lower_bound(pairs_.begin(), pairs_.end(), number, less);
    if (at == pairs_.end() || at->first != number) return std::nullopt;
    if (last)
      at = std::prev(
          std::upper_bound(at, pairs_.end(), number, [](std::int64_t v, const auto& pair) { return v < pair.first; }));
    return at->second;
  }

 private:
  std::vector<std::pair<std::int64_t, std::uint32_t>> pairs_;
};

}  // namespace

std::vector<std::uint32_t> Profile::link_device_work(std::vector<std::uint32_t>& parent) const {
  // Device activity hangs under the runtime call with its correlation id and belongs to the op
  // that made that call: the innermost host event around the launch that is not itself a
  // runtime call (what Kineto's linked activity is when Python records). Without a launch in the
  // trace, it belongs to the op with its External id. Returns each event's owner (kNone for none).
  const EventTable& t = events_;
  // The first launch per correlation id; one op per External id, the last recorded (as a Python
  // dict keyed by the id would keep): ids shared by many ops in a corrupt trace must not hand
  // every kernel to every op.
  IdsByNumber launch_by_correlation, op_by_external_id;
  bool any_device = false;
  for (EventId id = 0; id < t.size(); ++id) {
    any_device = any_device || t.on_device(id);
    if (!t.on_host(id)) continue;
    if (t.category(id) == Category::runtime) {
      if (const std::int64_t correlation = t.correlation(id); correlation != 0)
        launch_by_correlation.add(correlation, std::uint32_t(id));
    } else if (const std::int64_t external_id = t.external_id(id); external_id != 0) {
      op_by_external_id.add(external_id, std::uint32_t(id));
    }
  }
  std::vector<std::uint32_t> kernel_owner = detail::filled_vector<std::uint32_t>(t.size(), kNone);
  if (!any_device) return kernel_owner;
  launch_by_correlation.seal();
  op_by_external_id.seal();
  // The op a runtime call belongs to: its nearest ancestor that is not itself a runtime call.
  // Runtime calls nested in runtime calls are remembered, so that each is walked once, not once
  // per kernel.
  std::unordered_map<std::uint32_t, std::uint32_t> owner_of_nested;
  const auto owner_of = [&](std::uint32_t runtime_call) {
    const std::uint32_t up = parent[runtime_call];
    if (up == kNone || t.category(up) != Category::runtime) return up;  // the usual case
    std::vector<std::uint32_t> walked;
    std::uint32_t at = runtime_call, owner = kNone;
    for (;;) {
      const auto known = owner_of_nested.find(at);
      if (known != owner_of_nested.end()) {
        owner = known->second;
        break;
      }
      walked.push_back(at);
      at = parent[at];
      if (at == kNone || t.category(at) != Category::runtime) {
        owner = at;
        break;
      }
    }
    for (std::uint32_t w : walked) owner_of_nested.emplace(w, owner);
    return owner;
  };
  for (EventId id = 0; id < t.size(); ++id) {
    if (!t.on_device(id)) continue;
    const std::int64_t correlation = t.correlation(id), external_id = t.external_id(id);
    if (const auto launch = correlation != 0 ? launch_by_correlation.find(correlation, false) : std::nullopt) {
      parent[id] = *launch;
      kernel_owner[id] = owner_of(*launch);
      continue;
    }
    if (const auto op = external_id != 0 ? op_by_external_id.find(external_id, true) : std::nullopt)
      kernel_owner[id] = *op;
  }
  return kernel_owner;
}

void Profile::merge_duplicates(std::vector<std::uint32_t>& parent, std::vector<std::uint32_t>& kernel_owner,
                               std::vector<std::uint32_t>& scratch, std::vector<std::uint32_t>& more_scratch) {
  const std::size_t n = events_.size();
  // Host children per event, kept up to date as children fold (counting them at every test
  // made a parent with 10^5 same-named children quadratic).
  std::vector<std::uint32_t>& host_children = scratch;
  detail::assign_mapped<std::uint32_t>(host_children, n, 0, n + 1);
  for (EventId id = 0; id < n; ++id)
    if (parent[id] != kNone && events_.on_host(id)) ++host_children[parent[id]];
  // _remove_dup_nodes: an only host child with its parent's name folds into the parent, which
  // takes its children and its kernels (its own kernels are dropped, as Python's assignment
  // drops them). Parents come before host children, so chains fold upwards; a removed event's
  // parent is final when it is removed, so one step up from it reaches a kept event.
  // Kernels move as sets: `kernel_set[e]` names whose original kernels e holds now.
  std::vector<bool> removed(n, false);
  std::vector<std::uint32_t>& kernel_set = more_scratch;
  detail::assign_mapped<std::uint32_t>(kernel_set, n, 0);
  std::iota(kernel_set.begin(), kernel_set.end(), 0);
  for (EventId id = 0; id < n; ++id) {
    if (parent[id] == kNone || !events_.on_host(id)) continue;
    if (removed[parent[id]]) parent[id] = parent[parent[id]];  // the folded parent's children moved up
    const std::uint32_t p = parent[id];
    if (host_children[p] != 1 || events_.name_id(p) != events_.name_id(id)) continue;
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
  std::vector<std::uint32_t> holder =
      detail::filled_vector<std::uint32_t>(n, kNone);  // the kept event holding each kernel set
  for (EventId id = 0; id < n; ++id)
    if (!removed[id]) holder[kernel_set[id]] = std::uint32_t(id);
  for (EventId id = 0; id < n; ++id)
    if (kernel_owner[id] != kNone) kernel_owner[id] = holder[kernel_owner[id]];
  // Ids close up over the removed events.
  std::vector<std::uint32_t> new_id = detail::filled_vector<std::uint32_t>(n, kNone);
  std::uint32_t next = 0;
  for (EventId id = 0; id < n; ++id)
    if (!removed[id]) new_id[id] = next++;
  auto renumbered = [&](std::uint32_t id) { return id == kNone ? kNone : new_id[id]; };
  for (EventId id = 0; id < n; ++id) {
    if (removed[id]) continue;
    const std::uint32_t to = new_id[id];
    parent[to] = renumbered(parent[id]);
    kernel_owner[to] = renumbered(kernel_owner[id]);
  }
  removed.flip();  // now: kept
  events_.keep_only(removed);
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
    if (events_.name(id) == name) ids.push_back(id);
  return ids;
}

std::vector<EventId> Profile::find_prefix(std::string_view prefix) const {
  std::vector<EventId> ids;
  for (EventId id = 0; id < events_.size(); ++id)
    if (events_.name(id).substr(0, prefix.size()) == prefix) ids.push_back(id);
  return ids;
}

std::size_t Profile::count(std::string_view name) const { return find(name).size(); }

std::vector<EventId> Profile::of_category(Category category) const {
  std::vector<EventId> ids;
  for (EventId id = 0; id < events_.size(); ++id)
    if (events_.category(id) == category) ids.push_back(id);
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
    if (events_.name(d) == name) out.push_back(d);
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
        if (events_.name(c) == names[k]) {
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
    if (events_.on_host(c)) self = detail::sat_sub(self, events_.end_ns(c) - events_.start_ns(c));
  return self;
}

std::vector<bool> Profile::unattributed_memory() const {
  // Python's MemRecordsAcc: a memory record belongs to every host event (any thread) whose
  // closed interval [start, end] holds its time stamp; the others stand alone as "[memory]".
  std::vector<std::uint32_t> records;
  for (EventId id = 0; id < events_.size(); ++id)
    if (events_.category(id) == Category::memory) records.push_back(std::uint32_t(id));
  std::vector<int> cover(records.size() + 1, 0);
  const auto time_at = [&](std::size_t k) { return events_.start_ns(records[k]); };
  if (!records.empty()) {
    std::size_t first = 0;  // events come in start order: so do their first records
    for (EventId id = 0; id < events_.size(); ++id) {
      if (!events_.on_host(id)) continue;
      first = first_at_or_after(time_at, records.size(), first, events_.start_ns(id), false);
      ++cover[first];
      --cover[first_at_or_after(time_at, records.size(), first, events_.end_ns(id), true)];
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
  // Prefix sums of memory records in time order (events_ is sorted by start), in 128 bits: byte
  // counts come from the trace and may be anything. Device bytes only where some record has any.
  const EventTable& t = events_;
  std::vector<std::int64_t> times;
  std::vector<__int128> cpu_bytes{0}, device_bytes;
  for (EventId id = 0; id < n && device_bytes.empty(); ++id)
    if (t.category(id) == Category::memory && t.device_type(id) != DeviceType::cpu) device_bytes.push_back(0);
  for (EventId id = 0; id < n; ++id) {
    if (t.category(id) != Category::memory) continue;
    const bool on_cpu = t.device_type(id) == DeviceType::cpu;
    times.push_back(t.start_ns(id));
    cpu_bytes.push_back(cpu_bytes.back() + (on_cpu ? t.bytes(id) : 0));
    if (!device_bytes.empty()) device_bytes.push_back(device_bytes.back() + (on_cpu ? 0 : t.bytes(id)));
  }
  // The CPU and device bytes allocated (net) while a host event ran, any thread; `first` is a
  // record no later than its first (records before it are earlier than the event).
  const auto time_at = [&](std::size_t k) { return times[k]; };
  const auto memory_of = [&](EventId id, std::size_t first) {
    const std::size_t lo = first_at_or_after(time_at, times.size(), first, t.start_ns(id), false);
    const std::size_t hi = first_at_or_after(time_at, times.size(), lo, t.end_ns(id), true);
    return std::tuple{detail::saturate(cpu_bytes[hi] - cpu_bytes[lo]),
                      device_bytes.empty() ? std::int64_t{0} : detail::saturate(device_bytes[hi] - device_bytes[lo]),
                      lo};
  };
  // The kernels of the k-th event that owns any, summed.
  const auto self_device_at = [&](std::size_t k) {
    std::int64_t sum = 0;
    for (std::uint32_t i = kernels_.start[k]; i < kernels_.start[k + 1]; ++i)
      sum = detail::sat_add(sum, t.end_ns(kernels_.ids[i]) - t.start_ns(kernels_.ids[i]));
    return sum;
  };
  const std::vector<std::uint32_t>& owners = kernels_.owners;
  // A host event's device total is its own kernels plus its host children's totals: summed
  // backwards, every child is complete before its parent needs it (no recursion, whatever the
  // depth). The one number per event that must travel up the tree.
  // Only host events with kernels at or below them have one (none at all in a CPU-only profile):
  // they are marked, walking up from each kernel owner, and their totals kept densely.
  DenseIds with_device(n);
  for (const std::uint32_t o : owners)
    for (std::uint32_t u = o; u != kNone && t.on_host(u) && !with_device.has(u); u = parent_[u]) with_device.add(u);
  with_device.seal();
  std::vector<std::int64_t> device_total(with_device.size(), 0);
  std::size_t owner = owners.size();  // walking down: owners[owner - 1] is the last owner <= id
  for (EventId id = n; id-- > 0;) {
    while (owner > 0 && owners[owner - 1] > id) --owner;
    if (!with_device.has(id)) continue;  // a marked event's host parent is marked too
    std::int64_t& total = device_total[with_device.at(id)];
    if (owner > 0 && owners[owner - 1] == id) total = detail::sat_add(total, self_device_at(owner - 1));
    const std::uint32_t up = parent_[id];
    if (up != kNone && t.on_host(up)) {
      std::int64_t& above = device_total[with_device.at(up)];
      above = detail::sat_add(above, total);
    }
  }
  const std::vector<bool> alone = unattributed_memory();
  std::size_t next_owner = 0;    // walking up: owners[next_owner] is the first owner >= id
  std::size_t first_record = 0;  // and the first memory record at or after id's start
  for (EventId id = 0; id < n; ++id) {
    while (next_owner < owners.size() && owners[next_owner] < id) ++next_owner;
    EventStats st;
    if (t.on_device(id)) {
      st.device_total_ns = st.self_device_ns = t.end_ns(id) - t.start_ns(id);
    } else if (t.category(id) == Category::memory) {
      st.unattributed = alone[id];
      if (alone[id]) {
        const bool on_cpu = t.device_type(id) == DeviceType::cpu;
        (on_cpu ? st.cpu_memory : st.device_memory) = t.bytes(id);
        (on_cpu ? st.self_cpu_memory : st.self_device_memory) = t.bytes(id);
      }
    } else {
      st.cpu_total_ns = t.end_ns(id) - t.start_ns(id);
      st.self_cpu_ns = self_ns(id);
      if (next_owner < owners.size() && owners[next_owner] == id) st.self_device_ns = self_device_at(next_owner);
      st.device_total_ns = with_device.has(id) ? device_total[with_device.at(id)] : 0;
      std::tie(st.cpu_memory, st.device_memory, first_record) = memory_of(id, first_record);
      // Self memory: minus each host child's, the later children first (the order the sums
      // saturate in, were they ever to), then plus its own.
      const EventIds kids = children_.of(id);
      for (auto c = kids.rbegin(); c != kids.rend(); ++c) {
        if (!t.on_host(*c)) continue;
        [[maybe_unused]] const auto [child_cpu, child_device, child_first] = memory_of(*c, first_record);
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
  std::int64_t first = events_.start_ns(0), last = first;
  for (EventId id = 0; id < events_.size(); ++id) {
    first = std::min(first, events_.start_ns(id));
    last = std::max(last, events_.end_ns(id));
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
    const EventView e = profile[id];
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
