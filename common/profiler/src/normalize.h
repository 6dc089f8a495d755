#pragma once
// The one path from raw events to a Profile, shared by both producers (the LibTorch recorder and
// the chrome-trace importer), so that a recorded profile and the same profile read back from its
// trace are built by the same rules.

#include <string_view>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook::detail {

/// Python's `_filter_name` (torch/autograd/profiler.py): the profiler's own utility ops that
/// Python leaves out of its events and tables.
bool is_profiler_utility(std::string_view name, Category category);

/// Drops the profiler's utility ops, shifts times so the first event starts at 0 and builds the
/// Profile. Throws std::range_error when the time stamps span more than int64 nanoseconds.
Profile normalized_profile(EventTable events);
/// The same from events one by one (the LibTorch recorder's).
Profile normalized_profile(const std::vector<Event>& events);

/// The events from the host event named `first_kept` on (a Session's first active step, when its
/// warm-up was recorded in the same recording): every event that starts before that event's start
/// is dropped, and with them the device activity their ops launched (matched by correlation id,
/// and by External id for device work such as a GPU lane's mirror of a dropped region). A region
/// opened before the cut and closed after it goes too; what ran inside it after the cut stays.
/// Without a host event of that name, the events as they are.
std::vector<Event> events_from(std::vector<Event> events, std::string_view first_kept);

}  // namespace workbook::detail
