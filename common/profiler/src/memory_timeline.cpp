#include "workbook/profiler/memory_timeline.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "saturating.h"
#include "workbook/profiler/atomic_file.h"
#include "workbook/profiler/svg.h"

namespace workbook {

std::int64_t MemoryTimeline::live_at(std::int64_t time_ns) const {
  const auto after = std::upper_bound(points.begin(), points.end(), time_ns,
                                      [](std::int64_t t, const MemoryPoint& p) { return t < p.time_ns; });
  return after == points.begin() ? 0 : std::prev(after)->live_bytes;
}

std::int64_t MemoryTimeline::peak_between(std::int64_t begin_ns, std::int64_t end_ns) const {
  std::int64_t peak = live_at(begin_ns - 1);
  for (const MemoryPoint& p : points)
    if (p.time_ns >= begin_ns && p.time_ns <= end_ns) peak = std::max(peak, p.live_bytes);
  return peak;
}

MemoryTimeline memory_timeline(const Profile& profile, DeviceType device, std::int64_t device_index) {
  MemoryTimeline timeline;
  timeline.device = device;
  timeline.device_index = device_index;
  std::int64_t live = 0;
  for (EventId id = 0; id < profile.size(); ++id) {
    const EventView e = profile[id];
    if (e.category != Category::memory || e.device_type != device) continue;
    if (device != DeviceType::cpu && e.device_index != device_index) continue;
    live = detail::sat_add(live, e.bytes);  // imported traces may hold any value
    timeline.points.push_back({e.start_ns, live, id});
    if (live > timeline.peak_bytes) {
      timeline.peak_bytes = live;
      timeline.peak_event = id;
    }
  }
  return timeline;
}

std::optional<EventId> allocating_op(const Profile& profile, EventId memory_event) {
  return profile.parent(memory_event);
}

namespace {

// Round step for axis ticks: 1, 2 or 5 times a power of ten, about `span / 5`.
double nice_step(double span) {
  if (!(span > 0)) return 1;
  const double raw = span / 5, power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (raw <= m * power) return m * power;
  return 10 * power;
}

// A unit of bytes for an axis: the largest in which `most` is at least 1.
struct Unit {
  double bytes;
  const char* name;
};
Unit unit_for(double most) {
  if (most >= 1073741824.0) return {1073741824.0, "GiB"};
  if (most >= 1048576.0) return {1048576.0, "MiB"};
  if (most >= 1024.0) return {1024.0, "KiB"};
  return {1.0, "bytes"};
}

}  // namespace

std::string memory_timeline_svg(const MemoryTimeline& timeline, const std::string& title,
                                const std::vector<TimelineBand>& bands, const std::string& peak_label, int width,
                                int height) {
  const double left = 80, right = 30, top = 40, bottom = 50;
  const double pw = width - left - right, ph = height - top - bottom;
  std::int64_t t0 = timeline.points.empty() ? 0 : timeline.points.front().time_ns;
  std::int64_t t1 = timeline.points.empty() ? 1 : timeline.points.back().time_ns;
  for (const TimelineBand& b : bands) {
    t0 = std::min(t0, b.begin_ns);
    t1 = std::max(t1, b.end_ns);
  }
  const double span = std::max(1.0, double(t1) - double(t0));
  // The axis in the unit the data need (a 0.05 MiB peak on a MiB axis is a flat line on the floor),
  // from its lowest point to a little above its peak.
  double most_bytes = 0;
  for (const MemoryPoint& p : timeline.points) most_bytes = std::max(most_bytes, std::abs(double(p.live_bytes)));
  const Unit unit = unit_for(most_bytes);
  double lowest = 0, highest = 0;
  for (const MemoryPoint& p : timeline.points) {
    lowest = std::min(lowest, double(p.live_bytes) / unit.bytes);
    highest = std::max(highest, double(p.live_bytes) / unit.bytes);
  }
  if (highest <= lowest) highest = lowest + 1;
  highest += 0.12 * (highest - lowest);  // room for the peak's label
  auto px = [&](double t) { return left + pw * (t - double(t0)) / span; };
  auto py = [&](double mib) { return top + ph * (1 - (mib - lowest) / (highest - lowest)); };

  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n",
      width, height, left, svg_escape(title));
  const char* const shades[] = {"#eef3fa", "#fbf1e6", "#edf7ee", "#f7edf5", "#f4f4ea"};
  for (std::size_t i = 0; i < bands.size(); ++i) {
    const TimelineBand& b = bands[i];
    const double x = px(double(b.begin_ns)), w = std::max(1.0, px(double(b.end_ns)) - x);
    svg +=
        fmt::format("<rect x=\"{:.1f}\" y=\"{}\" width=\"{:.1f}\" height=\"{}\" fill=\"{}\"><title>{}</title></rect>",
                    x, top, w, ph, shades[i % 5], svg_escape(b.label));
    if (w > 6.5 * double(b.label.size()))
      svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" fill=\"#555\">{}</text>\n", x + 3, top + 12, svg_escape(b.label));
  }
  svg += fmt::format(
      "<rect class=\"plot-area\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#999\"/>\n", left,
      top, pw, ph);
  const double ystep = nice_step(highest - lowest);
  for (double v = std::ceil(lowest / ystep) * ystep; v <= highest; v += ystep)
    svg += fmt::format(
        "<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/>"
        "<text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5:g}</text>\n",
        left, py(v), left + pw, left - 6, py(v) + 4, v);
  const double span_ms = span / 1e6, xstep = nice_step(span_ms);
  for (double v = 0; v <= span_ms; v += xstep)
    svg += fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{:g}</text>\n", px(double(t0) + v * 1e6),
                       top + ph + 16, v);
  svg += fmt::format(
      "<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">ms from the first event</text>\n"
      "<text transform=\"translate(20 {:.1f}) rotate(-90)\" text-anchor=\"middle\">{} live</text>\n",
      left + pw / 2, height - 12, top + ph / 2, unit.name);

  std::string points = fmt::format("{:.1f},{:.1f} ", px(double(t0)), py(0));
  double previous = 0;
  for (const MemoryPoint& p : timeline.points) {
    const double value = double(p.live_bytes) / unit.bytes;
    points += fmt::format("{0:.1f},{1:.1f} {0:.1f},{2:.1f} ", px(double(p.time_ns)), py(previous), py(value));
    previous = value;
  }
  points += fmt::format("{:.1f},{:.1f}", px(double(t1)), py(previous));
  svg += fmt::format("<polyline class=\"data\" points=\"{}\" fill=\"none\" stroke=\"#4e79a7\" stroke-width=\"1.5\"/>\n",
                     points);
  if (timeline.peak_event) {
    const auto peak = std::find_if(timeline.points.begin(), timeline.points.end(),
                                   [&](const MemoryPoint& p) { return p.event == *timeline.peak_event; });
    const double x = px(double(peak->time_ns)), y = py(double(timeline.peak_bytes) / unit.bytes);
    const std::string label =
        fmt::format("peak {:.{}f} {}{}{}", double(timeline.peak_bytes) / unit.bytes, unit.bytes > 1 ? 2 : 0, unit.name,
                    peak_label.empty() ? "" : ": ", peak_label);
    const bool flip = x > left + pw * 0.6;  // keep the label inside the plot
    svg += fmt::format(
        "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"#e15759\"/>"
        "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\" fill=\"#e15759\">{}</text>\n",
        x, y, flip ? x - 8 : x + 8, y - 6, flip ? "end" : "start", svg_escape(label));
  }
  svg += "</svg>\n";
  return svg;
}

void write_memory_timeline_svg(const MemoryTimeline& timeline, const std::filesystem::path& path,
                               const std::string& title, const std::vector<TimelineBand>& bands,
                               const std::string& peak_label) {
  write_file_atomically(path, memory_timeline_svg(timeline, title, bands, peak_label));
}

}  // namespace workbook
