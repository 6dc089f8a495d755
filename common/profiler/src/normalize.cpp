#include "normalize.h"

#include <algorithm>
#include <array>
#include <limits>
#include <stdexcept>
#include <string_view>
#include <unordered_set>

namespace workbook::detail {

bool is_profiler_utility(const Event& event) {
  static constexpr std::array<std::string_view, 7> names{"[OutOfMemory]",
                                                         "profiler::_record_function_enter",
                                                         "profiler::_record_function_enter_new",
                                                         "profiler::_record_function_exit",
                                                         "aten::is_leaf",
                                                         "aten::output_nr",
                                                         "aten::_version"};
  return event.category != Category::memory && std::find(names.begin(), names.end(), event.name) != names.end();
}

Profile normalized_profile(std::vector<Event> events) {
  events.erase(std::remove_if(events.begin(), events.end(), is_profiler_utility), events.end());
  std::int64_t origin = std::numeric_limits<std::int64_t>::max();
  for (const Event& e : events) origin = std::min(origin, e.start_ns);
  for (Event& e : events) {
    if (__builtin_sub_overflow(e.start_ns, origin, &e.start_ns) || __builtin_sub_overflow(e.end_ns, origin, &e.end_ns))
      throw std::range_error("time stamps span more than 2^63 ns (292 years): out of range");
  }
  return Profile(std::move(events));
}

Profile from_event_on(const Profile& profile, std::string_view first_kept) {
  const auto named = profile.find(first_kept);
  const auto boundary = std::find_if(named.begin(), named.end(), [&](EventId id) { return profile[id].on_host(); });
  if (boundary == named.end()) return profile;
  const std::int64_t from = profile[*boundary].start_ns;
  std::unordered_set<std::int64_t> dropped_launches;
  std::vector<Event> kept;
  for (const Event& e : profile.events()) {
    if (e.on_device()) continue;  // decided once every launch is known
    if (e.start_ns >= from)
      kept.push_back(e);
    else if (e.category == Category::runtime && e.correlation != 0)
      dropped_launches.insert(e.correlation);
  }
  for (const Event& e : profile.events())
    if (e.on_device() && e.start_ns >= from && dropped_launches.count(e.correlation) == 0) kept.push_back(e);
  return normalized_profile(std::move(kept));
}

}  // namespace workbook::detail
