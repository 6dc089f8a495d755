#pragma once
// Building blocks for toolkit tests on synthetic event trees.
#include "workbook/profiler/profile.h"

namespace testing {

/// An event on host thread `thread`, from `start` to `end` nanoseconds.
inline workbook::Event make_event(const char* name, std::int64_t start, std::int64_t end,
                                  workbook::Category category = workbook::Category::cpu_op, std::uint64_t thread = 1) {
  workbook::Event e;
  e.name = name;
  e.start_ns = start;
  e.end_ns = end;
  e.category = category;
  e.thread = thread;
  return e;
}

/// A memory instant on host thread 1: `bytes` allocated (> 0) or freed (< 0) at `at` ns.
inline workbook::Event make_allocation(std::int64_t at, std::int64_t bytes) {
  workbook::Event e = make_event("[memory]", at, at, workbook::Category::memory);
  e.bytes = bytes;
  return e;
}

/// A runtime call (cudaLaunchKernel) on host thread 1 with a correlation id.
inline workbook::Event make_launch(std::int64_t start, std::int64_t end, std::int64_t correlation) {
  workbook::Event e = make_event("cudaLaunchKernel", start, end, workbook::Category::runtime);
  e.correlation = correlation;
  return e;
}

/// Device work on a CUDA stream, linked to its launch by `correlation` (0: none).
inline workbook::Event make_device_work(const char* name, std::int64_t start, std::int64_t end, std::uint64_t stream,
                                        workbook::DeviceWork work = workbook::DeviceWork::kernel,
                                        std::int64_t correlation = 0) {
  workbook::Event e = make_event(name, start, end, workbook::Category::kernel, stream);
  e.device_type = workbook::DeviceType::cuda;
  e.work = work;
  e.correlation = correlation;
  return e;
}

}  // namespace testing
