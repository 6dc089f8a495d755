#include "workbook/profiler/gpu_analysis.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <unordered_map>

#include "saturating.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/svg.h"

namespace workbook {
namespace {

bool keeps_busy(const EventView& e) {
  return e.on_device() &&
         (e.work == DeviceWork::kernel || e.work == DeviceWork::memcpy || e.work == DeviceWork::memset);
}

// Union of intervals clipped to [from, to), with the gaps between them.
struct Union {
  std::int64_t busy = 0, gaps = 0, longest_gap = 0;
};

Union union_of(std::vector<std::pair<std::int64_t, std::int64_t>> spans, std::int64_t from, std::int64_t to) {
  Union u;
  for (auto& [s, e] : spans) {
    s = std::max(s, from);
    e = std::min(e, to);
  }
  spans.erase(std::remove_if(spans.begin(), spans.end(), [](const auto& p) { return p.second <= p.first; }),
              spans.end());
  std::sort(spans.begin(), spans.end());
  bool open = false;
  std::int64_t start = 0, end = 0;
  for (const auto& [s, e] : spans) {
    if (open && s <= end) {
      end = std::max(end, e);
      continue;
    }
    if (open) {
      u.busy = detail::sat_add(u.busy, end - start);
      ++u.gaps;
      u.longest_gap = std::max(u.longest_gap, s - end);
    }
    start = s;
    end = e;
    open = true;
  }
  if (open) u.busy = detail::sat_add(u.busy, end - start);
  return u;
}

double fraction(std::int64_t part, std::int64_t whole) { return whole > 0 ? double(part) / double(whole) : 0.0; }

// Every device in `devices` gets a row, busy or not, and every device with work in the window;
// `work` is the device work to count.
std::vector<DeviceUse> devices_within(const Profile& p, const std::vector<EventId>& work, std::int64_t from,
                                      std::int64_t to, const std::vector<std::int64_t>& devices) {
  std::map<std::int64_t, std::vector<EventId>> by_device;
  for (std::int64_t device : devices) by_device[device];
  for (EventId id : work) by_device[p[id].device_index].push_back(id);
  std::vector<DeviceUse> out;
  for (const auto& [device, ids] : by_device) {
    DeviceUse d;
    d.device = device;
    d.window_ns = to - from;
    std::vector<std::pair<std::int64_t, std::int64_t>> spans;
    std::map<std::uint64_t, std::vector<std::pair<std::int64_t, std::int64_t>>> per_stream;
    std::map<std::uint64_t, std::int64_t> activities;
    for (EventId id : ids) {
      const EventView e = p[id];
      if (e.end_ns <= from || e.start_ns >= to) continue;
      spans.emplace_back(e.start_ns, e.end_ns);
      per_stream[e.thread].emplace_back(e.start_ns, e.end_ns);
      ++activities[e.thread];
      const std::int64_t inside = std::min(e.end_ns, to) - std::max(e.start_ns, from);
      std::int64_t& sum = e.work == DeviceWork::kernel   ? d.kernel_ns
                          : e.work == DeviceWork::memcpy ? d.memcpy_ns
                                                         : d.memset_ns;
      sum = detail::sat_add(sum, inside);
    }
    const Union u = union_of(spans, from, to);
    d.busy_ns = u.busy;
    d.busy_fraction = fraction(u.busy, d.window_ns);
    d.idle_ns = d.window_ns - u.busy;
    d.gaps = u.gaps;
    d.longest_gap_ns = u.longest_gap;
    for (const auto& [stream, stream_spans] : per_stream) {
      StreamUse s;
      s.stream = stream;
      s.busy_ns = union_of(stream_spans, from, to).busy;
      s.busy_fraction = fraction(s.busy_ns, d.window_ns);
      s.activities = activities[stream];
      d.streams.push_back(s);
    }
    out.push_back(std::move(d));
  }
  return out;
}

// The device work that overlaps each window, in one sweep: `work` (ids in start order, as a
// Profile keeps them) and the windows (in order of their start) advance together, and a heap
// ordered by end keeps the work that began before the current window and may still run. The
// cost is n log n plus the overlaps themselves, not windows x work.
std::vector<std::vector<EventId>> work_per_window(const Profile& p, const std::vector<EventId>& work,
                                                  const std::vector<std::pair<std::int64_t, std::int64_t>>& windows) {
  const auto ends_later = [&](EventId a, EventId b) { return p[a].end_ns > p[b].end_ns; };
  std::vector<std::vector<EventId>> out(windows.size());
  std::vector<EventId> running;  // a min-heap on end
  std::size_t next = 0;
  for (std::size_t w = 0; w < windows.size(); ++w) {
    const auto [from, to] = windows[w];
    for (; next < work.size() && p[work[next]].start_ns < from; ++next) {
      running.push_back(work[next]);
      std::push_heap(running.begin(), running.end(), ends_later);
    }
    while (!running.empty() && p[running.front()].end_ns <= from) {
      std::pop_heap(running.begin(), running.end(), ends_later);
      running.pop_back();
    }
    out[w] = running;
    for (std::size_t k = next; k < work.size() && p[work[k]].start_ns < to; ++k) out[w].push_back(work[k]);
  }
  return out;
}

// How many (window, work) pairs overlap, without listing them: per window, the work that starts
// before its end minus the work that ends by its start (binary searches over sorted starts and ends).
std::uint64_t overlapping_pairs(const Profile& p, const std::vector<EventId>& work,
                                const std::vector<std::pair<std::int64_t, std::int64_t>>& windows) {
  std::vector<std::int64_t> starts, ends;
  for (EventId id : work) starts.push_back(p[id].start_ns), ends.push_back(p[id].end_ns);
  std::sort(starts.begin(), starts.end());
  std::sort(ends.begin(), ends.end());
  std::uint64_t pairs = 0;
  for (const auto& [from, to] : windows) {
    const auto started = std::lower_bound(starts.begin(), starts.end(), to) - starts.begin();
    const auto ended = std::upper_bound(ends.begin(), ends.end(), from) - ends.begin();
    if (started > ended) pairs += std::uint64_t(started - ended);
  }
  return pairs;
}

std::int64_t nearest_rank(const std::vector<std::int64_t>& sorted, double q) {
  if (sorted.empty()) return 0;
  std::size_t rank = std::size_t(std::ceil(q * double(sorted.size())));
  return sorted[std::min(sorted.size(), std::max<std::size_t>(rank, 1)) - 1];
}

}  // namespace

std::int64_t busy_ns_within(const Profile& profile, const std::vector<EventId>& ids, std::int64_t from,
                            std::int64_t to) {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (EventId id : ids)
    if (keeps_busy(profile[id])) spans.emplace_back(profile[id].start_ns, profile[id].end_ns);
  return union_of(std::move(spans), from, to).busy;
}

GpuAnalysis analyze_gpu(const Profile& p) {
  GpuAnalysis a;
  std::vector<EventId> work;
  std::unordered_map<std::int64_t, EventId> launches;
  std::map<std::string, KernelUse> kernels;
  std::int64_t kernel_total = 0, first = 0, last = 0;
  bool any = false;
  for (EventId id = 0; id < p.size(); ++id) {
    const EventView e = p[id];
    first = any ? std::min(first, e.start_ns) : e.start_ns;
    last = any ? std::max(last, e.end_ns) : e.end_ns;
    any = true;
    if (e.category == Category::runtime && e.on_host() && e.correlation != 0) launches.emplace(e.correlation, id);
    if (!keeps_busy(e)) continue;
    work.push_back(id);
    if (e.work == DeviceWork::kernel) {
      KernelUse& k = kernels[std::string(e.name)];
      k.name = e.name;
      ++k.count;
      k.total_ns = detail::sat_add(k.total_ns, e.duration_ns());
      kernel_total = detail::sat_add(kernel_total, e.duration_ns());
    }
  }
  if (work.empty()) return a;
  std::vector<std::int64_t> devices;
  for (EventId id : work) devices.push_back(p[id].device_index);
  std::sort(devices.begin(), devices.end());
  devices.erase(std::unique(devices.begin(), devices.end()), devices.end());
  a.devices = devices_within(p, work, first, last, devices);
  for (auto& [name, k] : kernels) {
    k.share = fraction(k.total_ns, kernel_total);
    a.kernels.push_back(k);
  }
  std::stable_sort(a.kernels.begin(), a.kernels.end(),
                   [](const KernelUse& x, const KernelUse& y) { return x.total_ns > y.total_ns; });
  std::vector<std::int64_t> delays;
  for (EventId id : work) {
    const EventView e = p[id];
    auto launch = e.correlation != 0 ? launches.find(e.correlation) : launches.end();
    if (launch != launches.end()) delays.push_back(e.start_ns - p[launch->second].start_ns);
  }
  std::sort(delays.begin(), delays.end());
  a.launch_queue.count = std::int64_t(delays.size());
  a.launch_queue.median_ns = nearest_rank(delays, 0.5);
  a.launch_queue.p90_ns = nearest_rank(delays, 0.9);
  std::vector<EventId> steps;
  std::vector<std::pair<std::int64_t, std::int64_t>> windows;
  for (EventId id : p.find_prefix("ProfilerStep#")) {
    if (!p[id].on_host()) continue;  // a step's GPU-side annotation is not a window of its own
    steps.push_back(id);
    windows.emplace_back(p[id].start_ns, p[id].end_ns);
  }
  // Steps one after another see each activity once or twice; windows that overlap wholesale would
  // see every activity in every step. Past that budget the per-step rows are left out, said why.
  const std::uint64_t pairs = overlapping_pairs(p, work, windows),
                      budget = 8 * std::uint64_t(work.size()) + 4 * std::uint64_t(windows.size()) + (1u << 20);
  if (pairs > budget) {
    a.steps_left_out = fmt::format(
        "{} ProfilerStep windows overlap each other ({} step x activity pairs for {} activities): per-step rows "
        "left out; analyse one process or thread's steps at a time",
        windows.size(), pairs, work.size());
    return a;
  }
  const auto work_in_step = work_per_window(p, work, windows);
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const EventView s = p[steps[k]];
    StepUse step;
    step.name = s.name;
    step.window_ns = s.duration_ns();
    step.devices = devices_within(p, work_in_step[k], s.start_ns, s.end_ns, {});  // devices with work in it
    double busiest = 0;
    for (const auto& d : step.devices) busiest = std::max(busiest, d.busy_fraction);
    // A step that gave the GPU nothing to do says nothing about which side bound it.
    step.verdict = work_in_step[k].empty() ? std::string("no GPU work in this step")
                   : busiest >= 0.5        ? std::string("GPU-bound")
                                           : fmt::format("CPU-bound (GPU idle {:.0f}%)", 100.0 * (1.0 - busiest));
    a.steps.push_back(std::move(step));
  }
  return a;
}

