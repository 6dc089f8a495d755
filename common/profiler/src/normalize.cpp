#include "normalize.h"

#include <algorithm>
#include <array>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

namespace workbook::detail {

bool is_profiler_utility(std::string_view name, Category category) {
  static constexpr std::array<std::string_view, 7> names{"[OutOfMemory]",
                                                         "profiler::_record_function_enter",
                                                         "profiler::_record_function_enter_new",
                                                         "profiler::_record_function_exit",
                                                         "aten::is_leaf",
                                                         "aten::output_nr",
                                                         "aten::_version"};
  return category != Category::memory && std::find(names.begin(), names.end(), name) != names.end();
}

Profile normalized_profile(EventTable events) {
  // Whether each distinct name is a utility op's, asked once per name rather than per event.
  std::vector<char> utility_name(events.name_count(), -1);
  std::vector<bool> keep(events.size());
  for (std::size_t i = 0; i < events.size(); ++i) {
    char& utility = utility_name[events.name_id(i)];
    if (utility < 0) utility = is_profiler_utility(events.name(i), Category::cpu_op) ? 1 : 0;
    keep[i] = utility == 0 || events.category(i) == Category::memory;
  }
  events.keep_only(keep);
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (std::size_t i = 0; i < events.size(); ++i) origin = std::min(origin, events.start_ns(i));
  if (!events.shift_times(origin))
    throw std::range_error("time stamps span more than 2^63 ns (292 years): out of range");
  return Profile(std::move(events));
}

Profile normalized_profile(const std::vector<Event>& events) { return normalized_profile(EventTable(events)); }

std::vector<Event> events_from(std::vector<Event> events, std::string_view first_kept) {
  std::optional<std::int64_t> from;
  for (const Event& e : events)
    if (e.on_host() && e.name == first_kept && (!from || e.start_ns < *from)) from = e.start_ns;
  if (!from) return events;
  std::unordered_set<std::int64_t> dropped_correlations, dropped_ops;
  for (const Event& e : events) {
    if (e.on_device() || e.start_ns >= *from) continue;
    if (e.correlation != 0) dropped_correlations.insert(e.correlation);
    if (e.external_id != 0) dropped_ops.insert(e.external_id);
  }
  auto dropped = [&](const Event& e) {
    if (e.start_ns < *from) return true;
    return e.on_device() && ((e.correlation != 0 && dropped_correlations.count(e.correlation) != 0) ||
                             (e.external_id != 0 && dropped_ops.count(e.external_id) != 0));
  };
  events.erase(std::remove_if(events.begin(), events.end(), dropped), events.end());
  return events;
}

}  // namespace workbook::detail
