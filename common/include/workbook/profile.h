#pragma once
/// \file
/// \brief Profiler events and the parent/child tree over them (no LibTorch needed).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace workbook {

/// What kind of activity an event records, in Kineto's trace vocabulary.
enum class Category {
  cpu_op,           ///< an ATen operator on the CPU (aten::mm, aten::add, ...)
  user_annotation,  ///< a labelled region: workbook::Region, ProfilerStep#N
  kernel,           ///< device work: a GPU kernel, memcpy or memset
  runtime,          ///< host-side device runtime call (cudaLaunchKernel, ...)
  memory,           ///< an allocation (bytes > 0) or a free (bytes < 0); an instant
  other,            ///< anything else a trace may hold (python functions, ...)
};

/// Kineto's name for a category ("cpu_op", "user_annotation", "kernel", "cuda_runtime", "[memory]", "other").
std::string_view category_name(Category category);

/// Index of an event inside its Profile.
using EventId = std::size_t;

/// One recorded activity. Times are nanoseconds from the start of the trace.
struct Event {
  std::string name;               ///< "aten::mm", "matmul_add", a kernel's name, "[memory]"
  Category category = Category::cpu_op;  ///< what kind of activity
  std::int64_t start_ns = 0;      ///< start, ns from the start of the trace
  std::int64_t end_ns = 0;        ///< end (equal to start for instants)
  std::uint64_t thread = 0;       ///< host thread id, or the stream for device events
  std::string device = "cpu";     ///< "cpu", "cuda:0", ...
  std::vector<std::vector<std::int64_t>> input_shapes;  ///< filled when shapes were recorded
  std::int64_t bytes = 0;         ///< memory events: allocated (> 0) or freed (< 0) bytes
  std::int64_t flops = 0;         ///< filled when FLOPs were estimated
  std::int64_t correlation = 0;   ///< links a runtime launch to its kernel; 0 when none

  /// end_ns - start_ns.
  std::int64_t duration_ns() const { return end_ns - start_ns; }
  /// True for events that run on a device (kernel lanes) rather than a host thread.
  bool on_device() const { return device != "cpu"; }
};

/// A finished recording: events plus the nesting between them, with the queries that lessons
/// and checks need. Nesting follows Python's torch.profiler: per host thread, an event is the
/// child of the innermost earlier event whose interval contains it.
class Profile {
 public:
  Profile() = default;
  /// Builds the tree from the events' intervals (events may come in any order).
  explicit Profile(std::vector<Event> events);

  /// All events, sorted by start time (longer first on ties).
  const std::vector<Event>& events() const { return events_; }
  /// The event with this id.
  const Event& operator[](EventId id) const { return events_.at(id); }
  /// Number of events.
  std::size_t size() const { return events_.size(); }
  /// True when nothing was recorded.
  bool empty() const { return events_.empty(); }

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
  /// Direct children of an event, in start order.
  const std::vector<EventId>& children(EventId id) const { return children_.at(id); }
  /// The parent, or -1 for a root.
  std::ptrdiff_t parent(EventId id) const { return parent_.at(id); }
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

  /// Total (inclusive) host time of an event: its duration.
  std::int64_t total_ns(EventId id) const { return events_.at(id).duration_ns(); }
  /// Self time: total minus the totals of its direct host children (never negative).
  std::int64_t self_ns(EventId id) const;
  /// Time between the first start and the last end.
  std::int64_t span_ns() const;

 private:
  void build_tree();
  std::vector<Event> events_;
  std::vector<std::ptrdiff_t> parent_;
  std::vector<std::vector<EventId>> children_;
};

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
