#pragma once
/// \file
/// \brief Where a GPU's time went in a profile or a trace: busy and idle per device and stream,
/// kernels by time, the launch queue, and a verdict per step (Holistic Trace Analysis's first
/// questions, in C++). Works on any Kineto trace; no GPU needed to read one.

#include <cstdint>
#include <string>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// Busy time of one stream of one device.
struct StreamUse {
  std::uint64_t stream = 0;     ///< the stream (the trace's tid on the device lane)
  std::int64_t busy_ns = 0;     ///< union of its kernels, copies and fills
  double busy_fraction = 0;     ///< busy_ns over the window
  std::int64_t activities = 0;  ///< kernels, copies and fills on it
};

/// How busy one device was over a window.
struct DeviceUse {
  std::int64_t device = 0;          ///< the device index (as the trace wrote it, 64-bit)
  std::int64_t window_ns = 0;       ///< the window: first to last event of the profile, or one step
  std::int64_t busy_ns = 0;         ///< union of kernel, memcpy and memset intervals on any stream
  double busy_fraction = 0;         ///< busy_ns / window_ns
  std::int64_t kernel_ns = 0;       ///< summed kernel durations (overlapping streams count twice)
  std::int64_t memcpy_ns = 0;       ///< summed copy durations
  std::int64_t memset_ns = 0;       ///< summed fill durations
  std::int64_t idle_ns = 0;         ///< window_ns - busy_ns
  std::int64_t gaps = 0;            ///< idle gaps between busy intervals
  std::int64_t longest_gap_ns = 0;  ///< the longest of them
  std::vector<StreamUse> streams;   ///< per stream, by stream id
};

/// Time of one kernel name.
struct KernelUse {
  std::string name;           ///< the kernel's name
  std::int64_t count = 0;     ///< launches
  std::int64_t total_ns = 0;  ///< summed durations
  double share = 0;           ///< of all kernels' summed durations
};

/// Runtime call start to device start, over every activity whose launch is in the profile.
struct LaunchQueue {
  std::int64_t count = 0;      ///< activities matched to their launch (correlation id)
  std::int64_t median_ns = 0;  ///< median delay
  std::int64_t p90_ns = 0;     ///< 90th percentile (nearest rank)
};

/// One ProfilerStep#N: how busy each device was while it ran, and what bound it.
struct StepUse {
  std::string name;                ///< "ProfilerStep#3"
  std::int64_t window_ns = 0;      ///< the step's duration
  std::vector<DeviceUse> devices;  ///< per device with work in the step (an idle device has no row)
  std::string verdict;             ///< "GPU-bound", "CPU-bound (GPU idle 98%)", or "no GPU work in this step"
};

/// The whole analysis.
struct GpuAnalysis {
  std::vector<DeviceUse> devices;  ///< over the whole profile
  std::vector<KernelUse> kernels;  ///< by summed time, largest first
  LaunchQueue launch_queue;        ///< over the whole profile
  std::vector<StepUse> steps;      ///< one per ProfilerStep#N, in order
  /// Why `steps` is empty although the profile has ProfilerStep#N windows ("" otherwise): windows
  /// that overlap each other wholesale (a merged or hand-made trace) would make the per-step view
  /// cost steps x activities.
  std::string steps_left_out;
};

/// Busy time of the device work (kernels, copies, fills) among `ids` inside [from, to).
std::int64_t busy_ns_within(const Profile& profile, const std::vector<EventId>& ids, std::int64_t from,
                            std::int64_t to);

/// Analyses a profile's device activity; empty devices when it has none.
GpuAnalysis analyze_gpu(const Profile& profile);

/// The analysis as text: devices and streams, the top `top_kernels` kernels, the launch queue,
/// the steps.
std::string format_gpu_analysis(const GpuAnalysis& analysis, std::size_t top_kernels = 10);

/// The analysis as JSON (times in µs): devices[].device, .busy_fraction, .window_us,
/// .kernel_us, ..., kernels[], launch_queue, steps[].
std::string gpu_analysis_json(const GpuAnalysis& analysis);

/// A figure: per step (columns) and per device stream (rows), the busy fraction as a shaded cell.
std::string gpu_utilisation_svg(const GpuAnalysis& analysis, const std::string& title);

}  // namespace workbook
