#include "workbook/profiler/key_averages.h"

#include "workbook/profiler/format.h"

#include "saturating.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <stdexcept>
#include <tuple>
#include <unordered_map>

namespace workbook {
namespace {

// Python's sort_by keys, parsed once per sort into the column they read.
using SortValue = double (*)(const KeyAverage&);

SortValue sort_value_of(const std::string& key) {
  static const std::map<std::string, SortValue> keys{
      {"cpu_time_total", [](const KeyAverage& r) { return r.cpu_total_us; }},
      {"self_cpu_time_total", [](const KeyAverage& r) { return r.self_cpu_us; }},
      {"cpu_time", [](const KeyAverage& r) { return r.cpu_avg_us(); }},
      {"cuda_time_total", [](const KeyAverage& r) { return r.device_total_us; }},
      {"device_time_total", [](const KeyAverage& r) { return r.device_total_us; }},
      {"self_cuda_time_total", [](const KeyAverage& r) { return r.self_device_us; }},
      {"self_device_time_total", [](const KeyAverage& r) { return r.self_device_us; }},
      {"cuda_time", [](const KeyAverage& r) { return r.device_avg_us(); }},
      {"device_time", [](const KeyAverage& r) { return r.device_avg_us(); }},
      {"cpu_memory_usage", [](const KeyAverage& r) { return double(r.cpu_memory_bytes); }},
      {"self_cpu_memory_usage", [](const KeyAverage& r) { return double(r.self_cpu_memory_bytes); }},
      {"cuda_memory_usage", [](const KeyAverage& r) { return double(r.device_memory_bytes); }},
      {"device_memory_usage", [](const KeyAverage& r) { return double(r.device_memory_bytes); }},
      {"self_cuda_memory_usage", [](const KeyAverage& r) { return double(r.self_device_memory_bytes); }},
      {"self_device_memory_usage", [](const KeyAverage& r) { return double(r.self_device_memory_bytes); }},
      {"count", [](const KeyAverage& r) { return double(r.count); }},
      {"flops", [](const KeyAverage& r) { return double(r.flops); }},
  };
  auto it = keys.find(key);
  if (it == keys.end())
    throw std::invalid_argument("unknown sort key '" + key +
                                "' (try cpu_time_total, self_cpu_time_total, cuda_time_total, count)");
  return it->second;
}

std::string time_share(double part, double whole) {
  if (whole == 0) return "NaN";
  return fmt::format("{:.2f}%", part * 100.0 / whole);
}

}  // namespace

std::string format_shapes(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::vector<std::string> parts;
  for (const auto& s : shapes) parts.push_back(fmt::format("[{}]", fmt::join(s, ", ")));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

KeyAverages::KeyAverages(const Profile& profile, bool group_by_input_shape) : grouped_by_shape_(group_by_input_shape) {
  // Python keys rows by name and device type (profiler_util.py, EventList.key_averages): a
  // kernel or a GPU annotation never merges into the host row of the same name. Names are views
  // into the profile's own strings: no string is built per event.
  static constexpr std::string_view folded_steps = "ProfilerStep*";
  // Python 2.x adds is_user_annotation to the key, so a GPU annotation and a kernel of the same
  // name stay apart too.
  using Key = std::tuple<std::string_view, DeviceType, bool>;
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      return std::hash<std::string_view>{}(std::get<0>(k)) * 31 + std::size_t(std::get<1>(k)) * 2 + std::get<2>(k);
    }
  };
  std::unordered_map<Key, std::size_t, KeyHash> by_key;
  std::map<std::tuple<std::string_view, DeviceType, bool, std::string>, std::size_t> by_key_and_shapes;
  // One event's numbers at a time (a vector of them took 72 bytes an event).
  // The columns read directly: a whole EventView per event cost a tenth of the statistics' time.
  const EventTable& events = profile.events();
  const auto add = [&events](KeyAverage& r, EventId id, const EventStats& st) {
    r.count += 1;
    r.cpu_total_us += double(st.cpu_total_ns) / 1e3;
    r.self_cpu_us += double(st.self_cpu_ns) / 1e3;
    r.self_device_us += double(st.self_device_ns) / 1e3;
    r.device_total_us += double(st.device_total_ns) / 1e3;
    r.cpu_memory_bytes = detail::sat_add(r.cpu_memory_bytes, st.cpu_memory);
    r.self_cpu_memory_bytes = detail::sat_add(r.self_cpu_memory_bytes, st.self_cpu_memory);
    r.device_memory_bytes = detail::sat_add(r.device_memory_bytes, st.device_memory);
    r.self_device_memory_bytes = detail::sat_add(r.self_device_memory_bytes, st.self_device_memory);
    r.flops = detail::sat_add(r.flops, events.flops(id));
  };
  // Row + 1 for each (name id, device, annotation) seen, 0 for none yet.
  std::vector<std::uint32_t> row_of_name(group_by_input_shape ? 0 : events.name_count() * 4, 0);
  profile.for_each_stats([&](EventId id, const EventStats& st) {
    const Category category = events.category(id);
    if (category == Category::memory) {
      has_memory_ = true;
      if (events.device_type(id) != DeviceType::cpu) has_device_memory_ = true;
      if (!st.unattributed) return;  // counted in the ops around it
    }
    const DeviceType device = events.on_device(id) ? events.device_type(id) : DeviceType::cpu;
    const bool annotation = category == Category::user_annotation;
    // Without shapes, the row of a (name id, device, annotation) seen before is looked up by
    // number: hashing the name of each of 10^6 events took a third of the statistics' time.
    std::uint32_t* known_row = nullptr;
    if (!group_by_input_shape) {
      known_row = &row_of_name[std::size_t(events.name_id(id)) * 4 + std::size_t(device) * 2 + annotation];
      if (*known_row != 0) {
        add(rows_[*known_row - 1], id, st);
        return;
      }
    }
    // Python folds every ProfilerStep#N into one "ProfilerStep*" row.
    const std::string_view event_name = events.name(id);
    const std::string_view name = event_name.rfind("ProfilerStep#", 0) == 0 ? folded_steps : event_name;
    std::string shapes = group_by_input_shape ? format_shapes(events.input_shapes(id)) : std::string();
    const std::size_t row_index =
        group_by_input_shape
            ? by_key_and_shapes.try_emplace({name, device, annotation, shapes}, rows_.size()).first->second
            : by_key.try_emplace(Key{name, device, annotation}, rows_.size()).first->second;
    if (known_row) *known_row = std::uint32_t(row_index + 1);
    if (row_index == rows_.size()) {  // first event of its row
      KeyAverage row;
      row.name = std::string(name);
      row.device_type = device;
      row.user_annotation = annotation;
      row.input_shapes = std::move(shapes);
      rows_.push_back(std::move(row));
    }
    add(rows_[row_index], id, st);
  });
}

