#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>

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

  // One trace event (a member of "traceEvents"), appended to `events` when it is an activity.
  void add(const json& ev, std::size_t i, std::vector<Event>& events) const {
    if (!ev.is_object()) fail(fmt::format("event {} is not an object", i));
    auto ph_it = ev.find("ph");
    if (ph_it == ev.end() || !ph_it->is_string()) fail(fmt::format("event {}: 'ph' is missing", i));
    const std::string ph = ph_it->get<std::string>();
    if (ph != "X" && ph != "i" && ph != "I") return;  // metadata, flows, counters
    auto name_it = ev.find("name");
    if (name_it == ev.end() || !name_it->is_string()) fail(fmt::format("event {}: 'name' is missing", i));

    Event e;
    e.name = name_it->get<std::string>();
    e.category = category_of(ev, e.name);
    auto cat_it = ev.find("cat");
    if (cat_it != ev.end() && cat_it->is_string() && cat_it->get_ref<const std::string&>() == "Trace")
      return;  // Kineto's whole-trace span, not an activity
    if (ph != "X" && e.category != Category::memory) return;
    const double ts = micros(ev, "ts", i);
    const double dur = ph == "X" ? micros(ev, "dur", i) : 0.0;
    if (dur < 0) fail(fmt::format("event {} ({}): negative duration", i, e.name));
    e.start_ns = std::llround(ts * 1e3);
    e.end_ns = e.start_ns + std::llround(dur * 1e3);
    auto tid_it = ev.find("tid");
    e.thread = tid_it != ev.end() ? id_of(*tid_it) : 0;
    static const json empty = json::object();
    auto args_it = ev.find("args");
    const json& args = args_it != ev.end() && args_it->is_object() ? *args_it : empty;
    e.input_shapes = shapes_of(args);
    e.correlation = integer_arg(args, "correlation");
    e.flops = integer_arg(args, "flops");
    if (e.category == Category::memory) e.bytes = integer_arg(args, "Bytes");
    if (e.category == Category::kernel) {
      auto pid_it = ev.find("pid");
      std::int64_t dev = args.contains("device") ? integer_arg(args, "device")
                                                 : std::int64_t(pid_it != ev.end() ? id_of(*pid_it) : 0);
      e.device = fmt::format("cuda:{}", dev);
    }
    events.push_back(std::move(e));
  }

 private:
  std::string source_;
};

// Streams the JSON: each member of "traceEvents" becomes an Event as soon as it is parsed and is
// then dropped from nlohmann's document, so memory holds the events, never the whole document
// (a DOM of a 1 GB trace needed several times its size).
class StreamingParse {
 public:
  explicit StreamingParse(const Reader& reader) : reader_(reader) {}

  bool operator()(int depth, json::parse_event_t kind, json& parsed) {
    using Kind = json::parse_event_t;
    if (depth == 0) {
      if (kind == Kind::array_start) in_events_ = saw_events_ = root_is_array_ = true;
      if (kind == Kind::value) reader_.fail("not a chrome trace: the top level is neither an object nor an array");
      return true;
    }
    if (!root_is_array_ && depth == 1) {
      if (kind == Kind::key) {
        in_trace_events_key_ = parsed.is_string() && parsed.get_ref<const std::string&>() == "traceEvents";
        return true;
      }
      if (in_trace_events_key_) {
        if (kind == Kind::array_start) return in_events_ = saw_events_ = true;
        if (kind == Kind::array_end) return in_events_ = false;
        reader_.fail("\"traceEvents\" is not an array");
      }
      // Other members (deviceProperties, metadata) are not needed: drop them when complete.
      return kind == Kind::object_start || kind == Kind::array_start;
    }
    if (in_events_ && depth == (root_is_array_ ? 1 : 2)) {
      if (kind == Kind::object_end) {
        reader_.add(parsed, index_++, events_);
        return false;
      }
      if (kind == Kind::value || kind == Kind::array_start) reader_.fail(fmt::format("event {} is not an object", index_));
    }
    return true;
  }

  Profile finish() {
    if (!saw_events_) reader_.fail("no \"traceEvents\" array (is this a chrome trace?)");
    // Times start at zero, as in a profile recorded here.
    std::int64_t origin = std::numeric_limits<std::int64_t>::max();
    for (const Event& e : events_) origin = std::min(origin, e.start_ns);
    for (Event& e : events_) {
      e.start_ns -= origin;
      e.end_ns -= origin;
    }
    return Profile(std::move(events_));
  }

 private:
  const Reader& reader_;
  bool root_is_array_ = false, in_trace_events_key_ = false, in_events_ = false, saw_events_ = false;
  std::size_t index_ = 0;
  std::vector<Event> events_;
};

template <class Input>
Profile parse_streaming(Input&& input, const std::string& source) {
  Reader reader(source);
  StreamingParse parse(reader);
  try {
    // What is left of the document: the top level without its events.
    const json rest = json::parse(std::forward<Input>(input), std::ref(parse));
    (void)rest;
  } catch (const json::parse_error& e) {
    std::string what = e.what();
    // nlohmann's message starts with its own error code; the useful part follows.
    auto cut = what.find("parse error");
    reader.fail("not valid JSON: " + (cut == std::string::npos ? what : what.substr(cut)));
  } catch (const json::exception& e) {
    reader.fail(std::string("unexpected value: ") + e.what());
  }
  return parse.finish();
}

}  // namespace

Profile parse_chrome_trace(std::string_view text, const std::string& source) {
  return parse_streaming(text, source);
}

Profile load_chrome_trace(const std::filesystem::path& path) {
  std::error_code error;
  if (std::filesystem::is_directory(path, error)) throw TraceError(fmt::format("{}: is a directory", path.string()));
  std::ifstream file(path, std::ios::binary);
  if (!file) throw TraceError(fmt::format("{}: cannot open ({})", path.string(), std::strerror(errno)));
  if (file.peek() == std::ifstream::traits_type::eof()) throw TraceError(fmt::format("{}: empty file", path.string()));
  return parse_streaming(file, path.string());
}

}  // namespace workbook
