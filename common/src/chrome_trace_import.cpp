#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <functional>
#include <limits>

#include "workbook/atomic_file.h"
#include "workbook/chrome_trace.h"

namespace workbook {
namespace {

using nlohmann::json;

// Kineto's categories and the older spellings Python and Kineto have used.
Category category_of(const json& event, const std::string& name) {
  auto cat = event.find("cat");
  if (cat == event.end() || !cat->is_string()) {
    // Python's legacy exporter writes no category: operators carry a namespace.
    return name.find("::") != std::string::npos ? Category::cpu_op : Category::user_annotation;
  }
  const std::string c = cat->get<std::string>();
  if (c == "cpu_op" || c == "operator" || c == "Operator") return Category::cpu_op;
  if (c == "user_annotation" || c == "gpu_user_annotation") return Category::user_annotation;
  if (c == "kernel" || c == "Kernel" || c == "gpu_memcpy" || c == "Memcpy" || c == "gpu_memset" || c == "Memset")
    return Category::kernel;
  if (c == "cuda_runtime" || c == "Runtime" || c == "cuda_driver" || c == "runtime") return Category::runtime;
  if (c == "cpu_instant_event" || c == "[memory]") return Category::memory;
  return Category::other;
}

std::uint64_t id_of(const json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) return std::uint64_t(value.get<std::int64_t>());
  if (value.is_number_float()) return std::uint64_t(std::llround(value.get<double>()));
  if (value.is_string()) return std::hash<std::string>{}(value.get<std::string>());
  return 0;
}

std::int64_t integer_arg(const json& args, const char* key) {
  auto it = args.find(key);
  if (it == args.end() || !it->is_number()) return 0;
  if (it->is_number_float()) {
    double v = it->get<double>();
    return std::isfinite(v) && std::fabs(v) < 9e18 ? std::int64_t(v) : 0;
  }
  return it->is_number_unsigned() ? std::int64_t(it->get<std::uint64_t>()) : it->get<std::int64_t>();
}

std::vector<std::vector<std::int64_t>> shapes_of(const json& args) {
  std::vector<std::vector<std::int64_t>> shapes;
  auto it = args.find("Input Dims");
  if (it == args.end()) it = args.find("Input dims");
  if (it == args.end() || !it->is_array()) return shapes;
  for (const auto& input : *it) {
    std::vector<std::int64_t> shape;
    if (input.is_array())
      for (const auto& d : input)
        if (d.is_number_integer()) shape.push_back(d.get<std::int64_t>());
    shapes.push_back(std::move(shape));
  }
  return shapes;
}

class Reader {
 public:
  explicit Reader(const std::string& source) : source_(source) {}

  [[noreturn]] void fail(const std::string& what) const { throw TraceError(fmt::format("{}: {}", source_, what)); }

  double micros(const json& event, const char* key, std::size_t index) const {
    auto it = event.find(key);
    if (it == event.end() || !it->is_number())
      fail(fmt::format("event {}: '{}' is missing or not a number", index, key));
    double v = it->get<double>();
    // 9e12 µs is about 104 days of trace, past any profile; beyond it ns would overflow.
    if (!std::isfinite(v) || std::fabs(v) > 9e15) fail(fmt::format("event {}: '{}' is out of range", index, key));
    return v;
  }

  Profile read(const json& root) const {
    const json* list = &root;
    if (root.is_object()) {
      auto it = root.find("traceEvents");
      if (it == root.end()) fail("no \"traceEvents\" array (is this a chrome trace?)");
      list = &*it;
    }
    if (!list->is_array()) fail("\"traceEvents\" is not an array");

    std::vector<Event> events;
    for (std::size_t i = 0; i < list->size(); ++i) {
      const json& ev = (*list)[i];
      if (!ev.is_object()) fail(fmt::format("event {} is not an object", i));
      auto ph_it = ev.find("ph");
      if (ph_it == ev.end() || !ph_it->is_string()) fail(fmt::format("event {}: 'ph' is missing", i));
      const std::string ph = ph_it->get<std::string>();
      if (ph != "X" && ph != "i" && ph != "I") continue;  // metadata, flows, counters
      auto name_it = ev.find("name");
      if (name_it == ev.end() || !name_it->is_string()) fail(fmt::format("event {}: 'name' is missing", i));

      Event e;
      e.name = name_it->get<std::string>();
      e.category = category_of(ev, e.name);
      const std::string cat = ev.contains("cat") && ev["cat"].is_string() ? ev["cat"].get<std::string>() : "";
      if (cat == "Trace") continue;  // Kineto's whole-trace span, not an activity
      if (ph != "X" && e.category != Category::memory) continue;
      const double ts = micros(ev, "ts", i);
      const double dur = ph == "X" ? micros(ev, "dur", i) : 0.0;
      if (dur < 0) fail(fmt::format("event {} ({}): negative duration", i, e.name));
      e.start_ns = std::llround(ts * 1e3);
      e.end_ns = e.start_ns + std::llround(dur * 1e3);
      e.thread = ev.contains("tid") ? id_of(ev["tid"]) : 0;
      const json empty = json::object();
      const json& args = ev.contains("args") && ev["args"].is_object() ? ev["args"] : empty;
      e.input_shapes = shapes_of(args);
      e.correlation = integer_arg(args, "correlation");
      e.flops = integer_arg(args, "flops");
      if (e.category == Category::memory) e.bytes = integer_arg(args, "Bytes");
      if (e.category == Category::kernel) {
        std::int64_t dev = args.contains("device") ? integer_arg(args, "device")
                                                   : std::int64_t(ev.contains("pid") ? id_of(ev["pid"]) : 0);
        e.device = fmt::format("cuda:{}", dev);
      }
      events.push_back(std::move(e));
    }

    // Times start at zero, as in a profile recorded here.
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (const Event& e : events) origin = std::min(origin, e.start_ns);
    for (Event& e : events) {
      e.start_ns -= origin;
      e.end_ns -= origin;
    }
    return Profile(std::move(events));
  }

 private:
  std::string source_;
};

}  // namespace

Profile parse_chrome_trace(std::string_view text, const std::string& source) {
  Reader reader(source);
  json root;
  try {
    root = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's message starts with its own error code; the useful part follows.
    auto cut = what.find("parse error");
    reader.fail("not valid JSON: " + (cut == std::string::npos ? what : what.substr(cut)));
  }
  try {
    return reader.read(root);
  } catch (const json::exception& e) {
    reader.fail(std::string("unexpected value: ") + e.what());
  }
}

Profile load_chrome_trace(const std::filesystem::path& path) {
  std::string text;
  try {
    text = read_file(path);
  } catch (const std::exception& e) {
    throw TraceError(e.what());
  }
  if (text.empty()) throw TraceError(fmt::format("{}: empty file", path.string()));
  return parse_chrome_trace(text, path.string());
}

}  // namespace workbook
