#include "workbook/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "workbook/atomic_file.h"
#include "workbook/key_averages.h"

namespace workbook {
namespace {

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

const char* colour(Category c) {
  switch (c) {
    case Category::cpu_op: return "#4e79a7";
    case Category::user_annotation: return "#f28e2b";
    case Category::kernel: return "#59a14f";
    case Category::runtime: return "#b07aa1";
    case Category::memory: return "#e15759";
    case Category::other: return "#9c9c9c";
  }
  return "#9c9c9c";
}

}  // namespace

std::string timeline_svg(const Profile& p, const TimelineOptions& o) {
  const int label_width = 150, margin = 10, title_height = o.title.empty() ? 0 : 24, axis_height = 24;
  const double plot_width = o.width - label_width - 2 * margin;
  std::int64_t t0 = 0, t1 = 1;
  if (!p.empty()) {
    t0 = p.events().front().start_ns;
    t1 = t0;
    for (const Event& e : p.events()) {
      t0 = std::min(t0, e.start_ns);
      t1 = std::max(t1, e.end_ns);
    }
    if (t1 == t0) t1 = t0 + 1;
  }
  auto x_of = [&](std::int64_t t) { return label_width + margin + plot_width * double(t - t0) / double(t1 - t0); };

  // One lane per (device, thread); a lane is as tall as its deepest nesting.
  std::map<std::pair<std::string, std::uint64_t>, int> lane_depth;
  std::vector<int> depth(p.size(), 0);
  for (EventId id = 0; id < p.size(); ++id) {
    const Event& e = p[id];
    int d = 0;
    for (auto q = p.parent(id); q >= 0; q = p.parent(EventId(q))) {
      const Event& up = p[EventId(q)];
      if (up.device == e.device && up.thread == e.thread) ++d;
    }
    depth[id] = d;
    auto& deepest = lane_depth[{e.device, e.thread}];
    deepest = std::max(deepest, d + 1);
  }
  std::map<std::pair<std::string, std::uint64_t>, int> lane_top;
  int y = margin + title_height + axis_height;
  for (auto& [lane, rows] : lane_depth) {
    lane_top[lane] = y;
    y += rows * o.row_height + 8;
  }
  const int height = y + margin;

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      o.width, height, o.width, height);
  if (!o.title.empty())
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", margin,
                       margin + 14, escape(o.title));
  // Time axis: five ticks over the span.
  const int axis_y = margin + title_height + 14;
  for (int k = 0; k <= 4; ++k) {
    const std::int64_t t = t0 + (t1 - t0) * k / 4;
    const double x = x_of(t);
    svg += fmt::format("<line x1=\"{:.1f}\" y1=\"{}\" x2=\"{:.1f}\" y2=\"{}\" stroke=\"#ccc\"/>\n", x, axis_y + 2, x,
                       height - margin);
    const char* anchor = k == 0 ? "start" : k == 4 ? "end" : "middle";  // keep the end labels inside
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\" fill=\"#555\">{}</text>\n", x, axis_y, anchor,
                       escape(format_time_us(double(t - t0) / 1e3)));
  }
  for (auto& [lane, top] : lane_top) {
    const std::string label = lane.first == "cpu" ? fmt::format("thread {}", lane.second)
                                                  : fmt::format("{} stream {}", lane.first, lane.second);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", margin, top + 13, escape(label));
  }
  for (EventId id = 0; id < p.size(); ++id) {
    const Event& e = p[id];
    const int top = lane_top[{e.device, e.thread}] + depth[id] * o.row_height;
    const double x = x_of(e.start_ns);
    const double w = std::max(1.0, x_of(e.end_ns) - x);
    const std::string tip = e.category == Category::memory
                                ? fmt::format("{} {}", e.name, format_memory(e.bytes))
                                : fmt::format("{} ({}) {}", e.name, category_name(e.category),
                                              format_time_us(double(e.duration_ns()) / 1e3));
    svg += fmt::format(
        "<g><title>{}</title><rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\" "
        "stroke=\"white\" stroke-width=\"0.5\"/>",
        escape(tip), x, top, w, o.row_height - 2, colour(e.category));
    // About 6.5 px per character at 11 px: write the name only where it fits.
    if (w > 6.5 * double(e.name.size()) + 4)
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"white\">{}</text>", x + 2, top + 12, escape(e.name));
    svg += "</g>\n";
  }
  svg += "</svg>\n";
  return svg;
}

void write_timeline_svg(const Profile& profile, const std::filesystem::path& path, const TimelineOptions& options) {
  write_file_atomically(path, timeline_svg(profile, options));
}

}  // namespace workbook
