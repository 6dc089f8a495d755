#pragma once
// What Kineto's trace vocabulary means: its category names ("cat") and c10's device codes in
// memory records. One table, read both ways: the importer looks a name up, the exporter writes
// the first name listed for a meaning.

#include <optional>
#include <string_view>

#include "workbook/profiler/profile.h"

namespace workbook::detail {

/// One spelling of a category and what it says about an event.
struct KinetoCategory {
  std::string_view name;  ///< as a trace's "cat" spells it
  Category category;      ///< the kind of activity
  bool on_device;         ///< device activity (Python's DeviceType CUDA), else host
  DeviceWork work;        ///< for device activity: kernel, copy, fill, sync or annotation
};

/// The categories of Kineto, Python and their older spellings, the exporter's choice first for
/// each meaning. Python's DeviceType comes from the activity type (profiler_kineto.cpp,
/// deviceTypeFromActivity): GPU memcpy/memset/kernels/syncs/annotations are CUDA, the rest CPU.
inline constexpr KinetoCategory kKinetoCategories[] = {
    {"cpu_op", Category::cpu_op, false, DeviceWork::kernel},
    {"operator", Category::cpu_op, false, DeviceWork::kernel},
    {"Operator", Category::cpu_op, false, DeviceWork::kernel},
    {"user_annotation", Category::user_annotation, false, DeviceWork::kernel},
    {"cuda_runtime", Category::runtime, false, DeviceWork::kernel},
    {"Runtime", Category::runtime, false, DeviceWork::kernel},
    {"cuda_driver", Category::runtime, false, DeviceWork::kernel},
    {"runtime", Category::runtime, false, DeviceWork::kernel},
    {"kernel", Category::kernel, true, DeviceWork::kernel},
    {"Kernel", Category::kernel, true, DeviceWork::kernel},
    {"gpu_memcpy", Category::kernel, true, DeviceWork::memcpy},
    {"Memcpy", Category::kernel, true, DeviceWork::memcpy},
    {"gpu_memset", Category::kernel, true, DeviceWork::memset},
    {"Memset", Category::kernel, true, DeviceWork::memset},
    {"cuda_sync", Category::kernel, true, DeviceWork::sync},
    {"gpu_user_annotation", Category::user_annotation, true, DeviceWork::annotation},
    {"cuda_profiler_range", Category::kernel, true, DeviceWork::annotation},
};

/// The row for a trace's "cat", or none (an unknown category is Category::other).
inline std::optional<KinetoCategory> kineto_category(std::string_view name) {
  for (const auto& row : kKinetoCategories)
    if (row.name == name) return row;
  return std::nullopt;
}

/// c10::DeviceType codes in "[memory]" records: CPU 0, CUDA 1, MKLDNN 2, IDEEP 5, HIP 6. Python
/// counts 0/2/5 as CPU memory and 1/6 as CUDA memory; any other device as neither (none).
inline std::optional<DeviceType> memory_device(std::int64_t code) {
  if (code == 0 || code == 2 || code == 5) return DeviceType::cpu;
  if (code == 1 || code == 6) return DeviceType::cuda;
  return std::nullopt;
}

}  // namespace workbook::detail
