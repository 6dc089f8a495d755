#include "workbook/profiler/communication.h"

#include <algorithm>
#include <optional>
#include <utility>

namespace workbook {
namespace {

using Interval = std::pair<std::int64_t, std::int64_t>;

bool starts_with(std::string_view text, std::string_view prefix) { return text.substr(0, prefix.size()) == prefix; }

// Sorted, disjoint intervals covering the same time as `intervals`.
std::vector<Interval> union_of(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end());
  std::vector<Interval> merged;
  for (const auto& [start, end] : intervals) {
    if (end <= start) continue;
    if (!merged.empty() && start <= merged.back().second)
      merged.back().second = std::max(merged.back().second, end);
    else
      merged.emplace_back(start, end);
  }
  return merged;
}

std::int64_t length_of(const std::vector<Interval>& disjoint) {
  std::int64_t sum = 0;
  for (const auto& [start, end] : disjoint) sum += end - start;
  return sum;
}

// Time covered by both sets of sorted disjoint intervals.
std::int64_t common_length(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::int64_t sum = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t start = std::max(a[i].first, b[j].first), end = std::min(a[i].second, b[j].second);
    if (end > start) sum += end - start;
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return sum;
}

Interval clipped(const Event& e, const Event& step) {
  return {std::max(e.start_ns, step.start_ns), std::min(e.end_ns, step.end_ns)};
}

// Whether `id` is a collective call or sits inside one (or inside a transfer's own lane).
bool within_collective_call(const Profile& profile, EventId id) {
  for (std::optional<EventId> at = id; at; at = profile.parent(*at))
    if (is_collective_call(profile[*at].name) || is_communication(profile[*at])) return true;
  return false;
}

}  // namespace

bool is_communication(const Event& event) {
  if (event.on_device()) return starts_with(event.name, "nccl");
  return event.on_host() && (starts_with(event.name, "gloo:") || starts_with(event.name, "nccl:"));
}

bool is_collective_call(std::string_view name) { return starts_with(name, "c10d::") || name == "record_param_comms"; }

namespace {

// Whether `id` counts as computation: a GPU kernel that is not communication, or a host op outside
// every collective call and transfer.
bool computes(const Profile& profile, EventId id) {
  const Event& e = profile[id];
  if (is_communication(e)) return false;
  return (e.on_device() && e.work == DeviceWork::kernel) ||
         (e.on_host() && e.category == Category::cpu_op && !within_collective_call(profile, id));
}

}  // namespace

Activity activity(const Profile& profile) {
  std::vector<Interval> transfers, computing;
  for (EventId id = 0; id < profile.size(); ++id) {
    const Event& e = profile[id];
    if (is_communication(e))
      transfers.emplace_back(e.start_ns, e.end_ns);
    else if (computes(profile, id))
      computing.emplace_back(e.start_ns, e.end_ns);
  }
  return {union_of(std::move(transfers)), union_of(std::move(computing))};
}

std::vector<StepCommunication> step_communication(const Profile& profile) {
  std::vector<StepCommunication> result;
  for (EventId step : profile.find_prefix("ProfilerStep#")) {
    const Event& s = profile[step];
    std::vector<Interval> transfers, computing;
    StepCommunication c;
    c.step = step;
    c.step_ns = s.duration_ns();
    for (EventId id = 0; id < profile.size(); ++id) {
      const Event& e = profile[id];
      if (e.end_ns <= s.start_ns || e.start_ns >= s.end_ns) continue;
      if (is_communication(e)) {
        transfers.push_back(clipped(e, s));
        if (e.start_ns >= s.start_ns) ++c.transfers;
      } else if (computes(profile, id)) {
        computing.push_back(clipped(e, s));
      }
    }
    const auto communication = union_of(std::move(transfers));
    c.communication_ns = length_of(communication);
    c.overlapped_ns = common_length(communication, union_of(std::move(computing)));
    result.push_back(c);
  }
  return result;
}

}  // namespace workbook
