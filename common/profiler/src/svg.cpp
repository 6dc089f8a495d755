#include "workbook/profiler/svg.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/format.h"

namespace workbook {
std::string svg_escape(std::string_view text) {
  std::string out;
  for (char c : printable(text)) {  // XML 1.0 allows no control characters, not even as &#x1b;
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

std::string escape(std::string_view text) { return svg_escape(text); }

const char* colour(Category c) {
  switch (c) {
    case Category::cpu_op:
      return "#4e79a7";
    case Category::user_annotation:
      return "#f28e2b";
    case Category::kernel:
      return "#59a14f";
    case Category::runtime:
      return "#b07aa1";
    case Category::memory:
      return "#e15759";
    case Category::other:
      return "#9c9c9c";
  }
  return "#9c9c9c";
}

// A lane: (-1, host thread) or (device index, stream).
using Lane = std::pair<std::int64_t, std::uint64_t>;
Lane lane_of(const EventView& e) { return {e.on_device() ? e.device_index : std::int64_t{-1}, e.thread}; }

}  // namespace

std::string svg_open(int width, int height, const std::string& title, int margin) {
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      width, height);
  if (!title.empty())
    svg += fmt::format("<text x=\"{}\" y=\"{}\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", margin, margin + 14,
                       escape(title));
  return svg;
}

std::string svg_time_axis(std::int64_t t0, std::int64_t t1, const std::function<double(std::int64_t)>& x_of,
                          int label_y, int bottom, const std::string& grid_colour) {
  std::string svg;
  for (int k = 0; k <= 4; ++k) {
    const std::int64_t t = t0 + (t1 - t0) * k / 4;
    const double x = x_of(t);
    svg += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"{3}\"/>\n", x, label_y + 2,
                       bottom, grid_colour);
    const char* anchor = k == 0 ? "start" : k == 4 ? "end" : "middle";  // keep the end labels inside
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"{}\" fill=\"#555\">{}</text>\n", x, label_y, anchor,
                       escape(format_time_us(double(t - t0) / 1e3)));
  }
  return svg;
}

