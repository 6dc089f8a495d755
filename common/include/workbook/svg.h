#pragma once
/// \file
/// \brief SVG figures of a profile, viewable in any browser and embeddable in the docs.

#include <filesystem>
#include <string>

#include "workbook/profile.h"

namespace workbook {

/// How a timeline is drawn.
struct TimelineOptions {
  std::string title;         ///< shown above the lanes
  int width = 1200;          ///< pixels
  int row_height = 18;       ///< pixels per nesting level
};

/// A timeline: one lane per host thread and per device stream, nested events stacked by depth,
/// coloured by category, with names where they fit and a tooltip (name, duration) on each box.
std::string timeline_svg(const Profile& profile, const TimelineOptions& options = {});

/// Writes `timeline_svg` to `path` atomically.
void write_timeline_svg(const Profile& profile, const std::filesystem::path& path, const TimelineOptions& options = {});

}  // namespace workbook