std::string format_gpu_analysis(const GpuAnalysis& a, std::size_t top_kernels) {
  if (a.devices.empty()) return "no device activity (kernels, copies, fills) in this profile\n";
  std::string out;
  for (const auto& d : a.devices) {
    out += fmt::format(
        "GPU {}: busy {} of {} ({:.1f}%), idle {} in {} gaps (longest {}); kernels {}, memcpy {}, memset {}\n",
        d.device, format_time_us(double(d.busy_ns) / 1e3), format_time_us(double(d.window_ns) / 1e3),
        100 * d.busy_fraction, format_time_us(double(d.idle_ns) / 1e3), d.gaps,
        format_time_us(double(d.longest_gap_ns) / 1e3), format_time_us(double(d.kernel_ns) / 1e3),
        format_time_us(double(d.memcpy_ns) / 1e3), format_time_us(double(d.memset_ns) / 1e3));
    for (const auto& s : d.streams)
      out += fmt::format("  stream {:<6} busy {:>10} ({:5.1f}%)  {} activities\n", s.stream,
                         format_time_us(double(s.busy_ns) / 1e3), 100 * s.busy_fraction, s.activities);
  }
  out += fmt::format("\nkernels by time (top {} of {}):\n", std::min(top_kernels, a.kernels.size()), a.kernels.size());
  for (std::size_t i = 0; i < a.kernels.size() && i < top_kernels; ++i) {
    const auto& k = a.kernels[i];
    const std::string name = shortened(printable(k.name), 70);
    out += fmt::format("  {:5.1f}%  {:>10}  x{:<5} {}\n", 100 * k.share, format_time_us(double(k.total_ns) / 1e3),
                       k.count, name);
  }
  out += fmt::format("\nlaunch queue (runtime call start -> device start), {} matched: median {}, p90 {}\n",
                     a.launch_queue.count, format_time_us(double(a.launch_queue.median_ns) / 1e3),
                     format_time_us(double(a.launch_queue.p90_ns) / 1e3));
  if (!a.steps_left_out.empty()) out += "\nsteps: " + a.steps_left_out + "\n";
  if (!a.steps.empty()) out += "\nsteps:\n";
  for (const auto& s : a.steps) {
    out += fmt::format("  {:<18} {:>10}", printable(s.name), format_time_us(double(s.window_ns) / 1e3));
    for (const auto& d : s.devices) out += fmt::format("  GPU {} busy {:5.1f}%", d.device, 100 * d.busy_fraction);
    out += "  " + s.verdict + "\n";
  }
  return out;
}

