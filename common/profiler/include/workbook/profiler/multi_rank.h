#pragma once
/// \file
/// \brief Several ranks' profiles of one job read together: per rank, how its steps split into
/// communication hidden under computation and communication waited for; per collective, when
/// each rank arrived and which one came last (the straggler the others waited for).
///
/// Each trace counts from its own first event, so the ranks are put on one clock first: each is
/// shifted to make its first transfer end together with the others'. A collective ends on every
/// rank at about the same moment, once the last rank has joined it, but not exactly (a message's
/// latency, the threads' scheduling): the waits carry that error.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workbook/profiler/communication.h"
#include "workbook/profiler/profile.h"
#include "workbook/profiler/svg.h"

namespace workbook {

/// One rank over its recorded steps (ProfilerStep#N). Step, communication, overlapped and exposed
/// are medians over the steps, each taken on its own (they need not add up).
struct RankSummary {
  std::string name;                   ///< where it came from: the trace file, "rank 0"...
  std::size_t steps = 0;              ///< recorded steps
  std::int64_t step_ns = 0;           ///< median step time
  std::int64_t communication_ns = 0;  ///< median time per step with a transfer in flight
  std::int64_t overlapped_ns = 0;     ///< median time per step of it under computation
  std::int64_t exposed_ns = 0;        ///< median time per step of it with nothing computed
  double overlap_fraction = 0;        ///< all steps' overlapped time / their communication time
  std::size_t collectives = 0;        ///< collectives this rank called (the compared ones: see below)
  std::int64_t waited_ns = 0;         ///< summed over them: last arrival - this rank's arrival
  std::size_t arrived_last = 0;       ///< collectives at which this rank arrived last
};

/// The k-th collective of the job, as every rank reached it.
struct CollectiveArrival {
  std::vector<std::int64_t> arrival_ns;  ///< per rank, on the aligned clock
  std::size_t last_rank = 0;             ///< the rank that arrived last
  std::int64_t spread_ns = 0;            ///< last arrival - first arrival
};

/// What analyze_ranks finds.
struct MultiRankAnalysis {
  std::vector<RankSummary> ranks;              ///< in the order given
  std::vector<CollectiveArrival> collectives;  ///< the first n collectives, n the fewest any rank ran
  std::optional<std::size_t> straggler;        ///< the rank that arrived last more often than any other (a tie: none)
  std::vector<std::int64_t> shift_ns;          ///< per rank, added to its times to align the clocks
};

/// The collectives a profile shows, in order, each by the moment the rank reached it: the
/// outermost host collective calls (c10d::allreduce_, record_param_comms) where there are any,
/// otherwise its transfers (NCCL kernels, gloo:/nccl: events).
std::vector<std::int64_t> collective_arrivals(const Profile& profile);

/// Reads the ranks together (`names` label them; empty: "rank 0", "rank 1"...). Throws
/// std::invalid_argument when fewer than two profiles are given, when a profile has no
/// ProfilerStep#N, or when one has no transfer to align its clock by.
MultiRankAnalysis analyze_ranks(const std::vector<Profile>& ranks, const std::vector<std::string>& names = {});

/// The analysis as a table: one line per rank, then the collectives' spread and the straggler.
std::string format_multi_rank(const MultiRankAnalysis& analysis);

/// The analysis as JSON: {"ranks": [...], "collectives": [...], "straggler": N or null}, times in µs.
std::string multi_rank_json(const MultiRankAnalysis& analysis);

/// The ranks on one aligned clock (analysis.shift_ns), two lanes each: when the rank computed and
/// when a transfer was in flight, the time both happened (overlap) shaded across the two, the
/// recorded steps' boundaries marked. `ranks` as given to analyze_ranks.
std::string ranks_timeline_svg(const std::vector<Profile>& ranks, const MultiRankAnalysis& analysis,
                               const TimelineOptions& options = {});

}  // namespace workbook
