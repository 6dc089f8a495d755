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
bool is_profiler_utility(const Event& event);

/// Drops the profiler's utility ops, shifts times so the first event starts at 0 and builds the
/// Profile. Throws std::range_error when the time stamps span more than int64 nanoseconds.
Profile normalized_profile(std::vector<Event> events);

/// The recording from the host event named `first_kept` on: every event that starts before it is
/// dropped, and with them the device activity their launches started (matched by correlation id).
/// Times start again at 0. Without such an event, the profile as it is.
Profile from_event_on(const Profile& profile, std::string_view first_kept);

}  // namespace workbook::detail