namespace {

nlohmann::json device_json(const DeviceUse& d) {
  nlohmann::json streams = nlohmann::json::array();
  for (const auto& s : d.streams)
    streams.push_back({{"stream", s.stream},
                       {"busy_us", double(s.busy_ns) / 1e3},
                       {"busy_fraction", s.busy_fraction},
                       {"activities", s.activities}});
  return {{"device", d.device},
          {"window_us", double(d.window_ns) / 1e3},
          {"busy_us", double(d.busy_ns) / 1e3},
          {"busy_fraction", d.busy_fraction},
          {"kernel_us", double(d.kernel_ns) / 1e3},
          {"memcpy_us", double(d.memcpy_ns) / 1e3},
          {"memset_us", double(d.memset_ns) / 1e3},
          {"idle_us", double(d.idle_ns) / 1e3},
          {"idle_gaps", {{"count", d.gaps}, {"longest_us", double(d.longest_gap_ns) / 1e3}}},
          {"streams", streams}};
}

}  // namespace

std::string gpu_analysis_json(const GpuAnalysis& a) {
  nlohmann::json out;
  out["devices"] = nlohmann::json::array();
  for (const auto& d : a.devices) out["devices"].push_back(device_json(d));
  out["kernels"] = nlohmann::json::array();
  for (const auto& k : a.kernels)
    out["kernels"].push_back(
        {{"name", k.name}, {"count", k.count}, {"total_us", double(k.total_ns) / 1e3}, {"share", k.share}});
  out["launch_queue"] = {{"count", a.launch_queue.count},
                         {"median_us", double(a.launch_queue.median_ns) / 1e3},
                         {"p90_us", double(a.launch_queue.p90_ns) / 1e3}};
  out["steps"] = nlohmann::json::array();
  for (const auto& s : a.steps) {
    nlohmann::json devices = nlohmann::json::array();
    for (const auto& d : s.devices) devices.push_back(device_json(d));
    out["steps"].push_back(
        {{"name", s.name}, {"window_us", double(s.window_ns) / 1e3}, {"devices", devices}, {"verdict", s.verdict}});
  }
  if (!a.steps_left_out.empty()) out["steps_left_out"] = a.steps_left_out;
  return out.dump(2) + "\n";
}

