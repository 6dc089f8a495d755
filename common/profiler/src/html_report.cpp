// The report's data, per trace, as JSON for the page's script (html_report_page.h draws it).
#include "workbook/profiler/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <set>

#include "html_report_page.h"
#include "workbook/profiler/advisor.h"
#include "workbook/profiler/flame_graph.h"
#include "workbook/profiler/format.h"
#include "workbook/profiler/gpu_analysis.h"
#include "workbook/profiler/kernel_names.h"
#include "workbook/profiler/key_averages.h"
#include "workbook/profiler/memory_timeline.h"
#include "workbook/profiler/svg.h"

namespace workbook {
namespace {

using nlohmann::json;

double us(std::int64_t ns) { return double(ns) / 1e3; }

// The host's CPU-op time as disjoint intervals (nested and parallel ops counted once), sorted.
std::vector<std::pair<std::int64_t, std::int64_t>> cpu_op_union(const Profile& profile) {
  std::vector<std::pair<std::int64_t, std::int64_t>> spans;
  for (const EventView e : profile.events())
    if (e.on_host() && e.category == Category::cpu_op && e.end_ns > e.start_ns)
      spans.emplace_back(e.start_ns, e.end_ns);
  std::sort(spans.begin(), spans.end());
  std::vector<std::pair<std::int64_t, std::int64_t>> merged;
  for (const auto& s : spans) {
    if (!merged.empty() && s.first <= merged.back().second)
      merged.back().second = std::max(merged.back().second, s.second);
    else
      merged.push_back(s);
  }
  return merged;
}

std::int64_t covered_within(const std::vector<std::pair<std::int64_t, std::int64_t>>& merged, std::int64_t from,
                            std::int64_t to) {
  std::int64_t total = 0;
  auto it = std::lower_bound(merged.begin(), merged.end(), std::pair{from, from},
                             [](const auto& a, const auto& b) { return a.second < b.first; });
  for (; it != merged.end() && it->first < to; ++it)
    total += std::max<std::int64_t>(0, std::min(it->second, to) - std::max(it->first, from));
  return total;
}

// One overview row: a step's (or the whole trace's) time split into CPU ops, GPU work and idle.
json overview_row(std::string_view name, std::int64_t from, std::int64_t to, std::int64_t cpu_ops_ns,
                  const std::vector<DeviceUse>* devices) {
  json row{{"name", name},
           {"wall_us", us(to - from)},
           {"cpu_ops_us", us(cpu_ops_ns)},
           {"cpu_outside_ops_us", us(to - from - cpu_ops_ns)}};
  if (devices && !devices->empty()) {
    std::int64_t kernel = 0, memcpy = 0, memset = 0, busiest = 0;
    for (const auto& d : *devices) {
      kernel += d.kernel_ns, memcpy += d.memcpy_ns, memset += d.memset_ns;
      busiest = std::max(busiest, d.busy_ns);
    }
    row["gpu_kernels_us"] = us(kernel);
    row["gpu_memcpy_us"] = us(memcpy);
    row["gpu_memset_us"] = us(memset);
    row["gpu_idle_us"] = us(std::max<std::int64_t>(0, (to - from) - busiest));
  }
  return row;
}

// At most this many steps are listed one by one (a long training trace has tens of thousands);
// the whole-trace row covers the rest, and the page says how many were left out.
constexpr std::size_t kStepsListed = 100;

json overview(const Profile& profile, const GpuAnalysis& gpu) {
  const auto merged = cpu_op_union(profile);
  const bool has_gpu = !gpu.devices.empty();
  json rows = json::array();
  std::vector<EventId> steps;
  for (EventId id : profile.find_prefix("ProfilerStep#"))
    if (profile[id].on_host()) steps.push_back(id);
  for (std::size_t k = 0; k < std::min(steps.size(), kStepsListed); ++k) {
    const EventView step = profile[steps[k]];
    const StepUse* use = k < gpu.steps.size() && gpu.steps[k].name == step.name ? &gpu.steps[k] : nullptr;
    rows.push_back(overview_row(step.name, step.start_ns, step.end_ns,
                                covered_within(merged, step.start_ns, step.end_ns), use ? &use->devices : nullptr));
  }
  std::int64_t first = 0, last = 0;
  if (!profile.empty()) {
    first = profile.events().front().start_ns;
    for (const EventView e : profile.events()) last = std::max(last, e.end_ns);
  }
  rows.push_back(
      overview_row("whole trace", first, last, covered_within(merged, first, last), has_gpu ? &gpu.devices : nullptr));
  return {
      {"rows", rows}, {"has_gpu", has_gpu}, {"steps_not_listed", steps.size() - std::min(steps.size(), kStepsListed)}};
}

json kernels(const GpuAnalysis& gpu) {
  json out = json::array();
  for (const auto& k : gpu.kernels) {
    const KernelName decoded = decode_kernel_name(k.name);
    out.push_back({{"name", k.name},
                   {"family", decoded.family},
                   {"fields", decoded.describe_fields()},
                   {"count", k.count},
                   {"total_us", us(k.total_ns)},
                   {"avg_us", k.count ? us(k.total_ns) / double(k.count) : 0.0},
                   {"share", k.share}});
  }
  return out;
}

json device_use(const DeviceUse& d) {
  json streams = json::array();
  for (const auto& s : d.streams)
    streams.push_back({{"stream", s.stream},
                       {"busy_us", us(s.busy_ns)},
                       {"busy_fraction", s.busy_fraction},
                       {"activities", s.activities}});
  return {{"device", d.device},       {"window_us", us(d.window_ns)},
          {"busy_us", us(d.busy_ns)}, {"busy_fraction", d.busy_fraction},
          {"idle_us", us(d.idle_ns)}, {"streams", streams}};
}

json gpu_use(const GpuAnalysis& gpu) {
  json devices = json::array(), steps = json::array();
  for (const auto& d : gpu.devices) devices.push_back(device_use(d));
  for (std::size_t k = 0; k < std::min(gpu.steps.size(), kStepsListed); ++k) {
    const StepUse& s = gpu.steps[k];
    json per_device = json::array();
    for (const auto& d : s.devices) per_device.push_back({{"device", d.device}, {"busy_fraction", d.busy_fraction}});
    steps.push_back(
        {{"name", s.name}, {"window_us", us(s.window_ns)}, {"devices", per_device}, {"verdict", s.verdict}});
  }
  return {{"devices", devices},
          {"steps", steps},
          {"steps_left_out", gpu.steps_left_out},
          {"steps_not_listed", gpu.steps.size() - std::min(gpu.steps.size(), kStepsListed)}};
}

// At most about `limit` points of a timeline: per bucket of consecutive points its lowest and its
// highest, in time order, so the peak and every dip stay drawn.
json memory_series(const MemoryTimeline& timeline, std::size_t limit = 2000) {
  json points = json::array();
  const auto& p = timeline.points;
  if (p.empty()) return points;
  const std::int64_t origin = p.front().time_ns;
  const auto put = [&](const MemoryPoint& m) {
    points.push_back({us(m.time_ns - origin) / 1e3, double(m.live_bytes) / (1 << 20)});
  };
  const std::size_t per_bucket = std::max<std::size_t>(1, (p.size() + limit / 2 - 1) / (limit / 2));
  for (std::size_t begin = 0; begin < p.size(); begin += per_bucket) {
    const std::size_t end = std::min(p.size(), begin + per_bucket);
    std::size_t lo = begin, hi = begin;
    for (std::size_t i = begin; i < end; ++i) {
      if (p[i].live_bytes < p[lo].live_bytes) lo = i;
      if (p[i].live_bytes > p[hi].live_bytes) hi = i;
    }
    put(p[std::min(lo, hi)]);
    if (lo != hi) put(p[std::max(lo, hi)]);
  }
  return points;
}

json memory(const Profile& profile) {
  json out = json::array();
  std::set<std::pair<int, std::int64_t>> seen;  // (device type, index) with memory events
  for (const EventView e : profile.events())
    if (e.category == Category::memory) seen.insert({int(e.device_type), e.device_index});
  for (const auto& [type, index] : seen) {
    const DeviceType device = DeviceType(type);
    const MemoryTimeline timeline = memory_timeline(profile, device, index);
    std::string peak_op;
    if (timeline.peak_event)
      if (const auto op = allocating_op(profile, *timeline.peak_event)) peak_op = profile[*op].name;
    out.push_back({{"device", device == DeviceType::cpu ? std::string("CPU") : fmt::format("GPU {}", index)},
                   {"peak_mib", double(timeline.peak_bytes) / (1 << 20)},
                   {"peak_op", peak_op},
                   {"events", timeline.points.size()},
                   {"points", memory_series(timeline)}});
  }
  return out;
}

// The flame graph's stacks, the heaviest first; past `limit` stacks the rest are one "(other
// stacks)" entry, so a huge trace's report stays small.
json flame(const Profile& profile, std::size_t limit = 20000) {
  std::vector<CollapsedStack> stacks = collapsed_stacks(profile);
  std::stable_sort(stacks.begin(), stacks.end(), [](const auto& a, const auto& b) { return a.value > b.value; });
  json out = json::array();
  std::int64_t rest = 0;
  for (std::size_t i = 0; i < stacks.size(); ++i) {
    if (i < limit)
      out.push_back({{"frames", stacks[i].frames}, {"us", stacks[i].value}});
    else
      rest += stacks[i].value;
  }
  if (rest > 0) out.push_back({{"frames", {"(other stacks)"}}, {"us", rest}});
  return out;
}

// JSON that is safe inside a <script> element: '<' never appears as such ("</script>" in a name).
std::string script_safe(const json& value) {
  const std::string text = value.dump(-1, ' ', false, json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    if (c == '<')
      out += "\\u003c";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string report_data_json(const ReportTrace& trace) {
  const Profile& profile = trace.profile;
  const GpuAnalysis gpu = analyze_gpu(profile);
  TableOptions all;
  all.row_limit = 0;
  json data{{"name", trace.name},
            {"events", profile.size()},
            {"span_us", us(profile.span_ns())},
            {"overview", overview(profile, gpu)},
            {"operators", json::parse(KeyAverages(profile).to_json(all))},
            {"operators_by_shape", json::parse(KeyAverages(profile, true).to_json(all))},
            {"kernels", kernels(gpu)},
            {"gpu", gpu_use(gpu)},
            {"memory", memory(profile)},
            {"flame", flame(profile)},
            {"advice", json::parse(advice_json(advise(profile)))}};
  return script_safe(data);
}

std::string html_report(const std::vector<ReportTrace>& traces, const std::string& title) {
  std::string data = "[";
  for (std::size_t i = 0; i < traces.size(); ++i) data += (i ? "," : "") + report_data_json(traces[i]);
  data += "]";
  const std::string heading = svg_escape(title);  // &, <, > and " escaped: what HTML text needs too
  return std::string("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>") + heading +
         "</title>\n<style>" + detail::kReportStyle + "</style></head>\n<body><h1>" + heading + "</h1>\n" +
         detail::kReportIntro + "<div id=\"app\"></div>\n<script type=\"application/json\" id=\"report-data\">" + data +
         "</script>\n<script>" + detail::kReportScript + "</script></body></html>\n";
}

}  // namespace workbook
