#pragma once
/// \file
/// \brief Python's `prof.key_averages()` and its `.table()`, with the same columns and arithmetic.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "workbook/profiler/format.h"  // the table formats its cells with these
#include "workbook/profiler/profile.h"

namespace workbook {

/// One row of the statistics table: every event with the same key, added up.
/// Times are microseconds, as in Python.
struct KeyAverage {
  std::string name;                          ///< the op or region name ("ProfilerStep*" for every step)
  DeviceType device_type = DeviceType::cpu;  ///< part of the key: a kernel or GPU annotation is its own row
  bool user_annotation = false;            ///< part of the key (Python 2.x): a region never merges with an op or kernel
  std::string input_shapes;                ///< Python's str() of the shapes, "" unless grouped by shape
  std::int64_t count = 0;                  ///< "# of Calls"
  double self_cpu_us = 0;                  ///< "Self CPU": total minus the children's totals
  double cpu_total_us = 0;                 ///< "CPU total"
  double self_device_us = 0;               ///< "Self CUDA": device time of kernels this op launched itself
  double device_total_us = 0;              ///< "CUDA total": including kernels of its children
  std::int64_t cpu_memory_bytes = 0;       ///< "CPU Mem": allocations inside the op (net)
  std::int64_t self_cpu_memory_bytes = 0;  ///< "Self CPU Mem": allocations by the op itself
  std::int64_t device_memory_bytes = 0;    ///< "CUDA Mem": device allocations inside the op (net)
  std::int64_t self_device_memory_bytes = 0;  ///< "Self CUDA Mem": device allocations by the op itself
  std::int64_t flops = 0;                     ///< "Total FLOPs"

  /// "CPU time avg".
  double cpu_avg_us() const { return count ? cpu_total_us / double(count) : 0.0; }
  /// "CUDA time avg".
  double device_avg_us() const { return count ? device_total_us / double(count) : 0.0; }
};

/// Options of `KeyAverages::table`, named like Python's keyword arguments.
struct TableOptions {
  /// Python's sort_by: cpu_time_total, self_cpu_time_total, cpu_time, cuda_time_total,
  /// self_cuda_time_total, device_time_total, self_device_time_total, cpu_memory_usage,
  /// self_cpu_memory_usage, count, flops; empty keeps first-seen order.
  std::string sort_by = "cpu_time_total";
  int row_limit = 100;               ///< at most this many rows; <= 0 for all
  int max_name_column_width = 55;    ///< Python's default
  int max_shapes_column_width = 80;  ///< Python's default
  std::string device_name = "CUDA";  ///< header word for device columns
};

/// The grouped statistics of a profile: Python's `EventList.key_averages()`.
class KeyAverages {
 public:
  /// Groups by name and device type (and by input shapes when asked), in order of first
  /// appearance, with Python's per-event numbers (Profile::stats). As in Python, every
  /// `ProfilerStep#N` goes into one `ProfilerStep*` row; a memory record inside no op is a
  /// "[memory]" row.
  explicit KeyAverages(const Profile& profile, bool group_by_input_shape = false);

  /// The rows, in order of first appearance.
  const std::vector<KeyAverage>& rows() const { return rows_; }
  /// The row for a name (the host row when there are several), or nullptr.
  const KeyAverage* find(std::string_view name) const;
  /// The row for a name on one device type, or nullptr.
  const KeyAverage* find(std::string_view name, DeviceType device_type) const;
  /// Rows sorted by a Python sort key, descending and stable. Throws std::invalid_argument
  /// naming the key when it is unknown.
  std::vector<KeyAverage> sorted(const std::string& sort_by) const;

  /// Sum of self CPU time over all rows: the denominator of both CPU percentages.
  double self_cpu_total_us() const;
  /// Sum of self device time over kernel rows.
  double self_device_total_us() const;
  /// True when any row has device time (adds the CUDA columns).
  bool has_device_time() const;
  /// True when memory was recorded (adds the memory columns).
  bool has_memory() const { return has_memory_; }
  /// True when device memory was recorded (adds the device memory columns).
  bool has_device_memory() const { return has_device_memory_; }

  /// The text table, laid out like Python's `.table()`, footer included.
  std::string table(const TableOptions& options = {}) const;
  /// Shorthand for `table` with a sort key and row limit.
  std::string table(const std::string& sort_by, int row_limit) const;
  /// Rows as a JSON array (numbers in microseconds and bytes), sorted like `table`.
  std::string to_json(const TableOptions& options = {}) const;
  /// Rows as CSV with a header line, sorted like `table`.
  std::string to_csv(const TableOptions& options = {}) const;

 private:
  std::vector<KeyAverage> rows_;
  bool grouped_by_shape_ = false;
  bool has_memory_ = false;
  bool has_device_memory_ = false;
};

/// Python's str() of a list of shapes: "[[64, 64], [64]]".
std::string format_shapes(const std::vector<std::vector<std::int64_t>>& shapes);

}  // namespace workbook