std::string gpu_utilisation_svg(const GpuAnalysis& a, const std::string& title) {
  // Columns: the whole trace, then each step. Rows: each device, then its streams. A figure to
  // read, not a dump: at most kMaxSteps steps, kMaxDevices devices and kMaxStreams streams per device
  // (the first), said in a note.
  constexpr std::size_t kMaxSteps = 64, kMaxDevices = 16, kMaxStreams = 16;
  bool streams_cut = false;
  struct Row {
    std::string label;
    std::vector<double> cells;
  };
  const std::size_t steps_shown = std::min(a.steps.size(), kMaxSteps),
                    devices_shown = std::min(a.devices.size(), kMaxDevices);
  std::vector<std::string> columns{"whole trace"};
  for (std::size_t k = 0; k < steps_shown; ++k) columns.push_back(a.steps[k].name);
  std::vector<Row> rows;
  for (std::size_t dev = 0; dev < devices_shown; ++dev) {
    const DeviceUse& d = a.devices[dev];
    Row device{fmt::format("GPU {}", d.device), {d.busy_fraction}};
    std::map<std::uint64_t, Row> streams;
    for (const auto& s : d.streams) {
      if (streams.size() == kMaxStreams) {
        streams_cut = true;
        break;
      }
      streams[s.stream] = Row{fmt::format("  stream {}", s.stream), {s.busy_fraction}};
    }
    for (std::size_t k = 0; k < steps_shown; ++k) {
      const DeviceUse* in_step = nullptr;
      for (const auto& sd : a.steps[k].devices)
        if (sd.device == d.device) in_step = &sd;
      device.cells.push_back(in_step ? in_step->busy_fraction : 0.0);
      std::map<std::uint64_t, double> busy_in_step;  // one pass over the step's streams, not one per row
      if (in_step)
        for (const auto& ss : in_step->streams)
          if (streams.count(ss.stream)) busy_in_step[ss.stream] = ss.busy_fraction;
      for (auto& [id, row] : streams) {
        const auto f = busy_in_step.find(id);
        row.cells.push_back(f == busy_in_step.end() ? 0.0 : f->second);
      }
    }
    rows.push_back(device);
    for (auto& [id, row] : streams) rows.push_back(row);
  }
  const int label_w = 130, cell_w = 110, cell_h = 26, top = 64, left = 10;
  const int width = left + label_w + cell_w * int(columns.size()) + 10, height = top + cell_h * int(rows.size()) + 30;
  std::string svg = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" "
      "font-size=\"11\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n"
      "<text x=\"{2}\" y=\"22\" font-size=\"14\" font-weight=\"bold\">{3}</text>\n"
      "<text x=\"{2}\" y=\"40\" fill=\"#555\">GPU busy fraction (kernels, copies, fills) per window; darker is "
      "busier{4}</text>\n",
      width, height, left, svg_escape(title),
      steps_shown < a.steps.size() || devices_shown < a.devices.size() || streams_cut
          ? fmt::format(" (the first {} of {} steps, {} of {} devices, at most {} streams each)", steps_shown,
                        a.steps.size(), devices_shown, a.devices.size(), kMaxStreams)
          : std::string());
  for (std::size_t c = 0; c < columns.size(); ++c)
    svg += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n",
                       left + label_w + int(c) * cell_w + cell_w / 2, top - 6, svg_escape(columns[c]));
  for (std::size_t r = 0; r < rows.size(); ++r) {
    const int y = top + int(r) * cell_h;
    svg += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", left, y + 17, svg_escape(rows[r].label));
    for (std::size_t c = 0; c < rows[r].cells.size(); ++c) {
      const double f = std::clamp(rows[r].cells[c], 0.0, 1.0);
      const int shade = int(235 - 175 * f);
      svg += fmt::format(
          "<g><title>{} · {}: {:.1f}% busy</title><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" "
          "fill=\"rgb({},{},255)\" "
          "stroke=\"white\"/><text x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"{}\">{:.1f}%</text></g>\n",
          svg_escape(rows[r].label), svg_escape(columns[c]), 100 * f, left + label_w + int(c) * cell_w, y, cell_w,
          cell_h, shade, shade, left + label_w + int(c) * cell_w + cell_w / 2, y + 17, f > 0.5 ? "white" : "black",
          100 * f);
    }
  }
  return svg + "</svg>\n";
}

}  // namespace workbook
