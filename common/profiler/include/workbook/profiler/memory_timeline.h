#pragma once
/// \file
/// \brief Bytes live over time from a profile's memory events (`profile_memory`), the peak and
/// the op that reached it, and an SVG of it. Python's `export_memory_timeline` is the model; this
/// draws the total of one device's memory, not Python's categories (parameters, activations, ...),
/// which need Python's graph of tensor identities that a C++ profile does not record.

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// Live bytes just after one memory event.
struct MemoryPoint {
  std::int64_t time_ns = 0;     ///< when the event happened
  std::int64_t live_bytes = 0;  ///< running sum of allocations (+) and frees (-) up to and including it
  EventId event = 0;            ///< the memory event
};

/// The running sum of one device's memory events, in the profile's order. Bytes count from 0 at
/// the first recorded event: memory allocated before the recording started is not in it (and its
/// free is not reported either: LibTorch only knows the size of blocks it saw allocated).
struct MemoryTimeline {
  DeviceType device = DeviceType::cpu;  ///< whose memory
  std::int64_t device_index = 0;        ///< which GPU, for device memory
  std::vector<MemoryPoint> points;      ///< one per memory event, in time order
  std::int64_t peak_bytes = 0;          ///< the largest running sum (0 when it never rose above 0)
  std::optional<EventId> peak_event;    ///< the memory event that first reached the peak

  /// Live bytes after every event at or before `time_ns` (0 before the first).
  std::int64_t live_at(std::int64_t time_ns) const;
  /// The largest running sum among the events in [begin_ns, end_ns], or live_at(begin_ns) when
  /// none falls inside: the peak of a window such as one step or one region.
  std::int64_t peak_between(std::int64_t begin_ns, std::int64_t end_ns) const;
};

/// The timeline of one device's memory (the CPU by default) from the profile's memory events.
MemoryTimeline memory_timeline(const Profile& profile, DeviceType device = DeviceType::cpu,
                               std::int64_t device_index = 0);

/// The host op a memory event belongs to: the innermost host event open when it happened (its
/// parent in the tree), as Python attributes memory; nothing when it happened outside every op.
std::optional<EventId> allocating_op(const Profile& profile, EventId memory_event);

/// A band drawn behind the timeline: a labelled interval (a phase region, a step).
struct TimelineBand {
  std::string label;          ///< shown at the top of the band
  std::int64_t begin_ns = 0;  ///< start
  std::int64_t end_ns = 0;    ///< end
};

/// An SVG of live MiB over time (ms from the first memory event) as a step line, the bands behind
/// it, and the peak marked with `peak_label` (e.g. the op that reached it).
std::string memory_timeline_svg(const MemoryTimeline& timeline, const std::string& title,
                                const std::vector<TimelineBand>& bands = {}, const std::string& peak_label = {},
                                int width = 1000, int height = 420);

/// Writes memory_timeline_svg atomically.
void write_memory_timeline_svg(const MemoryTimeline& timeline, const std::filesystem::path& path,
                               const std::string& title, const std::vector<TimelineBand>& bands = {},
                               const std::string& peak_label = {});

}  // namespace workbook
