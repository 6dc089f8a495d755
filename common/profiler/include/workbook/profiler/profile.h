#pragma once
/// \file
/// \brief Profiler events and the tree over them, built by Python's rules (no LibTorch needed).

#include <cstdint>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/profiler/event.h"
#include "workbook/profiler/event_table.h"

namespace workbook {

/// Index of an event inside its Profile.
using EventId = std::size_t;

/// A read-only run of event ids inside a Profile (an event's children or kernels), in start order:
/// iterate it, index it, count it. Four bytes per id; valid as long as its Profile is.
class EventIds {
 public:
  using value_type = EventId;                                            ///< what iterating gives
  using const_iterator = const std::uint32_t*;                           ///< walks the ids in start order
  using const_reverse_iterator = std::reverse_iterator<const_iterator>;  ///< walks them backwards

  /// No ids.
  EventIds() = default;
  /// The ids in [first, last), an array the Profile owns.
  EventIds(const_iterator first, const_iterator last) : first_(first), last_(last) {}
  /// The first id.
  const_iterator begin() const { return first_; }
  /// One past the last id.
  const_iterator end() const { return last_; }
  /// The last id, walking backwards.
  const_reverse_iterator rbegin() const { return const_reverse_iterator(last_); }
  /// One before the first id, walking backwards.
  const_reverse_iterator rend() const { return const_reverse_iterator(first_); }
  /// How many ids.
  std::size_t size() const { return std::size_t(last_ - first_); }
  /// True when there are none.
  bool empty() const { return first_ == last_; }
  /// The k-th id (k < size()).
  EventId operator[](std::size_t k) const { return first_[k]; }
  /// The first id (not empty()).
  EventId front() const { return *first_; }
  /// The last id (not empty()).
  EventId back() const { return last_[-1]; }

 private:
  const_iterator first_ = nullptr;
  const_iterator last_ = nullptr;
};

/// Python's per-event numbers (FunctionEvent's properties), in nanoseconds and bytes.
struct EventStats {
  std::int64_t cpu_total_ns = 0;        ///< duration of a host event, 0 for device work
  std::int64_t self_cpu_ns = 0;         ///< total minus the totals of its host children (may be < 0)
  std::int64_t device_total_ns = 0;     ///< its kernels plus its children's device time; a kernel's duration
  std::int64_t self_device_ns = 0;      ///< its own kernels; a kernel's duration
  std::int64_t cpu_memory = 0;          ///< CPU bytes allocated (net) while it ran, any thread
  std::int64_t self_cpu_memory = 0;     ///< minus its children's
  std::int64_t device_memory = 0;       ///< the same for device memory
  std::int64_t self_device_memory = 0;  ///< minus its children's
  bool unattributed = false;            ///< a memory record inside no host event: Python's "[memory]" event
};

/// A finished recording: events plus the nesting between them, with the queries that lessons
/// and checks need. The tree follows Python's torch.profiler (profiler_util.py
/// `_populate_cpu_children` and `_remove_dup_nodes`): per host thread, sorted by (start, -end),
/// an event is the child of the innermost earlier event that fully contains it (a partial overlap
/// is not nesting); an event that is the only host child of a parent with the same name is merged
/// into it (the parent takes its children and kernels). Device work links to the op with its
/// External id (its "kernels") and hangs in the tree under the runtime call that launched it;
/// memory instants hang under the innermost open event of their thread.
class Profile {
 public:
  Profile() = default;
  /// Builds the tree from the events' intervals (events may come in any order).
  explicit Profile(const std::vector<Event>& events);
  /// The same from events already in columns (what the trace reader fills), taken over.
  explicit Profile(EventTable events);

  /// All events (merged duplicates removed), sorted by start time (longer first on ties): iterate
  /// them as EventViews, index them, count them.
  const EventTable& events() const { return events_; }
  /// The event with this id, read in place (throws std::out_of_range past the end).
  EventView operator[](EventId id) const { return events_.at(id); }
  /// Number of events.
  std::size_t size() const { return events_.size(); }
  /// True when nothing was recorded.
  bool empty() const { return events_.empty(); }
  /// How many events were merged into a same-named parent (Python's `_remove_dup_nodes`).
  std::size_t merged_duplicates() const { return merged_; }

  /// Ids of the events with exactly this name, in start order.
  std::vector<EventId> find(std::string_view name) const;
  /// Ids of the events whose name starts with this prefix ("ProfilerStep#").
  std::vector<EventId> find_prefix(std::string_view prefix) const;
  /// How many events have this name.
  std::size_t count(std::string_view name) const;
  /// Ids of the events of one category.
  std::vector<EventId> of_category(Category category) const;