std::string timeline_svg(const Profile& p, const TimelineOptions& o) {
  const int label_width = 150, margin = 10, title_height = o.title.empty() ? 0 : 24, axis_height = 24;
  const double plot_width = o.width - label_width - 2 * margin;
  std::int64_t t0 = 0, t1 = 1;
  if (!p.empty()) {
    t0 = p.events().front().start_ns;
    t1 = t0;
    for (const EventView e : p.events()) {
      t0 = std::min(t0, e.start_ns);
      t1 = std::max(t1, e.end_ns);
    }
    if (t1 == t0) t1 = t0 + 1;
  }
  auto x_of = [&](std::int64_t t) { return label_width + margin + plot_width * double(t - t0) / double(t1 - t0); };

  // One lane per (device, thread); a lane is as tall as its deepest nesting.
  std::map<Lane, int> lane_depth;
  std::vector<int> depth(p.size(), 0);
  for (EventId id = 0; id < p.size(); ++id) {
    const EventView e = p[id];
    int d = 0;
    for (auto q = p.parent(id); q; q = p.parent(*q)) {
      const EventView up = p[*q];
      if (lane_of(up) == lane_of(e)) ++d;
    }
    depth[id] = d;
    auto& deepest = lane_depth[lane_of(e)];
    deepest = std::max(deepest, d + 1);
  }
  std::map<Lane, int> lane_top;
  int y = margin + title_height + axis_height;
  for (auto& [lane, rows] : lane_depth) {
    lane_top[lane] = y;
    y += rows * o.row_height + 8;
  }
  const int height = y + margin;

  std::string svg = svg_open(o.width, height, o.title, margin);
  svg += svg_time_axis(t0, t1, x_of, margin + title_height + 14, height - margin);
  for (auto& [lane, top] : lane_top) {
    const auto [device, stream] = lane;
    const std::string label =
        device < 0 ? fmt::format("thread {}", stream) : fmt::format("cuda:{} stream {}", device, stream);
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", margin, top + 13, escape(label));
  }
  for (EventId id = 0; id < p.size(); ++id) {
    const EventView e = p[id];
    const int top = lane_top[lane_of(e)] + depth[id] * o.row_height;
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

namespace {

struct Axis {
  double lo = 1, hi = 10;
  bool log = true;
  double to_unit(double v) const {
    return log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
  }
};

Axis fit_axis(const std::vector<Series>& series, bool use_x, bool log) {
  Axis a;
  a.log = log;
  bool any = false;
  for (const Series& s : series)
    for (double v : use_x ? s.x : s.y) {
      if (!std::isfinite(v) || (log && v <= 0)) continue;
      a.lo = any ? std::min(a.lo, v) : v;
      a.hi = any ? std::max(a.hi, v) : v;
      any = true;
    }
  if (!any) return Axis{1, 10, log};
  if (log && use_x) {
    a.lo /= 1.25;  // the data's own range, a little padded: x ticks sit on the data points
    a.hi *= 1.25;
  } else if (log) {
    a.lo = std::pow(10.0, std::floor(std::log10(a.lo)));
    a.hi = std::pow(10.0, std::ceil(std::log10(a.hi)));
    if (a.hi <= a.lo) a.hi = a.lo * 10;
  } else if (a.hi <= a.lo) {
    a.hi = a.lo + 1;
  }
  return a;
}

std::string tick_label(double v) {
  if (v >= 1e6 || (v > 0 && v < 1e-2)) return fmt::format("{:.0e}", v);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string line_plot_svg(const std::vector<Series>& left, const PlotOptions& o, const std::vector<Series>& right) {
  const double margin_left = 80, margin_right = o.right_label.empty() ? 30 : 80, margin_top = 40, margin_bottom = 60;
  const double pw = o.width - margin_left - margin_right, ph = o.height - margin_top - margin_bottom;
  std::vector<Series> all = left;
  all.insert(all.end(), right.begin(), right.end());
  const Axis ax = fit_axis(all, true, o.log_x);
  const Axis ay = fit_axis(left, false, o.log_y);
  const Axis ar{0, 1, false};
  auto px = [&](double v) { return margin_left + pw * ax.to_unit(v); };
  auto py = [&](const Axis& a, double v) { return margin_top + ph * (1 - a.to_unit(v)); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{}\" height=\"{}\" viewBox=\"0 0 {} {}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      o.width, o.height, o.width, o.height);
  svg += fmt::format("<text x=\"{}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{}</text>\n", margin_left,
                     escape(o.title));
  svg += fmt::format(
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n",
      margin_left, margin_top, pw, ph);
  // x ticks at the data's own x values (sizes), y ticks at powers of ten (or fifths when linear).
  std::vector<double> xs;
  for (const Series& s : all) xs.insert(xs.end(), s.x.begin(), s.x.end());
  std::sort(xs.begin(), xs.end());
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  for (double v : xs) {
    if (ax.log && v <= 0) continue;
    svg += fmt::format(
        "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#eee\"/>"
        "<text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        px(v), margin_top, margin_top + ph, margin_top + ph + 16, tick_label(v));
  }
  std::vector<double> ys;
  if (ay.log)
    for (double v = ay.lo; v <= ay.hi * 1.0001; v *= 10) ys.push_back(v);
  else
    for (int k = 0; k <= 5; ++k) ys.push_back(ay.lo + (ay.hi - ay.lo) * k / 5);
  for (double v : ys)
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#eee\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        margin_left, py(ay, v), margin_left + pw, margin_left - 6, py(ay, v) + 4, tick_label(v));
  if (!o.right_label.empty())
    for (int k = 0; k <= 5; ++k)
      svg += fmt::format("<text x=\"{}\" y=\"{:.1f}\">{:.1f}</text>\n", margin_left + pw + 6, py(ar, k / 5.0) + 4,
                         k / 5.0);
  svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", margin_left + pw / 2,
                     o.height - 20, escape(o.x_label));
  svg += fmt::format("<text transform=\"translate(18 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{}</text>\n",
                     margin_top + ph / 2, escape(o.y_label));
  if (!o.right_label.empty())
    svg += fmt::format("<text transform=\"translate({:.1f} {:.1f}) rotate(90)\" text-anchor=\"middle\">{}</text>\n",
                       double(o.width) - 20, margin_top + ph / 2, escape(o.right_label));

  int legend_row = 0;
  auto draw = [&](const Series& s, const Axis& a) {
    std::string points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if ((ax.log && s.x[i] <= 0) || (a.log && s.y[i] <= 0) || !std::isfinite(s.y[i])) continue;
      points += fmt::format("{:.1f},{:.1f} ", px(s.x[i]), py(a, s.y[i]));
      svg += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"2.5\" fill=\"{}\"/>", px(s.x[i]), py(a, s.y[i]),
                         s.colour);
    }
    svg += fmt::format("<polyline class=\"data\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n",
                       points, s.colour, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
    const double ly = margin_top + 12 + 16 * legend_row++;
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"{3}\" stroke-width=\"2\"{4}/>"
        "<text x=\"{5}\" y=\"{6:.1f}\">{7}</text>\n",
        margin_left + 10, ly, margin_left + 34, s.colour, s.dashed ? " stroke-dasharray=\"6 4\"" : "", margin_left + 40,
        ly + 4, escape(s.label));
  };
  for (const Series& s : left) draw(s, ay);
  for (const Series& s : right) draw(s, ar);
  svg += "</svg>\n";
  return svg;
}

void write_timeline_svg(const Profile& profile, const std::filesystem::path& path, const TimelineOptions& options) {
  write_file_atomically(path, timeline_svg(profile, options));
}

}  // namespace workbook