const KeyAverage* KeyAverages::find(std::string_view name) const {
  const KeyAverage* any = nullptr;
  for (const auto& r : rows_) {
    if (r.name != name) continue;
    if (r.device_type == DeviceType::cpu) return &r;
    if (!any) any = &r;
  }
  return any;
}

const KeyAverage* KeyAverages::find(std::string_view name, DeviceType device_type) const {
  for (const auto& r : rows_)
    if (r.name == name && r.device_type == device_type) return &r;
  return nullptr;
}

std::vector<KeyAverage> KeyAverages::sorted(const std::string& sort_by) const {
  std::vector<KeyAverage> rows = rows_;
  if (sort_by.empty()) return rows;
  const SortValue value = sort_value_of(sort_by);  // rejects an unknown key even when there are no rows
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const KeyAverage& a, const KeyAverage& b) { return value(a) > value(b); });
  return rows;
}

double KeyAverages::self_cpu_total_us() const {
  double sum = 0;
  for (const auto& r : rows_) sum += r.self_cpu_us;
  return sum;
}

double KeyAverages::self_device_total_us() const {
  double sum = 0;
  // Python's footer adds the self device time of device rows only (kernels, memcpy, ...), and
  // since 2.x not of GPU annotations, which span kernels already counted.
  for (const auto& r : rows_)
    if (r.device_type != DeviceType::cpu && !r.user_annotation) sum += r.self_device_us;
  return sum;
}

bool KeyAverages::has_device_time() const {
  return std::any_of(rows_.begin(), rows_.end(), [](const KeyAverage& r) { return r.self_device_us > 0; });
}

std::string KeyAverages::table(const std::string& sort_by, int row_limit) const {
  TableOptions options;
  options.sort_by = sort_by;
  options.row_limit = row_limit;
  return table(options);
}

