#pragma once
/// \file
/// \brief SVG figures of a profile, viewable in any browser and embeddable in the docs.

#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// Text made safe for SVG/XML: & < > " escaped.
std::string svg_escape(std::string_view text);

/// The opening of a figure: the SVG root element `width` x `height` on white (sans-serif, 11 px)
/// and, unless `title` is empty, the title in bold at (`margin`, `margin` + 14).
std::string svg_open(int width, int height, const std::string& title, int margin = 10);

/// A time axis of five ticks over [t0, t1] (ns): grid lines from `label_y` + 2 down to `bottom`,
/// labels at `label_y` counting from t0. `x_of` maps a time to its x pixel.
std::string svg_time_axis(std::int64_t t0, std::int64_t t1, const std::function<double(std::int64_t)>& x_of,
                          int label_y, int bottom, const std::string& grid_colour = "#ccc");

/// How a timeline is drawn.
struct TimelineOptions {
  std::string title;    ///< shown above the lanes
  int width = 1200;     ///< pixels
  int row_height = 18;  ///< pixels per nesting level
};

/// A timeline: one lane per host thread and per device stream, nested events stacked by depth,
/// coloured by category, with names where they fit and a tooltip (name, duration) on each box.
std::string timeline_svg(const Profile& profile, const TimelineOptions& options = {});

/// Writes `timeline_svg` to `path` atomically.
void write_timeline_svg(const Profile& profile, const std::filesystem::path& path, const TimelineOptions& options = {});

/// One line of a plot: points (x[i], y[i]) joined in order.
struct Series {
  std::string label;               ///< legend text
  std::vector<double> x;           ///< x values, in order
  std::vector<double> y;           ///< y values, one per x
  std::string colour = "#4e79a7";  ///< stroke colour
  bool dashed = false;             ///< dashed line
};

/// Axes and labels of a line plot.
struct PlotOptions {
  std::string title;        ///< above the plot
  std::string x_label;      ///< under the x axis
  std::string y_label;      ///< left axis (log scale when log_y)
  std::string right_label;  ///< right axis, linear from 0 to 1 (fractions); empty: no right axis
  bool log_x = true;        ///< logarithmic x axis
  bool log_y = true;        ///< logarithmic left axis
  int width = 820;          ///< pixels
  int height = 460;         ///< pixels
};

/// A line plot with a legend: `left` series against the left axis, `right` series (values in
/// [0, 1]) against the right one. Non-positive values are skipped on log axes.
std::string line_plot_svg(const std::vector<Series>& left, const PlotOptions& options,
                          const std::vector<Series>& right = {});

}  // namespace workbook