  /// Events without a parent, in start order.
  std::vector<EventId> roots() const;
  /// Direct children of an event, in start order: nested host events, memory instants, and for
  /// a runtime call the device activity it launched.
  EventIds children(EventId id) const { return children_.of(id); }
  /// The parent, or nothing for a root.
  std::optional<EventId> parent(EventId id) const;
  /// Device activity that belongs to this host event (Python's `FunctionEvent.kernels`).
  EventIds kernels(EventId id) const { return kernels_.of(id); }
  /// Every event below this one, depth first.
  std::vector<EventId> descendants(EventId id) const;
  /// Descendants of `id` named `name`.
  std::vector<EventId> under(EventId id, std::string_view name) const;
  /// How many descendants of `id` are named `name`.
  std::size_t count_under(EventId id, std::string_view name) const;
  /// True when a path id -> first -> second -> ... exists where each name is a direct child of
  /// the previous one (first may sit anywhere below id).
  bool has_chain(EventId id, const std::vector<std::string_view>& names) const;
  /// Nesting depth (roots are 0).
  int depth(EventId id) const;

  /// Total (inclusive) time of an event: its duration.
  std::int64_t total_ns(EventId id) const;
  /// Self time: total minus the totals of its direct host children, as Python computes it (not
  /// clamped: a child that outlives its parent's clock reading shows as negative self time).
  std::int64_t self_ns(EventId id) const;
  /// Python's per-event numbers for every event, computed in one pass (no recursion).
  std::vector<EventStats> stats() const;
  /// The same numbers handed to `visit(id, stats)` one event at a time, in id order, without a
  /// vector of them (72 bytes an event): what key_averages folds into its rows.
  void for_each_stats(const std::function<void(EventId, const EventStats&)>& visit) const;
  /// True when a memory instant is inside no host event's interval (Python lists it as "[memory]").
  std::vector<bool> unattributed_memory() const;
  /// Time between the first start and the last end.
  std::int64_t span_ns() const;

 private:
  /// Lists of ids per event in one array (compressed rows): two allocations for the whole tree,
  /// where a vector per event took 24 bytes and a heap block each.
  struct IdLists {
    std::vector<std::uint32_t> start;  ///< event k's ids are ids[start[k] .. start[k + 1])
    std::vector<std::uint32_t> ids;
    EventIds of(EventId id) const {
      const std::uint32_t first = start.at(id), last = start.at(id + 1);
      return EventIds(ids.data() + first, ids.data() + last);
    }
  };
  /// The same for the few events that own any: a list per owner, found by binary search (a start
  /// per event took 4 bytes an event, for lists that are empty on every CPU-only event).
  struct SparseIdLists {
    std::vector<std::uint32_t> owners;  ///< in increasing order; owners[k]'s ids are ids[start[k] .. start[k + 1])
    std::vector<std::uint32_t> start;
    std::vector<std::uint32_t> ids;
    EventIds of(EventId id) const;
  };
  static constexpr std::uint32_t kNone = ~std::uint32_t(0);
  std::vector<std::uint32_t> host_parents() const;
  std::vector<std::uint32_t> link_device_work(std::vector<std::uint32_t>& parent) const;
  void merge_duplicates(std::vector<std::uint32_t>& parent, std::vector<std::uint32_t>& kernel_owner,
                        std::vector<std::uint32_t>& scratch, std::vector<std::uint32_t>& more_scratch);
  EventTable events_;
  std::vector<std::uint32_t> parent_;  ///< kNone for a root
  IdLists children_;
  SparseIdLists kernels_;
  std::size_t merged_ = 0;
};

/// The events named `name` and everything beneath them, each event once (a match inside another
/// match's subtree is part of it), as a profile of its own: what `trace --under NAME` tabulates.
Profile subtrees(const Profile& profile, std::string_view name);

/// Sum of the self times of every event with one of these names (e.g. the ops that do the
/// arithmetic: {"aten::mm", "aten::add"}).
std::int64_t self_ns_of(const Profile& profile, const std::vector<std::string_view>& names);

/// Length of the union of the events' intervals: time during which at least one of them ran
/// (how busy a GPU was, counting overlapping kernels once).
std::int64_t interval_union_ns(const Profile& profile, const std::vector<EventId>& ids);

/// The subtree under `root` as indented text, one event per line with its total and self time
/// ("aten::mm  total 12.3us  self 10.1us"); memory events show their bytes.
std::string format_tree(const Profile& profile, EventId root, int max_depth = 8);

}  // namespace workbook