std::string KeyAverages::table(const TableOptions& o) const {
  if (rows_.empty()) return "";
  const std::vector<KeyAverage> rows = sorted(o.sort_by);
  const bool device = has_device_time();
  const bool shapes = grouped_by_shape_;
  std::int64_t min_flops = 0;
  for (const auto& r : rows)
    if (r.flops > 0 && (min_flops == 0 || r.flops < min_flops)) min_flops = r.flops;

  std::size_t name_width = 0, shapes_width = 0;
  for (const auto& r : rows) {
    name_width = std::max(name_width, r.name.size() + 4);
    shapes_width = std::max(shapes_width, r.input_shapes.size() + 4);
  }
  name_width = std::min<std::size_t>(name_width, std::size_t(o.max_name_column_width));
  shapes_width = std::min<std::size_t>(shapes_width, std::size_t(o.max_shapes_column_width));

  std::vector<std::string> headers{"Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"};
  if (device) {
    for (auto h : {"Self {}", "Self {} %", "{} total", "{} time avg"})
      headers.push_back(fmt::format(fmt::runtime(h), o.device_name));
  }
  if (has_memory_) {
    headers.push_back("CPU Mem");
    headers.push_back("Self CPU Mem");
    if (has_device_memory_) {
      headers.push_back(fmt::format("{} Mem", o.device_name));
      headers.push_back(fmt::format("Self {} Mem", o.device_name));
    }
  }
  headers.push_back("# of Calls");
  std::vector<std::size_t> widths(headers.size(), 12);
  widths[0] = name_width;
  if (shapes) {
    headers.push_back("Input Shapes");
    widths.push_back(shapes_width);
  }
  // Python scales the FLOPs column by the smallest non-zero value.
  const char* flop_units[] = {"FLOPs", "KFLOPs", "MFLOPs", "GFLOPs", "TFLOPs", "PFLOPs"};
  double flops_scale = 1;
  if (min_flops > 0) {
    double level = std::max(0.0, std::min(std::log10(double(min_flops)) / 3, 5.0));
    flops_scale = std::pow(10.0, std::floor(level) * -3.0);
    headers.push_back(fmt::format("Total {}", flop_units[int(level)]));
    widths.push_back(12);
  }

  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (std::size_t i = 0; i < cells.size(); ++i) out += fmt::format("{:>{}}  ", cells[i], widths[i]);
    return out + "\n";
  };
  std::string sep;
  for (auto w : widths) sep += std::string(w, '-') + "  ";
  sep += "\n";

  const double cpu_sum = self_cpu_total_us();
  const double device_sum = self_device_total_us();
  std::string out = sep + line(headers) + sep;
  int shown = 0;
  for (const auto& r : rows) {
    if (o.row_limit > 0 && shown == o.row_limit) break;
    ++shown;
    std::string name = printable(r.name);
    if (int(name.size()) >= o.max_name_column_width - 3) {
      // Cut at a character's start, never inside a multi-byte one.
      std::size_t cut = std::size_t(o.max_name_column_width - 3);
      while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80) --cut;
      name = name.substr(0, cut) + "...";
    }
    std::vector<std::string> cells{name,
                                   time_share(r.self_cpu_us, cpu_sum),
                                   format_time_us(r.self_cpu_us),
                                   time_share(r.cpu_total_us, cpu_sum),
                                   format_time_us(r.cpu_total_us),
                                   format_time_us(r.cpu_avg_us())};
    if (device) {
      cells.push_back(format_time_us(r.self_device_us));
      cells.push_back(time_share(r.self_device_us, device_sum));
      cells.push_back(format_time_us(r.device_total_us));
      cells.push_back(format_time_us(r.device_avg_us()));
    }
    if (has_memory_) {
      cells.push_back(format_memory(r.cpu_memory_bytes));
      cells.push_back(format_memory(r.self_cpu_memory_bytes));
      if (has_device_memory_) {
        cells.push_back(format_memory(r.device_memory_bytes));
        cells.push_back(format_memory(r.self_device_memory_bytes));
      }
    }
    cells.push_back(std::to_string(r.count));
    if (shapes) cells.push_back(r.input_shapes.substr(0, shapes_width));
    if (min_flops > 0) cells.push_back(r.flops <= 0 ? "--" : fmt::format("{:8.3f}", double(r.flops) * flops_scale));
    out += line(cells);
  }
  out += sep;
  out += fmt::format("Self CPU time total: {}\n", format_time_us(cpu_sum));
  if (device) out += fmt::format("Self {} time total: {}\n", o.device_name, format_time_us(device_sum));
  return out;
}

std::string KeyAverages::to_json(const TableOptions& o) const {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& r : sorted(o.sort_by)) {
    rows.push_back({{"name", r.name},
                    {"device_type", device_type_name(r.device_type)},
                    {"is_user_annotation", r.user_annotation},
                    {"input_shapes", r.input_shapes},
                    {"count", r.count},
                    {"self_cpu_us", r.self_cpu_us},
                    {"cpu_total_us", r.cpu_total_us},
                    {"cpu_avg_us", r.cpu_avg_us()},
                    {"self_device_us", r.self_device_us},
                    {"device_total_us", r.device_total_us},
                    {"cpu_memory_bytes", r.cpu_memory_bytes},
                    {"self_cpu_memory_bytes", r.self_cpu_memory_bytes},
                    {"device_memory_bytes", r.device_memory_bytes},
                    {"self_device_memory_bytes", r.self_device_memory_bytes},
                    {"flops", r.flops}});
  }
  return rows.dump(2) + "\n";
}

std::string KeyAverages::to_csv(const TableOptions& o) const {
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char c : s) q += (c == '"') ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  std::string out =
      "name,device_type,input_shapes,count,self_cpu_us,cpu_total_us,cpu_avg_us,self_device_us,device_total_us,"
      "cpu_memory_bytes,self_cpu_memory_bytes,device_memory_bytes,self_device_memory_bytes,flops\n";
  for (const auto& r : sorted(o.sort_by)) {
    out += fmt::format("{},{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{},{},{}\n", quote(r.name),
                       device_type_name(r.device_type), quote(r.input_shapes), r.count, r.self_cpu_us, r.cpu_total_us,
                       r.cpu_avg_us(), r.self_device_us, r.device_total_us, r.cpu_memory_bytes, r.self_cpu_memory_bytes,
                       r.device_memory_bytes, r.self_device_memory_bytes, r.flops);
  }
  return out;
}

}  // namespace workbook
