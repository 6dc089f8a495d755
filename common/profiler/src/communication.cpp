#include "workbook/profiler/communication.h"

#include <algorithm>
#include <map>
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
// every collective call and transfer (an op that encloses a call is cut around it: see activity).
bool computes(const Profile& profile, EventId id) {
  const EventView e = profile[id];
  if (is_communication(e)) return false;
  return (e.on_device() && e.work == DeviceWork::kernel) ||
         (e.on_host() && e.category == Category::cpu_op && !within_collective_call(profile, id));
}

// The time of sorted disjoint `a` outside sorted disjoint `b`.
std::vector<Interval> minus(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::vector<Interval> rest;
  std::size_t j = 0;
  for (auto [start, end] : a) {
    while (j < b.size() && b[j].second <= start) ++j;
    for (std::size_t k = j; k < b.size() && b[k].first < end; ++k) {
      if (b[k].first > start) rest.emplace_back(start, b[k].first);
      start = std::max(start, b[k].second);
    }
    if (end > start) rest.emplace_back(start, end);
  }
  return rest;
}

// The part of sorted disjoint `spans` inside [lo, hi).
std::vector<Interval> within(const std::vector<Interval>& spans, std::int64_t lo, std::int64_t hi) {
  std::vector<Interval> inside;
  for (const auto& [start, end] : spans)
    if (std::min(end, hi) > std::max(start, lo)) inside.emplace_back(std::max(start, lo), std::min(end, hi));
  return inside;
}

}  // namespace

Activity activity(const Profile& profile) {
  std::vector<Interval> transfers, kernels;
  // Per host thread: its ops' time, less the time it spent in a collective call (an autograd node
  // that starts an all-reduce from a hook encloses the call; waiting in it is not computing).
  std::map<std::uint64_t, std::pair<std::vector<Interval>, std::vector<Interval>>> threads;
  for (EventId id = 0; id < profile.size(); ++id) {
    const EventView e = profile[id];
    if (is_communication(e))
      transfers.emplace_back(e.start_ns, e.end_ns);
    else if (e.on_host() && is_collective_call(e.name))
      threads[e.thread].second.emplace_back(e.start_ns, e.end_ns);
    else if (computes(profile, id))
      (e.on_device() ? kernels : threads[e.thread].first).emplace_back(e.start_ns, e.end_ns);
  }
  std::vector<Interval> computing = union_of(std::move(kernels));
  for (auto& [thread, ops_and_calls] : threads) {
    const auto rest = minus(union_of(std::move(ops_and_calls.first)), union_of(std::move(ops_and_calls.second)));
    computing.insert(computing.end(), rest.begin(), rest.end());
  }
  return {union_of(std::move(transfers)), union_of(std::move(computing))};
}

std::vector<StepCommunication> step_communication(const Profile& profile) {
  const Activity all = activity(profile);
  std::vector<StepCommunication> result;
  for (EventId step : profile.find_prefix("ProfilerStep#")) {
    const EventView s = profile[step];
    StepCommunication c;
    c.step = step;
    c.step_ns = s.duration_ns();
    for (const EventView e : profile.events())
      c.transfers += is_communication(e) && e.start_ns >= s.start_ns && e.start_ns < s.end_ns;
    const auto communication = within(all.communicating, s.start_ns, s.end_ns);
    c.communication_ns = length_of(communication);
    c.overlapped_ns = common_length(communication, within(all.computing, s.start_ns, s.end_ns));
    result.push_back(c);
  }
  return result;
}

}  // namespace workbook
