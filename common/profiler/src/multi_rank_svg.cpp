#include <fmt/format.h>

#include <algorithm>
#include <stdexcept>

#include "workbook/profiler/format.h"
#include "workbook/profiler/multi_rank.h"

namespace workbook {
namespace {

// Where the time of both sets of sorted disjoint intervals meets.
Intervals common_parts(const Intervals& a, const Intervals& b) {
  Intervals both;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t start = std::max(a[i].first, b[j].first), end = std::min(a[i].second, b[j].second);
    if (end > start) both.emplace_back(start, end);
    (a[i].second < b[j].second) ? ++i : ++j;
  }
  return both;
}

}  // namespace

std::string ranks_timeline_svg(const std::vector<Profile>& ranks, const MultiRankAnalysis& analysis,
                               const TimelineOptions& o) {
  if (ranks.size() != analysis.ranks.size() || ranks.size() != analysis.shift_ns.size())
    throw std::invalid_argument("ranks_timeline_svg: the analysis is of another set of ranks");
  const int label_width = 190, margin = 10, title_height = o.title.empty() ? 0 : 24, axis_height = 24;
  const int lane = o.row_height, rank_gap = 14, legend_height = 22;
  const double plot_width = o.width - label_width - 2 * margin;
  // The aligned span of every rank's recorded steps.
  std::vector<Activity> activities;
  std::int64_t t0 = INT64_MAX, t1 = INT64_MIN;
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    activities.push_back(activity(ranks[r]));
    for (auto step : ranks[r].find_prefix("ProfilerStep#")) {
      t0 = std::min(t0, ranks[r][step].start_ns + analysis.shift_ns[r]);
      t1 = std::max(t1, ranks[r][step].end_ns + analysis.shift_ns[r]);
    }
  }
  if (t0 >= t1) t0 = 0, t1 = 1;
  auto x_of = [&](std::int64_t t) {
    return label_width + margin + plot_width * double(std::clamp(t, t0, t1) - t0) / double(t1 - t0);
  };
  const int top = margin + title_height + axis_height;
  const int height = top + int(ranks.size()) * (2 * lane + rank_gap) + legend_height + margin;
  std::string svg = svg_open(o.width, height, o.title, margin);
  svg += svg_time_axis(t0, t1, x_of, margin + title_height + 14, height - margin - legend_height, "#ddd");
  auto boxes = [&](const Intervals& spans, std::int64_t shift, int y, int h, const char* fill, const char* extra) {
    std::string out;
    for (const auto& [start, end] : spans) {
      const double x0 = x_of(start + shift), x1 = x_of(end + shift);
      if (x1 <= x0) continue;
      out += fmt::format("<rect x=\"{:.2f}\" y=\"{}\" width=\"{:.2f}\" height=\"{}\" fill=\"{}\"{}/>\n", x0, y,
                         std::max(x1 - x0, 0.5), h, fill, extra);
    }
    return out;
  };
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const int y = top + int(r) * (2 * lane + rank_gap);
    const std::int64_t shift = analysis.shift_ns[r];
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-weight=\"bold\">{}</text>\n", margin, y + lane - 5,
                       svg_escape(shortened(analysis.ranks[r].name, 14)));
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\" text-anchor=\"end\">compute</text>\n",
                       label_width + margin - 6, y + lane - 5);
    svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\" text-anchor=\"end\">communication</text>\n",
                       label_width + margin - 6, y + 2 * lane - 5);
    svg += boxes(activities[r].computing, shift, y + 1, lane - 2, "#4e79a7", "");
    svg += boxes(activities[r].communicating, shift, y + lane + 1, lane - 2, "#f28e2b", "");
    svg += boxes(common_parts(activities[r].computing, activities[r].communicating), shift, y, 2 * lane, "#59a14f",
                 " fill-opacity=\"0.35\"");
    for (auto step : ranks[r].find_prefix("ProfilerStep#")) {
      const double x = x_of(ranks[r][step].start_ns + shift);
      svg += fmt::format(
          "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#333\" stroke-dasharray=\"2,2\">"
          "<title>{3}</title></line>\n",
          x, y - 3, y + 2 * lane + 3, svg_escape(ranks[r][step].name));
    }
  }
  const int legend_y = height - margin - 6;
  int x = label_width + margin;
  for (const auto& [fill, text] : {std::pair{"#4e79a7", "an op computing"},
                                   {"#f28e2b", "a transfer in flight"},
                                   {"#59a14f", "both: communication hidden under computation"}}) {
    svg += fmt::format(
        "<rect x=\"{}\" y=\"{}\" width=\"12\" height=\"10\" fill=\"{}\"/><text x=\"{}\" y=\"{}\">{}</text>\n", x,
        legend_y - 9, fill, x + 16, legend_y, text);
    x += 40 + int(std::string(text).size()) * 6;
  }
  svg += fmt::format("<text x=\"{}\" y=\"{}\" fill=\"#555\">dashed: step starts</text>\n", x, legend_y);
  return svg + "</svg>\n";
}

}  // namespace workbook
