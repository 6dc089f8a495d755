#include "workbook/key_averages.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <unordered_map>
#include <stdexcept>

namespace workbook {
namespace {

// Per-event sums, computed once over the tree, following FunctionEvent's properties.
struct EventSums {
  std::vector<double> device_self_us, device_total_us;
  std::vector<std::int64_t> memory_self, memory_total;
};

EventSums sum_events(const Profile& p) {
  const std::size_t n = p.size();
  EventSums s{std::vector<double>(n, 0), std::vector<double>(n, 0), std::vector<std::int64_t>(n, 0),
              std::vector<std::int64_t>(n, 0)};
  for (EventId id = 0; id < n; ++id) {
    const Event& e = p[id];
    if (e.on_device()) {
      s.device_self_us[id] += e.duration_ns() / 1e3;
      // A kernel's time belongs to the op that launched it, not to the runtime call.
      auto owner = p.parent(id);
      while (owner >= 0 && p[static_cast<EventId>(owner)].category == Category::runtime)
        owner = p.parent(static_cast<EventId>(owner));
      if (owner >= 0) s.device_self_us[static_cast<EventId>(owner)] += e.duration_ns() / 1e3;
    } else if (e.category == Category::memory) {
      auto owner = p.parent(id);
      if (owner >= 0) s.memory_self[static_cast<EventId>(owner)] += e.bytes;
      else s.memory_self[id] += e.bytes;  // an allocation outside any op is its own "[memory]" row
    }
  }
  std::vector<bool> done(n, false);
  std::function<void(EventId)> total = [&](EventId id) {
    if (done[id]) return;
    done[id] = true;
    s.device_total_us[id] = s.device_self_us[id];
    s.memory_total[id] = s.memory_self[id];
    if (p[id].on_device()) return;
    for (EventId c : p.children(id)) {
      if (p[c].on_device() || p[c].category == Category::memory) continue;
      total(c);
      s.device_total_us[id] += s.device_total_us[c];
      s.memory_total[id] += s.memory_total[c];
    }
  };
  for (EventId id = 0; id < n; ++id) total(id);
  return s;
}

double sort_value(const KeyAverage& r, const std::string& key) {
  if (key == "cpu_time_total") return r.cpu_total_us;
  if (key == "self_cpu_time_total") return r.self_cpu_us;
  if (key == "cpu_time") return r.cpu_avg_us();
  if (key == "cuda_time_total" || key == "device_time_total") return r.device_total_us;
  if (key == "self_cuda_time_total" || key == "self_device_time_total") return r.self_device_us;
  if (key == "cuda_time" || key == "device_time") return r.device_avg_us();
  if (key == "cpu_memory_usage") return double(r.cpu_memory_bytes);
  if (key == "self_cpu_memory_usage") return double(r.self_cpu_memory_bytes);
  if (key == "count") return double(r.count);
  if (key == "flops") return double(r.flops);
  throw std::invalid_argument("unknown sort key '" + key +
                              "' (try cpu_time_total, self_cpu_time_total, cuda_time_total, count)");
}

std::string time_share(double part, double whole) {
  if (whole == 0) return "NaN";
  return fmt::format("{:.2f}%", part * 100.0 / whole);
}

}  // namespace

std::string format_time_us(double us) {
  if (us >= 1e6) return fmt::format("{:.3f}s", us / 1e6);
  if (us >= 1e3) return fmt::format("{:.3f}ms", us / 1e3);
  return fmt::format("{:.3f}us", us);
}

std::string format_memory(std::int64_t bytes) {
  const double kb = 1024, mb = kb * 1024, gb = mb * 1024;
  const double a = std::fabs(double(bytes));
  if (a >= gb) return fmt::format("{:.2f} Gb", double(bytes) / gb);
  if (a >= mb) return fmt::format("{:.2f} Mb", double(bytes) / mb);
  if (a >= kb) return fmt::format("{:.2f} Kb", double(bytes) / kb);
  return fmt::format("{} b", bytes);
}

std::string format_shapes(const std::vector<std::vector<std::int64_t>>& shapes) {
  std::vector<std::string> parts;
  for (const auto& s : shapes) parts.push_back(fmt::format("[{}]", fmt::join(s, ", ")));
  return fmt::format("[{}]", fmt::join(parts, ", "));
}

KeyAverages::KeyAverages(const Profile& profile, bool group_by_input_shape)
    : grouped_by_shape_(group_by_input_shape) {
  const EventSums sums = sum_events(profile);
  // Rows by name (views into the profile's own names: no string is built per event), or by
  // name and shapes when grouping by input shape.
  static constexpr std::string_view folded_steps = "ProfilerStep*";
  std::unordered_map<std::string_view, std::size_t> by_name;
  std::map<std::pair<std::string_view, std::string>, std::size_t> by_name_and_shapes;
  for (EventId id = 0; id < profile.size(); ++id) {
    const Event& e = profile[id];
    if (e.category == Category::memory) {
      has_memory_ = true;
      if (profile.parent(id) >= 0) continue;
    }
    // Python folds every ProfilerStep#N into one "ProfilerStep*" row.
    const std::string_view name = e.name.rfind("ProfilerStep#", 0) == 0 ? folded_steps : std::string_view(e.name);
    std::string shapes = group_by_input_shape ? format_shapes(e.input_shapes) : std::string();
    const std::size_t row_index = group_by_input_shape
                                      ? by_name_and_shapes.try_emplace({name, shapes}, rows_.size()).first->second
                                      : by_name.try_emplace(name, rows_.size()).first->second;
    if (row_index == rows_.size()) {  // first event of its row
      KeyAverage row;
      row.name = std::string(name);
      row.input_shapes = std::move(shapes);
      row.on_device = e.on_device();
      rows_.push_back(std::move(row));
    }
    KeyAverage& r = rows_[row_index];
    r.count += 1;
    if (!e.on_device() && e.category != Category::memory) {
      r.cpu_total_us += e.duration_ns() / 1e3;
      r.self_cpu_us += profile.self_ns(id) / 1e3;
    }
    r.self_device_us += sums.device_self_us[id];
    r.device_total_us += sums.device_total_us[id];
    r.cpu_memory_bytes += sums.memory_total[id];
    r.self_cpu_memory_bytes += sums.memory_self[id];
    r.flops += e.flops;
  }
}

const KeyAverage* KeyAverages::find(std::string_view name) const {
  for (const auto& r : rows_)
    if (r.name == name) return &r;
  return nullptr;
}

std::vector<KeyAverage> KeyAverages::sorted(const std::string& sort_by) const {
  std::vector<KeyAverage> rows = rows_;
  if (sort_by.empty()) return rows;
  sort_value(KeyAverage{}, sort_by);  // rejects an unknown key even when there are no rows
  std::stable_sort(rows.begin(), rows.end(), [&](const KeyAverage& a, const KeyAverage& b) {
    return sort_value(a, sort_by) > sort_value(b, sort_by);
  });
  return rows;
}

double KeyAverages::self_cpu_total_us() const {
  double sum = 0;
  for (const auto& r : rows_) sum += r.self_cpu_us;
  return sum;
}

double KeyAverages::self_device_total_us() const {
  double sum = 0;
  for (const auto& r : rows_)
    if (r.on_device) sum += r.self_device_us;
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
    std::string name = r.name;
    if (int(name.size()) >= o.max_name_column_width - 3)
      name = name.substr(0, std::size_t(o.max_name_column_width - 3)) + "...";
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
                    {"input_shapes", r.input_shapes},
                    {"count", r.count},
                    {"self_cpu_us", r.self_cpu_us},
                    {"cpu_total_us", r.cpu_total_us},
                    {"cpu_avg_us", r.cpu_avg_us()},
                    {"self_device_us", r.self_device_us},
                    {"device_total_us", r.device_total_us},
                    {"cpu_memory_bytes", r.cpu_memory_bytes},
                    {"self_cpu_memory_bytes", r.self_cpu_memory_bytes},
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
      "name,input_shapes,count,self_cpu_us,cpu_total_us,cpu_avg_us,self_device_us,device_total_us,"
      "cpu_memory_bytes,self_cpu_memory_bytes,flops\n";
  for (const auto& r : sorted(o.sort_by)) {
    out += fmt::format("{},{},{},{:.3f},{:.3f},{:.3f},{:.3f},{:.3f},{},{},{}\n", quote(r.name), quote(r.input_shapes),
                       r.count, r.self_cpu_us, r.cpu_total_us, r.cpu_avg_us(), r.self_device_us, r.device_total_us,
                       r.cpu_memory_bytes, r.self_cpu_memory_bytes, r.flops);
  }
  return out;
}

}  // namespace workbook
