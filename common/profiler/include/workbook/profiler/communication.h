#pragma once
/// \file
/// \brief Communication against computation in one rank's profile: how long each step's
/// collectives were in flight, and how much of that time the rank computed anyway (overlap) or
/// only waited (exposed).

#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "workbook/profiler/profile.h"

namespace workbook {

/// True for an event that is a collective's transfer: a process group's asynchronous host event
/// ("gloo:all_reduce", "nccl:all_reduce"...) or a NCCL kernel on a GPU ("ncclKernel_...",
/// "ncclDevKernel_...").
bool is_communication(const Event& event);

/// True for a host op that only issues or waits for a collective ("c10d::allreduce_",
/// "record_param_comms"): time in it is not computation.
bool is_collective_call(std::string_view name);

/// One step's communication, in nanoseconds of wall time.
struct StepCommunication {
  EventId step = 0;                   ///< the ProfilerStep#N region
  std::int64_t step_ns = 0;           ///< its duration
  std::int64_t communication_ns = 0;  ///< time while at least one transfer was in flight (their union)
  std::int64_t overlapped_ns = 0;     ///< of that, time while an op computed (host op or GPU kernel)
  std::size_t transfers = 0;          ///< transfers that started in the step
  /// Communication the step waited for: communication_ns - overlapped_ns.
  std::int64_t exposed_ns() const { return communication_ns - overlapped_ns; }
  /// overlapped_ns / communication_ns; 0 for a step without communication.
  double overlap_fraction() const {
    return communication_ns > 0 ? double(overlapped_ns) / double(communication_ns) : 0;
  }
};

/// Sorted, disjoint intervals [start, end) in nanoseconds.
using Intervals = std::vector<std::pair<std::int64_t, std::int64_t>>;

/// When a profile communicated and when it computed, over the whole profile (the rules of
/// step_communication below).
struct Activity {
  Intervals communicating;  ///< a transfer was in flight
  Intervals computing;      ///< a host op or GPU kernel computed, outside every collective call
};

/// The profile's Activity.
Activity activity(const Profile& profile);

/// Every ProfilerStep#N's StepCommunication, in order. Transfers and computation are clipped to the
/// step. Computation is a GPU kernel that is not communication, or a host op outside the collective
/// calls: an op inside one does not count, and an op that encloses one (the autograd node whose hook
/// starts an all-reduce) counts only outside it, so waiting in the call is never computing.
std::vector<StepCommunication> step_communication(const Profile& profile);

}  // namespace workbook
