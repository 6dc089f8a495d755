#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <unistd.h>

#include <map>
#include <set>

#include "workbook/atomic_file.h"
#include "workbook/chrome_trace.h"

namespace workbook {
namespace {

using nlohmann::json;

double to_us(std::int64_t ns) { return double(ns) / 1e3; }

long device_index(const std::string& device) {
  auto colon = device.find(':');
  if (colon == std::string::npos) return 0;
  try {
    return std::stol(device.substr(colon + 1));
  } catch (...) {
    return 0;
  }
}

json metadata(const char* what, long pid, std::uint64_t tid, json args) {
  return {{"ph", "M"}, {"name", what}, {"pid", pid}, {"tid", tid}, {"ts", 0}, {"args", std::move(args)}};
}

}  // namespace

std::string to_chrome_trace(const Profile& profile, const TraceOptions& options) {
  const long pid = options.pid ? options.pid : long(::getpid());
  json events = json::array();
  std::set<std::uint64_t> host_threads;
  std::map<long, std::set<std::uint64_t>> device_streams;
  std::map<std::int64_t, EventId> launches;

  for (EventId id = 0; id < profile.size(); ++id) {
    const Event& e = profile[id];
    if (e.category == Category::memory) {
      host_threads.insert(e.thread);
      events.push_back({{"ph", "i"}, {"s", "t"}, {"cat", "cpu_instant_event"}, {"name", "[memory]"},
                        {"pid", pid}, {"tid", e.thread}, {"ts", to_us(e.start_ns)},
                        {"args", {{"Bytes", e.bytes}, {"Device Type", 0}, {"Device Id", -1}}}});
      continue;
    }
    json args = json::object();
    if (!e.input_shapes.empty()) args["Input Dims"] = e.input_shapes;
    if (e.flops > 0) args["flops"] = e.flops;
    if (e.correlation != 0) args["correlation"] = e.correlation;
    args["External id"] = id + 1;
    json out = {{"ph", "X"}, {"cat", std::string(category_name(e.category))}, {"name", e.name},
                {"ts", to_us(e.start_ns)}, {"dur", to_us(e.duration_ns())}};
    if (e.on_device()) {
      const long dev = device_index(e.device);
      device_streams[dev].insert(e.thread);
      out["pid"] = dev;
      out["tid"] = e.thread;
      args["device"] = dev;
      args["stream"] = e.thread;
    } else {
      host_threads.insert(e.thread);
      out["pid"] = pid;
      out["tid"] = e.thread;
      if (e.category == Category::runtime && e.correlation != 0) launches[e.correlation] = id;
    }
    out["args"] = std::move(args);
    events.push_back(std::move(out));
  }

  // Flow arrows from each launch to its kernel, as Kineto draws them.
  for (EventId id = 0; id < profile.size(); ++id) {
    const Event& k = profile[id];
    if (!k.on_device() || k.correlation == 0) continue;
    auto it = launches.find(k.correlation);
    if (it == launches.end()) continue;
    const Event& launch = profile[it->second];
    events.push_back({{"ph", "s"}, {"id", k.correlation}, {"pid", pid}, {"tid", launch.thread},
                      {"ts", to_us(launch.start_ns)}, {"cat", "ac2g"}, {"name", "ac2g"}});
    events.push_back({{"ph", "f"}, {"id", k.correlation}, {"pid", device_index(k.device)}, {"tid", k.thread},
                      {"ts", to_us(k.start_ns)}, {"cat", "ac2g"}, {"name", "ac2g"}, {"bp", "e"}});
  }

  events.push_back(metadata("process_name", pid, 0, {{"name", options.process_name}}));
  events.push_back(metadata("process_sort_index", pid, 0, {{"sort_index", -1}}));
  int n = 0;
  for (auto tid : host_threads)
    events.push_back(metadata("thread_name", pid, tid, {{"name", fmt::format("thread {}{}", tid, n++ ? "" : " (main)")}}));
  for (const auto& [dev, streams] : device_streams) {
    events.push_back(metadata("process_name", dev, 0, {{"name", fmt::format("GPU {}", dev)}}));
    for (auto stream : streams)
      events.push_back(metadata("thread_name", dev, stream, {{"name", fmt::format("stream {}", stream)}}));
  }

  json trace = {{"schemaVersion", 1}, {"deviceProperties", json::array()}, {"displayTimeUnit", "ms"},
                {"traceEvents", std::move(events)}};
  if (!options.trace_name.empty()) trace["traceName"] = options.trace_name;
  return trace.dump() + "\n";
}

void write_chrome_trace(const Profile& profile, const std::filesystem::path& path, const TraceOptions& options) {
  write_file_atomically(path, to_chrome_trace(profile, options));
}

}  // namespace workbook
